"""Compiled kernels for the global order: sorting and grouping sets held as CSR.

Kernels assume clean input: tokens strictly increasing within each set (but for
:func:`distinct_sorted_rows`, :func:`rows_increasing` and :func:`count_distinct`, which take
any rows or keys).
"""
import numpy as np

from .._kernels.jit import kernel
from .._kernels.csr import insertion_sort


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
    total = 0
    for k in range(n):
        total += indptr[rows[k] + 1] - indptr[rows[k]]
    out_ptr = np.empty(n + 1, np.int64)
    out = np.empty(total, tokens.dtype)
    gather_into(indptr, tokens, rows, out_ptr, out)
    return out_ptr, out


@kernel
def gather_into(indptr, tokens, rows, out_ptr, out):
    """:func:`gather_csr` into arrays given: the offsets into ``out_ptr`` (n + 1), the tokens into ``out``
    (room for them at least; the caller keeps ``out[:out_ptr[n]]``)."""
    out_ptr[0] = 0
    for k in range(rows.shape[0]):
        a, b = indptr[rows[k]], indptr[rows[k] + 1]
        o = out_ptr[k]
        out[o:o + b - a] = tokens[a:b]
        out_ptr[k + 1] = o + b - a


_GOLD = np.uint64(0x9E3779B97F4A7C15)


@kernel(wraps=True)
def _spread(k):
    """Fibonacci hashing (Knuth, TAOCP vol. 3, 6.4): any keys, even small ints, get uniform high bits."""
    return k * _GOLD


@kernel
def _table_bits(size):
    """Bits of an open-addressing table for ``size`` keys at load factor at most 1/2 (at least 16 slots)."""
    bits = 4
    while (np.int64(1) << bits) < 2 * size:
        bits += 1
    return bits


@kernel(wraps=True)
def partition_keys(keys, pbits, most, entry):
    """Partition sizes, and the partitions cut into consecutive groups of at most ``most`` entries
    (or one partition, if larger). Returns ``(start, group_start)``: each partition's first entry
    in partition order (``2**pbits + 1``, int64), each group's first partition (int64, groups + 1);
    ``entry[t]`` becomes ``-2 - p`` for the partition p of ``keys[t]``."""
    n_parts = np.int64(1) << pbits
    shift = np.uint64(64 - pbits)
    start = np.zeros(n_parts + 1, np.int64)
    for t in range(keys.shape[0]):
        p = np.int64(_spread(keys[t]) >> shift)
        entry[t] = -2 - p
        start[p + 1] += 1
    for p in range(n_parts):
        start[p + 1] += start[p]
    cuts = np.zeros(n_parts + 1, np.int64)
    n_groups = 0
    for p in range(1, n_parts + 1):
        if start[p] - start[cuts[n_groups]] > most and p - 1 > cuts[n_groups]:
            n_groups += 1
            cuts[n_groups] = p - 1
    n_groups += 1
    cuts[n_groups] = n_parts
    return start, cuts[: n_groups + 1].copy()


