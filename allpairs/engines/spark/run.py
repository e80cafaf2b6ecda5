"""``allpairs join --engine spark``: read files into Spark, join, write a Parquet dataset or count.

:func:`run` is the one library call behind the command line: it reads a
directory tree, a file of lines, sets or JSON Lines, or a Parquet dataset
(anywhere Spark reads: local paths, ``hdfs://``, ``s3a://``), joins with
:func:`allpairs.engines.spark.join.plan`, and writes the pairs, sorted by left
then right document as locally, as Parquet, or counts them. Errors raised in
Spark's Python workers (a malformed JSON line) come back as the same
one-line :class:`~allpairs.errors.AllPairsError`.
"""
from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from dataclasses import dataclass, field

import pyarrow as pa

from ...corpus.records import fields_of, jsonl_record
from ...corpus.tables import is_text
from ...errors import TEMPLATE_NOTE, InputError, OutputError, UsageError
from ...pipeline import joined_note
from ...shingles import ShingleSpec
from .join import plan
from .dataset import in_files, make_reproducible, positions
from .carried import carried_frame, check_keep, check_parquet_keep, timestamps_as_written, with_carried
from .lsh import MARKED
from .pairs import COLUMNS, ORDER
from ...output.files import partial_directory
from .files import SkipCounts, check_directory, decoded, read_directory, root_path, skip_counts, skipped_by_reason
from .session import LOCAL_JVM_OPTIONS, get_session, is_local, jvm_options_given

KINDS = ("directory", "lines", "sets", "jsonl", "parquet")
#: Pairs a written part file holds (the last, the rest): about 13 MB of Parquet without carried columns.
PAIRS_PER_FILE = 1 << 20


@dataclass
class SparkRun:
    """What a Spark join read, joined and found, and where it wrote (``master`` None: the local engine's)."""

    master: str | None
    method: str
    threshold: str
    shingle: str
    documents: int = 0
    skipped: dict = field(default_factory=dict)
    joined: int = 0
    distinct_sets: int = 0
    candidates: int | None = None
    pairs: int = 0
    output: str | None = None
    notes: list[str] = field(default_factory=list)
    seconds: dict = field(default_factory=dict)


def _line_numbers(df):
    """``df`` (one row per line, file order) with ``line``: 1-based line numbers (one small action)."""
    return positions(df, "line")[0]


def _read_lines(spark, path):
    from pyspark.sql import functions as F

    raw = spark.read.option("lineSep", "\n").text(path)
    raw = raw.select(F.regexp_replace("value", "\r$", "").alias("value"))
    return _line_numbers(raw)


def _jsonl_batches(batches, id_field, text_field, name):
    """mapInArrow body: (id, text, line) of each JSON Lines record, checked as the local reader checks it
    (ids are not checked for repeats across tasks)."""
    for batch in batches:
        ids, texts, lines = [], [], []
        for value, k in zip(batch.column("value").to_pylist(), batch.column("line").to_pylist()):
            record = jsonl_record(value, f"{name}:{k}", id_field, text_field)
            if record is not None:
                ids.append(record[0])
                texts.append(record[1])
                lines.append(k)
        yield pa.RecordBatch.from_arrays([pa.array(ids, pa.string()), pa.array(texts, pa.string()),
                                          pa.array(lines, pa.int64())], names=["id", "text", "line"])


def _local_path(path: str) -> str | None:
    """The path on this machine's file system of ``path`` (plain or ``file:``); None for another file system."""
    if re.match(r"^[A-Za-z][A-Za-z0-9+.-]*:", path) and not path.startswith("file:"):
        return None
    return root_path(path)


def check_output_dir(output: str) -> str | None:
    """Refuse, before Spark starts, an ``-o`` dataset that exists or whose folder does not; its local path
    (None on another file system, checked once Spark runs)."""
    local = _local_path(output)
    if local is None:
        return None
    if os.path.lexists(local):
        raise UsageError(f"{output} exists; remove it or choose another -o (a Parquet dataset is a directory)")
    parent = os.path.dirname(local)
    if not os.path.isdir(parent):
        raise OutputError(f"output {output}: directory {parent} does not exist")
    if not os.access(parent, os.W_OK | os.X_OK):
        raise OutputError(f"output {output}: cannot create files in {parent} (permission denied)")
    return local


