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
#: Joined documents up to this many are broadcast to the set pairs (:func:`document_pairs`), about 48 bytes a
#: member with integer ids and keys (string ones add their length): the rank table's budget (sets.py).
MEMBERS_BROADCAST = 1 << 20


def order_key(column, dtype):
    """The input order's key (``okey``) of a user's order column (``column``, of Spark type ``dtype``), as
    every stage compares it, Spark's sorts and Arrow's in the tasks: never null (a null is the type's least
    value, as Spark sorts nulls first; Arrow sorted them last, and a task's comparison put them neither
    before nor after, so a pair's left document and dedup's kept rows depended on the plan), an integer as
    a long, a timestamp as its microseconds and a date as its days (Arrow has no time zone for Spark's)."""
    from pyspark.sql import functions as F
    from pyspark.sql import types as T

    least = F.lit(-2**63)
    if isinstance(dtype, T.IntegralType):
        return F.coalesce(column.cast("long"), least)
    if isinstance(dtype, T.TimestampType):
        return F.coalesce(F.unix_micros(column), least)
    if isinstance(dtype, T.DateType):
        return F.coalesce(F.unix_date(column).cast("long"), least)
    if isinstance(dtype, T.StringType):
        return F.coalesce(column, F.lit(""))
    if isinstance(dtype, (T.FloatType, T.DoubleType)):
        return F.coalesce(column.cast("double"), F.lit(float("-inf")))
    return column


def similarity_sql(measure: str, o: str = "overlap", a: str = "size_a", b: str = "size_b") -> str:
    """The SQL expression of a measure's similarity (double) over the columns ``o`` (the overlap), ``a``, ``b``
    (the sizes): the one place the Spark engine writes each measure's formula."""
    if measure == "containment":
        return f"{o} / {a}"
    if measure == "overlap":
        return f"CAST({o} AS DOUBLE)"
    if measure == "cosine":
        return f"{o} / SQRT(CAST({a} AS DOUBLE) * {b})"
    if measure == "dice":
        return f"2 * {o} / ({a} + {b})"
    return f"{o} / ({a} + {b} - {o})"


def similarity(measure: str):
    """The Spark column of a measure's similarity (double) over ``overlap``, ``size_a``, ``size_b``
    (:func:`similarity_sql`'s expression)."""
    from pyspark.sql import functions as F

    return F.expr(similarity_sql(measure))


def document_pairs(set_pairs, members, measure: str = "jaccard", broadcast: bool = False,
                   identical: bool = True):
    """DataFrame (COLUMNS + ORDER) of all document pairs that ``set_pairs`` hold (similarity of ``measure``).

    ``set_pairs``: (a, b, overlap, size_a, size_b) over distinct set ids;
    ``members``: (set, ord, id, okey, size). Not ``identical``: every set is one document, paired with its
    copies in ``set_pairs`` already (:mod:`.copies`).

    ``broadcast`` (for a few members: :data:`MEMBERS_BROADCAST`): the members are broadcast to the set pairs
    (one collect of the cached members, reused by every join here), so that the pairs are joined where the
    join's tasks make them: 1 M Zipf sets, 15 -> 11 Spark jobs; the members' shuffle (13.6 MiB) and two
    stages of sort-merge joins of the pairs gone (their JVM CPU ~1.4 s).

    The columns are SQL expressions (``selectExpr``: one call to the JVM per projection, parsed there), not
    ``Column`` objects built call by call: at 1 M Zipf sets the driver took 0.2-0.4 s (0.8 s in a new
    session) of py4j calls to build them, between the planning jobs and the join's.
    """
    def side(s):
        frame = members.selectExpr(f"`set` AS {s}", f"ord AS ord_{s}", f"id AS id_{s}", f"okey AS ok_{s}",
                                   f"size AS sz_{s}")
        return frame.hint("broadcast") if broadcast else frame

    def first(a, b):
        return f"((ok_{a} < ok_{b}) OR ((ok_{a} = ok_{b}) AND (ord_{a} < ord_{b})))"

    def pick(cond, x, y, name):
        return f"CASE WHEN {cond} THEN {x} ELSE {y} END AS {name}"

    both = set_pairs.join(side("a").drop("sz_a"), "a").join(side("b").drop("sz_b"), "b")
    ab = first("a", "b")
    cross = both.selectExpr(
        pick(ab, "id_a", "id_b", "left"), pick(ab, "id_b", "id_a", "right"),
        f"{similarity_sql(measure)} AS similarity",
        "overlap", pick(ab, "size_a", "size_b", "left_size"), pick(ab, "size_b", "size_a", "right_size"),
        pick(ab, "ok_a", "ok_b", "left_key"), pick(ab, "ord_a", "ord_b", "left_ord"),
        pick(ab, "ok_b", "ok_a", "right_key"), pick(ab, "ord_b", "ord_a", "right_ord"))
    if not identical:
        return cross
    # Identical documents: the members that are not their set's first document (``ord != set``: few) joined
    # with every member of their sets, not every member with every member (adaptive execution then
    # broadcasts the few, and the members are not sorted for it). A pair of two such members is met from
    # each side and kept from the one with the smaller ord; a pair with the set's first member once.
    others = side("a").where("ord_a != a")
    both_same = others.join(side("b").drop("sz_b").withColumnRenamed("b", "a"), "a") \
        .where("(ord_b = a) OR (ord_a < ord_b)")
    same = both_same.selectExpr(
        pick(ab, "id_a", "id_b", "left"), pick(ab, "id_b", "id_a", "right"), "1.0D AS similarity",
        "sz_a AS overlap", "sz_a AS left_size", "sz_a AS right_size",
        pick(ab, "ok_a", "ok_b", "left_key"), pick(ab, "ord_a", "ord_b", "left_ord"),
        pick(ab, "ok_b", "ok_a", "right_key"), pick(ab, "ord_b", "ord_a", "right_ord"))
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