@kernel(wraps=True)
def _number_group(indptr, keys, pbits, p0, p1, start, entry, df, n_ids, buf_key, buf_t, buf_doc):
    """Number the keys of partitions ``p0 .. p1 - 1``: ``entry[t]`` = an id (equal keys, equal ids,
    new ids from ``n_ids`` up in order of first occurrence within a partition), -1 for a repeat within
    a document; ``df[id]`` its document frequency. Returns the next free id. An entry not numbered
    yet holds ``-2 - p`` for its partition p (see :func:`partition_keys`).

    The partitions' entries are first copied out in input order, then each
    partition is numbered by a hash table of its own, which stays in cache
    where one table over all keys would miss on nearly every probe (radix
    partitioning: Manegold, Boncz, Kersten, VLDB 2000).
    """
    base = start[p0]
    fill = start[p0:p1 + 1] - base
    for d in range(indptr.shape[0] - 1):
        for t in range(indptr[d], indptr[d + 1]):
            p = -2 - np.int64(entry[t])
            if p0 <= p < p1:
                j = fill[p - p0]
                buf_key[j] = keys[t]
                buf_t[j] = t
                buf_doc[j] = d
                fill[p - p0] = j + 1
    widest = 0
    for p in range(p0, p1):
        widest = max(widest, start[p + 1] - start[p])
    bits = _table_bits(widest)
    slot_id = np.empty(np.int64(1) << bits, entry.dtype)
    slot_key = np.empty(slot_id.shape[0], np.uint64)
    slot_doc = np.empty(slot_id.shape[0], entry.dtype)
    for p in range(p0, p1):
        mask = (np.int64(1) << _table_bits(start[p + 1] - start[p])) - 1
        slot_id[: mask + 1] = -1
        for j in range(start[p] - base, start[p + 1] - base):
            k = buf_key[j]
            s = np.int64(_spread(k) >> np.uint64(16)) & mask
            while slot_id[s] != -1 and slot_key[s] != k:
                s = (s + 1) & mask
            t = buf_t[j]
            if slot_id[s] == -1:
                slot_id[s] = n_ids
                slot_key[s] = k
                slot_doc[s] = buf_doc[j]
                df[n_ids] = 1
                entry[t] = n_ids
                n_ids += 1
            elif slot_doc[s] == buf_doc[j]:
                entry[t] = -1  # a repeat within the document
            else:
                slot_doc[s] = buf_doc[j]
                df[slot_id[s]] += 1
                entry[t] = slot_id[s]
    return n_ids


#: Distinct keys past which :func:`number_small` gives up: its one table (16 bytes a slot, at most
#: half full) would no longer fit a 1 MiB L2 cache, where :func:`number_groups`' partitions do.
SMALL_DISTINCT = 1 << 15


@kernel(wraps=True)
def number_small(indptr, keys, entry, df):
    """:func:`number_groups` for a small input: one pass over the entries in input order, one hash
    table, no partitions and no copies. ``entry[t]`` = an id (equal keys, equal ids, new ids from 0
    up in order of first occurrence), -1 for a repeat within a document; ``df[id]`` its document
    frequency. Returns the number of ids, or -1 once a key past the first :data:`SMALL_DISTINCT`
    distinct ones is met (``entry`` and ``df`` then partly written: number them again with
    :func:`partition_keys` and :func:`number_groups`).

    ``keys`` (uint64) in CSR by ``indptr`` (int64); ``entry`` and ``df`` int32 (room for the ids).
    """
    bits = _table_bits(min(keys.shape[0], SMALL_DISTINCT))
    shift = np.uint64(64 - bits)
    mask = (np.int64(1) << bits) - 1
    slot_id = np.full(mask + 1, -1, entry.dtype)
    slot_key = np.empty(mask + 1, np.uint64)
    slot_doc = np.empty(mask + 1, entry.dtype)
    n_ids = 0
    for d in range(indptr.shape[0] - 1):
        for t in range(indptr[d], indptr[d + 1]):
            k = keys[t]
            s = np.int64(_spread(k) >> shift)
            while slot_id[s] != -1 and slot_key[s] != k:
                s = (s + 1) & mask
            if slot_id[s] == -1:
                if n_ids == SMALL_DISTINCT:
                    return -1
                slot_id[s] = n_ids
                slot_key[s] = k
                slot_doc[s] = d
                df[n_ids] = 1
                entry[t] = n_ids
                n_ids += 1
            elif slot_doc[s] == d:
                entry[t] = -1  # a repeat within the document
            else:
                slot_doc[s] = d
                df[slot_id[s]] += 1
                entry[t] = slot_id[s]
    return n_ids


@kernel
def _radix_sort(a, tmp, digits):
    """Sort ``a`` (non-negative ints below ``2**(8 * digits)``) in place: LSD radix sort, 8 bits a pass."""
    n = a.shape[0]
    if n < 64:
        insertion_sort(a, n * n)
        return
    count = np.empty(257, np.int64)
    src = a
    dst = tmp[:n]
    for pass_ in range(digits):
        shift = 8 * pass_
        count[:] = 0
        for i in range(n):
            count[((src[i] >> shift) & 255) + 1] += 1
        for c in range(256):
            count[c + 1] += count[c]
        for i in range(n):
            c = (src[i] >> shift) & 255
            dst[count[c]] = src[i]
            count[c] += 1
        src, dst = dst, src
    if digits % 2 == 1:
        a[:] = src


