"""Compiled kernels of the exact join: prefix index and PPJoin probing, for every measure.

Bayardo, Ma, Srikant, "Scaling up all pairs similarity search", WWW 2007
(AllPairs: indexing prefix, size bound); Xiao, Wang, Lin, Yu, "Efficient
similarity joins for near duplicate detection", WWW 2008 (PPJoin: positional
bound); Sandes, Teodoro, Melo, "Bitmap filter: speeding up exact set
similarity joins with bitwise operations", Information Systems 2020 (a 64-bit
signature per set bounds the overlap before verification). Every bound
arrives from :mod:`allpairs.measures` as an array (prefix lengths, the window
of partner sets) or scalars (the measure's code and ``p/q`` for α of each
pair, :func:`allpairs.measures._kernel.required_overlap`).

Kernels assume clean input: sets sorted by size, tokens strictly increasing
within each set, prefix lengths within [0, |set|], windows within [0, m].
Values read from int32 arrays are widened to int64 before arithmetic that
could leave 32 bits, as numba does by itself and numpy scalars (the plain
path) do not.
"""
import numpy as np

from ..measures._kernel import largest_other_size, required_overlap
from ..verify._kernel import bitmap_admits, count_marked, mark_tokens, merge, unmark_tokens
from .._kernels.csr import grow_filled
from .._kernels.jit import kernel
from ._lists import COMPACT_SHIFT, lower_bound, posting_shift, prefetch, window_start


@kernel
def first_match_bounds(indptr, index_len, probe_len, at, code, p, q):
    """Both positional bounds at a pair's first match, per set size and position, for :func:`build_index`
    and :func:`probe_verify` to read instead of working α out.

    A pair's first common token lies at ``i <= |x| - α(|x|, |y|)`` in the
    probe set x and at ``j <= |y| - α`` in y (Xiao et al. 2008, Lemma 2), and
    α (the measure's ``code``, ``p/q``) does not fall as either size grows.
    Returns CSR by size (row ``s``: ``ptr[s]:ptr[s + 1]``, one entry per
    position a set of that size indexes, or probes, at its deepest):

    - ``x_ptr`` int64 (largest + 2), ``x_max`` int32: for an indexed set of
      size s, position j, the largest probe size |x| with ``α <= s - j`` (-1:
      none; at most the largest size);
    - ``stop_ptr`` int64 (largest + 2), ``stop_of`` int64: for a probe set
      of size s, position i, the first set larger than the largest partner
      size |y| with ``α <= s - i`` (sets are sorted by size: a posting list,
      sorted by set, holds none it admits from there on).

    Positions are ``at``'s where it is not empty (:func:`probe_verify`),
    below the set's size and increasing along the prefixes. Each row is a
    few steps down from its last position's answer, or a search
    (:func:`allpairs.measures._kernel.largest_other_size`); rows are as long as the prefixes need.
    """
    m = indptr.shape[0] - 1
    has_at = at.shape[0] > 0
    largest = np.int64(0)
    for s in range(m):
        largest = max(largest, indptr[s + 1] - indptr[s])
    x_ptr = np.zeros(largest + 2, np.int64)  # row lengths at s + 1, then summed
    stop_ptr = np.zeros(largest + 2, np.int64)
    at_most = np.zeros(largest + 1, np.int64)  # sets of size s or less (summed from counts)
    for s in range(m):
        start = indptr[s]
        size = np.uint64(indptr[s + 1] - start)
        at_most[size] += 1
        d = index_len[s]  # positions down to the deepest, at its prefix's end
        if has_at and d > 0:
            d = np.int64(at[np.uint64(start + d - 1)]) + 1
        if d > x_ptr[size + np.uint64(1)]:
            x_ptr[size + np.uint64(1)] = d
        d = probe_len[s]
        if has_at and d > 0:
            d = np.int64(at[np.uint64(start + d - 1)]) + 1
        if d > stop_ptr[size + np.uint64(1)]:
            stop_ptr[size + np.uint64(1)] = d
    for s in range(1, largest + 1):
        at_most[s] += at_most[s - 1]
    for s in range(1, largest + 2):
        x_ptr[s] += x_ptr[s - 1]
        stop_ptr[s] += stop_ptr[s - 1]
    x_max = np.empty(x_ptr[largest + 1], np.int32)
    stop_of = np.empty(stop_ptr[largest + 1], np.int64)
    for size in range(largest + 1):
        v = largest
        for j in range(x_ptr[size + 1] - x_ptr[size]):
            v = largest_other_size(code, p, q, size, size - j, v, False)
            x_max[x_ptr[size] + j] = v
        v = largest
        for i in range(stop_ptr[size + 1] - stop_ptr[size]):
            v = largest_other_size(code, p, q, size, size - i, v, True)
            stop_of[stop_ptr[size] + i] = at_most[v] if v >= 0 else 0
    return x_ptr, x_max, stop_ptr, stop_of


