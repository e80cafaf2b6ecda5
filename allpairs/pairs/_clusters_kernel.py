"""Compiled kernel of duplicate clusters: connected components by union–find.

Kernel assumes clean input: set indices in [0, m).
"""
import numpy as np

from .._kernels.jit import kernel


@kernel
def _find(parent, v):
    while parent[v] != v:
        parent[v] = parent[parent[v]]  # path halving
        v = parent[v]
    return v


@kernel
def components(m, left, right):
    """Each set's component, named by its smallest member (int32 (m,)), joining ``left[k]`` and ``right[k]``.

    Tarjan, "Efficiency of a good but not linear set union algorithm", JACM 1975.
    The smaller root always becomes the parent, so the names do not depend on
    the order of the pairs.
    """
    parent = np.arange(m).astype(np.int32)
    for k in range(left.shape[0]):
        a = _find(parent, left[k])
        b = _find(parent, right[k])
        if a < b:
            parent[b] = a
        elif b < a:
            parent[a] = b
    for s in range(m):
        parent[s] = _find(parent, s)
    return parent
