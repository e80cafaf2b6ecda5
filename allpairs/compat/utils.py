"""SetSimilaritySearch 1.0.1's ``utils``: its measures, prefix arithmetic and frequency order, under its names.

Programs import from here what they import from ``SetSimilaritySearch.utils``
(its command-line script reads ``_similarity_funcs``). Each function gives
what SetSimilaritySearch's gives for the same arguments, in the same type:
the threshold functions truncate a float product with ``int()``; the
similarities count the overlap as ``numpy.intersect1d(..., assume_unique=True)``
does, so a list that repeats a token counts each repeat as a match
(``len(s1) + len(s2) - |distinct(s1 ∪ s2)|``); ``_cosine`` and the cosine
position filter divide by a numpy square root and return ``numpy.float64``.
"""
from __future__ import annotations

import importlib
import logging
import sys
from collections import defaultdict

import numpy as np


def _debug(message: str, *args) -> None:
    """``logging.debug(message.format(*args))`` on the root logger, as SetSimilaritySearch logs.

    Like ``logging.debug``, it configures the root logger (``basicConfig``)
    when that has no handler yet; the message is only formatted when it is
    emitted. The record names the caller's function (``stacklevel=2``).
    """
    root = logging.root
    if not root.handlers:
        logging.basicConfig()
    if root.isEnabledFor(logging.DEBUG):
        root.debug(message.format(*args), stacklevel=2)


def _jaccard_overlap_threshold_func(x: int, t: float) -> int:
    return int(x * t)


_jaccard_overlap_index_threshold_func = _jaccard_overlap_threshold_func


def _cosine_overlap_threshold_func(x: int, t: float) -> int:
    return int(np.sqrt(x) * t)


_cosine_overlap_index_threshold_func = _cosine_overlap_threshold_func


def _containment_overlap_threshold_func(x: int, t: float) -> int:
    return int(x * t)


def _containment_overlap_index_threshold_func(x: int, t: float) -> int:
    # The query's share decides containment: an indexed set keeps every token in its prefix.
    return 1


def _containment_min_overlap_threshold_func(x: int, t: float) -> int:
    return int(x * t)


def _containment_min_overlap_index_threshold_func(x: int, t: float) -> int:
    return int(x * t)


def _remaining(l1: int, l2: int, p1: int, p2: int) -> float:
    """Tokens left after a match at positions ``p1``, ``p2``: an upper bound of the overlap still to come."""
    return float(min(l1 - p1, l2 - p2))


def _jaccard_position_filter(l1: int, l2: int, p1: int, p2: int, t: float) -> bool:
    return _remaining(l1, l2, p1, p2) / float(max(l1, l2)) >= t


def _cosine_position_filter(l1: int, l2: int, p1: int, p2: int, t: float) -> bool:
    return _remaining(l1, l2, p1, p2) / np.sqrt(max(l1, l2)) >= t


def _containment_position_filter(l1: int, l2: int, p1: int, p2: int, t: float) -> bool:
    return _remaining(l1, l2, p1, p2) / float(l1) >= t


def _containment_min_position_filter(l1: int, l2: int, p1: int, p2: int, t: float) -> bool:
    return _remaining(l1, l2, p1, p2) / float(max(l1, l2)) >= t


def _overlap(s1, s2) -> int:
    """Matches between two sorted token arrays, counted as ``numpy.intersect1d(assume_unique=True)`` counts them."""
    return len(np.intersect1d(s1, s2, assume_unique=True))


def _jaccard(s1, s2, l1: int, l2: int) -> float:
    i = _overlap(s1, s2)
    return float(i) / float(l1 + l2 - i)


def _cosine(s1, s2, l1: int, l2: int):
    return float(_overlap(s1, s2)) / np.sqrt(float(l1 * l2))


def _containment(s1, s2, l1: int, l2: int) -> float:
    return float(_overlap(s1, s2)) / float(l1)


def _containment_min(s1, s2, l1: int, l2: int) -> float:
    return float(_overlap(s1, s2)) / float(max(l1, l2))


_similarity_funcs = {
    "jaccard": _jaccard,
    "cosine": _cosine,
    "containment": _containment,
    "containment_min": _containment_min,
}

