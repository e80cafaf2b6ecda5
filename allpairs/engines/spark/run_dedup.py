"""``allpairs dedup --engine spark``: read files into Spark, keep what the local dedup keeps, write Parquet.

:func:`run_dedup` reads the input as ``join --engine spark`` reads it
(:func:`.run.read_documents`), decides with :func:`.dedup.plan_dedup`, and
writes the kept rows in input order (``removed``: the local ``dedup --removed``
table, a row per removed document with its kept twin) as a
Parquet dataset, beside ``output`` and moved into place at the end, or counts
the kept ones.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field

from ...errors import UsageError
from ...index.dedup import empty_kept_note
from ...output.files import partial_directory
from .carried import carried_frame, timestamps_as_written, with_carried
from .clusters import plan_clusters
from .dataset import in_files, make_reproducible
from .dedup import P, plan_dedup
from .run import (KINDS, raise_worker_error, SparkRun, _stop_jvm, check_output_dir, check_parquet, read_documents,
                  session_conf)
from .session import get_session

#: Rows a written part file holds (the last, the rest).
ROWS_PER_FILE = 100_000
#: Columns of a directory's frame that the rows written leave out: they are the files' paths (ids).
DIRECTORY_COLUMNS = ("text", "language")


@dataclass
class SparkDedupRun:
    """What ``dedup --engine spark`` read, kept and removed, and where it wrote."""

    master: str
    threshold: str
    shingle: str = ""
    documents: int = 0
    skipped: dict = field(default_factory=dict)
    kept: int = 0
    removed: int = 0
    components: int = 0
    rounds: int = 0
    largest: int = 0
    clusters: int | None = None  # with clusters=True: clusters of two or more, and rows written
    rows: int = 0
    output: str | None = None
    seconds: dict = field(default_factory=dict)
    notes: list = field(default_factory=list)  # lines for stderr, as the local dedup's Stats.notes


def _records(spark, read, path: str, id_field: str, rows):
    """The JSON Lines records of dedup's kept ``rows`` (id, text, line) whole, as the local dedup writes them
    to Parquet: the id field, then every other field of these records (typed over them as the local engine's
    Parquet output types them, :func:`.carried.carried_frame`); in input order."""
    from pyspark.sql import functions as F

    from .run import _read_lines

    written = _read_lines(spark, path).join(rows.select("line"), "line", "left_semi")
    fields, names = carried_frame(spark, read, path, "jsonl", [], True, id_field, lines=written)
    return rows.join(fields, rows["id"] == fields["_id"]).orderBy("line").select(
        F.col("id").alias(id_field), *[F.col(f"c{i}").alias(n) for i, n in enumerate(names)])


def _removed_table(spark, read, path: str, kind: str, id_field: str, d, keep_all: bool):
    """The local ``dedup --removed -f parquet`` table: per removed document in input order, removed, kept,
    similarity, overlap, removed_size, kept_size, then ``removed_NAME`` and ``kept_NAME`` of each column carried
    (``keep_all``: a table's every column but the id; ``--lines``: the line, as ``text``)."""
    from pyspark.sql import functions as F

    pairs = d.removed_pairs()
    names = ["removed", "kept", "similarity", "overlap", "removed_size", "kept_size"]
    got = None if kind in ("directory", "sets") else carried_frame(spark, read, path, kind, [], keep_all, id_field)
    carried = []
    if got is not None:
        pairs, carried = with_carried(pairs, *got, sides=("removed", "kept"))
    return pairs.orderBy(P + "okey", P + "ord").select(*names, *carried)


def run_dedup(path: str, threshold, *, kind: str = "directory", output: str | None = None, removed: bool = False,
              count: bool = False, master: str | None = None, conf: dict | None = None, include=(), exclude=(),
              min_bytes: int = 0, id_field: str = "id", text_field: str = "text", id_col: str | None = None,
              text_col: str | None = None, tokens_col: str | None = None, shingle=None, measure: str = "jaccard",
              normalize: bool = True, min_shingles: int = 1, quiet: bool = False, clusters: bool = False,
              singletons: bool = False, keep_all: bool = False) -> SparkDedupRun:
    """Dedup the documents at ``path`` on Spark; write the kept (or ``removed``) rows to ``output``, or count.

    ``removed``: the local engine's table of each removed document beside its kept twin, ``keep_all`` with
    every column of both. With ``clusters`` (``join --clusters --engine spark``): the cluster table
    instead (id, cluster, cluster_size; ``singletons`` every other document
    too), or the number of clusters.
    """
    if kind not in KINDS:
        raise UsageError(f"unknown input kind {kind!r}; choose one of {', '.join(KINDS)}")
    if not count and output is None:
        raise UsageError("--engine spark writes the rows as a Parquet dataset: give -o DIR (or --count)")
    if str(path) == "-":
        raise UsageError("--engine spark reads files, not stdin: give a path")
    local_output = check_output_dir(str(output)) if output is not None and not count else None
    if output is not None and not count and local_output is None:
        raise UsageError("dedup --engine spark writes to a local -o DIR (give a path on this machine)")
    if kind == "parquet":
        check_parquet(str(path), id_col or "id", None if tokens_col else text_col or "text", tokens_col)
    t0 = time.perf_counter()
    spark = get_session(master, conf=session_conf(master, [path], conf), quiet=quiet)
    from pyspark.sql import functions as F

    res = SparkDedupRun(master=spark.sparkContext.master, threshold=str(threshold))
    res.seconds["start"] = time.perf_counter() - t0
    t0 = time.perf_counter()
    reading = SparkRun(master=res.master, method="exact", threshold=str(threshold), shingle="")
    read = None
    try:
        read = read_documents(spark, str(path), kind, reading, include=include, exclude=exclude,
                              min_bytes=min_bytes, id_field=id_field, text_field=text_field, id_col=id_col,
                              text_col=text_col, tokens_col=tokens_col)
        if shingle is None and read.code:
            shingle = "code:5"
        df = read.df.drop("skip") if kind == "directory" else read.df
        if kind in ("lines", "sets"):
            # As the local dedup names them: the line number as id, the line as text (or tokens).
            text = "text" if kind == "lines" else "tokens"
            df = df.select("id", F.col("value").alias(text), "line")
            read.text_col, read.tokens_col = (text, None) if kind == "lines" else (None, text)
        if clusters:
            c = plan_clusters(df, threshold, id_col=read.id_col, text_col=read.text_col, tokens_col=read.tokens_col,
                              order_col=read.order_col, shingle=shingle, measure=measure, normalize=normalize,
                              min_shingles=min_shingles, singletons=singletons, check=read.check,
                              **({"language_col": "language"} if read.language_col else {}))
            res.shingle, res.threshold, res.rounds, res.largest = c.shingle, str(c.threshold), c.rounds, c.largest
            res.clusters = c.clusters
            rows = c.rows
            if kind == "lines":  # each line beside its number, as locally (text)
                rows = rows.join(df.select("id", "text", "line"), "id").orderBy("cluster", "line") \
                    .select("id", "cluster", "cluster_size", "text")
        else:
            d = plan_dedup(df, threshold, id_col=read.id_col, text_col=read.text_col, tokens_col=read.tokens_col,
                           order_col=read.order_col, shingle=shingle, measure=measure, normalize=normalize,
                           min_shingles=min_shingles, check=read.check,
                           **({"language_col": "language"} if read.language_col else {}))
            res.shingle, res.threshold = d.shingle, str(d.threshold)
            res.components, res.rounds, res.largest = d.decided.components, d.decided.rounds, d.decided.largest
            res.kept, res.removed, empty = d.counts()
            if empty:
                res.notes.append(empty_kept_note(empty, d.shingle))
            rows = d.rows
            if removed:  # the local engine's table of pairs (removed, kept), not rows
                rows = None if count else _removed_table(spark, read, str(path), kind, id_field, d, keep_all)
            elif kind in ("lines", "sets"):
                # As locally: a line's number (its id), and the text of --lines; --sets carries no tokens.
                rows = rows.drop("line", *(["tokens"] if kind == "sets" else []))
            elif kind == "parquet" and read.order_col is not None:
                rows = rows.drop(read.order_col)  # a dataset's order (:func:`.run.file_order`), not a column of it
            elif kind == "directory":
                rows = rows.drop(*DIRECTORY_COLUMNS)  # the files' paths, as locally; not their texts
            elif kind == "jsonl" and not count:
                rows = _records(spark, read, str(path), id_field, rows)
        res.seconds["decide"] = time.perf_counter() - t0
        t0 = time.perf_counter()
        if not count:
            # A file per ROWS_PER_FILE rows in order, not one per shuffle partition (nor a sort's sampled split).
            # A UTC timestamp column written as the input had it (microseconds, UTC), not as Spark's INT96.
            with timestamps_as_written(rows), in_files(rows, ROWS_PER_FILE) as (placed, res.rows), \
                    partial_directory(local_output, stop_writer=lambda: _stop_jvm(spark)) as tmp:
                placed.write.mode("overwrite").parquet("file://" + tmp)
                make_reproducible(tmp)  # no job UUID in the names, footers' encodings sorted
            res.output = str(output)
        res.seconds["write" if not count else "count"] = time.perf_counter() - t0
        res.documents = read.df.count() if kind != "directory" else reading.documents
        res.skipped = dict(reading.skipped)
        left_out = res.documents - sum(res.skipped.values()) - res.kept - res.removed
        if left_out and not clusters:  # a row with no shingle is kept: these are the rows --min-shingles drops
            res.skipped["below --min-shingles"] = left_out
    except Exception as e:
        raise_worker_error(e)
        raise
    finally:
        if read is not None and read.kept is not None:
            read.kept.unpersist()
    return res


__all__ = ["SparkDedupRun", "run_dedup"]
