"""Stage 4b on Spark: MinHash signatures, a shuffle on band keys, bounded buckets, exact verification.

Signatures come from the local engine's kernel (:func:`allpairs.lsh.signatures`,
same seed, same values); each distinct set then sends one row per band
(band, the band's ``r`` values as bytes, set). Rows are shuffled and sorted by
(band, values), so each run is one bucket, exactly (the values themselves are
the key: no hash collision can merge two buckets). A bucket of more than
``max_bucket`` sets is not expanded but reported; the others give their pairs,
which are deduplicated across bands, joined with both sets' keys and verified
exactly by :func:`allpairs.verify.verify_candidates` beside them. With the same
seed, banding and ``max_expand``, the candidates are those of the local engine.

As locally (:func:`allpairs.lsh.candidates`), a bucket of more than
``max_expand`` sets (and at most ``max_bucket``) is not expanded pair by pair:
its sets, with their keys, are gathered in one task and joined exactly by the
local prefix filter (:func:`allpairs.exact.prefix_join`), each bucket apart,
so the pairs found are exactly the true pairs its expansion would have given.
On skewed corpora this matters: 100,000 Zipf sets banded 32 × 2 with buckets of
up to 1000 sets make 48 M candidate pairs, of which buckets of at most 64 sets
give 5.9 M; each expanded candidate is shuffled with both sets' keys, while a
joined bucket ships each of its sets once.
"""
from __future__ import annotations

import numpy as np
import pyarrow as pa

from ...exact import prefix_join
from ...lsh import signatures
from ...measures import Threshold
from ...order import order_sets
from ...verify import verify_candidates
from .arrow import complete_groups, csr, group_starts, numpy

BAND_SCHEMA = "band int, bvals binary, set long"
#: Bucket rows: a pair (a < b, the band and size n of its bucket; first = -1); with a = b = -1, a
#: bucket that was reported: larger than max_bucket, or than LARGE_BUCKET; with a = MARKED, set b of a
#: bucket of more than max_expand sets (and at most max_bucket), first being the bucket's first set.
BUCKET_SCHEMA = "a long, b long, band int, n long, first long"
MARKED = -2
#: Buckets of more sets are joined exactly in one task rather than expanded. Lower than the local
#: engine's (64): here an expanded pair is shuffled twice with both sets' keys (~400 bytes), a joined
#: bucket ships each of its n sets once, so joining costs less from n = 3 on. 100k Zipf sets, 32 x 2
#: bands, max_bucket 1000, on local[2]: 64 s at 4, 157 s at 64, not done in 240 s expanding every bucket.
MAX_EXPAND_SHUFFLED = 4
PAIR_SCHEMA = "a long, b long, overlap int, size_a int, size_b int"


def _band_batches(batches, num_perm, bands, rows, seed, bits):
    for batch in batches:
        indptr, keys = csr(batch.column("keys"))
        sig = signatures(indptr, keys.astype(np.int64, copy=False).view(np.uint64), num_perm, seed=seed,
                         bits=bits, jobs=1)
        n = sig.shape[0]
        width = rows * sig.dtype.itemsize
        offsets = pa.py_buffer(np.arange(0, (n + 1) * width, width, dtype=np.int32).tobytes())
        set_col = batch.column("set")
        for j in range(bands):
            data = pa.py_buffer(np.ascontiguousarray(sig[:, j * rows:(j + 1) * rows]).tobytes())
            values = pa.Array.from_buffers(pa.binary(), n, [None, offsets, data])
            yield pa.RecordBatch.from_arrays([pa.array(np.full(n, j, np.int32), pa.int32()), values, set_col],
                                             names=["band", "bvals", "set"])


