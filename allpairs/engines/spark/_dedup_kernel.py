"""Compiled kernel of Spark's dedup: the local rule over one task's documents, in input order.

The rule of :func:`allpairs.index.dedup` (the online dedup): a document is
kept unless a kept document earlier in the input reaches the threshold with
it; a removed one is charged to the most similar such document, the earliest
among equals. Given a task's verified pairs, the rule needs no index: each
document's earlier partners are decided before it.

Assumes clean input: documents numbered 0..n-1 in input order, each pair
``left[k] < right[k]``, pairs sorted by ``right``.
"""
import numpy as np

from ..._kernels.jit import kernel
from ...index._kernel import more_similar

UNDECIDED = 0
KEPT = 1
REMOVED = 2


@kernel
def decide(n, status, left, right, overlap, left_size, right_size, code):
    """Decide documents 0..n-1 in order; ``status`` (int8, n) holds what is known already (KEPT or REMOVED
    from earlier rounds, else UNDECIDED) and is updated in place.

    Returns, per document, the kept document it duplicates (-1 if none: kept or
    undecided because no pair reaches it) and that pair's overlap (int64 arrays).
    A document given as REMOVED gets the best of its kept partners too.
    """
    dup = np.full(n, -1, np.int64)
    dup_overlap = np.zeros(n, np.int64)
    m = right.shape[0]
    k = 0
    for v in range(n):
        end = k
        while end < m and right[end] == v:
            end += 1
        if status[v] != KEPT:
            best = -1
            for e in range(k, end):
                u = left[e]
                if status[u] != KEPT:
                    continue
                if best < 0:
                    best = e
                    continue
                c = more_similar(code, right_size[e], overlap[e], left_size[e], overlap[best], left_size[best])
                if c > 0 or (c == 0 and u < left[best]):
                    best = e
            if best >= 0:
                status[v] = REMOVED
                dup[v] = left[best]
                dup_overlap[v] = overlap[best]
            elif status[v] == UNDECIDED:
                status[v] = KEPT
        k = end
    return dup, dup_overlap