@kernel
def list_counts(indptr, tokens, num_tokens, index_len, set_class, n_classes):
    """The index's lists (:func:`build_index`) counted: int64 (num_tokens * n_classes + 2), zero but for list w's
    length, an int32 at ``w`` of its last ``4 * (len - 2)`` bytes (:func:`list_lengths`): the probe's cost, and
    so whether postings carry signatures, is known before any posting is written. :func:`list_starts` then
    makes it the fill cursors (``ptr[w + 1]`` list w's, ending where list w + 1 starts; after the fill ``[:-1]``
    is ``list_ptr``) in place.

    The lengths are incremented, and read by :func:`probe_cost`, at random: as int32 they take half the
    lines of int64 (10 M Zipf sets: 40 MB, not 80, against a 32 MiB last level)."""
    m = indptr.shape[0] - 1
    n_lists = num_tokens * n_classes
    ptr = np.zeros(n_lists + 2, np.int64)
    counts = ptr.view(np.int32)[n_lists + 4:]
    # Arrays are read at unsigned indexes (np.uint64): numba then emits no code for negative ones.
    for s in range(m):
        c = np.int64(set_class[s])
        start = indptr[s]
        for k in range(index_len[s]):
            counts[np.uint64(np.int64(tokens[np.uint64(start + k)]) * n_classes + c)] += 1
    return ptr


@kernel
def counted_lists(indptr, tokens, num_tokens, index_len, probe_len):
    """:func:`list_counts` and :func:`probe_cost` of a self-join of one class in one pass over the sets, each
    set's cost counting only the postings of the sets before it: the ones its probe reads (AllPairs, Bayardo et
    al. 2007, probes each set against the sets indexed before it), so a tighter bound, about half the other on
    average, and the join cut into fewer, larger tasks. A set's lists are read for its cost where they are then
    written (its indexing prefix starts its probing one), not in a pass of their own: on 10 M Zipf sets each
    pass is ~100 M reads at random in 34 MB of lengths. Returns (``list_counts``' array, cost)."""
    m = indptr.shape[0] - 1
    ptr = np.zeros(num_tokens + 2, np.int64)
    counts = ptr.view(np.int32)[num_tokens + 4:]
    cost = np.empty(m, np.int64)
    for x in range(m):
        start = indptr[x]
        c = probe_len[x]
        for i in range(probe_len[x]):
            c += counts[np.uint64(tokens[np.uint64(start + i)])]
        cost[x] = c
        for k in range(index_len[x]):
            counts[np.uint64(tokens[np.uint64(start + k)])] += 1
    return ptr, cost


def list_lengths(ptr: np.ndarray) -> np.ndarray:
    """The lists' lengths in :func:`list_counts`'s array, before :func:`list_starts` (an int32 view)."""
    return ptr.view(np.int32)[len(ptr) + 2:]


