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
