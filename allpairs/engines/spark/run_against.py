"""``allpairs join --against OTHER --engine spark``: an R–S join read from files, its pairs written as locally.

:func:`run_against` reads PATH and OTHER as ``join --engine spark`` reads one
input (:func:`.run.read_documents`), joins them with
:func:`.against.plan_against` (containment for decontamination, overlap, and
the symmetric measures), and hands the pairs, sorted by left then right
document in input order, to the local engine's writers
(:class:`~allpairs.pairs.result.PairWriter`,
:func:`~allpairs.pairs.rows.write_pairs_table`) a chunk at a time
(``toLocalIterator``): the same bytes as ``allpairs join --against`` for the
same options, in any of its formats, to stdout or to the file the caller
opened (written beside ``-o`` and renamed at the end by
:func:`allpairs.output.files.open_output`). Carried columns (``--keep-col``
of ``--parquet`` and ``--jsonl``, the line of ``--lines``) come along as
locally: text in TSV and CSV (:func:`allpairs.corpus.records.cell_text`),
typed in JSON Lines and Parquet (:class:`allpairs.output.carried.Carried`: a
JSON Lines field's JSON value, a Parquet column's values with the input's
Arrow type).

Everything that can be checked before Spark starts is (the kinds, a local
Parquet input's columns and the type of its ids on both sides); then one job
refuses null and repeated ids on both sides, before any shingling.
"""
from __future__ import annotations

import json
import os
import time
from dataclasses import dataclass, field
from typing import BinaryIO

import numpy as np
import pyarrow as pa

from ...errors import InputError, UsageError
from ...corpus.records import cell_text, jsonl_field, jsonl_object
from ...output.carried import STRING, Carried
from .against import plan_against
from .carried import check_parquet_keep, json_objects
from .pairs import COLUMNS, ORDER
from . import run as _run
from .run import (SparkRun, _local_path, _read_lines, check_input_options, check_parquet, raise_worker_error,
                  read_documents, session_conf)
from .session import get_session, quoted

#: Pairs brought to the driver and rendered at a time.
CHUNK = 1 << 16


@dataclass
class SparkAgainstRun:
    """What ``join --against --engine spark`` read and found."""

    master: str
    measure: str
    threshold: str
    shingle: str = ""
    documents: tuple[int, int] = (0, 0)
    skipped: dict = field(default_factory=dict)
    pairs: int = 0
    seconds: dict = field(default_factory=dict)


def _parquet_id_type(path: str, id_col: str):
    """The Arrow type of a local Parquet input's id column (None elsewhere or when absent)."""
    local = _local_path(path)
    if local is None or not os.path.exists(local):
        return None
    import pyarrow.parquet as pq

    schema = pq.ParquetDataset(local).schema if os.path.isdir(local) else pq.read_schema(local)
    return schema.field(id_col).type if id_col in schema.names else None


def _keep_types(path: str, keep) -> list:
    """The Arrow types of a local Parquet input's ``keep`` columns (None for each elsewhere)."""
    local = _local_path(path)
    if local is None or not os.path.exists(local):
        return [None] * len(keep)
    import pyarrow.parquet as pq

    schema = pq.ParquetDataset(local).schema if os.path.isdir(local) else pq.read_schema(local)
    return [schema.field(k).type for k in keep]


def _same_id_kind(a, b) -> bool:
    """Whether two id types are the same kind: both strings or both integers (Spark's and Arrow's names)."""
    def kind(t):
        s = str(t).lower()
        return "string" if "string" in s or s == "utf8" else "integer" if any(
            w in s for w in ("int", "long", "short", "byte")) else s
    return kind(a) == kind(b)


def _refuse_id_types(path: str, other: str, id_col: str, a, b) -> None:
    if not _same_id_kind(a, b):
        raise UsageError(f"--id-col {id_col!r} holds {a} in {path} but {b} in {other}; the pairs' ids need one "
                         "type: cast one of them, or name another column with --id-col")


def _check_first_record(spark, path: str, keep) -> None:
    """A JSON Lines side's first record has every ``keep`` field, as locally: its first non-blank line, taken in
    the JVM (no record parsed in Python but that one)."""
    from pyspark.sql import functions as F

    first = _read_lines(spark, path).where(F.trim("value") != "").orderBy("line").first()
    if first is not None:
        where = f"{path}:{first['line']}"
        obj = jsonl_object(first["value"], where)
        for name in keep:
            jsonl_field(obj, name, where, "keep")