@kernel
def list_starts(ptr):
    """:func:`list_counts`'s array made the lists' fill cursors in place: ``ptr[w + 2]`` the lengths of lists 0
    to w summed. The int64 at ``w + 2`` overlies int32 lengths of lists below w only (those at ``len + 2`` on),
    each read before it is written over."""
    n_lists = ptr.shape[0] - 2
    counts = ptr.view(np.int32)[n_lists + 4:]
    total = np.int64(0)
    for w in range(n_lists):
        total += counts[np.uint64(w)]
        ptr[np.uint64(w + 2)] = total


@kernel
def build_index(indptr, tokens, index_len, set_class, n_classes, at, x_ptr, x_max, ptr, bits, post, post_size,
                records):
    """Inverted index of each set's first ``index_len[s]`` tokens, one list per (token, class), written at the
    fill cursors of :func:`list_counts` (``ptr``, spent: ``ptr[:-1]`` is then ``list_ptr``).

    List ``w * n_classes + c`` holds the sets of class ``c`` (a side of an R–S
    join; one class in a self-join) whose indexed prefix holds token ``w``.
    Per posting, ``post`` (int64, or uint32 of :data:`COMPACT_SHIFT`: the shift
    of :func:`posting_shift`): the set above the shift, and below it the largest
    probe size it admits a first match of (``x_max`` of
    :func:`first_match_bounds` at its position, 0 for none: ``at[e]`` for the
    token at ``e`` when ``at`` is not empty, its position in another order of
    the set, :func:`probe_verify`); and the set's size in ``post_size``
    (int32), or where ``records`` is not empty, its size and the low and high
    halves of its signature (``bits``) in ``records`` (uint32, postings x 3:
    :func:`probe_verify`'s ``post_bits``), written as the posting is, its set
    at hand (10 M Zipf sets: no gather of 71.5 M signatures afterwards). The
    probe reads the first of every posting it meets, the rest only of one that
    passes the bound: side by side, a list's visit starts with one cache miss,
    not two. Sets enter in order, so each list is sorted by set, hence by size,
    and so is ``post``. Assumes clean input.
    """
    shift = posting_shift(post)
    has_at = at.shape[0] > 0
    with_records = records.shape[0] > 0
    for s in range(indptr.shape[0] - 1):
        c = np.int64(set_class[s]) + 1
        start = indptr[s]
        size = indptr[s + 1] - start
        row = x_ptr[np.uint64(size)]
        high = np.int64(s) << shift
        sig = bits[np.uint64(s)] if with_records else np.uint64(0)
        for k in range(index_len[s]):
            j = np.int64(at[np.uint64(start + k)]) if has_at else np.int64(k)
            w = np.uint64(np.int64(tokens[np.uint64(start + k)]) * n_classes + c)
            e = np.uint64(ptr[w])
            post[e] = high | max(np.int64(x_max[np.uint64(row + j)]), 0)
            if with_records:
                records[e, 0] = size
                records[e, 1] = sig & np.uint64(0xFFFFFFFF)
                records[e, 2] = sig >> np.uint64(32)
            else:
                post_size[e] = size
            ptr[w] = e + np.uint64(1)


