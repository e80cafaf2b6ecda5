"""Orchestration: corpus → shingles → global order → candidates → verify → pairs, with timings.

:func:`join` is the library's one entry point for a join; the CLI calls it and
nothing else does any of the work.
"""
from __future__ import annotations

import itertools
import resource
import sys
import time
from collections import Counter
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Callable, Iterable, Mapping, Sequence

import numpy as np

from .corpus import Corpus
from .errors import EmptyCorpusError, UsageError
from .exact import prefix_join, prefix_join_rows
from .exact.topk import check_k, neighbor_lists, top_set_pairs
from .exact.prefix import LEFT_SIDE, RIGHT_SIDE, SetPairs, join_plan, per_size
from ._numba import PLAIN_BELOW, kernel_mode, kernels_for, resolve_jobs
from .lsh import candidates as lsh_candidates
from .lsh import (MAX_EXPAND, agreement_needed, check_banding, check_num_perm, choose_params, estimate_pairs,
                  probability, share_joined_bucket, signature_sets, signatures)
from .lsh.keysets import KeyedSets, keyed_sets
from ._plural import count
from .measures import Measure, Threshold, get_measure, parse_threshold
from .order import OrderedSets, order_sets
from .pairs import Pairs
from .pairs.ranked import NeighborPairs, ranked_pairs
from .pairs.result import similarity_text
from .pairs.summary import SHOWN, Summarised
from .pairs.clusters import Clusters, find_clusters
from .verify import verify_candidates
from .shingles import ShingleSpec, hash_sets, shingle_for_texts, shingle_texts

#: progress(stage, done, total): called now and then during long stages.
Progress = Callable[[str, int, int], None]


@dataclass
class Stats:
    """What a join read, dropped, compared and found, and what each stage cost."""

    documents: int = 0
    joined: int = 0
    dropped: int = 0
    skipped: list[tuple[str, str]] = field(default_factory=list)
    shingles: int = 0
    distinct_shingles: int = 0
    distinct_sets: int = 0
    candidates: int = 0
    set_pairs: int = 0
    pairs: int = 0
    seconds: dict[str, float] = field(default_factory=dict)
    peak_memory: int = 0
    notes: list[str] = field(default_factory=list)
    input_kind: str = "texts"  # the corpus's kind: "lines" and "sets" ids are line numbers

    @property
    def skipped_by_reason(self) -> Counter:
        return Counter(why.split(" (")[0] for _, why in self.skipped)

    def as_dict(self) -> dict:
        return {
            "documents": self.documents, "joined": self.joined, "dropped": self.dropped,
            "skipped": len(self.skipped),
            "skipped_by_reason": dict(self.skipped_by_reason),
            "shingles": self.shingles, "distinct_shingles": self.distinct_shingles,
            "distinct_sets": self.distinct_sets, "candidates": self.candidates,
            "set_pairs": self.set_pairs, "pairs": self.pairs,
            "seconds": {k: round(v, 4) for k, v in self.seconds.items()},
            "peak_memory_bytes": self.peak_memory, "notes": list(self.notes),
        }


METHODS = ("exact", "lsh")
VERIFY = ("exact", "estimate")

#: ``verify="estimate"`` needs MinHash values of at least this many bits. With b-bit values two
#: unrelated sets agree at a position with probability 2**-b, so LSH buckets fill with sets that
#: agree by chance and the estimate join over their signatures (which cannot use the sets' own
#: tokens) meets about n**2 * 2**-b chance agreements: measured on 20,000 Zipf sets, t = 0.5,
#: 1.7 s at 16 and 12 bits, 6.9 s at 8, 73 s at 4, 186 s at 1 (the exact join: 0.9 s).
#: ``verify="exact"`` joins the sets themselves and stays fast at any width.
MIN_ESTIMATE_BITS = 16

#: Without --max-bucket, a bucket this large is worth a warning.
LARGE_BUCKET = 1000

#: Similarities at which the summary shows the S-curve's prediction.
SHOWN_SIMILARITIES = (0.3, 0.5, 0.7, 0.8, 0.9)


@dataclass
class LSHInfo:
    """How the LSH path was set up and what its banding did."""

    num_perm: int
    bands: int
    rows: int
    seed: int
    bits: int | None
    auto: bool
    recall: float
    max_bucket: int | None
    max_expand: int | None = MAX_EXPAND
    oversized: list[tuple[int, int]] = field(default_factory=list)
    joined: list[tuple[int, int]] = field(default_factory=list)
    joined_sets: int = 0
    joined_pairs: int = 0
    skipped_pairs: int = 0
    largest_bucket: int = 0
    signature_bytes: int = 0

    def predicted(self, s):
        """P(s) = 1 - (1 - s^r)^b for this banding."""
        return probability(s, self.bands, self.rows)

    def describe(self) -> str:
        how = f"chosen for P(t) >= {self.recall}" if self.auto else "given"
        bits = f", {self.bits}-bit values" if self.bits else ""
        curve = ", ".join(f"P({s:g}) = {float(self.predicted(s)):.3f}" for s in SHOWN_SIMILARITIES)
        return (f"LSH {self.bands} bands × {self.rows} rows ({how}) of num_perm {self.num_perm}, seed {self.seed}"
                f"{bits}; {curve}")