def _check_ids(sides) -> None:
    """One job: null and repeated ids of every (frame, id column, path) of ``sides``, refused naming the file."""
    from functools import reduce

    from pyspark.sql import functions as F

    counted = [df.select(F.lit(k).alias("side"), F.col(col).cast("string").alias("id"))
               .groupBy("side", "id").count().where(F.col("id").isNull() | (F.col("id") == "") | (F.col("count") > 1))
               for k, (df, col, _) in enumerate(sides)]
    if not counted:
        return
    bad = reduce(lambda x, y: x.unionByName(y), counted).orderBy("side", F.col("id").isNotNull(), "id") \
        .limit(1).collect()
    if bad:
        row = bad[0]
        _, col, path = sides[row["side"]]
        if row["id"] is None or row["id"] == "":
            what = "null" if row["id"] is None else "empty"
            raise InputError(f"{path}: --id-col {col!r} holds {row['count']:,} {what} ids; every row needs an id "
                             "(drop those rows or fill them)")
        raise InputError(f"{path}: --id-col {col!r}: id {row['id']!r} is given {row['count']:,} times; ids must "
                         "be different (deduplicate the rows or name another column with --id-col)")


def _jsonl_fields(batches, keep, name):
    """mapInArrow body: (line, each ``keep`` field's JSON text) of each JSON Lines record (a missing field or
    null as null), decoded on the driver to the values the local reader carries."""
    for batch in batches:
        lines, values = [], [[] for _ in keep]
        for k, _, obj in json_objects(batch):
            lines.append(k)
            for v, f in zip(values, keep):
                got = obj.get(f)
                v.append(None if got is None else json.dumps(got, ensure_ascii=False))
        yield pa.RecordBatch.from_arrays([pa.array(lines, pa.int64())] + [pa.array(v, pa.string()) for v in values],
                                         names=["line"] + [f"c{i}" for i in range(len(keep))])


def _carried(spark, read, path: str, kind: str, keep) -> tuple[object, list[str]] | None:
    """(frame of id and the carried columns c0, c1, ..., their names) for one side, or None (none carried)."""
    from pyspark.sql import functions as F

    if kind == "lines":
        return read.df.select(F.col("id"), F.col("value").alias("c0")), ["text"]
    if not keep:
        return None
    if kind == "parquet":
        return read.df.select(F.col(quoted(read.id_col)).alias("id"),
                              *[F.col(quoted(k)).alias(f"c{i}") for i, k in enumerate(keep)]), list(keep)
    if kind == "jsonl":
        fields = _read_lines(spark, path).mapInArrow(
            lambda b: _jsonl_fields(b, list(keep), path),
            "line long, " + ", ".join(f"c{i} string" for i in range(len(keep))))
        return read.df.select("id", "line").join(fields, "line").drop("line"), list(keep)
    raise UsageError(f"--keep-col names columns of --parquet or --jsonl input, not of --{kind}")


def _plain(value):
    """A value Spark collected as the local reader's pyarrow gives it: a struct (Row) as a dict, in lists too."""
    if hasattr(value, "asDict"):
        return {k: _plain(v) for k, v in value.asDict().items()}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    return value


