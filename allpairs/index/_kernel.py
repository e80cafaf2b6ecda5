"""Compiled kernels of the search index: token lookup, the prefix index, probing and verification.

Bayardo, Ma, Srikant, "Scaling up all pairs similarity search", WWW 2007
(prefix filter, size bound, posting lists sorted by size); Xiao, Wang, Lin, Yu,
"Efficient similarity joins for near duplicate detection", WWW 2008 (positional
bound); Mann, Augsten, Bouros, PVLDB 2016 (bounds of each measure, merge
verification with early exit); Sandes, Teodoro, Melo, Information Systems 2020
(the bitmap filter, :func:`allpairs.verify._kernel.bitmap_admits`, shared with the join).

Kernels assume clean input: set tokens strictly increasing ranks (int32; ranks
of tokens added after the build are negative), postings of each list sorted by
(set size, position, set), a measure code of :mod:`allpairs.measures._kernel`
and its threshold ``p/q`` with ``0 <= p`` (``p = 0``: one common token is
enough), per set the indexing prefix length, and per set or query the
partner-size window that :mod:`allpairs.measures` gives for it (the probing
prefix follows from it here: :func:`probe_prefix`).
"""
import numpy as np

from .._kernels.mix import mix64
from ..measures._kernel import (CONTAINMENT, CONTAINMENT_MIN, COSINE, DICE, JACCARD, products_ge,
                                required_overlap as _alpha)
from .._kernels.jit import kernel
from ..verify._kernel import bitmap, bitmap_admits, merge
from .._kernels.csr import grow
from ..exact._kernel import count_match, lower_bound

#: What :func:`check_postings` finds wrong first (0: nothing).
CHECK_TOKEN_RANGE, CHECK_TOKEN_ORDER, CHECK_POSTINGS_COUNT = 1, 2, 3
CHECK_POSTING_SET, CHECK_POSTING_POSITION, CHECK_POSTING_ORDER, CHECK_POSTINGS_DIFFER = 4, 5, 6, 7


@kernel
def required_overlap(code, p, q, size_x, size_y):
    """The table's α, but at least one common token (so ``p = 0`` means "share a token")."""
    return max(1, _alpha(code, p, q, size_x, size_y))


@kernel
def probe_prefix(code, p, q, size_x, lo):
    """Probing prefix of a set of ``size_x`` tokens whose partners have at least ``lo``: ``|x| - α(|x|, lo) + 1``.

    α does not fall as the partner grows, under every measure, so ``α(|x|,
    lo)`` is the least any partner in the window needs, and a pair reaching
    it has a common token in the first ``|x| - α + 1`` of x (Bayardo et al.
    2007; Chaudhuri et al. 2006). Never more than ``|x|``, below 1 when no
    partner can reach the threshold.
    """
    return np.int64(size_x) - required_overlap(code, p, q, size_x, lo) + 1


@kernel
def cached_overlap(code, p, q, size_x, size_y, cache, stamp):
    """:func:`required_overlap` of sizes ``size_x``, ``size_y``, computed once per partner size for a stamp.

    ``cache`` int64 (2, largest size + 2): row 0 the stamp an entry was made
    for, row 1 its α. A stamp names ``(code, p, q, |x|)``: a caller's call
    number (:func:`next_stamp`) above 32 bits and ``|x|`` below, as the join
    caches α per partner size for its probe set.
    """
    if cache[0, size_y] != stamp:
        cache[0, size_y] = stamp
        cache[1, size_y] = required_overlap(code, p, q, size_x, size_y)
    return cache[1, size_y]


@kernel
def next_stamp(cache):
    """A new call number for :func:`cached_overlap`'s cache, above every stamp it holds (kept in its last column)."""
    last = cache.shape[1] - 1
    cache[0, last] += 1
    return cache[0, last] << 32