@dataclass(repr=False)
class JoinResult(Summarised):
    """Pairs with J >= threshold, the documents' ids, and the statistics of the run.

    ``pairs`` name documents by position: ``ids[pair.left]`` is the left
    document's id (a relative path, a line number, a JSON id, a dict key, or
    for a list the position itself). :meth:`to_pandas` and :meth:`to_arrow`
    give the pairs as a table with the ids filled in. In an R–S join,
    ``left_ids[pair.left]`` and ``right_ids[pair.right]`` name the two sides.
    ``repr(res)`` (and a notebook's view) sums the result up: the counts, the
    settings and the first few pairs.
    """

    pairs: Pairs
    ids: list
    threshold: Threshold
    shingle: str
    method: str
    stats: Stats
    #: Columns carried beside each id into the output (the line for ``--lines``, ``--keep-col`` columns).
    columns: dict[str, Sequence[str]] = field(default_factory=dict)
    lsh: LSHInfo | None = None
    measure: Measure = field(default_factory=lambda: get_measure("jaccard"))
    #: For an R–S join, the number of documents of the first corpus: ``ids``
    #: (and ``columns``) hold both corpora, the first one's first.
    n_left: int | None = None
    #: With ``clusters=True``: the connected components of the pairs.
    clusters: Clusters | None = None

    def __len__(self) -> int:
        return len(self.pairs)

    @property
    def shown(self) -> Sequence[str] | None:
        """The first carried column (a line's text for ``--lines``), or None."""
        return next(iter(self.columns.values()), None)

    @property
    def left_ids(self) -> Sequence:
        """The ids of the first corpus (of every document in a self-join): ``left_ids[pair.left]``."""
        return self.ids if self.n_left is None else self.ids[: self.n_left]

    @property
    def right_ids(self) -> Sequence:
        """The ids of the other corpus of an R–S join (of every document in a self-join): ``right_ids[pair.right]``."""
        return self.ids if self.n_left is None else self.ids[self.n_left:]

    def similarity(self, pair):
        """The pair's exact similarity under the join's measure (a Fraction; int for overlap; float for cosine)."""
        return self.measure.similarity(pair.overlap, pair.left_size, pair.right_size)

    def _summary(self) -> tuple[str, tuple[str, ...], list[tuple], int]:
        """Title, column names, the first pairs and the number of pairs, for repr and notebooks."""
        docs = count(len(self.ids), "document") if self.n_left is None else \
            f"{count(self.n_left, 'document')} against {count(len(self.ids) - self.n_left, 'document')}"
        how = self.method if not self.shingle else f"{self.method}, tokens as given" if self.shingle == "tokens" \
            else f"{self.method}, {self.shingle} shingles"
        title = f"JoinResult: {count(len(self), 'pair')} of {docs} at {self.measure.name} >= {self.threshold} ({how})"
        if self.clusters is not None:
            title += f"; {count(len(self.clusters), 'cluster')}, the largest of {self.clusters.largest:,}"
        left, right = self.left_ids, self.right_ids
        first = self.pairs.head()
        if self.pairs.estimated:  # as the writer prints them: ~, then truncated to 6 decimals
            estimates = np.concatenate([c.estimate for c in itertools.islice(self.pairs.chunks(SHOWN), SHOWN)]
                                       or [np.zeros(0)])
            scores = [f"~{n // 10**6}.{n % 10**6:06d}" for n in np.floor(estimates[:len(first)] * 10**6)
                      .astype(np.int64).tolist()]
        else:
            scores = [similarity_text(self.measure, *p[2:]) for p in first]
        rows = [(left[p.left], right[p.right], score) for p, score in zip(first, scores)]
        return title, ("left", "right", "estimate" if self.pairs.estimated else "similarity"), rows, len(self)

    def to_pandas(self):
        """The pairs as a pandas DataFrame: left, right (ids), similarity (a float, under the join's measure),
        overlap, left_size, right_size."""
        return self.pairs.to_pandas(self.ids, self.measure)

    def to_arrow(self):
        """The pairs as a pyarrow Table, with the columns of :meth:`to_pandas`."""
        return self.pairs.to_arrow(self.ids, self.measure)


