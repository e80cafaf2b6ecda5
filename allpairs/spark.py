"""allpairs on Apache Spark: ``allpairs.spark.join(df, threshold, ...)`` returns a DataFrame of pairs.

A thin public name for :mod:`allpairs.engines.spark` (imported only when this
module is): ``pip install '.[spark]'``, and a Java runtime.

>>> pairs = allpairs.spark.join(df, 0.5, id_col="id", text_col="text")   # doctest: +SKIP
>>> pairs.write.parquet("pairs/")                                         # doctest: +SKIP
"""
from .engines.spark import SparkSetupError, get_session, join

__all__ = ["SparkSetupError", "get_session", "join"]
