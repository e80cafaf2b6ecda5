"""Compiled kernels of the output stage: expanding duplicate groups, formatting lines.

Kernels assume clean input: group members ascending, every pair of distinct
sets listed once in the adjacency of each of its two sets.
"""
import numpy as np

from .._kernels.jit import kernel


@kernel
def adjacency(m, left, right, directions):
    """Both directions of every pair of distinct sets as CSR over ``m`` sets (counting sort).

    Returns (ptr, neighbour, pair index, ok), the pair index pointing into
    left/right, ``ok`` true where the edge from the set to its neighbour is a
    result: ``left -> right`` when bit 1 of ``directions[k]`` is set, ``right ->
    left`` when bit 2 is (3 for a symmetric measure).
    """
    ptr = np.zeros(m + 1, np.int64)
    for k in range(left.shape[0]):
        ptr[left[k] + 1] += 1
        ptr[right[k] + 1] += 1
    for s in range(m):
        ptr[s + 1] += ptr[s]
    fill = ptr[:-1].copy()
    nb = np.empty(ptr[m], np.int32)
    idx = np.empty(ptr[m], np.int32)
    ok = np.empty(ptr[m], np.bool_)
    for k in range(left.shape[0]):
        a = left[k]
        b = right[k]
        nb[fill[a]] = b
        idx[fill[a]] = k
        ok[fill[a]] = (directions[k] & 1) != 0
        fill[a] += 1
        nb[fill[b]] = a
        idx[fill[b]] = k
        ok[fill[b]] = (directions[k] & 2) != 0
        fill[b] += 1
    return ptr, nb, idx, ok


@kernel
def pair_products(a, i, b, j, where):
    """``sum(a[i[k]] * b[j[k]])`` over the pairs ``k`` where ``where[k]`` (all when ``where`` is empty):
    the document pairs behind pairs of distinct sets, one pass, no temporaries; indexes within ``a``, ``b``."""
    total = 0
    every = where.shape[0] == 0
    for k in range(i.shape[0]):
        if every or where[k]:
            total += a[i[k]] * b[j[k]]
    return total


@kernel
def partner_bound(doc_set, group_indptr, adj_ptr, adj_set):
    """Upper bound on each document's partners: its group and every neighbour group."""
    n = doc_set.shape[0]
    out = np.zeros(n, np.int64)
    for d in range(n):
        s = doc_set[d]
        if s < 0:
            continue
        c = group_indptr[s + 1] - group_indptr[s] - 1
        for k in range(adj_ptr[s], adj_ptr[s + 1]):
            b = adj_set[k]
            c += group_indptr[b + 1] - group_indptr[b]
        out[d] = c
    return out


@kernel
def _first_after(arr, lo, hi, d):
    """First index in arr[lo:hi] (ascending) whose value exceeds d."""
    while lo < hi:
        mid = (lo + hi) >> 1
        if arr[mid] <= d:
            lo = mid + 1
        else:
            hi = mid
    return lo


#: Which document pairs :func:`expand` makes: (left, right) with left < right
#: (a symmetric self-join); every ordered pair of distinct documents
#: (containment); left < n_left <= right (an R–S join).
UNORDERED, ORDERED, CROSS = 0, 1, 2


@kernel
def expand(lo, hi, capacity, doc_set, group_indptr, group_docs, adj_ptr, adj_set, adj_pair, adj_ok, group_ok,
           mode, n_left):
    """Document pairs (left, right, set pair) for left in [lo, hi), sorted by (left, right).

    A document pairs with the members of its own group (set pair -1:
    identical sets; where ``group_ok``) and with the members of every group
    adjacent to its set by an edge that is a result (``adj_ok``: the index of
    that pair of distinct sets); partners are those ``mode`` admits.
    """
    out_l = np.empty(capacity, np.int32)
    out_r = np.empty(capacity, np.int32)
    out_o = np.empty(capacity, np.int32)
    keys = np.empty(capacity, np.int64)
    n = 0
    for d in range(lo, hi):
        s = doc_set[d]
        if s < 0:
            continue
        if mode == CROSS and d >= n_left:
            continue
        # Partners are group members after `after` (all but d itself when ORDERED).
        after = d if mode == UNORDERED else (n_left - 1 if mode == CROSS else -1)
        start = n
        if group_ok[s]:
            g0 = group_indptr[s]
            g1 = group_indptr[s + 1]
            for k in range(_first_after(group_docs, g0, g1, after), g1):
                if group_docs[k] != d:
                    keys[n] = (np.int64(group_docs[k]) << 32) | np.int64(0xFFFFFFFF)
                    n += 1
        for a in range(adj_ptr[s], adj_ptr[s + 1]):
            if not adj_ok[a]:
                continue
            b = adj_set[a]
            h0 = group_indptr[b]
            h1 = group_indptr[b + 1]
            for k in range(_first_after(group_docs, h0, h1, after), h1):
                keys[n] = (np.int64(group_docs[k]) << 32) | np.int64(adj_pair[a])
                n += 1
        keys[start:n] = np.sort(keys[start:n])
        for k in range(start, n):
            out_l[k] = d
            out_r[k] = keys[k] >> 32
            out_o[k] = np.int32(np.uint32(keys[k] & 0xFFFFFFFF))
    return out_l[:n], out_r[:n], out_o[:n]


