"""Compiled kernels of the LSH path: MinHash signatures, band keys, buckets.

Broder, "On the resemblance and containment of documents", 1997 (MinHash);
Leskovec, Rajaraman, Ullman, *Mining of Massive Datasets*, ch. 3 (banding);
Dietzfelbinger, "Universal hashing and k-wise independent functions via integer
arithmetic without primes", STACS 1996 (multiply-add-shift);
Steele, Lea, Flood, "Fast splittable pseudorandom number generators", 2014
(the splitmix64 finaliser).

Kernels assume clean input: valid CSR (int64 offsets, uint64 keys), int32 row ids in range, bands inside ``sig``.
"""
import numpy as np

from .._kernels.mix import GOLDEN as _GOLDEN
from .._kernels.mix import mix64
from .._kernels.jit import kernel

_S32 = np.uint64(32)
_U64_MAX = np.uint64(0xFFFFFFFFFFFFFFFF)


@kernel(wraps=True)
def splitmix64_stream(seed, count):
    """``count`` successive outputs (uint64) of the splitmix64 generator started at ``seed``."""
    out = np.empty(count, np.uint64)
    state = np.uint64(seed)
    for i in range(count):
        state += _GOLDEN
        out[i] = mix64(state)
    return out


@kernel(wraps=True)
def minhash(indptr, keys, a, b, mask, empty_value, out):
    """Fill row ``i`` of ``out`` with the MinHash signature of the ``i``-th set of ``indptr``.

    ``indptr`` may be a slice of the full CSR (absolute offsets into ``keys``),
    so that threads fill contiguous row blocks of one output. Each key is mixed
    once to 32 bits ``y``; permutation ``k`` maps it to the high word of
    ``a[k] * y + b[k]`` (mod 2**64). The running minimum is kept on the whole
    64-bit word (its high word is then the minimum of the high words), so the
    permutation loop, innermost, is a multiply, an add and a min on uint64
    lanes that the compiler vectorises; four keys share one pass over the row.
    """
    n = indptr.shape[0] - 1
    K = a.shape[0]
    row = np.empty(K, np.uint64)
    for i in range(n):
        start = indptr[i]
        end = indptr[i + 1]
        if start == end:
            # No element, no minimum: a sentinel row that the caller masks out.
            for k in range(K):
                out[i, k] = empty_value
            continue
        for k in range(K):
            row[k] = _U64_MAX
        j = start
        # Four keys per pass over the row: a quarter of the loads and stores of `row`.
        while j + 4 <= end:
            y0 = mix64(keys[j]) >> _S32
            y1 = mix64(keys[j + 1]) >> _S32
            y2 = mix64(keys[j + 2]) >> _S32
            y3 = mix64(keys[j + 3]) >> _S32
            for k in range(K):
                ak = a[k]
                bk = b[k]
                row[k] = min(row[k], min(min(ak * y0 + bk, ak * y1 + bk), min(ak * y2 + bk, ak * y3 + bk)))
            j += 4
        while j < end:
            y = mix64(keys[j]) >> _S32
            for k in range(K):
                row[k] = min(row[k], a[k] * y + b[k])
            j += 1
        # The value is the high word; b-bit MinHash keeps its low bits (Li and König 2010).
        for k in range(K):
            out[i, k] = np.uint32(row[k] >> _S32) & mask


@kernel
def count_equal(sig, left, right):
    """Number of positions where rows ``left[p]`` and ``right[p]`` of ``sig`` agree (int64, per pair)."""
    m = left.shape[0]
    K = sig.shape[1]
    out = np.zeros(m, np.int64)
    for p in range(m):
        x = left[p]
        y = right[p]
        c = 0
        for k in range(K):
            if sig[x, k] == sig[y, k]:
                c += 1
        out[p] = c
    return out


@kernel(wraps=True)
def band_keys(sig, ids, col0, r):
    """One uint64 key per listed row, mixed from its ``r`` values starting at column ``col0``."""
    m = ids.shape[0]
    out = np.empty(m, np.uint64)
    for p in range(m):
        i = ids[p]
        h = _GOLDEN
        for c in range(col0, col0 + r):
            h = mix64((h ^ np.uint64(sig[i, c])) + _GOLDEN)
        out[p] = h
    return out