def check_parquet(path: str, id_col: str, text_col: str | None, tokens_col: str | None) -> None:
    """Read the schema of a local Parquet file or dataset (pyarrow, before Spark starts) and refuse, as the
    local engine does, a missing path, a file that is not Parquet, a missing column, texts that are not strings."""
    local = _local_path(path)
    if local is None:
        return
    import pyarrow.parquet as pq

    if not os.path.exists(local):
        raise UsageError(f"{path}: no such file or directory")
    try:
        schema = pq.ParquetDataset(local).schema if os.path.isdir(local) else pq.read_schema(local)
    except (OSError, pa.ArrowException) as e:
        raise InputError(f"{path}: cannot read as Parquet ({(str(e).splitlines() or ['?'])[0]})") from None
    for option, column in (("--id-col", id_col), ("--text-col", text_col), ("--tokens-col", tokens_col)):
        if column is not None and column not in schema.names:
            raise InputError(f"{path}: no column {column!r} (it has {fields_of(schema.names)}); "
                             f"name one with {option}")
    if text_col is not None:
        typ = schema.field(text_col).type
        if not is_text(typ):  # strings, dictionary-encoded ones too, as the local reader takes them
            raise InputError(f"{path}: column {text_col!r} holds {typ}, not strings")
    if tokens_col is not None:
        typ = schema.field(tokens_col).type
        if not (pa.types.is_list(typ) or pa.types.is_large_list(typ)):
            raise InputError(f"{path}: column {tokens_col!r} holds {typ}, not lists of strings")


def _stop_jvm(spark) -> None:
    """End Spark's JVM and wait for it (for the signal watcher: its tasks must stop writing before their output
    is removed). SIGTERM first, so that its shutdown hooks remove its scratch folders (shuffle files among
    them); SIGKILL if it has not ended in 10 s."""
    proc = getattr(spark.sparkContext._gateway, "proc", None)
    if proc is not None:
        # pyspark's threads that talk to the JVM would print tracebacks as it goes; the process is
        # ending, and its one line goes straight to fd 2.
        sys.stderr = open(os.devnull, "w")
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(10)


def _from_spark_error(e: Exception) -> Exception:
    """An AllPairsError raised in a Spark worker, as the same error here; else ``e``."""
    text = str(e)
    m = re.search(r"allpairs\.errors\.(InputError|UsageError): (.*)", text)
    if not m:
        return e
    cls = InputError if m.group(1) == "InputError" else UsageError
    note = re.match(r"\s*" + re.escape(TEMPLATE_NOTE) + r"(.*)", text[m.end():])
    if note:  # the message with its parameters, so that the command line names them as flags
        return cls(note.group(1).strip(), param="")
    return cls(m.group(2).strip())


def raise_worker_error(e: Exception) -> None:
    """Raise the AllPairsError a Spark worker raised inside ``e`` as the same error here (one line, not a Py4J
    traceback); return when there is none, for the caller to re-raise ``e`` as it was."""
    err = _from_spark_error(e)
    if err is not e:
        raise err from None


#: An input smaller than this (bytes of the file, or of all files under the directory), given with no
#: master and no running SparkSession, is joined by the local engine: it takes about a second there,
#: where starting Spark alone takes 10-30 s.
LOCAL_BELOW = 1 << 20


def _spark_active() -> bool:
    from pyspark.sql import SparkSession

    return SparkSession.getActiveSession() is not None


def _small_local_input(path: str, below: int) -> int | None:
    """The bytes of the local file or directory tree ``path`` if fewer than ``below``, else None
    (None too for another file system or a path that is not there: Spark says why)."""
    local = _local_path(path)
    if local is None:
        return None
    if os.path.isfile(local):
        size = os.path.getsize(local)
        return size if size < below else None
    if not os.path.isdir(local):
        return None
    total = 0
    for folder, _, names in os.walk(local):
        for name in names:
            try:
                total += os.lstat(os.path.join(folder, name)).st_size
            except OSError:
                continue
            if total >= below:
                return None
    return total


#: A local input of fewer bytes than this (all its paths together), joined on a local master, starts the JVM
#: with :data:`~allpairs.engines.spark.session.LOCAL_JVM_OPTIONS`: on 2 busy cores the JVM's optimizing
#: compiler cost more than its faster code saved for the tiny corpus and the Go tree (66 MB) from a cold
#: start, and less than it saved for the Go tree in a warm session (docs/spark.md).
QUICK_JVM_BELOW = 256 << 20