_overlap_threshold_funcs = {
    "jaccard": _jaccard_overlap_threshold_func,
    "cosine": _cosine_overlap_threshold_func,
    "containment": _containment_overlap_threshold_func,
    "containment_min": _containment_min_overlap_threshold_func,
}

_overlap_index_threshold_funcs = {
    "jaccard": _jaccard_overlap_index_threshold_func,
    "cosine": _cosine_overlap_index_threshold_func,
    "containment": _containment_overlap_index_threshold_func,
    "containment_min": _containment_min_overlap_index_threshold_func,
}

_position_filter_funcs = {
    "jaccard": _jaccard_position_filter,
    "cosine": _cosine_position_filter,
    "containment": _containment_position_filter,
    "containment_min": _containment_min_position_filter,
}

_symmetric_similarity_funcs = ["jaccard", "cosine", "containment_min"]
_asymmetric_similarity_funcs = ["containment"]


class _Ranked:
    """Sets as ranks in the frequency order, CSR: row ``i`` is ``tokens[indptr[i]:indptr[i + 1]]``, sorted.

    ``tokens`` (int32) keeps a repeated token once per occurrence;
    ``order`` maps each token to its rank (rarest 0), as SetSimilaritySearch's
    ``order`` does.
    """

    __slots__ = ("indptr", "tokens", "order")

    def __init__(self, indptr: np.ndarray, tokens: np.ndarray, order: dict):
        self.indptr, self.tokens, self.order = indptr, tokens, order

    @property
    def num_tokens(self) -> int:
        return len(self.order)

    def arrays(self) -> list:
        """The rows as SetSimilaritySearch holds them: int64 arrays (``numpy.sort`` of a list of ints; an
        empty row float64, as ``numpy.sort([])``)."""
        wide = self.tokens.astype(np.int64)
        bounds = self.indptr.tolist()
        return [wide[a:b] if a < b else np.array([]) for a, b in zip(bounds, bounds[1:])]


def _frequency_order_transform(sets, *, _ranked: bool = False):
    """SetSimilaritySearch's frequency order: ``(sets as sorted int64 arrays of ranks, order)``.

    Ranks count occurrences over all sets (a repeat counts); rarer first, and
    among tokens as frequent, the one first seen *later* first (its
    ``reversed(Counter.most_common())``). Each set is iterated twice, as
    there: an iterator gives its tokens to the counts and is empty after.
    ``_ranked=True`` returns the same as a :class:`_Ranked` instead (no
    array per set).
    """
    _debug("Applying frequency order transform on tokens...")
    first_seen = defaultdict()
    first_seen.default_factory = first_seen.__len__  # a new token's id: the count before it
    number = first_seen.__getitem__
    ids: list[int] = []
    extend = ids.extend
    ends = []
    once = []
    for x, s in enumerate(sets):
        it = iter(s)
        extend(map(number, it))
        ends.append(len(ids))
        if it is s:
            once.append(x)
    ids_arr = np.array(ids, np.int64)
    del ids
    v = len(first_seen)
    counts = np.bincount(ids_arr, minlength=v)
    by_rank = np.lexsort((-np.arange(v), counts))  # rare first; ties: seen later first
    rank = np.empty(v, np.int32)
    rank[by_rank] = np.arange(v, dtype=np.int32)
    indptr = np.zeros(len(ends) + 1, np.int64)
    indptr[1:] = ends
    tokens = rank[ids_arr]
    del ids_arr
    if once:
        keep = np.ones(len(tokens), bool)
        for x in once:
            keep[indptr[x]:indptr[x + 1]] = False
        sizes = np.diff(indptr)
        sizes[once] = 0
        tokens = tokens[keep]
        indptr[1:] = np.cumsum(sizes)
    rows = np.repeat(np.arange(len(ends), dtype=np.int64), np.diff(indptr))
    tokens = (np.sort((rows << 32) | tokens) & 0xFFFFFFFF).astype(np.int32)
    keys = list(first_seen)
    order = dict(zip(map(keys.__getitem__, by_rank.tolist()), range(v)))
    ranked = _Ranked(indptr, tokens, order)
    _debug("Done applying frequency order.")
    if _ranked:
        return ranked
    return ranked.arrays(), order


if __name__ != "allpairs.compat.utils":  # loaded as SetSimilaritySearch.utils (see allpairs.compat): one module
    sys.modules[__name__] = importlib.import_module("allpairs.compat.utils")
