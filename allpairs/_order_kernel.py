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


@kernel
def _grow_table(slots, cap):
    """The open-addressing table ``slots`` (key, id + 1 pairs) rehashed into twice the capacity."""
    new_cap = 2 * cap
    mask = np.uint64(new_cap - 1)
    out = np.zeros(2 * new_cap, np.uint64)
    for s in range(cap):
        if slots[2 * s + 1] != 0:
            k = slots[2 * s]
            h = ((k * np.uint64(0x9E3779B97F4A7C15)) >> np.uint64(20)) & mask
            while out[2 * h + 1] != 0:
                h = (h + np.uint64(1)) & mask
            out[2 * h] = k
            out[2 * h + 1] = slots[2 * s + 1]
    return out, new_cap


@kernel
def _grown(a, size):
    """``a`` copied into an array of ``size`` elements (the rest uninitialised)."""
    out = np.empty(size, a.dtype)
    out[: a.shape[0]] = a
    return out


@kernel
def distinct_per_doc(indptr, keys):
    """Local token ids by an open-addressing hash table, one entry per distinct (document, key).

    Returns the distinct keys in first-seen order (uint64), their document
    frequencies (int64), and each document's distinct local ids as CSR
    (doc_ptr int64, doc_tok int32), in first-seen order within the document.
    The table and the per-key arrays grow with the number of distinct keys,
    not with the number of keys (a Zipf corpus repeats a few keys a lot).
    """
    n_docs = indptr.shape[0] - 1
    n = keys.shape[0]
    cap = 1024
    # Key and id side by side (id + 1, 0 = free): one cache line per probe.
    slots = np.zeros(2 * cap, np.uint64)
    room = 1024
    uniq = np.empty(room, np.uint64)
    df = np.empty(room, np.int64)
    last_doc = np.empty(room, np.int64)
    doc_ptr = np.zeros(n_docs + 1, np.int64)
    doc_tok = np.empty(n, np.int32)
    n_uniq = 0
    n_entry = 0
    for d in range(n_docs):
        for t in range(indptr[d], indptr[d + 1]):
            k = keys[t]
            mask = np.uint64(cap - 1)
            h = ((k * np.uint64(0x9E3779B97F4A7C15)) >> np.uint64(20)) & mask
            while slots[2 * h + 1] != 0 and slots[2 * h] != k:
                h = (h + np.uint64(1)) & mask
            if slots[2 * h + 1] == 0:
                slots[2 * h] = k
                slots[2 * h + 1] = n_uniq + 1
                if n_uniq == room:
                    room *= 2
                    uniq = _grown(uniq, room)
                    df = _grown(df, room)
                    last_doc = _grown(last_doc, room)
                uniq[n_uniq] = k
                df[n_uniq] = 0
                last_doc[n_uniq] = -1
                n_uniq += 1
                i = n_uniq - 1
                # Load factor at most 1/2: probes stay short.
                if 2 * n_uniq > cap:
                    slots, cap = _grow_table(slots, cap)
            else:
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
