"""Carried columns of a Spark self-join (``keep``, ``keep_all``): the pairs joined back with the input's rows.

The local engine carries columns of ``--parquet`` and ``--jsonl`` input into
the pairs as ``left_NAME``, ``right_NAME`` with their types
(:class:`allpairs.output.carried.Carried`). Here the pairs never leave
Spark: the input's (id, kept columns) are joined to them by the left id, then
by the right id (two joins: a shuffle each, or a broadcast of a small input).
A Parquet column keeps the type Spark read it with (written back, pyarrow
reads the input's Arrow type). A JSON Lines field is typed as the local
engine types it, by Arrow's inference over every record: one job over the
lines gives, per task, one value of each distinct type a field's values
infer to (and each field's first appearance, for ``keep_all``); the driver
infers the type of those few values, which is the type of them all, and a
second pass (the join's own) converts each record's value to it.
"""
from __future__ import annotations

import json
from contextlib import contextmanager

import pyarrow as pa

from ...corpus.records import fields_of, jsonl_field
from ...errors import InputError, UsageError
from ...output.carried import json_column
from .session import quoted

#: The input kinds whose columns can be carried.
KINDS = ("parquet", "jsonl")


def check_keep(kind: str, keep, keep_all: bool) -> list[str]:
    """Refuse what carrying cannot do (one line each); the columns to carry as a list, each once (as locally)."""
    keep = list(dict.fromkeys([keep] if isinstance(keep, str) else keep or ()))
    if not keep and not keep_all:
        return keep
    if keep_all and keep:
        raise UsageError("{{keep_all}} carries every column already; drop {{keep}}", param="keep")
    if kind not in KINDS:
        what = "{{keep_all}}" if keep_all else "{{keep}}"
        given = "a directory" if kind == "directory" else f"{{{{kind={kind}}}}}"
        raise UsageError(f"{what} carries columns of {{{{kind=parquet}}}} or {{{{kind=jsonl}}}} input, not of {given}",
                         param="keep_all" if keep_all else "keep")
    return keep


def json_objects(batch):
    """(line, text, object) of each line of a batch of (value, line) that is a JSON object; the others (blank,
    not JSON, not an object) are left to the reader of ids and texts, which says why, naming the line."""
    for value, k in zip(batch.column("value").to_pylist(), batch.column("line").to_pylist()):
        if not value.strip():
            continue
        try:
            obj = json.loads(value)
        except ValueError:
            continue
        if isinstance(obj, dict):
            yield k, value, obj


def _value_type(value) -> str:
    """The Arrow type one JSON value infers to, as text (an error's name where Arrow has none)."""
    try:
        return str(pa.array([value]).type)
    except (pa.ArrowException, TypeError, ValueError, OverflowError) as e:
        return type(e).__name__


def _witness_batches(batches, wanted):
    """mapInArrow body: per task, each field's first appearance (line, position in its record), and one value
    of each distinct Arrow type its values infer to, with the line it came from (JSON text); and the task's
    first record (line, the line's text). Only the fields in ``wanted`` (None: every field). Lines that are
    not JSON objects are the id reader's to refuse."""
    seen: dict[tuple[str, str], tuple[int, int, str]] = {}
    first = None
    for batch in batches:
        for k, value, obj in json_objects(batch):
            if first is None or k < first[0]:
                first = (k, value)
            for pos, (f, v) in enumerate(obj.items()):
                if wanted is not None and f not in wanted:
                    continue
                key = (f, _value_type(v))
                if key not in seen or seen[key][0] > k:
                    seen[key] = (k, pos, json.dumps(v, ensure_ascii=False))
    rows = [(f, t, k, pos, text) for (f, t), (k, pos, text) in seen.items()]
    if first is not None:
        rows.append((None, None, first[0], 0, first[1]))
    yield pa.RecordBatch.from_pylist([dict(zip(("field", "type", "line", "pos", "value"), r)) for r in rows],
                                     schema=_WITNESS)


_WITNESS = pa.schema([("field", pa.string()), ("type", pa.string()), ("line", pa.int64()), ("pos", pa.int64()),
                      ("value", pa.string())])


