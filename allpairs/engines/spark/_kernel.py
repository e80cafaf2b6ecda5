"""Compiled kernel of the Spark exact join: the first (rarest) token two sets share.

Vernica, Carey, Li, "Efficient parallel set-similarity joins using MapReduce",
SIGMOD 2010: a pair routed to the groups of several shared prefix tokens is
emitted only by the group of the first (rarest) one, so no global distinct is needed.

Assumes clean input: ranks strictly increasing within each set.
"""
import numpy as np

from ..._numba import kernel


@kernel
def first_shared(indptr, ranks, a, b):
    """``first[p]``: the smallest rank common to sets ``a[p]`` and ``b[p]``, -1 if none (int64, per pair)."""
    m = a.shape[0]
    first = np.full(m, -1, np.int64)
    for p in range(m):
        i = indptr[a[p]]
        ie = indptr[a[p] + 1]
        j = indptr[b[p]]
        je = indptr[b[p] + 1]
        while i < ie and j < je:
            x = ranks[i]
            y = ranks[j]
            if x == y:
                first[p] = x
                break
            if x < y:
                i += 1
            else:
                j += 1
    return first


@kernel
def sorted_segments(indptr, values):
    """Each row's values sorted, repeats dropped: (indptr int64 (n + 1,), values of the same dtype).

    Assumes clean input: ``indptr`` non-decreasing from 0 to ``len(values)``. One
    sort per row, where sorting (row, value) pairs as a whole costs a sort of everything.
    """
    n = indptr.shape[0] - 1
    out = np.empty_like(values)
    ptr = np.zeros(n + 1, np.int64)
    k = 0
    for d in range(n):
        seg = np.sort(values[indptr[d]:indptr[d + 1]])
        for i in range(seg.shape[0]):
            if i == 0 or seg[i] != seg[i - 1]:
                out[k] = seg[i]
                k += 1
        ptr[d + 1] = k
    return ptr, out[:k].copy()
