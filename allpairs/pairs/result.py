"""Stage 6: the result, document pairs, streamed in order and written as TSV, CSV or JSON Lines.

Both paths (exact and LSH) end in the same :class:`Pairs`: pairs of distinct
sets with their overlap, and the groups of documents behind each distinct set.
Document pairs are produced from them in chunks, sorted by (left, right) with
``left < right`` in input order, so memory stays bounded by the number of
distinct-set pairs however many duplicates expand them.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import BinaryIO, Callable, Iterator, NamedTuple, Sequence

import numpy as np

from . import _kernel as _k
from .._kernels.jit import kernels_for
from .._plural import count
from ..errors import UsageError, require_extra
from ..measures import MEASURES, Measure, get_measure
from ..output.carried import Carried
from ..output.escape import (csv_delimiter, csv_field, csv_header_start, csv_line_end, json_field, printable,
                              tsv_field, utf8)
from ..order import OrderedSets
from .summary import SHOWN

FORMATS = ("tsv", "csv", "jsonl")

#: Decimal places of the printed similarity (truncated, never rounded up).
DECIMALS = 6

#: Pairs rendered at a time: a chunk's text (about 90 bytes a pair with --lines) is held twice while written.
WRITE_CHUNK = 1 << 18

#: About the length of one written pair (two ids, a similarity): the unit in which the
#: output's size decides how its kernels run (see :func:`allpairs._kernels.jit.kernels_for`).
BYTES_PER_PAIR = 32


def similarity_text(row: Measure, overlap: int, size_x: int, size_y: int) -> str:
    """The similarity truncated to 6 decimals, as the writers print it (overlap: the count)."""
    if row.integer_threshold:
        return str(overlap)
    v = row.truncated(overlap, size_x, size_y, DECIMALS)
    return f"{v // 10**DECIMALS}.{v % 10**DECIMALS:0{DECIMALS}d}"


def similarity_texts(row: Measure, overlap, size_x, size_y) -> list[str]:
    """:func:`similarity_text` of many pairs (sequences of ints), from the measure's integer ratio at once, not
    a :class:`~fractions.Fraction` a pair: ``⌊num · 10**6 / den⌋`` (``num`` at most twice an int32 overlap)."""
    o, x, y = (np.asarray(v, np.int64) for v in (overlap, size_x, size_y))
    if row.integer_threshold:
        return [str(v) for v in o.tolist()]
    num, den = row.ratio(o, x, y, DECIMALS)
    v = np.asarray(num, np.int64) * 10**DECIMALS // np.asarray(den, np.int64)
    return [f"{a}.{b:0{DECIMALS}d}" for a, b in zip((v // 10**DECIMALS).tolist(), (v % 10**DECIMALS).tolist())]


def similarity_floats(row: Measure, overlap, size_x, size_y) -> np.ndarray:
    """``float(row.similarity(o, x, y))`` of many pairs (sequences of ints) at once: :meth:`Measure.floats`."""
    return row.floats(*(np.asarray(v, np.int64) for v in (overlap, size_x, size_y)))


def sequence_item(key, n: int, get: Callable[[int], object], what: str, noun: str):
    """``seq[key]`` of a sequence of ``n`` items read by ``get(i)``: a negative ``key`` counts from the
    end, a slice gives a list; messages as Python's (``what`` names an item, ``noun`` the items)."""
    if isinstance(key, slice):
        return [get(i) for i in range(*key.indices(n))]
    if isinstance(key, (bool, np.bool_)) or not isinstance(key, (int, np.integer)):
        raise TypeError(f"{noun} are indexed by int or slice, not {type(key).__name__}")
    if not -n <= key < n:
        raise IndexError(f"{what} index {key} out of range for {n:,} {noun}")
    return get(int(key) + n if key < 0 else int(key))


