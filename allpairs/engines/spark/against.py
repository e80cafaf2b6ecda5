"""R–S joins on Spark (``against=``): every pair (a, b), a from one frame and b from the other, with
similarity >= t; for containment, the share of a found in b (decontamination: benchmark items a
contained in training documents b).

Prefix filtering with only one side filtered (Mann, Augsten, Bouros, PVLDB 2016,
and the containment row of :mod:`allpairs.measures`): a pair needs at least
α of a's tokens in b, with α at least the measure's least overlap for a set of
a's size (``⌈t·|a|⌉`` for containment and Jaccard, ``k`` for overlap), so it
shares one of a's first ``|a| - α + 1`` tokens in any order both sides share.
The order here ranks a's tokens by how many b's hold them (rare first), so
that a's prefix meets few documents.

The routing, when the left side is small (benchmark items: at most
``ITEMS_BROADCAST`` shingles in all, the usual case): the documents b are never
shuffled. One pass over them counts how many hold each of a's tokens (partial
counts per task, one small aggregation of the items' distinct tokens); the
driver then builds the index of a's prefixes (token → items) and a's whole
sets, broadcasts both, and one ``mapInArrow`` streams each document past the
index (:func:`allpairs.engines.spark._kernel.probe_items`): its candidates are
the items whose prefix shares a token with it, each counted exactly against
the document in the task and tested on the measure on integers. A document's
work is its tokens' lookups plus its candidates' merges; nothing of it is
copied.

Otherwise (a large left side: a self-join, or many items) the documents are
exploded once into (document, token) rows, a long document never copied whole
per token. A candidate is a (a, b) with a token of a's prefix among b's tokens
(a join on the token); its overlap is counted exactly by joining the
candidate's a-tokens with b's (document, token) rows, and each pair is then
tested on the measure itself, on integers.
"""
from __future__ import annotations

import numpy as np
import pyarrow as pa

from ...errors import EmptyCorpusError, UsageError
from ...measures import JOIN_MEASURES, get_measure, parse_threshold
from . import sets
from .arrow import csr, numpy
from .pairs import COLUMNS, similarity

#: The left side of an R–S join is broadcast (its prefix index and its sets, up to ~32 bytes a shingle: 256 MB
#: at the limit) while it holds at most this many shingles in all; a larger one is joined by shuffles.
ITEMS_BROADCAST = 8_000_000

def _sets(df, *, id_col, text_col, tokens_col, order_col, language_col, spec, normalize, min_shingles):
    from pyspark.sql import functions as F

    docs = sets.docs_frame(df, id_col=id_col, text_col=text_col, tokens_col=tokens_col, order_col=order_col,
                           language_col=language_col, spec=spec, normalize=normalize)
    return docs.where(F.col("size") >= max(1, min_shingles))


def check_against(df, other, id_col: str, other_id_col: str) -> None:
    """Refuse, before any job, ids of different kinds on the two sides, strings and integers (one line naming
    both columns)."""
    from pyspark.sql import types as T

    a, b = df.schema[id_col].dataType, other.schema[other_id_col].dataType
    if a != b and not (isinstance(a, T.IntegralType) and isinstance(b, T.IntegralType)):  # int and long: alike
        raise UsageError(f"id_col {id_col!r} holds {a.simpleString()} but against's {other_id_col!r} holds "
                         f"{b.simpleString()}; cast one (F.col(...).cast('string')) so the pairs' ids have one type")


def plan_against(df, other, threshold, *, measure: str, id_col: str, text_col, tokens_col, spec, order_col=None,
                 language_col=None, normalize: bool = True, min_shingles: int = 1, other_id_col: str | None = None,
                 other_order_col: str | None = None):
    """The R–S pairs of ``df`` (left) against ``other`` (right): COLUMNS and the order columns, unordered.

    Both frames have the same columns for the text or tokens (``text_col`` or
    ``tokens_col``; ``language_col`` on both or neither); ``other_id_col``
    defaults to ``id_col``.
    """
    row = get_measure(measure)
    if row.name not in JOIN_MEASURES:
        raise UsageError(f"measure {measure!r} is not available on Spark; choose one of {', '.join(JOIN_MEASURES)}")
    t = parse_threshold(threshold, row)
    other_id_col = other_id_col or id_col
    from .join import check_schema

    check_schema(df, id_col, text_col, tokens_col, order_col, language_col)
    check_schema(other, other_id_col, text_col, tokens_col, other_order_col, language_col, "against's ")
    check_against(df, other, id_col, other_id_col)
    common = dict(text_col=text_col, tokens_col=tokens_col, language_col=language_col, spec=spec,
                  normalize=normalize, min_shingles=min_shingles)
    left = _sets(df, id_col=id_col, order_col=order_col, **common)
    right = _sets(other, id_col=other_id_col, order_col=other_order_col, **common)

    def refuse(side: str):
        # Either side without a set is an empty corpus, as locally: joined against nothing, it finds nothing.
        frame = df if side == "" else other
        raise EmptyCorpusError.no_sets(frame.count(), min_shingles, None if spec is None else str(spec), side)

    pairs, right_tokens = rs_pairs(left, right, t, row, refuse=refuse)
    return pairs, right_tokens, t


