"""Stage 6 on Spark: pairs of distinct sets back to pairs of documents.

Each pair of distinct sets becomes every pair of their documents (two joins
with the members table), and each group of identical documents gives all its
pairs at similarity 1 (its members but the first joined with all its
members), as locally. A pair's left document is the one first in the input
order (``okey``, then ``ord``).
"""
from __future__ import annotations

#: Columns of the pairs, as the local engine's CSV and JSON Lines name them.
COLUMNS = ["left", "right", "similarity", "overlap", "left_size", "right_size"]
#: Hidden columns that give the local engine's output order: by left document, then right.
ORDER = ["left_key", "left_ord", "right_key", "right_ord"]


def similarity(measure: str):
    """The Spark column of a measure's similarity (double) over ``overlap``, ``size_a``, ``size_b``."""
    from pyspark.sql import functions as F

    o, a, b = F.col("overlap"), F.col("size_a"), F.col("size_b")
    if measure == "containment":  # the share of a (the contained one) found in b
        return o / a
    if measure == "overlap":
        return o.cast("double")
    if measure == "cosine":
        return o / F.sqrt(a.cast("double") * b)
    if measure == "dice":
        return 2 * o / (a + b)
    return o / (a + b - o)


def document_pairs(set_pairs, members, measure: str = "jaccard"):
    """DataFrame (COLUMNS + ORDER) of all document pairs that ``set_pairs`` hold (similarity of ``measure``).

    ``set_pairs``: (a, b, overlap, size_a, size_b) over distinct set ids;
    ``members``: (set, ord, id, okey, size).
    """
    from pyspark.sql import functions as F

    def side(s):
        return members.select(F.col("set").alias(s), F.col("ord").alias(f"ord_{s}"), F.col("id").alias(f"id_{s}"),
                              F.col("okey").alias(f"ok_{s}"), F.col("size").alias(f"sz_{s}"))

    def first(a, b):
        return (F.col(f"ok_{a}") < F.col(f"ok_{b}")) | (
            (F.col(f"ok_{a}") == F.col(f"ok_{b}")) & (F.col(f"ord_{a}") < F.col(f"ord_{b}")))

    def pick(cond, x, y, name):
        return F.when(cond, F.col(x)).otherwise(F.col(y)).alias(name)

    both = set_pairs.join(side("a").drop("sz_a"), "a").join(side("b").drop("sz_b"), "b")
    ab = first("a", "b")
    cross = both.select(
        pick(ab, "id_a", "id_b", "left"), pick(ab, "id_b", "id_a", "right"),
        similarity(measure).alias("similarity"),
        "overlap", pick(ab, "size_a", "size_b", "left_size"), pick(ab, "size_b", "size_a", "right_size"),
        pick(ab, "ok_a", "ok_b", "left_key"), pick(ab, "ord_a", "ord_b", "left_ord"),
        pick(ab, "ok_b", "ok_a", "right_key"), pick(ab, "ord_b", "ord_a", "right_ord"))
    # Identical documents: the members that are not their set's first document (``ord != set``: few) joined
    # with every member of their sets, not every member with every member (adaptive execution then
    # broadcasts the few, and the members are not sorted for it). A pair of two such members is met from
    # each side and kept from the one with the smaller ord; a pair with the set's first member once.
    others = side("a").where(F.col("ord_a") != F.col("a"))
    both_same = others.join(side("b").drop("sz_b").withColumnRenamed("b", "a"), "a") \
        .where((F.col("ord_b") == F.col("a")) | (F.col("ord_a") < F.col("ord_b")))
    ab_same = first("a", "b")
    same = both_same.select(
        pick(ab_same, "id_a", "id_b", "left"), pick(ab_same, "id_b", "id_a", "right"), F.lit(1.0).alias("similarity"),
        F.col("sz_a").alias("overlap"), F.col("sz_a").alias("left_size"), F.col("sz_a").alias("right_size"),
        pick(ab_same, "ok_a", "ok_b", "left_key"), pick(ab_same, "ord_a", "ord_b", "left_ord"),
        pick(ab_same, "ok_b", "ok_a", "right_key"), pick(ab_same, "ord_b", "ord_a", "right_ord"))
    return cross.unionByName(same)


def returned(pairs, cache: bool):
    """The pairs as :func:`allpairs.spark.join` returns them: in partitions sized from their bytes (AQE's
    rebalance: one shuffle of the pairs, so that a write makes a file per ~64 MiB, not one per task, where
    a 15k-pair join made 318), and persisted (memory, then disk) with ``cache``."""
    pairs = pairs.hint("rebalance")
    if cache:
        from pyspark import StorageLevel

        pairs = pairs.persist(StorageLevel.MEMORY_AND_DISK)
    return pairs