@kernel
def more_similar(code, size_x, o1, size_1, o2, size_2):
    """Sign of sim(x, y1) - sim(x, y2) from overlaps and sizes, decided on integers (int64 products)."""
    size_x = np.int64(size_x)
    o1 = np.int64(o1)
    size_1 = np.int64(size_1)
    o2 = np.int64(o2)
    size_2 = np.int64(size_2)
    if code == JACCARD:
        a, b = o1 * (size_x + size_2 - o2), o2 * (size_x + size_1 - o1)
    elif code == COSINE:  # o1/√(x·y1) vs o2/√(x·y2): o1²·y2 vs o2²·y1, in 128 bits
        ge = products_ge(o1 * o1, size_2, o2 * o2, size_1)
        le = products_ge(o2 * o2, size_1, o1 * o1, size_2)
        return (1 if ge else 0) - (1 if le else 0)
    elif code == DICE:
        a, b = o1 * (size_x + size_2), o2 * (size_x + size_1)
    elif code == CONTAINMENT_MIN:
        a, b = o1 * max(size_x, size_2), o2 * max(size_x, size_1)
    else:  # containment (same left set) and overlap: the overlaps themselves
        a, b = o1, o2
    return (1 if a > b else 0) - (1 if a < b else 0)


@kernel
def slot_of(rank, v0):
    """Posting-list slot of a rank: ranks >= 0 as they are, added tokens (-1, -2, ...) after the ``v0`` built ones."""
    return rank if rank >= 0 else v0 - 1 - rank


@kernel
def lookup(keys_sorted, ranks_sorted, key):
    """Rank of ``key`` in the sorted lookup arrays, or -2**31 when absent."""
    lo = lower_bound(keys_sorted, 0, keys_sorted.shape[0], key)
    if lo < keys_sorted.shape[0] and keys_sorted[lo] == key:
        return ranks_sorted[lo]
    return np.int32(-2147483648)


@kernel
def to_ranks(indptr, keys, keys_sorted, ranks_sorted, extra_sorted, extra_ranks):
    """Each document's distinct keys as sorted ranks, and how many of its distinct keys are unknown.

    Keys are looked up in two sorted tables (the built vocabulary and the tokens
    added since it was last rebuilt). Returns (indptr int64, ranks int32,
    unseen int32 per document).
    """
    n = indptr.shape[0] - 1
    out_ptr = np.zeros(n + 1, np.int64)
    out = np.empty(keys.shape[0], np.int32)
    unseen = np.zeros(n, np.int32)
    absent = np.int32(-2147483648)
    w = 0
    for d in range(n):
        a = indptr[d]
        b = indptr[d + 1]
        order = np.argsort(keys[a:b], kind="mergesort")
        start = w
        prev_set = False
        prev = np.uint64(0)
        for k in range(b - a):
            key = keys[a + order[k]]
            if prev_set and key == prev:
                continue
            prev = key
            prev_set = True
            r = lookup(keys_sorted, ranks_sorted, key)
            if r == absent and extra_sorted.shape[0] > 0:
                r = lookup(extra_sorted, extra_ranks, key)
            if r == absent:
                unseen[d] += 1
            else:
                out[w] = r
                w += 1
        out[start:w] = np.sort(out[start:w])
        out_ptr[d + 1] = w
    return out_ptr, out[:w].copy(), unseen