@kernel
def number_groups(indptr, keys, pbits, groups, start, entry, df, buf_key, buf_t, buf_doc):
    """Number the distinct keys of the partitions of ``groups`` (consecutive groups' first partitions, as
    :func:`partition_keys` gives them): ``entry[t]`` = an id from 0 up, -1 for a repeat within its
    document, for every entry of those partitions (no other entry is written); ``df[id]`` its document
    frequency. Returns the number of ids.

    ``keys`` (uint64) in CSR by ``indptr`` (int64); ``entry`` as :func:`partition_keys` left it
    (int32 when that many fit, else int64); ``df`` (as ``entry``) has room for the ids. A group's
    entries are copied out to ``buf_key`` (uint64), ``buf_t`` and ``buf_doc`` (as ``entry``), made
    larger here for a group larger than they are. Numbering consecutive runs of groups apart, each from
    0, and adding to each run's ids those of the runs before it gives the ids of one pass over all.
    """
    size = 0
    for q in range(groups.shape[0] - 1):
        size = max(size, start[groups[q + 1]] - start[groups[q]])
    if size > buf_key.shape[0]:  # one partition larger than the buffers
        buf_key = np.empty(size, np.uint64)
        buf_t = np.empty(size, entry.dtype)
        buf_doc = np.empty(size, entry.dtype)
    n_ids = 0
    for q in range(groups.shape[0] - 1):
        n_ids = _number_group(indptr, keys, pbits, groups[q], groups[q + 1], start, entry, df, n_ids,
                              buf_key, buf_t, buf_doc)
    return n_ids


@kernel(wraps=True)
def offset_ids(keys, pbits, p0, p1, entry, offset):
    """Add ``offset`` to the ids (``entry[t] >= 0``) of the entries whose key is in partitions ``p0 .. p1 - 1``."""
    shift = np.uint64(64 - pbits)
    for t in range(keys.shape[0]):
        if entry[t] >= 0:
            p = np.int64(_spread(keys[t]) >> shift)
            if p0 <= p < p1:
                entry[t] += offset


@kernel
def rank_entries(indptr, keys, entry, df_rank, n_ids, key_of):
    """Ranks of the ids that :func:`number_groups` gave, rare to frequent, and each document's sorted.

    A rank is a position in the order by document frequency (``df_rank``,
    overwritten by the ranks, then by work) ascending, ties by first occurrence (document,
    then position within it). Returns the int64 CSR offsets of each
    document's distinct ranks, found ascending in ``entry[:doc_ptr[-1]]``;
    ``key_of[r]`` (uint64, room for ``n_ids``) becomes the key of rank ``r``.
    """
    n_docs = indptr.shape[0] - 1
    # Ranks: a counting sort by document frequency; ids of equal frequency
    # take their ranks in order of first occurrence, met by scanning the entries.
    top = 0
    for g in range(n_ids):
        top = max(top, np.int64(df_rank[g]))
    next_rank = np.zeros(top + 2, np.int64)
    for g in range(n_ids):
        next_rank[np.int64(df_rank[g]) + 1] += 1
    for c in range(top + 1):
        next_rank[c + 1] += next_rank[c]
    ranked = np.zeros((n_ids + 63) >> 6, np.uint64)
    doc_ptr = np.zeros(n_docs + 1, np.int64)
    kept = 0
    longest = 0
    for d in range(n_docs):
        for t in range(indptr[d], indptr[d + 1]):
            g = entry[t]
            if g < 0:
                continue
            word = g >> 6
            bit = np.uint64(1) << np.uint64(g & 63)
            if ranked[word] & bit == 0:  # first occurrence: the frequency becomes the rank
                ranked[word] |= bit
                c = df_rank[g]
                df_rank[g] = next_rank[c]
                next_rank[c] += 1
                key_of[df_rank[g]] = keys[t]
            entry[kept] = df_rank[g]
            kept += 1
        doc_ptr[d + 1] = kept
        longest = max(longest, kept - doc_ptr[d])
    if kept <= TRANSPOSE_ENTRIES:
        _sort_rows_by_columns(doc_ptr, entry, n_ids, df_rank)
        return doc_ptr
    digits = 1
    while (np.int64(1) << (8 * digits)) < n_ids:
        digits += 1
    tmp = np.empty(longest, entry.dtype)
    for d in range(n_docs):
        _radix_sort(entry[doc_ptr[d]:doc_ptr[d + 1]], tmp, digits)
    return doc_ptr


