"""Dedup on Spark: the local engine's rule, decided per connected component of the verified pairs.

The rule (:func:`allpairs.index.dedup`): documents are read in input order;
one is kept unless a kept document reaches the threshold with it, and a
removed one is charged to the most similar kept one (the earliest among
equals). Whether a document is kept depends only on its earlier partners, and
theirs, so only on the documents of its connected component in the graph of
the verified pairs: deciding each component in input order gives the answer
of the whole corpus in order. So the components (large-star/small-star,
:mod:`.components`) are dealt to tasks whole, and each task runs the rule over
its pairs (:func:`._dedup_kernel.decide`). With containment the rule is
directed (the local dedup queries each document, the contained side, against
the kept ones): its edges are the pairs whose contained document is the later
one, earlier first, and a document that contains an earlier kept one stays;
the components over those edges decide as the whole corpus does.

A component of more than ``max_component`` pairs is not given to one task.
Its documents are decided in rounds over all its pairs in Spark, the rule
read as the lexicographically first maximal independent set (Blelloch,
Fineman, Shun, "Greedy sequential maximal independent set and matching are
parallel on average", SPAA 2012): a document is removed once a kept document
pairs with it from earlier, and kept once every earlier partner is removed.
Each round decides at least the earliest undecided document of each
component; once the pairs still undecided fit in one task (``max_component``),
that task finishes them by the rule, the documents kept so far given as kept.
Last, each document removed in a round is charged to its best kept partner
(a task per group of removed documents, once the last task has run: a partner
may be kept in a later round than the one that removed the document).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ...errors import UsageError
from ...measures import get_measure
from ._dedup_kernel import KEPT, REMOVED, UNDECIDED, decide
from .arrow import numpy, one_table
from .components import checkpoint, components
from .join import PLAN_OPTIONS, plan
from .pairs import similarity
from .session import quoted

#: Options of the join that only its LSH method takes (dedup is exact).
LSH_OPTIONS = ("num_perm", "bands", "rows", "recall", "seed", "bits", "max_bucket", "max_expand")

#: A component of more pairs than this is decided in rounds over Spark, not in one task.
MAX_COMPONENT = 2_000_000

EDGE_COLUMNS = ["l_ord", "l_key", "r_ord", "r_key", "overlap", "l_size", "r_size"]
REMOVED_SCHEMA = "ord long, dup_ord long, overlap int, removed_size int, kept_size int"


def _positions(table: pa.Table) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The task's documents numbered 0..n-1 in input order (key, then ord): (ords in that order, the
    left and right number of each pair, and the order that sorts the pairs by right)."""
    keys = pa.concat_arrays([table.column("l_key").combine_chunks(), table.column("r_key").combine_chunks()])
    ords = pa.concat_arrays([table.column("l_ord").combine_chunks(), table.column("r_ord").combine_chunks()])
    both = pa.table({"key": keys, "ord": ords})
    both = both.take(pc.sort_indices(both, [("key", "ascending"), ("ord", "ascending")]))
    o = numpy(both.column("ord"), np.int64)
    first = np.ones(len(o), bool)
    first[1:] = o[1:] != o[:-1]
    doc_ords = o[first]
    # ords are unique per document and ordered here by (key, ord): look them up by ord.
    by_ord = np.argsort(doc_ords, kind="stable")
    sorted_ords = doc_ords[by_ord]

    def number(col):
        return by_ord[np.searchsorted(sorted_ords, numpy(table.column(col), np.int64))]

    left, right = number("l_ord"), number("r_ord")
    return doc_ords, left, right, np.argsort(right, kind="stable")


