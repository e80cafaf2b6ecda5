"""The index and probe of large joins: postings compacted with their sets' signatures, probed in blocks.

On an index larger than the caches (10 M Zipf sets: 1.4 GB) the probe of
:func:`allpairs.exact._kernel.probe_verify` is mostly waiting on memory: each
posting list it visits is a random read, and so is each candidate's state and
tokens (docs/benchmarks.md, "Growth to 10 M sets"). Here the postings carry
their sets' size and signature, 32-bit where the sets allow (both written by
:func:`allpairs.exact._kernel.build_index`), and :func:`probe_blocked`
reorders the probe's memory accesses without changing its result: cache
blocking (Lam, Rothberg, Wolf, "The cache performance and optimizations of
blocked algorithms", ASPLOS 1991) of the AllPairs / PPJoin probe (Bayardo et
al. 2007; Xiao et al. 2008).
"""
import numpy as np

from ..measures._kernel import required_overlap
from ..verify._kernel import bitmap_admits, merge
from .._kernels.csr import grow_filled
from .._kernels.jit import kernel
from ._lists import COMPACT_SHIFT, gallop, posting_shift, prefetch, window_start

#: A half's shift (a signature's halves in ``post_bits``).
_U32 = np.uint64(32)

#: A join's postings are 32-bit (:func:`allpairs.exact._kernel.build_index`) below this many sets, and where no
#: set is longer than :data:`COMPACT_MAX_SIZE`: the set then fits above the bound in 32 bits.
COMPACT_MAX_SETS = 1 << (32 - COMPACT_SHIFT)
COMPACT_MAX_SIZE = (1 << COMPACT_SHIFT) - 1


#: Probe sets a block of :func:`probe_blocked` (a task's range, cut at equal cost, may hold fewer). Tried on the
#: 1 M and 10 M Zipf sets (t = 0.5): 16,384 and 32,768 alike, 262,144 slower at both (the block's visits and
#: hits outgrow a core's level-2 cache), 1,048,576 no faster than the probe set by set at 10 M. With the live
#: start prefetched (session 56; the probe alone on captured arguments, interleaved, load 1.0): 32,768 / 65,536
#: / 131,072 took 8.90 / 8.26 / 8.26 s at 10 M (medians of 3) and 0.542 / 0.530 / 0.546 s at 1 M (of 7).
BLOCK_SETS = 1 << 16
#: The most buckets :func:`probe_blocked` sorts a block's visits into (:func:`bucket_shift`). Each is a stream the
#: sort writes and a count it zeroes and sums per block: with 8 lists a bucket, the 10 M Zipf sets' 8.4 M lists
#: made 1.05 M of them, each visit's placement a likely cache miss and 674 blocks' counts 5.7 GB to zero. On the
#: 1 M sets under callgrind with a 4 MiB last level (their index to that cache as 10 M sets' to a 32 MiB one):
#: 8 / 64 / 256 / 1,024 lists a bucket (110 k / 13.7 k / 3.4 k / 860 buckets) missed the last level 30.7 /
#: 26.1 / 25.7 / 25.8 M times, level 1 on writes 36.2 / 28.4 / 21.1 / 14.4 M and on reads 61.9 / 60.5 / 63.1 /
#: 64.8 M (a bucket's lists' lines stay in level 2 while its visits are read); with the real 32 MiB: 18.9 / 18.7 M.
MAX_BUCKETS = 1 << 14
#: Visits ahead of :func:`probe_blocked`'s turn at which a list's place in ``list_ptr`` and its cursor in ``front``
#: are prefetched (LIST_AHEAD), then (WINDOW_AHEAD) the first lines its window reads: where reaping has moved the
#: list's live start, many lines past its base, that start's line of postings and of records (64 bytes: 5.3
#: records), and as far as the live part goes, up to five more of records and one of postings. The 10 M Zipf
#: sets' probe alone (t = 0.5, interleaved in one process, load 1.0, medians of 3): the base's first lines two
#: visits ahead 12.67-13.32 s; the live start's four ahead 11.82 s; with its next lines 10.16-10.75 s (3, 4 or 6
#: visits ahead alike; 2 or 8 more lines of records alike); and with each visit's token kept beside it (``vt``:
#: the lookups ahead read no block's tokens, which a core's level-2 cache does not hold at 10 M) 9.01 s against
#: 13.18 s (4 rounds), the 1 M stage by callgrind 4,915.7 -> 4,886.1 M instructions.
LIST_AHEAD = 16
WINDOW_AHEAD = 4
#: Dead postings a window of :func:`probe_blocked` must have met for it to be compacted (its ``reap``). The 1 M
#: Zipf sets' join stage (t = 0.5, callgrind, 32 MiB last level): none 7.09 G instructions, 34.4 M last-level
#: read misses; 1: 5.88 G, 29.8 M; 2: 5.83 G, 30.1 M; 8: 5.86 G, 31.1 M.
REAP_MIN_DEAD = 2
#: A probe set with at most this many hits in :func:`probe_blocked` counts its candidates by matching each hit
#: against the sets it met so far, not in the state (a random read per hit, beyond the caches at 10 M sets).
LOCAL_HITS = 16