def _count_batches(batches, keys):
    """mapInArrow body: how many of the task's documents hold each of the broadcast sorted keys (uint64), as
    (k, n) rows, k the key's position; one row per key met, after the task's last batch, and one of k = -1
    whose n is how many documents the task read."""
    ukeys = keys.value
    counts = np.zeros(len(ukeys), np.int64)
    documents = 0
    for batch in batches:
        documents += batch.num_rows
        _, values = csr(batch.column("keys"))
        values = values.view(np.uint64) if values.dtype == np.int64 else values.astype(np.uint64)
        pos = np.searchsorted(ukeys, values)
        hit = pos < len(ukeys)
        hit[hit] = ukeys[pos[hit]] == values[hit]
        counts += np.bincount(pos[hit], minlength=len(ukeys))
    met = np.flatnonzero(counts)
    yield pa.RecordBatch.from_arrays([pa.array(np.append(met, -1).astype(np.int32)),
                                      pa.array(np.append(counts[met], documents))], names=["k", "n"])


def _probe_batches(batches, index, code, p, q, schema):
    """mapInArrow body: each document's items (lid, the item's ord) with their overlap, the document's
    columns beside (``probe_items`` over the broadcast index)."""
    from ._kernel import probe_items

    p_keys, p_ptr, p_item, i_ptr, i_keys, i_ord = index.value
    for batch in batches:
        d_ptr, values = csr(batch.column("keys"))
        values = values.view(np.uint64) if values.dtype == np.int64 else values.astype(np.uint64)
        d, it, o = probe_items(np.ascontiguousarray(d_ptr, np.int64), np.ascontiguousarray(values), p_keys, p_ptr,
                               p_item, i_ptr, i_keys, code, p, q, len(i_ord))
        take = pa.array(d)
        yield pa.RecordBatch.from_arrays(
            [pa.array(i_ord[it]), pa.array(o.astype(np.int32)), batch.column("ord").take(take),
             batch.column("id").take(take), batch.column("okey").take(take), batch.column("size").take(take)],
            schema=schema)


def item_index(i_ptr, i_keys, df, prefix_len):
    """The index of the items' prefixes: (p_keys, p_ptr, p_item), the distinct prefix tokens sorted (uint64)
    and the items holding each. An item's prefix is its first ``prefix_len[i]`` tokens ranked rare first
    (``df``, per token of ``i_keys``: how many documents hold it; ties by key): an item reaching α of its
    tokens in a document shares one of its first ``|a| - α + 1`` in any order of its own."""
    n = len(i_ptr) - 1
    item = np.repeat(np.arange(n, dtype=np.int64), np.diff(i_ptr))
    by_rank = np.lexsort((i_keys, df, item))  # within each item: rare first, ties by key
    pos = np.arange(len(i_keys), dtype=np.int64) - np.repeat(i_ptr[:-1], np.diff(i_ptr))
    chosen = by_rank[pos < np.repeat(prefix_len, np.diff(i_ptr))]
    keys, owners = i_keys[chosen], item[chosen]
    by_key = np.lexsort((owners, keys))
    keys, owners = keys[by_key], owners[by_key]
    p_keys, starts = np.unique(keys, return_index=True)
    p_ptr = np.append(starts, len(keys)).astype(np.int64)
    return p_keys, p_ptr, owners.astype(np.int64)