class _Ids:
    """Documents numbered as they first appear in the pairs, one numbering for both sides; ``kind`` "jsonl"
    or "parquet" carries the columns typed (:class:`~allpairs.output.carried.Carried`), as locally."""

    def __init__(self, names, kind: str = "lines"):
        self.names = names
        self.index: dict = {}
        # A Parquet input's integer ids stay integers in JSON Lines and Parquet output, as locally (JSON Lines
        # ids are strings on Spark, text on both engines)
        self.ids: list = Carried() if kind == "parquet" else []
        self.size: list[int] = []
        self.decode = {"jsonl": lambda t: None if t is None else json.loads(t), "parquet": _plain}.get(kind)
        self.columns: dict[str, list] = {n: [] if self.decode is None else Carried() for n in names}
        self.raw: dict[str, list] | None = {n: [] for n in names} if kind == "parquet" else None  # for typed()

    def number(self, side: str, doc, size: int, cells) -> int:
        key = (side, doc)
        k = self.index.get(key)
        if k is None:
            k = self.index[key] = len(self.ids)
            if isinstance(self.ids, Carried):
                self.ids.append_value(str(doc), doc)
            else:
                self.ids.append(doc)
            self.size.append(size)
            for n, v in zip(self.names, cells):
                if self.decode is None:
                    self.columns[n].append(cell_text(v))
                else:
                    v = self.decode(v)
                    self.columns[n].append_value(cell_text(v), v)
                    if self.raw is not None:
                        self.raw[n].append(v)
        return k

    def typed(self, types, id_type=None) -> None:
        """Give each carried column the Arrow type ``types`` holds for it (None: inferred from its values),
        and integer ids ``id_type`` (the input's, where known), for Parquet output; every document must be
        numbered already."""
        import pyarrow as pa

        if id_type is not None and isinstance(self.ids, Carried) and self.ids and STRING not in self.ids.kinds:
            self.ids.source = pa.array([int(i) for i in self.ids], id_type)
        for n, t in zip(self.names, types):
            if t is not None and self.raw is not None:
                self.columns[n].source = pa.array(self.raw[n], t)


def _chunk(rows, ids: _Ids, carried: int):
    """A :class:`~allpairs.pairs.result.PairChunk` of collected rows (documents numbered by ``ids``)."""
    from ...pairs.result import PairChunk

    left, right = [], []
    for r in rows:
        left.append(ids.number("l", r[0], r[4], r[6:6 + carried]))
        right.append(ids.number("r", r[1], r[5], r[6 + carried:6 + 2 * carried]))
    col = lambda i: np.fromiter((r[i] for r in rows), np.int32, len(rows))  # noqa: E731
    return PairChunk(np.array(left, np.int32), np.array(right, np.int32), col(3), col(4), col(5))


def _documents(ordered, carried: int):
    """Every document of the pairs once, (side, id, size, its carried values), for Parquet output's types."""
    from pyspark.sql import functions as F

    sides = [ordered.select(F.lit(s).alias("side"), F.col(side).alias("id"), F.col(f"{side}_size").alias("size"),
                            *[F.col(f"{side}_c{i}").alias(f"c{i}") for i in range(carried)]).dropDuplicates(["id"])
             for s, side in (("l", "left"), ("r", "right"))]
    return (tuple(r) for r in sides[0].unionByName(sides[1]).toLocalIterator())


class _Streamed:
    """The collected pairs as the local Parquet writer reads a result: chunks of document numbers."""

    n_left = 0
    estimated = False

    def __init__(self, rows, ids: _Ids, carried: int, total: int):
        self.rows, self.ids, self.carried, self.total = rows, ids, carried, total

    def __len__(self) -> int:
        return self.total

    def chunks(self, max_pairs: int = CHUNK):
        batch = []
        for r in self.rows:
            batch.append(r)
            if len(batch) == CHUNK:
                yield _chunk(batch, self.ids, self.carried)
                batch = []
        if batch:
            yield _chunk(batch, self.ids, self.carried)

    def _columns_of(self, chunks, ids, measure):
        from ...pairs.result import Pairs

        return Pairs._columns_of(self, chunks, ids, measure)


def write_pairs(rows, out: BinaryIO, fmt: str, measure: str, names: list[str], total: int,
                header: bool = True, kind: str = "lines", documents=(), types=None, id_type=None) -> None:
    """Write collected pair rows (left, right, similarity, overlap, left_size, right_size, then each carried
    column of the left and of the right), sorted as locally, in ``fmt`` with the local engine's writers.

    The carried columns of ``kind`` "jsonl" (each value's JSON text) and "parquet" are typed, as locally.
    Parquet output types each column over every document before its first row group: ``documents``
    (side "l" or "r", id, size, carried values) are every document of the pairs, ``types`` the columns'
    Arrow types where the input gives them (else inferred from the values), ``id_type`` the ids' (integer
    ids of a local Parquet input)."""
    carried = len(names)
    if fmt == "parquet":
        from ...pairs.rows import write_pairs_table

        ids = _Ids(names, kind)
        for side, doc, size, *cells in documents:
            ids.number(side, doc, size, cells)
        ids.typed(types or [None] * carried, id_type)
        write_pairs_table(_Streamed(rows, ids, carried, total), ids.ids, out, measure,
                          columns=ids.columns if names else None)
        return
    from ...pairs.result import PairChunk, PairWriter

    first = True
    for chunk in _batches(rows):
        ids = _Ids(names, kind)  # numbered per chunk: only its documents' fields are encoded
        c = _chunk(chunk, ids, carried)
        writer = PairWriter(ids.ids, fmt, measure=measure, columns=ids.columns if names else None,
                            header=header and first)
        if first and writer.header:
            out.write(writer.header.encode())
        first = False
        out.write(writer.render(PairChunk(c.left, c.right, c.overlap, c.left_size, c.right_size),
                                np.array(ids.size, np.int32)))
    if first:  # no pair: the header alone
        writer = PairWriter([], fmt, measure=measure, columns={n: [] for n in names} if names else None,
                            header=header)
        out.write(writer.header.encode())


