"""Stages 1–3 on Spark: documents to sorted shingle keys, identical sets grouped, the global token order.

* Shingling runs per Arrow batch in the local engine's own functions
  (:func:`allpairs.shingles.shingle_texts`, :func:`allpairs.shingles.hash_sets`);
  each document keeps its distinct keys sorted (as uint64, stored in Spark as
  the same 64 bits in a ``long``).
* Identical sets are grouped once (the distributed exact join groups them in its tasks: :mod:`.copies`):
  the documents with equal key arrays get the smallest ``ord`` among them as their set id (one shuffle);
  the members table remembers which documents stand behind each set, for the output.
* The global order counts each shingle's frequency over the distinct sets
  (partial counts per task, handed on as a row of bytes per hash bucket of
  keys and summed per bucket in numpy: one shuffle of a few rows per task).
  :func:`summarize` does it in the same pass as the id check and the
  documents' numbers: one ``mapInArrow``, the buckets' shuffle and one
  ``mapInArrow`` summing them, from the input to the driver's table, where
  shingling and grouping are computed and kept in Spark's cache on the way.
  Shingles in one set only can never be shared, so they get no rank: a set is
  held as ``n_single`` (how many it has; in the order they come first, being
  the rarest) and the sorted ranks of its shared shingles, rare to frequent
  (document frequency, ties by key). The rank table is broadcast to the tasks
  while it has at most ``broadcast_limit`` shingles (12 bytes each), else it is
  joined with the sets' shingles (two shuffles of every shingle).
"""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

import numpy as np
import pyarrow as pa

from ..._kernels.csr import distinct_sorted_rows
from ...shingles import ShingleSpec, hash_sets, shingle_texts, token_list_keys
from ._kernel import lookup_ranks
from .arrow import csr, in_small_pages, key_array, key_slices, list_array, numpy, one_table, struct
from .files import group_texts, task_groups
from .pairs import order_key
from .session import quoted

#: Shared shingles up to this many are ranked on the driver and broadcast
#: (about 12 bytes each: 48 MB at the default); more are ranked and joined in Spark.
BROADCAST_LIMIT = 4_000_000