def broadcast_pairs(left, right, t, row, refuse=None):
    """(pairs, right): the R–S pairs of :func:`rs_pairs` with the left side broadcast (see the module's
    docstring): one job collects the left side, two pass over the documents, and nothing of them is
    shuffled; ``right`` comes back kept as a local checkpoint (the two passes read it once), for the
    caller to unpersist. ``refuse("against: ")`` is called (to raise) where the right side holds no set."""
    from pyspark.sql import functions as F

    spark = left.sparkSession
    sc = spark.sparkContext
    items = left.where(F.col("size") >= 1).select("ord", "size", "keys").toArrow()
    i_ptr, i_keys = csr(items.column("keys"))
    i_ptr = np.ascontiguousarray(i_ptr, np.int64)
    i_keys = np.ascontiguousarray(i_keys).view(np.uint64)
    i_ord = numpy(items.column("ord"), np.int64)
    sizes = np.diff(i_ptr)
    right = right.where(F.col("size") >= 1).localCheckpoint(eager=False)
    ukeys = np.unique(i_keys)
    held = sc.broadcast(ukeys)
    counted = right.select("keys").mapInArrow(lambda b: _count_batches(b, held), "k int, n long") \
        .groupBy("k").agg(F.sum("n").alias("n")).toArrow()
    held.unpersist()
    k, n = numpy(counted.column("k"), np.int64), numpy(counted.column("n"), np.int64)
    if refuse is not None and not n[k == -1].sum():
        right.unpersist()
        refuse("against: ")
    df_u = np.zeros(len(ukeys), np.int64)
    df_u[k[k >= 0]] = n[k >= 0]
    df = df_u[np.searchsorted(ukeys, i_keys)]
    plen = {int(s): row.probe_prefix(t, int(s), "left") for s in np.unique(sizes)}
    prefix_len = np.array([plen[int(s)] for s in sizes], np.int64)
    p_keys, p_ptr, p_item = item_index(i_ptr, i_keys, df, prefix_len)
    index = sc.broadcast((p_keys, p_ptr, p_item, i_ptr, i_keys, i_ord))
    from pyspark.sql.types import IntegerType, LongType, StructField, StructType
    from pyspark.sql.pandas.types import to_arrow_schema

    out = StructType([StructField("lid", LongType()), StructField("overlap", IntegerType()),
                      StructField("rid", LongType()), StructField("right", right.schema["id"].dataType),
                      StructField("right_key", right.schema["okey"].dataType),
                      StructField("right_size", IntegerType())])
    schema = to_arrow_schema(out)
    found = right.select("ord", "id", "okey", "size", "keys").mapInArrow(
        lambda b: _probe_batches(b, index, row.code, t.p, t.q, schema), out)
    lefts = left.select(F.col("ord").alias("lid"), F.col("id").alias("left"), F.col("size").alias("left_size"),
                        F.col("okey").alias("left_key"), F.col("ord").alias("left_ord"))
    both = found.join(F.broadcast(lefts), "lid").select("*", F.col("rid").alias("right_ord"),
                                                        F.col("left_size").alias("size_a"),
                                                        F.col("right_size").alias("size_b"))
    return both.select("left", "right", similarity(row.name).cast("double").alias("similarity"), "overlap",
                       "left_size", "right_size", "left_key", "left_ord", "right_key", "right_ord"), right


def rs_pairs(left, right, t, row, broadcast_limit: int | None = None, refuse=None):
    """(pairs, right_tokens): the pairs (a, b), a from the sets ``left`` and b from ``right`` (each a frame
    of ord, id, okey, size, keys, sizes at least 1), that reach ``t`` under the measure ``row``: COLUMNS
    and the order columns, unordered; and a frame kept as a local checkpoint, for the caller to
    unpersist. A left side of at most ``broadcast_limit`` shingles (default :data:`ITEMS_BROADCAST`) is
    broadcast (:func:`broadcast_pairs`), a larger one joined by shuffles. ``refuse(side)`` (to raise) is
    called with "" where ``left`` holds no set, else with "against: " where ``right`` holds none, each
    known on the way (no job of its own but a look at the checkpointed right side's first row)."""
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    spark = left.sparkSession
    total = left.where(F.col("size") >= 1).agg(F.sum("size").alias("n")).collect()[0]["n"] or 0
    if refuse is not None and not total:
        refuse("")
    if total <= (ITEMS_BROADCAST if broadcast_limit is None else broadcast_limit):
        return broadcast_pairs(left, right, t, row, refuse)
    right_tokens = sets.explode_keys(right, "ord").withColumnRenamed("ord", "rid").localCheckpoint(eager=True)
    if refuse is not None and right_tokens.isEmpty():
        right_tokens.unpersist()
        refuse("against: ")
    left_tokens = sets.explode_keys(left, "ord", "size").withColumnRenamed("ord", "lid")
    # How many documents hold each of the left side's tokens: the order of its prefixes (rare first).
    freq = right_tokens.join(left_tokens.select("key").distinct(), "key", "left_semi").groupBy("key") \
        .agg(F.count(F.lit(1)).alias("df"))
    sizes = [r["size"] for r in left.select("size").distinct().collect()]
    prefix = spark.createDataFrame([(s, row.probe_prefix(t, s, "left")) for s in sizes] or [(0, 0)],
                                   "size int, plen int")
    ranked = left_tokens.join(freq, "key", "left").fillna(0, ["df"]).join(F.broadcast(prefix), "size") \
        .withColumn("pos", F.row_number().over(Window.partitionBy("lid").orderBy("df", "key")))
    probes = ranked.where(F.col("pos") <= F.col("plen")).select("lid", "key")
    candidates = probes.join(right_tokens, "key").select("lid", "rid").distinct()
    overlap = candidates.join(left_tokens.select("lid", "key"), "lid").join(right_tokens, ["rid", "key"]) \
        .groupBy("lid", "rid").agg(F.count(F.lit(1)).cast("int").alias("overlap"))

    def side(frame, key, name):
        return frame.select(F.col("ord").alias(key), F.col("id").alias(name), F.col("size").alias(f"{name}_size"),
                            F.col("okey").alias(f"{name}_key"), F.col("ord").alias(f"{name}_ord"))

    both = overlap.join(side(left, "lid", "left"), "lid").join(side(right, "rid", "right"), "rid") \
        .select("*", F.col("left_size").alias("size_a"), F.col("right_size").alias("size_b"))
    from .join import _accept_batches

    accepted = both.mapInArrow(lambda b: _accept_batches(b, row.name, t), both.schema)
    return accepted.select("left", "right", similarity(row.name).cast("double").alias("similarity"), "overlap",
                           "left_size", "right_size", "left_key", "left_ord", "right_key", "right_ord"), right_tokens


