"""Stage 4b on Spark: MinHash signatures, a shuffle on band keys, bounded buckets, exact verification.

Signatures come from the local engine's kernel (:func:`allpairs.lsh.signatures`,
same seed, same values); each distinct set then sends one row per band
(band, the band's ``r`` values as bytes, set). Rows are shuffled and sorted by
(band, values), so each run is one bucket, exactly (the values themselves are
the key: no hash collision can merge two buckets). A bucket of more than
``max_bucket`` sets is not expanded but reported; the others give their pairs,
which are deduplicated across bands, joined with both sets' keys and verified
exactly by :func:`allpairs.verify.verify_candidates` beside them. With the same
seed and banding, the candidates are those of the local engine.
"""
from __future__ import annotations

import numpy as np
import pyarrow as pa

from ...lsh import signatures
from ...measures import Threshold
from ...verify import verify_candidates
from .arrow import complete_groups, csr, group_starts, numpy

BAND_SCHEMA = "band int, bvals binary, set long"
#: Bucket rows: a pair (a < b, the band and size of the bucket), or, with a = b = -1,
#: a bucket that was reported: larger than max_bucket, or than LARGE_BUCKET.
BUCKET_SCHEMA = "a long, b long, band int, n long"


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


def _bucket_batches(batches, limit: int, report: int):
    for block in complete_groups(batches, ("band", "bvals")):
        starts = np.flatnonzero(group_starts(block, ("band", "bvals")))
        ends = np.append(starts[1:], block.num_rows)
        n = ends - starts
        set_id = numpy(block.column("set"), np.int64)
        band = numpy(block.column("band"), np.int32)
        grow = (n >= 2) & (n <= limit)
        i, j = _expand(starts[grow], ends[grow])
        size = np.repeat(n[grow], n[grow] * (n[grow] - 1) // 2)
        big = n > report
        a = np.concatenate([set_id[i], np.full(int(big.sum()), -1, np.int64)])
        b = np.concatenate([set_id[j], np.full(int(big.sum()), -1, np.int64)])
        yield pa.RecordBatch.from_arrays(
            [pa.array(a, pa.int64()), pa.array(b, pa.int64()),
             pa.array(np.concatenate([band[i], band[starts[big]]]), pa.int32()),
             pa.array(np.concatenate([size, n[big]]).astype(np.int64), pa.int64())],
            names=["a", "b", "band", "n"])


def _verify_batches(batches, t: Threshold):
    for batch in batches:
        ia, ka = csr(batch.column("keys_a"))
        ib, kb = csr(batch.column("keys_b"))
        m = len(ia) - 1
        indptr = np.concatenate([ia, ib[1:] + ia[-1]])
        # Local ranks in key order keep each set's keys (sorted as uint64) strictly increasing.
        keys = np.concatenate([ka, kb]).astype(np.int64, copy=False).view(np.uint64)
        _, tokens = np.unique(keys, return_inverse=True)
        x, y, overlap = verify_candidates(indptr, tokens.astype(np.int32), np.arange(m, dtype=np.int32),
                                          np.arange(m, 2 * m, dtype=np.int32), t)
        y = y - m
        a = numpy(batch.column("a"), np.int64)
        b = numpy(batch.column("b"), np.int64)
        yield pa.RecordBatch.from_arrays(
            [pa.array(a[x], pa.int64()), pa.array(b[y], pa.int64()), pa.array(overlap.astype(np.int32), pa.int32()),
             pa.array(np.diff(ia)[x].astype(np.int32), pa.int32()), pa.array(np.diff(ib)[y].astype(np.int32), pa.int32())],
            names=["a", "b", "overlap", "size_a", "size_b"])


def buckets(distinct, *, num_perm: int, bands: int, rows: int, seed: int, bits: int | None,
            max_bucket: int | None, report: int):
    """DataFrame (BUCKET_SCHEMA): the pairs of every bucket of at most ``max_bucket`` sets, band by band,
    and one row (a = b = -1) per bucket larger than ``max_bucket`` or ``report``."""
    limit = np.iinfo(np.int64).max if max_bucket is None else int(max_bucket)
    report = min(limit, report)
    rows_df = distinct.select("set", "keys").mapInArrow(
        lambda b: _band_batches(b, num_perm, bands, rows, seed, bits), BAND_SCHEMA)
    keyed = rows_df.repartition("band", "bvals").sortWithinPartitions("band", "bvals", "set")
    return keyed.mapInArrow(lambda b: _bucket_batches(b, limit, report), BUCKET_SCHEMA)


def set_pairs(distinct, bucket_rows, t: Threshold):
    """(candidates, pairs): the distinct candidate pairs (a, b), and those with ``J >= t`` (a, b, overlap, size_a, size_b)."""
    from pyspark.sql import functions as F

    cand = bucket_rows.where(F.col("a") >= 0).select("a", "b").distinct()
    keys = distinct.select("set", "keys")
    joined = cand.join(keys.select(F.col("set").alias("a"), F.col("keys").alias("keys_a")), "a") \
        .join(keys.select(F.col("set").alias("b"), F.col("keys").alias("keys_b")), "b") \
        .select("a", "b", "keys_a", "keys_b")
    return cand, joined.mapInArrow(lambda b: _verify_batches(b, t), "a long, b long, overlap int, size_a int, size_b int")
