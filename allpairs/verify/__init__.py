"""Stage 5: exact verification of candidate pairs, shared by the exact and LSH paths.

Verification compares integer overlaps with the integer required overlap of
:mod:`allpairs.measures`, never a float similarity with ``t``.
"""
from __future__ import annotations

import numpy as np

from ._kernel import verify as _verify
from ..measures import Measure, Threshold, get_measure, MEASURES


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