class Pair(NamedTuple):
    """One result: two documents by position (ints), their overlap and both set sizes.

    ``left < right`` in a self-join; (contained, container) for containment;
    in an R–S join ``left`` numbers the first corpus and ``right`` the other.
    The ids are ``res.ids[pair.left]`` and ``res.ids[pair.right]`` (for a list
    given without ``ids=``, the positions themselves).
    """

    left: int
    right: int
    overlap: int
    left_size: int
    right_size: int

    @property
    def similarity(self) -> Fraction:
        """Exact Jaccard similarity as a :class:`fractions.Fraction` (``float(p.similarity)`` for a float;
        other measures: ``res.similarity(p)`` or ``MEASURES[name].similarity(overlap, left_size, right_size)``)."""
        from fractions import Fraction  # here: with decimal ~9 M instructions that a run's imports need not take

        self.check_verified()
        return Fraction(self.overlap, self.left_size + self.right_size - self.overlap)

    def check_verified(self) -> None:
        """Refuse to give a similarity for a pair kept on its MinHash estimate (overlap -1: unknown), which
        would read as a negative one."""
        if self.overlap < 0:
            raise UsageError("this pair was kept on its MinHash estimate ({{verify=estimate}}); its overlap is "
                             "unknown: read the estimates from res.pairs.chunks() or res.to_pandas(), or join "
                             "with {{verify=exact}}", param="verify")

    def to_dict(self, ids: Sequence | None = None, measure: Measure | str | None = None, *,
                right_ids: Sequence | None = None) -> dict:
        """Plain data that :func:`json.dumps` takes: the similarity (under ``measure``, default
        Jaccard) as a float, the documents as ids when ``ids`` (e.g. ``res.ids``) is given, else
        as positions. An R–S join numbers each side on its own: give ``res.left_ids`` and
        ``right_ids=res.right_ids`` (``res.ids`` holds both sides, the left first)."""
        self.check_verified()
        if right_ids is not None and ids is None:
            raise UsageError("right_ids= names the right side of an R–S join; give ids= (res.left_ids) too")
        right_ids = ids if right_ids is None else right_ids
        left, right = (self.left, self.right) if ids is None else (ids[self.left], right_ids[self.right])
        sim = self.similarity if measure is None else get_measure(measure).similarity(
            self.overlap, self.left_size, self.right_size)
        return {"left": left, "right": right, "similarity": float(sim), "overlap": self.overlap,
                "left_size": self.left_size, "right_size": self.right_size}


@dataclass(init=False, repr=False, eq=False)  # __init__ and __repr__ below are those it would generate
class PairChunk:
    """A run of consecutive results as arrays of equal length (int32; estimate float64 or None)."""

    left: np.ndarray
    right: np.ndarray
    overlap: np.ndarray
    left_size: np.ndarray
    right_size: np.ndarray
    estimate: np.ndarray | None = None

    def __init__(self, left: np.ndarray, right: np.ndarray, overlap: np.ndarray, left_size: np.ndarray,
                 right_size: np.ndarray, estimate: np.ndarray | None = None) -> None:
        self.left = left
        self.right = right
        self.overlap = overlap
        self.left_size = left_size
        self.right_size = right_size
        self.estimate = estimate

    def __repr__(self) -> str:
        return (f"{type(self).__qualname__}(left={self.left!r}, right={self.right!r}, overlap={self.overlap!r}, "
                f"left_size={self.left_size!r}, right_size={self.right_size!r}, estimate={self.estimate!r})")

    def __len__(self) -> int:
        return len(self.left)

    def slice(self, lo: int, hi: int) -> PairChunk:
        """Rows [lo, hi) of the chunk."""
        return PairChunk(self.left[lo:hi], self.right[lo:hi], self.overlap[lo:hi], self.left_size[lo:hi],
                         self.right_size[lo:hi], None if self.estimate is None else self.estimate[lo:hi])


#: ``where`` of :func:`_products` for every pair.
_EVERY = np.zeros(0, np.bool_)


def _products(a: np.ndarray, i: np.ndarray, b: np.ndarray, j: np.ndarray, where: np.ndarray | None = None) -> int:
    """``sum(a[i] * b[j])`` (int64 ``a``, ``b``; int32 ``i``, ``j``) over the positions where ``where`` is true
    (all if None), in one pass (:func:`~allpairs.pairs._kernel.pair_products`: numpy's gathers and dot made
    temporaries and cost ~50 instructions a pair)."""
    return int(_k.pair_products(a, np.ascontiguousarray(i, np.int32), b, np.ascontiguousarray(j, np.int32),
                                _EVERY if where is None else np.ascontiguousarray(where, np.bool_)))