# Opcodes of a line template: each step is (op, arg).
OP_LITERAL, OP_LEFT, OP_RIGHT, OP_SIMILARITY, OP_OVERLAP, OP_LEFT_SIZE, OP_RIGHT_SIZE = range(7)


@kernel
def _digits(v):
    n = 1
    while v >= 10:
        v //= 10
        n += 1
    return n


@kernel
def _put_int(buf, pos, v):
    n = _digits(v)
    for k in range(n - 1, -1, -1):
        buf[pos + k] = 48 + v % 10
        v //= 10
    return pos + n


@kernel
def format_lines(template, lit_ptr, lit_bytes, field_ptr, field_bytes, n_docs, decimals,
                 left, right, overlap, doc_size, num, den):
    """Render each pair as one line of bytes by the template.

    Fields: field f of document d is ``field_bytes[field_ptr[f*n_docs + d]:field_ptr[f*n_docs + d + 1]]``.
    The similarity is ``num / den`` (overlap / union, or a scaled estimate)
    truncated (not rounded) to ``decimals`` places in integer arithmetic: it
    never shows more than the true value, and shows 1 only for identical sets.
    With ``decimals`` 0 it is a whole number of any size (an overlap count).
    """
    n_pairs = left.shape[0]
    steps = template.shape[0] // 2
    scale = np.int64(1)
    for _ in range(decimals):
        scale *= 10
    # Pass 1: exact length.
    total = 0
    for k in range(n_pairs):
        a = left[k]
        b = right[k]
        for s in range(steps):
            op = template[2 * s]
            arg = template[2 * s + 1]
            if op == 0:
                total += lit_ptr[arg + 1] - lit_ptr[arg]
            elif op == 1:
                total += field_ptr[arg * n_docs + a + 1] - field_ptr[arg * n_docs + a]
            elif op == 2:
                total += field_ptr[arg * n_docs + b + 1] - field_ptr[arg * n_docs + b]
            elif op == 3:
                total += 2 + decimals if decimals > 0 else _digits(num[k] // den[k])
            elif op == 4:
                total += _digits(overlap[k])
            elif op == 5:
                total += _digits(doc_size[a])
            else:
                total += _digits(doc_size[b])
    buf = np.empty(total, np.uint8)
    pos = 0
    for k in range(n_pairs):
        a = left[k]
        b = right[k]
        for s in range(steps):
            op = template[2 * s]
            arg = template[2 * s + 1]
            if op == 0:
                for t in range(lit_ptr[arg], lit_ptr[arg + 1]):
                    buf[pos] = lit_bytes[t]
                    pos += 1
            elif op == 1 or op == 2:
                d = a if op == 1 else b
                for t in range(field_ptr[arg * n_docs + d], field_ptr[arg * n_docs + d + 1]):
                    buf[pos] = field_bytes[t]
                    pos += 1
            elif op == 3:
                o = num[k]
                union = den[k]
                whole = o // union
                frac = ((o - whole * union) * scale) // union
                if decimals == 0:  # a count (overlap): every digit
                    pos = _put_int(buf, pos, whole)
                else:
                    buf[pos] = 48 + whole
                    buf[pos + 1] = 46  # '.'
                    for t in range(decimals - 1, -1, -1):
                        buf[pos + 2 + t] = 48 + frac % 10
                        frac //= 10
                    pos += 2 + decimals
            elif op == 4:
                pos = _put_int(buf, pos, overlap[k])
            elif op == 5:
                pos = _put_int(buf, pos, doc_size[a])
            else:
                pos = _put_int(buf, pos, doc_size[b])
    return buf
