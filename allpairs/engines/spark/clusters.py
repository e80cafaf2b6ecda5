"""Clusters on Spark: the connected components of the verified pairs, a row per document.

As :func:`allpairs.pairs.clusters.find_clusters` numbers them: clusters of two
or more documents from 1, the largest first (ties: the one whose first
document comes first in the input), documents in input order within one; with
``singletons``, every other document follows as a cluster of its own, numbered
on in input order. The components come from large-star/small-star rounds
(:mod:`.components`), the numbering from a distributed sort: nothing is
collected to the driver but one row per round and the summary.
"""
from __future__ import annotations

from dataclasses import dataclass

from .components import checkpoint, components
from .dedup import P, ROW, _plan_options, numbered
from .join import plan
from .pairs import order_key
from .session import quoted


@dataclass
class SparkClusters:
    """``rows`` (id, cluster, cluster_size; in cluster order), and the components' rounds, count and largest."""

    rows: object
    rounds: int
    clusters: int
    largest: int
    shingle: str
    threshold: object

    def describe(self) -> str:
        return (f"{self.clusters:,} clusters, the largest of {self.largest:,} documents; "
                f"{self.rounds} large-star/small-star rounds")


def _numbered(frame, order, start: int, name: str):
    """``frame`` with ``name``: its rows' ranks by ``order`` from ``start`` (a sort and zipWithIndex, in tasks)."""
    from pyspark.sql.types import LongType, StructField, StructType

    ordered = frame.orderBy(*order)
    schema = StructType(ordered.schema.fields + [StructField(name, LongType(), False)])
    return ordered.rdd.zipWithIndex().map(lambda ri: (*ri[0], ri[1] + start)).toDF(schema)


def plan_clusters(df, threshold, *, id_col: str = "id", text_col: str | None = None, tokens_col: str | None = None,
                  shingle=None, measure: str = "jaccard", singletons: bool = False, order_col: str | None = None,
                  check: bool = True, **options) -> SparkClusters:
    """:func:`clusters`, with the rounds, the number of clusters and the largest (:class:`SparkClusters`)."""
    from pyspark.sql import functions as F

    _plan_options(options, "clusters", measure)
    if text_col is None and tokens_col is None:
        text_col = "text"
    base, order = numbered(df, order_col)
    planned = plan(base, threshold, id_col=id_col, text_col=text_col, tokens_col=tokens_col, shingle=shingle,
                   measure=measure, order_col=order, check=check, members_read=True, **options)
    comps = components(planned.pairs.select(F.col("left_ord").alias("u"), F.col("right_ord").alias("v")))
    docs = comps.labels.join(planned.members.select(F.col("ord").alias("node"), "id", "okey"), "node")
    per = docs.groupBy("component").agg(F.count(F.lit(1)).alias("cluster_size"),
                                        F.min(F.struct("okey", "node")).alias("first"))
    ranked = checkpoint(_numbered(per.select("component", "cluster_size", F.col("first.okey").alias("f_key"),
                                             F.col("first.node").alias("f_ord")),
                                  [F.col("cluster_size").desc(), "f_key", "f_ord"], 1, "cluster"))
    summary = ranked.agg(F.count(F.lit(1)).alias("k"), F.max("cluster_size").alias("largest")).collect()[0]
    n_clusters = summary["k"] or 0
    rows = checkpoint(docs.join(ranked.select("component", "cluster", "cluster_size"), "component")
                      .select(F.col("id").alias(P + "id"), "cluster", "cluster_size", F.col("okey").alias(P + "okey"),
                              F.col("node").alias(P + "ord")))
    planned.unpersist()
    comps.unpersist()
    if singletons:
        # Every other row of the input (with no shingle too, as locally), numbered on in input order.
        rest = base.join(rows, base[quoted(id_col)] == rows[P + "id"], "left_anti") \
            .select(F.col(quoted(id_col)).alias(P + "id"),
                    order_key(F.col(quoted(order)), base.schema[order].dataType).alias(P + "okey"), F.col(ROW).alias(P + "ord"))
        alone = _numbered(rest, [P + "okey", P + "ord"], n_clusters + 1, "cluster") \
            .withColumn("cluster_size", F.lit(1).cast("long"))
        rows = rows.unionByName(alone)
    out = rows.orderBy("cluster", P + "okey", P + "ord").select(F.col(P + "id").alias("id"), "cluster", "cluster_size")
    return SparkClusters(out, comps.rounds, n_clusters, summary["largest"] or 0, planned.shingle, planned.threshold)


def clusters(df, threshold, *, id_col: str = "id", text_col: str | None = None, tokens_col: str | None = None,
             shingle=None, measure: str = "jaccard", singletons: bool = False, **options):
    """A row per clustered document of ``df``: ``id``, ``cluster``, ``cluster_size``, as
    :attr:`allpairs.JoinResult.clusters` numbers them (its ``to_pandas(singletons=...)``), on Spark.

    Two documents are in one cluster when a chain of verified pairs (similarity
    >= threshold, the exact join of :func:`allpairs.spark.join`) links them.
    The components are computed here (large-star/small-star rounds, Kiveris et
    al., SoCC 2014; actions, checkpointed between rounds); :func:`plan_clusters`
    also gives the rounds and the largest cluster.

    Parameters
    ----------
    singletons : bool
        Every other row too, a cluster of its own (size 1), numbered on in input order.
    Others
        As for :func:`allpairs.spark.join` (exact method; ``order_col`` and the other options).

    Returns
    -------
    pyspark.sql.DataFrame
        id (the type of ``id_col``), cluster, cluster_size (longs); ordered by cluster, then input order.
    """
    return plan_clusters(df, threshold, id_col=id_col, text_col=text_col, tokens_col=tokens_col, shingle=shingle,
                         measure=measure, singletons=singletons, **options).rows


__all__ = ["SparkClusters", "clusters", "plan_clusters"]