def session_conf(master: str | None, paths, conf: dict | None) -> dict:
    """``conf`` for the session of a run over ``paths``: with LOCAL_JVM_OPTIONS as the driver's JVM options for a
    local master (``None``: ``local[*]``) and local inputs of fewer than :data:`QUICK_JVM_BELOW` bytes in all,
    unless JVM options are given (:func:`.session.jvm_options_given`: a collector named there and the serial
    one would be two, and the JVM does not start) or a session runs already (its JVM has started)."""
    conf = dict(conf or {})
    if jvm_options_given(conf) or not is_local(master or "local[*]") or _spark_active():
        return conf
    total = 0
    for path in paths:
        size = _small_local_input(str(path), QUICK_JVM_BELOW - total)
        if size is None:
            return conf
        total += size
    conf["spark.driver.extraJavaOptions"] = LOCAL_JVM_OPTIONS
    return conf


def _join_locally(path: str, threshold, size: int, *, kind: str, output: str | None, count: bool, include,
                  exclude, min_bytes: int, id_field: str, text_field: str, shingle, keep=(), keep_all: bool = False,
                  **options) -> SparkRun:
    """The small input ``path`` joined by the local engine (:data:`LOCAL_BELOW`), written as the Spark
    engine writes it: a Parquet dataset of the same columns and order at ``output``, or counted."""
    import inspect

    from ...corpus import read_corpus
    from ...pipeline import join as local_join
    from ...pairs.rows import write_pairs_table
    from ...shingles import hash_set_pieces

    t0 = time.perf_counter()
    fields = {"id_field": id_field, "text_field": text_field} if kind == "jsonl" else {}
    corpus = read_corpus(path, kind, include=include, exclude=exclude, min_bytes=min_bytes,
                         hash_pieces=hash_set_pieces, keep=keep, keep_all=keep_all, **fields)
    known = inspect.signature(local_join).parameters
    res = local_join(corpus, threshold, shingle=shingle, **{k: v for k, v in options.items() if k in known})
    st = res.stats
    out = SparkRun(master=None, method=res.method, threshold=str(res.threshold), shingle=str(res.shingle),
                   documents=st.documents, joined=st.joined, distinct_sets=st.distinct_sets,
                   candidates=st.candidates if res.method == "lsh" else None, pairs=len(res.pairs))
    for _, why in st.skipped:
        why = why.split(" (")[0]
        out.skipped[why] = out.skipped.get(why, 0) + 1
    out.notes.append(f"{path} holds {size:,} bytes (under {LOCAL_BELOW:,}) and no --master was given: joined by "
                     "the local engine, not Spark; give --master local[*] to run Spark")
    if not count:
        import io

        import pyarrow.parquet as pq

        buf = io.BytesIO()
        write_pairs_table(res.pairs, res.ids, buf, res.measure,
                          columns=res.columns if keep or keep_all or kind == "lines" else None)
        buf.seek(0)
        # Spark's types: ids as strings (line numbers too), overlaps and sizes int32; carried columns as written.
        table = pq.read_table(buf)
        table = table.cast(pa.schema([(name, pa.string() if name in ("left", "right") else
                                       pa.float64() if name == "similarity" else pa.int32())
                                      for name in COLUMNS] + list(table.schema)[len(COLUMNS):]))
        with partial_directory(output) as tmp:
            pq.write_table(table, os.path.join(tmp, "part-00000.parquet"))
        out.output = output
    out.seconds["local"] = time.perf_counter() - t0
    return out


@dataclass
class Documents:
    """An input read into Spark: the frame, its columns, and what the join needs to know of it."""

    df: object
    id_col: str
    text_col: str | None = None
    tokens_col: str | None = None
    language_col: str | None = None
    order_col: str | None = None
    check: bool = False  # ids that the input gives (not line numbers or paths): checked for nulls and repeats
    code: bool = False  # a tree of source files only: code:5 by default, as locally
    kept: object = None  # a persisted frame to unpersist at the end
    skips: object = None  # a SkipCounts accumulator whose files skipped are known once the frame is read

    def count_skipped(self, res: SparkRun) -> None:
        """Add the files skipped by reason to ``res`` (with ``skips``: once a job has read the frame)."""
        if self.skips is not None:
            for why, n in skipped_by_reason(self.skips.value).items():
                res.skipped[why] = res.skipped.get(why, 0) + n
            self.skips = None