#: Entries up to which :func:`rank_entries` sorts every document's ranks at once
#: (:func:`_sort_rows_by_columns`), not each apart: its arrays (4 bytes an entry
#: each) then stay in cache; on Kosarak's 375 k entries 3 passes took ~8 M
#: instructions where the sorts apart took ~27 M.
TRANSPOSE_ENTRIES = 1 << 19


@kernel
def _sort_rows_by_columns(doc_ptr, entry, n_ids, docs_of):
    """Sort every row of the CSR ``doc_ptr`` (int64) / ``entry[:doc_ptr[-1]]`` (distinct values
    below ``n_ids`` within a row) at once, as a sparse matrix transposed twice (Gustavson, ACM TOMS
    1978): the rows listed by value, by a counting sort, then each value written back to its rows in
    value order. ``docs_of`` (as ``entry``, room for ``doc_ptr[-1]``) is overwritten."""
    n_docs = doc_ptr.shape[0] - 1
    end = np.zeros(n_ids + 1, np.int64)
    for i in range(doc_ptr[n_docs]):
        end[np.int64(entry[i]) + 1] += 1
    for r in range(n_ids):
        end[r + 1] += end[r]
    # Value r's rows go to docs_of[end[r]:end[r + 1]], ascending; end[r] moves to the end of its list.
    for d in range(n_docs):
        for i in range(doc_ptr[d], doc_ptr[d + 1]):
            r = entry[i]
            docs_of[end[r]] = d
            end[r] += 1
    fill = doc_ptr[:n_docs].copy()
    j = 0
    for r in range(n_ids):
        while j < end[r]:
            d = docs_of[j]
            entry[fill[d]] = r
            fill[d] += 1
            j += 1


@kernel(wraps=True)
def count_distinct(keys, pbits):
    """The number of distinct values of ``keys`` (uint64, any order), in ``2**pbits`` partitions by their spread
    top bits, each counted by a hash table of its own that stays in cache (radix partitioning: Manegold,
    Boncz, Kersten, VLDB 2000; as :func:`number_groups`, without numbering)."""
    n = keys.shape[0]
    shift = np.uint64(64 - pbits)
    start = np.zeros((np.int64(1) << pbits) + 1, np.int64)
    for t in range(n):
        start[np.int64(_spread(keys[t]) >> shift) + 1] += 1
    widest = 0
    for p in range(start.shape[0] - 1):
        widest = max(widest, start[p + 1])
        start[p + 1] += start[p]
    fill = start[:-1].copy()
    part = np.empty(n, np.uint64)
    for t in range(n):
        p = np.int64(_spread(keys[t]) >> shift)
        part[fill[p]] = keys[t]
        fill[p] += 1
    # Slots hold keys; 0 marks an empty slot, so a key 0 is counted apart.
    table = np.empty(np.int64(1) << _table_bits(widest), np.uint64)
    distinct = 0
    for p in range(start.shape[0] - 1):
        mask = (np.int64(1) << _table_bits(start[p + 1] - start[p])) - 1
        table[: mask + 1] = 0
        zero = False
        for j in range(start[p], start[p + 1]):
            k = part[j]
            if k == 0:
                if not zero:
                    zero = True
                    distinct += 1
                continue
            s = np.int64(_spread(k) >> np.uint64(16)) & mask
            while table[s] != 0 and table[s] != k:
                s = (s + 1) & mask
            if table[s] == 0:
                table[s] = k
                distinct += 1
    return distinct


@kernel
def rows_increasing(indptr, keys):
    """Whether every row of the CSR ``indptr`` (int64) / ``keys`` is strictly increasing."""
    for d in range(indptr.shape[0] - 1):
        for t in range(indptr[d] + 1, indptr[d + 1]):
            if keys[t] <= keys[t - 1]:
                return False
    return True
