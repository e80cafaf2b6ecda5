"""The wiring: corpus → shingles → global order → candidates → verify → pairs, with timings.

:func:`join` (:mod:`.run`) is the library's one entry point for a join; the CLI calls it and
nothing else does any of the work. The front stages for a corpus (:mod:`.front`), the exact
path (:mod:`.exact_path`), the LSH path (:mod:`.lsh_path`), the result (:mod:`.result`) and the
run statistics (:mod:`.stats`) each have a module.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from .._exports import lazy_exports

#: Public name -> the module that defines it. Imported on first use, so that an exact join never loads
#: the LSH path and a command that needs only :class:`Stats` loads no stage.
_EXPORTS = {
    **dict.fromkeys(["candidate_bound", "check_ranked", "exact_pairs", "ranked_pairs_of"], "exact_path"),
    **dict.fromkeys(["as_corpus", "corpus_keys", "default_shingle", "input_bytes", "is_series", "merge_corpora",
                     "shingle_corpus", "short_note"], "front"),
    **dict.fromkeys(["LARGE_BUCKET", "LSHInfo", "MIN_ESTIMATE_BITS", "SHOWN_SIMILARITIES", "joined_note", "lsh_pairs",
                     "lsh_settings"], "lsh_path"),
    **dict.fromkeys(["JoinResult"], "result"),
    **dict.fromkeys(["METHODS", "VERIFY", "join"], "run"),
    **dict.fromkeys(["Progress", "Stats", "peak_memory", "process_status", "timed"], "stats"),
}

__all__ = sorted(_EXPORTS)


__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, globals())


if TYPE_CHECKING:  # for type checkers and editors: the same names, imported eagerly
    from .exact_path import candidate_bound, check_ranked, exact_pairs, ranked_pairs_of
    from .front import (as_corpus, corpus_keys, default_shingle, input_bytes, is_series, merge_corpora,
                        shingle_corpus, short_note)
    from .lsh_path import (LARGE_BUCKET, MIN_ESTIMATE_BITS, SHOWN_SIMILARITIES, LSHInfo, joined_note, lsh_pairs,
                           lsh_settings)
    from .result import JoinResult
    from .run import METHODS, VERIFY, join
    from .stats import Progress, Stats, peak_memory, process_status, timed
