"""Stage 4a on Spark for a small input: every distinct set joined in one task, as the local engine joins them.

The distributed plan (:mod:`.exact`) ranks the shared shingles on the driver,
broadcasts the ranks, sizes the hot tokens' groups, routes each set to its
token groups and joins each group in a task: five steps, three of them jobs,
each a fixed cost of seconds that only pays back when the sets are too many
for one task. Where the planning pass found few (:func:`fits`), the distinct
sets go to one task instead, which runs the local engine's own pipeline on
them: its global order (:func:`allpairs.order.order_sets`, from the task's own
counts: it holds every set), its prefix-filter join and verification
(:func:`allpairs.exact.prefix_join`). Prefix filtering is exact in any global
order, so the pairs, their overlaps and sizes are those of the distributed
plan, and the document pairs made from them (:func:`.pairs.document_pairs`)
the same rows. Its bodies run in small pages (:func:`.arrow.in_small_pages`),
as every task body: the Go tree's one task, a worker of 0.3-0.4 GiB of new
memory, took 1.75 s (0.67-2.15) in huge pages and 1.18 s (0.89-1.61) in small
ones (its stage, 6 interleaved profiles at load 3-8).
"""
from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ...exact import prefix_join
from ...measures import Threshold
from ...order import order_sets
from .arrow import csr, in_small_pages, numpy, one_table, struct
from .files import task_groups
from .pairs import COLUMNS, ORDER

#: Distinct sets and shingles (summed over the distinct sets) an input may hold, at most, to be joined in one
#: task. Fixed, not scaled by the task slots: the one task's Python worker holds every set at once (about
#: 40 bytes a shingle while it orders them: 1.3 GiB at 2**25), and runs the join alone, so beyond these
#: bounds the distributed plan's parallel tasks pay for its fixed cost. The Go tree (3,104 files, code:5)
#: holds 3,05x distinct sets and ~10 M shingles; the benchmark's 1 M Zipf sets are far past both.
ONE_TASK_SETS = 1 << 16
ONE_TASK_SHINGLES = 1 << 25

SET_PAIRS_SCHEMA = "a long, b long, overlap int, size_a int, size_b int"
#: Most pairs in one Arrow batch the task hands to Spark.
PAIRS_BATCH = 1 << 20


#: Bytes of a local tree's files, at most, for its join to be expected to fit (:func:`expected`).
ONE_TASK_BYTES = 1 << 28


def fits(distinct: int, shingles: int) -> bool:
    """Whether ``distinct`` sets of ``shingles`` shingles in all are joined in one task (the bounds above)."""
    return distinct <= ONE_TASK_SETS and shingles <= ONE_TASK_SHINGLES


def expected(df) -> bool:
    """Whether ``df`` is known to be small before any job: a local tree of at most ONE_TASK_SETS files (so as
    many documents) and ONE_TASK_BYTES bytes, whose tasks read their own files (:func:`.files.task_groups`).

    The planning pass then leaves out the shingles' counts (:func:`.sets.summarize`), which only the
    distributed plan needs (the Go tree: ~3 s of its ~6 s at load 6); should its totals not fit after all
    (a tree of few large files), a second pass counts them."""
    read = task_groups(df)
    if read is None:
        return False
    files = [f for group in read.groups for f in group]
    return len(files) <= ONE_TASK_SETS and sum(f[2] for f in files) <= ONE_TASK_BYTES


def _set_pairs(indptr, keys, t: Threshold):
    """(left, right, overlap) of the rows of distinct sets (CSR of their sorted keys) with ``J >= t``, once: the
    local engine's order over these sets alone (ranks by document frequency; the sets, distinct already,
    sorted by size then tokens) and its prefix-filter join."""
    n = len(indptr) - 1
    sets = order_sets(indptr, keys.view(np.uint64))
    if sets.num_sets != n:
        raise RuntimeError(f"{n} distinct sets collapsed to {sets.num_sets}: a set came twice to the one task")
    row = np.empty(n, np.int64)
    row[sets.doc_set] = np.arange(n, dtype=np.int64)
    pairs = prefix_join(sets.indptr, sets.tokens, sets.num_tokens, t, jobs=1)
    return row[pairs.left], row[pairs.right], pairs.overlap.astype(np.int64)