@kernel
def sort_by_key(keys, ids):
    """``keys`` (uint64) sorted ascending, with ``ids`` carried along: two new arrays.

    Band keys are well mixed, so one counting pass on their top ``L`` bits
    (``2**L >= m`` bins, about one key each) nearly sorts them; an insertion
    sort inside each bin finishes. Equal keys (real buckets) cost one
    comparison each there. About ten times faster than ``np.argsort`` at 20k keys.
    """
    m = keys.shape[0]
    L = 1
    while (1 << L) < m:
        L += 1
    shift = np.uint64(64 - L)
    starts = np.zeros((1 << L) + 1, np.int64)
    for p in range(m):
        starts[np.int64(keys[p] >> shift) + 1] += 1
    for t in range(1 << L):
        starts[t + 1] += starts[t]
    fill = starts[:-1].copy()
    sorted_keys = np.empty(m, np.uint64)
    sorted_ids = np.empty(m, ids.dtype)
    for p in range(m):
        t = np.int64(keys[p] >> shift)
        sorted_keys[fill[t]] = keys[p]
        sorted_ids[fill[t]] = ids[p]
        fill[t] += 1
    for t in range(1 << L):
        lo = starts[t]
        for p in range(lo + 1, starts[t + 1]):
            k = sorted_keys[p]
            x = sorted_ids[p]
            q = p
            while q > lo and sorted_keys[q - 1] > k:
                sorted_keys[q] = sorted_keys[q - 1]
                sorted_ids[q] = sorted_ids[q - 1]
                q -= 1
            sorted_keys[q] = k
            sorted_ids[q] = x
    return sorted_keys, sorted_ids


@kernel
def _same_band(sig, x, y, col0, r):
    for c in range(col0, col0 + r):
        if sig[x, c] != sig[y, c]:
            return False
    return True


@kernel
def bucket_bounds(sorted_keys, rows, sig, col0, r):
    """Bucket boundaries (int64, buckets + 1) of rows sorted by band key.

    A run of equal keys is one bucket unless two of its rows differ in the band
    (a 64-bit key collision): then its rows are regrouped in place, one bucket
    per distinct band, so that buckets are exact.
    """
    m = sorted_keys.shape[0]
    bounds = np.empty(m + 1, np.int64)
    nb = 0
    s = 0
    while s < m:
        e = s + 1
        while e < m and sorted_keys[e] == sorted_keys[s]:
            e += 1
        bounds[nb] = s
        nb += 1
        clean = True
        for p in range(s + 1, e):
            if not _same_band(sig, rows[s], rows[p], col0, r):
                clean = False
                break
        if not clean:
            # Stable partition: rows equal to the run's first row to the front, repeat on the rest.
            g = s
            while True:
                head = rows[g]
                w = g + 1
                for p in range(g + 1, e):
                    if _same_band(sig, head, rows[p], col0, r):
                        x = rows[p]
                        for q in range(p, w, -1):
                            rows[q] = rows[q - 1]
                        rows[w] = x
                        w += 1
                if w >= e:
                    break
                bounds[nb] = w
                nb += 1
                g = w
        s = e
    bounds[nb] = m
    return bounds[: nb + 1].copy()


@kernel
def bucket_pairs(rows, bounds, max_bucket):
    """Every pair within each bucket of 2..max_bucket rows, as uint64 codes ``left << 32 | right``, left < right."""
    nb = bounds.shape[0] - 1
    total = 0
    for t in range(nb):
        size = bounds[t + 1] - bounds[t]
        if 2 <= size <= max_bucket:
            total += size * (size - 1) // 2
    out = np.empty(total, np.uint64)
    w = 0
    for t in range(nb):
        s = bounds[t]
        e = bounds[t + 1]
        if not 2 <= e - s <= max_bucket:
            continue
        for p in range(s, e):
            x = np.uint64(rows[p])
            for q in range(p + 1, e):
                y = np.uint64(rows[q])
                if x < y:
                    out[w] = (x << _S32) | y
                else:
                    out[w] = (y << _S32) | x
                w += 1
    return out


@kernel
def band_buckets(sig, ids, col0, r):
    """The buckets of one band: the listed rows (int32) grouped by their ``r`` values from ``col0``, and bounds (int64)."""
    keys = band_keys(sig, ids, col0, r)
    sorted_keys, rows = sort_by_key(keys, ids)
    bounds = bucket_bounds(sorted_keys, rows, sig, col0, r)
    return rows, bounds


@kernel
def share_marked_band(sig, marked, r, left, right):
    """For each pair ``(left[p], right[p])``: True if in some band ``j`` both rows are marked
    (``marked[j, row]``) and agree on the band's ``r`` values from column ``j * r``."""
    m = left.shape[0]
    nbands = marked.shape[0]
    out = np.zeros(m, np.bool_)
    for p in range(m):
        x = left[p]
        y = right[p]
        for j in range(nbands):
            if marked[j, x] and marked[j, y] and _same_band(sig, x, y, j * r, r):
                out[p] = True
                break
    return out