def jsonl_types(lines, path: str, id_field: str, keep: list[str], keep_all: bool) -> tuple[list[str], list]:
    """(the fields to carry, each one's Arrow type as the local engine infers it over every record) of the
    JSON Lines ``lines`` (line, value); one job. The first record must have each field of ``keep``, as locally."""
    wanted = None if keep_all else set(keep)
    rows = lines.mapInArrow(lambda b: _witness_batches(b, wanted),
                            "field string, type string, line long, pos long, value string").collect()
    firsts = [r for r in rows if r["field"] is None]
    if not firsts:
        return (keep, [pa.string()] * len(keep))
    line, text = min((r["line"], r["value"]) for r in firsts)
    obj = json.loads(text)
    if keep_all:
        order: dict[str, tuple[int, int]] = {}
        for r in rows:
            if r["field"] is not None and (r["field"] not in order or order[r["field"]] > (r["line"], r["pos"])):
                order[r["field"]] = (r["line"], r["pos"])
        keep = [f for f in sorted(order, key=order.get) if f != id_field]
    else:
        for f in keep:
            jsonl_field(obj, f, f"{path}:{line}", "keep")
    witnesses: dict[str, list] = {f: [] for f in keep}
    for r in sorted((r for r in rows if r["field"] in witnesses), key=lambda r: (r["line"], r["pos"])):
        witnesses[r["field"]].append(json.loads(r["value"]))
    # A field absent from some records is null there, as locally: one null among the values.
    return keep, [json_column(w + [None], pa).type for w in (witnesses[f] for f in keep)]


def _typed_batches(batches, keep: list[str], types: list, schema):
    """mapInArrow body: (line, each ``keep`` field's value converted to its Arrow type in ``types``) of each
    JSON Lines record; a field typed as text whose values are not all strings holds each value's JSON text,
    as :func:`allpairs.output.carried.json_column` writes it."""
    for batch in batches:
        lines, values = [], [[] for _ in keep]
        for k, _, obj in json_objects(batch):
            lines.append(k)
            for out, f, t in zip(values, keep, types):
                v = obj.get(f)
                if t == pa.string() and v is not None and not isinstance(v, str):
                    v = json.dumps(v, ensure_ascii=False)
                out.append(v)
        arrays = [pa.array(lines, pa.int64())] + [pa.array(v, f.type) for v, f in zip(values, list(schema)[1:])]
        yield pa.RecordBatch.from_arrays(arrays, schema=schema)


def _spark_type(t, name: str, path: str):
    """The Spark type that Spark's Parquet writer writes as Arrow type ``t`` (a field all null: text, all null)."""
    from pyspark.sql.pandas.types import from_arrow_type

    if pa.types.is_null(t):
        t = pa.string()
    try:
        return from_arrow_type(t)
    except (TypeError, ValueError) as e:
        raise InputError(f"{path}: field {name!r} holds {t}, which Spark has no type for ({e}); "
                         "carry it with the local engine") from None


def check_parquet_keep(path: str, keep) -> None:
    """Refuse a ``keep`` column that a local Parquet input does not have (before Spark starts), as locally."""
    import os

    from .run import _local_path

    local = _local_path(path)
    if not keep or local is None or not os.path.exists(local):
        return
    import pyarrow.parquet as pq

    schema = pq.ParquetDataset(local).schema if os.path.isdir(local) else pq.read_schema(local)
    for k in keep:
        if k not in schema.names:
            raise InputError(f"{path}: no column {k!r} (it has {fields_of(schema.names)}); name one with {{{{keep}}}}",
                             param="keep")


