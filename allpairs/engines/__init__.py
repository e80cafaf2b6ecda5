"""Engines that run the same pipeline somewhere other than this process.

``engines/spark/`` runs the join on Apache Spark; it is imported only when asked
for (``allpairs join --engine spark``, ``allpairs.spark``), so nothing here is
needed for a local join. Engines may import every stage; no stage imports them.
"""