def _batches(rows):
    batch = []
    for r in rows:
        batch.append(r)
        if len(batch) == CHUNK:
            yield batch
            batch = []
    if batch:
        yield batch


def small_inputs(path: str, other: str, kind: str) -> int | None:
    """The bytes of ``path`` and ``other`` together when they are local, not Parquet, fewer than
    :data:`.run.LOCAL_BELOW` in all, and no SparkSession runs in this process; else None. Such an R–S
    join is the local engine's work (a second or so, where starting Spark takes 10-30 s): the command
    line joins it there when no master is given, as :func:`.run.run` does a small self-join."""
    if kind == "parquet":
        return None
    a = _run._small_local_input(str(path), _run.LOCAL_BELOW)
    b = None if a is None else _run._small_local_input(str(other), _run.LOCAL_BELOW - a)
    if a is None or b is None or _run._spark_active():
        return None
    return a + b


def run_against(path: str, other: str, threshold, *, kind: str = "directory", out: BinaryIO | None = None,
                fmt: str = "tsv", header: bool = True, count: bool = False, master: str | None = None,
                conf: dict | None = None, include=(), exclude=(), min_bytes: int = 0, id_field: str = "id",
                text_field: str = "text", id_col: str | None = None, text_col: str | None = None,
                tokens_col: str | None = None, keep=(), shingle=None, measure: str = "jaccard",
                normalize: bool = True, min_shingles: int = 1, quiet: bool = False) -> SparkAgainstRun:
    """Join the documents at ``path`` against those at ``other`` on Spark; write the pairs to ``out`` in
    ``fmt`` (the local engine's bytes) or, with ``count``, only count them.

    Both inputs are read as ``kind`` with the same options. Raises
    :class:`~allpairs.errors.UsageError` (a bad option, ids of different
    types on the two sides) or :class:`~allpairs.errors.InputError` (a missing
    column, null or repeated ids), each one line, before any join work.
    """
    check_input_options(kind, include, exclude, min_bytes, id_col, text_col, tokens_col)
    if keep and kind not in ("parquet", "jsonl"):
        raise UsageError(f"--keep-col names columns of --parquet or --jsonl input, not of --{kind}")
    for p in (path, other):
        if str(p) == "-":
            raise UsageError("--engine spark reads files, not stdin: give a path")
    if not count and out is None:
        raise UsageError("give out (a binary stream) or count=True")
    if kind == "parquet":
        for p in (path, other):
            check_parquet(str(p), id_col or "id", None if tokens_col else text_col or "text", tokens_col)
            check_parquet_keep(str(p), keep)
        a, b = _parquet_id_type(str(path), id_col or "id"), _parquet_id_type(str(other), id_col or "id")
        if a is not None and b is not None:
            _refuse_id_types(path, other, id_col or "id", a, b)
    t0 = time.perf_counter()
    spark = get_session(master, conf=session_conf(master, [path, other], conf), quiet=quiet)
    res = SparkAgainstRun(master=spark.sparkContext.master, measure=measure, threshold=str(threshold))
    res.seconds["start"] = time.perf_counter() - t0
    t0 = time.perf_counter()
    reads, kept = [], []
    try:
        for p in (path, other):
            run = SparkRun(master=res.master, method="exact", threshold=str(threshold), shingle="")
            read = read_documents(spark, str(p), kind, run, include=include, exclude=exclude, min_bytes=min_bytes,
                                  id_field=id_field, text_field=text_field, id_col=id_col, text_col=text_col,
                                  tokens_col=tokens_col)
            if read.kept is not None:
                kept.append(read.kept)
            reads.append((read, run))
        (left, lrun), (right, rrun) = reads
        if kind == "jsonl" and keep:
            for p in (path, other):
                _check_first_record(spark, str(p), keep)
        a, b = left.df.schema[left.id_col].dataType, right.df.schema[right.id_col].dataType
        _refuse_id_types(path, other, left.id_col, a.simpleString(), b.simpleString())
        _check_ids([(r.df, r.id_col, p) for (r, _), p in zip(reads, (path, other)) if r.check])
        from .shingle import choose_shingle, given_spec

        spec = given_spec(shingle, left.tokens_col, normalize)
        if spec is None and left.text_col is not None:
            if left.code and right.code:
                spec = given_spec("code:5", None)  # trees of source files only, as locally
            else:  # both sides shingled alike, chosen as locally from the texts of both (left first)
                spec = choose_shingle([(left.df, left.text_col, left.order_col),
                                       (right.df, right.text_col, right.order_col)]).spec
        res.shingle = "tokens" if spec is None else str(spec)
        pairs, _, t = plan_against(left.df, right.df, threshold, measure=measure, id_col=left.id_col,
                                   text_col=left.text_col, tokens_col=left.tokens_col, spec=spec,
                                   order_col=left.order_col, language_col=left.language_col, normalize=normalize,
                                   min_shingles=min_shingles, other_id_col=right.id_col,
                                   other_order_col=right.order_col)
        res.threshold = str(t)
        res.seconds["plan"] = time.perf_counter() - t0
        t0 = time.perf_counter()
        if count:
            res.pairs = pairs.count()
        else:
            from pyspark.sql import functions as F

            names: list[str] = []
            cols = [*COLUMNS]
            # A Parquet input's carried columns keep its Arrow types (a local file's; one type on both sides).
            types = None
            if kind == "parquet" and keep:
                a, b = _keep_types(str(path), keep), _keep_types(str(other), keep)
                types = [x if x is not None and x == y else None for x, y in zip(a, b)]
            for side, (read, _), p in (("left", reads[0], path), ("right", reads[1], other)):
                got = _carried(spark, read, str(p), kind, keep)
                if got is None:
                    continue
                frame, names = got
                frame = frame.select(F.col("id").alias(side), *[F.col(f"c{i}").alias(f"{side}_c{i}")
                                                               for i in range(len(names))])
                pairs = pairs.join(frame, side, "left")
            cols += [f"{side}_c{i}" for side in ("left", "right") for i in range(len(names))]
            ordered = pairs.orderBy(*ORDER).select(*cols).persist()
            res.pairs = ordered.count()
            # Parquet output of typed columns or ids: every document numbered first, so that their types (made
            # once, over every document) hold for every row group. Not for a JSON Lines input's text ids alone.
            typed = kind == "parquet" or (kind == "jsonl" and names)
            documents = _documents(ordered, len(names)) if fmt == "parquet" and typed else ()
            id_type = None
            if fmt == "parquet" and kind == "parquet":
                a, b = _keep_types(str(path), [left.id_col])[0], _keep_types(str(other), [right.id_col])[0]
                id_type = a if a is not None and a == b else None
            rows = (tuple(r) for r in ordered.toLocalIterator(prefetchPartitions=True))
            write_pairs(rows, out, fmt, measure, names, res.pairs, header=header, kind=kind, documents=documents,
                        types=types, id_type=id_type)
            ordered.unpersist()
        res.seconds["join"] = time.perf_counter() - t0
        docs = []
        for read, run in reads:
            n = read.df.count() if kind != "directory" else run.documents
            docs.append(n)
            for why, k in run.skipped.items():
                res.skipped[why] = res.skipped.get(why, 0) + k
        res.documents = tuple(docs)
    except Exception as e:
        raise_worker_error(e)
        raise
    finally:
        for k in kept:
            k.unpersist()
    return res


__all__ = ["SparkAgainstRun", "run_against", "write_pairs"]