@kernel
def build_postings(indptr, tokens, index_len, n_slots, v0):
    """Inverted index of the first ``index_len[s]`` tokens of every set s, each list sorted by (set size, position,
    set).

    ``index_len`` is the indexing prefix: ``|y| - m + 1`` tokens, ``m`` the least
    overlap any query can need with y, so that any query reaching the threshold
    shares a token of its probing prefix with it (Chaudhuri et al. 2006).
    Within a size, postings run by the token's position in its set, so that a
    probe passes over the postings too deep to be a first match (:func:`_probe`)
    a size at a time, by binary search.
    Returns CSR over slots: ``list_ptr`` (int64, n_slots + 1) and one row per
    posting, ``post`` (int32, (P, 3)): the set, the token's position in it, and
    the set's size, side by side so that a scan reads one cache line per posting.
    """
    m = indptr.shape[0] - 1
    sizes = np.empty(m, np.int64)
    for s in range(m):
        sizes[s] = indptr[s + 1] - indptr[s]
    by_size = np.argsort(sizes, kind="mergesort")
    counts = np.zeros(n_slots + 1, np.int64)
    for s in range(m):
        for k in range(index_len[s]):
            counts[slot_of(tokens[indptr[s] + k], v0) + 1] += 1
    list_ptr = np.cumsum(counts)
    fill = list_ptr[:-1].copy()
    post = np.empty((list_ptr[-1], 3), np.int32)
    # Sets of one size at a time (in set order), position by position: each list gets (size, position, set).
    a = 0
    while a < m:
        size = sizes[by_size[a]]
        b = a
        deepest = 0
        while b < m and sizes[by_size[b]] == size:
            deepest = max(deepest, index_len[by_size[b]])
            b += 1
        for k in range(deepest):
            for r in range(a, b):
                s = by_size[r]
                if k < index_len[s]:
                    w = slot_of(tokens[indptr[s] + k], v0)
                    post[fill[w], 0] = s
                    post[fill[w], 1] = k
                    post[fill[w], 2] = size
                    fill[w] += 1
        a = b
    return list_ptr, post