#: The input order of a Parquet dataset of several files (:func:`file_order`), a column that no output keeps.
FILE_ORDER = "_allpairs_file_order"


def file_order(df):
    """The rows of ``df`` (Parquet files read by Spark) in the local engine's order, as a long: the files by
    path (as pyarrow lists a dataset's files), each file's rows in order. Spark packs a dataset's files into
    tasks largest first, so its own row order put a large file's rows first (and ``dedup`` kept their
    copies). One small job lists the files as Spark names them."""
    from urllib.parse import unquote

    from pyspark.sql import functions as F

    paths = sorted((r[0] for r in df.select(F.col("_metadata.file_path")).distinct().collect()), key=unquote)
    rank = F.create_map(*[F.lit(x) for i, p in enumerate(paths) for x in (p, i)])
    return F.shiftleft(F.element_at(rank, F.col("_metadata.file_path")).cast("long"), 40) + F.col("_metadata.row_index")


def read_documents(spark, path: str, kind: str, res: SparkRun, *, include=(), exclude=(), min_bytes: int = 0,
                   id_field: str = "id", text_field: str = "text", id_col: str | None = None,
                   text_col: str | None = None, tokens_col: str | None = None,
                   shingle_given: bool | None = None) -> Documents:
    """The documents at ``path`` as a Spark frame (``kind`` of :data:`KINDS`); a directory's skipped files
    are counted into ``res`` (one job).

    ``shingle_given`` (not None: the caller calls :meth:`Documents.count_skipped` after its first job):
    where the shingle needs no look at the files (given, or every file's name has a program language,
    so code:5), the skipped files are counted on the way by the caller's first job instead, and the
    decoded files are neither kept nor read by a job of their own."""
    from pyspark import StorageLevel
    from pyspark.sql import functions as F

    if kind == "parquet":
        id_col = id_col or "id"
        if tokens_col is None:
            text_col = text_col or "text"
        df = spark.read.parquet(path)
        if len(df.inputFiles()) < 2:
            return Documents(df, id_col, text_col, tokens_col, check=True)
        return Documents(df.withColumn(FILE_ORDER, file_order(df)), id_col, text_col, tokens_col, order_col=FILE_ORDER,
                         check=True)
    if kind == "directory":
        skips = None if shingle_given is None else spark.sparkContext.accumulator({}, SkipCounts())
        files, code = read_directory(spark, path, include, exclude, min_bytes, res, skips)
        res.skipped = {}
        if shingle_given or (shingle_given is not None and code):
            # Nothing to look at before the join: the files are read, decoded and counted by its first job.
            return Documents(decoded(files), "id", "text", language_col="language", order_col="id", code=code,
                             skips=skips)
        # Read and decoded once: counted here, shingled by the join.
        files = files.persist(StorageLevel.MEMORY_AND_DISK)
        # One job of one stage (counted per batch, summed here: no shuffle, which AQE would run as a job
        # of its own): the skipped files by reason, and whether any file read is not source code.
        kinds = files.mapInArrow(skip_counts, "skip string, prose boolean, n long").collect()
        for r in kinds:
            if r["skip"] is not None:
                why = r["skip"].split(" (")[0]
                res.skipped[why] = res.skipped.get(why, 0) + r["n"]
        prose = any(r["prose"] for r in kinds if r["skip"] is None)
        return Documents(files.where(F.col("skip").isNull()), "id", "text", language_col="language", order_col="id",
                         code=not prose, kept=files)
    lines = _read_lines(spark, path)
    if kind == "jsonl":
        df = lines.mapInArrow(lambda b: _jsonl_batches(b, id_field, text_field, path),
                              "id string, text string, line long")
        return Documents(df, "id", "text", order_col="line", check=True)
    df = lines.withColumn("id", F.col("line").cast("string"))
    if kind == "sets":
        return Documents(df, "id", tokens_col="value", order_col="line")
    return Documents(df, "id", "value", order_col="line")


def check_input_options(kind: str, include, exclude, min_bytes: int, id_col, text_col, tokens_col) -> None:
    """Refuse an unknown input kind, and options that the kind does not read (shared by run and run_against)."""
    if kind not in KINDS:
        raise UsageError(f"unknown input kind {kind!r}; choose one of {', '.join(KINDS)}")
    if kind != "directory" and (include or exclude or min_bytes):
        raise UsageError(f"--include, --exclude and --min-bytes choose files in a directory; they do not apply to --{kind}")
    if kind != "parquet" and (id_col or text_col or tokens_col):
        raise UsageError("--id-col, --text-col and --tokens-col name columns of --parquet input")


