"""A drop-in for SetSimilaritySearch 1.0: ``all_pairs`` and ``SearchIndex`` with its signatures and answers.

``from allpairs.compat import all_pairs, SearchIndex`` in place of
``from SetSimilaritySearch import all_pairs, SearchIndex``: the same argument
names and defaults, the same return shapes, the same pairs and the same
similarity values (bit for bit), computed by allpairs' compiled index.

What SetSimilaritySearch 1.0.1 does, and so what this module does:

- ``similarity_func_name``: ``jaccard`` |A∩B|/|A∪B|, ``cosine`` |A∩B|/√(|A||B|),
  ``containment`` |Q∩X|/|Q| (the share of the *query* found in the indexed
  set; ``SearchIndex`` only: ``all_pairs`` needs a symmetric measure) and
  ``containment_min`` |A∩B|/max(|A|, |B|).
- A pair is reported when the two sets share at least one element and the
  similarity, computed in floating point exactly as SetSimilaritySearch
  computes it, is ``>= similarity_threshold``. So at threshold 0 every pair
  sharing an element is reported (not every pair), and two empty sets never
  pair. Candidates come from an exact integer join at a threshold just below
  the given one, then SetSimilaritySearch's own float test decides.
- ``similarity_threshold`` outside [0, 1], an unknown measure, or ``sets``
  that is not a non-empty list raise ``ValueError`` (here
  :class:`allpairs.UsageError`, a subclass); ``all_pairs`` with
  ``containment`` raises it too.
- ``all_pairs`` yields ``(x, y, similarity)`` with ``x > y`` (indices into
  ``sets``), each pair once, identical sets included; here sorted by ``x``
  then ``y`` (SetSimilaritySearch's order depends on its internals).
- ``SearchIndex(sets, ...).query(s)`` returns ``[(index, similarity)]``;
  elements of ``s`` the index has never seen count in ``|s|`` and match
  nothing. Here sorted by index (SetSimilaritySearch: set iteration order).
- Elements are compared as Python compares them (``==`` and ``hash``, so
  ``1`` and ``1.0`` are one element), as in SetSimilaritySearch. Both
  libraries ask for sets without repeated elements; given repeats,
  SetSimilaritySearch's results are undefined and here each set is taken as
  the set of its elements.
"""
from __future__ import annotations

import math
from fractions import Fraction
from typing import Hashable, Iterable, Iterator

import numpy as np

from ._numba import resolve_jobs
from .errors import UsageError
from .index.search import TOKENS, Ranked, Rule, SearchIndex as _Index
from .order import order_sets

__all__ = ["SearchIndex", "all_pairs"]

_FUNCS = ("jaccard", "cosine", "containment", "containment_min")
_SYMMETRIC = ("jaccard", "cosine", "containment_min")
#: Candidates are joined exactly at ``floor(t * 2**20 - 1) / 2**20``: below any
#: similarity whose float value reaches ``t`` (floats err by ~2**-52 here).
_GUARD_BITS = 20


def _check(sets, func: str, threshold, *, symmetric: bool = False) -> Rule:
    if not isinstance(sets, list) or len(sets) == 0:
        raise UsageError("Input parameter sets must be a non-empty list.")
    if func not in _FUNCS:
        raise UsageError(f"Similarity function {func} is not supported.")
    if not 0 <= threshold <= 1.0:  # NaN fails too
        raise UsageError("Similarity threshold must be in the range [0, 1].")
    if symmetric and func not in _SYMMETRIC:
        raise UsageError(f"The similarity function must be symmetric ({', '.join(_SYMMETRIC)})")
    scale = 1 << _GUARD_BITS
    p = max(0, math.floor(Fraction(float(threshold)) * scale) - 1)
    return Rule(func, p, scale)


def _similarity(func: str, overlap: np.ndarray, size_x: np.ndarray, size_y: np.ndarray) -> np.ndarray:
    """The similarity as SetSimilaritySearch computes it, in float64 (IEEE: the same bits as its Python floats)."""
    i = overlap.astype(np.float64)
    if func == "jaccard":
        return i / (size_x + size_y - overlap).astype(np.float64)
    if func == "cosine":
        return i / np.sqrt((size_x.astype(np.int64) * size_y).astype(np.float64))
    if func == "containment":
        return i / size_x.astype(np.float64)
    return i / np.maximum(size_x, size_y).astype(np.float64)


class _Elements:
    """Python elements -> dense ids, by ``==``/``hash`` as a dict compares them."""

    def __init__(self) -> None:
        self.ids: dict[Hashable, int] = {}

    def encode(self, sets: Iterable[Iterable]) -> tuple[np.ndarray, np.ndarray]:
        """CSR (indptr int64, ids uint64) of the distinct elements of each set, new elements numbered."""
        ids = self.ids
        flat: list[int] = []
        sizes: list[int] = []
        for s in sets:
            before = len(flat)
            flat.extend(ids.setdefault(e, len(ids)) for e in set(s))
            sizes.append(len(flat) - before)
        indptr = np.zeros(len(sizes) + 1, np.int64)
        np.cumsum(sizes, out=indptr[1:])
        return indptr, np.asarray(flat, np.uint64)


def _index(sets: list, rule: Rule, elements: _Elements) -> tuple[_Index, np.ndarray]:
    """The compiled index over ``sets`` (empty sets left out), and every set's size."""
    indptr, keys = elements.encode(sets)
    ordered = order_sets(indptr, keys)
    index = _Index.empty(rule, keys=ordered.keys, label=TOKENS, indptr=ordered.indptr, tokens=ordered.tokens,
                         set_doc_ptr=ordered.group_indptr, set_docs=ordered.group_docs)
    return index, np.diff(indptr)