class Pairs:
    """All document pairs that reach the threshold, sorted by (left, right); iterate for :class:`Pair` tuples.

    ``pairs[i]`` and ``pairs[a:b]`` index them; :meth:`chunks` gives them as
    arrays, a bounded number at a time, for results too large for a list;
    :meth:`to_pandas` and :meth:`to_arrow` as a table.

    Parameters
    ----------
    sets : OrderedSets
        The distinct sets and the documents behind them.
    left, right, overlap : int32 arrays
        Pairs of distinct sets (each pair once, either orientation) and their
        exact overlap (-1 where unknown: pairs kept on a MinHash estimate).
    estimate : float64 array, optional
        The MinHash estimate of each pair of distinct sets, when the pairs were
        kept on it rather than verified (``verify="estimate"``).
    directions : uint8 array, optional
        For an asymmetric measure (containment): bit 1 where ``left``'s
        documents are contained in ``right``'s, bit 2 for the reverse. Each
        ordered pair of distinct documents is then a result in the directions
        that hold (identical sets: both), printed as (contained, container).
    n_left : int, optional
        For an R–S join: documents ``0 .. n_left - 1`` are the left side, the
        rest the right side; only (left side, right side) pairs are results,
        and iteration numbers right documents from 0 within their side.
    group_ok : bool array (m,), optional
        Whether two documents with the same set are a pair (not, for overlap
        k, when the set has fewer than k tokens); default: always.
    """

    #: Pairs per chunk behind ``pairs[i]``.
    CHUNK = 1 << 16
    #: The measure the pairs were joined at, where known (a join's result sets it): what a
    #: :class:`PairWriter` must print them under.
    measure: Measure | None = None

    def __init__(self, sets: OrderedSets, left: np.ndarray, right: np.ndarray, overlap: np.ndarray,
                 estimate: np.ndarray | None = None, *, directions: np.ndarray | None = None,
                 n_left: int | None = None, group_ok: np.ndarray | None = None):
        self.sets = sets
        self.set_left = np.asarray(left, np.int32)
        self.set_right = np.asarray(right, np.int32)
        self.set_overlap = np.asarray(overlap, np.int32)
        self.set_estimate = None if estimate is None else np.asarray(estimate, np.float64)
        self.directed = directions is not None
        self.n_left = n_left
        self.mode = _k.CROSS if n_left is not None else (_k.ORDERED if self.directed else _k.UNORDERED)
        self._directions = None if directions is None else np.asarray(directions, np.uint8)
        self.group_ok = np.ones(sets.num_sets, np.bool_) if group_ok is None else np.asarray(group_ok, np.bool_)
        self._adj: tuple[np.ndarray, ...] | None = None  # made on the first pair read: a count needs none
        self._count = self._count_pairs()
        self._index: list[tuple[int, int, int, int]] | None = None  # chunk starts, for pairs[i]
        self._cached: tuple[int, PairChunk | None] | None = None  # the chunk pairs[i] expanded last

    @property
    def set_directions(self) -> np.ndarray:
        """The directions of each pair of distinct sets (uint8; both, 3, for a symmetric measure: made when
        first read, since a count of the pairs of a symmetric self-join reads none)."""
        if self._directions is None:
            self._directions = np.full(len(self.set_left), 3, np.uint8)
        return self._directions

    def _count_pairs(self) -> int:
        """How many document pairs the distinct-set pairs expand to, in closed form (one kernel pass over the
        pairs, :func:`_products`, so that counting millions of them needs no array as long as they)."""
        s = self.sets
        left, right = self.set_left, self.set_right
        if self.mode == _k.UNORDERED and len(s.group_docs) == s.num_sets:
            return len(left)  # every set one document: a pair of sets is one of documents
        group = np.diff(s.group_indptr).astype(np.int64)
        if self.mode == _k.UNORDERED:
            return int((self.group_ok * group * (group - 1) // 2).sum()) + _products(group, left, group, right)
        fwd = (self.set_directions & 1) > 0
        back = (self.set_directions & 2) > 0
        if self.mode == _k.ORDERED:
            return (int((self.group_ok * group * (group - 1)).sum()) + _products(group, left, group, right, fwd)
                    + _products(group, left, group, right, back))
        # CROSS: left-side members of one set with right-side members of the other.
        on_left = s.doc_set[: self.n_left]
        ls = np.bincount(on_left[on_left >= 0], minlength=s.num_sets).astype(np.int64)
        rs = group - ls
        return (int((self.group_ok * ls * rs).sum()) + _products(ls, left, rs, right, fwd)
                + _products(ls, right, rs, left, back))

    def __len__(self) -> int:
        return self._count

    @property
    def output_bytes(self) -> int:
        """About how many bytes the pairs take written out: what decides whether expanding and writing
        them runs the kernels compiled (:func:`allpairs._kernels.jit.kernels_for`)."""
        return BYTES_PER_PAIR * self._count

    @property
    def estimated(self) -> bool:
        """True when the pairs were kept on a MinHash estimate, not verified."""
        return self.set_estimate is not None

    @property
    def num_set_pairs(self) -> int:
        """Pairs of distinct sets (before identical documents expand them)."""
        return len(self.set_left)

    def _adjacency(self) -> tuple[np.ndarray, ...]:
        """Each distinct set's partners (offsets, partner, pair index, direction holds), made once."""
        if self._adj is None:
            with kernels_for(self.output_bytes):
                self._adj = _k.adjacency(self.sets.num_sets, self.set_left, self.set_right, self.set_directions)
        return self._adj

    def _doc_bound(self) -> np.ndarray:
        """A bound on the pairs of each left document."""
        s = self.sets
        adj_ptr, adj_set, _, _ = self._adjacency()
        with kernels_for(self.output_bytes):
            return _k.partner_bound(s.doc_set, s.group_indptr, adj_ptr, adj_set)

    def _ranges(self, max_pairs: int) -> Iterator[tuple[int, int, int]]:
        """Runs of left documents [lo, hi) with at most about ``max_pairs`` pairs, and a bound on their pairs."""
        cum = np.concatenate([[0], np.cumsum(self._doc_bound())])
        lo = 0
        n = self.sets.num_docs
        while lo < n:
            hi = int(np.searchsorted(cum, cum[lo] + max_pairs, side="right")) - 1
            hi = min(max(hi, lo + 1), n)
            yield lo, hi, int(cum[hi] - cum[lo])
            lo = hi

    def _expand(self, lo: int, hi: int, cap: int) -> PairChunk | None:
        """The pairs whose left document is in [lo, hi), in order; None if there is none."""
        if not cap:
            return None
        s = self.sets
        adj = self._adjacency()
        with kernels_for(self.output_bytes):
            left, right, idx = _k.expand(lo, hi, cap, s.doc_set, s.group_indptr, s.group_docs, *adj,
                                         self.group_ok, self.mode, self.n_left or 0)
        if not len(left):
            return None
        other = idx >= 0
        size = s.doc_size[left]
        overlap = size.copy()  # identical sets: overlap = size
        overlap[other] = self.set_overlap[idx[other]]
        est = None
        if self.set_estimate is not None:
            est = np.ones(len(left))
            est[other] = self.set_estimate[idx[other]]
        return PairChunk(left, right, overlap, size, s.doc_size[right], est)

    def chunks(self, max_pairs: int = 1 << 20) -> Iterator[PairChunk]:
        """The pairs in order as arrays, about ``max_pairs`` at a time (one document's partners are
        never split): the way through a result too large for a list of :class:`Pair`. Documents are
        numbered across both sides of an R–S join here (``right - n_left`` numbers the right side)."""
        if isinstance(max_pairs, bool) or not isinstance(max_pairs, (int, np.integer)) or max_pairs < 1:
            raise UsageError(f"max_pairs must be a whole number >= 1, got {max_pairs!r}")
        for lo, hi, cap in self._ranges(int(max_pairs)):
            chunk = self._expand(lo, hi, cap)
            if chunk is not None:
                yield chunk

    def __iter__(self) -> Iterator[Pair]:
        offset = self.n_left or 0  # an R–S join numbers right documents within their side
        for c in self.chunks():
            yield from _pairs_of(c, 0, len(c), offset)

    def __getitem__(self, key: int | slice) -> Pair | list[Pair]:
        """``pairs[i]`` is the i-th :class:`Pair` in order (negative counts from the end);
        ``pairs[a:b]`` a list of them. Only the chunk holding a pair is expanded."""
        return sequence_item(key, len(self), self._pair, "pair", "pairs")

    def _pair(self, i: int) -> Pair:
        """The i-th pair (0 <= i < len): only the chunk holding it is expanded."""
        if self._index is None:  # where each chunk starts: one pass that keeps only counts
            self._index = []
            start = 0
            for lo, hi, cap in self._ranges(self.CHUNK):
                chunk = self._expand(lo, hi, cap)
                if chunk is not None:
                    self._index.append((start, lo, hi, cap))
                    start += len(chunk)
        import bisect  # here, as Fraction above

        k = bisect.bisect_right([e[0] for e in self._index], i) - 1
        start, lo, hi, cap = self._index[k]
        if self._cached is None or self._cached[0] != k:
            self._cached = (k, self._expand(lo, hi, cap))
        return next(_pairs_of(self._cached[1], i - start, i - start + 1, self.n_left or 0))

    def to_list(self) -> list[Pair]:
        return list(self)

    def head(self, k: int = SHOWN) -> list[Pair]:
        """The first ``k`` pairs, expanding only the documents they come from (cheap on any result)."""
        out: list[Pair] = []
        for c in self.chunks(max(k, 1)) if k > 0 else ():
            out.extend(_pairs_of(c, 0, min(len(c), k - len(out)), self.n_left or 0))
            if len(out) >= k:
                break
        return out

    def __repr__(self) -> str:
        return f"<Pairs: {count(len(self), 'document pair')} from {count(self.num_set_pairs, 'pair')} of distinct sets>"

    def _columns(self, ids: Sequence | None, measure: Measure | str | None) -> dict[str, np.ndarray | list]:
        return self._columns_of(list(self.chunks()), ids, measure)

    def _columns_of(self, chunks: list[PairChunk], ids: Sequence | None, measure: Measure | str | None
                    ) -> dict[str, np.ndarray | list]:
        """The columns of :meth:`to_pandas` for the pairs of ``chunks``."""

        def cat(name: str, dtype) -> np.ndarray:
            return np.concatenate([getattr(c, name) for c in chunks]) if chunks else np.zeros(0, dtype)

        left, right = cat("left", np.int32), cat("right", np.int32)
        overlap, ls, rs = cat("overlap", np.int32), cat("left_size", np.int32), cat("right_size", np.int32)
        cols: dict[str, np.ndarray | list] = {}
        cols["left"] = left if ids is None else [ids[i] for i in left.tolist()]
        cols["right"] = right - (self.n_left or 0) if ids is None else [ids[i] for i in right.tolist()]
        m = get_measure(measure) if measure is not None else MEASURES["jaccard"]
        if self.estimated:
            cols["estimate"] = cat("estimate", np.float64)
        else:
            cols["similarity"] = similarity_floats(m, overlap, ls, rs)
            cols["overlap"] = overlap
        cols["left_size"], cols["right_size"] = ls, rs
        return cols

    def to_pandas(self, ids: Sequence | None = None, measure: Measure | str | None = None):
        """The pairs as a pandas DataFrame (left, right, similarity as a float under ``measure``, default
        Jaccard, overlap, left_size, right_size; ``estimate`` instead of similarity and overlap for
        estimated pairs), the documents named by ``ids`` when given, else by position. Needs pandas."""
        return require_extra("pandas", "to_pandas").DataFrame(self._columns(ids, measure))

    def to_arrow(self, ids: Sequence | None = None, measure: Measure | str | None = None):
        """The pairs as a pyarrow Table, with the columns of :meth:`to_pandas`. Needs pyarrow.

        Ids are typed as pyarrow types them (int64, string, ...); ids of kinds no one Arrow type holds
        (ints and strings, an int past int64, a lone surrogate) are their text, as the Parquet writer's."""
        pa = require_extra("pyarrow", "to_arrow")
        cols = self._columns(ids, measure)
        if ids is not None:  # both sides typed as one column, so that they agree
            both = _arrow_ids(pa, cols["left"] + cols["right"])
            cols["left"], cols["right"] = both[:len(cols["left"])], both[len(cols["left"]):]
        return pa.table(cols)


def _arrow_ids(pa, values: list):
    try:
        return pa.array(values)
    except (pa.ArrowInvalid, pa.ArrowTypeError, OverflowError, UnicodeEncodeError):
        return pa.array([None if v is None else printable(str(v)) for v in values], pa.string())


def _pairs_of(c: PairChunk, a: int, b: int, offset: int = 0) -> Iterator[Pair]:
    """The pairs at rows [a, b) of a chunk as :class:`Pair` tuples of Python ints (right minus ``offset``)."""
    return map(Pair._make, zip(c.left[a:b].tolist(), (c.right[a:b] - offset).tolist(), c.overlap[a:b].tolist(),
                               c.left_size[a:b].tolist(), c.right_size[a:b].tolist()))


# --- writing -------------------------------------------------------------

def _encode_fields(columns: Sequence[Sequence[str]], escape) -> tuple[np.ndarray, np.ndarray]:
    """Escape and UTF-8-encode every field; field f of doc d sits at index f*n + d. In JSON Lines a
    :class:`~allpairs.output.carried.Carried` column's fields are its values' JSON texts (typed)."""
    encoded = [utf8(v) for col in columns
               for v in (col.json_texts() if escape is json_field and isinstance(col, Carried)
                         else map(escape, map(str, col)))]
    ptr = np.zeros(len(encoded) + 1, np.int64)
    np.cumsum(np.fromiter(map(len, encoded), np.int64, len(encoded)), out=ptr[1:])
    return ptr, np.frombuffer(b"".join(encoded), np.uint8)


class PairWriter:
    """Renders chunks of pairs as lines of one format.

    ``ids`` names each document; ``columns`` (name -> one value a document),
    when given, are carried after the similarity (TSV) or the sizes (CSV), as
    ``left_NAME`` and ``right_NAME`` for each name (a
    :class:`~allpairs.output.carried.Carried` column's values typed in JSON
    Lines: numbers, booleans, lists, objects, null); ``texts`` is the column
    ``text`` (line records). TSV and CSV start with a header row unless
    ``header`` is False.
    """

    def __init__(self, ids: Sequence[str], fmt: str = "tsv", texts: Sequence[str] | None = None,
                 decimals: int = DECIMALS, estimated: bool = False, measure: Measure | str = "jaccard",
                 columns: dict[str, Sequence[str]] | None = None, header: bool = True):
        if fmt not in FORMATS:
            raise UsageError(f"unknown output format {fmt!r}; choose one of {', '.join(FORMATS)}")
        self.n_docs = len(ids)
        self.measure = get_measure(measure, tuple(MEASURES))
        # An overlap is a count: printed whole.
        self.decimals = 0 if self.measure.integer_threshold else decimals
        columns = dict(columns or {})
        if texts is not None:
            columns["text"] = texts
        for name, values in columns.items():  # a field of each document, read by position in one buffer
            if len(values) != self.n_docs:
                raise UsageError(f"the column {name!r} has {len(values):,} values for {self.n_docs:,} ids; give "
                                 "one a document", param="columns")
        escape = {"tsv": tsv_field, "csv": csv_field, "jsonl": json_field}[fmt]
        self.field_ptr, self.field_bytes = _encode_fields([ids, *columns.values()], escape)
        L, R, S = _k.OP_LEFT, _k.OP_RIGHT, _k.OP_SIMILARITY
        O, LS, RS = _k.OP_OVERLAP, _k.OP_LEFT_SIZE, _k.OP_RIGHT_SIZE
        self.estimated = estimated
        # The columns of each format: (name, steps that write the value), in order.
        score = "estimate" if estimated else "similarity"
        cols = [("left", [(L, 0)]), ("right", [(R, 0)]), (score, ["~", (S, 0)] if estimated and fmt == "tsv"
                                                              else [(S, 0)])]
        if fmt != "tsv":
            cols += [] if estimated else [("overlap", [(O, 0)])]
            cols += [("left_size", [(LS, 0)]), ("right_size", [(RS, 0)])]
        for f, name in enumerate(columns, start=1):
            cols += [(f"left_{name}", [(L, f)]), (f"right_{name}", [(R, f)])]
        names = [name for name, _ in cols]
        twice = sorted({n for n in names if names.count(n) > 1})
        if twice:
            raise UsageError(f"the output would have two columns named {twice[0]!r}; carry the column under "
                             "another name or leave it out")
        steps: list = []
        if fmt == "jsonl":
            for k, (name, value) in enumerate(cols):
                steps += [("{" if k == 0 else ", ") + json_field(name) + ": ", *value]
            steps.append("}")
            self.header = ""
        else:
            sep, start, end = (("\t", "", "\n") if fmt == "tsv"
                               else (csv_delimiter(), csv_header_start(), csv_line_end()))
            for k, (name, value) in enumerate(cols):
                steps += ([sep] if k else []) + value
            self.header = start + sep.join(escape(name) for name in names) + end if header else ""
        steps.append(end if fmt == "csv" else "\n")
        literals: list[bytes] = []
        template: list[int] = []
        for st in steps:
            if isinstance(st, str):
                template += [_k.OP_LITERAL, len(literals)]
                literals.append(st.encode())
            else:
                template += list(st)
        self.template = np.array(template, np.int64)
        self.lit_ptr = np.concatenate([[0], np.cumsum([len(b) for b in literals])]).astype(np.int64)
        self.lit_bytes = np.frombuffer(b"".join(literals), np.uint8)

    def render(self, chunk: PairChunk, doc_size: np.ndarray) -> bytes:
        if self.estimated:
            scale = 10 ** self.decimals
            num = np.floor(chunk.estimate * scale).astype(np.int64)
            den = np.full(len(chunk), scale, np.int64)
        else:
            num, den = self.measure.ratio(chunk.overlap.astype(np.int64), chunk.left_size.astype(np.int64),
                                          chunk.right_size.astype(np.int64), self.decimals)
        with kernels_for(BYTES_PER_PAIR * len(chunk)):
            buf = _k.format_lines(self.template, self.lit_ptr, self.lit_bytes, self.field_ptr, self.field_bytes,
                                  self.n_docs, self.decimals, chunk.left, chunk.right, chunk.overlap, doc_size,
                                  num, den)
        return buf.tobytes()

    def write(self, pairs: Pairs, out: BinaryIO, progress: Callable[..., None] | None = None) -> int:
        """Write every pair to the binary stream ``out``; return the number written. ``progress(stage,
        done, total, detail)`` is told the pairs written after each chunk. Pairs of another measure than the
        writer's, or kept on their MinHash estimate by a writer of similarities (or the reverse), are refused:
        their numbers would be another measure's, or garbage."""
        if pairs.estimated != self.estimated:
            raise UsageError("these pairs were kept on their MinHash estimate; write them with {{estimated=True}}"
                             if pairs.estimated else "these pairs were verified; write them without "
                             "{{estimated=True}}", param="estimated")
        if pairs.measure is not None and pairs.measure.name != self.measure.name:
            raise UsageError(f"these pairs were joined at {pairs.measure.name}, not {self.measure.name}; write "
                             f"them with {{{{measure={pairs.measure.name}}}}}", param="measure")
        n_docs = len(pairs.sets.doc_size)
        if self.n_docs != n_docs:  # the kernel reads a document's id and columns unchecked
            raise UsageError(f"the writer has {self.n_docs:,} ids for pairs of {n_docs:,} documents; give one id "
                             "a document (res.ids, which holds both sides of an R–S join, the left first)",
                             param="ids")
        if self.header:
            out.write(utf8(self.header))
        n = 0
        for chunk in pairs.chunks(WRITE_CHUNK):
            out.write(self.render(chunk, pairs.sets.doc_size))
            n += len(chunk)
            if progress is not None:
                progress("write", n, len(pairs), f"{n:,} pairs")
        return n