@kernel
def _probe(xt, u, lo, hi, limit, active, code, p, q, s_indptr, s_tokens, bits, list_ptr, post, v0, scratch, cache,
           stamp):
    """Indexed sets reaching p/q with one query; writes them and their overlaps to res_s, res_o; returns how many.

    The query is ``u`` unknown tokens (rarer than every indexed one, so first in
    the order; they match nothing but count in its size) followed by its known
    ranks ``xt``. Its probing prefix (:func:`probe_prefix`) scans the posting lists
    from the first set of size ``lo`` (binary search) to the last of size
    ``hi``, as the join's probe does (:func:`allpairs.exact._kernel.probe_verify`):
    a pair's first common token lies at ``i <= |x| - α`` in x and ``j <= |y| -
    α`` in y (Xiao et al. 2008, Lemma 2), so a list is left once ``i > |x| -
    α`` (α grows with |y|), and the postings of a size deeper than ``|y| - α``
    (a run, as a list goes by size, then position) are passed over by one
    binary search: a token in every set's prefix costs a search per size, not
    a scan of its list. Such a deep match of a candidate counted already, and
    every later one (deeper still), is counted by verification. A candidate
    is dropped once the positional bound ``A + 1 + min(|x| - i - 1, |y| - j -
    1)`` falls below the required overlap (A: its matches counted, all those
    before this one); with signatures (``bits``, one per indexed set; empty:
    no filter) one is dropped unless the bitmap bound admits α
    (:func:`allpairs.verify._kernel.bitmap_admits`, the query's signature made
    of its known tokens: the unknown ones are in no indexed set); survivors are
    verified by a merge resuming after their last counted match. α is worked
    out once per partner size (:func:`cached_overlap`, ``cache`` and ``stamp``
    as there). Only sets below ``limit`` and, if ``active``
    is not empty, with ``active[y]`` set are answered. ``scratch`` (int32, 6
    rows of at least one entry per set: count, which must be zeros and is left
    so, last_i, last_j, touched, and the answer's sets and overlaps) is reused
    across calls so that a query costs nothing per indexed set.
    """
    count = scratch[0]
    last_i = scratch[1]
    last_j = scratch[2]
    touched = scratch[3]
    res_s = scratch[4]
    res_o = scratch[5]
    size_x = np.int64(xt.shape[0]) + np.int64(u)
    if size_x == 0:
        return 0
    stamp |= size_x
    n_slots = list_ptr.shape[0] - 1
    check_active = active.shape[0] > 0
    n_touched = 0
    for i in range(u, probe_prefix(code, p, q, size_x, lo)):
        w = slot_of(xt[i - u], v0)
        if w >= n_slots:
            continue
        # Size bound: skip the sets smaller than the bound allows by binary search.
        a = list_ptr[w]
        b = list_ptr[w + 1]
        while a < b:
            mid = (a + b) >> 1
            if post[mid, 2] < lo:
                a = mid + 1
            else:
                b = mid
        end = list_ptr[w + 1]
        e = a
        last_size = -1
        alpha = 0
        while e < end:
            size_y = post[e, 2]
            if size_y > hi:
                break
            if size_y != last_size:  # α once per size of the list (sizes rise along it)
                last_size = size_y
                alpha = cached_overlap(code, p, q, size_x, size_y, cache, stamp)
            # A first common token lies in x's first |x| - α + 1; α grows with |y| along the list.
            if i > size_x - alpha:
                break
            if post[e, 1] > size_y - alpha:
                # No first match (α tokens from it on in y too), nor is any later posting of this size (deeper
                # still): past them by binary search. A match this deep of a candidate counted already, and
                # every one after it, is counted by verification, which resumes after the last match counted.
                lo_e = e + 1
                hi_e = end
                while lo_e < hi_e:
                    mid = (lo_e + hi_e) >> 1
                    if post[mid, 2] <= size_y:
                        lo_e = mid + 1
                    else:
                        hi_e = mid
                e = lo_e
                continue
            y = post[e, 0]
            if y < limit and (not check_active or active[y]) and count[y] >= 0:
                n_touched = count_match(y, i, post[e, 1], size_x, size_y, alpha, count, last_i, last_j, touched,
                                        n_touched)
            e += 1
    use_bits = bits.shape[0] > 0
    bx = bitmap(xt, 0, xt.shape[0]) if use_bits else np.uint64(0)
    n = 0
    for t in range(n_touched):
        y = touched[t]
        c = count[y]
        count[y] = 0
        if c <= 0:
            continue
        size_y = s_indptr[y + 1] - s_indptr[y]
        alpha = cached_overlap(code, p, q, size_x, size_y, cache, stamp)
        if use_bits and not bitmap_admits(size_x, size_y, bx, bits[y], alpha):
            continue
        o = merge(xt, last_i[y] - u + 1, xt.shape[0], s_tokens, s_indptr[y] + last_j[y] + 1, s_indptr[y + 1], c,
                  alpha)
        if o >= alpha:
            res_s[n] = y
            res_o[n] = o
            n += 1
    return n


