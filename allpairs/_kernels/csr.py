"""Helpers for the CSR arrays every stage passes (``indptr`` int64 of n + 1 offsets, then the values):
kernels that any stage's kernels call. Kernels assume clean input."""
import numpy as np

from .jit import kernel


@kernel
def grow(a, n):
    """``a`` copied into an array of at least ``n`` and at least twice its length (an output buffer that fills)."""
    b = np.empty(max(2 * a.shape[0], n), a.dtype)
    b[: a.shape[0]] = a
    return b


@kernel
def grow_filled(a, filled, n):
    """A new array of ``n`` (at least ``filled``) holding ``a[:filled]``: a partly filled buffer enlarged, the
    rest of it neither copied nor touched."""
    b = np.empty(n, a.dtype)
    b[:filled] = a[:filled]
    return b


@kernel
def insertion_sort(a, budget):
    """Sort ``a`` in place by insertion, unless that takes more than ``budget`` moves: whether it finished."""
    moves = 0
    for i in range(1, a.shape[0]):
        v = a[i]
        j = i - 1
        while j >= 0 and a[j] > v:
            a[j + 1] = a[j]
            j -= 1
        a[j + 1] = v
        moves += i - 1 - j
        if moves > budget:
            return False
    return True


#: Buckets of :func:`_sort_hashed` are at most ``2**_BUCKET_BITS``; longer rows are quicksorted.
_BUCKET_BITS = 16


@kernel
def _sort_hashed(src, dst, count):
    """``dst[:] = sorted(src)`` (uint64): expected linear time for hash keys, n log n for any keys.

    Sorting by distribution (Knuth, TAOCP vol. 3, 5.2.5): one counting pass on
    the top bits scatters the keys into about as many buckets as keys, in bucket
    order; an insertion sort then moves each key only within its bucket. Keys
    crowded into few buckets (not hashes) would make that quadratic: past 8
    moves a key, numba's quicksort finishes the job.
    ``count`` (int64) has room for ``2**_BUCKET_BITS + 1`` counters.
    """
    n = src.shape[0]
    if n < 16 or n > (np.int64(8) << _BUCKET_BITS):
        dst[:] = src
        if n >= 16:
            dst.sort()
            return
    else:
        bits = 1
        while (np.int64(1) << bits) < n and bits < _BUCKET_BITS:
            bits += 1
        shift = np.uint64(64 - bits)
        buckets = np.int64(1) << bits
        count[: buckets + 1] = 0
        for i in range(n):
            count[np.int64(src[i] >> shift) + 1] += 1
        for b in range(buckets):
            count[b + 1] += count[b]
        for i in range(n):
            b = np.int64(src[i] >> shift)
            dst[count[b]] = src[i]
            count[b] += 1
    if not insertion_sort(dst, 8 * n):
        dst.sort()


@kernel
def distinct_sorted_rows(indptr, keys):
    """Each row's keys in increasing order with repeats dropped, as CSR (int64 offsets; keys uint64, any order)."""
    n = indptr.shape[0] - 1
    out = np.empty(keys.shape[0], keys.dtype)
    out_ptr = np.zeros(n + 1, np.int64)
    count = np.empty((np.int64(1) << _BUCKET_BITS) + 1, np.int64)
    o = 0
    for d in range(n):
        # Sort the row into its place in the output, then close the gaps its repeats leave.
        a = indptr[d]
        m = indptr[d + 1] - a
        _sort_hashed(keys[a:a + m], out[o:o + m], count)
        w = o
        for k in range(o, o + m):
            if k == o or out[k] != out[w - 1]:
                out[w] = out[k]
                w += 1
        o = w
        out_ptr[d + 1] = o
    return out_ptr, out[:o]


def block_edges(first: int, inner: np.ndarray, last: int) -> np.ndarray:
    """The edges of contiguous blocks, ``first``, ``inner`` and ``last`` sorted, each once (int64): what
    ``np.unique`` gives, without its first call's import of numpy.ma (~20 M instructions a run)."""
    edges = np.sort(np.concatenate(([first], inner, [last])).astype(np.int64))
    return edges[np.concatenate(([True], edges[1:] != edges[:-1]))]


def row_blocks(indptr: np.ndarray, parts: int) -> np.ndarray:
    """Cut rows into ``parts`` contiguous blocks of about equal cost (keys + one per row)."""
    n = indptr.shape[0] - 1
    cost = indptr + np.arange(n + 1, dtype=np.int64)
    return block_edges(0, np.searchsorted(cost, np.linspace(0, cost[-1], parts + 1)[1:-1]), n)


def distinct_rows(indptr: np.ndarray, keys: np.ndarray, jobs: int) -> tuple[np.ndarray, np.ndarray]:
    """Each row's keys in increasing order with repeats dropped (:func:`~allpairs.order._kernel.distinct_sorted_rows`),
    on ``jobs`` blocks of rows side by side."""
    edges = row_blocks(indptr, jobs)
    if len(edges) <= 2:
        return distinct_sorted_rows(indptr, keys)
    from concurrent.futures import ThreadPoolExecutor  # here: a run on one thread does not load it

    with ThreadPoolExecutor(len(edges) - 1) as pool:  # offsets stay absolute: each block reads its rows of keys
        parts = list(pool.map(lambda lo, hi: distinct_sorted_rows(indptr[lo:hi + 1], keys),
                              edges[:-1].tolist(), edges[1:].tolist()))
    return concat_rows(parts)


def concat_rows(parts: list[tuple[np.ndarray, np.ndarray]]) -> tuple[np.ndarray, np.ndarray]:
    """Consecutive blocks of rows, each a CSR ``(ptr, keys)`` with offsets from 0, as one CSR."""
    if not parts:
        return np.zeros(1, np.int64), np.zeros(0, np.uint64)
    shift = np.cumsum([0] + [int(p[-1]) for p, _ in parts[:-1]], dtype=np.int64)
    ptr = np.concatenate([np.zeros(1, np.int64)] + [p[1:] + s for (p, _), s in zip(parts, shift.tolist())])
    return ptr, np.concatenate([k for _, k in parts])