@kernel
def build_index_by_range(indptr, tokens, index_len, set_class, n_classes, at, x_ptr, x_max, ptr, bits, post, records,
                         range_postings):
    """:func:`build_index`'s 32-bit postings and records, the same index, written in two passes that keep their
    write streams in cache: each posting first appended, in set order, to the part of ``post`` and ``records``
    of its range of ``2^range_shift`` lists (a partitioned scatter, as radix sorts and hash joins partition
    first: Manegold, Boncz, Kersten, "Optimizing main-memory join on modern hardware", TKDE 2002), its list
    and set's size packed in the record's first word; then each range's part, in cache, copied aside and
    written out in list order. A range is the largest power of two of lists that holds at most
    ``range_postings`` postings on average, and at most 2^24 lists.

    One posting is written to one of ~8 M lists at random on 10 M Zipf sets (1.14 GB of postings and
    records): each write a line from memory. Here the first pass writes to one line of each range's part
    (~1,200 ranges of ~60,000 postings), and the second moves the postings within a part of ~1 MB (10 M
    sets, pages already faulted in: 1.24 -> 0.67 s; 2^11 to 2^17 lists a range tried). Each list gets its
    postings in set order, as from :func:`build_index`. Assumes clean input and ``post`` uint32 (sets of at most
    255 tokens: the size fits below the list in the record's first word).
    """
    shift = posting_shift(post)
    has_at = at.shape[0] > 0
    n_lists = ptr.shape[0] - 2
    per_range = n_lists * range_postings // max(ptr[n_lists + 1], 1)  # lists a range may hold
    range_shift = 0
    while range_shift < 24 and np.int64(2) << range_shift <= per_range:
        range_shift += 1
    n_ranges = (n_lists >> range_shift) + 1
    part = np.empty(n_ranges + 1, np.int64)  # range r's part of post: part[r]:part[r + 1]; its fill cursor at r
    for r in range(n_ranges + 1):
        part[r] = ptr[min(r << range_shift, n_lists) + 1]
    for s in range(indptr.shape[0] - 1):
        c = np.int64(set_class[s])
        start = indptr[s]
        size = indptr[s + 1] - start
        row = x_ptr[np.uint64(size)]
        high = np.int64(s) << shift
        sig = bits[np.uint64(s)]
        for k in range(index_len[s]):
            j = np.int64(at[np.uint64(start + k)]) if has_at else np.int64(k)
            w = np.int64(tokens[np.uint64(start + k)]) * n_classes + c
            r = np.uint64(w >> range_shift)
            e = np.uint64(part[r])
            post[e] = high | max(np.int64(x_max[np.uint64(row + j)]), 0)
            records[e, 0] = (w - (np.int64(r) << range_shift)) << 8 | size
            records[e, 1] = sig & np.uint64(0xFFFFFFFF)
            records[e, 2] = sig >> np.uint64(32)
            part[r] = e + np.uint64(1)
    # part[r] is now where range r + 1's part starts: each part copied aside, then its postings put in place.
    longest = np.int64(0)
    for r in range(n_ranges):
        longest = max(longest, part[r] - (part[r - 1] if r else ptr[1]))
    held = np.empty(longest, post.dtype)
    held_records = np.empty((longest, 3), np.uint32)
    lo = ptr[1]
    for r in range(n_ranges):
        hi = part[r]
        n = hi - lo
        held[:n] = post[lo:hi]
        held_records[:n] = records[lo:hi]
        first = (np.int64(r) << range_shift) + 1  # ptr's index of the range's first list
        for i in range(n):
            word = np.int64(held_records[i, 0])
            w = np.uint64(first + (word >> 8))
            e = np.uint64(ptr[w])
            post[e] = held[i]
            records[e, 0] = word & 0xFF
            records[e, 1] = held_records[i, 1]
            records[e, 2] = held_records[i, 2]
            ptr[w] = e + np.uint64(1)
        lo = hi


@kernel
def probe_cost(indptr, tokens, lengths, probe_len, set_class, compat, n_classes):
    """Posting entries each set's probing prefix would scan (an upper bound on its work), from the lists'
    ``lengths`` (:func:`list_lengths`)."""
    m = indptr.shape[0] - 1
    cost = np.empty(m, np.int64)
    for x in range(m):
        c = probe_len[x]
        start = indptr[x]
        if n_classes == 1:  # a self-join: one list per token (unsigned indexes: no code for negative ones)
            for i in range(probe_len[x]):
                c += lengths[np.uint64(tokens[np.uint64(start + i)])]
        else:
            cx = set_class[x]
            for i in range(probe_len[x]):
                w = np.int64(tokens[start + i]) * n_classes
                for cy in range(n_classes):
                    if compat[cx, cy]:
                        c += lengths[w + cy]
        cost[x] = c
    return cost