def _decide_table(table: pa.Table, code: int, kept_ords: np.ndarray | None = None,
                  removed_ords: np.ndarray | None = None) -> pa.RecordBatch:
    """The rule over one task's pairs; the removed documents as (ord, dup_ord, overlap, removed_size, kept_size).

    ``kept_ords`` / ``removed_ords``: documents decided already (their status is given, not decided here).
    """
    doc_ords, left, right, by_right = _positions(table)
    left, right = left[by_right], right[by_right]
    overlap = numpy(table.column("overlap"), np.int64)[by_right]
    l_size = numpy(table.column("l_size"), np.int64)[by_right]
    r_size = numpy(table.column("r_size"), np.int64)[by_right]
    status = np.full(len(doc_ords), UNDECIDED, np.int8)
    for given, value in ((kept_ords, KEPT), (removed_ords, REMOVED)):
        if given is not None and len(given):
            status[np.isin(doc_ords, given)] = value
    dup, dup_overlap = decide(len(doc_ords), status, left, right, overlap, l_size, r_size, code)
    removed = np.flatnonzero(dup >= 0)
    size = np.zeros(len(doc_ords), np.int64)
    size[right] = r_size
    size[left] = l_size
    return pa.RecordBatch.from_arrays(
        [pa.array(doc_ords[removed], pa.int64()), pa.array(doc_ords[dup[removed]], pa.int64()),
         pa.array(dup_overlap[removed].astype(np.int32), pa.int32()),
         pa.array(size[removed].astype(np.int32), pa.int32()),
         pa.array(size[dup[removed]].astype(np.int32), pa.int32())],
        names=["ord", "dup_ord", "overlap", "removed_size", "kept_size"])


def _decide_batches(batches, code: int):
    """mapInArrow body: the rule over a task's whole components (or over whole groups of one removed
    document, with ``l_status`` telling which partners are kept)."""
    table = one_table(batches)
    if table is None:
        return
    kept = removed = None
    if "l_status" in table.column_names:
        status = numpy(table.column("l_status"), np.int8)
        lords = numpy(table.column("l_ord"), np.int64)
        kept = np.unique(lords[status == KEPT])
        removed = np.unique(numpy(table.column("r_ord"), np.int64))
    yield _decide_table(table, code, kept, removed)


@dataclass
class DedupPlan:
    """What Spark's dedup decided: ``removed`` (REMOVED_SCHEMA, a row per removed document), and how."""

    removed: object
    components: int
    rounds: int
    largest: int
    giant: int
    giant_rounds: int = 0


def decide_components(pairs, measure: str, *, max_component: int = MAX_COMPONENT) -> DedupPlan:
    """The removed documents of the rule over ``pairs`` (a planned join's pairs, with their order columns)."""
    from pyspark.sql import functions as F

    spark = pairs.sparkSession
    code = get_measure(measure).code
    if measure == "containment":
        # A later document is removed when it is contained in an earlier kept one (the local rule queries
        # each document, the contained side, against the kept ones): of the pairs (contained, container),
        # both ways, the edges are those whose contained document comes later, earlier document first.
        later = (F.col("left_key") > F.col("right_key")) | (
            (F.col("left_key") == F.col("right_key")) & (F.col("left_ord") > F.col("right_ord")))
        pairs = pairs.where(later).select(
            F.col("right_ord").alias("left_ord"), F.col("right_key").alias("left_key"),
            F.col("left_ord").alias("right_ord"), F.col("left_key").alias("right_key"), "overlap",
            F.col("right_size").alias("left_size"), F.col("left_size").alias("right_size"))
    edges = checkpoint(pairs.select(F.col("left_ord").alias("l_ord"), F.col("left_key").alias("l_key"),
                                    F.col("right_ord").alias("r_ord"), F.col("right_key").alias("r_key"),
                                    "overlap", F.col("left_size").alias("l_size"),
                                    F.col("right_size").alias("r_size")))
    comps = components(edges.select(F.col("l_ord").alias("u"), F.col("r_ord").alias("v")))
    labelled = edges.join(comps.labels.select(F.col("node").alias("l_ord"), "component"), "l_ord")
    sizes = checkpoint(labelled.groupBy("component").agg(F.count(F.lit(1)).alias("n_pairs")))
    summary = sizes.agg(F.count(F.lit(1)).alias("k"), F.max("n_pairs").alias("largest"),
                        F.sum((F.col("n_pairs") > max_component).cast("int")).alias("giant")).collect()[0]
    labelled = labelled.join(sizes, "component")
    small = labelled.where(F.col("n_pairs") <= max_component)
    parts = spark.sparkContext.defaultParallelism * 4
    schema = REMOVED_SCHEMA
    removed = small.repartition(parts, "component").select(*EDGE_COLUMNS) \
        .mapInArrow(lambda b: _decide_batches(b, code), schema)
    plan = DedupPlan(removed, summary["k"] or 0, comps.rounds, summary["largest"] or 0, summary["giant"] or 0)
    if plan.giant:
        giant_removed, plan.giant_rounds = _decide_giant(
            labelled.where(F.col("n_pairs") > max_component).select(*EDGE_COLUMNS), code, max_component, parts)
        removed = removed.unionByName(giant_removed)
    plan.removed = checkpoint(removed)
    edges.unpersist()
    comps.unpersist()
    sizes.unpersist()
    return plan