def sorted_distinct(indptr: np.ndarray, keys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Each row's distinct keys sorted as uint64: (indptr int64, keys uint64).

    By the local engine's kernel for hash keys (a distribution sort per row, in place): a quicksort of
    each row into a new array took the Go tree's 12.3 M shingles 0.7-0.8 CPU s, 1 M Zipf sets' 20 M
    tokens 0.8; this takes 0.17 and 0.3."""
    keys = np.ascontiguousarray(keys).view(np.uint64) if keys.dtype == np.int64 else keys.astype(np.uint64)
    return distinct_sorted_rows(np.ascontiguousarray(indptr, np.int64), np.ascontiguousarray(keys))


@in_small_pages
def shingle_batches(batches, *, source: str, spec: ShingleSpec | None, normalize: bool, language: str | None,
                    schema: pa.Schema):
    """mapInArrow body: the sorted distinct shingle keys of each document, other columns passed through.

    ``source`` is the column holding texts (``spec`` given) or token lists
    (``spec`` None); ``language`` an optional column of program languages for code:N.
    """
    for batch in batches:
        col = batch.column(source)
        if spec is None:
            listed = token_list_keys(col)
            if listed is not None:
                indptr, keys = listed
            else:
                # A string is a line of whitespace-separated tokens (--sets), as str.split() reads it.
                sets = [[] if s is None else s.split() if isinstance(s, str) else s for s in col.to_pylist()]
                indptr, keys = hash_sets(sets)
        else:
            texts = ["" if s is None else s for s in col.to_pylist()]
            langs = batch.column(language).to_pylist() if language and spec.kind == "code" else None
            indptr, keys = shingle_texts(texts, spec, normalize=normalize, languages=langs, workers=1)
        yield from _keyed_batches([batch.column(f.name) for f in schema if f.name not in ("size", "keys")],
                                  indptr, keys, schema)


def _keyed_batches(columns, indptr, keys, schema: pa.Schema):
    """Batches of ``schema``: ``columns`` (Arrow arrays, one row per document), then each document's number of
    distinct keys and its distinct keys sorted (``size``, ``keys``) of the CSR ``indptr``, ``keys``."""
    indptr, keys = sorted_distinct(indptr, keys)
    size = np.diff(indptr).astype(np.int32)
    for a, b in key_slices(indptr):
        keyed = [pa.array(size[a:b], pa.int32()), key_array(indptr[a:b + 1], keys.view(np.int64))]
        yield pa.RecordBatch.from_arrays([c.slice(a, b - a) for c in columns] + keyed, schema=schema)


#: Bits of a document's number (``ord``) left for its row within a task: ``monotonically_increasing_id``'s.
ROW_BITS = 33


def _shingled_file_batches(batches, groups, skips, spec: ShingleSpec, normalize: bool, schema: pa.Schema):
    """mapInArrow body over the numbers of ``groups`` (:class:`.files.TaskGroups`): each group's files read,
    the skipped ones counted and left out, the others shingled, as (ord, id, okey, size, keys), in one pass.

    ``ord`` is what ``monotonically_increasing_id`` gives the decoded files (the group's number above
    ROW_BITS bits, the file's among them below), ``okey`` the id (the files' order is their ids')."""
    counted = Counter()
    for batch in batches:
        for g in batch.column("id").to_pylist():
            start = g << ROW_BITS
            for ids, langs, texts in group_texts(groups[g], counted, skips):
                indptr, keys = shingle_texts(texts, spec, normalize=normalize,
                                             languages=langs if spec.kind == "code" else None, workers=1, jobs=1)
                id_array = pa.array(ids, pa.string())
                yield from _keyed_batches([pa.array(np.arange(start, start + len(ids), dtype=np.int64)), id_array,
                                           id_array], indptr, keys, schema)
                start += len(ids)


def docs_frame(df, *, id_col: str, text_col: str | None, tokens_col: str | None, order_col: str | None,
               language_col: str | None, spec: ShingleSpec | None, normalize: bool):
    """(ord, id, okey, size, keys) for every row of ``df``; ``size`` 0 for a document with no shingle;
    ``keys`` its sorted distinct keys as bytes (:func:`.arrow.key_array`; :func:`.arrow.csr` reads them).

    ``ord`` is a unique long (``monotonically_increasing_id``: partition by
    partition, row by row, so the input order for a file); ``okey`` orders the
    documents in the output (``order_col``, else ``ord``).
    """
    from pyspark.sql import functions as F
    from pyspark.sql.types import BinaryType, IntegerType, LongType, StringType, StructField, StructType
    from pyspark.sql.pandas.types import to_arrow_schema

    read = task_groups(df) if (spec is not None and (id_col, text_col, language_col, order_col)
                               == ("id", "text", "language", "id")) else None
    if read is not None:
        # A local tree whose tasks read their own files: read and shingled in one Python pass (the texts
        # never cross into the JVM and back, nor wait there for a second Python worker).
        out = StructType([StructField("ord", LongType()), StructField("id", StringType()),
                          StructField("okey", StringType()), StructField("size", IntegerType()),
                          StructField("keys", BinaryType())])
        arrow_schema = to_arrow_schema(out)
        groups, skips = read.groups, read.skips
        return df.sparkSession.range(len(groups), numPartitions=len(groups)).mapInArrow(
            lambda b: _shingled_file_batches(b, groups, skips, spec, normalize, arrow_schema), out)
    source = text_col if spec is not None else tokens_col
    extra = [F.col(quoted(language_col)).alias("_language")] if language_col else []
    key = [order_key(F.col(quoted(order_col)), df.schema[order_col].dataType).alias("okey")] if order_col else []
    base = df.select(F.monotonically_increasing_id().alias("ord"), F.col(quoted(id_col)).alias("id"),
                     F.col(quoted(source)).alias("_source"), *extra, *key)
    if not order_col:
        base = base.withColumn("okey", F.col("ord"))
    okey_type = base.schema["okey"].dataType
    # Ids keep their type (strings or integers), as the rows of the local engine's pairs do.
    out = StructType([StructField("ord", LongType()), StructField("id", base.schema["id"].dataType),
                      StructField("okey", okey_type), StructField("size", IntegerType()),
                      StructField("keys", BinaryType())])
    arrow_schema = to_arrow_schema(out)
    language = "_language" if language_col else None

    def run(batches):
        return shingle_batches(batches, source="_source", spec=spec, normalize=normalize, language=language,
                               schema=arrow_schema)

    return base.mapInArrow(run, out)


def group_identical(docs, min_size: int):
    """Every document, with ``set``: for one of at least ``min_size`` shingles the smallest ``ord`` among the
    documents of the same key set (one shuffle by the key arrays), for the others null (they are kept so
    that one pass over this frame also checks the ids and counts the documents: :func:`summarize`)."""
    from pyspark.sql import functions as F
    from pyspark.sql.types import LongType, StructField, StructType
    from pyspark.sql.pandas.types import to_arrow_schema

    # Shuffled by a 64-bit hash of the keys (equal keys: the same task) and grouped in each task by
    # :func:`_grouped_batches` in numpy, not by a JVM window over the key arrays (which sorted the rows,
    # copying each key array into the sorter and again into the window's buffers: 1 M Zipf sets, the
    # window stage's JVM CPU ~1.9 s and 0.3-1.1 s of GC). The groups are the keys' (exact).
    out = StructType(list(docs.schema.fields) + [StructField("set", LongType())])
    schema = to_arrow_schema(out)
    low = max(1, min_size)
    return docs.repartition(F.xxhash64("keys")).mapInArrow(lambda b: _grouped_batches(b, low, schema), out)


def identical_sets(indptr: np.ndarray, keys: np.ndarray, ord_: np.ndarray, kept: np.ndarray) -> np.ndarray:
    """For each row (CSR ``indptr``, sorted distinct ``keys``) that is ``kept``, the smallest ``ord_`` among the
    kept rows of the same keys; -1 for the others. Rows are sorted by a hash of their keys (the keys' xor
    and the size) and each run of equal hashes checked against its first row, key by key; a run that is not
    all one set (a collision) is grouped by its rows' bytes."""
    n = len(ord_)
    size = np.diff(indptr)
    result = np.full(n, -1, np.int64)
    filled = np.flatnonzero(size > 0)
    rows = np.flatnonzero(kept[filled])
    if not len(rows):
        return result
    keys = np.ascontiguousarray(keys).view(np.uint64)
    h = np.bitwise_xor.reduceat(keys, indptr[filled])[rows]  # a run of keys per filled row
    rows = filled[rows]
    h ^= size[rows].astype(np.uint64) * np.uint64(0x9E3779B97F4A7C15)
    by = np.argsort(h, kind="stable")
    rows, h = rows[by], h[by]
    start = np.concatenate([[True], h[1:] != h[:-1]])
    run = np.cumsum(start) - 1
    first = rows[np.flatnonzero(start)][run]
    # Every row against its run's first row: the same size, then the same keys.
    same = size[rows] == size[first]
    cand = np.flatnonzero(same & (rows != first))
    if len(cand):
        r, f = rows[cand], first[cand]
        m = size[r]
        within = np.arange(int(m.sum())) - np.repeat(np.cumsum(m) - m, m)
        diff = keys[np.repeat(indptr[r], m) + within] != keys[np.repeat(indptr[f], m) + within]
        same[cand[np.unique(np.repeat(np.arange(len(r)), m)[diff])]] = False
    low = np.minimum.reduceat(ord_[rows], np.flatnonzero(start))
    result[rows] = low[run]
    for b in np.unique(run[~same]):
        members = rows[run == b]
        groups: dict[bytes, list[int]] = {}
        for i in members.tolist():
            groups.setdefault(keys[indptr[i]:indptr[i + 1]].tobytes(), []).append(i)
        for group in groups.values():
            result[group] = ord_[group].min()
    return result


@in_small_pages
def _grouped_batches(batches, min_size: int, schema: pa.Schema):
    """mapInArrow body over a task's documents (all of each key set's: shuffled by the keys' hash): the same
    rows with ``set`` (:func:`identical_sets`; null for fewer than ``min_size`` shingles)."""
    table = one_table(batches)
    if table is None:
        return
    indptr, keys = csr(table.column("keys"))
    ord_ = numpy(table.column("ord"), np.int64)
    kept = numpy(table.column("size"), np.int64) >= min_size
    found = identical_sets(indptr, keys, ord_, kept)
    table = table.append_column("set", pa.array(found, pa.int64(), mask=found < 0))
    for batch in table.to_batches():
        yield pa.RecordBatch.from_arrays(batch.columns, schema=schema)


def document_summary(docs, *, ids: bool, min_size: int) -> "Summary":
    """The :class:`Summary` of documents not grouped yet (ord, id, ..., size, keys) for a few of them (a tree
    known small: at most ``one_task.ONE_TASK_SETS``): their sizes (and, with ``ids``, the ids' 64-bit hashes)
    read on the driver, the key arrays never sent to Python a second time. Each joined document (at least
    ``min_size`` shingles) counts as a distinct set of its own: the most the distinct sets and their shingles
    can be (:attr:`Summary.late` may tell them later)."""
    from pyspark.sql import functions as F

    columns = [F.col("size")] + ([F.when(F.col("id").cast("string") != "", F.xxhash64("id")).alias("idh")] if ids else [])
    table = docs.select(*columns).toArrow()
    size = numpy(table.column("size"), np.int64)
    joined = size >= max(1, min_size)
    suspect = False
    if ids:
        idh = table.column("idh")
        hashes = numpy(idh.drop_null(), np.int64)
        suspect = idh.null_count > 0 or len(np.unique(hashes)) < len(hashes)
    return Summary(len(size), int(joined.sum()), int(joined.sum()), None, suspect, int(size[joined].sum()))


def members_and_distinct(grouped):
    """members (set, ord, id, okey, size), a row per joined document; distinct (set, size, keys), a row per set."""
    from pyspark.sql import functions as F

    members = grouped.where(F.col("set").isNotNull()).select("set", "ord", "id", "okey", "size")
    distinct = grouped.where(F.col("ord") == F.col("set")).select("set", "size", "keys")
    return members, distinct


def _count_batches(batches):
    """mapInArrow body: (key, n) partial shingle counts of a batch of distinct sets."""
    for batch in batches:
        _, keys = csr(batch.column("keys"))
        uniq, n = np.unique(keys.astype(np.int64, copy=False), return_counts=True)
        yield pa.RecordBatch.from_arrays([pa.array(uniq, pa.int64()), pa.array(n.astype(np.int64), pa.int64())],
                                         names=["key", "n"])


#: Rows of :func:`summarize`'s aggregation: (kind, key, n). SHINGLE: a shingle's key and the distinct
#: sets holding it; ID: a 64-bit hash of an id and the documents giving it; NULL_ID (key 0): documents
#: with a null id; COUNT: key DOCUMENTS, JOINED, DISTINCT, SHINGLES (of the distinct sets, summed) and how
#: many.
SHINGLE, ID, NULL_ID, COUNT = 0, 1, 2, 3
DOCUMENTS, JOINED, DISTINCT, SHINGLES = 0, 1, 2, 3
SUMMARY_SCHEMA = "kind int, key long, n long"


def _summary_rows(kind: int, keys: np.ndarray, n: np.ndarray) -> pa.RecordBatch:
    return pa.RecordBatch.from_arrays([pa.array(np.full(len(keys), kind, np.int32), pa.int32()),
                                       pa.array(keys.astype(np.int64, copy=False), pa.int64()),
                                       pa.array(n.astype(np.int64, copy=False), pa.int64())],
                                      names=["kind", "key", "n"])


#: The partial counts a planning task hands on: per hash bucket ``b`` and ``kind``, one row whose ``key``
#: and ``n`` hold that bucket's keys and counts as the bytes of int64 arrays. The JVM then moves a few
#: large values instead of a row per shingle (the Go tree: ~10 M shingles, nearly all in one file only),
#: and the counts are summed per bucket in numpy (:func:`_merged_batches`), not by Spark's aggregation.
PARTIAL_SCHEMA = "b int, kind int, key binary, n binary"
#: Buckets of the partial counts per shuffle partition (``spark.sql.shuffle.partitions``), rounded up to a
#: power of two.
BUCKETS_PER_PARTITION = 4
#: Most bytes of keys and counts in one Arrow batch of partial counts.
PARTIAL_BATCH_BYTES = 1 << 28


def bucket_bits(partitions: int) -> int:
    """Bits of the partial counts' bucket numbers: at least BUCKETS_PER_PARTITION buckets per partition."""
    return max(1, int(BUCKETS_PER_PARTITION * max(1, partitions) - 1).bit_length())


def _summed(keys: list[np.ndarray], counts: list[np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """The distinct keys (int64, ascending) of ``keys`` and the sum of ``counts`` for each (int64)."""
    keys = np.concatenate(keys) if keys else np.zeros(0, np.int64)
    if not len(keys):
        return keys.astype(np.int64), np.zeros(0, np.int64)
    by = np.argsort(keys, kind="stable")
    keys = keys[by]
    starts = np.flatnonzero(np.concatenate([[True], keys[1:] != keys[:-1]]))
    return keys[starts], np.add.reduceat(np.concatenate(counts).astype(np.int64)[by], starts)


def _bucket_rows(kind: int, keys: np.ndarray, n: np.ndarray, bits: int):
    """(b, kind, key bytes, n bytes) rows of ``keys`` (int64, ascending) cut into buckets by their top ``bits``
    bits (the keys are 64-bit hashes already), empty buckets left out. The bucket grows with the key, so each
    is a run of the sorted keys: cut, not sorted again (a stable sort by bucket cost the Go tree's planning
    0.5 CPU s of 1.0)."""
    b = (keys >> np.int64(64 - bits)) + np.int64(1 << (bits - 1))  # arithmetic shift: monotone in the key
    cut = np.flatnonzero(np.diff(b)) + 1
    starts = np.concatenate([[0], cut]).astype(np.int64)
    ends = np.concatenate([cut, [len(b)]]).astype(np.int64)
    return [(int(b[s]), kind, keys[s:e].tobytes(), n[s:e].tobytes()) for s, e in zip(starts, ends) if e > s]


@in_small_pages
def _partial_batches(batches, ids: bool, shingles: bool, bits: int):
    """mapInArrow body: a task's partial counts (PARTIAL_SCHEMA) of its grouped documents: the documents,
    joined documents and distinct sets (and their shingles); each shingle's distinct sets; each id hash's
    documents."""
    counts = np.zeros(4, np.int64)
    null_ids = 0
    shingle_keys, shingle_n, id_keys, id_n = [], [], [], []
    for batch in batches:
        ord_ = numpy(batch.column("ord"), np.int64)
        set_col = batch.column("set")
        joined = set_col.is_valid().to_numpy(zero_copy_only=False)
        distinct = joined & (numpy(set_col.fill_null(-1), np.int64) == ord_)
        counts[:3] += [len(ord_), joined.sum(), distinct.sum()]
        if distinct.any():
            _, keys = csr(batch.column("keys").filter(pa.array(distinct)))
            counts[SHINGLES] += len(keys)
            if shingles:
                uniq, n = np.unique(keys.astype(np.int64, copy=False), return_counts=True)
                shingle_keys.append(uniq)
                shingle_n.append(n.astype(np.int64))
        if ids:
            idh = batch.column("idh")
            null_ids += idh.null_count
            uniq, n = np.unique(numpy(idh.drop_null(), np.int64), return_counts=True)
            id_keys.append(uniq)
            id_n.append(n.astype(np.int64))
    kinds = [DOCUMENTS, JOINED, DISTINCT, SHINGLES]
    rows = [(0, COUNT, np.array(kinds, np.int64).tobytes(), counts.tobytes())]
    if null_ids:
        rows.append((0, NULL_ID, np.zeros(1, np.int64).tobytes(), np.array([null_ids], np.int64).tobytes()))
    for kind, keys, n in ((SHINGLE, shingle_keys, shingle_n), (ID, id_keys, id_n)):
        if keys:
            rows.extend(_bucket_rows(kind, *_summed(keys, n), bits))
    # Batches of at most PARTIAL_BATCH_BYTES (Arrow's binary offsets are 32-bit).
    sizes = np.cumsum([len(r[2]) + len(r[3]) for r in rows])
    start = 0
    while start < len(rows):
        stop = max(start + 1, int(np.searchsorted(sizes, (sizes[start - 1] if start else 0) + PARTIAL_BATCH_BYTES,
                                                  side="right")))
        b, kind, key, n = zip(*rows[start:stop])
        yield pa.RecordBatch.from_arrays([pa.array(b, pa.int32()), pa.array(kind, pa.int32()),
                                          pa.array(key, pa.binary()), pa.array(n, pa.binary())],
                                         names=["b", "kind", "key", "n"])
        start = stop


@in_small_pages
def _merged_batches(batches):
    """mapInArrow body: the partial counts of whole buckets summed (SUMMARY_SCHEMA); of the shingles and ids
    only those counted twice or more (shared shingles, suspect ids)."""
    parts: dict[int, tuple[list, list]] = {}
    for batch in batches:
        for kind, key, n in zip(batch.column("kind").to_pylist(), batch.column("key").to_pylist(),
                                batch.column("n").to_pylist()):
            keys, counts = parts.setdefault(kind, ([], []))
            keys.append(np.frombuffer(key, np.int64))
            counts.append(np.frombuffer(n, np.int64))
    for kind in sorted(parts):
        uniq, n = _summed(*parts[kind])
        if kind in (SHINGLE, ID):
            uniq, n = uniq[n >= 2], n[n >= 2]
        if len(uniq):
            yield _summary_rows(kind, uniq, n)


@dataclass
class Summary:
    """What one pass over the grouped documents found: their numbers, the shared shingles, suspect ids."""

    documents: int  # every row
    joined: int  # with at least min_shingles shingles
    distinct: int  # distinct sets among them
    shared: pa.Table | None  # (key, df) of the shingles in two or more distinct sets; None: not counted
    suspect_ids: bool  # a null or empty id, or two rows whose ids hash alike (the same id, or a rare collision)
    shingles: int = 0  # of the distinct sets, summed
    # Where the one task groups the identical sets itself (:func:`.one_task.grouping_document_pairs`),
    # ``distinct`` and ``shingles`` are first the joined documents' (the most there can be); this accumulator
    # gives the distinct sets' once the pairs are computed (:meth:`settle`).
    late: object = None

    def settle(self) -> "Summary":
        """``distinct`` and ``shingles`` of the distinct sets, where the one task has counted them since."""
        if self.late is not None and self.late.value:
            self.distinct, self.shingles = self.late.value
        return self

    @property
    def shared_ranks(self) -> int:
        """The shared shingles' places in the distinct sets (the ranks the ranked sets hold), summed."""
        return 0 if self.shared is None else int(numpy(self.shared.column("df"), np.int64).sum())


def summarize(grouped, *, ids: bool, shingles: bool, on_driver: bool = False) -> Summary:
    """Count the documents, check the ids and (``shingles``) count the shared shingles of ``grouped`` in one
    pass; the distinct sets' shingles are summed whether counted or not.

    Each task's partial counts go on as a row of bytes per hash bucket (PARTIAL_SCHEMA) and are summed
    per bucket in numpy: Spark's aggregation took a JVM row per shingle and task (the Go tree: ~10 M).
    ``on_driver`` (for a small input whose shingles are not counted): summed here instead.

    The ids are counted by a 64-bit hash (Spark's ``xxhash64``): equal ids
    hash alike, so no suspect means no repeated id; a suspect is checked
    exactly by the caller (:func:`allpairs.engines.spark.join.check_ids`),
    which names the id, or passes a collision. The shared shingles' table
    (16 bytes a row) comes to the driver with the counts.
    """
    from pyspark.sql import functions as F
    from pyspark.sql.types import LongType

    idh = F.when(F.col("id").cast("string") != "", F.xxhash64("id")) if ids else F.lit(None).cast(LongType())
    partitions = str(grouped.sparkSession.conf.get("spark.sql.shuffle.partitions", "200"))
    bits = bucket_bits(int(partitions) if partitions.isdigit() else 200)
    partial = grouped.select("ord", "set", "keys", idh.alias("idh")) \
        .mapInArrow(lambda b: _partial_batches(b, ids, shingles, bits), struct(PARTIAL_SCHEMA))
    if on_driver:
        # A few rows a task (no shingle counted; ids of a small input): summed here, no shuffle (whose
        # map side adaptive execution runs as a job of its own).
        merged = list(_merged_batches(partial.toArrow().to_batches()))
        table = pa.Table.from_batches(merged) if merged else pa.table(
            {"kind": pa.array([], pa.int32()), "key": pa.array([], pa.int64()), "n": pa.array([], pa.int64())})
    else:
        table = partial.repartition("b").mapInArrow(_merged_batches, struct(SUMMARY_SCHEMA)).toArrow()
    kind = numpy(table.column("kind"), np.int32)
    key = numpy(table.column("key"), np.int64)
    n = numpy(table.column("n"), np.int64)
    counts = dict(zip(key[kind == COUNT].tolist(), n[kind == COUNT].tolist()))
    shared = None
    if shingles:
        sel = kind == SHINGLE
        shared = pa.table({"key": pa.array(key[sel], pa.int64()), "df": pa.array(n[sel], pa.int64())})
    return Summary(counts.get(DOCUMENTS, 0), counts.get(JOINED, 0), counts.get(DISTINCT, 0), shared,
                   bool(((kind == ID) | (kind == NULL_ID)).any()), counts.get(SHINGLES, 0))


@dataclass
class TokenOrder:
    """How the shared shingles (those in two or more distinct sets) were ranked: their number, whether broadcast."""

    shared: int
    broadcast: bool
    hot: np.ndarray  # ranks (int32) of the shingles in more than the hot-group limit of sets


#: Top bits of a key that pick its bucket of the broadcast rank table: about one key per bucket, at most
#: 2**22 buckets (32 MiB of offsets at the broadcast limit).
MAX_BUCKET_BITS = 22


def rank_table(keys: np.ndarray, ranks: np.ndarray) -> tuple:
    """The broadcast rank table of :func:`lookup_ranks`: (keys sorted as uint64, their ranks int32, bucket
    offsets int64, shift uint64), the buckets by the keys' top bits (the keys are 64-bit hashes)."""
    keys = np.ascontiguousarray(keys, np.int64).view(np.uint64)
    by = np.argsort(keys, kind="stable")
    keys, ranks = keys[by], np.ascontiguousarray(ranks[by], np.int32)
    bits = int(min(MAX_BUCKET_BITS, max(1, int(len(keys)).bit_length())))
    shift = np.uint64(64 - bits)
    offsets = np.zeros((1 << bits) + 1, np.int64)
    np.cumsum(np.bincount((keys >> shift).astype(np.int64), minlength=1 << bits), out=offsets[1:])
    return keys, ranks, offsets, shift


def _lookup_batches(batches, table):
    """mapInArrow body: each set's shared shingles as sorted ranks, and how many are its own."""
    sorted_keys, rank_by_key, offsets, shift = table.value
    for batch in batches:
        indptr, keys = csr(batch.column("keys"))
        keys = np.ascontiguousarray(keys, np.int64).view(np.uint64)
        out, ranks = lookup_ranks(indptr, keys, sorted_keys, offsets, shift, rank_by_key)
        size = numpy(batch.column("size"), np.int32)
        shared = np.diff(out).astype(np.int32)
        yield pa.RecordBatch.from_arrays(
            [batch.column("set"), batch.column("size"), pa.array(size - shared, pa.int32()),
             list_array(out, ranks, pa.int32())],
            names=["set", "size", "n_single", "ranks"])


def _exploded_batches(batches, columns):
    """mapInArrow body: a row per key of each row (``columns``, then ``key``), as ``F.explode`` of an array."""
    for batch in batches:
        indptr, keys = csr(batch.column("keys"))
        row = np.repeat(np.arange(batch.num_rows, dtype=np.int64), np.diff(indptr))
        taken = pa.array(row)
        yield pa.RecordBatch.from_arrays([batch.column(c).take(taken) for c in columns] +
                                         [pa.array(keys.astype(np.int64, copy=False), pa.int64())],
                                         names=[*columns, "key"])


def explode_keys(df, *columns: str):
    """DataFrame (``columns``, key long): a row per key of each row of ``df`` (its ``keys`` column)."""
    from pyspark.sql.types import LongType, StructField, StructType

    schema = StructType([df.schema[c] for c in columns] + [StructField("key", LongType())])
    return df.select(*columns, "keys").mapInArrow(lambda b: _exploded_batches(b, columns), schema)


RANKED_SCHEMA = "set long, size int, n_single int, ranks array<int>"


@dataclass
class RankedSets:
    """The distinct sets ranked (RANKED_SCHEMA): ``frame``, a DataFrame; and, where the rank table is
    broadcast, the distinct sets and that table, so that each pass over the ranked sets (the hot tokens'
    histograms, the routing) ranks them in its own Python task, not in a task before it: the ranks then
    never cross into the JVM and back (at 1 M sets, 20 M ints and a row per set, each way, per pass). The
    hot tokens' histograms rank none: they find the hot tokens among the sets' keys (``hot_keys``)."""

    frame: object
    distinct: object = None
    lookup: object = None
    hot_keys: np.ndarray | None = None  # where broadcast: the hot tokens' keys (int64, ascending) ...
    hot_key_ranks: np.ndarray | None = None  # ... and their ranks (int32)

    def mapInArrow(self, fn, schema):
        """``fn`` over Arrow batches of the ranked sets, as ``DataFrame.mapInArrow``."""
        if self.lookup is None:
            return self.frame.mapInArrow(fn, schema)
        lookup = self.lookup
        return self.distinct.mapInArrow(lambda batches: fn(_lookup_batches(batches, lookup)), schema)


def rank_sets(distinct, *, hot_limit: int, broadcast_limit: int = BROADCAST_LIMIT, shared: pa.Table | None = None):
    """(ranked, order): each distinct set as (set, size, n_single, ranks) (:class:`RankedSets`), and the
    :class:`TokenOrder`.

    ``shared``: the (key, df) table of the shared shingles, counted already
    (:func:`summarize`); else one action counts them (kept in Spark's cache)
    and, if they are at most ``broadcast_limit``, a second brings them to the
    driver. At most ``broadcast_limit`` are ranked on the driver and broadcast;
    more are ranked by a distributed sort and joined.
    """
    from pyspark.sql import functions as F

    spark = distinct.sparkSession
    if shared is None or shared.num_rows > broadcast_limit:
        counts = distinct.select("keys").mapInArrow(_count_batches, struct("key long, n long")) \
            .groupBy("key").agg(F.sum("n").alias("df"))
        table, shared = None, counts.where(F.col("df") >= 2).persist()
        n_shared = shared.count()
    else:
        table, n_shared = shared, shared.num_rows
    if n_shared >= 2**31:
        raise OverflowError(f"{n_shared} shared shingles exceed int32 ranks")
    if n_shared <= broadcast_limit:
        if table is None:
            table = shared.toArrow()
            shared.unpersist()
        keys = numpy(table.column("key"), np.int64)
        df = numpy(table.column("df"), np.int64)
        by_rank = np.lexsort((keys, df))
        rank = np.empty(len(keys), np.int32)
        rank[by_rank] = np.arange(len(keys), dtype=np.int32)
        hot = np.sort(rank[df > hot_limit])
        by_key = np.flatnonzero(df > hot_limit)
        by_key = by_key[np.argsort(keys[by_key])]
        lookup = spark.sparkContext.broadcast(rank_table(keys, rank))
        ranked = distinct.mapInArrow(lambda batches: _lookup_batches(batches, lookup), struct(RANKED_SCHEMA))
        return (RankedSets(ranked, distinct, lookup, np.ascontiguousarray(keys[by_key], np.int64),
                           np.ascontiguousarray(rank[by_key], np.int32)), TokenOrder(len(keys), True, hot))
    # Too many to broadcast: rank by a distributed sort and join the sets' shingles with the ranks.
    ranks = shared.orderBy("df", "key").rdd.zipWithIndex() \
        .map(lambda row_index: (row_index[0]["key"], row_index[0]["df"], row_index[1])) \
        .toDF("key long, df long, rank long")
    hot = np.sort(np.array([r["rank"] for r in ranks.where(F.col("df") > hot_limit).select("rank").collect()],
                           np.int32))
    exploded = explode_keys(distinct, "set", "size")
    ranked = exploded.join(ranks.select("key", F.col("rank").cast("int").alias("rank")), "key") \
        .groupBy("set", "size").agg(F.array_sort(F.collect_list("rank")).alias("ranks")) \
        .select("set", "size", (F.col("size") - F.size("ranks")).cast("int").alias("n_single"), "ranks")
    return RankedSets(ranked), TokenOrder(n_shared, False, hot)