@kernel
def query(q_indptr, q_tokens, q_unseen, q_lo, q_hi, q_limit, code, p, q, s_indptr, s_tokens, bits, list_ptr, post,
          v0, x_ptr, x_set, scratch, cache):
    """Every indexed set reaching threshold p/q with each query, and the exact overlap.

    Query k is ``q_unseen[k]`` unknown tokens and the known ranks
    ``q_tokens[q_indptr[k]:q_indptr[k+1]]``, probed as in :func:`_probe` with
    partner sizes ``q_lo[k] .. q_hi[k]``,
    answering only sets below ``q_limit[k]`` (a self-join asks each set for the
    earlier ones). ``x_set[x_ptr[k]:x_ptr[k+1]]`` are further candidates (sets
    added since the postings were built), verified by a merge from the start.
    ``bits``, ``scratch`` and ``cache`` as for :func:`_probe`.

    Returns (query, set, overlap), int32.
    """
    n_q = q_indptr.shape[0] - 1
    no_filter = np.zeros(0, np.bool_)
    stamp = next_stamp(cache)
    use_bits = bits.shape[0] > 0
    cap = 256
    out_q = np.empty(cap, np.int32)
    out_s = np.empty(cap, np.int32)
    out_o = np.empty(cap, np.int32)
    n_out = 0
    for k in range(n_q):
        xt = q_tokens[q_indptr[k]:q_indptr[k + 1]]
        u = q_unseen[k]
        limit = q_limit[k]
        lo = q_lo[k]
        hi = q_hi[k]
        n = _probe(xt, u, lo, hi, limit, no_filter, code, p, q, s_indptr, s_tokens, bits, list_ptr, post, v0,
                   scratch, cache, stamp)
        need = n_out + n + x_ptr[k + 1] - x_ptr[k]
        if need > out_q.shape[0]:
            out_q = grow(out_q, need)
            out_s = grow(out_s, need)
            out_o = grow(out_o, need)
        for t in range(n):
            out_q[n_out] = k
            out_s[n_out] = scratch[4, t]
            out_o[n_out] = scratch[5, t]
            n_out += 1
        size_x = np.int64(xt.shape[0]) + np.int64(u)
        if size_x == 0 or x_ptr[k] == x_ptr[k + 1]:
            continue
        bx = bitmap(xt, 0, xt.shape[0]) if use_bits else np.uint64(0)
        for e in range(x_ptr[k], x_ptr[k + 1]):
            y = x_set[e]
            size_y = s_indptr[y + 1] - s_indptr[y]
            if y >= limit or size_y < lo or size_y > hi:
                continue
            alpha = cached_overlap(code, p, q, size_x, size_y, cache, stamp | size_x)
            if use_bits and not bitmap_admits(size_x, size_y, bx, bits[y], alpha):
                continue
            o = merge(xt, 0, xt.shape[0], s_tokens, s_indptr[y], s_indptr[y + 1], 0, alpha)
            if o >= alpha:
                out_q[n_out] = k
                out_s[n_out] = y
                out_o[n_out] = o
                n_out += 1
    return out_q[:n_out], out_s[:n_out], out_o[:n_out]


@kernel
def dedup(indptr, tokens, bits, doc_set, s_lo, s_hi, code, p, q, list_ptr, post, v0, scratch, cache, d0, d1,
          kept_doc, active, kept, out_d, out_k, out_o, n_out):
    """Online near-duplicate removal over documents ``d0 .. d1 - 1`` in input order, continuing a run.

    ``doc_set[d]`` is document d's set (-1: none), probed with partner sizes
    ``s_lo[s] .. s_hi[s]``; the postings index every
    set, but a set answers probes only once a document holding it is kept
    (it is "added" then). A document is removed if its set is kept already, or
    if a probe (as in :func:`_probe`, with ``bits``, ``scratch`` and ``cache``)
    finds kept sets; it is charged to the most
    similar one, the earliest kept among equals. Otherwise it is kept and its
    set becomes visible.

    The run's state, carried from one call to the next (the caller takes the
    documents a block at a time, to report progress): ``kept_doc[s]`` the
    document that made set s visible (-1: none yet), ``active[s]`` whether it
    is, ``kept[d]`` whether document d was kept; removed documents are written
    as (document, kept document, overlap) to ``out_d``, ``out_k``, ``out_o``
    (int32, one slot per document) from ``n_out``. Returns the new ``n_out``.
    """
    m = indptr.shape[0] - 1
    stamp = next_stamp(cache)
    for d in range(d0, d1):
        s = doc_set[d]
        if s < 0:
            continue
        size = indptr[s + 1] - indptr[s]
        if active[s]:
            # An identical set is kept: a duplicate, unless even identical sets miss (overlap k > size).
            if required_overlap(code, p, q, size, size) <= size:
                out_d[n_out] = d
                out_k[n_out] = kept_doc[s]
                out_o[n_out] = size
                n_out += 1
            else:
                kept[d] = True
            continue
        xt = tokens[indptr[s]:indptr[s + 1]]
        n = _probe(xt, 0, s_lo[s], s_hi[s], m, active, code, p, q, indptr, tokens, bits, list_ptr, post, v0,
                   scratch, cache, stamp)
        res_s = scratch[4]
        res_o = scratch[5]
        if n == 0:
            active[s] = True
            kept_doc[s] = d
            kept[d] = True
            continue
        best = 0
        for t in range(1, n):
            y = res_s[t]
            b = res_s[best]
            c = more_similar(code, size, res_o[t], indptr[y + 1] - indptr[y], res_o[best], indptr[b + 1] - indptr[b])
            if c > 0 or (c == 0 and kept_doc[y] < kept_doc[b]):
                best = t
        out_d[n_out] = d
        out_k[n_out] = kept_doc[res_s[best]]
        out_o[n_out] = res_o[best]
        n_out += 1
    return n_out