def carried_frame(spark, read, path: str, kind: str, keep: list[str], keep_all: bool, id_field: str = "id",
                  lines=None):
    """(frame of ``_id`` and the carried columns ``c0``, ``c1``, ..., their names) of one input; None when
    nothing is carried (``--lines``: the line, as ``text``). ``read`` is the input's
    :class:`~allpairs.engines.spark.run.Documents`; ``lines``: the JSON Lines lines (line, value) to carry
    and type the fields over, where not every line of ``path``."""
    from pyspark.sql import functions as F
    from pyspark.sql import types as T

    if kind == "lines":  # the line itself, as the local engine carries it (left_text, right_text)
        return read.df.select(F.col(quoted(read.id_col)).alias("_id"), F.col("value").alias("c0")), ["text"]
    if not keep and not keep_all:
        return None
    if kind == "parquet":
        names = [c for c in read.df.columns if c not in (read.id_col, read.order_col)] if keep_all else keep
        missing = [k for k in names if k not in read.df.columns]
        if missing:
            raise InputError(f"{path}: no column {missing[0]!r} (it has {fields_of(read.df.columns)}); "
                             "name one with {{keep}}", param="keep")
        return read.df.select(F.col(quoted(read.id_col)).alias("_id"),
                              *[F.col(quoted(k)).alias(f"c{i}") for i, k in enumerate(names)]), names
    from .run import _read_lines

    lines = _read_lines(spark, path) if lines is None else lines
    names, types = jsonl_types(lines, path, id_field, keep, keep_all)
    schema = T.StructType([T.StructField("line", T.LongType())] + [
        T.StructField(f"c{i}", _spark_type(t, n, path)) for i, (n, t) in enumerate(zip(names, types))])
    from pyspark.sql.pandas.types import to_arrow_schema

    arrow_schema = to_arrow_schema(schema)
    fields = lines.mapInArrow(lambda b: _typed_batches(b, names, types, arrow_schema), schema)
    return read.df.select(F.col(quoted(read.id_col)).alias("_id"), "line").join(fields, "line").drop("line"), names


def with_carried(pairs, frame, names: list[str], right_frame=None, sides=("left", "right")):
    """``pairs`` (with ``left`` and ``right`` ids) and, for each of ``names``, ``left_NAME`` and ``right_NAME``:
    the values of ``frame`` (``_id``, ``c0``, ...) of the left and of the right document, joined by id
    (the right document's from ``right_frame``, an R–S join's other side, where given). The carried columns,
    in the local engine's order (each name's left, then right), are the second value. ``sides``: the two
    id columns' names, and so the carried ones' prefixes (dedup's removed and kept)."""
    from pyspark.sql import functions as F

    for side, rows in zip(sides, (frame, frame if right_frame is None else right_frame)):
        pairs = pairs.join(rows.select(F.col("_id").alias(side),
                                       *[F.col(f"c{i}").alias(f"_{side}_c{i}") for i in range(len(names))]),
                           side, "left")
    cols = [F.col(f"_{side}_c{i}").alias(f"{side}_{n}") for i, n in enumerate(names) for side in sides]
    return pairs, cols


def frame_columns(df, id_col: str, keep, side: str = ""):
    """(``_id``, ``c0``, ...) of a DataFrame's ``keep`` columns, for :func:`with_carried`; a missing column is
    refused naming the frame's columns (``side``, e.g. "against's ", says which frame)."""
    from pyspark.sql import functions as F

    for k in [id_col, *keep]:
        if k not in df.columns:
            what, param = ("{{keep}} names", "keep") if k in keep else ("{{id_col}} is", "id_col")
            raise UsageError(f"{what} {k!r}, not a column of {side or 'the '}DataFrame; its columns are "
                             f"{', '.join(df.columns)}", param=param)
    return df.select(F.col(quoted(id_col)).alias("_id"), *[F.col(quoted(k)).alias(f"c{i}") for i, k in enumerate(keep)])


@contextmanager
def timestamps_as_written(df):
    """While ``df`` is written: a carried timestamp column of a time zone (Spark's TimestampType) written as
    Parquet's UTC-adjusted microseconds, which pyarrow reads as ``timestamp[us, tz=UTC]``, the type a UTC
    column of the input has, not as Spark's default INT96 (``timestamp[ns]``). The session's setting is put
    back after."""
    from pyspark.sql import types as T

    if not any(isinstance(f.dataType, T.TimestampType) for f in df.schema.fields):
        yield
        return
    key = "spark.sql.parquet.outputTimestampType"
    conf = df.sparkSession.conf
    old = conf.get(key)
    conf.set(key, "TIMESTAMP_MICROS")
    try:
        yield
    finally:
        conf.set(key, old)


__all__ = ["KINDS", "carried_frame", "check_keep", "check_parquet_keep", "frame_columns", "json_objects",
           "jsonl_types", "timestamps_as_written", "with_carried"]
