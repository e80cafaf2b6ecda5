"""Connected components of the verified pairs on Spark: large-star and small-star rounds.

Kiveris, Lattanzi, Mirrokni, Rastogi, Vassilvitskii, "Connected Components in
MapReduce and Beyond", SoCC 2014. Nodes are longs; a component is named by
its smallest node. Each round is one large-star (every node links its larger
neighbours to the smallest node of its neighbourhood, itself included) and
one small-star (every node links itself and its smaller neighbours to the
smallest of them); the edge set shrinks towards one star per component, whose
centre is the component's smallest node, in O(log² n) rounds (O(log n) in
practice). The edges are checkpointed after every round, so that the plan of
round k does not hold the k rounds before it. Nothing is collected to the
driver but one row per round, the convergence check.
"""
from __future__ import annotations

from dataclasses import dataclass


def checkpoint(df):
    """``df`` computed and cut from its lineage: a reliable checkpoint where the SparkContext has a
    checkpoint directory, else a local one (executor storage)."""
    if df.sparkSession.sparkContext.getCheckpointDir() is not None:
        return df.checkpoint(eager=True)
    return df.localCheckpoint(eager=True)


def _large_star(edges):
    """(u, v) → (v, m(u)) for each neighbour v > u, m(u) the smallest of u and its neighbours."""
    from pyspark.sql import functions as F

    both = edges.select("u", "v").unionByName(edges.select(F.col("v").alias("u"), F.col("u").alias("v")))
    least = both.groupBy("u").agg(F.least(F.min("v"), F.first("u")).alias("m"))
    return both.join(least, "u").where(F.col("v") > F.col("u")).select(F.col("v").alias("u"), F.col("m").alias("v")) \
        .distinct()


def _small_star(edges):
    """Each edge taken from its larger end u: u and its smaller neighbours v linked to the smallest of them."""
    from pyspark.sql import functions as F

    down = edges.select(F.greatest("u", "v").alias("u"), F.least("u", "v").alias("v"))
    least = down.groupBy("u").agg(F.min("v").alias("m"))
    spokes = down.join(least, "u").where(F.col("v") != F.col("m")).select(F.col("v").alias("u"), F.col("m").alias("v"))
    return spokes.unionByName(least.select("u", F.col("m").alias("v"))).distinct()


def _is_star_forest(edges) -> bool:
    """True when every node has at most one edge to a smaller node and no edge's smaller end has one
    of its own: each component is a star around its smallest node (one job)."""
    from pyspark.sql import functions as F

    down = edges.select(F.greatest("u", "v").alias("u"), F.least("u", "v").alias("v"))
    fan = down.groupBy("u").agg(F.count(F.lit(1)).alias("k"))
    centres = down.select(F.col("v").alias("u")).distinct()
    bad = fan.where(F.col("k") > 1).select("u").unionByName(fan.join(centres, "u").select("u"))
    return not bad.limit(1).collect()


@dataclass
class Components:
    """``labels`` (node long, component long: its smallest node), a row per node of an edge; the rounds run."""

    labels: object
    rounds: int

    def unpersist(self) -> None:
        self.labels.unpersist()


def components(edges, *, max_rounds: int = 64) -> Components:
    """The connected components of the undirected graph of ``edges`` (columns ``u``, ``v``: longs, u != v).

    Every node of an edge gets the smallest node of its component. The labels
    are checkpointed (computed); a graph that has not converged after
    ``max_rounds`` rounds is an error (the bound of Kiveris et al. is far below it).
    """
    from pyspark.sql import functions as F

    current = checkpoint(edges.select(F.least("u", "v").alias("u"), F.greatest("u", "v").alias("v"))
                         .where(F.col("u") != F.col("v")).distinct())
    rounds = 0
    while True:
        if _is_star_forest(current):
            break
        if rounds == max_rounds:
            raise RuntimeError(f"connected components did not converge in {max_rounds} large-star/small-star rounds")
        rounds += 1
        previous = current
        current = checkpoint(_small_star(_large_star(current)))
        previous.unpersist()
    down = current.select(F.greatest("u", "v").alias("node"), F.least("u", "v").alias("component"))
    centres = down.select(F.col("component").alias("node"), "component").distinct()
    labels = checkpoint(down.unionByName(centres))
    current.unpersist()
    return Components(labels, rounds)


__all__ = ["Components", "checkpoint", "components"]