@kernel(wraps=True)
def _entry_hash(key, s, k, w, size):
    """A keyed 64-bit hash of one posting: set ``s``, position ``k``, token slot ``w``, set size
    (``key``: five random uint64, the last four odd)."""
    return mix64(key[0] ^ (np.uint64(s) * key[1]) ^ (np.uint64(k) * key[2]) ^ (np.uint64(w) * key[3])
                 ^ (np.uint64(size) * key[4]))


@kernel(wraps=True)
def check_postings(indptr, tokens, index_len, list_ptr, post, low, v0, key):
    """Whether the sets and postings of an index file are what :func:`build_postings` makes of those sets.

    Assumes only that ``indptr`` rises from 0 to ``len(tokens)``, ``list_ptr``
    from 0 to ``len(post)``, and ``0 <= index_len[s] <=`` the size of set s (its
    indexing prefix); everything else is what it checks, in one sequential pass
    over the sets and one over the postings. Each set's ranks must lie in
    ``low .. v0 - 1`` and rise; each posting must name a set (``0 <= y < m``), a
    position below the size it gives, and keep its list in (size, set) order.
    That the postings are exactly the indexing prefixes (each (set, position,
    token, size) once) is checked by comparing the sums of a keyed hash over
    both (Clarke, Devadas, van Dijk, Gassend, Suh, "Incremental multiset hash
    functions", ASIACRYPT 2003): ``key`` (five uint64, the last four odd) is
    drawn at random for each check, so a file made to collide cannot be made
    in advance.

    Returns (code, where): 0 if all is well, else a ``CHECK_*`` code and the
    offending position in ``tokens`` or ``post``.
    """
    m = indptr.shape[0] - 1
    expected = np.uint64(0)
    count = 0
    for s in range(m):
        a = indptr[s]
        b = indptr[s + 1]
        for t in range(a, b):
            r = tokens[t]
            if r < low or r >= v0:
                return CHECK_TOKEN_RANGE, t
            if t > a and r <= tokens[t - 1]:
                return CHECK_TOKEN_ORDER, t
        for k in range(index_len[s]):
            expected += _entry_hash(key, s, k, slot_of(tokens[a + k], v0), b - a)
        count += index_len[s]
    if count != post.shape[0]:
        return CHECK_POSTINGS_COUNT, count
    found = np.uint64(0)
    for w in range(list_ptr.shape[0] - 1):
        for e in range(list_ptr[w], list_ptr[w + 1]):
            y = post[e, 0]
            j = post[e, 1]
            size = post[e, 2]
            if y < 0 or y >= m:
                return CHECK_POSTING_SET, e
            if j < 0 or j >= size:
                return CHECK_POSTING_POSITION, e
            if e > list_ptr[w] and (size < post[e - 1, 2] or (size == post[e - 1, 2] and (
                    j < post[e - 1, 1] or (j == post[e - 1, 1] and y <= post[e - 1, 0])))):
                return CHECK_POSTING_ORDER, e
            found += _entry_hash(key, y, j, w, size)
    if found != expected:
        return CHECK_POSTINGS_DIFFER, -1
    return 0, 0