def _expand(starts: np.ndarray, ends: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Row indices (i, j), i < j, of every pair within each run ``starts[k] .. ends[k] - 1``."""
    lens = ends - starts
    run = np.repeat(np.arange(len(starts)), lens)
    i = starts[run] + np.arange(int(lens.sum())) - np.repeat(np.cumsum(lens) - lens, lens)
    after = ends[run] - i - 1
    ii = np.repeat(i, after)
    jj = ii + 1 + np.arange(int(after.sum())) - np.repeat(np.cumsum(after) - after, after)
    return ii, jj


def _bucket_batches(batches, limit: int, expand: int, report: int):
    for block in complete_groups(batches, ("band", "bvals")):
        starts = np.flatnonzero(group_starts(block, ("band", "bvals")))
        ends = np.append(starts[1:], block.num_rows)
        n = ends - starts
        set_id = numpy(block.column("set"), np.int64)
        band = numpy(block.column("band"), np.int32)
        grow = (n >= 2) & (n <= expand)
        i, j = _expand(starts[grow], ends[grow])
        size = np.repeat(n[grow], n[grow] * (n[grow] - 1) // 2)
        # Too large to expand, small enough to keep: each of its sets, for the exact join of the bucket.
        mark = (n > expand) & (n <= limit)
        run = np.repeat(np.arange(len(n)), n)
        member = np.flatnonzero(mark[run])
        big = n > report
        k, m = int(big.sum()), len(member)
        yield pa.RecordBatch.from_arrays(
            [pa.array(np.concatenate([set_id[i], np.full(k, -1, np.int64), np.full(m, MARKED, np.int64)]), pa.int64()),
             pa.array(np.concatenate([set_id[j], np.full(k, -1, np.int64), set_id[member]]), pa.int64()),
             pa.array(np.concatenate([band[i], band[starts[big]], band[member]]), pa.int32()),
             pa.array(np.concatenate([size, n[big], n[run[member]]]).astype(np.int64), pa.int64()),
             pa.array(np.concatenate([np.full(len(i) + k, -1, np.int64), set_id[starts[run[member]]]]), pa.int64())],
            names=["a", "b", "band", "n", "first"])


def _pair_batch(a, b, overlap, size_a, size_b) -> pa.RecordBatch:
    """A batch of PAIR_SCHEMA, each pair turned so that a < b."""
    swap = a > b
    return pa.RecordBatch.from_arrays(
        [pa.array(np.where(swap, b, a), pa.int64()), pa.array(np.where(swap, a, b), pa.int64()),
         pa.array(overlap.astype(np.int32), pa.int32()),
         pa.array(np.where(swap, size_b, size_a).astype(np.int32), pa.int32()),
         pa.array(np.where(swap, size_a, size_b).astype(np.int32), pa.int32())],
        names=["a", "b", "overlap", "size_a", "size_b"])


def _bucket_join(block: pa.Table, t: Threshold) -> pa.RecordBatch:
    """The pairs with ``J >= t`` within each bucket of ``block`` (rows sorted by bucket: band, first)."""
    bucket = np.cumsum(group_starts(block, ("band", "first"))) - 1
    indptr, keys = csr(block.column("keys"))
    indptr = indptr.astype(np.int64, copy=False)
    size = np.diff(indptr)
    # Keys renamed apart per bucket (bucket number, then the key's number in the block), so that buckets
    # never meet; the local order then ranks them rare first, as in a join of each bucket alone.
    _, number = np.unique(keys, return_inverse=True)
    code = (np.repeat(bucket, size).astype(np.uint64) << np.uint64(32)) | number.astype(np.uint64)
    sets = order_sets(indptr, code)
    if sets.num_sets != len(size):
        raise RuntimeError(f"{len(size)} sets of LSH buckets collapsed to {sets.num_sets}: a set sat twice in one bucket")
    rows = np.empty(len(size), np.int64)
    rows[sets.doc_set] = np.arange(len(size), dtype=np.int64)
    found = prefix_join(sets.indptr, sets.tokens, sets.num_tokens, t, jobs=1)
    ra, rb = rows[found.left], rows[found.right]
    set_id = numpy(block.column("set"), np.int64)
    return _pair_batch(set_id[ra], set_id[rb], found.overlap, size[ra], size[rb])


def _bucket_join_batches(batches, t: Threshold):
    for block in complete_groups(batches, ("band", "first")):
        yield _bucket_join(block, t)


def _verify_batches(batches, t: Threshold):
    for batch in batches:
        ia, ka = csr(batch.column("keys_a"))
        ib, kb = csr(batch.column("keys_b"))
        m = len(ia) - 1
        indptr = np.concatenate([ia, ib[1:] + ia[-1]])
        # Each set's keys are strictly increasing as uint64: the merge compares the keys themselves.
        keys = np.concatenate([ka, kb]).astype(np.int64, copy=False).view(np.uint64)
        x, y, overlap = verify_candidates(indptr, keys, np.arange(m, dtype=np.int32),
                                          np.arange(m, 2 * m, dtype=np.int32), t)
        y = y - m
        a = numpy(batch.column("a"), np.int64)
        b = numpy(batch.column("b"), np.int64)
        yield _pair_batch(a[x], b[y], overlap, np.diff(ia)[x], np.diff(ib)[y])


def buckets(distinct, *, num_perm: int, bands: int, rows: int, seed: int, bits: int | None,
            max_bucket: int | None, max_expand: int | None, report: int):
    """DataFrame (BUCKET_SCHEMA): the pairs of every bucket of at most ``max_expand`` sets, band by band; the
    sets of every bucket of more than ``max_expand`` and at most ``max_bucket`` sets (a = MARKED); and one row
    (a = b = -1) per bucket larger than ``max_bucket`` or ``report``."""
    limit = np.iinfo(np.int64).max if max_bucket is None else int(max_bucket)
    expand = limit if max_expand is None else min(limit, int(max_expand))
    report = min(limit, report)
    rows_df = distinct.select("set", "keys").mapInArrow(
        lambda b: _band_batches(b, num_perm, bands, rows, seed, bits), BAND_SCHEMA)
    keyed = rows_df.repartition("band", "bvals").sortWithinPartitions("band", "bvals", "set")
    return keyed.mapInArrow(lambda b: _bucket_batches(b, limit, expand, report), BUCKET_SCHEMA)


def set_pairs(distinct, bucket_rows, t: Threshold):
    """(candidates, pairs): the distinct candidate pairs (a, b) of the expanded buckets, and every pair with
    ``J >= t`` (a < b, overlap, size_a, size_b) of those and of the buckets joined exactly, once."""
    from pyspark.sql import functions as F

    cand = bucket_rows.where(F.col("a") >= 0).select("a", "b").distinct()
    keys = distinct.select("set", "keys")
    joined = cand.join(keys.select(F.col("set").alias("a"), F.col("keys").alias("keys_a")), "a") \
        .join(keys.select(F.col("set").alias("b"), F.col("keys").alias("keys_b")), "b") \
        .select("a", "b", "keys_a", "keys_b")
    verified = joined.mapInArrow(lambda b: _verify_batches(b, t), PAIR_SCHEMA)
    # Each set of a marked bucket goes, with its keys, to the bucket's task: one exact join per bucket.
    members = bucket_rows.where(F.col("a") == MARKED).select(F.col("b").alias("set"), "band", "first")
    gathered = members.join(keys, "set").repartition("band", "first").sortWithinPartitions("band", "first", "set")
    in_buckets = gathered.mapInArrow(lambda b: _bucket_join_batches(b, t), PAIR_SCHEMA)
    # A pair in several buckets (expanded or joined) is found in each: keep it once.
    return cand, verified.unionByName(in_buckets).distinct()
