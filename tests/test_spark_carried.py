"""Carried columns of ``join --engine spark`` (``--keep-col``, ``--keep-all``) against the local engine's Parquet.

The Spark self-join joins the pairs back with the input's (id, kept columns)
and writes them as the local engine's ``--format parquet`` does: the same
columns, names, Arrow types and rows in the same order (the pair columns in
Spark's types, as every Spark dataset has them). Every test but the refusals
before Spark starts uses the one SparkSession of the run (conftest.py's
``spark`` fixture).
"""
from __future__ import annotations

import datetime
import json
import math
from contextlib import contextmanager

import pytest
from typer.testing import CliRunner

from allpairs.cli import app

pytest.importorskip("pyspark", reason="the Spark tests need the spark extra: pip install -e '.[test]'")
pa = pytest.importorskip("pyarrow", reason="the Spark tests need the spark extra: pip install -e '.[test]'")
pq = pytest.importorskip("pyarrow.parquet")

#: Pages of a crawl: several identical texts (every pair of them must carry its own rows' columns), near copies,
#: and unrelated pages.
TEXTS = ["the cat sat on the mat by the door", "the cat sat on the mat by the door", "the cat sat on a mat by the door",
         "dogs run far away from the old barn", "dogs run far away from the old barn now",
         "nothing here looks like anything else", "the cat sat on the mat by the door",
         "dogs run far away from the old barn", "a quiet page about trains and rails",
         "the cat sat on the mat by the door"]
#: The pair columns are Spark's (ids as the input gives them, overlaps and sizes int32).
PAIR = ["left", "right", "similarity", "overlap", "left_size", "right_size"]


def cli(*args):
    return CliRunner().invoke(app, [str(a) for a in args], prog_name="allpairs")


def crawl_records():
    """JSON Lines records of a crawl: strings, a field some records lack, ints, floats with nulls, booleans,
    lists, objects, and a field whose values disagree in type (text in Parquet, as locally)."""
    out = []
    for i, text in enumerate(TEXTS):
        rec = {"id": f"p{i}", "text": text, "url": f"https://example.org/{i}", "title": f"Page {i}",
               "date": f"2024-05-{i + 1:02d}", "n": i * 7, "score": None if i % 4 == 3 else i / 4,
               "tags": ["news"] * (i % 3), "ok": i % 2 == 0, "meta": {"lang": "en", "len": len(text)},
               "mixed": i if i % 2 else f"v{i}"}
        if i == 4:
            del rec["title"]
        if i == 6:
            rec["late"] = True  # a field only a later record brings: --keep-all carries it, null before
        out.append(rec)
    return out


def crawl_table():
    """The crawl as a Parquet table of typed columns: int64 ids, strings with nulls, float with NaN, int64,
    int32, timestamps (one without a time zone, one in UTC), booleans, lists of int64, dates, bytes."""
    n = len(TEXTS)
    return pa.table({
        "id": pa.array([100 + i for i in range(n)], pa.int64()), "text": TEXTS,
        "url": pa.array([None if i == 2 else f"https://example.org/{i}" for i in range(n)], pa.string()),
        "score": pa.array([math.nan if i == 1 else i / 3 for i in range(n)], pa.float64()),
        "n": pa.array([i * 7 for i in range(n)], pa.int64()), "rank": pa.array(range(n), pa.int32()),
        "crawled": pa.array([datetime.datetime(2024, 5, i + 1, 12) for i in range(n)], pa.timestamp("us")),
        "ok": pa.array([i % 2 == 0 for i in range(n)]),
        "links": pa.array([[i, i + 1][: i % 3] for i in range(n)], pa.list_(pa.int64())),
        "day": pa.array([datetime.date(2024, 5, i + 1) for i in range(n)], pa.date32()),
        "seen": pa.array([datetime.datetime(2024, 6, 1, i, tzinfo=datetime.timezone.utc) for i in range(n)],
                         pa.timestamp("us", tz="UTC")),
        "blob": pa.array([None if i % 4 == 3 else bytes([i, 255 - i]) for i in range(n)], pa.binary())})


def local_and_spark(tmp_path, name, *args):
    """The local engine's ``--format parquet`` table (pair columns cast to Spark's types) and the Spark
    engine's dataset, of ``join -t 0.5 -s word:1 ARGS``."""
    local, out = tmp_path / f"{name}.parquet", tmp_path / name
    r = cli("join", "-q", "-t", "0.5", "-s", "word:1", *args, "-f", "parquet", "-o", local)
    assert r.exit_code == 0, r.output
    r = cli("join", "--engine", "spark", "--master", "local[2]", "-q", "-t", "0.5", "-s", "word:1", *args, "-o", out)
    assert r.exit_code == 0, r.output
    got, want = pq.read_table(out), pq.read_table(local)
    want = want.cast(pa.schema([got.schema.field(n) if n in PAIR else want.schema.field(n) for n in want.schema.names]))
    return want, got


