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
def _merge_sort(indptr, tokens, order, lo, hi):
    """Sort ``order[lo:hi]`` (set indices) in place by :func:`_less`: (size, tokens lexicographically, index).

    Bottom-up merge sort; the index tie-break makes it a total order, so the
    result does not depend on the sort's stability.
    """
    n = hi - lo
    src = order[lo:hi].copy()
    dst = np.empty(n, np.int64)
    width = 1
    while width < n:
        for a in range(0, n, 2 * width):
            mid = min(a + width, n)
            b = min(a + 2 * width, n)
            i = a
            j = mid
            k = a
            while i < mid and j < b:
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
            while j < b:
                dst[k] = src[j]
                j += 1
                k += 1
        src, dst = dst, src
        width *= 2
    order[lo:hi] = src


@kernel
def sort_ties(indptr, tokens, order):
    """Finish sorting ``order`` (non-empty sets sorted by size, then first token) by (size, tokens, index).

    Only runs of sets with the same size and first token are left to sort;
    each is merge sorted by :func:`_less`, in place.
    """
    n = order.shape[0]
    a = 0
    while a < n:
        sa = indptr[order[a] + 1] - indptr[order[a]]
        ta = tokens[indptr[order[a]]]
        b = a + 1
        while b < n and indptr[order[b] + 1] - indptr[order[b]] == sa and tokens[indptr[order[b]]] == ta:
            b += 1
        if b - a > 1:
            _merge_sort(indptr, tokens, order, a, b)
        a = b
    return order


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


@kernel
def _slot(k, mask):
    """Home slot of key ``k`` in a table of ``mask + 1`` slots (Fibonacci hashing)."""
    return ((k * np.uint64(0x9E3779B97F4A7C15)) >> np.uint64(20)) & mask


@kernel
def estimate_distinct(keys):
    """HyperLogLog estimate of the number of distinct keys (Flajolet et al. 2007), 2**14 registers.

    Keys are hash values (uniform bits); the estimate is within a few percent,
    enough to size a hash table so that it rarely has to grow.
    """
    b = 14
    m = 1 << b
    reg = np.zeros(m, np.int64)
    for t in range(keys.shape[0]):
        z = keys[t] * np.uint64(0x9E3779B97F4A7C15)  # spread low-entropy keys (e.g. small ints)
        j = np.int64(z >> np.uint64(64 - b))
        w = z << np.uint64(b)
        rank = 1
        while rank <= 64 - b and (w >> np.uint64(63)) == 0:
            w = w << np.uint64(1)
            rank += 1
        if rank > reg[j]:
            reg[j] = rank
    total = 0.0
    zeros = 0
    for j in range(m):
        total += 2.0 ** -reg[j]
        if reg[j] == 0:
            zeros += 1
    est = 0.7213 / (1.0 + 1.079 / m) * m * m / total
    if est <= 2.5 * m and zeros > 0:
        est = m * np.log(m / zeros)  # linear counting for small sets
    return np.int64(est)


@kernel
def distinct_per_doc(indptr, keys, room):
    """Local token ids by an open-addressing hash table, one entry per distinct (document, key).

    Returns the distinct keys in first-seen order (uint64), their document
    frequencies (int64), and each document's distinct local ids as CSR
    (doc_ptr int64, doc_tok int32), in first-seen order within the document.
    The table has room for ``room`` distinct keys (at load factor at most
    0.7); with more, it returns None in place of the keys (ask again with
    more room: :func:`estimate_distinct` sizes it, not the number of keys,
    since a Zipf corpus repeats a few keys a lot).
    """
    n_docs = indptr.shape[0] - 1
    n = keys.shape[0]
    cap = 1024
    while 7 * cap < 10 * room:
        cap *= 2
    mask = np.uint64(cap - 1)
    # Key and id side by side (id + 1, 0 = free): one cache line per probe.
    slots = np.zeros(2 * cap, np.uint64)
    uniq = np.empty(room, np.uint64)
    df = np.zeros(room, np.int64)
    last_doc = np.empty(room, np.int64)
    doc_ptr = np.zeros(n_docs + 1, np.int64)
    doc_tok = np.empty(n, np.int32)
    n_uniq = 0
    n_entry = 0
    for d in range(n_docs):
        for t in range(indptr[d], indptr[d + 1]):
            k = keys[t]
            h = _slot(k, mask)
            while slots[2 * h + 1] != 0 and slots[2 * h] != k:
                h = (h + np.uint64(1)) & mask
            if slots[2 * h + 1] == 0:
                if n_uniq == room:
                    return None, df, doc_ptr, doc_tok
                slots[2 * h] = k
                slots[2 * h + 1] = n_uniq + 1
                uniq[n_uniq] = k
                last_doc[n_uniq] = -1
                n_uniq += 1
            i = np.int64(slots[2 * h + 1]) - 1
            if last_doc[i] != d:
                last_doc[i] = d
                df[i] += 1
                doc_tok[n_entry] = i
                n_entry += 1
        doc_ptr[d + 1] = n_entry
    return uniq[:n_uniq].copy(), df[:n_uniq].copy(), doc_ptr, doc_tok[:n_entry].copy()


@kernel
def stable_order_by_count(by_key, df):
    """``by_key`` (a permutation) stably re-sorted by ascending ``df`` (counting sort)."""
    n = by_key.shape[0]
    top = 0
    for i in range(n):
        if df[i] > top:
            top = df[i]
    start = np.zeros(top + 2, np.int64)
    for i in range(n):
        start[df[i] + 1] += 1
    for c in range(top + 1):
        start[c + 1] += start[c]
    out = np.empty(n, np.int64)
    for i in by_key:
        out[start[df[i]]] = i
        start[df[i]] += 1
    return out


@kernel
def relabel_and_sort(doc_ptr, doc_tok, rank_of):
    """Each document's local ids replaced by their ranks, sorted increasingly within the document."""
    out = np.empty(doc_tok.shape[0], np.int32)
    for d in range(doc_ptr.shape[0] - 1):
        a = doc_ptr[d]
        b = doc_ptr[d + 1]
        for t in range(a, b):
            out[t] = rank_of[doc_tok[t]]
        out[a:b] = np.sort(out[a:b])
    return out