def process_status(field_name: str) -> int | None:
    """A size field of /proc/self/status (``VmRSS``, ``VmHWM``) in bytes (Linux), or None."""
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith(field_name + ":"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return None


def peak_memory() -> int:
    """Peak resident memory of this process so far, in bytes.

    The kernel's high-water mark of this program's memory (``VmHWM``) where
    there is one: getrusage's ``ru_maxrss`` also keeps the peak of the
    process this program was started from (Linux carries it across exec), so
    a run started by a large Python process would report that one's peak.
    """
    hwm = process_status("VmHWM")
    if hwm is not None:
        return hwm
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return rss if sys.platform == "darwin" else rss * 1024


@contextmanager
def _timed(stats: Stats, stage: str):
    t0 = time.perf_counter()
    yield
    stats.seconds[stage] = stats.seconds.get(stage, 0.0) + time.perf_counter() - t0


def is_series(data) -> bool:
    """Whether ``data`` is a pandas Series (pandas is not imported for the question)."""
    pandas = sys.modules.get("pandas")
    return pandas is not None and isinstance(data, pandas.Series)


def as_corpus(data: Corpus | Mapping | Sequence[str] | Sequence[Iterable], ids: Sequence | None = None) -> Corpus:
    """A Corpus from a Corpus, a dict, a pandas Series, a list of texts, or a list of token collections.

    A dict's keys are the ids and its values the documents (texts, or token
    collections); a Series is named by its index. A list's ids are ``ids``
    when given (as many as documents, all different), else the positions 0,
    1, 2, ... as ints, so that an id and the index :class:`~allpairs.pairs.Pair`
    gives for it are the same number. Ids keep their type.
    """
    if isinstance(data, Corpus):
        if ids is not None:
            raise UsageError("a Corpus names its documents already; ids= goes with a list of documents")
        return data
    if isinstance(data, (str, bytes)):
        raise UsageError("give a list of documents, not one string; read a path with allpairs.read_directory")
    if isinstance(data, Mapping) or is_series(data):
        if ids is not None:
            what = "a dict names its documents by its keys" if isinstance(data, Mapping) else \
                "a pandas Series names its documents by its index"
            raise UsageError(f"{what}; ids= goes with a list of documents")
        if isinstance(data, Mapping):
            ids, data = list(data.keys()), list(data.values())
        else:
            ids, data = data.index.tolist(), data.tolist()
            if len(set(ids)) != len(ids):
                twice = next(i for i, n in Counter(ids).items() if n > 1)
                raise UsageError(f"the Series' index holds {twice!r} twice; ids must be different")
    else:
        data = list(data)
        if ids is None:
            ids = list(range(len(data)))
        else:
            ids = list(ids)
            if len(ids) != len(data):
                raise UsageError(f"{len(ids):,} ids for {len(data):,} documents; give one id per document")
            if len(set(ids)) != len(ids):
                twice = next(i for i, n in Counter(ids).items() if n > 1)
                raise UsageError(f"id {twice!r} is given twice; ids must be different")
    if all(isinstance(d, str) for d in data):
        return Corpus(ids=ids, texts=data, kind="texts")
    if any(isinstance(d, str) for d in data):
        raise UsageError("mixed input: give either texts (str) or token sets, not both")
    # Tokens stay as given (hash_sets keys a token by str(token)): no copy of each token.
    return Corpus(ids=ids, sets=[d if isinstance(d, (list, tuple)) else list(d) for d in data], kind="tokens")


def merge_corpora(left: Corpus, right: Corpus) -> Corpus:
    """Both sides of an R–S join as one corpus (left's documents first), so that they share one global order."""
    if (left.sets is None) != (right.sets is None):
        raise UsageError("both sides of an R–S join must be texts, or both pre-tokenised sets")

    def both(a, b, n_a, n_b):
        return None if a is None and b is None else list(a or [None] * n_a) + list(b or [None] * n_b)

    n_l, n_r = len(left), len(right)
    columns = {name: list(left.columns.get(name, [""] * n_l)) + list(right.columns.get(name, [""] * n_r))
               for name in {**left.columns, **right.columns}}
    return Corpus(ids=list(left.ids) + list(right.ids), texts=both(left.texts, right.texts, n_l, n_r),
                  sets=both(left.sets, right.sets, n_l, n_r), columns=columns, notes=left.notes + right.notes,
                  languages=both(left.languages, right.languages, n_l, n_r),
                  skipped=list(left.skipped) + list(right.skipped),
                  kind=left.kind if left.kind == right.kind else "texts",
                  seconds=left.seconds + right.seconds, dropped=left.dropped + right.dropped)


def input_bytes(corpus: Corpus, enough: int = PLAIN_BELOW) -> int:
    """About how many bytes of input ``corpus`` holds: characters of its texts and of its sets' string
    tokens, 8 per token that is not a string (a key's size); counting stops past ``enough``, which is all that
    :func:`allpairs._numba.kernels_for` needs to know."""
    docs = corpus.texts if corpus.texts is not None else corpus.sets
    lines = getattr(docs, "lines", None)  # read from a file: its buffer's size
    if lines is not None:
        return len(lines.data)
    buffer = getattr(docs, "buffer", None)  # texts held as one UTF-8 buffer
    if isinstance(buffer, np.ndarray):
        return len(buffer)
    keys = getattr(docs, "keys", None)  # hashed while read: the keys
    if keys is not None:
        return 8 * len(keys)
    total = 0
    for doc in docs:
        if corpus.texts is not None:
            total += len(doc)
        else:  # a string token is hashed byte by byte: a few long ones are much work
            total += sum(len(t) if isinstance(t, str) else 8 for t in doc)
        if total >= enough:
            break
    return total


#: A join of a small input with more candidate entries than this (the bound of
#: :func:`candidate_bound`) runs its join stage compiled: a handful of sets sharing
#: frequent tokens can be a lot of work for few bytes.
PLAIN_CANDIDATES = 50_000


def candidate_bound(sets: OrderedSets, t: Threshold, measure: Measure) -> int:
    """An upper bound on the posting entries the prefix-filter join reads: for each token, the sets
    whose probing prefix holds it times those whose indexing prefix does (numpy, linear)."""
    sizes = np.diff(sets.indptr)
    if len(sizes) == 0:
        return 0
    _, index_len, probe_len, _, _ = join_plan(measure, t, sizes)
    position = np.arange(len(sets.tokens)) - np.repeat(sets.indptr[:-1], sizes)
    probed = np.bincount(sets.tokens[position < np.repeat(probe_len, sizes)], minlength=sets.num_tokens)
    indexed = np.bincount(sets.tokens[position < np.repeat(index_len, sizes)], minlength=sets.num_tokens)
    return int(probed.astype(np.int64) @ indexed.astype(np.int64))


def default_shingle(corpus: Corpus) -> tuple[ShingleSpec | None, str | None]:
    """The documented default and, when it was chosen from the data, a line that says so: tokens as
    given for sets; ``code:5`` for a tree of source files only; else the shingle the texts' lengths
    call for (:func:`allpairs.shingles.shingle_for_texts`: ``char:3``, ``word:1`` or ``word:5``)."""
    if corpus.sets is not None:
        return None, None
    if corpus.kind == "directory" and corpus.languages and all(corpus.languages):
        return ShingleSpec("code", 5), None
    choice = shingle_for_texts(corpus.texts)
    return choice.spec, choice.describe()


#: The share of documents with a single shingle above which the summary suggests a shorter shingle.
SHORT_SHARE = 0.1


def short_note(spec: ShingleSpec, doc_size: np.ndarray) -> str | None:
    """A line for the summary when many documents are a single shingle (too short for ``spec``): at a
    threshold above 1/2 each pairs only with copies of it, so a shorter shingle of the kind is named."""
    shorter = {"word": ShingleSpec("word", 1), "char": ShingleSpec("char", 3)}.get(spec.kind)
    if shorter is None or shorter.n >= spec.n:
        return None
    joined = int((doc_size > 0).sum())
    single = int((doc_size == 1).sum())
    if not joined or single < SHORT_SHARE * joined:
        return None
    unit = "words" if spec.kind == "word" else "characters"
    return (f"note: {single:,} of {count(joined, 'document')} ({100 * single / joined:.0f}%) are a single {spec} "
            f"shingle ({spec.n} {unit} or fewer): above t = 0.5 each pairs only with copies of it; "
            f"--shingle {shorter} suits texts this short")


def corpus_keys(corpus: Corpus, shingle: ShingleSpec | str | None, *, normalize: bool,
                progress: Progress | None = None, jobs: int | None = None,
                sorted_rows: bool = False, notes: list[str] | None = None) -> tuple[np.ndarray, np.ndarray, str]:
    """Stage 2 for a corpus: the keys of its sets' tokens, or of its texts' shingles (default spec
    as documented in :func:`default_shingle`, which ``notes`` is told of when chosen from the data),
    as CSR, and the label of what they are.
    ``sorted_rows``: sets' tokens may come back sorted with repeats dropped, where that is cheaper
    here than later (see :func:`allpairs.shingles.hash_sets`)."""
    if isinstance(shingle, str):
        shingle = ShingleSpec.parse(shingle)
    if corpus.sets is not None:
        if shingle is not None:
            raise UsageError("pre-tokenised sets are joined on their tokens; drop --shingle")
        indptr, keys = hash_sets(corpus.sets, jobs=jobs, sorted_rows=sorted_rows)
        return indptr, keys, "tokens"
    if shingle is None:
        shingle, why = default_shingle(corpus)
        if why and notes is not None:
            notes.append(why)
    done = [0]

    def tick(k: int) -> None:
        done[0] += k
        if progress:
            progress("shingle", done[0], len(corpus))

    indptr, keys = shingle_texts(corpus.texts, shingle, normalize=normalize, languages=corpus.languages,
                                 progress=tick, distinct=True, jobs=jobs)
    return indptr, keys, str(shingle)


def shingle_corpus(corpus: Corpus, shingle: ShingleSpec | str | None, *, normalize: bool,
                   min_shingles: int, stats: Stats, progress: Progress | None,
                   ranked: bool = True, jobs: int | None = None) -> tuple[OrderedSets, str]:
    """Stages 1–3: shingle every document, drop the near-empty, rank and group (shared by join and compare).

    ``ranked=False`` (the LSH path) groups the sets without ranking their keys
    (:func:`allpairs.lsh.keysets.keyed_sets`): MinHash and verification need no rank order.
    ``jobs``: threads for the compiled tokenizers (see :func:`allpairs.shingles.shingle_texts`).
    """
    stats.documents = len(corpus) + len(corpus.skipped)
    stats.skipped = list(corpus.skipped)
    stats.dropped = corpus.dropped
    stats.input_kind = corpus.kind
    stats.notes.extend(corpus.notes)
    left_out = corpus.left_out_note()
    if left_out:
        stats.notes.append(left_out)
    if corpus.seconds:
        stats.seconds["read"] = corpus.seconds
    if len(corpus) == 0:
        raise EmptyCorpusError(corpus.empty_message())
    with _timed(stats, "shingle"):
        indptr, keys, label = corpus_keys(corpus, shingle, normalize=normalize, progress=progress, jobs=jobs,
                                          sorted_rows=not ranked, notes=stats.notes)
    with _timed(stats, "order"):
        if ranked:
            sets = order_sets(indptr, keys, min_size=max(1, min_shingles), jobs=jobs)
        else:
            sets = keyed_sets(indptr, keys, min_size=max(1, min_shingles), jobs=jobs)
    stats.shingles = int(sets.doc_size.sum())
    stats.distinct_shingles = sets.num_tokens
    stats.distinct_sets = sets.num_sets
    stats.joined = int((sets.doc_set >= 0).sum())
    if label != "tokens":
        note = short_note(ShingleSpec.parse(label), np.where(sets.doc_set >= 0, sets.doc_size, 0))
        if note:
            stats.notes.append(note)
    dropped = np.flatnonzero(sets.doc_set < 0)
    for d in dropped.tolist():
        if sets.doc_size[d] == 0:
            stats.skipped.append((corpus.ids[d], "no shingle"))
        else:
            stats.dropped += 1
    if sets.num_sets == 0:
        if corpus.sets is not None:  # sets are joined on their tokens: no shingle size to change
            lower = " or lower --min-shingles" if min_shingles > 1 else ""
            raise EmptyCorpusError(f"no set has {max(1, min_shingles)} or more tokens ({len(corpus)} read); "
                                   f"give lines of whitespace-separated tokens{lower}")
        raise EmptyCorpusError(f"no document has {max(1, min_shingles)} or more {label} shingles "
                               f"({len(corpus)} read); try shorter shingles, e.g. --shingle char:3")
    return sets, label


def lsh_settings(threshold: Threshold, *, num_perm: int, bands: int | None, rows: int | None, recall: float,
                 seed: int, bits: int | None, max_bucket: int | None, max_expand: int | None = MAX_EXPAND) -> LSHInfo:
    """Check the LSH options and pick (bands, rows) from the threshold when not both given."""
    check_num_perm(num_perm)
    if (bands is None) != (rows is None):
        given, missing = ("bands", "rows") if rows is None else ("rows", "bands")
        raise UsageError(f"--{given} needs --{missing} too; give both, or neither to choose them from the threshold")
    if seed < 0 or seed >= 2**64:
        raise UsageError(f"seed {seed} is outside 0 .. 2**64 - 1")
    if bits is not None and not 1 <= bits <= 32:
        raise UsageError(f"bits {bits} is outside 1..32; 16 keeps 2 bytes a value (b-bit MinHash)")
    if max_bucket is not None and max_bucket < 2:
        raise UsageError(f"max bucket {max_bucket} is below 2 (a bucket of 2 sets is one pair); leave it out for no limit")
    if max_expand is not None and max_expand < 1:
        raise UsageError(f"max expand {max_expand} is below 1 (1 joins every bucket exactly); "
                         "None expands every bucket")
    auto = bands is None
    if auto:
        bands, rows = choose_params(float(threshold.fraction), num_perm, recall=recall)
    check_banding(bands, rows, num_perm)
    return LSHInfo(num_perm=num_perm, bands=bands, rows=rows, seed=seed, bits=bits, auto=auto, recall=recall,
                   max_bucket=max_bucket, max_expand=max_expand)


def _estimate_join(sig: np.ndarray, rows: np.ndarray, t: Threshold, bits: int | None, jobs: int):
    """Pairs of ``rows`` (ascending) whose MinHash estimate is >= t, found by an exact join of their signatures.

    A pair's estimate is >= t exactly when its rows agree in at least ``c``
    positions (:func:`allpairs.lsh.agreement_needed`); as sets of K (position,
    value) keys two rows overlap in their agreements, and overlap >= c is
    Jaccard >= c / (2K - c). Identical signatures form one distinct set, whose
    rows all pair up. Returns (left, right) int32 with left < right, and the
    join's SetPairs (for its candidate count).
    """
    K = sig.shape[1]
    need = agreement_needed(K, float(t.fraction), bits=bits)
    indptr, keys = signature_sets(sig, rows)
    sig_sets = order_sets(indptr, keys)
    found = prefix_join(sig_sets.indptr, sig_sets.tokens, sig_sets.num_tokens, Threshold(need, 2 * K - need),
                        jobs=jobs)
    chunks = list(Pairs(sig_sets, found.left, found.right, found.overlap).chunks())
    if not chunks:
        return np.empty(0, np.int32), np.empty(0, np.int32), found
    return (rows[np.concatenate([c.left for c in chunks])], rows[np.concatenate([c.right for c in chunks])], found)


def _join_rows(sets: OrderedSets, rows: np.ndarray, t: Threshold, jobs: int):
    """The exact join among the distinct sets ``rows`` (ascending), in indices of all sets.

    Sets of raw keys (:class:`KeyedSets`, in no rank order) are ranked among
    themselves first, rare keys first, so that the prefix filter stays selective.
    """
    if not isinstance(sets, KeyedSets):
        return prefix_join_rows(sets.indptr, sets.tokens, sets.num_tokens, rows, t, jobs=jobs)
    sub = order_sets(*sets.rows_keys(rows))
    found = prefix_join(sub.indptr, sub.tokens, sub.num_tokens, t, jobs=jobs)
    # The rows are distinct sets: each of sub's sets is one of them.
    back = rows[sub.group_docs[sub.group_indptr[:-1]]].astype(np.int32)
    a, b = back[found.left], back[found.right]
    return SetPairs(np.minimum(a, b), np.maximum(a, b), found.overlap, found.candidates)


def joined_note(buckets: int, max_expand: int, largest: int, sets: int, pairs: int) -> str:
    """The summary line of the LSH buckets joined exactly instead of expanded (for every engine)."""
    what = "LSH bucket of more than" if buckets == 1 else "LSH buckets of more than"
    were = "was" if buckets == 1 else "were"
    return (f"{buckets:,} {what} {count(max_expand, 'distinct set')} (largest {largest:,}) {were} joined "
            f"exactly instead of expanded: {count(sets, 'set')}, {count(pairs, 'candidate pair')} not expanded; "
            "same result")


def lsh_pairs(sets: OrderedSets, t: Threshold, info: LSHInfo, *, verify: str, jobs: int, stats: Stats):
    """Stages 4b and 5 of the LSH path: signatures, bands, then exact verification (or the estimate).

    Buckets too large to expand (more than ``info.max_expand`` sets) are not
    verified pair by pair: their sets are joined exactly by the prefix filter
    (stage 4a, restricted to them), and the pairs found that share such a
    bucket are kept; the result is the same as expanding them, at the cost of
    one exact join of those sets at most. The lsh and exact packages never
    import each other; this function wires them.

    Returns the pairs and the LSH candidates (pairs of distinct sets) they came from.
    """
    indptr, keys = sets.set_keys()
    with _timed(stats, "signatures"):
        sig = signatures(indptr, keys, info.num_perm, seed=info.seed, bits=info.bits, jobs=jobs)
    info.signature_bytes = int(sig.nbytes)
    with _timed(stats, "bands"):
        cand = lsh_candidates(sig, info.bands, info.rows, max_bucket=info.max_bucket, max_expand=info.max_expand,
                              empty=np.zeros(sets.num_sets, bool), jobs=jobs)
    info.oversized = cand.oversized
    info.skipped_pairs = int(cand.skipped_pairs)
    info.joined = cand.joined_buckets
    info.joined_pairs = int(cand.joined_pairs)
    info.largest_bucket = int(cand.largest_bucket.max()) if len(cand.largest_bucket) else 0
    stats.candidates = len(cand)
    with _timed(stats, "verify"):
        if verify == "exact":
            kept = verify_candidates(sets.indptr, sets.tokens, cand.left, cand.right, t)
        else:
            est = estimate_pairs(sig, cand.left, cand.right, bits=info.bits)
            keep = est >= float(t.fraction)
            kept = cand.left[keep], cand.right[keep], est[keep]
    if info.joined:
        members = cand.joined_rows
        info.joined_sets = len(members)
        with _timed(stats, "bucket join"):
            if verify == "exact":
                found = _join_rows(sets, members, t, jobs)
                left, right, value = found.left, found.right, found.overlap
            else:
                left, right, found = _estimate_join(sig, members, t, info.bits, jobs)
            shared = share_joined_bucket(sig, cand, left, right)
            left, right = left[shared], right[shared]
            value = value[shared] if verify == "exact" else estimate_pairs(sig, left, right, bits=info.bits)
            # A kept candidate that shares a joined bucket too was found again by the join: keep it
            # once, without sorting the union (the pairs are expanded in order whatever theirs).
            again = share_joined_bucket(sig, cand, kept[0], kept[1])
            kept = tuple(np.concatenate([a[~again], b]) for a, b in zip(kept, (left, right, value)))
        stats.candidates += found.candidates
    left, right, value = kept
    if verify == "exact":
        pairs = Pairs(sets, left, right, value)
    else:
        pairs = Pairs(sets, left, right, np.full(len(left), -1, np.int32), estimate=value)
    if info.joined:
        stats.notes.append(joined_note(len(info.joined), info.max_expand, max(size for _, size in info.joined),
                                       info.joined_sets, info.joined_pairs))
    if info.max_bucket is None and info.max_expand is None and info.largest_bucket > LARGE_BUCKET:
        n = info.largest_bucket
        stats.notes.append(
            f"warning: an LSH bucket holds {count(n, 'distinct set')}, {count(n * (n - 1) // 2, 'candidate pair')} "
            "on its own: "
            "boilerplate or near-empty documents; bound it with --max-bucket or drop them with --min-shingles")
    if info.oversized:
        sizes = sorted((size for _, size in info.oversized), reverse=True)
        stats.notes.append(
            f"warning: {count(len(sizes), 'LSH bucket')} larger than --max-bucket {info.max_bucket:,} "
            f"{'was' if len(sizes) == 1 else 'were'} not expanded (largest {count(sizes[0], 'set')}; "
            f"{count(info.skipped_pairs, 'candidate pair')} left out): boilerplate or "
            "near-empty documents; drop them with --min-shingles or raise --max-bucket")
    return pairs, cand


def join(data: Corpus | Mapping | Sequence[str] | Sequence[Iterable], threshold: float | str | Threshold | None = None, *,
         top: int | None = None, neighbors: int | None = None,
         method: str = "exact", shingle: ShingleSpec | str | None = None, normalize: bool = True,
         min_shingles: int = 1, jobs: int | None = None, num_perm: int = 128, bands: int | None = None,
         rows: int | None = None, recall: float = 0.99, seed: int = 1, bits: int | None = None,
         max_bucket: int | None = None, max_expand: int | None = MAX_EXPAND, verify: str = "exact",
         measure: str = "jaccard", against: Corpus | Sequence[str] | Sequence[Iterable] | None = None,
         clusters: bool = False, progress: Progress | None = None, ids: Sequence | None = None,
         against_ids: Sequence | None = None) -> JoinResult:
    """Every pair of documents whose shingle sets have similarity >= threshold (Jaccard unless ``measure`` says).

    With ``method="exact"`` (the default) the answer is exact: a prefix-filter
    join. With ``method="lsh"`` candidates come from MinHash signatures and LSH
    banding and are verified exactly, so every pair printed is a true pair, but
    a pair of similarity s is found only with probability
    ``P(s) = 1 - (1 - s^rows)^bands``.

    Parameters
    ----------
    data : Corpus, dict, pandas Series, list of str, or list of token collections
        A corpus from :mod:`allpairs.corpus`, texts to shingle, or sets of
        tokens (str or int) to join as they are; a dict maps ids to either,
        a Series is named by its index. Pairs name documents by position
        (``res.ids[pair.left]`` is the id); a list's ids are ``ids``, or the
        positions themselves. Ids keep their type.
    threshold : float, str or Fraction in (0, 1]
        Pairs with J >= threshold are returned; read exactly (0.7 is 7/10).
        With ``top`` or ``neighbors`` optional: a floor.
    top : int >= 1, optional
        Only the ``top`` pairs of largest similarity, best first, ties by
        (left, right) in input order (Xiao et al., ICDE 2009; see
        :mod:`allpairs.exact.topk`). Jaccard, cosine and dice.
    neighbors : int >= 1, optional
        For each document in input order, its ``neighbors`` best partners
        (pairs (document, partner), best first, ties by the partner's
        position); without ``threshold`` any document sharing a token.
    method : "exact" or "lsh"
    shingle : "word:N", "char:N", "code:N", optional
        How texts become sets; see :func:`default_shingle` for the default.
    normalize : bool
        NFKC, case folding and whitespace collapsing for word and char shingles.
    min_shingles : int
        Documents with fewer distinct shingles are dropped (and counted).
    jobs : int, optional
        Threads; default all cores. The result does not depend on it.
    num_perm, bands, rows, recall, seed, bits, max_bucket :
        LSH only: K MinHash values per set; ``bands`` × ``rows`` (both, or
        neither to take the recall-first choice of
        :func:`allpairs.lsh.choose_params` for P(threshold) >= ``recall``); the
        hash family's seed; keep ``bits`` low bits of each value (b-bit
        MinHash); buckets of more than ``max_bucket`` sets are skipped (and
        reported); buckets of more than ``max_expand`` sets (and at most
        ``max_bucket``) are joined exactly instead of expanded pair by pair,
        with the same result (None: expand them all).
    verify : "exact" or "estimate"
        LSH only: verify candidates exactly (default), or keep those whose
        MinHash estimate is >= threshold (the output then says "estimate");
        the estimate needs ``bits`` None or at least :data:`MIN_ESTIMATE_BITS`.
    measure : "jaccard", "cosine", "dice", "containment" or "overlap"
        See :data:`allpairs.measures.MEASURES`. Containment |A∩B|/|A| is
        asymmetric: each ordered pair of distinct documents is tested both
        ways and a pair is (contained, container). Overlap counts common
        tokens: ``threshold`` is then a whole number k >= 1. Other measures
        than Jaccard need ``method="exact"``.
    against : corpus like ``data``, optional
        An R–S join: only pairs (a, b) with a from ``data`` and b from
        ``against`` (numbered from 0 within it); for containment a is the
        contained one. Both sides are shingled alike and share one order.
        Name its documents as ``data``'s: by a dict's keys, a Series' index,
        or ``against_ids``; ``res.left_ids[pair.left]`` and
        ``res.right_ids[pair.right]`` are then the two documents' ids.
    clusters : bool
        Also find the connected components of the pairs with two or more
        documents (:attr:`JoinResult.clusters`); self-joins only.
    progress : callable(stage, done, total), optional
    ids : sequence, optional
        One id per document of a list (all different), used in ``res.ids``
        and by the writers; default the positions 0, 1, 2, ...
    against_ids : sequence, optional
        The same for ``against`` when it is a list.
    """
    m = get_measure(measure)
    ranked = check_ranked(top, neighbors, m, method=method, against=against, clusters=clusters)
    if threshold is None and ranked is None:
        raise UsageError("give a threshold (or top=K, neighbors=K)")
    t = None if threshold is None else parse_threshold(threshold, m)
    jobs = resolve_jobs(jobs)
    if method not in METHODS:
        raise UsageError(f"unknown method {method!r}; choose exact or lsh")
    if verify not in VERIFY:
        raise UsageError(f"unknown verification {verify!r}; choose exact or estimate")
    if min_shingles < 0:
        raise UsageError(f"min_shingles {min_shingles} is negative; give 0 or more")
    if method == "lsh" and m.name != "jaccard":
        raise UsageError(f"MinHash LSH estimates Jaccard only; drop --method lsh to join on {m.name}")
    if method == "lsh" and against is not None:
        raise UsageError("an R–S join (--against) is exact only; drop --method lsh")
    if clusters and against is not None:
        raise UsageError("clusters are for a self-join; drop --against or --clusters")
    if against_ids is not None and against is None:
        raise UsageError("against_ids= names the documents of against=; give both, or ids= for a self-join")
    info = None
    if method == "lsh":
        info = lsh_settings(t, num_perm=num_perm, bands=bands, rows=rows, recall=recall, seed=seed, bits=bits,
                            max_bucket=max_bucket, max_expand=max_expand)
        if verify == "estimate" and bits is not None and bits < MIN_ESTIMATE_BITS:
            raise UsageError(f"--verify estimate needs --bits {MIN_ESTIMATE_BITS} or more, not {bits}: with "
                             f"{bits}-bit values unrelated sets agree on 1 position in {2**bits} by chance, and "
                             "the estimate join over such signatures grows with the square of the corpus; "
                             f"raise --bits to {MIN_ESTIMATE_BITS} or more, or use --verify exact (fast at any --bits)")
    elif verify != "exact":
        raise UsageError("--verify estimate goes with --method lsh")
    corpus = as_corpus(data, ids)
    n_left = None
    if against is not None:
        other = as_corpus(against, against_ids)
        # Either side empty is an empty corpus, as for a self-join: joining against nothing finds nothing.
        for side, c in (("", corpus), ("against: ", other)):
            if len(c) == 0:
                raise EmptyCorpusError(side + c.empty_message())
        n_left = len(corpus)
        corpus = merge_corpora(corpus, other)
    stats = Stats()
    # A small input runs the kernels as plain Python: no numba to import, no kernels to load.
    with kernels_for(input_bytes(corpus)):
        sets, label = shingle_corpus(corpus, shingle, normalize=normalize, min_shingles=min_shingles,
                                     stats=stats, progress=progress, ranked=info is None, jobs=jobs)
        if ranked is not None:
            with _timed(stats, "join"), kernels_for(None if _much_join(sets, t or Threshold(1, 2), m) else 0):
                pairs, t = ranked_pairs_of(sets, t, m, top=top, neighbors=neighbors, jobs=jobs, stats=stats)
        elif info is None:
            with _timed(stats, "join"), kernels_for(None if _much_join(sets, t, m) else 0):
                pairs, found = exact_pairs(sets, t, m, n_left=n_left, jobs=jobs, progress=progress)
            stats.candidates = found.candidates
        else:
            stats.notes.append(info.describe())
            pairs, _ = lsh_pairs(sets, t, info, verify=verify, jobs=jobs, stats=stats)
        stats.set_pairs = pairs.num_set_pairs
        stats.pairs = len(pairs)
        found_clusters = None
        if clusters:
            with _timed(stats, "clusters"):
                found_clusters = find_clusters(pairs, ids=corpus.ids)
    stats.peak_memory = peak_memory()
    return JoinResult(pairs=pairs, ids=corpus.ids, threshold=t, shingle=label, method=method,
                      stats=stats, columns=corpus.columns, lsh=info, measure=m, n_left=n_left,
                      clusters=found_clusters)


def check_ranked(top: int | None, neighbors: int | None, measure: Measure, *, method: str = "exact",
                 against=None, clusters: bool = False) -> str | None:
    """Check ``top`` and ``neighbors`` (whole numbers >= 1, not both, exact Jaccard, cosine or dice self-joins);
    return "top", "neighbors" or None."""
    given = [(name, k) for name, k in (("top", top), ("neighbors", neighbors)) if k is not None]
    if not given:
        return None
    if len(given) > 1:
        raise UsageError("--top and --neighbors ask different questions; give one of them")
    name, k = given[0]
    check_k(name, k, measure)
    if method != "exact":
        raise UsageError(f"--{name} is exact only; drop --method lsh")
    if against is not None:
        raise UsageError(f"--{name} is for a self-join; drop --against")
    if clusters:
        raise UsageError(f"--{name} prints pairs, not clusters; drop --clusters")
    return name


def ranked_pairs_of(sets: OrderedSets, floor: Threshold | None, measure: Measure, *, top: int | None,
                    neighbors: int | None, jobs: int, stats: Stats):
    """Stages 4a and 5 for ``top`` or ``neighbors`` (:mod:`allpairs.exact.topk`): the pairs in their order,
    and the threshold of the last join run."""
    weight = np.diff(sets.group_indptr).astype(np.int64)
    if top is not None:
        found = top_set_pairs(sets.indptr, sets.tokens, sets.num_tokens, weight, top, measure=measure,
                              floor=floor, jobs=jobs)
        pairs = ranked_pairs(sets, found, measure)
        stats.candidates = found.candidates
        ts = ", ".join(str(t) for t in found.thresholds) or "none (identical documents suffice)"
        last = pairs[-1] if len(pairs) else None
        if last is not None:
            v = measure.truncated(last.overlap, last.left_size, last.right_size, 6)
        kth = "" if last is None else f"; the last of {len(pairs):,} at {v // 10**6}.{v % 10**6:06d}"
        stats.notes.append(f"top {top:,}: threshold joins at t = {ts}{kth}")
        return pairs, found.thresholds[-1] if found.thresholds else Threshold(1, 1)
    lists = neighbor_lists(sets.indptr, sets.tokens, sets.num_tokens, sets.group_indptr, sets.group_docs,
                           neighbors, measure=measure, floor=floor, jobs=jobs)
    stats.candidates = lists.candidates
    stats.notes.append(f"{neighbors:,} nearest neighbours of each document, from joins down to t = {lists.threshold}")
    return NeighborPairs(sets, lists), lists.threshold


def _much_join(sets: OrderedSets, t: Threshold, measure: Measure) -> bool:
    """Whether the join stage of a run whose kernels run as plain Python should run compiled after all."""
    return kernel_mode() == "python" and candidate_bound(sets, t, measure) > PLAIN_CANDIDATES


def exact_pairs(sets: OrderedSets, t: Threshold, measure: Measure, *, n_left: int | None = None,
                jobs: int | None = None, progress: Progress | None = None):
    """Stages 4a and 5 of the exact path, self or R–S: the prefix-filter join of the distinct sets.

    For an R–S join, documents ``0 .. n_left - 1`` are the left side; each
    distinct set is marked with the sides its documents lie on. Returns the
    pairs and the :class:`~allpairs.exact.prefix.SetPairs` they came from.
    """
    sides = None
    if n_left is not None:
        on_left, on_right = sets.doc_set[:n_left], sets.doc_set[n_left:]
        sides = (np.where(np.bincount(on_left[on_left >= 0], minlength=sets.num_sets) > 0, LEFT_SIDE, 0)
                 | np.where(np.bincount(on_right[on_right >= 0], minlength=sets.num_sets) > 0, RIGHT_SIDE, 0))
    found = prefix_join(sets.indptr, sets.tokens, sets.num_tokens, t, measure=measure, sides=sides, jobs=jobs,
                        progress=(lambda d, n: progress("join", d, n)) if progress else None)
    # Identical documents are a pair when a set reaches t with itself (not, for overlap k, below k tokens).
    group_ok = per_size(lambda s: int(measure.accept(t, s, s, s)), np.diff(sets.indptr)).astype(bool)
    pairs = Pairs(sets, found.left, found.right, found.overlap, directions=found.directions, n_left=n_left,
                  group_ok=group_ok)
    return pairs, found