def _decide_giant(edges, code: int, max_component: int, parts: int):
    """The rule over components too large for one task: rounds in Spark, then one task, then the charges."""
    from pyspark.sql import functions as F

    spark = edges.sparkSession
    edges = checkpoint(edges)
    status = spark.createDataFrame([], "ord long, status byte")
    rest = edges
    rounds = 0
    while rest.count() > max_component:
        rounds += 1
        seen = rest.join(status.select(F.col("ord").alias("l_ord"), F.col("status").alias("l_status")), "l_ord", "left")
        per_doc = seen.groupBy("r_ord").agg(
            F.max((F.col("l_status") == KEPT).cast("int")).alias("any_kept"),
            F.max(F.col("l_status").isNull().cast("int")).alias("any_open"))
        removed_now = per_doc.where(F.col("any_kept") == 1).select(F.col("r_ord").alias("ord"),
                                                                    F.lit(REMOVED).cast("byte").alias("status"))
        kept_now = per_doc.where((F.col("any_kept") == 0) & (F.col("any_open") == 0)) \
            .select(F.col("r_ord").alias("ord"), F.lit(KEPT).cast("byte").alias("status"))
        # A document that no open pair reaches from earlier (the first of its component, or one whose
        # earlier partners are all removed and dropped) is kept.
        targets = rest.select(F.col("r_ord").alias("ord")).distinct()
        roots = rest.select(F.col("l_ord").alias("ord")).distinct().join(targets, "ord", "left_anti") \
            .join(status, "ord", "left_anti").select("ord", F.lit(KEPT).cast("byte").alias("status"))
        previous = status
        status = checkpoint(status.unionByName(removed_now).unionByName(kept_now).unionByName(roots))
        previous.unpersist()
        decided = status.select(F.col("ord").alias("r_ord"))
        dropped = status.where(F.col("status") == REMOVED).select(F.col("ord").alias("l_ord"))
        previous = rest
        rest = checkpoint(rest.join(decided, "r_ord", "left_anti").join(dropped, "l_ord", "left_anti"))
        if previous is not edges:
            previous.unpersist()
    # The rest in one task: its kept partners given as kept, the rule decides the others.
    with_status = rest.join(status.select(F.col("ord").alias("l_ord"), F.col("status").alias("l_status")),
                            "l_ord", "left")
    finish = checkpoint(with_status.repartition(1).select(*EDGE_COLUMNS, "l_status")
                        .mapInArrow(lambda b: _finish_batches(b, code), REMOVED_SCHEMA))
    # Documents removed in the rounds: charged to their best kept partner, a task per group of them. A
    # partner may have been kept after the document was removed (in a later round or in the last task):
    # every document of these components not removed, in the rounds or in the last task, is kept.
    removed_rounds = status.where(F.col("status") == REMOVED).select(F.col("ord").alias("r_ord"))
    removed_all = removed_rounds.select(F.col("r_ord").alias("ord")).unionByName(finish.select("ord"))
    kept_ords = edges.select(F.col("l_ord").alias("ord")).unionByName(edges.select(F.col("r_ord").alias("ord"))) \
        .distinct().join(removed_all, "ord", "left_anti")
    charged = edges.join(removed_rounds, "r_ord", "left_semi") \
        .join(kept_ords.select(F.col("ord").alias("l_ord")), "l_ord", "left_semi") \
        .withColumn("l_status", F.lit(KEPT).cast("byte")) \
        .repartition(parts, "r_ord").select(*EDGE_COLUMNS, "l_status") \
        .mapInArrow(lambda b: _decide_batches(b, code), REMOVED_SCHEMA)
    return finish.unionByName(charged), rounds


def _finish_batches(batches, code: int):
    """mapInArrow body: the rule over the undecided rest of the large components (one task); ``l_status``
    KEPT marks a partner kept in the rounds."""
    table = one_table(batches)
    if table is None:
        return
    status = numpy(table.column("l_status").fill_null(UNDECIDED), np.int8)
    kept = np.unique(numpy(table.column("l_ord"), np.int64)[status == KEPT])
    yield _decide_table(table, code, kept)