@kernel
def count_match(y, i, j, size_x, size_y, alpha, count, last_i, last_j, touched, n_touched):
    """Count a prefix match x[i] = y[j] for candidate y (``count[y] >= 0``); return the new ``n_touched``.

    A first match adds y to ``touched``. The candidate is dropped (``count[y] =
    -1``) once the positional bound ``A + 1 + min(|x| - i - 1, |y| - j - 1)``
    falls below α (Xiao et al. 2008, Lemma 2), else its count and the match's
    positions are kept for verification to resume after.
    """
    c = count[y]
    if c == 0:
        touched[n_touched] = y
        n_touched += 1
    if c + 1 + min(size_x - i - 1, size_y - j - 1) >= alpha:
        count[y] = c + 1
        last_i[y] = i
        last_j[y] = j
    else:
        count[y] = -1
    return n_touched


#: A half's shift (a signature's halves in ``post_bits``).
_U32 = np.uint64(32)


@kernel
def probe_verify(indptr, tokens, list_ptr, post, post_size, post_bits, bits, at, live_len, probe_len, win_lo, win_hi,
                 stop_ptr, stop_of, set_class, compat, n_classes, code, p, q, lo, hi, state, touched, front, marks,
                 alpha_of, alpha_at, out_x, out_y, out_a, n_out):
    """Pairs that reach α among probe sets ``lo <= x < hi`` and the sets ``win_lo[x] <= y < win_hi[x]``.

    The window is the size bound (and which of each pair probes: the later set
    in a self-join, the earlier one in a containment join); its start in a
    list is found, where the list starts below it, from where the list's last
    visit found it (``front``, a cursor per list; :func:`gallop`): probe sets
    come in order, so windows only move on and a list's entries below them are
    stepped over once, as AllPairs drops them from the list's front (Bayardo et
    al. 2007); a window that moved back (ranges called out of order) is searched
    from the list's front. Only lists of a class compatible with x's are read.
    Candidates are dropped before verification unless their bitmap bound
    ``(|x| + |y| - popcount(b_x ^ b_y)) // 2`` (verify's ``bitmap_admits``) reaches α. Where the postings carry
    their sets' signatures (``post_bits``, uint32 (postings, 3): the set's size, then its signature's low
    and high halves, one record read only by a posting that passes the positional bound) the bound is applied
    to each posting before y's state is looked at: a set it rules out is never touched (on Zipf sets 98 % of
    the sets met, whose state is a random access into an array of m lines that outgrows the caches as m
    grows). Where they do not
    (``post_bits`` None: no signatures, or sets few enough for their state to stay in a core's cache,
    :data:`allpairs.exact.prefix.POSTED_BITS_MIN_SETS`), numba compiles a second variant of the kernel
    without the test (its branches are pruned by the argument's type), the instructions of a probe that
    never had it; ``bits[y]`` is then read at y's first posting that passes the positional bound (its state
    looked at: a set the bound rules out is no candidate, its state left unwritten; on distinct Kosarak 92 %
    of the sets met at t = 0.7), and a posting's size from ``post_size``. Each
    candidate left is verified
    at once, while x's tokens are in cache, from its last counted match on,
    stopping early: where ``marks`` is not empty (uint64, a bit per token of
    the order, all zero; left so) by looking each of y's tokens up among x's,
    marked there once per probe set (:func:`allpairs.verify._kernel.count_marked`),
    else by a merge (:func:`allpairs.verify._kernel.merge`; always with ``at``):
    no candidate is written out.

    A pair's first common token lies at ``i <= |x| - α`` in x and ``j <= |y| -
    α`` in y (the positional bound of Xiao et al. 2008, Lemma 2, at the first
    match). So a posting is read only while ``i <= |x| - α(|x|, |y|)`` (α grows
    with |y|, so the rest of the list is skipped too), and one with ``j > |y| -
    α`` is passed over without a look at y's state, as MPJoin's shortened index
    prefix would (Ribeiro, Härder 2009): it is no first match, and it and every
    later match of y (deeper still) are counted by verification, which resumes
    after the last match counted. Neither bound is worked out per posting:
    the first is a set where a list's scan stops, the first set of a size
    whose α exceeds ``|x| - i`` (lists are sorted by set, hence by size;
    ``stop_of`` of :func:`first_match_bounds`, row ``stop_ptr[|x|]``);
    the second one comparison, |x| against the largest probe size the
    posting admits (the low half of ``post``, :func:`build_index`; the low
    byte where a large join's postings are uint32, a variant of its own), and only a
    posting that passes it has its size read. In a large join (signatures in
    the postings) the lists of the next two probe tokens are prefetched while
    one is read (its place in ``list_ptr``, the head of its postings): on an
    index larger than the caches each is otherwise a miss the probe waits for.
    A candidate's last counted match in y is found again by its token, from
    y's front, for verification to resume after.

    ``at`` (int32, aligned with ``tokens``; empty: unused) gives each token's
    position in another order of its set, increasing along the prefixes
    probed and indexed (the index was built with it): both bounds then read
    those positions. The Spark engine's token-group task puts a set's live
    tokens first and passes their positions in the global order, where a pair
    of its group has no common token before its first live match, so that the
    bound holds there (:func:`allpairs.exact.prefix_join`'s ``at``).
    ``live_len`` (aligned with the sets) then counts each set's tokens below
    ``num_tokens``, first in it; the others follow, ``at`` increasing along
    them too. A candidate's last counted match in y is found again by its
    token (a search of y's first ``live_len`` tokens) for verification to
    resume after; before that, a candidate whose sets share a token not below
    ``num_tokens`` placed before their first match in the ``at`` order is
    dropped unverified: the first match is the last counted one when only
    one was counted, else the first of a merge of the two fronts; then the
    tokens not below ``num_tokens`` are merged only as far as its positions
    in ``at``. In the Spark task, that drops a pair whose first shared token
    is another group's: a few steps where the pair is kept, a whole merge
    spared where it is dropped.

    The entry point and its arguments are those of every caller (the
    pipeline's tasks, the Spark engine's and any block-by-block driver):
    any range ``lo:hi`` of probe sets may be passed, in any order of calls.

    Scratch, reused from call to call (a thread's own): ``state`` int32 (m, 4),
    column 0 zero (per set: the count A of prefix matches counted; left zero
    again), then i of a candidate's last counted match, a column unused and
    |y|, side by side so that a candidate costs one cache line; ``touched`` int32 (m,);
    ``front`` int32 (one per list of ``list_ptr``; any values at first, each checked before use: no pass to
    clear it, and only the lists that start below a window have theirs touched), where in the list its
    window last started;
    ``alpha_of`` int32 and ``alpha_at`` int64 (largest size + 1; ``alpha_at``
    -1): α per partner size, cached for the size of the current probe set (α
    depends on the two sizes only, so consecutive probe sets of one size share
    it; the scratch must not outlive one measure and threshold).

    Output: the pairs (x, y, overlap) are appended to ``out_x``, ``out_y``, ``out_a`` (int32, the same
    length) from position ``n_out`` on, so that consecutive calls fill one buffer and their pairs need no
    copy to be joined. Buffers without room for a probe set's candidates are doubled (their ``n_out`` pairs
    copied, fresh pages touched): the caller makes them as large as it expects the pairs to be.

    Returns the buffers (the same arrays, or larger ones holding the same first pairs), the position after
    the last pair, and the number of candidates verified (merged; not those dropped as another join's).
    """
    n_cand = 0
    has_at = at.shape[0] > 0
    by_marks = marks.shape[0] > 0 and not has_at
    # A posting is int64 (set << 32 | bound) or, compacted, uint32 (set << 8 | bound): constants of each variant.
    shift = posting_shift(post)
    low = (np.int64(1) << shift) - 1
    # post_bits is None or an array, a type known when numba compiles: each variant has only its own branches.
    # In the loops over postings and candidates, arrays are read at unsigned indexes (np.uint64): numba then
    # emits no code for negative ones (two to four instructions a read).
    for x in range(lo, hi):
        xs = indptr[x]
        xe = indptr[x + 1]
        size_x = xe - xs
        cx = set_class[x]
        start_set = win_lo[x]
        stop_set = win_hi[x]
        bx = bits[x]
        row = stop_ptr[np.uint64(size_x)]
        n_touched = 0
        plen = probe_len[x]
        next_len = probe_len[x + 1] if x + 1 < hi else 0  # the next probe set's prefix (its tokens follow x's)
        for i in range(plen):
            gi = np.int64(at[np.uint64(xs + i)]) if has_at else i
            # A first common token lies in x's first |x| - α + 1; α grows with |y|, so the sets of a list
            # from the first one of a size with a larger α on are passed over, as are the rest of x's tokens
            # once none is left (deeper in x: fewer still).
            stop = min(stop_set, stop_of[np.uint64(row + gi)])
            if stop <= start_set:
                break
            # The lists of the next probe tokens (x's, then the next set's) are random reads, each a likely miss
            # on an index larger than the caches: the list two tokens on has its place in list_ptr fetched, the
            # next one its head and its cursor in front. Only in the large joins' variant (signatures in the
            # postings): a small index stays in cache, and there the hints only cost (the Go sets: +10 %
            # instructions).
            # (Written out here, not as a kernel: a call that takes arrays costs numba two reference counts.)
            if post_bits is not None:
                if i + 2 < plen:
                    prefetch(list_ptr, np.uint64(np.int64(tokens[np.uint64(xs + i + 2)]) * n_classes))
                elif i + 2 - plen < next_len:
                    prefetch(list_ptr, np.uint64(np.int64(tokens[np.uint64(xe + i + 2 - plen)]) * n_classes))
                t1 = -1
                if i + 1 < plen:
                    t1 = np.int64(tokens[np.uint64(xs + i + 1)])
                elif i + 1 - plen < next_len:
                    t1 = np.int64(tokens[np.uint64(xe + i + 1 - plen)])
                if t1 >= 0:
                    e1 = list_ptr[np.uint64(t1 * n_classes)]
                    prefetch(post, np.uint64(e1))
                    prefetch(post_bits, np.uint64(3 * e1))
                    prefetch(front, np.uint64(t1 * n_classes))
            start_key = np.int64(start_set) << shift
            stop_key = np.int64(stop) << shift
            for cy in range(n_classes):
                if not compat[cx, cy]:
                    continue
                w = np.uint64(np.int64(tokens[np.uint64(xs + i)]) * n_classes + cy)
                # Size bound: the sets below the window skipped (:func:`window_start`); α changes only with |y|.
                last_size = -1
                end = list_ptr[w + np.uint64(1)]
                f = window_start(post, front, w, list_ptr[w], end, start_key)
                for k in range(f, end):
                    uk = np.uint64(k)
                    v = np.int64(post[uk])
                    if v >= stop_key:
                        break
                    # Positional bound at a first match, on y's side: α tokens from it on in y too (the largest
                    # probe size that allows, from the index). A later match this deep is left to verification,
                    # as is every one after it (deeper still).
                    if size_x > (v & low):
                        continue
                    y = v >> shift
                    size_y = post_size[uk] if post_bits is None else np.int64(post_bits[uk, 0])
                    if size_y != last_size:
                        last_size = size_y
                        if alpha_at[np.uint64(size_y)] != size_x:
                            alpha_at[np.uint64(size_y)] = size_x
                            alpha_of[np.uint64(size_y)] = required_overlap(code, p, q, size_x, size_y)
                        alpha = alpha_of[np.uint64(size_y)]
                    # Bitmap bound, read from the posting: a y it rules out is not touched at all.
                    if post_bits is not None and not bitmap_admits(
                            size_x, size_y, bx, np.uint64(post_bits[uk, 1]) | (np.uint64(post_bits[uk, 2]) << _U32),
                            alpha):
                        continue
                    uy = np.uint64(y)
                    c = state[uy, 0]
                    if c == 0:
                        # Bitmap bound, at y's first posting (signatures not in the postings): a y it rules out is
                        # no candidate, its state left as it was (a later posting of y asks again).
                        if post_bits is None and not bitmap_admits(size_x, size_y, bx, bits[uy], alpha):
                            continue
                        touched[np.uint64(n_touched)] = y
                        n_touched += 1
                        state[uy, 3] = size_y
                    state[uy, 0] = c + 1
                    state[uy, 1] = i
        # Room for every candidate's pair, looked at once per probe set: an array reassigned in the loop over
        # candidates would cost numba a reference count update per candidate.
        if n_out + n_touched > out_x.shape[0]:
            cap = max(2 * out_x.shape[0], n_out + n_touched)
            out_x = grow_filled(out_x, n_out, cap)
            out_y = grow_filled(out_y, n_out, cap)
            out_a = grow_filled(out_a, n_out, cap)
        if by_marks and n_touched > 0:  # x's tokens marked for its candidates' look-ups, cleared after them
            mark_tokens(marks, tokens, xs, xe)
        for t in range(n_touched):
            y = touched[np.uint64(t)]
            uy = np.uint64(y)
            c = state[uy, 0]  # at least 1: y met the bounds at its postings, the bitmap bound included
            state[uy, 0] = 0
            size_y = state[uy, 3]
            alpha = np.int64(alpha_of[np.uint64(size_y)])
            ys = indptr[uy]
            if not has_at:
                # y's last counted match is x's, found by its token among y's sorted tokens, from the front: it is
                # in y's prefix, and the merge reads the rest.
                yj = ys
                tx = tokens[np.uint64(xs + state[uy, 1])]
                while tokens[np.uint64(yj)] != tx:
                    yj += 1
            else:
                # y's last counted match is x's, found by its token among y's tokens below num_tokens.
                yl = ys + live_len[uy]
                ix = xs + state[uy, 1]
                yj = lower_bound(tokens, ys, yl, tokens[ix])
                # Their first match: the last counted one, or the first of a merge of the fronts.
                iy = yj
                if c > 1:
                    ix = xs
                    iy = ys
                    while tokens[ix] != tokens[iy]:
                        if tokens[ix] < tokens[iy]:
                            ix += 1
                        else:
                            iy += 1
                a = at[ix]
                b = at[iy]
                # A token never indexed that both hold before it in the at order (in both or in neither): not
                # this join's pair (a Spark task's: another token group's), dropped unverified.
                ix = xs + live_len[x]
                iy = yl
                ye = ys + size_y
                other = False
                while ix < xe and iy < ye and at[ix] < a and at[iy] < b:
                    u = tokens[ix]
                    v = tokens[iy]
                    if u == v:
                        other = True
                        break
                    ix += u < v
                    iy += u > v
                if other:
                    continue
            n_cand += 1
            if by_marks:  # y's tokens after its last counted match looked up among x's (marked)
                o = count_marked(marks, tokens, yj + 1, ys + size_y, np.int64(c), alpha, xe - xs - state[uy, 1] - 1)
            else:
                o = merge(tokens, xs + state[uy, 1] + 1, xe, tokens, yj + 1, ys + size_y, np.int64(c), alpha)
            if o >= alpha:
                out_x[np.uint64(n_out)] = x
                out_y[np.uint64(n_out)] = y
                out_a[np.uint64(n_out)] = o
                n_out += 1
        if by_marks and n_touched > 0:
            unmark_tokens(marks, tokens, xs, xe)
    return out_x, out_y, out_a, n_out, n_cand