@in_small_pages
def _joined_batches(batches, t: Threshold):
    """mapInArrow body over every distinct set (set, size, keys) in one task: the pairs with ``J >= t``
    (SET_PAIRS_SCHEMA), each once."""
    table = one_table(batches)
    if table is None:
        return
    set_id = numpy(table.column("set"), np.int64)
    size = numpy(table.column("size"), np.int32)
    a, b, overlap = _set_pairs(*csr(table.column("keys")), t)
    for lo in range(0, len(a), PAIRS_BATCH):
        sa, sb = a[lo:lo + PAIRS_BATCH], b[lo:lo + PAIRS_BATCH]
        yield pa.RecordBatch.from_arrays(
            [pa.array(set_id[sa], pa.int64()), pa.array(set_id[sb], pa.int64()),
             pa.array(overlap[lo:lo + PAIRS_BATCH].astype(np.int32), pa.int32()),
             pa.array(size[sa], pa.int32()), pa.array(size[sb], pa.int32())],
            names=["a", "b", "overlap", "size_a", "size_b"])


def set_pairs(distinct, t: Threshold):
    """DataFrame (a, b, overlap, size_a, size_b): every pair of the distinct sets (set, size, keys) with
    ``J >= t``, once, found by one task (the sets' partitions read by it, no shuffle)."""
    return distinct.coalesce(1).mapInArrow(lambda b: _joined_batches(b, t), struct(SET_PAIRS_SCHEMA))