def same_tables(want, got):
    """Equal schemas (names, types, order; not the writers' metadata) and rows, NaN equal to NaN."""
    assert got.schema.remove_metadata() == want.schema.remove_metadata(), (got.schema, want.schema)
    assert repr(got.to_pylist()) == repr(want.to_pylist())


def carried_as_input(rows, by_id, names):
    """Each pair's left_NAME and right_NAME are the NAME of its own left and right row of the input."""
    for p in rows:
        for n in names:
            for side in ("left", "right"):
                assert repr(p[f"{side}_{n}"]) == repr(by_id[p[side]].get(n)), (p, side, n)


@contextmanager
def small_partitions(spark, size: int = 400):
    """Spark reads files in pieces of ``size`` bytes: several tasks, each with its own share of the values."""
    old = spark.conf.get("spark.sql.files.maxPartitionBytes")
    spark.conf.set("spark.sql.files.maxPartitionBytes", str(size))
    try:
        yield
    finally:
        spark.conf.set("spark.sql.files.maxPartitionBytes", old)


def test_jsonl_fields_are_carried_typed_as_the_local_engines_parquet(spark, tmp_path):
    records = crawl_records()
    src = tmp_path / "crawl.jsonl"
    src.write_text("".join(json.dumps(r) + "\n" for r in records))
    by_id = {r["id"]: r for r in records}
    keep = ["url", "title", "date", "n", "score", "tags", "ok", "meta", "mixed"]
    with small_partitions(spark):  # each field's type inferred from the values of several tasks
        want, got = local_and_spark(tmp_path, "keep", "--jsonl", src, *[a for k in keep for a in ("--keep-col", k)])
        same_tables(want, got)
        assert got.column_names == PAIR + [f"{s}_{k}" for k in keep for s in ("left", "right")]
        assert str(got.schema.field("left_meta").type) == "struct<lang: string, len: int64>"
        assert got.schema.field("left_mixed").type == pa.string()  # ints and strings: each value's JSON text
        rows = got.to_pylist()
        assert len(rows) > 10 and sum(p["similarity"] == 1.0 for p in rows) >= 6  # the copies pair with each other
        for r in by_id.values():
            r["mixed"] = json.dumps(r["mixed"]) if not isinstance(r["mixed"], str) else r["mixed"]
        carried_as_input(rows, by_id, keep)
        want, got = local_and_spark(tmp_path, "all", "--jsonl", src, "--keep-all")
        same_tables(want, got)
        names = ["text"] + keep[:4] + ["score", "tags", "ok", "meta", "mixed", "late"]
        assert got.column_names == PAIR + [f"{s}_{k}" for k in names for s in ("left", "right")]
        carried_as_input(got.to_pylist(), by_id, names)
    # The count is the pairs', whatever is carried.
    r = cli("join", "--engine", "spark", "--master", "local[2]", "-q", "-t", "0.5", "-s", "word:1", "--jsonl", src,
            "--keep-col", "url", "--count")
    assert r.exit_code == 0 and int(r.stdout) == len(rows), r.output


def test_parquet_columns_are_carried_with_their_arrow_types(spark, tmp_path):
    table = crawl_table()
    pq.write_table(table, tmp_path / "crawl.parquet")
    by_id = {r["id"]: r for r in table.to_pylist()}
    keep = ["url", "score", "n", "rank", "crawled", "ok", "links", "day", "seen", "text", "blob"]
    want, got = local_and_spark(tmp_path, "keep", "--parquet", tmp_path / "crawl.parquet",
                                *[a for k in keep for a in ("--keep-col", k)])
    same_tables(want, got)
    assert [got.schema.field(f"left_{k}").type for k in keep] == [table.schema.field(k).type for k in keep]
    carried_as_input(got.to_pylist(), by_id, keep)
    want, got = local_and_spark(tmp_path, "all", "--parquet", tmp_path / "crawl.parquet", "--keep-all")
    same_tables(want, got)
    assert got.column_names == PAIR + [f"{s}_{k}" for k in table.column_names[1:] for s in ("left", "right")]
    carried_as_input(got.to_pylist(), by_id, table.column_names[1:])


def test_a_small_input_joined_locally_carries_the_same_columns(spark, tmp_path, monkeypatch):
    from allpairs.engines.spark import run
    from allpairs.engines.spark.session import SparkSetupError

    records = crawl_records()
    src = tmp_path / "crawl.jsonl"
    src.write_text("".join(json.dumps(r) + "\n" for r in records))
    args = ["join", "--engine", "spark", "-t", "0.5", "-s", "word:1", "--jsonl", src]
    for keep in (["--keep-col", "url", "--keep-col", "meta", "--keep-col", "mixed"], ["--keep-all"]):
        spark_out, local_out = tmp_path / f"spark{len(keep)}", tmp_path / f"local{len(keep)}"
        r = cli(*args, *keep, "-o", spark_out)
        assert r.exit_code == 0 and "local engine" not in r.stderr, r.stderr

        def no_spark(*a, **k):
            raise SparkSetupError("Spark was started")

        with monkeypatch.context() as m:
            m.setattr(run, "_spark_active", lambda: False)
            m.setattr(run, "get_session", no_spark)
            r = cli(*args, *keep, "-o", local_out)
        assert r.exit_code == 0 and "joined by the local engine" in r.stderr, r.stderr
        same_tables(pq.read_table(spark_out), pq.read_table(local_out))


