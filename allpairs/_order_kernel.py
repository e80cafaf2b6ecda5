"""Compiled kernels for the global order: sorting and grouping sets held as CSR.

Kernels assume clean input: tokens strictly increasing within each set.
"""
import numpy as np

from ._numba import kernel


@kernel
def _less(indptr, tokens, a, b):
    """Set ``a`` before set ``b``: smaller first, then lexicographically, then by index."""
    sa = indptr[a + 1] - indptr[a]
    sb = indptr[b + 1] - indptr[b]
    if sa != sb:
        return sa < sb
    oa = indptr[a]
    ob = indptr[b]
    for k in range(sa):
        ta = tokens[oa + k]
        tb = tokens[ob + k]
        if ta != tb:
            return ta < tb
    return a < b


@kernel
def argsort_sets(indptr, tokens):
    """Permutation of the sets by (size, tokens lexicographically, input index).

    Bottom-up merge sort; the index tie-break makes it a total order, so the
    result does not depend on the sort's stability.
    """
    n = indptr.shape[0] - 1
    src = np.arange(n).astype(np.int64)
    dst = np.empty(n, np.int64)
    width = 1
    while width < n:
        for lo in range(0, n, 2 * width):
            mid = min(lo + width, n)
            hi = min(lo + 2 * width, n)
            i = lo
            j = mid
            k = lo
            while i < mid and j < hi:
                if _less(indptr, tokens, src[j], src[i]):
                    dst[k] = src[j]
                    j += 1
                else:
                    dst[k] = src[i]
                    i += 1
                k += 1
            while i < mid:
                dst[k] = src[i]
                i += 1
                k += 1
            while j < hi:
                dst[k] = src[j]
                j += 1
                k += 1
        src, dst = dst, src
        width *= 2
    return src


@kernel
def group_starts(indptr, tokens, order):
    """Boolean mask over ``order``: True where a set differs from the one before it."""
    n = order.shape[0]
    new = np.ones(n, np.bool_)
    for k in range(1, n):
        a = order[k - 1]
        b = order[k]
        sa = indptr[a + 1] - indptr[a]
        if sa != indptr[b + 1] - indptr[b]:
            continue
        same = True
        oa = indptr[a]
        ob = indptr[b]
        for t in range(sa):
            if tokens[oa + t] != tokens[ob + t]:
                same = False
                break
        new[k] = not same
    return new


@kernel
def gather_csr(indptr, tokens, rows):
    """The sets ``rows`` (in that order) as a new CSR pair (indptr, tokens)."""
    n = rows.shape[0]
    out_ptr = np.zeros(n + 1, np.int64)
    for k in range(n):
        r = rows[k]
        out_ptr[k + 1] = out_ptr[k] + indptr[r + 1] - indptr[r]
    out = np.empty(out_ptr[n], tokens.dtype)
    for k in range(n):
        r = rows[k]
        o = out_ptr[k]
        for t in range(indptr[r], indptr[r + 1]):
            out[o] = tokens[t]
            o += 1
    return out_ptr, out