class SearchIndex:
    """Set similarity search by prefix and position filtering (SetSimilaritySearch 1.0's interface).

    Parameters
    ----------
    sets : list
        A non-empty list of iterables of hashable elements.
    similarity_func_name : str
        ``"jaccard"``, ``"cosine"``, ``"containment"`` or ``"containment_min"``.
    similarity_threshold : float
        In [0, 1]; :meth:`query` returns sets whose similarity is at least this.
    """

    def __init__(self, sets, similarity_func_name: str = "jaccard", similarity_threshold: float = 0.5):
        self._rule = _check(sets, similarity_func_name, similarity_threshold)
        self.similarity_func_name = similarity_func_name
        self.similarity_threshold = similarity_threshold
        self._elements = _Elements()
        self._index, self._sizes = _index(sets, self._rule, self._elements)

    def query(self, s) -> list[tuple[int, float]]:
        """Sets similar to ``s``: ``[(index in sets, similarity)]``, sorted by index.

        ``s`` is containment's left side: ``containment`` is |s ∩ X| / |s|.
        """
        known = self._elements.ids
        elements = set(s)
        keys = np.asarray([known[e] for e in elements if e in known], np.uint64)
        ranked = self._index._rank(np.array([0, len(keys)], np.int64), keys)
        ranked = Ranked(ranked.indptr, ranked.tokens, np.array([len(elements) - len(keys)], np.int32))
        _, sets, overlap = self._index._query_ranked(ranked, self._rule)
        m = self._index._matches(ranked, np.zeros(len(sets), np.int64), sets, overlap, [], self._rule)
        sim = _similarity(self.similarity_func_name, m.overlap, m.query_size, m.indexed_size)
        keep = sim >= self.similarity_threshold
        return list(zip(m.indexed[keep].tolist(), sim[keep].tolist()))


def all_pairs(sets, similarity_func_name: str = "jaccard",
              similarity_threshold: float = 0.5) -> Iterator[tuple[int, int, float]]:
    """Every pair of sets with similarity >= threshold, as ``(x, y, similarity)`` with ``x > y``.

    SetSimilaritySearch 1.0's ``all_pairs``: the same arguments, pairs and
    similarity values; only symmetric measures (``jaccard``, ``cosine``,
    ``containment_min``). A generator, as there: arguments are checked when
    the first pair is asked for.
    """
    rule = _check(sets, similarity_func_name, similarity_threshold, symmetric=True)
    index, _ = _index(sets, rule, _Elements())
    yield from _pairs(index, rule, similarity_func_name, similarity_threshold)


def _pairs(index: _Index, rule: Rule, func: str, threshold: float) -> Iterator[tuple[int, int, float]]:
    # Each distinct set asks the earlier ones (limit = its own number): every pair of distinct sets once.
    indptr, tokens = index.indptr.array, index.tokens.array
    m = index.num_sets
    ranked = Ranked(indptr, tokens, np.zeros(m, np.int32))
    qs, ys, overlap = index._query_ranked(ranked, rule, jobs=resolve_jobs(None), limit=np.arange(m, dtype=np.int32))
    # Identical sets (one group) pair with each other at overlap = size.
    gptr, gdocs = index.set_doc_ptr.array, index.set_docs.array
    group = np.diff(gptr)
    multi = np.flatnonzero(group > 1)
    pair_a = [qs]
    pair_b = [ys]
    pair_o = [overlap]
    for s in multi.tolist():  # few; expanded below like the others
        pair_a.append(np.array([s], np.int64))
        pair_b.append(np.array([s], np.int64))
        pair_o.append(np.array([indptr[s + 1] - indptr[s]], np.int64))
    a = np.concatenate(pair_a).astype(np.int64)
    b = np.concatenate(pair_b).astype(np.int64)
    o = np.concatenate(pair_o).astype(np.int64)
    sizes = np.diff(indptr)
    sim = _similarity(func, o, sizes[a], sizes[b])
    keep = sim >= threshold
    a, b, sim = a[keep], b[keep], sim[keep]
    # Pairs of sets held by one document each (most of them) map directly; the others expand their groups.
    single = (group[a] == 1) & (group[b] == 1) & (a != b)
    da, db = gdocs[gptr[a[single]]], gdocs[gptr[b[single]]]
    xs, ys_, ss = [np.maximum(da, db)], [np.minimum(da, db)], [sim[single]]
    for sa, sb, v in zip(a[~single].tolist(), b[~single].tolist(), sim[~single].tolist()):
        da = gdocs[gptr[sa]:gptr[sa + 1]]
        if sa == sb:
            x, y = np.triu_indices(len(da), 1)
            xs.append(da[y])
            ys_.append(da[x])
        else:
            db = gdocs[gptr[sb]:gptr[sb + 1]]
            x = np.repeat(da, len(db))
            y = np.tile(db, len(da))
            xs.append(np.maximum(x, y))
            ys_.append(np.minimum(x, y))
        ss.append(np.full(len(xs[-1]), v))
    x, y, v = np.concatenate(xs), np.concatenate(ys_), np.concatenate(ss)
    order = np.lexsort((y, x))
    return zip(x[order].tolist(), y[order].tolist(), v[order].tolist())