def run(path: str, threshold, *, kind: str = "directory", output: str | None = None, count: bool = False,
        master: str | None = None, conf: dict | None = None, include=(), exclude=(), min_bytes: int = 0,
        id_field: str = "id", text_field: str = "text", id_col: str | None = None, text_col: str | None = None,
        tokens_col: str | None = None, keep=(), keep_all: bool = False, shingle: ShingleSpec | str | None = None,
        quiet: bool = False, **options) -> SparkRun:
    """Join the documents at ``path`` on Spark; write the pairs to ``output`` (Parquet) or count them.

    ``kind`` is one of :data:`KINDS`; ``options`` go to :func:`allpairs.engines.spark.join.plan`
    (normalize, min_shingles, method, measure, max_group, and the LSH options). ``keep`` names columns
    of ``parquet`` or ``jsonl`` input carried beside each pair as ``left_NAME``, ``right_NAME``
    (``keep_all``: every column but the id), typed as the local engine's Parquet output types them
    (:mod:`.carried`: joined back by id in Spark). ``quiet``: the JVM's own log lines go nowhere. A
    local ``output`` and Parquet input (its columns, those of ``keep`` too) are checked before Spark
    starts; the dataset is written beside ``output`` and moved into place at the end.
    """
    check_input_options(kind, include, exclude, min_bytes, id_col, text_col, tokens_col)
    keep = check_keep(kind, keep, keep_all)
    if not count and output is None:
        raise UsageError("--engine spark writes the pairs as a Parquet dataset: give -o DIR (or --count)")
    if str(path) == "-":
        raise UsageError("--engine spark reads files, not stdin: give a path")
    local_output = check_output_dir(str(output)) if output is not None and not count else None
    if kind == "parquet":
        check_parquet(str(path), id_col or "id", None if tokens_col else text_col or "text", tokens_col)
        check_parquet_keep(str(path), keep)
    if master is None and (count or local_output is not None) and kind != "parquet":
        size = _small_local_input(str(path), LOCAL_BELOW)
        if size is not None and not _spark_active():
            return _join_locally(str(path), threshold, size, kind=kind, output=local_output, count=count,
                                 include=include, exclude=exclude, min_bytes=min_bytes, id_field=id_field,
                                 text_field=text_field, shingle=shingle, keep=keep, keep_all=keep_all, **options)
    t0 = time.perf_counter()
    if kind == "directory":
        check_directory(str(path))  # a mistyped path refused before the JVM starts
    spark = get_session(master, conf=session_conf(master, [path], conf), quiet=quiet)
    if output is not None and not count and local_output is None:
        jvm_path = spark._jvm.org.apache.hadoop.fs.Path(str(output))
        if jvm_path.getFileSystem(spark._jsc.hadoopConfiguration()).exists(jvm_path):
            raise UsageError(f"{output} exists; remove it or choose another -o (a Parquet dataset is a directory)")
    method = options.get("method", "exact")
    res = SparkRun(master=spark.sparkContext.master, method=method, threshold=str(threshold), shingle="")
    res.seconds["start"] = time.perf_counter() - t0
    t0 = time.perf_counter()
    kept = None
    try:
        read = read_documents(spark, str(path), kind, res, include=include, exclude=exclude, min_bytes=min_bytes,
                              id_field=id_field, text_field=text_field, id_col=id_col, text_col=text_col,
                              tokens_col=tokens_col, shingle_given=shingle is not None)
        df, kept = read.df, read.kept
        id_col, text_col, tokens_col, language_col, order_col = (read.id_col, read.text_col, read.tokens_col,
                                                                 read.language_col, read.order_col)
        if shingle is None and read.code:
            shingle = "code:5"  # a tree of source files only, as locally; else the texts' lengths choose
        # The carried columns (a JSON Lines field's type is one job over the lines): a field the first record
        # lacks is refused before the join's work.
        got = None if count else carried_frame(spark, read, str(path), kind, keep, keep_all, id_field)
        # Ids are checked for nulls and repeats where the input gives them (line numbers and paths are unique).
        planned = plan(df, threshold, id_col=id_col, text_col=text_col, tokens_col=tokens_col, order_col=order_col,
                       language_col=language_col, shingle=shingle, check=read.check, **options)
        read.count_skipped(res)  # the planning job has read every file
        res.shingle = planned.shingle
        res.threshold = str(planned.threshold)
        if planned.buckets is not None:
            planned.buckets.persist()
        res.seconds["plan"] = time.perf_counter() - t0
        t0 = time.perf_counter()
        if count:
            res.pairs = planned.pairs.count()
        else:
            pairs, carried = planned.pairs, []
            if got is not None:
                pairs, carried = with_carried(pairs, *got)
            sorted_pairs = pairs.orderBy(*ORDER).select(*COLUMNS, *carried)
            # The pairs' split between part files is a function of their number (not of a sort's sampled bounds).
            with timestamps_as_written(sorted_pairs), in_files(sorted_pairs, PAIRS_PER_FILE) as (placed, n):
                if local_output is None:
                    placed.write.parquet(str(output))
                else:
                    # Beside the target, moved into place at the end: a signal or an error leaves no
                    # partial dataset and no _temporary (the watcher stops the JVM, then removes it).
                    with partial_directory(local_output, stop_writer=lambda: _stop_jvm(spark)) as tmp:
                        placed.write.mode("overwrite").parquet("file://" + tmp)
                        make_reproducible(tmp)  # no job UUID in the names, footers' encodings sorted
            res.output = str(output)
            res.pairs = n
        res.seconds["join"] = time.perf_counter() - t0
        # Counted by the planning job (no job here), or the distinct sets by the one task.
        planned.summary.settle()
        if kind != "directory":
            res.documents = planned.summary.documents
        res.joined = planned.summary.joined
        # Files of zero bytes never reach a Spark task: they count with the documents without a shingle.
        left_out = res.documents - sum(res.skipped.values()) - res.joined
        if left_out:
            res.skipped["no shingle" if options.get("min_shingles", 1) <= 1 else "below --min-shingles"] = left_out
        res.distinct_sets = planned.summary.distinct
        if planned.describe():
            res.notes.append(planned.describe())
        if planned.plans:
            chunks = sum(p.chunks for p in planned.plans.values())
            tasks = sum(p.tasks for p in planned.plans.values())
            res.notes.append(f"{len(planned.plans):,} prefix-token groups of more than {options.get('max_group', 10000):,} "
                             f"sets split by size into {chunks:,} chunks, {tasks:,} tasks")
        if planned.candidates is not None:
            res.candidates = planned.candidates.count()
            _bucket_notes(planned, res)
            planned.buckets.unpersist()
        planned.unpersist()
    except Exception as e:
        raise_worker_error(e)
        raise
    finally:
        if kept is not None:
            kept.unpersist()
    return res


