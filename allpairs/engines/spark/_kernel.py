"""Compiled kernels of the Spark engine: a token group's sets in its task's order, the first token two sets share,
the benchmark items a document contains (an R–S join against a broadcast index of the items' prefixes).

Vernica, Carey, Li, "Efficient parallel set-similarity joins using MapReduce",
SIGMOD 2010: a pair routed to the groups of several shared prefix tokens is
emitted only by the group of the first (rarest) one, so no global distinct is needed.

Assumes clean input: ranks strictly increasing within each set.
"""
import numpy as np

from ..._kernels.csr import grow
from ..._kernels.jit import kernel
from ...exact._kernel import lower_bound
from ...measures._kernel import required_overlap


@kernel
def group_tokens(r_ptr, ranks, key, div, n_single, task, group, groups, hot, span, n_live, n_other, index_len,
                 probe_len, start, tokens, at):
    """Write each row's tokens in its token group's order from ``tokens[start[row]]``, and beside each in ``at``
    its position in the global order of the row's set; return the row's limits.

    A row's *live* ranks (``rank % groups == group[row]``, not in the sorted
    ``hot``) come first, as ``task[row] * span + key // div``; then its other
    ranks as ``n_live + key``; then its own (``n_single[row]``) tokens,
    numbered on from ``n_live + n_other`` (``key`` is the rank, or a dense
    renumbering of it, per entry of ``ranks``). Returns (index_limit,
    probe_limit, live_len), int64 per row: its live ranks within its first
    ``index_len[row]`` / ``probe_len[row]`` positions of the global order, where
    its own tokens come first, and all its live ranks. Assumes ``0 <= key <
    n_other``, ranks not negative, ids that fit int32.
    """
    n = r_ptr.shape[0] - 1
    index_limit = np.empty(n, np.int64)
    probe_limit = np.empty(n, np.int64)
    live_len = np.empty(n, np.int64)
    own = n_live + n_other
    n_hot = hot.shape[0]
    longest = 0
    for r in range(n):
        longest = max(longest, r_ptr[r + 1] - r_ptr[r])
    # A row's other ranks wait here while its live ones are written (their place is after them).
    other_token = np.empty(longest, np.int32)
    other_at = np.empty(longest, np.int32)
    # Ranks and keys are not negative: unsigned division, with no sign to correct.
    u_groups = np.uint64(groups)
    u_div = np.uint64(div)
    for r in range(n):
        g = np.uint64(group[r])
        base = task[r] * span
        index_end = index_len[r]
        probe_end = probe_len[r]
        k = start[r]
        pos = n_single[r]  # the rank's position in the global order of the set: its own tokens come first
        n_index = 0
        n_probe = 0
        n_rest = 0
        for e in range(r_ptr[r], r_ptr[r + 1]):
            ue = np.uint64(e)
            w = ranks[ue]
            live = np.uint64(w) % u_groups == g
            if live and n_hot:
                h = lower_bound(hot, 0, n_hot, w)
                live = h == n_hot or hot[h] != w
            if live:
                tokens[np.uint64(k)] = base + np.int64(np.uint64(key[ue]) // u_div)
                at[np.uint64(k)] = pos
                n_index += pos < index_end
                n_probe += pos < probe_end
                k += 1
            else:
                other_token[np.uint64(n_rest)] = n_live + key[ue]
                other_at[np.uint64(n_rest)] = pos
                n_rest += 1
            pos += 1
        index_limit[r] = n_index
        probe_limit[r] = n_probe
        live_len[r] = k - start[r]
        for o in range(n_rest):
            tokens[np.uint64(k)] = other_token[np.uint64(o)]
            at[np.uint64(k)] = other_at[np.uint64(o)]
            k += 1
        for o in range(n_single[r]):
            tokens[np.uint64(k)] = own
            at[np.uint64(k)] = o
            own += 1
            k += 1
    return index_limit, probe_limit, live_len


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
def probe_items(d_ptr, d_keys, p_keys, p_ptr, p_item, i_ptr, i_keys, code, p, q, n_items):
    """The (document, item, overlap) of every document and item that share a token of the item's prefix and
    reach ``p/q`` under the measure ``code`` (:mod:`allpairs.measures._kernel`), the item as the left set.

    A document's keys ``d_keys[d_ptr[d]:d_ptr[d + 1]]`` and an item's ``i_keys[i_ptr[i]:i_ptr[i + 1]]`` are
    sorted (uint64); ``p_keys`` the distinct prefix tokens sorted, ``p_item[p_ptr[k]:p_ptr[k + 1]]`` the
    items whose prefix holds ``p_keys[k]``. Each candidate is counted once (marked per document), skipped
    when its sizes cannot reach α, else counted by a merge (a search per item key in a document over 8
    times longer) that stops once α is out of reach.
    """
    n = d_ptr.shape[0] - 1
    m = p_keys.shape[0]
    mark = np.full(n_items, -1, np.int64)
    out_d = np.empty(1024, np.int64)
    out_i = np.empty(1024, np.int64)
    out_o = np.empty(1024, np.int64)
    k = 0
    for d in range(n):
        lo = d_ptr[d]
        hi = d_ptr[d + 1]
        y = hi - lo
        for j in range(lo, hi):
            pos = lower_bound(p_keys, 0, m, d_keys[j])
            if pos == m or p_keys[pos] != d_keys[j]:
                continue
            for e in range(p_ptr[pos], p_ptr[pos + 1]):
                it = p_item[e]
                if mark[it] == d:
                    continue
                mark[it] = d
                a = i_ptr[it]
                b = i_ptr[it + 1]
                x = b - a
                need = required_overlap(code, p, q, x, y)
                if need > min(x, y):
                    continue
                o = 0
                if y > 8 * x:
                    at = lo
                    for ii in range(a, b):
                        if o + (b - ii) < need:
                            break
                        at = lower_bound(d_keys, at, hi, i_keys[ii])
                        if at == hi:
                            break
                        if d_keys[at] == i_keys[ii]:
                            o += 1
                else:
                    ii = a
                    jj = lo
                    while ii < b and jj < hi:
                        if o + min(b - ii, hi - jj) < need:
                            break
                        if i_keys[ii] == d_keys[jj]:
                            o += 1
                            ii += 1
                            jj += 1
                        elif i_keys[ii] < d_keys[jj]:
                            ii += 1
                        else:
                            jj += 1
                if o < need:
                    continue
                if k == out_d.shape[0]:
                    out_d = grow(out_d, k + 1)
                    out_i = grow(out_i, k + 1)
                    out_o = grow(out_o, k + 1)
                out_d[k] = d
                out_i[k] = it
                out_o[k] = o
                k += 1
    return out_d[:k].copy(), out_i[:k].copy(), out_o[:k].copy()



#: Bits of a rank that each counting pass of :func:`lookup_ranks` sorts by: 2**11 counters (16 KiB) stay in
#: the L1 cache; ranks below 2**22 (the broadcast limit) take two passes.
RANK_DIGIT_BITS = 11


@kernel
def lookup_ranks(indptr, keys, table, offsets, shift, table_ranks):
    """Each row's keys found in ``table`` as their ranks, sorted: (indptr int64 (n + 1,), ranks int32).

    ``table`` holds distinct keys sorted as uint64, ``table_ranks`` the rank of
    each; ``offsets[b]:offsets[b + 1]`` are the table's keys whose top bits
    (``key >> shift``) are ``b``. The keys are hashes, spread evenly over the
    buckets, so a key is found in about one step: a binary search over the
    whole table missed the cache at nearly every step (1 M Zipf sets: 6.9 s of
    20 M searches, ~1 s this way). Each key's bucket is read first, in a pass
    of independent loads whose cache misses overlap. The found (row, rank)
    pairs are then sorted by a radix sort (Knuth, TAOCP vol. 3, 5.2.5): by
    rank, a counting pass per RANK_DIGIT_BITS, then stably by row; numba's sort
    of each row's ~20 ranks took more time than finding them. Assumes each
    row's keys distinct, ranks not negative, fewer than 2**32 table keys.
    """
    n = indptr.shape[0] - 1
    base = indptr[0]
    m = indptr[n] - base
    u32 = np.uint64(32)
    low = np.uint64(0xFFFFFFFF)
    # Each key's bucket (start, end), packed; the k-th (row, rank) found is packed into the same array
    # once its k-th key has been read.
    found = np.empty(m, np.uint64)
    for e in range(m):
        b = np.int64(keys[np.uint64(base + e)] >> shift)
        found[np.uint64(e)] = np.uint64(offsets[b]) | (np.uint64(offsets[b + 1]) << u32)
    ptr = np.zeros(n + 1, np.int64)
    k = 0
    top = 0  # the largest rank found
    longest = 0  # the most ranks found in a row
    for d in range(n):
        row = np.uint64(d) << u32
        begin = k
        for e in range(indptr[d], indptr[d + 1]):
            x = keys[np.uint64(e)]
            bucket = found[np.uint64(e - base)]
            j = np.int64(bucket & low)
            end = np.int64(bucket >> u32)
            while j < end and table[j] < x:
                j += 1
            if j < end and table[j] == x:
                r = table_ranks[j]
                top = max(top, np.int64(r))
                found[np.uint64(k)] = row | np.uint64(r)
                k += 1
        longest = max(longest, k - begin)
        ptr[d + 1] = k
    out = np.empty(k, np.int32)
    if longest <= 1:  # nothing to sort
        for i in range(k):
            out[i] = np.int32(found[i] & low)
        return ptr, out
    bits = 0
    while (top >> bits) > 0:
        bits += 1
    passes = (bits + RANK_DIGIT_BITS - 1) // RANK_DIGIT_BITS
    width = (bits + passes - 1) // max(passes, 1)
    mask = np.uint64((1 << width) - 1)
    src = found[:k]
    dst = np.empty(k, np.uint64)
    count = np.empty((1 << width) + 1, np.int64)
    for p in range(passes):
        at = np.uint64(p * width)
        count[:] = 0
        for i in range(k):
            count[np.int64((src[i] >> at) & mask) + 1] += 1
        for c in range(1 << width):
            count[c + 1] += count[c]
        for i in range(k):
            v = src[i]
            c = np.int64((v >> at) & mask)
            dst[count[c]] = v
            count[c] += 1
        src, dst = dst, src
    # Stably by row: each row's ranks in rank order.
    cursor = ptr[:n].copy()
    for i in range(k):
        v = src[i]
        d = np.int64(v >> u32)
        out[cursor[d]] = np.int32(v & low)
        cursor[d] += 1
    return ptr, out


@kernel
def hot_routes(indptr, values, size, plen, hot, hot_ranks):
    """(row int64, rank int32) of every route of a row to a hot token: a value of the row found in ``hot``
    (sorted), whose rank ``hot_ranks`` lies within the row's first ``plen[row]`` positions of the global order.

    Vernica, Carey, Li (SIGMOD 2010) route a set to each token of its prefix; only the hot tokens' routes
    are counted here, without ranking the row's other tokens. Assumes the hot tokens are the top of the
    order (the most frequent), so that in a row of ``size[row]`` tokens the one with the k-th largest rank
    among its hot ones (k = 0, 1, ...) sits at position ``size[row] - 1 - k``.
    """
    n = indptr.shape[0] - 1
    m = hot.shape[0]
    longest = 0
    for r in range(n):
        longest = max(longest, indptr[r + 1] - indptr[r])
    found = np.empty(longest, np.int32)
    # A bit per value of the low 16 bits of the hot values (8 KiB): most values are not hot, and are
    # passed over on one test instead of a search.
    marks = np.zeros(1 << 16, np.bool_)
    for h in range(m):
        marks[np.int64(hot[h]) & 0xFFFF] = True
    out_row = np.empty(1024, np.int64)
    out_rank = np.empty(1024, np.int32)
    k = 0
    for r in range(n):
        c = 0
        for e in range(indptr[r], indptr[r + 1]):
            if not marks[np.int64(values[e]) & 0xFFFF]:
                continue
            h = lower_bound(hot, 0, m, values[e])
            if h < m and hot[h] == values[e]:
                found[c] = hot_ranks[h]
                c += 1
        # The k-th largest is routed when size - 1 - k < plen, i.e. k >= size - plen.
        first = max(np.int64(0), np.int64(size[r]) - np.int64(plen[r]))
        if first >= c:
            continue
        ranked = found[:c]
        ranked.sort()
        for j in range(first, c):
            if k == out_row.shape[0]:
                out_row = grow(out_row, k + 1)
                out_rank = grow(out_rank, k + 1)
            out_row[k] = r
            out_rank[k] = ranked[c - 1 - j]
            k += 1
    return out_row[:k].copy(), out_rank[:k].copy()
