"""Stage 5: exact verification of candidate pairs, shared by the exact and LSH paths and the index, and
the bitmap filter before it, shared by the exact join's probe and the index's.

Verification compares integer overlaps with the integer required overlap of
:mod:`allpairs.measures`, never a float similarity with ``t``.
"""
from __future__ import annotations

import numpy as np

from ._kernel import verify as _verify
from ..measures import Measure, Threshold, get_measure, MEASURES


#: The bitmap filter is used where the median set has at most this many tokens. A set of 128 random tokens
#: leaves a bit of its 64-bit signature unset with probability (63/64)^128 = 13 %: two long sets' signatures
#: then differ in few bits and bound nothing, while the signatures cost a pass over every token and a
#: random read per candidate (the Go tree's sets, median 1,024 tokens: a third of the join stage at t = 0.9).
BITMAP_MEDIAN_MAX = 128


def bitmaps_prune(sizes: np.ndarray, ordered: bool = False) -> bool:
    """Whether the 64-bit signatures (:func:`allpairs.verify._kernel.bitmaps`) are worth making for sets of
    these sizes: the exact join and the index decide by this one rule. ``ordered``: the sizes are sorted
    (the exact join's), so their median is read, not searched for."""
    if not len(sizes):
        return False
    if ordered:
        n = len(sizes)
        return (float(sizes[(n - 1) // 2]) + float(sizes[n // 2])) / 2 <= BITMAP_MEDIAN_MAX
    return float(np.median(sizes)) <= BITMAP_MEDIAN_MAX


def verify_candidates(indptr, tokens, x, y, threshold: Threshold, counted=None, last_i=None, last_j=None,
                      measure: str | Measure = "jaccard"):
    """Keep the candidates that reach the threshold; return (x, y, overlap) of those.

    Parameters
    ----------
    indptr : int64 (m + 1,), tokens : int32 (ranks) or uint64 (keys)
        The distinct sets, tokens strictly increasing within each set.
    x, y : int32 (k,)
        Candidate pairs of set indices.
    threshold : Threshold
        ``p/q`` (for overlap, ``k/1``).
    counted, last_i, last_j : int32 (k,), optional
        Overlap already found in the prefixes and where it stopped (from the
        exact path); omitted, the merge starts at the beginning of both sets.
    measure : name or row of :data:`allpairs.measures.MEASURES`
        Decides α(|x|, |y|); for containment give the symmetric row that keeps
        either direction (``containment_either``) and sort the directions out after.
    """
    m = get_measure(measure, tuple(MEASURES))
    x = np.ascontiguousarray(x, dtype=np.int32)
    y = np.ascontiguousarray(y, dtype=np.int32)
    if counted is None:
        counted = np.zeros(len(x), np.int32)
        last_i = np.full(len(x), -1, np.int32)
        last_j = np.full(len(x), -1, np.int32)
    overlap = _verify(indptr, tokens, x, y, counted, last_i, last_j, m.code, threshold.p, threshold.q)
    keep = overlap >= 0
    return x[keep], y[keep], overlap[keep]