def _bucket_notes(planned, res: SparkRun) -> None:
    from pyspark.sql import functions as F

    info = planned.lsh
    res.notes.append(info.describe())
    joined = planned.buckets.where(F.col("a") == MARKED).agg(
        F.countDistinct("band", "first").alias("k"), F.max("n").alias("largest"), F.countDistinct("b").alias("sets"),
        F.sum(F.col("n") - 1).alias("pairs")).collect()[0]
    if joined["k"]:
        # n - 1 on each of a bucket's n rows: twice its n (n - 1) / 2 pairs.
        res.notes.append(joined_note(joined["k"], info.max_expand, joined["largest"], joined["sets"],
                                     joined["pairs"] // 2))
    rows = planned.buckets.where(F.col("a") == -1)
    if info.max_bucket is not None:
        big = rows.where(F.col("n") > info.max_bucket).agg(
            F.count(F.lit(1)).alias("k"), F.max("n").alias("largest"),
            F.sum(F.col("n") * (F.col("n") - 1) / 2).alias("skipped")).collect()[0]
        if big["k"]:
            res.notes.append(
                f"warning: {big['k']:,} LSH buckets larger than --max-bucket {info.max_bucket:,} were not expanded "
                f"(largest {big['largest']:,} sets; {int(big['skipped']):,} candidate pairs left out): boilerplate or "
                "near-empty documents; drop them with --min-shingles or raise --max-bucket")
    else:
        largest = rows.agg(F.max("n")).collect()[0][0]
        if largest:
            res.notes.append(
                f"warning: an LSH bucket holds {largest:,} distinct sets, {largest * (largest - 1) // 2:,} candidate "
                "pairs on its own: boilerplate or near-empty documents; bound it with --max-bucket or drop them "
                "with --min-shingles")
