"""Compiled kernel of the Spark exact join: is a pair's first shared token the group's token?

Vernica, Carey, Li, "Efficient parallel set-similarity joins using MapReduce",
SIGMOD 2010: a pair routed to the groups of several shared prefix tokens is
emitted only by the group of the first (rarest) one, so no global distinct is needed.

Assumes clean input: ranks strictly increasing within each set; token ``g[p]``
is in both sets of pair ``p``.
"""
import numpy as np

from ..._numba import kernel


@kernel
def first_shared_is(indptr, ranks, a, b, g):
    """``keep[p]``: the smallest rank common to sets ``a[p]`` and ``b[p]`` is ``g[p]`` (bool, per pair)."""
    m = a.shape[0]
    keep = np.zeros(m, np.bool_)
    for p in range(m):
        i = indptr[a[p]]
        ie = indptr[a[p] + 1]
        j = indptr[b[p]]
        je = indptr[b[p] + 1]
        while i < ie and j < je:
            x = ranks[i]
            y = ranks[j]
            if x == y:
                keep[p] = x == g[p]
                break
            if x < y:
                i += 1
            else:
                j += 1
    return keep