def self_pairs(sets, t, row):
    """The pairs of one frame of sets with itself under an R–S measure (containment, overlap): for
    containment every ordered pair of two documents (a, b) with a's share in b at least ``t`` (identical
    sets both ways), as locally; for the others each pair once, left first in the input order."""
    from pyspark.sql import functions as F

    pairs, right_tokens = rs_pairs(sets, sets, t, row)
    if row.name == "containment":
        return pairs.where(F.col("left_ord") != F.col("right_ord")), right_tokens
    first = (F.col("left_key") < F.col("right_key")) | (
        (F.col("left_key") == F.col("right_key")) & (F.col("left_ord") < F.col("right_ord")))
    return pairs.where(first), right_tokens


#: The options of :func:`allpairs.spark.join` an R–S join takes.
AGAINST_OPTIONS = ("order_col", "language_col", "normalize", "min_shingles")


def join_against(df, other, threshold, *, measure: str = "jaccard", id_col: str = "id",
                 text_col: str | None = None, tokens_col: str | None = None, shingle=None, method: str = "exact",
                 **options):
    """The pairs of :func:`allpairs.spark.join` with ``against=other`` (COLUMNS, left from ``df``, right from
    ``other``), for it to return."""
    from .join import check_ids, check_schema
    from .session import check_workers
    from .shingle import choose_shingle, given_spec

    if method != "exact":
        raise UsageError("an R–S join (against=) is exact only; drop method='lsh'")
    extra = sorted(set(options) - set(AGAINST_OPTIONS))
    if extra:
        raise UsageError(f"{extra[0]} does not apply to an R–S join (against=); it takes "
                         f"{', '.join(AGAINST_OPTIONS)}")
    spec = given_spec(shingle, tokens_col, options.get("normalize", True))  # None: chosen from the texts below
    order_col = options.get("order_col")
    get_measure(measure)  # an unknown measure: one line before any job
    check_schema(df, id_col, text_col, tokens_col, order_col, options.get("language_col"))
    check_schema(other, id_col, text_col, tokens_col, order_col, options.get("language_col"), "against's ")
    check_against(df, other, id_col, id_col)
    check_workers(df.sparkSession)
    check_ids(df, id_col)
    check_ids(other, id_col, "against's ")
    if spec is None and text_col is not None:
        # Both sides shingled alike, chosen as locally from the texts of both (left first).
        spec = choose_shingle([(df, text_col, order_col), (other, text_col, order_col)]).spec
    pairs, _, _ = plan_against(df, other, threshold, measure=measure, id_col=id_col, text_col=text_col,
                               tokens_col=tokens_col, spec=spec, other_order_col=order_col, **options)
    return pairs.select(*COLUMNS)


__all__ = ["check_against", "join_against", "plan_against", "rs_pairs", "self_pairs", "broadcast_pairs", "item_index"]