def _similarity(measure: str, o: np.ndarray, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """:func:`.pairs.similarity` in numpy, double for double (the same IEEE operations on the same values)."""
    o, a, b = o.astype(np.int64), a.astype(np.int64), b.astype(np.int64)
    if measure == "cosine":
        return o.astype(np.float64) / np.sqrt(a.astype(np.float64) * b.astype(np.float64))
    if measure == "dice":
        return (2 * o).astype(np.float64) / (a + b).astype(np.float64)
    return o.astype(np.float64) / (a + b - o).astype(np.float64)


def _pairs_within(starts: np.ndarray, counts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Every unordered pair (i, j), i < j, of positions within each run ``starts[k] .. starts[k] + counts[k]``
    (the runs of one length at a time: their pairs are the same offsets)."""
    left, right = [np.zeros(0, np.int64)], [np.zeros(0, np.int64)]
    for n in np.unique(counts[counts >= 2]).tolist():
        at = starts[counts == n].astype(np.int64)[:, None]
        i, j = np.triu_indices(n, 1)
        left.append((at + i).ravel())
        right.append((at + j).ravel())
    return np.concatenate(left), np.concatenate(right)


@in_small_pages
def _document_batches(batches, t: Threshold, measure: str, accept: Threshold | None):
    """mapInArrow body over every joined document (ord, set, id, okey, size, keys) in one task: the document
    pairs (COLUMNS + ORDER of :mod:`.pairs`), as :func:`.pairs.document_pairs` makes them of the set pairs.

    ``t`` is the Jaccard threshold joined; ``accept``, if given, the threshold of ``measure`` each set pair
    must then meet (its own test, on integers)."""
    table = one_table(batches)
    if table is None:
        return
    ord_ = numpy(table.column("ord"), np.int64)
    set_of = numpy(table.column("set"), np.int64)
    size = numpy(table.column("size"), np.int64)
    first = np.flatnonzero(ord_ == set_of)  # a row per distinct set: its first document's
    indptr, keys = csr(table.column("keys").take(pa.array(first)))
    a, b, overlap = _set_pairs(indptr, keys, t)
    # The documents of each set: rows by set id, each set's a run.
    by_set = np.argsort(set_of, kind="stable")
    starts = np.searchsorted(set_of[by_set], set_of[first])
    counts = np.searchsorted(set_of[by_set], set_of[first], side="right") - starts
    yield from _expanded(table, by_set, starts, counts, size[first], a, b, overlap, measure, accept)


@in_small_pages
def _grouping_document_batches(batches, t: Threshold, measure: str, accept: Threshold | None, counted):
    """mapInArrow body over every joined document (ord, id, okey, size, keys) in one task, not grouped
    yet: the identical sets grouped here (:func:`allpairs.order.order_sets`, as locally), then the document
    pairs of :func:`_document_batches`. The accumulator ``counted`` (:class:`Latest`) is given the distinct
    sets and their shingles, summed."""
    table = one_table(batches)
    if table is None:
        return
    indptr, keys = csr(table.column("keys"))
    sets = order_sets(indptr, keys.view(np.uint64))
    if sets.num_docs != table.num_rows or (sets.doc_set < 0).any():
        raise RuntimeError("a document without a shingle came to the one task")
    set_size = np.diff(sets.indptr)
    counted.add((sets.num_sets, int(set_size.sum())))
    pairs = prefix_join(sets.indptr, sets.tokens, sets.num_tokens, t, jobs=1)
    starts = sets.group_indptr[:-1]
    yield from _expanded(table, sets.group_docs.astype(np.int64), starts, np.diff(sets.group_indptr), set_size,
                         pairs.left.astype(np.int64), pairs.right.astype(np.int64), pairs.overlap.astype(np.int64),
                         measure, accept)


def _expanded(table: pa.Table, by_set, starts, counts, set_size, a, b, overlap, measure: str,
              accept: Threshold | None):
    """The document pairs (COLUMNS + ORDER) of the joined documents ``table`` (ord, id, okey, size, ...) whose
    distinct set ``k`` is held by the rows ``by_set[starts[k]:starts[k] + counts[k]]`` and has ``set_size[k]``
    shingles, of the pairs (``a``, ``b``, ``overlap``) of distinct sets found with ``J >= t``: every document of
    one set with every document of the other (those meeting ``accept``, if given), and every two documents of
    one set."""
    from ...measures import get_measure

    ord_ = numpy(table.column("ord"), np.int64)
    size = numpy(table.column("size"), np.int64)
    if accept is not None:
        m = get_measure(measure)
        keep = np.array([m.accept(accept, o, x, y) for o, x, y in
                         zip(overlap.tolist(), set_size[a].tolist(), set_size[b].tolist())], bool)
        a, b, overlap = a[keep], b[keep], overlap[keep]
    # Pairs of distinct sets: every document of one with every document of the other.
    n_pair = counts[a] * counts[b]
    pair = np.repeat(np.arange(len(a)), n_pair)
    k = np.arange(int(n_pair.sum()), dtype=np.int64) - np.repeat(np.cumsum(n_pair) - n_pair, n_pair)
    da = by_set[starts[a][pair] + k // counts[b][pair]]
    db = by_set[starts[b][pair] + k % counts[b][pair]]
    sim = _similarity(measure, overlap, set_size[a], set_size[b])[pair]
    o = overlap[pair]
    # Identical documents: every pair within a set, similarity 1, overlap its size.
    ia, ib = _pairs_within(starts, counts)
    da, db = np.concatenate([da, by_set[ia]]), np.concatenate([db, by_set[ib]])
    sim = np.concatenate([sim, np.ones(len(ia))])
    o = np.concatenate([o, size[by_set[ia]]])
    # The left document is the one first in the input order (okey, then ord), as Spark's comparison reads
    # it: a null okey compares as neither before nor after.
    okey = table.column("okey").combine_chunks()
    ka, kb = okey.take(pa.array(da)), okey.take(pa.array(db))
    before = pc.or_kleene(pc.less(ka, kb), pc.and_kleene(pc.equal(ka, kb), pa.array(ord_[da] < ord_[db])))
    ab = before.fill_null(False).to_numpy(zero_copy_only=False)
    left, right = np.where(ab, da, db), np.where(ab, db, da)
    ids = table.column("id").combine_chunks()
    for lo in range(0, len(left), PAIRS_BATCH):
        sl, sr = pa.array(left[lo:lo + PAIRS_BATCH]), pa.array(right[lo:lo + PAIRS_BATCH])
        yield pa.RecordBatch.from_arrays(
            [ids.take(sl), ids.take(sr), pa.array(sim[lo:lo + PAIRS_BATCH], pa.float64()),
             pa.array(o[lo:lo + PAIRS_BATCH].astype(np.int32), pa.int32()),
             pa.array(size[left[lo:lo + PAIRS_BATCH]].astype(np.int32), pa.int32()),
             pa.array(size[right[lo:lo + PAIRS_BATCH]].astype(np.int32), pa.int32()),
             okey.take(sl), pa.array(ord_[left[lo:lo + PAIRS_BATCH]], pa.int64()),
             okey.take(sr), pa.array(ord_[right[lo:lo + PAIRS_BATCH]], pa.int64())],
            names=COLUMNS + ORDER)


def orders_alike(dtype) -> bool:
    """Whether Arrow compares values of the Spark type ``dtype`` as Spark does (integers, strings: bytes), so
    that the one task can pick each pair's left document itself (:func:`document_pairs`)."""
    from pyspark.sql import types as T

    return isinstance(dtype, (T.IntegralType, T.StringType))


def document_pairs(grouped, t: Threshold, measure: str, accept: Threshold | None):
    """DataFrame (COLUMNS + ORDER of :mod:`.pairs`, with their types there): every document pair of the
    distinct sets' pairs with ``J >= t`` (and, with ``accept``, ``measure >= accept``) and of identical
    documents, from the joined documents of ``grouped`` in one task: no join with the members table. For an
    ``okey`` that :func:`orders_alike`."""
    joined = grouped.where(grouped["set"].isNotNull()).select("ord", "set", "id", "okey", "size", "keys")
    return joined.coalesce(1).mapInArrow(lambda b: _document_batches(b, t, measure, accept), _pairs_schema(joined))


def _pairs_schema(joined):
    """The Spark schema of the document pairs (COLUMNS + ORDER) of the documents ``joined`` (id, okey, ...)."""
    from pyspark.sql import types as T

    fields = {f.name: f.dataType for f in joined.schema.fields}
    return T.StructType([T.StructField("left", fields["id"]), T.StructField("right", fields["id"]),
                         T.StructField("similarity", T.DoubleType()), T.StructField("overlap", T.IntegerType()),
                         T.StructField("left_size", T.IntegerType()), T.StructField("right_size", T.IntegerType()),
                         T.StructField("left_key", fields["okey"]), T.StructField("left_ord", T.LongType()),
                         T.StructField("right_key", fields["okey"]), T.StructField("right_ord", T.LongType())])


class Latest:
    """The param (pyspark's ``AccumulatorParam``) of an accumulator holding the last value a task gave it (a
    tuple; empty until then): a task run twice (retried, or its frame computed again) gives the same value."""

    def zero(self, value):
        return ()

    def addInPlace(self, value1, value2):
        return value2 or value1


def grouping_document_pairs(docs, min_size: int, t: Threshold, measure: str, accept: Threshold | None):
    """(pairs, counted): :func:`document_pairs` of the documents ``docs`` (ord, id, okey, size, keys) not grouped
    yet, the identical sets grouped by the one task itself (no shuffle by the key arrays); ``counted``, an
    accumulator given (distinct sets, their shingles summed) once the pairs are computed. For an ``okey`` that
    :func:`orders_alike`; documents of fewer than ``min_size`` shingles (at least 1) are left out."""
    counted = docs.sparkSession.sparkContext.accumulator((), Latest())
    joined = docs.where(docs["size"] >= max(1, min_size)).select("ord", "id", "okey", "size", "keys")
    schema = _pairs_schema(joined)
    pairs = joined.coalesce(1).mapInArrow(lambda b: _grouping_document_batches(b, t, measure, accept, counted), schema)
    return pairs, counted
