"""A saved, growing similarity-search index: build, query, add, save, load.

The index holds what a query needs to be answered exactly without the corpus:
the shingle settings, the global token order (shingle key -> rank, rare first),
every indexed set as sorted ranks, the documents behind each set, and the
inverted index of each set's indexing prefix with posting lists sorted by set
size, so that the size bound crops them (Bayardo et al. 2007).

A query's tokens are ranked by the same order; a token the index has never
seen is rarer than all others, so it comes first: it can match nothing, but it
counts in the query's size, which is what makes the answer exact.

Adding documents does not rebuild anything: a token never seen gets a new
rank below every existing one (rarer than all, like an unseen query token). As
a build does, identical sets are collapsed: added documents with the same set
become one set, and a document whose set is indexed already joins it (found
by a hash of its ranks, confirmed token by token). The new sets' prefix
postings, one integer each packing (token, set size, set), go into a sorted
list (sortedcontainers), probed beside the compiled arrays; a batch that would
bring that list to a quarter of the compiled postings is merged into them
instead (one pass of the compiled builder over arrays, as a build does), so a
large add costs what a build of it costs, a long series of small adds
amortised linear time, and every probe still crops by size.
"""
from __future__ import annotations

import dataclasses
import itertools
import os
import threading
from collections import abc
from functools import lru_cache
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Callable, Iterable, Iterator, Mapping, NamedTuple, Sequence

import numpy as np
from sortedcontainers import SortedList

from .._kernels.mix import GOLDEN, mix64
from .._kernels.jit import resolve_jobs
from .._kernels.csr import distinct_sorted_rows
from ..order._kernel import gather_csr
from ..corpus import Corpus
from ..corpus.documents import named_from_above
from .._plural import count
from ..errors import InputError, UsageError
from ..exact.topk import best_per_group, check_k, exact_ranks
from ..pipeline import Stats, timed, as_corpus, is_series, shingle_corpus
from ..measures import JOIN_MEASURES, MEASURES, Measure, Threshold, get_measure, parse_threshold
from ..order import order_sets
from .. import shingles
from ..shingles import ShingleSpec, hash_sets, shingle_texts
from . import _kernel as _k
from ..output.files import OutputPlan
from ..pairs.result import sequence_item, similarity_text
from ..pairs.summary import SHOWN, Summarised, require_pandas
from .output import write_rows
from .store import read_index, write_index
from .validate import check_arrays, check_meta

#: The version of the shingle keys (allpairs.shingles): an index of other keys is refused, not misread.
KEY_VERSION = getattr(shingles, "KEY_VERSION", 1)

#: The label of an index over pre-tokenised sets (tokens taken as given).
TOKENS = "tokens"

#: The sorted delta is merged into the compiled postings once it holds this
#: share of them (and at least MIN_DELTA postings).
DELTA_SHARE = 4
MIN_DELTA = 1 << 14

#: Batches of at least this many queries are split over threads.
PARALLEL_QUERIES = 2048

#: With a progress callback, queries are answered this many at a time (per thread), each block reported.
QUERY_BLOCK = 4096


#: No upper bound on a partner's size.
UNBOUNDED = 2**62

#: Set sizes and ids fit in 32 bits: the fields of a packed posting of the sorted delta.
_FIELD = 32
_LOW = (1 << _FIELD) - 1


def _pack(slot: int, size: int, s: int) -> int:
    """A posting of the sorted delta as one integer, ordered as (token slot, set size, set)."""
    return (slot << (2 * _FIELD)) | (size << _FIELD) | s