#: The prefix of the columns :func:`dedup` adds to the input's rows (dropped from what it returns).
P = "__allpairs_"
#: The column that numbers the input's rows (Spark's row order).
ROW = P + "row"


def numbered(df, order_col: str | None):
    """``df`` with :data:`ROW` (a unique long, Spark's row order) and the order column to plan with."""
    from pyspark.sql import functions as F

    taken = [c for c in df.columns if c.startswith(P)]
    if taken:
        raise UsageError(f"the DataFrame has a column {taken[0]!r}; names starting {P!r} are allpairs' own: rename it")
    return df.withColumn(ROW, F.monotonically_increasing_id()), order_col or ROW


def _plan_options(options: dict, name: str, measure: str = "jaccard") -> dict:
    unknown = sorted((set(options) - set(PLAN_OPTIONS)) | (set(options) & {"method", *LSH_OPTIONS}))
    if unknown:
        raise TypeError(f"allpairs.spark.{name}() got an unexpected keyword argument {unknown[0]!r}; it takes "
                        f"id_col, text_col, tokens_col, shingle, measure and "
                        f"{', '.join(o for o in PLAN_OPTIONS if o not in LSH_OPTIONS)}")
    return options


def dedup(df, threshold, *, id_col: str = "id", text_col: str | None = None, tokens_col: str | None = None,
          shingle=None, measure: str = "jaccard", all_rows: bool = False, max_component: int = MAX_COMPONENT,
          **options):
    """The rows of ``df`` that :func:`allpairs.dedup` keeps: a row is kept unless a kept row earlier in the
    input reaches the threshold with it (every column as it is, in input order), on Spark.

    The same answer as the local engine, row for row: the exact join's verified
    pairs (:func:`allpairs.spark.join`), their connected components (large-star /
    small-star), and the local rule decided per component in a task (see the
    module's docstring, also for components too large for one task).

    Parameters
    ----------
    df : pyspark.sql.DataFrame
        One row per document, in input order (or ``order_col=``).
    threshold, id_col, text_col, tokens_col, shingle, measure
        As for :func:`allpairs.spark.join`; with ``measure="containment"`` a row is removed when an
        earlier kept row contains it (its share in that row reaches the threshold), as locally.
    all_rows : bool
        Return the removed rows too, with ``duplicate_of`` (the id of the kept
        row each duplicates: the most similar, the earliest among equals; null
        for a kept row) and ``similarity`` (double). A row with no shingle is
        kept (nothing reaches it); one below ``min_shingles`` is left out.
    max_component : int
        Components of more pairs are decided in rounds over Spark, not in one task.
    **options
        ``order_col``, ``language_col``, ``normalize``, ``min_shingles``, ``max_group``,
        ``token_groups``, ``broadcast_limit``, as for :func:`allpairs.spark.join`.

    Returns
    -------
    pyspark.sql.DataFrame
        Ordered by the input order. The components are computed here (actions);
        the rows when the result is.
    """
    return plan_dedup(df, threshold, id_col=id_col, text_col=text_col, tokens_col=tokens_col, shingle=shingle,
                      measure=measure, all_rows=all_rows, max_component=max_component, **options).rows


@dataclass
class SparkDedup:
    """Spark's dedup: ``rows`` (the DataFrame :func:`dedup` returns) and how it was decided."""

    rows: object
    decided: DedupPlan
    shingle: str
    threshold: object
    status: object  # (id, ord, okey, duplicate_of, ...) per document with a shingle, checkpointed

    def counts(self) -> tuple[int, int, int]:
        """(kept, removed, kept with no shingle) documents (one job)."""
        from pyspark.sql import functions as F

        row = self.status.agg(F.count(F.lit(1)).alias("n"), F.count(P + "duplicate_of").alias("removed"),
                              F.count(F.when(F.col(P + "empty"), 1)).alias("empty")).collect()[0]
        return row["n"] - row["removed"], row["removed"], row["empty"]

    def removed_pairs(self):
        """The local ``dedup --removed`` table's pair columns, a row per removed document in input order:
        removed, kept (ids), similarity (double), overlap, removed_size, kept_size (int); then the order's
        keys, ``P + "okey"`` and ``P + "ord"``, to sort by once other columns are joined on."""
        from pyspark.sql import functions as F

        return self.status.where(F.col(P + "duplicate_of").isNotNull()).select(
            F.col(P + "id").alias("removed"), F.col(P + "duplicate_of").alias("kept"),
            F.col(P + "similarity").alias("similarity"),
            *(F.col(P + c).cast("int").alias(c) for c in ("overlap", "removed_size", "kept_size")),
            P + "okey", P + "ord")


