"""The prefix-filter join restricted to some of the distinct sets (for LSH buckets too large to expand).

The chosen sets keep their relative order, so they are still sorted by (size,
tokens) and their tokens still follow the one global order: the join of the
sub-corpus is :func:`allpairs.exact.prefix.prefix_join` unchanged, and only the
set indices are translated back.
"""
from __future__ import annotations

import numpy as np

from ..measures import Threshold
from .prefix import SetPairs, prefix_join


def prefix_join_rows(indptr: np.ndarray, tokens: np.ndarray, num_tokens: int, rows: np.ndarray,
                     threshold: Threshold, *, jobs: int | None = None) -> SetPairs:
    """All pairs among the sets ``rows`` with Jaccard >= threshold, exactly, in indices of the whole corpus.

    Parameters
    ----------
    indptr : int64 (m + 1,), tokens : int32
        Distinct sets as :func:`allpairs.exact.prefix.prefix_join` takes them.
    num_tokens : int
    rows : int (k,)
        Strictly increasing indices of the sets to join among themselves.
    threshold : Threshold
    jobs : int, optional

    Returns
    -------
    SetPairs
        ``left < right`` index the whole corpus.
    """
    rows = np.asarray(rows, dtype=np.int64)
    if rows.ndim != 1 or (rows.size and (rows[0] < 0 or rows[-1] >= len(indptr) - 1 or (np.diff(rows) <= 0).any())):
        raise ValueError("rows must be strictly increasing set indices")
    starts = indptr[rows]
    sizes = indptr[rows + 1] - starts
    sub_indptr = np.zeros(rows.size + 1, np.int64)
    np.cumsum(sizes, out=sub_indptr[1:])
    # Position p of the sub-corpus reads tokens[starts[set] + p - sub_indptr[set]].
    gather = np.arange(sub_indptr[-1], dtype=np.int64) + np.repeat(starts - sub_indptr[:-1], sizes)
    found = prefix_join(sub_indptr, tokens[gather], num_tokens, threshold, jobs=jobs)
    back = rows.astype(np.int32)
    return SetPairs(back[found.left], back[found.right], found.overlap, found.candidates)
