"""Results in ranked order: the K best pairs (``--top``) and each document's K nearest (``--neighbors``).

Both are :class:`~allpairs.pairs.result.Pairs` to the writers and to
``to_pandas``: they give :class:`~allpairs.pairs.result.PairChunk` runs, here in
their own order rather than sorted by (left, right). The distinct-set pairs
come from :mod:`allpairs.exact.topk`; documents are expanded here.
"""
from __future__ import annotations

from typing import Iterator

import numpy as np

from ..exact.prefix import SetPairs
from ..exact.topk import NeighborLists, TopSets, exact_ranks
from ..measures import Measure
from ..order import OrderedSets
from .result import PairChunk, Pairs


class ListedPairs(Pairs):
    """Pairs in an order of their own, read as chunks; a self-join of symmetric measures only."""

    def __init__(self, sets: OrderedSets, count: int, set_pairs: int):
        self.sets = sets
        self.n_left = None
        self.set_estimate = None
        self.directed = False
        self._count = count
        self._set_pairs = set_pairs
        self._index = None
        self._cached = None

    @property
    def num_set_pairs(self) -> int:
        return self._set_pairs

    # Pairs.chunks and Pairs.__getitem__ read the pairs through these two.
    def _ranges(self, max_pairs: int) -> Iterator[tuple[int, int, int]]:
        """Runs [lo, hi) of this result's units (pairs, or documents) of about ``max_pairs`` pairs."""
        raise NotImplementedError

    def _expand(self, lo: int, hi: int, cap: int) -> PairChunk | None:
        raise NotImplementedError


class RankedPairs(ListedPairs):
    """The K best document pairs, best first, ties by (left, right) in input order (left < right)."""

    def __init__(self, sets: OrderedSets, chunk: PairChunk, set_pairs: int):
        super().__init__(sets, len(chunk), set_pairs)
        self.chunk = chunk

    def _ranges(self, max_pairs: int) -> Iterator[tuple[int, int, int]]:
        for lo in range(0, len(self.chunk), max_pairs):
            hi = min(lo + max_pairs, len(self.chunk))
            yield lo, hi, hi - lo

    def _expand(self, lo: int, hi: int, cap: int) -> PairChunk | None:
        c = self.chunk
        return PairChunk(c.left[lo:hi], c.right[lo:hi], c.overlap[lo:hi], c.left_size[lo:hi], c.right_size[lo:hi])


def _first_pairs(sets: OrderedSets, found: SetPairs, identical: bool, limit: int | None) -> list[PairChunk]:
    """The document pairs of ``found`` (and of identical documents when ``identical``) in (left, right)
    order, only the first ``limit`` when given."""
    if limit == 0:
        return []
    pairs = Pairs(sets, found.left, found.right, found.overlap, group_ok=np.full(sets.num_sets, identical))
    out, n = [], 0
    for c in pairs.chunks(max_pairs=1 << 16 if limit is None else max(limit, 1)):
        out.append(c)
        n += len(c)
        if limit is not None and n >= limit:
            break
    return out


def ranked_pairs(sets: OrderedSets, top: TopSets, measure: Measure) -> RankedPairs:
    """The K best document pairs from :func:`allpairs.exact.topk.top_set_pairs`, in order."""
    parts = _first_pairs(sets, top.strict, top.identical_strict, None)
    ties = _first_pairs(sets, top.tie, top.identical_tie, top.need)
    if ties:
        c = PairChunk(*(np.concatenate([getattr(t, f) for t in ties])[:top.need]
                        for f in ("left", "right", "overlap", "left_size", "right_size")))
        parts.append(c)
    fields = ("left", "right", "overlap", "left_size", "right_size")
    cols = [np.concatenate([getattr(p, f) for p in parts]) if parts else np.zeros(0, np.int32) for f in fields]
    ranks = exact_ranks(measure, cols[2], cols[3], cols[4])
    order = np.lexsort((cols[1], cols[0], -ranks))
    return RankedPairs(sets, PairChunk(*(c[order].astype(np.int32) for c in cols)), top.found)


class NeighborPairs(ListedPairs):
    """For each document in input order, its K best partners: (document, partner) pairs, best first, ties
    by the partner's position. Expanded from the lists of distinct sets a run of documents at a time."""

    def __init__(self, sets: OrderedSets, lists: NeighborLists):
        self.lists = lists
        doc_set = sets.doc_set
        x = np.maximum(doc_set, 0)
        length = np.where(doc_set >= 0, np.diff(lists.ptr)[x], 0)
        # A document is in its set's list when it is among the first K + 1 of its identical documents.
        place = np.empty(len(sets.group_docs), np.int64)
        group = np.diff(sets.group_indptr)
        place[:] = np.arange(len(sets.group_docs)) - np.repeat(sets.group_indptr[:-1], group)
        in_list = np.zeros(sets.num_docs, bool)
        in_list[sets.group_docs] = place < lists.k + 1
        self.per_doc = np.minimum(length - (in_list & (doc_set >= 0)), lists.k).astype(np.int64)
        super().__init__(sets, int(self.per_doc.sum()), lists.set_pairs)

    def _doc_bound(self) -> np.ndarray:
        return self.per_doc

    _ranges = Pairs._ranges

    def _expand(self, lo: int, hi: int, cap: int) -> PairChunk | None:
        if not cap:
            return None
        s, nb = self.sets, self.lists
        docs = np.arange(lo, hi, dtype=np.int64)
        docs = docs[s.doc_set[lo:hi] >= 0]
        x = s.doc_set[docs]
        length = nb.ptr[x + 1] - nb.ptr[x]
        d = np.repeat(docs, length)
        start = np.repeat(nb.ptr[x], length)
        first = np.repeat(np.cumsum(length) - length, length)
        idx = start + np.arange(len(d)) - first
        partner = nb.doc[idx]
        keep = partner != d
        d, idx, partner = d[keep], idx[keep], partner[keep]
        run = np.arange(len(d)) - np.searchsorted(d, d, side="left")
        keep = run < nb.k
        d, idx, partner = d[keep].astype(np.int32), idx[keep], partner[keep]
        return PairChunk(d, partner, nb.overlap[idx].astype(np.int32), s.doc_size[d], s.doc_size[partner])
