"""Compiled kernels of the Spark engine: a token group's sets in its task's order, the first token two sets share.

Vernica, Carey, Li, "Efficient parallel set-similarity joins using MapReduce",
SIGMOD 2010: a pair routed to the groups of several shared prefix tokens is
emitted only by the group of the first (rarest) one, so no global distinct is needed.

Assumes clean input: ranks strictly increasing within each set.
"""
import numpy as np

from ..._kernels.jit import kernel
from ...exact._kernel import lower_bound


@kernel
def group_tokens(r_ptr, ranks, key, div, n_single, task, group, groups, hot, span, n_live, n_other, index_len,
                 probe_len, start, tokens):
    """Write each row's tokens in its token group's order from ``tokens[start[row]]``; return its limits.

    A row's *live* ranks (``rank % groups == group[row]``, not in the sorted
    ``hot``) come first, as ``task[row] * span + key // div``; then its other
    ranks as ``n_live + key``; then its own (``n_single[row]``) tokens,
    numbered on from ``n_live + n_other`` (``key`` is the rank, or a dense
    renumbering of it, per entry of ``ranks``). Returns (index_limit,
    probe_limit), int64 per row: its live ranks within its first
    ``index_len[row]`` / ``probe_len[row]`` positions of the global order, where
    its own tokens come first. Assumes ``key < n_other``, ids that fit int32.
    """
    n = r_ptr.shape[0] - 1
    index_limit = np.zeros(n, np.int64)
    probe_limit = np.zeros(n, np.int64)
    own = n_live + n_other
    n_hot = hot.shape[0]
    for r in range(n):
        k = start[r]
        for live in (True, False):
            for e in range(r_ptr[r], r_ptr[r + 1]):
                w = ranks[e]
                h = lower_bound(hot, 0, n_hot, w)
                if (w % groups == group[r] and (h == n_hot or hot[h] != w)) != live:
                    continue
                if live:
                    tokens[k] = task[r] * span + key[e] // div
                    at = n_single[r] + e - r_ptr[r]
                    index_limit[r] += at < index_len[r]
                    probe_limit[r] += at < probe_len[r]
                else:
                    tokens[k] = n_live + key[e]
                k += 1
        for _ in range(n_single[r]):
            tokens[k] = own
            own += 1
            k += 1
    return index_limit, probe_limit


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