def bucket_shift(n_lists: int) -> int:
    """Log2 of the posting lists of a bucket of :func:`probe_blocked`'s visits: at most :data:`MAX_BUCKETS`
    buckets. A probe set's visits come in token order whatever the shift, and so do its pairs."""
    return max(0, (n_lists - 1).bit_length() - MAX_BUCKETS.bit_length() + 1)


@kernel
def alpha_table(code, p, q, largest):
    """α of every pair of sizes up to ``largest`` (int32 (largest + 1, largest + 1): row ``|x|``, column ``|y|``)."""
    a = np.zeros((largest + 1, largest + 1), np.int32)
    for sx in range(1, largest + 1):
        for sy in range(1, largest + 1):
            a[sx, sy] = required_overlap(code, p, q, sx, sy)
    return a


@kernel
def probe_blocked(indptr, tokens, list_ptr, post, post_bits, bits, probe_len, win_lo, win_hi, stop_ptr, stop_of,
                  alpha2, lo, hi, block, tshift, state, touched, front, reap, out_x, out_y, out_a, n_out):
    """The pairs and candidates of :func:`allpairs.exact._kernel.probe_verify` for probe sets ``lo <= x < hi``, in
    its order, for its large joins' variant: a self-join (one class), signatures in the postings, no ``at``,
    candidates verified by merge; ``alpha2`` of :func:`alpha_table`.

    Cache blocking (Lam et al. 1991): the probe sets are taken ``block`` at a time. Their visits (probe set,
    prefix position; the probe's loop over x's prefix with its early stop) are bucketed by token, ``2^tshift``
    lists a bucket, by one stable counting sort; each list's window is then read as the probe reads it (size
    bound, cursor in ``front``, positional and bitmap bounds at each posting), but the block's visits to nearby
    lists come together: on 10 M sets, a list is visited about once in 14,000 probe sets, and in its visit's
    turn by every probe set of the block that needs it, its lines in cache. Hits (a posting passing both
    bounds: probe set, y, position, |y|) are grouped by probe set by a second stable counting sort, which
    leaves each set's hits in its probe's order (its visits in token order, hence position order; a list's
    postings in list order); each set's candidates are then counted and verified as the probe does, the state
    and tokens of the hits ahead prefetched. Same ``state``, ``touched`` and ``front`` scratch, same output.

    ``reap`` > 0 (one thread probing every set in order, ``front`` all zero at the start; 0: none): dead
    postings are taken out of the lists as the probe reads them. The probe sets come in increasing size and
    each list's visits in increasing x, so a posting whose position admits no probe of x's size, or that lies
    below x's size window, admits no later probe either; yet every later window over it read it again. A
    window that met ``reap`` of them has its live postings and their records moved to its end in order, and
    ``front[w]`` then marks the list's live start: the same pairs in the same order, fewer lines read (10 M
    Zipf sets, t = 0.5: entries read 3,855 M -> 1,260 M, 51 M moved). ``post`` and ``post_bits`` are spent.
    Assumes clean input (as the probe's).
    """
    shift = posting_shift(post)
    low = (np.int64(1) << shift) - 1
    n_lists = list_ptr.shape[0] - 1
    nb = (n_lists >> tshift) + 2
    cnt = np.zeros(nb, np.int64)
    hcnt = np.zeros(block + 1, np.int64)
    n_visits = np.empty(block, np.int32)  # per probe set of the block: its prefix positions visited
    vcap = np.int64(1024)
    vx = np.empty(vcap, np.int32)
    vi = np.empty(vcap, np.int32)
    vt = np.empty(vcap, np.int32)  # per visit: its token (its list), read ahead by the prefetches
    hcap = np.int64(1024)
    hx = np.empty(hcap, np.int32)
    hy = np.empty(hcap, np.int32)
    hi_ = np.empty(hcap, np.int32)
    hs = np.empty(hcap, np.int32)
    sy = np.empty(hcap, np.int32)
    si = np.empty(hcap, np.int32)
    ss = np.empty(hcap, np.int32)
    # Per set met by the probe set being counted (its hit slot, beside its place in ``touched``): its count of
    # matches so far, the position of the last in x, its size.
    slot_c = np.empty(64, np.int32)
    slot_i = np.empty(64, np.int32)
    slot_s = np.empty(64, np.int32)
    n_cand = 0
    for b0 in range(lo, hi, block):
        b1 = min(b0 + block, hi)
        # The block's visits counted by bucket, then placed (stable: by probe set, then position, in a bucket).
        nv = 0
        for x in range(b0, b1):
            xs = indptr[x]
            row = stop_ptr[np.uint64(indptr[x + 1] - xs)]
            i = 0
            while i < probe_len[x] and min(win_hi[x], stop_of[np.uint64(row + i)]) > win_lo[x]:
                cnt[np.uint64((np.int64(tokens[np.uint64(xs + i)]) >> tshift) + 1)] += 1
                i += 1
            n_visits[x - b0] = i
            nv += i
        for b in range(1, nb):  # the buckets' starts
            cnt[b] += cnt[b - 1]
        if nv > vcap:
            vcap = max(nv, 2 * vcap)
            vx = np.empty(vcap, np.int32)
            vi = np.empty(vcap, np.int32)
            vt = np.empty(vcap, np.int32)
        for x in range(b0, b1):
            xs = indptr[x]
            for i in range(n_visits[x - b0]):
                t = tokens[np.uint64(xs + i)]
                b = np.uint64(np.int64(t) >> tshift)
                e = np.uint64(cnt[b])
                vx[e] = x - b0
                vi[e] = i
                vt[e] = t
                cnt[b] = e + np.uint64(1)
        cnt[:] = 0
        # Each visit's window read as the probe reads it; its hits kept in visit order.
        # The hits' buffers are grown outside the loop over visits (a window that does not fit ends it; the
        # visit is read again, its cursor in front already moved): an array reassigned inside a hot loop is a
        # loop-carried variable, reference counted on every iteration (callgrind, 1 M stage: 44 M calls).
        nh = 0
        v = 0
        need = 0
        while v < nv:
            if nh + need > hcap:
                hcap = max(2 * hcap, nh + need)
                hx = grow_filled(hx, nh, hcap)
                hy = grow_filled(hy, nh, hcap)
                hi_ = grow_filled(hi_, nh, hcap)
                hs = grow_filled(hs, nh, hcap)
            while v < nv:
                uv = np.uint64(v)  # (v runs on from the last pass: unsigned, no wraparound test on its indexes)
                if v + LIST_AHEAD < nv:  # the list's place in list_ptr and its cursor, a few visits early
                    tf = np.uint64(vt[uv + np.uint64(LIST_AHEAD)])
                    prefetch(list_ptr, tf)
                    prefetch(front, tf)
                if v + WINDOW_AHEAD < nv:  # the lines the visit will read first: where its window may start
                    tn = np.uint64(vt[uv + np.uint64(WINDOW_AHEAD)])
                    en = list_ptr[tn]
                    if reap > 0:  # the live start, maybe lines past the list's base, and the records after it
                        en += np.int64(front[tn])
                        nn = list_ptr[tn + np.uint64(1)] - en
                        if nn > 5:  # more than a line of records: the next two
                            prefetch(post_bits, np.uint64(3 * en + 16))
                            prefetch(post_bits, np.uint64(3 * en + 32))
                            if nn > 16:  # more than a line of postings: their next, and three more of records
                                prefetch(post, np.uint64(en + 16))
                                prefetch(post_bits, np.uint64(3 * en + 48))
                                prefetch(post_bits, np.uint64(3 * en + 64))
                                prefetch(post_bits, np.uint64(3 * en + 80))
                    prefetch(post, np.uint64(en))
                    prefetch(post_bits, np.uint64(3 * en))
                xl = vx[uv]
                x = b0 + xl
                i = vi[uv]
                xs = indptr[x]
                size_x = indptr[x + 1] - xs
                stop = min(win_hi[x], stop_of[np.uint64(stop_ptr[np.uint64(size_x)] + i)])
                start_key = np.int64(win_lo[x]) << shift
                stop_key = np.int64(stop) << shift
                bx = bits[x]
                ux = np.uint64(size_x)
                w = np.uint64(vt[uv])
                base = list_ptr[w]
                end = list_ptr[w + np.uint64(1)]
                f = base
                if reap > 0:  # the list's live part starts at front[w]: what lies before it is dead
                    f = base + np.int64(front[w])
                    if f < end and np.int64(post[np.uint64(f)]) < start_key:
                        f = gallop(post, f + 1, end, start_key)
                        front[w] = f - base  # below the window: dead for the probes to come too
                else:
                    f = window_start(post, front, w, base, end, start_key)
                if nh + (end - f) > hcap:
                    need = end - f
                    break
                k_end = end
                dead = 0
                for k in range(f, end):
                    uk = np.uint64(k)
                    val = np.int64(post[uk])
                    if val >= stop_key:
                        k_end = k
                        break
                    if size_x > (val & low):
                        dead += 1
                        continue
                    size_y = np.int64(post_bits[uk, 0])
                    if not bitmap_admits(size_x, size_y, bx,
                                         np.uint64(post_bits[uk, 1]) | (np.uint64(post_bits[uk, 2]) << _U32),
                                         alpha2[ux, np.uint64(size_y)]):
                        continue
                    hx[nh] = xl
                    hy[nh] = val >> shift
                    hi_[nh] = i
                    hs[nh] = size_y
                    nh += 1
                if reap > 0 and dead >= reap:
                    # The window's live postings moved to its end, in order, their records with them: no later
                    # probe (as large or larger) reads the dead ones again.
                    j = k_end
                    for k in range(k_end - 1, f - 1, -1):
                        uk = np.uint64(k)
                        val = np.int64(post[uk])
                        if size_x <= (val & low):
                            j -= 1
                            if j != k:
                                uj = np.uint64(j)
                                post[uj] = post[uk]
                                post_bits[uj, 0] = post_bits[uk, 0]
                                post_bits[uj, 1] = post_bits[uk, 1]
                                post_bits[uj, 2] = post_bits[uk, 2]
                    front[w] = j - base
                v += 1
        # The hits grouped by probe set, each set's in its probe's order.
        for h in range(nh):
            hcnt[np.uint64(hx[h] + 1)] += 1
        most = np.int64(0)  # the most hits of a probe set in the block
        for b in range(1, b1 - b0 + 1):
            most = max(most, hcnt[b])
            hcnt[b] += hcnt[b - 1]
        if nh > sy.shape[0]:
            sy = np.empty(hcap, np.int32)
            si = np.empty(hcap, np.int32)
            ss = np.empty(hcap, np.int32)
        if most > slot_c.shape[0]:
            slot_c = np.empty(2 * most, np.int32)
            slot_i = np.empty(2 * most, np.int32)
            slot_s = np.empty(2 * most, np.int32)
        for h in range(nh):
            b = np.uint64(hx[h])
            e = np.uint64(hcnt[b])
            sy[e] = hy[h]
            si[e] = hi_[h]
            ss[e] = hs[h]
            hcnt[b] = e + np.uint64(1)
        # Each probe set's candidates counted and verified, as the probe does. The output's buffers are grown
        # outside the loop over probe sets, as the hits' are: a set whose pairs may not fit ends it, and is
        # verified once they are grown (its candidates counted already).
        h = 0
        x = b0
        n_touched = 0
        counted = False
        while x < b1:
            if counted:
                cap = max(2 * out_x.shape[0], n_out + n_touched)
                out_x = grow_filled(out_x, n_out, cap)
                out_y = grow_filled(out_y, n_out, cap)
                out_a = grow_filled(out_a, n_out, cap)
            while x < b1:
                xu = np.uint64(x)
                he = hcnt[np.uint64(x - b0)]
                xs = indptr[xu]
                xe = indptr[xu + np.uint64(1)]
                size_x = xe - xs
                if not counted:
                    n_touched = 0
                    if he - h <= LOCAL_HITS:
                        # Few hits: each matched against the sets this probe set met so far, in its hit slots;
                        # no read of the state, which on 10 M sets (160 MB) misses a cache at every hit.
                        while h < he:
                            if h + 24 < nh:  # the start and tokens of the sets met a few hits on: random reads
                                prefetch(indptr, np.uint64(sy[h + 24]))
                            if h + 12 < nh:
                                prefetch(tokens, np.uint64(indptr[np.uint64(sy[h + 12])]))
                            y = sy[h]
                            t = 0
                            while t < n_touched and touched[np.uint64(t)] != y:
                                t += 1
                            ut = np.uint64(t)
                            if t == n_touched:
                                touched[ut] = y
                                n_touched += 1
                                slot_c[ut] = 0
                                slot_s[ut] = ss[h]
                            slot_c[ut] += 1
                            slot_i[ut] = si[h]
                            h += 1
                    else:
                        while h < he:
                            if h + 24 < nh:  # the state and tokens of the sets met a few hits on: random reads
                                ya = np.int64(sy[h + 24])
                                prefetch(state, np.uint64(4 * ya))
                                prefetch(indptr, np.uint64(ya))
                            if h + 12 < nh:
                                prefetch(tokens, np.uint64(indptr[np.uint64(sy[h + 12])]))
                            y = sy[h]
                            uy = np.uint64(y)
                            c = state[uy, 0]
                            if c == 0:
                                touched[np.uint64(n_touched)] = y
                                n_touched += 1
                                state[uy, 3] = ss[h]
                            state[uy, 0] = c + 1
                            state[uy, 1] = si[h]
                            h += 1
                        for t in range(n_touched):  # into the hit slots, the state zero again
                            ut = np.uint64(t)
                            uy = np.uint64(touched[ut])
                            slot_c[ut] = state[uy, 0]
                            slot_i[ut] = state[uy, 1]
                            slot_s[ut] = state[uy, 3]
                            state[uy, 0] = 0
                    if n_out + n_touched > out_x.shape[0]:
                        counted = True
                        break
                counted = False
                for t in range(n_touched):
                    ut = np.uint64(t)
                    y = touched[ut]
                    uy = np.uint64(y)
                    c = slot_c[ut]
                    size_y = slot_s[ut]
                    alpha = np.int64(alpha2[np.uint64(size_x), np.uint64(size_y)])
                    ys = indptr[uy]
                    # y's last counted match is x's, found by its token among y's sorted tokens (in y's prefix).
                    yj = ys
                    tx = tokens[np.uint64(xs + slot_i[ut])]
                    while tokens[np.uint64(yj)] != tx:
                        yj += 1
                    n_cand += 1
                    o = merge(tokens, xs + slot_i[ut] + 1, xe, tokens, yj + 1, ys + size_y, np.int64(c), alpha)
                    if o >= alpha:
                        out_x[np.uint64(n_out)] = x
                        out_y[np.uint64(n_out)] = y
                        out_a[np.uint64(n_out)] = o
                        n_out += 1
                x += 1
        hcnt[:] = 0
    return out_x, out_y, out_a, n_out, n_cand