def test_keep_col_is_refused_where_it_cannot_work_in_one_line_and_leaves_no_output(spark, tmp_path, monkeypatch):
    from allpairs.engines.spark import run

    (tmp_path / "l.txt").write_text("a b\na b c\n")
    (tmp_path / "d").mkdir()
    (tmp_path / "d" / "x.txt").write_text("a b\n")
    table = crawl_table()
    pq.write_table(table, tmp_path / "t.parquet")
    src = tmp_path / "crawl.jsonl"
    src.write_text("".join(json.dumps(r) + "\n" for r in crawl_records()))
    spark_args = ["join", "--engine", "spark", "--master", "local[2]", "-t", "0.5"]
    out = tmp_path / "out"
    for args, code, message in [
            (["--lines", tmp_path / "l.txt", "--keep-col", "x"], 2, "--keep-col does nothing without --jsonl"),
            (["--sets", tmp_path / "l.txt", "--keep-all"], 2, "--keep-all does nothing without --jsonl"),
            ([tmp_path / "d", "--keep-col", "x"], 2, "--keep-col does nothing without --jsonl"),
            (["--jsonl", src, "--keep-col", "url", "--keep-all"], 2, "--keep-all carries every column already"),
            (["--jsonl", src, "--keep-col", "url", "--clusters"], 2, "--keep-col with --clusters not available"),
            (["--parquet", tmp_path / "t.parquet", "--keep-col", "nope"], 1,
             f"{tmp_path / 't.parquet'}: no column 'nope' (it has id, text, url, score, n, rank, crawled, ok, links, "
             "day, seen, blob); name one with --keep-col")]:
        with monkeypatch.context() as m:  # all refused before Spark starts
            m.setattr(run, "get_session", lambda *a, **k: pytest.fail("Spark was started"))
            r = cli(*spark_args, *args, "-o", out)
        assert r.exit_code == code and message in r.stderr, (args, r.output)
        assert len(r.stderr.strip().splitlines()) == 1 and "Traceback" not in r.output
        assert not out.exists() and sorted(p.name for p in tmp_path.iterdir()) == ["crawl.jsonl", "d", "l.txt",
                                                                                  "t.parquet"]
    # A field the first record lacks: refused naming its line and fields, as locally (Spark has read the lines).
    r = cli(*spark_args, "-s", "word:1", "--jsonl", src, "--keep-col", "nope", "-o", out)
    assert r.exit_code == 1, r.output
    assert r.stderr.strip().splitlines()[-1] == (
        f"allpairs: error: {src}:1: no 'nope' field (the record has id, text, url, title, date, n, score, tags, ok, "
        "meta, mixed); name the field with --keep-col")
    assert not out.exists() and not [p for p in tmp_path.iterdir() if p.name.startswith(".out")]


def test_the_library_takes_keep_and_keep_all_as_run_against_names_them(spark, tmp_path):
    from allpairs.engines.spark.run import run

    pq.write_table(crawl_table(), tmp_path / "t.parquet")
    res = run(str(tmp_path / "t.parquet"), "0.5", kind="parquet", output=str(tmp_path / "o"), keep=["url"],
              shingle="word:1", quiet=True)
    got = pq.read_table(tmp_path / "o")
    assert got.column_names == PAIR + ["left_url", "right_url"] and res.pairs == got.num_rows


def test_the_python_api_carries_a_frames_columns_in_self_and_rs_joins(spark):
    from pyspark.sql import functions as F

    import allpairs.spark
    from allpairs.errors import UsageError

    rows = [(f"d{i}", t, f"https://example.org/{i}", i * 1.5 if i != 2 else None) for i, t in enumerate(TEXTS)]
    df = spark.createDataFrame(rows, "id string, text string, url string, score double")
    by_id = {r[0]: {"url": r[2], "score": r[3]} for r in rows}
    pairs = allpairs.spark.join(df, 0.5, shingle="word:1", keep=["url", "score"])
    assert pairs.columns == PAIR + ["left_url", "right_url", "left_score", "right_score"]
    got = [r.asDict() for r in pairs.collect()]
    assert len(got) == len(allpairs.spark.join(df, 0.5, shingle="word:1").collect()) > 10
    carried_as_input(got, by_id, ["url", "score"])
    other = df.where("id in ('d1', 'd3')").withColumn("url", F.lit("other"))
    got = allpairs.spark.join(df, 0.5, shingle="word:1", against=other, keep=["url"]).collect()
    assert got and all(r["right_url"] == "other" and r["left_url"] == by_id[r["left"]]["url"] for r in got)
    with pytest.raises(UsageError, match="keep= names 'nope', not a column of the DataFrame; its columns are id, "
                                         "text, url, score"):
        allpairs.spark.join(df, 0.5, keep=["nope"])
