"""allpairs on Apache Spark: ``join`` (a DataFrame of pairs; ``against=`` for R–S and containment),
``dedup`` (the kept rows) and ``clusters`` (a cluster per row), exactly as the local engine.

A thin public name for :mod:`allpairs.engines.spark` (imported only when this
module is): ``pip install '.[spark]'``, and a Java runtime.

>>> pairs = allpairs.spark.join(df, 0.5, id_col="id", text_col="text")   # doctest: +SKIP
>>> pairs.write.parquet("pairs/")                                         # doctest: +SKIP
>>> kept = allpairs.spark.dedup(df, 0.8, text_col="text")                 # doctest: +SKIP
>>> hits = allpairs.spark.join(items, 0.8, against=docs, measure="containment")  # doctest: +SKIP
"""
from .engines.spark import SparkSetupError, clusters, dedup, get_session, join

__all__ = ["SparkSetupError", "clusters", "dedup", "get_session", "join"]