def plan_dedup(df, threshold, *, id_col: str = "id", text_col: str | None = None, tokens_col: str | None = None,
               shingle=None, measure: str = "jaccard", all_rows: bool = False,
               max_component: int = MAX_COMPONENT, order_col: str | None = None, check: bool = True,
               **options) -> SparkDedup:
    """:func:`dedup`, with what it found on the way (:class:`SparkDedup`)."""
    from pyspark.sql import functions as F

    _plan_options(options, "dedup", measure)
    if isinstance(max_component, bool) or not isinstance(max_component, int) or max_component < 1:
        raise UsageError(f"max_component must be a whole number >= 1, got {max_component!r}")
    if text_col is None and tokens_col is None:
        text_col = "text"
    taken = [c for c in ("duplicate_of", "similarity") if all_rows and c in df.columns]
    if taken:  # two columns of one name: Spark writes neither, and only once the dedup has run
        raise UsageError(f"the input has a column {taken[0]!r}, which {{{{all_rows}}}} adds to each row (duplicate_of, "
                         "similarity): rename it", param="all_rows")
    base, order = numbered(df, order_col)
    planned = plan(base, threshold, id_col=id_col, text_col=text_col, tokens_col=tokens_col, shingle=shingle,
                   measure=measure, order_col=order, check=check, members_read=True, **options)
    decided = decide_components(planned.pairs, measure, max_component=max_component)
    members = planned.members.select("id", "ord", "okey")
    kept_ids = members.select(F.col("ord").alias("dup_ord"), F.col("id").alias("duplicate_of"))
    charged = decided.removed.join(kept_ids, "dup_ord").select(
        "ord", "duplicate_of", "overlap", F.col("removed_size").alias("size_a"), F.col("kept_size").alias("size_b"))
    decided_rows = members.join(charged, "ord", "left").select(
        F.col("id").alias(P + "id"), F.col("ord").alias(P + "ord"), F.col("okey").alias(P + "okey"),
        F.col("duplicate_of").alias(P + "duplicate_of"), similarity(measure).alias(P + "similarity"),
        F.lit(False).alias(P + "empty"), F.col("overlap").alias(P + "overlap"),
        F.col("size_a").alias(P + "removed_size"), F.col("size_b").alias(P + "kept_size"))
    # A document with no shingle reaches no one: kept, as locally (one below min_shingles is dropped, as asked).
    empty = planned.grouped.where(F.col("size") == 0).select(
        F.col("id").alias(P + "id"), F.col("ord").alias(P + "ord"), F.col("okey").alias(P + "okey"),
        F.lit(None).cast(decided_rows.schema[P + "duplicate_of"].dataType).alias(P + "duplicate_of"),
        F.lit(None).cast("double").alias(P + "similarity"), F.lit(True).alias(P + "empty"),
        *(F.lit(None).cast(decided_rows.schema[P + c].dataType).alias(P + c)
          for c in ("overlap", "removed_size", "kept_size")))
    status = checkpoint(decided_rows.unionByName(empty))
    planned.unpersist()
    decided.removed.unpersist()
    rows = base.join(status, base[quoted(id_col)] == status[P + "id"])
    if not all_rows:
        rows = rows.where(F.col(P + "duplicate_of").isNull())
    extra = [F.col(P + "duplicate_of").alias("duplicate_of"), F.col(P + "similarity").alias("similarity")] \
        if all_rows else []
    rows = rows.orderBy(P + "okey", P + "ord").select(*(base[quoted(c)] for c in df.columns), *extra)
    return SparkDedup(rows, decided, planned.shingle, planned.threshold, status)


__all__ = ["DedupPlan", "MAX_COMPONENT", "SparkDedup", "decide_components", "dedup", "plan_dedup"]
