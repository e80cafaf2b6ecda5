"""The Spark engine: the same joins on Apache Spark, over the local engine's kernels.

Imported only when asked for (``allpairs.spark``, ``allpairs join --engine
spark``); needs ``pip install '.[spark]'`` and a Java runtime.

| stage | module |
|---|---|
| session, Java check | ``session.py`` |
| Arrow batches ↔ CSR | ``arrow.py`` |
| 1–3 shingles, identical sets, token order | ``sets.py`` |
| 4a exact: prefix-token groups, hot splits | ``exact.py``, ``_kernel.py`` |
| 4a exact, a small input: every set in one task | ``one_task.py`` |
| 4b LSH: band shuffle, bounded buckets, verify | ``lsh.py`` |
| 6 document pairs | ``pairs.py`` |
| carried columns (``keep``): the pairs joined back with the rows by id | ``carried.py`` |
| wiring | ``join.py`` |
| R–S joins, containment (``against=``) | ``against.py`` |
| connected components (large-star/small-star) | ``components.py`` |
| dedup: the local rule per component | ``dedup.py``, ``_dedup_kernel.py`` |
| clusters, numbered as locally | ``clusters.py`` |
| the default shingle, by the local rule | ``shingle.py`` |
"""
from .session import SparkSetupError, get_session, require_pyspark

require_pyspark()  # before the stages import pyarrow: a missing extra is one clear error

from .join import SparkJoin, join, plan  # noqa: E402
from .clusters import clusters  # noqa: E402
from .dedup import dedup  # noqa: E402

__all__ = ["SparkJoin", "SparkSetupError", "clusters", "dedup", "get_session", "join", "plan"]
