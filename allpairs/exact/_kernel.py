"""Compiled kernels of the exact join: prefix index and PPJoin probing.

Bayardo, Ma, Srikant, "Scaling up all pairs similarity search", WWW 2007
(AllPairs: indexing prefix, size bound); Xiao, Wang, Lin, Yu, "Efficient
similarity joins for near duplicate detection", WWW 2008 (PPJoin: positional
bound).

Kernels assume clean input: sets sorted by size, tokens strictly increasing
within each set, the threshold as integers ``p/q`` with ``0 < p <= q``.
"""
import numpy as np

from .._numba import kernel


@kernel
def _ceil_div(a, b):
    return -((-a) // b)


@kernel
def build_index(indptr, tokens, num_tokens, p, q):
    """Inverted index of every set's indexing prefix ``|y| - ⌈2t/(1+t)|y|⌉ + 1``.

    Returns CSR over tokens: ``list_ptr`` (int64, num_tokens + 1), and per posting
    the set (int32) and the token's position in it (int32). Sets enter in order,
    so each list is sorted by set, hence by size.
    """
    m = indptr.shape[0] - 1
    counts = np.zeros(num_tokens + 1, np.int64)
    for s in range(m):
        size = indptr[s + 1] - indptr[s]
        plen = size - _ceil_div(2 * p * size, p + q) + 1
        for k in range(plen):
            counts[tokens[indptr[s] + k] + 1] += 1
    list_ptr = np.cumsum(counts)
    fill = list_ptr[:-1].copy()
    post_set = np.empty(list_ptr[-1], np.int32)
    post_pos = np.empty(list_ptr[-1], np.int32)
    for s in range(m):
        size = indptr[s + 1] - indptr[s]
        plen = size - _ceil_div(2 * p * size, p + q) + 1
        for k in range(plen):
            w = tokens[indptr[s] + k]
            post_set[fill[w]] = s
            post_pos[fill[w]] = k
            fill[w] += 1
    return list_ptr, post_set, post_pos


@kernel
def first_of_size(indptr):
    """``first[s]``: index of the first set of size >= s, for s in 0..max size + 1."""
    m = indptr.shape[0] - 1
    max_size = 0
    if m > 0:
        max_size = indptr[m] - indptr[m - 1]
    first = np.empty(max_size + 2, np.int64)
    s = 0
    for i in range(m):
        size = indptr[i + 1] - indptr[i]
        while s <= size:
            first[s] = i
            s += 1
    while s <= max_size + 1:
        first[s] = m
        s += 1
    return first


@kernel
def probe_cost(indptr, tokens, list_ptr, p, q):
    """Posting entries each set's probing prefix would scan (an upper bound on its work)."""
    m = indptr.shape[0] - 1
    cost = np.empty(m, np.int64)
    for x in range(m):
        size = indptr[x + 1] - indptr[x]
        plen = size - _ceil_div(p * size, q) + 1
        c = plen
        for i in range(plen):
            w = tokens[indptr[x] + i]
            c += list_ptr[w + 1] - list_ptr[w]
        cost[x] = c
    return cost


@kernel
def _grow(a, n):
    b = np.empty(max(2 * a.shape[0], n), a.dtype)
    b[: a.shape[0]] = a
    return b


@kernel
def probe(indptr, tokens, list_ptr, post_set, post_pos, first, p, q, lo, hi):
    """Candidates for probe sets ``lo <= x < hi`` against the smaller sets ``y < x``.

    Each candidate comes with the overlap counted so far in the prefixes and the
    positions of its last prefix match in x and y, so that verification resumes
    the merge after them. A candidate is dropped as soon as the positional bound
    ``A + 1 + min(|x| - i - 1, |y| - j - 1)`` falls below the required overlap.

    Returns (x, y, overlap, i, j), each int32.
    """
    m = indptr.shape[0] - 1
    count = np.zeros(m, np.int32)  # A[y]; -1 once y is pruned for this x
    last_i = np.empty(m, np.int32)
    last_j = np.empty(m, np.int32)
    touched = np.empty(m, np.int32)
    cap = 1024
    out_x = np.empty(cap, np.int32)
    out_y = np.empty(cap, np.int32)
    out_a = np.empty(cap, np.int32)
    out_i = np.empty(cap, np.int32)
    out_j = np.empty(cap, np.int32)
    n_out = 0
    for x in range(lo, hi):
        xs = indptr[x]
        size_x = indptr[x + 1] - xs
        min_size = _ceil_div(p * size_x, q)
        plen = size_x - min_size + 1
        start_set = first[min_size]
        n_touched = 0
        for i in range(plen):
            w = tokens[xs + i]
            # Size bound: skip the sets smaller than t|x| by binary search.
            a = list_ptr[w]
            b = list_ptr[w + 1]
            while a < b:
                mid = (a + b) >> 1
                if post_set[mid] < start_set:
                    a = mid + 1
                else:
                    b = mid
            for k in range(a, list_ptr[w + 1]):
                y = post_set[k]
                if y >= x:
                    break
                c = count[y]
                if c < 0:
                    continue
                if c == 0:
                    touched[n_touched] = y
                    n_touched += 1
                size_y = indptr[y + 1] - indptr[y]
                alpha = _ceil_div(p * (size_x + size_y), p + q)
                j = post_pos[k]
                rest = min(size_x - i - 1, size_y - j - 1)
                if c + 1 + rest >= alpha:
                    count[y] = c + 1
                    last_i[y] = i
                    last_j[y] = j
                else:
                    count[y] = -1
        if n_out + n_touched > out_x.shape[0]:
            need = n_out + n_touched
            out_x = _grow(out_x, need)
            out_y = _grow(out_y, need)
            out_a = _grow(out_a, need)
            out_i = _grow(out_i, need)
            out_j = _grow(out_j, need)
        for t in range(n_touched):
            y = touched[t]
            if count[y] > 0:
                out_x[n_out] = x
                out_y[n_out] = y
                out_a[n_out] = count[y]
                out_i[n_out] = last_i[y]
                out_j[n_out] = last_j[y]
                n_out += 1
            count[y] = 0
    return out_x[:n_out], out_y[:n_out], out_a[:n_out], out_i[:n_out], out_j[:n_out]