def _spans(starts: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """The positions ``starts[k] .. starts[k] + lengths[k] - 1`` of every k, one after another (int64)."""
    lengths = np.asarray(lengths, np.int64)
    ends = np.cumsum(lengths)
    return np.repeat(np.asarray(starts, np.int64) - (ends - lengths), lengths) + np.arange(int(ends[-1]) if len(ends)
                                                                                              else 0)


def set_hashes(indptr: np.ndarray, tokens: np.ndarray) -> np.ndarray:
    """A 64-bit hash of each set of a CSR (uint64): equal sets, equal hashes (the other way round is
    checked token by token). The sum of the sets' mixed tokens, mixed with the size."""
    with np.errstate(over="ignore"):
        mixed = mix64.py_func(tokens.astype(np.int64).view(np.uint64) + GOLDEN)
        total = np.zeros(len(tokens) + 1, np.uint64)
        np.cumsum(mixed, out=total[1:])
        return mix64.py_func((total[indptr[1:]] - total[indptr[:-1]]) ^ np.diff(indptr).astype(np.uint64))


def text_keys(ptr: np.ndarray, blob: np.ndarray) -> np.ndarray:
    """A 64-bit key of each text of a CSR of bytes (uint64) from its length, its first 8 and its last 16
    bytes (where paths and numbers differ): equal texts, equal keys; the other way round is checked
    text by text. A few passes over the offsets, none over all the bytes."""
    lengths = np.diff(ptr)
    start = ptr[:-1]
    last = max(len(blob) - 1, 0)
    padded = blob if len(blob) else np.zeros(1, np.uint8)
    with np.errstate(over="ignore"):
        key = mix64.py_func(lengths.astype(np.uint64) + GOLDEN)
        for word in range(3):  # bytes 0..7 from the front, then 0..7 and 8..15 from the end
            bits = np.zeros(len(lengths), np.uint64)
            for k in range(8):
                at = start + k if word == 0 else start + lengths - 1 - (8 * (word - 1) + k)
                has = lengths > (k if word == 0 else 8 * (word - 1) + k)
                bits |= np.where(has, padded[np.clip(at, 0, last)], 0).astype(np.uint64) << np.uint64(8 * k)
            key = mix64.py_func(key ^ bits)
        return key


def same_sets(ptr_a: np.ndarray, tok_a: np.ndarray, rows_a: np.ndarray, ptr_b: np.ndarray, tok_b: np.ndarray,
              rows_b: np.ndarray) -> np.ndarray:
    """Whether set ``rows_a[k]`` of CSR a holds the same tokens as set ``rows_b[k]`` of CSR b, each k (bool)."""
    size = ptr_a[rows_a + 1] - ptr_a[rows_a]
    same = size == ptr_b[rows_b + 1] - ptr_b[rows_b]
    k = np.flatnonzero(same)
    if len(k):
        differ = tok_a[_spans(ptr_a[rows_a[k]], size[k])] != tok_b[_spans(ptr_b[rows_b[k]], size[k])]
        ends = np.cumsum(size[k])
        wrong = np.zeros(len(differ) + 1, np.int64)
        np.cumsum(differ, out=wrong[1:])
        same[k] = wrong[ends] == wrong[ends - size[k]]
    return same


#: What :meth:`SearchIndex.add` does with a document whose id the index holds: refuse, replace, skip.
EXISTING = ("error", "replace", "skip")


def line_numbered(corpus: Corpus) -> bool:
    """Whether a corpus's ids are its line or row numbers (``--lines``, ``--sets``, records without ids)."""
    return corpus.kind in ("lines", "sets") or any(
        note.startswith(("ids are line numbers", "ids are row numbers")) for note in corpus.notes)


def check_added_columns(corpus: Corpus, index: "SearchIndex") -> None:
    """Refuse an addition whose documents lack a column the index carries beside each id (a --lines file
    added to an index of a table's rows): they would be added with that column empty, silently."""
    missing = [name for name in index.columns if name not in corpus.columns]
    if index.num_docs and missing:
        raise UsageError(f"the index carries {', '.join(map(repr, missing))} beside each id and these documents "
                         f"do not; read them with {'that column' if len(missing) == 1 else 'those columns'} "
                         f"(--keep-col {missing[0]})")


def continue_lines(corpus: Corpus, index: "SearchIndex") -> Corpus:
    """A corpus whose ids are line numbers (:func:`line_numbered`) renumbered to follow the index's largest
    line id: line k becomes ``last + k``, so that the lines of two added files never share an id.
    Any other corpus as it is."""
    last = index.ids.last_number() if line_numbered(corpus) else 0
    if not last:
        return corpus
    def shift(i):
        return str(last + int(i)) if str(i).isascii() and str(i).isdigit() else i

    return dataclasses.replace(corpus, ids=[shift(i) for i in corpus.ids],
                               skipped=[(shift(i), why) for i, why in corpus.skipped])


@dataclass(frozen=True)
class Rule:
    """A measure of :data:`allpairs.measures.MEASURES` and its threshold ``p/q``.

    ``p = 0`` (only in :mod:`allpairs.compat`) asks for one common token.
    Every bound comes from the measure's row of the table; a query is the
    measure's left side (containment: the share of the query found in the
    indexed set).
    """

    measure: str
    p: int
    q: int

    @property
    def row(self) -> Measure:
        return MEASURES[self.measure]

    @property
    def code(self) -> int:
        return self.row.code

    @property
    def threshold(self) -> Threshold:
        return Threshold(self.p, self.q)

    @property
    def fraction(self) -> Fraction:
        return Fraction(self.p, self.q)

    @classmethod
    def parse(cls, measure: str, threshold) -> "Rule":
        row = get_measure(measure, JOIN_MEASURES)
        t = parse_threshold(threshold, row)
        return cls(row.name, t.p, t.q)

    def __str__(self) -> str:
        return f"{self.measure} >= {self.threshold}"

    def similarity(self, overlap: int, size_x: int, size_y: int):
        """The exact similarity of a query of ``size_x`` tokens and an indexed set of ``size_y``."""
        return self.row.similarity(overlap, size_x, size_y)

    def probe(self, sizes) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Probing prefix and partner-size window (lo, hi) of queries of these sizes (int64 arrays)."""
        return _per_size(self, sizes, 0)

    def index_prefix(self, sizes) -> np.ndarray:
        """Indexing prefix of indexed sets of these sizes: ``|y|`` minus the least α any query can need, plus 1."""
        return _per_size(self, sizes, 1)[0]


@lru_cache(maxsize=1 << 16)
def _bounds(rule: Rule, size: int, indexed: int) -> tuple[int, ...]:
    """(probing prefix, lo, hi) of a query of ``size`` tokens, or (indexing prefix,) of an indexed set."""
    row, t = rule.row, rule.threshold
    if indexed:
        return (size if rule.p == 0 or size == 0 else row.probe_prefix(t, size, "right"),)
    if rule.p == 0 or size == 0:
        return size, 1, UNBOUNDED
    lo, hi = row.partner_sizes(t, size, "left")
    return row.probe_prefix(t, size, "left"), lo, UNBOUNDED if hi is None else hi


def _per_size(rule: Rule, sizes, indexed: int) -> tuple[np.ndarray, ...]:
    """:func:`_bounds` of each size, as int64 arrays (computed once per distinct size)."""
    sizes = np.asarray(sizes, np.int64)
    if len(sizes) == 1:  # one query: no need to group sizes
        return tuple(np.array([v], np.int64) for v in _bounds(rule, int(sizes[0]), indexed))
    uniq, inverse = np.unique(sizes, return_inverse=True)
    table = np.array([_bounds(rule, x, indexed) for x in uniq.tolist()], np.int64).reshape(len(uniq), 3 - 2 * indexed)
    return tuple(table[inverse.reshape(-1), c] for c in range(table.shape[1]))


class _Column:
    """A 1-d array that grows by appending, capacity doubling; a read-only start is copied on first growth."""

    def __init__(self, data: np.ndarray, dtype):
        self.dtype = np.dtype(dtype)
        self._buf = np.asarray(data, self.dtype)
        self._n = len(self._buf)

    def __len__(self) -> int:
        return self._n

    @property
    def array(self) -> np.ndarray:
        return self._buf[: self._n]

    def extend(self, values) -> None:
        values = np.asarray(values, self.dtype)
        need = self._n + len(values)
        if need > len(self._buf) or not self._buf.flags.writeable:
            buf = np.empty(max(need, 2 * len(self._buf), 1024), self.dtype)
            buf[: self._n] = self._buf[: self._n]
            self._buf = buf
        self._buf[self._n:need] = values
        self._n = need


class _Ids(abc.Sequence):
    """Document ids as one UTF-8 blob and offsets, decoded only when asked for: a read-only sequence
    (negative indexes, slices, iteration). ``ints``: every id is an int, and reads back as one."""

    def __init__(self, ptr: np.ndarray, blob: np.ndarray, *, ints: bool = False):
        self.ptr = _Column(ptr, np.int64)
        self.blob = _Column(blob, np.uint8)
        self.ints = ints
        self._keys = np.zeros(0, np.uint64)  # text_keys of the first ids, made when asked for

    def keys(self) -> np.ndarray:
        """:func:`text_keys` of every id (uint64), kept: a series of adds keys each id once."""
        if len(self._keys) < len(self):
            self._keys = np.concatenate([self._keys, text_keys(self.ptr.array[len(self._keys):], self.blob.array)])
        return self._keys

    @classmethod
    def of(cls, ids: Sequence) -> "_Ids":
        out = cls(np.zeros(1, np.int64), np.zeros(0, np.uint8), ints=True)
        out.extend(ids)
        return out

    def __len__(self) -> int:
        return len(self.ptr) - 1

    def __getitem__(self, d):
        return sequence_item(d, len(self), self._decode, "id", "documents")

    def text(self, d: int) -> str:
        """Id ``d`` as the text it is stored as."""
        ptr = self.ptr.array
        return bytes(self.blob.array[ptr[d]:ptr[d + 1]]).decode("utf-8", "surrogateescape")

    def _decode(self, d: int):
        return int(self.text(d)) if self.ints else self.text(d)

    def __iter__(self):
        return map(self._decode, range(len(self)))

    def __repr__(self) -> str:
        n = len(self)
        shown = ", ".join(map(repr, self[:SHOWN])) + (", ..." if n > SHOWN else "")
        return f"<{n:,} ids: {shown}>"

    def extend(self, ids: Sequence) -> None:
        """Append ``ids``; once one is not an int (bool is not), every id reads back as str."""
        ids = list(ids)
        if self.ints and not all(isinstance(i, int) and not isinstance(i, bool) for i in ids):
            self.ints = False
        encoded = [str(i).encode("utf-8", "surrogateescape") for i in ids]
        lengths = np.fromiter(map(len, encoded), np.int64, len(encoded))
        self.ptr.extend(self.ptr.array[-1] + np.cumsum(lengths))
        self.blob.extend(np.frombuffer(b"".join(encoded), np.uint8))

    def last_number(self) -> int:
        """The largest id that is a whole number written without leading zeros (a line id), or 0."""
        ptr, blob = self.ptr.array, self.blob.array
        lengths = np.diff(ptr)
        other = np.zeros(len(blob) + 1, np.int64)
        np.cumsum((blob < ord("0")) | (blob > ord("9")), out=other[1:])
        first = blob[np.minimum(ptr[:-1], len(blob) - 1)] if len(blob) else np.zeros(len(lengths), np.uint8)
        number = ((lengths > 0) & (lengths <= 18) & (other[ptr[1:]] == other[ptr[:-1]])
                  & ((first != ord("0")) | (lengths == 1)))
        if not number.any():
            return 0
        width = int(lengths[number].max())  # the longest numbers are the largest: read only those
        rows = np.flatnonzero(number & (lengths == width))
        digits = (blob[_spans(ptr[rows], np.full(len(rows), width))].astype(np.int64) - ord("0")).reshape(-1, width)
        return int((digits @ (10 ** np.arange(width - 1, -1, -1, dtype=np.int64))).max())

    def keep(self, mask: np.ndarray) -> "_Ids":
        """The ids where ``mask`` (bool, one per id) is true, as new ids of the same kind."""
        ptr = self.ptr.array
        rows = np.flatnonzero(mask)
        lengths = ptr[rows + 1] - ptr[rows]
        new_ptr = np.zeros(len(rows) + 1, np.int64)
        np.cumsum(lengths, out=new_ptr[1:])
        out = _Ids(new_ptr, self.blob.array[_spans(ptr[rows], lengths)], ints=self.ints)
        out._keys = self._keys[mask[: len(self._keys)]]
        return out


class Match(NamedTuple):
    """One answer: query document, indexed document (positions), overlap and both set sizes."""

    query: int
    indexed: int
    overlap: int
    query_size: int
    indexed_size: int


@dataclass(repr=False)
class Matches(Summarised):
    """Every (query, indexed document) pair reaching the threshold, sorted by query then indexed document.

    Iterate for :class:`Match` tuples (positions); :meth:`to_pandas` gives a
    table with the ids; ``repr`` (and a notebook's view) the counts and the
    first few matches.

    Attributes
    ----------
    query, indexed, overlap, query_size, indexed_size : int32 arrays
        Positions in the query corpus and in the index, the exact overlap and
        both sets' sizes (a query's unseen tokens count in its size).
    query_ids : list of str
    index : SearchIndex
    rule : Rule
        The measure and threshold the query was answered at.
    """

    query: np.ndarray
    indexed: np.ndarray
    overlap: np.ndarray
    query_size: np.ndarray
    indexed_size: np.ndarray
    query_ids: list[str]
    index: "SearchIndex"
    rule: Rule
    #: Columns of the queries carried into the output (the line of ``--lines``, ``--keep-col`` columns).
    query_columns: dict = field(default_factory=dict)

    def __len__(self) -> int:
        return len(self.query)

    def __iter__(self) -> Iterator[Match]:
        cols = (self.query, self.indexed, self.overlap, self.query_size, self.indexed_size)
        return map(Match._make, zip(*(c.tolist() for c in cols)))

    def best(self, k: int) -> "Matches":
        """Each query's ``k`` best matches, best first, ties by indexed document (see :mod:`allpairs.exact.topk`)."""
        ranks = exact_ranks(self.rule.row, self.overlap, self.query_size, self.indexed_size)
        keep = best_per_group(self.query, ranks, self.indexed, k)
        cols = {f: getattr(self, f)[keep] for f in ("query", "indexed", "overlap", "query_size", "indexed_size")}
        return Matches(**cols, query_ids=self.query_ids, index=self.index, rule=self.rule,
                       query_columns=self.query_columns)

    def similarities(self) -> list[Fraction]:
        """Exact similarity of each match."""
        return [self.rule.similarity(m.overlap, m.query_size, m.indexed_size) for m in self]

    def to_pandas(self):
        """The matches as a pandas DataFrame: query and indexed (ids), similarity (a float under the
        index's measure), overlap, query_size, indexed_size. Needs pandas."""
        pandas = require_pandas("to_pandas")
        row = self.rule.row
        sims = [float(row.similarity(o, x, y)) for o, x, y in
                zip(self.overlap.tolist(), self.query_size.tolist(), self.indexed_size.tolist())]
        return pandas.DataFrame({"query": [self.query_ids[q] for q in self.query.tolist()],
                                 "indexed": [self.index.ids[d] for d in self.indexed.tolist()],
                                 "similarity": np.asarray(sims, np.float64), "overlap": self.overlap,
                                 "query_size": self.query_size, "indexed_size": self.indexed_size})

    def _summary(self) -> tuple[str, tuple[str, ...], list[tuple], int]:
        title = (f"Matches: {count(len(self), 'match', 'matches')} of {count(len(self.query_ids), 'query', 'queries')}"
                 f" against {count(self.index.num_docs, 'document')} at {self.rule}")
        rows = [(self.query_ids[m.query], self.index.ids[m.indexed],
                 similarity_text(self.rule.row, m.overlap, m.query_size, m.indexed_size))
                for m in itertools.islice(self, SHOWN)]
        return title, ("query", "indexed", "similarity"), rows, len(self)

    def write(self, out, fmt: str = "tsv", *, header: bool = True) -> int:
        """Write one row per match to the binary stream ``out``: query id, indexed id, similarity
        (CSV, JSON Lines and Parquet add the overlap and both sizes), then the carried columns of the
        queries (``query_NAME``) and of the indexed documents (``indexed_NAME``); return the rows written."""
        return write_rows(out, fmt, ("query", "indexed"), self.query.tolist(), self.indexed.tolist(), self.rule.row,
                          self.overlap.tolist(), self.query_size.tolist(), self.indexed_size.tolist(),
                          left_ids=self.query_ids, right_ids=self.index.ids, left_columns=self.query_columns,
                          right_columns=self.index.columns, header=header)


def scratch(m: int) -> np.ndarray:
    """The probe's scratch rows for ``m`` sets: count (zeros), last_i, last_j, touched, res_s, res_o."""
    return np.zeros((6, m), np.int32)


@dataclass
class Ranked:
    """Documents as sorted ranks: CSR (indptr int64, tokens int32), unseen tokens per document (int32)."""

    indptr: np.ndarray
    tokens: np.ndarray
    unseen: np.ndarray

    def __post_init__(self) -> None:
        self.sizes = np.diff(self.indptr) + self.unseen  # a query's unseen tokens count in its size


class SearchIndex:
    """An exact set-similarity search index over shingle sets; it grows with :meth:`add` and saves to one file.

    Build one with :meth:`build` (from a corpus, texts or token sets) or
    :meth:`load` (from a file written by :meth:`save`); ask it with
    :meth:`query` at its threshold or any higher one.
    """

    def __init__(self, *, rule: Rule, label: str, normalize: bool, min_shingles: int, v0: int,
                 slot_keys: np.ndarray, lookup_keys: np.ndarray, lookup_ranks: np.ndarray,
                 indptr: np.ndarray, tokens: np.ndarray, set_doc_ptr: np.ndarray, set_docs: np.ndarray,
                 ids: _Ids, postings: tuple[np.ndarray, np.ndarray] | None = None,
                 columns: dict[str, _Ids] | None = None):
        self.rule = rule
        self.label = label
        self.normalize = normalize
        self.min_shingles = min_shingles
        self.v0 = v0
        self.slot_keys = _Column(slot_keys, np.uint64)
        self.lookup_keys = np.asarray(lookup_keys, np.uint64)
        self.lookup_ranks = np.asarray(lookup_ranks, np.int32)
        self.extra_keys = np.zeros(0, np.uint64)
        self.extra_ranks = np.zeros(0, np.int32)
        self.indptr = _Column(indptr, np.int64)
        self.tokens = _Column(tokens, np.int32)
        self.set_doc_ptr = _Column(set_doc_ptr, np.int64)
        self.set_docs = _Column(set_docs, np.int32)
        self.ids = ids
        #: Columns carried beside each indexed document's id into query answers, by name.
        self.columns: dict[str, _Ids] = dict(columns or {})
        self.delta = SortedList()  # packed postings (_pack) of the sets added since the last merge
        # Documents added to a set indexed before them, until they are merged into set_doc_ptr/set_docs.
        self.joined_set = _Column(np.zeros(0, np.int32), np.int32)
        self.joined_doc = _Column(np.zeros(0, np.int32), np.int32)
        # Hashes of the sets (set_hashes): sorted, for the first `_hashed` sets; a dict for later ones.
        self._hash_keys: np.ndarray | None = None
        self._hash_sets = np.zeros(0, np.int32)
        self._hashed = 0
        self._recent: dict[int, int] = {}
        self._scratch: list[tuple[np.ndarray, ...]] = []
        if postings is None:
            self._compact()
        else:
            self.list_ptr, self.post = postings
            self.compiled_sets = self.num_sets

    # ---- sizes -------------------------------------------------------------

    @property
    def num_sets(self) -> int:
        return len(self.indptr) - 1

    @property
    def num_docs(self) -> int:
        return len(self.ids)

    @property
    def num_tokens(self) -> int:
        return len(self.slot_keys)

    @property
    def shingle(self) -> ShingleSpec | None:
        return None if self.label == TOKENS else ShingleSpec.parse(self.label)

    def __len__(self) -> int:
        return self.num_docs

    def __repr__(self) -> str:
        return (f"SearchIndex({self.num_docs:,} documents, {self.num_sets:,} distinct sets, {self.label} shingles, "
                f"{self.rule})")

    # ---- building ----------------------------------------------------------

    @classmethod
    def build(cls, data: Corpus | Sequence[str] | Sequence[Iterable], threshold, *, measure: str = "jaccard",
              shingle: ShingleSpec | str | None = None, normalize: bool = True, min_shingles: int = 1,
              stats: Stats | None = None, progress: Callable[[str, int, int], None] | None = None,
              ids: Sequence | None = None) -> "SearchIndex":
        """Index a corpus for queries at ``threshold`` or above.

        Parameters
        ----------
        data : Corpus, dict, pandas Series, list of str, or list of token collections
            As for :func:`allpairs.join`: a dict is named by its keys, a Series
            by its index, a list by ``ids`` or else by positions (ints).
            Ids keep their type while the index is in memory; a saved index
            reads its ids back as ints when they all were ints, else as str.
        threshold : float, str or Fraction in (0, 1]
            The lowest threshold the index answers; read exactly (for
            ``overlap``, a whole number of common tokens).
        measure : str
            ``jaccard``, ``cosine``, ``dice``, ``containment`` (the share of
            the query found in an indexed set) or ``overlap``.
        shingle, normalize, min_shingles
            How texts become sets, as for :func:`allpairs.join`; saved with
            the index and applied to every query and every added document.
        """
        rule = Rule.parse(measure, threshold)
        return cls._build(as_corpus(data, ids), rule, shingle=shingle, normalize=normalize, min_shingles=min_shingles,
                          stats=stats, progress=progress)

    @classmethod
    def _build(cls, corpus: Corpus, rule: Rule, *, shingle, normalize: bool, min_shingles: int,
               stats: Stats | None = None, progress=None) -> "SearchIndex":
        if min_shingles < 0:
            raise UsageError(f"min_shingles {min_shingles} is negative; give 0 or more")
        stats = stats if stats is not None else Stats()
        sets, label = shingle_corpus(corpus, shingle, normalize=normalize, min_shingles=min_shingles,
                                     stats=stats, progress=progress)
        kept = sets.doc_set >= 0
        position = np.cumsum(kept) - 1  # corpus position -> position among indexed documents
        docs = np.flatnonzero(kept).tolist()
        ids = [corpus.ids[d] for d in docs]
        columns = {name: [values[d] for d in docs] for name, values in corpus.columns.items()}
        with timed(stats, "index"):
            if progress:
                progress("index", 0, 1)
            index = cls.empty(rule, keys=sets.keys, label=label, normalize=normalize, min_shingles=min_shingles,
                              indptr=sets.indptr, tokens=sets.tokens, set_doc_ptr=sets.group_indptr,
                              set_docs=position[sets.group_docs].astype(np.int32), ids=ids, columns=columns)
            if progress:
                progress("index", 1, 1)
        return index

    @classmethod
    def empty(cls, rule: Rule, *, keys: np.ndarray, label: str, normalize: bool = True, min_shingles: int = 1,
              indptr=None, tokens=None, set_doc_ptr=None, set_docs=None, ids: Sequence[str] = (),
              columns: dict[str, Sequence[str]] | None = None) -> "SearchIndex":
        """An index whose order ranks ``keys`` (rank = position), holding the given sets (none by default)
        and the given documents' carried ``columns``."""
        keys = np.asarray(keys, np.uint64)
        by_key = np.argsort(keys, kind="stable")
        return cls(rule=rule, label=label, normalize=normalize, min_shingles=min_shingles, v0=len(keys),
                   slot_keys=keys, lookup_keys=keys[by_key], lookup_ranks=by_key.astype(np.int32),
                   indptr=np.zeros(1, np.int64) if indptr is None else indptr,
                   tokens=np.zeros(0, np.int32) if tokens is None else tokens,
                   set_doc_ptr=np.zeros(1, np.int64) if set_doc_ptr is None else set_doc_ptr,
                   set_docs=np.zeros(0, np.int32) if set_docs is None else set_docs, ids=_Ids.of(ids),
                   columns={name: _Ids.of(values) for name, values in (columns or {}).items()})

    def _compact(self) -> None:
        """Merge the added tokens and postings into the compiled arrays (postings rebuilt, sorted by set size)."""
        if len(self.extra_keys):
            keys = np.concatenate([self.lookup_keys, self.extra_keys])
            ranks = np.concatenate([self.lookup_ranks, self.extra_ranks])
            order = np.argsort(keys, kind="stable")
            self.lookup_keys, self.lookup_ranks = keys[order], ranks[order]
            self.extra_keys = np.zeros(0, np.uint64)
            self.extra_ranks = np.zeros(0, np.int32)
        indptr = self.indptr.array
        self.list_ptr, self.post = _k.build_postings(
            indptr, self.tokens.array, self.rule.index_prefix(np.diff(indptr)), self.num_tokens, self.v0)
        self.compiled_sets = self.num_sets
        self.delta = SortedList()

    # ---- from documents to ranks -------------------------------------------

    def _keys(self, corpus: Corpus, shingle, normalize) -> tuple[np.ndarray, np.ndarray]:
        """Shingle keys of each document with the index's settings (checking any given ones agree)."""
        if shingle is not None and str(shingle if isinstance(shingle, ShingleSpec) else ShingleSpec.parse(shingle)) \
                != self.label:
            raise UsageError(f"the index holds {self.label} shingles, not {shingle}; "
                             "query with the shingle settings it was built with (leave --shingle out)")
        if normalize is not None and bool(normalize) != self.normalize and self.label != TOKENS:
            raise UsageError(f"the index was built {'with' if self.normalize else 'without'} text normalisation; "
                             f"query it {'without' if self.normalize else 'with'} --no-normalize")
        if len(corpus) == 0:
            return np.zeros(1, np.int64), np.zeros(0, np.uint64)
        if self.label == TOKENS:
            if corpus.sets is None:
                raise UsageError("the index holds pre-tokenised sets (built from --sets); give sets (--sets), not texts")
            return hash_sets(corpus.sets)
        if corpus.sets is not None:
            raise UsageError(f"the index holds {self.label} shingles of texts; give texts, not pre-tokenised sets")
        return shingle_texts(corpus.texts, self.label, normalize=self.normalize, languages=corpus.languages)

    def _rank(self, indptr: np.ndarray, keys: np.ndarray) -> Ranked:
        ptr, tokens, unseen = _k.to_ranks(indptr, keys, self.lookup_keys, self.lookup_ranks,
                                          self.extra_keys, self.extra_ranks)
        return Ranked(ptr, tokens, unseen)

    # ---- queries -----------------------------------------------------------

    def _rule_at(self, threshold) -> Rule:
        if threshold is None:
            return self.rule
        t = parse_threshold(threshold, self.rule.row)
        if t.fraction < self.rule.fraction:
            raise UsageError(f"threshold {t} is below the index's {self.rule.threshold}, the lowest "
                             "it answers exactly; query at that or above, or build the index at a lower threshold")
        return Rule(self.rule.measure, t.p, t.q)

    def query(self, data: Corpus | Sequence[str] | Sequence[Iterable], threshold=None, *,
              shingle: ShingleSpec | str | None = None, normalize: bool | None = None,
              jobs: int | None = 1, top: int | None = None,
              progress: Callable[[str, int, int], None] | None = None) -> Matches:
        """Every indexed document reaching ``threshold`` with each query document, exactly.

        The matches name documents by position, from 0: ``matches.query`` the
        query's place in ``data``, ``matches.indexed`` the indexed document's
        place in the index (0-based here; the command line prints ids, and a
        ``--lines`` id is the line number, from 1). They come sorted by query,
        then indexed document, not by similarity; ``top`` orders each query's
        best first.

        Parameters
        ----------
        data : Corpus, list of str, or list of token collections
            The queries, shingled with the index's settings.
        threshold : float, str or Fraction, optional
            At or above the index's threshold (its own by default).
        shingle, normalize : optional
            When given, checked against the index's settings (a mismatch is an
            error, not a silent re-shingling).
        jobs : int, optional
            Threads for a large batch (1 by default; 0 or None: every core).
        top : int >= 1, optional
            Only each query's ``top`` best matches, best first, ties by indexed
            document (Jaccard, cosine and dice indexes).
        progress : callable(stage, done, total), optional
            Told the queries answered ("query"), a block at a time.
        """
        rule = self._rule_at(threshold)
        if top is not None:
            check_k("top", top, rule.row)
        corpus = as_corpus(data)
        indptr, keys = self._keys(corpus, shingle, normalize)
        ranked = self._rank(indptr, keys)
        q, s, o = self._query_ranked(ranked, rule, jobs=resolve_jobs(jobs), progress=progress)
        matches = self._matches(ranked, q, s, o, list(corpus.ids), rule)
        matches.query_columns = corpus.columns
        if top is not None:
            matches = matches.best(top)
        return matches

    def _matches(self, ranked: Ranked, q, s, o, query_ids, rule) -> Matches:
        """Expand matching sets to their documents, sorted by (query, indexed document)."""
        ptr = self.set_doc_ptr.array
        starts = ptr[s]
        counts = ptr[s + 1] - starts
        extra = None
        if len(self.joined_set) and len(s):  # documents added to sets indexed before them
            by_set = np.argsort(self.joined_set.array, kind="stable")
            joined = self.joined_set.array[by_set]
            first = np.searchsorted(joined, s, "left")
            more = np.searchsorted(joined, s, "right") - first
            rep = np.repeat(np.arange(len(s)), more)
            extra = q[rep], s[rep], o[rep], self.joined_doc.array[by_set[_spans(first, more)]]
        if int(counts.sum()) == len(s):  # one document per set, the usual case
            docs = self.set_docs.array[starts]
        else:
            rep = np.repeat(np.arange(len(s)), counts)
            docs = self.set_docs.array[_spans(starts, counts)]
            q, s, o = q[rep], s[rep], o[rep]
        if extra is not None:
            q, s, o, docs = (np.concatenate(pair) for pair in zip((q, s, o, docs), extra))
        if len(q) > 1:
            order = np.lexsort((docs, q))
            q, s, o, docs = q[order], s[order], o[order], docs[order]
        indptr = self.indptr.array
        return Matches(query=q.astype(np.int32, copy=False), indexed=docs.astype(np.int32, copy=False),
                       overlap=o.astype(np.int32, copy=False), query_size=ranked.sizes[q].astype(np.int32),
                       indexed_size=(indptr[s + 1] - indptr[s]).astype(np.int32), query_ids=query_ids, index=self,
                       rule=rule)

    def _delta_candidates(self, ranked: Ranked, rule: Rule, lo_q: int, hi_q: int) -> tuple[np.ndarray, np.ndarray]:
        """Sets added since the last merge that share a probing-prefix token with each query, within the size bound."""
        x_ptr = np.zeros(hi_q - lo_q + 1, np.int64)
        if not self.delta:
            return x_ptr, np.zeros(0, np.int32)
        out: list[int] = []
        sizes = ranked.sizes
        plens, los, his = rule.probe(sizes[lo_q:hi_q])
        for k in range(lo_q, hi_q):
            size_x = int(sizes[k])
            if size_x:
                u = int(ranked.unseen[k])
                plen, lo, hi = int(plens[k - lo_q]), int(los[k - lo_q]), min(int(his[k - lo_q]), _LOW)
                found = set()
                for w in ranked.tokens[ranked.indptr[k]:ranked.indptr[k] + max(plen - u, 0)].tolist():
                    slot = w if w >= 0 else self.v0 - 1 - w
                    for key in self.delta.irange(_pack(slot, lo, 0), _pack(slot, hi, _LOW)):
                        found.add(key & _LOW)
                out.extend(sorted(found))
            x_ptr[k - lo_q + 1] = len(out)
        return x_ptr, np.asarray(out, np.int32)

    def _scratch_for(self, worker: int) -> np.ndarray:
        m = max(self.num_sets, 1)
        while len(self._scratch) <= worker:
            self._scratch.append(scratch(m))
        if self._scratch[worker].shape[1] < m:
            self._scratch[worker] = scratch(max(m, 2 * self._scratch[worker].shape[1]))
        return self._scratch[worker]

    def _query_ranked(self, ranked: Ranked, rule: Rule, *, jobs: int = 1, limit: np.ndarray | None = None,
                      progress: Callable[[str, int, int], None] | None = None):
        """(query, set, overlap) of every match of ranked queries; ``limit[k]``: answer only sets below it.
        With ``progress``, the queries are answered QUERY_BLOCK at a time (per thread), each block told."""
        n = len(ranked.unseen)
        if limit is None:
            limit = np.full(n, self.num_sets, np.int32)
        tasks = 1 if n < PARALLEL_QUERIES or jobs <= 1 else min(jobs, n // (PARALLEL_QUERIES // 2))
        if n == 0 or (tasks == 1 and progress is None):
            return self._query_part(ranked, rule, limit, 0, n, 0)
        step = max(QUERY_BLOCK if progress is not None else -(-n // tasks), 1)
        cuts = list(range(0, n, step)) + [n]
        for w in range(tasks):
            self._scratch_for(w)
        done, lock = [0], threading.Lock()

        def part(k: int, worker: int):
            out = self._query_part(ranked, rule, limit, cuts[k], cuts[k + 1], worker)
            if progress is not None:
                with lock:
                    done[0] += cuts[k + 1] - cuts[k]
                    progress("query", done[0], n)
            return out

        if tasks == 1:
            parts = [part(k, 0) for k in range(len(cuts) - 1)]
        else:  # each thread its own scratch rows: worker w takes blocks w, w + tasks, ...
            with ThreadPoolExecutor(max_workers=tasks) as pool:
                chunks = list(pool.map(lambda w: [part(k, w) for k in range(w, len(cuts) - 1, tasks)], range(tasks)))
            parts = [chunks[k % tasks][k // tasks] for k in range(len(cuts) - 1)]
        return tuple(np.concatenate([pt[i] for pt in parts]) for i in range(3))

    def _query_part(self, ranked: Ranked, rule: Rule, limit: np.ndarray, a: int, b: int, worker: int):
        """The matches of queries a..b-1 (numbered from 0 for the whole batch), on the worker's scratch rows."""
        x_ptr, x_set = self._delta_candidates(ranked, rule, a, b)
        if a == 0 and b == len(ranked.unseen):
            ptr, tokens, unseen, sizes, lim = ranked.indptr, ranked.tokens, ranked.unseen, ranked.sizes, limit
        else:
            ptr = ranked.indptr[a:b + 1]
            tokens = ranked.tokens[ptr[0]:ptr[-1]]
            ptr = ptr - ptr[0]
            unseen, sizes, lim = ranked.unseen[a:b], ranked.sizes[a:b], limit[a:b]
        plen, lo, hi = rule.probe(sizes)
        q, s, o = _k.query(ptr, tokens, unseen, plen, lo, hi, lim, rule.code, rule.p, rule.q, self.indptr.array,
                           self.tokens.array, self.list_ptr, self.post, self.v0, x_ptr, x_set,
                           self._scratch_for(worker))
        return (q + a if a else q), s, o

    # ---- growth ------------------------------------------------------------

    def add(self, data: Corpus | Mapping | Sequence[str] | Sequence[Iterable], *, ids: Sequence | None = None,
            existing: str = "error", stats: Stats | None = None) -> np.ndarray:
        """Append documents (shingled with the index's settings) without rebuilding; return their positions.

        Parameters
        ----------
        data : Corpus, dict, pandas Series, list of str, or list of token collections
            As for :meth:`build`. A list's ids are ``ids``, or by default the
            positions the documents take in the index (ints). A corpus's ids
            are taken as they are (see :func:`continue_lines` for line numbers).
        existing : "error", "replace" or "skip"
            What to do with a document whose id the index holds already (ids
            compared as text): refuse the whole batch (:class:`InputError`,
            nothing added); replace the old document (it is removed and the new
            one appended, so the index answers as a build of its documents
            without the old one, then the batch, would); or keep the old one
            and skip the new (counted in ``stats.skipped``).
        stats : Stats, optional
            Counts what was read, skipped and replaced.

        Documents with fewer than the index's ``min_shingles`` distinct shingles
        (or none) are not added and get -1, as do skipped ones.
        """
        if existing not in EXISTING:
            raise UsageError(f"existing={existing!r}; choose one of {', '.join(map(repr, EXISTING))}")
        numbered = ids is None and not isinstance(data, (Corpus, Mapping)) and not is_series(data)
        corpus = as_corpus(data, ids)
        indptr, keys = self._keys(corpus, None, None)
        known = None if numbered else self._known(corpus.ids)
        take = np.arange(len(corpus))
        old: list[int] = []
        if known:
            if existing == "error":
                first = min(known)
                above = named_from_above(corpus.paths[0]) \
                    if corpus.kind == "directory" and len(corpus.paths) == 1 else None
                raise InputError(f"{count(len(known), 'document')} of the {len(corpus):,} added "
                                 f"{'has an id' if len(known) == 1 else 'have ids'} the index holds already "
                                 f"(the first: {corpus.ids[first]!r}); replace the old documents (--replace, "
                                 "existing='replace') or keep them and skip the new (--skip-existing, "
                                 "existing='skip')"
                                 + (f"; if they are other files, read them from the directory above to give "
                                    f"them ids of their own ({above})" if above else ""))
            if existing == "skip":
                take = np.flatnonzero(~np.isin(take, list(known)))
                lengths = np.diff(indptr)[take]
                keys = keys[_spans(indptr[take], lengths)]
                indptr = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)
            else:
                old = sorted(set(known.values()))
        # The batch is ordered as a build orders its corpus: its own ranks (rare first), its distinct sets.
        batch = order_sets(indptr, keys, min_size=max(1, self.min_shingles))
        sizes = batch.doc_size
        keep = np.flatnonzero(batch.doc_set >= 0)
        batch_positions = np.full(len(take), -1, np.int64)
        batch_positions[keep] = self.num_docs - len(old) + np.arange(len(keep))  # after the old ones go
        docs = take[keep].tolist()
        if numbered:  # a plain list: each document's id is its position in the index
            new_ids = batch_positions[keep].tolist()
            clash = self._known(new_ids)
            if clash:
                raise InputError(f"the index holds the id {new_ids[min(clash)]!r} already, the position a "
                                 "new document takes; give the documents ids (ids=)")
        else:
            new_ids = [corpus.ids[d] for d in docs]
        if stats is not None:
            stats.documents += len(corpus) + len(corpus.skipped)
            stats.skipped.extend(corpus.skipped)
            if existing == "skip" and known:
                stats.skipped.extend((corpus.ids[d], "in the index already") for d in sorted(known))
            stats.skipped.extend((corpus.ids[d], "no shingle") for d in take[sizes == 0].tolist())
            stats.dropped += int(((sizes > 0) & (sizes < self.min_shingles)).sum())
            stats.joined += len(keep)
            if old:
                stats.notes.append(f"replaced {count(len(old), 'document')} of the same id")
        if old:
            self._drop_docs(np.asarray(old, np.int64))
        positions = np.full(len(corpus), -1, np.int64)
        positions[take] = batch_positions
        if len(keep):
            self.ids.extend(new_ids)
            for name, column in self.columns.items():  # what the documents carry, "" where they carry nothing
                values = corpus.columns.get(name)
                column.extend([values[d] for d in docs] if values is not None else [""] * len(keep))
            self._append(batch, batch_positions)
        return positions

    def _known(self, ids: Sequence) -> dict[int, int]:
        """For each of ``ids`` that the index holds (compared as text): its place in ``ids`` -> its position.

        Only the indexed ids whose :func:`text_keys` key is one of ``ids``' keys are decoded and compared:
        no Python string for every indexed id."""
        if not len(self.ids) or not len(ids):
            return {}
        new = _Ids.of([str(i) for i in ids])
        wanted = np.sort(text_keys(new.ptr.array, new.blob.array))
        held = self.ids.keys()
        hit = np.flatnonzero(wanted[np.minimum(np.searchsorted(wanted, held), len(wanted) - 1)] == held)
        if not len(hit):
            return {}
        places: dict[str, list[int]] = {}
        for k in range(len(new)):
            places.setdefault(new.text(k), []).append(k)
        found: dict[int, int] = {}
        for d in hit.tolist():
            for k in places.get(self.ids.text(d), ()):
                found[k] = d
        return found

    def _drop_docs(self, docs: np.ndarray) -> None:
        """Remove the documents at positions ``docs``: later ones move down, and a set left with no
        document is removed with its postings (the compiled postings are rebuilt, as a build does)."""
        self._merge_members()
        n, m = self.num_docs, self.num_sets
        alive = np.ones(n, bool)
        alive[docs] = False
        new_position = np.cumsum(alive) - 1
        ptr, members = self.set_doc_ptr.array, self.set_docs.array
        set_of = np.repeat(np.arange(m), np.diff(ptr))
        stay = alive[members]
        counts = np.bincount(set_of[stay], minlength=m)
        members = new_position[members[stay]].astype(np.int32)
        self.ids = self.ids.keep(alive)
        self.columns = {name: column.keep(alive) for name, column in self.columns.items()}
        live = counts > 0
        if not live.all():
            rows = np.flatnonzero(live)
            indptr = self.indptr.array
            lengths = indptr[rows + 1] - indptr[rows]
            tokens = self.tokens.array[_spans(indptr[rows], lengths)]
            self.indptr = _Column(np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64), np.int64)
            self.tokens = _Column(tokens, np.int32)
            counts = counts[rows]
            self._hash_keys, self._hash_sets, self._hashed, self._recent = None, np.zeros(0, np.int32), 0, {}
            self._compact()
        ptr = np.zeros(len(counts) + 1, np.int64)
        np.cumsum(counts, out=ptr[1:])
        self.set_doc_ptr = _Column(ptr, np.int64)
        self.set_docs = _Column(members, np.int32)

    def _learn(self, keys: np.ndarray) -> np.ndarray:
        """The index's rank of each key (int32), giving every key not yet ranked a new rank below all others.

        ``keys`` are distinct, rarest first (a batch's :attr:`~allpairs.order.OrderedSets.keys`); new keys keep
        that order below the index's ranks: the rarest gets the lowest rank, so it comes first in its sets
        and the prefix filter stays as selective as after a build.
        """
        ranks = np.full(len(keys), -(2**31), np.int64)
        for table, table_ranks in ((self.lookup_keys, self.lookup_ranks), (self.extra_keys, self.extra_ranks)):
            if len(table):
                at = np.minimum(np.searchsorted(table, keys), len(table) - 1)
                hit = np.flatnonzero(table[at] == keys)
                ranks[hit] = table_ranks[at[hit]]
        new = np.flatnonzero(ranks == -(2**31))
        if len(new):
            start = self.num_tokens - self.v0  # tokens added so far: ranks -1 .. -start
            if start + len(new) > 2**31 - 1:
                raise OverflowError("more than 2**31 distinct shingles")
            ranks[new] = -(start + len(new) - np.arange(len(new)))
            self.slot_keys.extend(keys[new[::-1]])  # slot of rank r < 0: v0 - 1 - r
            keys_all = np.concatenate([self.extra_keys, keys[new]])
            ranks_all = np.concatenate([self.extra_ranks, ranks[new].astype(np.int32)])
            order = np.argsort(keys_all, kind="stable")
            self.extra_keys, self.extra_ranks = keys_all[order], ranks_all[order]
        return ranks.astype(np.int32)

    def _append(self, batch, positions: np.ndarray) -> None:
        """Append a batch's documents (:func:`~allpairs.order.order_sets`; ``positions``: each one's
        position in the index): each joins the indexed set identical to its own, or a new set (one per
        distinct set of the batch), whose prefix postings are added."""
        # The batch's sets in the index's ranks, each sorted again (as a biased key: uint64 order is int32's).
        ranks = self._learn(batch.keys)
        ptr, biased = distinct_sorted_rows(batch.indptr, (ranks[batch.tokens].astype(np.int64) + 2**31)
                                           .astype(np.uint64))
        tok = (biased.astype(np.int64) - 2**31).astype(np.int32)
        docs = positions[batch.group_docs].astype(np.int32)
        hashes = set_hashes(ptr, tok)
        known = self._find_sets(ptr, tok, hashes)
        members = np.diff(batch.group_indptr)
        old = np.flatnonzero(known >= 0)
        if len(old):
            self.joined_set.extend(np.repeat(known[old], members[old]))
            self.joined_doc.extend(docs[_spans(batch.group_indptr[old], members[old])])
        new = np.flatnonzero(known < 0)
        if len(new):
            if len(new) < len(known):
                ptr, tok = gather_csr(ptr, tok, new)
                gptr, docs = gather_csr(batch.group_indptr, docs, new)
            else:
                gptr = batch.group_indptr
            self._append_sets(ptr, tok, gptr, docs, hashes[new])
        if len(self.joined_set) >= max(MIN_DELTA, self.num_docs // DELTA_SHARE):
            self._merge_members()

    def _append_sets(self, ptr: np.ndarray, tok: np.ndarray, gptr: np.ndarray, docs: np.ndarray,
                     hashes: np.ndarray) -> None:
        """Append new sets (CSR in the index's ranks), their documents (CSR) and their prefix postings."""
        first_set = self.num_sets
        self.tokens.extend(tok)
        self.indptr.extend(self.indptr.array[-1] + ptr[1:])
        self.set_docs.extend(docs)
        self.set_doc_ptr.extend(self.set_doc_ptr.array[-1] + gptr[1:])
        self._remember(hashes, first_set)
        sizes = np.diff(ptr)
        plen = self.rule.index_prefix(sizes)
        if len(self.delta) + int(plen.sum()) >= max(MIN_DELTA, len(self.post) // DELTA_SHARE):
            self._compact()  # a large batch: straight into the compiled postings, as a build
            return
        rows = np.repeat(np.arange(len(sizes)), plen)
        t = tok[_spans(ptr[:-1], plen)].astype(np.int64)
        slots = np.where(t >= 0, t, self.v0 - 1 - t)
        self.delta.update(map(_pack, slots.tolist(), sizes[rows].tolist(), (first_set + rows).tolist()))

    def _find_sets(self, ptr: np.ndarray, tok: np.ndarray, hashes: np.ndarray) -> np.ndarray:
        """The indexed set identical to each set of a CSR, or -1 (int32); ``hashes``: their :func:`set_hashes`."""
        if self._hash_keys is None:  # first add: hash the sets indexed so far
            self._hash_keys = np.zeros(0, np.uint64)
            self._remember(set_hashes(self.indptr.array, self.tokens.array), 0)
        found = np.full(len(hashes), -1, np.int32)
        if len(self._hash_keys):
            at = np.minimum(np.searchsorted(self._hash_keys, hashes), len(self._hash_keys) - 1)
            hit = np.flatnonzero(self._hash_keys[at] == hashes)
            found[hit] = self._hash_sets[at[hit]]
        miss = np.flatnonzero(found < 0)
        if self._recent and 8 * len(miss) < len(self._recent):  # a few sets: look each up
            for k in miss.tolist():
                found[k] = self._recent.get(int(hashes[k]), -1)
        elif self._recent and len(miss):  # many: sort the recent hashes once
            keys = np.fromiter(self._recent, np.uint64, len(self._recent))
            sets = np.fromiter(self._recent.values(), np.int32, len(self._recent))
            order = np.argsort(keys)
            keys, sets = keys[order], sets[order]
            at = np.minimum(np.searchsorted(keys, hashes[miss]), len(keys) - 1)
            hit = keys[at] == hashes[miss]
            found[miss[hit]] = sets[at[hit]]
        k = np.flatnonzero(found >= 0)
        if len(k):  # a hash is not proof: a set that differs (a collision) stays a set of its own
            same = same_sets(ptr, tok, k, self.indptr.array, self.tokens.array, found[k].astype(np.int64))
            found[k[~same]] = -1
        return found

    def _remember(self, hashes: np.ndarray, first_set: int) -> None:
        """Note the hashes of the sets ``first_set``, ``first_set + 1``, ... just appended."""
        if len(self._recent) + len(hashes) < max(MIN_DELTA, self._hashed // DELTA_SHARE):
            self._recent.update(zip(hashes.tolist(), range(first_set, first_set + len(hashes))))
            return
        keys = np.concatenate([self._hash_keys, np.fromiter(self._recent, np.uint64, len(self._recent)), hashes])
        sets = np.concatenate([self._hash_sets, np.fromiter(self._recent.values(), np.int32, len(self._recent)),
                               np.arange(first_set, first_set + len(hashes), dtype=np.int32)])
        order = np.argsort(keys, kind="stable")
        self._hash_keys, self._hash_sets = keys[order], sets[order]
        self._hashed = len(keys)
        self._recent = {}

    def _merge_members(self) -> None:
        """Merge the documents added to older sets into set_doc_ptr/set_docs (each set's documents ascending)."""
        if not len(self.joined_set):
            return
        m, n = self.num_sets, self.num_docs
        doc_set = np.empty(n, np.int32)
        doc_set[self.set_docs.array] = np.repeat(np.arange(m, dtype=np.int32), np.diff(self.set_doc_ptr.array))
        doc_set[self.joined_doc.array] = self.joined_set.array
        ptr = np.zeros(m + 1, np.int64)
        np.cumsum(np.bincount(doc_set, minlength=m), out=ptr[1:])
        self.set_doc_ptr = _Column(ptr, np.int64)
        self.set_docs = _Column(np.argsort(doc_set, kind="stable").astype(np.int32), np.int32)
        self.joined_set = _Column(np.zeros(0, np.int32), np.int32)
        self.joined_doc = _Column(np.zeros(0, np.int32), np.int32)

    # ---- files -------------------------------------------------------------

    def save(self, path: str | os.PathLike, *, plan: OutputPlan | None = None, progress=None) -> int:
        """Write the index to ``path`` atomically (temporary file, then rename); return its size in bytes.

        ``path`` is written as every allpairs output is (:mod:`allpairs.output.files`);
        ``plan`` is what :func:`~allpairs.output.files.check_output` said of it before the work;
        ``progress(done, total)`` is told the bytes written.
        """
        if self.delta or len(self.extra_keys):
            self._compact()
        self._merge_members()
        meta = {"measure": self.rule.measure, "p": self.rule.p, "q": self.rule.q, "label": self.label,
                "normalize": self.normalize, "min_shingles": self.min_shingles, "v0": self.v0,
                "key_version": KEY_VERSION, "columns": list(self.columns)}
        if self.ids.ints and len(self.ids):
            meta["id_type"] = "int"
        arrays = {
            "slot_keys": self.slot_keys.array, "lookup_keys": self.lookup_keys, "lookup_ranks": self.lookup_ranks,
            "indptr": self.indptr.array, "tokens": self.tokens.array,
            "set_doc_ptr": self.set_doc_ptr.array, "set_docs": self.set_docs.array,
            "id_ptr": self.ids.ptr.array, "id_bytes": self.ids.blob.array,
            "list_ptr": self.list_ptr, "post": self.post,
        }
        for k, column in enumerate(self.columns.values()):
            arrays[f"column{k}_ptr"], arrays[f"column{k}_bytes"] = column.ptr.array, column.blob.array
        return write_index(path, meta, arrays, plan=plan, progress=progress)

    @classmethod
    def load(cls, path: str | os.PathLike, *, check: bool = True, fd: int | None = None) -> "SearchIndex":
        """Open an index file written by :meth:`save` (memory-mapped; refused if of another version or damaged).

        Every header field and array is checked (:mod:`allpairs.index.validate`) before
        it is used, so that no file, however made, leads a kernel out of bounds.
        ``fd``: the file already open (and locked, see :func:`~allpairs.index.store.locked`).
        """
        def validate(meta: dict, arrays: dict) -> Rule:
            check_meta(meta, path, key_version=KEY_VERSION, tokens_label=TOKENS)
            rule = Rule(meta["measure"], meta["p"], meta["q"])
            check_arrays(arrays, meta, path, rule.index_prefix)
            return rule

        meta, a, rule = read_index(path, check=check, fd=fd, validate=validate)
        return cls(rule=rule, label=meta["label"], normalize=meta["normalize"], min_shingles=meta["min_shingles"],
                   v0=meta["v0"], slot_keys=a["slot_keys"], lookup_keys=a["lookup_keys"],
                   lookup_ranks=a["lookup_ranks"], indptr=a["indptr"], tokens=a["tokens"],
                   set_doc_ptr=a["set_doc_ptr"], set_docs=a["set_docs"], ids=_Ids(a["id_ptr"], a["id_bytes"], ints=meta.get("id_type") == "int"),
                   postings=(a["list_ptr"], a["post"]),
                   columns={name: _Ids(a[f"column{k}_ptr"], a[f"column{k}_bytes"])
                            for k, name in enumerate(meta.get("columns", []))})
