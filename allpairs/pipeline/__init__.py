"""The wiring: corpus → shingles → global order → candidates → verify → pairs, with timings.

:func:`join` (:mod:`.run`) is the library's one entry point for a join; the CLI calls it and
nothing else does any of the work. The front stages for a corpus (:mod:`.front`), the exact
path (:mod:`.exact_path`), the LSH path (:mod:`.lsh_path`), the result (:mod:`.result`) and the
run statistics (:mod:`.stats`) each have a module.
"""
from .exact_path import candidate_bound, check_ranked, exact_pairs, ranked_pairs_of
from .front import (as_corpus, corpus_keys, default_shingle, input_bytes, is_series, merge_corpora, shingle_corpus,
                    short_note)
from .lsh_path import LARGE_BUCKET, MIN_ESTIMATE_BITS, joined_note, lsh_pairs, lsh_settings
from .result import SHOWN_SIMILARITIES, JoinResult, LSHInfo
from .run import METHODS, VERIFY, join
from .stats import Progress, Stats, peak_memory, process_status, timed

__all__ = ["JoinResult", "LSHInfo", "Progress", "Stats", "join", "as_corpus", "merge_corpora", "corpus_keys",
           "default_shingle", "input_bytes", "is_series", "shingle_corpus", "short_note", "lsh_settings",
           "lsh_pairs", "joined_note", "exact_pairs", "check_ranked", "ranked_pairs_of", "candidate_bound",
           "peak_memory", "process_status", "timed", "METHODS", "VERIFY", "MIN_ESTIMATE_BITS", "LARGE_BUCKET",
           "SHOWN_SIMILARITIES"]
