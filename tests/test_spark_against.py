"""``join --against OTHER --engine spark`` and Spark's containment and overlap self-joins, against the local engine.

The R–S join on Spark writes the local engine's bytes (every format, carried
columns, --count, -q); its self-joins on containment and overlap give the
local engine's pairs; bad input on either side is one line before any join
work; a signal leaves no partial output. The one SparkSession of the run is
conftest.py's ``spark`` fixture (the signal tests start their own processes
and use no fixture session).
"""
from __future__ import annotations

import os
import tempfile
from fractions import Fraction
from itertools import islice
from pathlib import Path

import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

import allpairs
import naive
from strategies import corpora

pytest.importorskip("pyspark", reason="the Spark tests need the spark extra: pip install -e '.[test]'")
pytest.importorskip("pyarrow", reason="the Spark tests need the spark extra: pip install -e '.[test]'")

import allpairs.spark  # noqa: E402
from allpairs.cli import app  # noqa: E402

# Few examples, no shrinking: each is a few Spark jobs (tens of seconds on a loaded machine).
FEW = settings(max_examples=3, deadline=None, phases=(Phase.explicit, Phase.reuse, Phase.generate),
               suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                      HealthCheck.function_scoped_fixture])
MEASURES = [("containment", "1/2"), ("containment", "0.9"), ("containment", "1"), ("overlap", "2"),
            ("jaccard", "1/3"), ("dice", "0.5"), ("cosine", "0.7")]


def cli(*args):
    return CliRunner().invoke(app, [str(a) for a in args], prog_name="allpairs")


def write_sets(path: Path, sets) -> Path:
    path.write_text("".join(" ".join(f"t{x}" for x in s) + "\n" for s in sets))
    return path


def both(tmp: Path, args, ext: str):
    """The local and the Spark engine's output bytes (-o x.EXT each) and the Spark run's result."""
    local_out, spark_out = tmp / f"local.{ext}", tmp / f"spark.{ext}"
    local = cli("join", *args, "-q", "-o", local_out)
    got = cli("join", *args, "--engine", "spark", "-q", "-o", spark_out)
    assert local.exit_code == 0, local.output
    assert got.exit_code == 0 and got.stderr == "", got.output
    return local_out.read_bytes(), spark_out.read_bytes()


@FEW
@given(corpora(max_docs=14, max_size=6), corpora(max_docs=14, max_size=24), st.sampled_from(MEASURES),
       st.sampled_from(["tsv", "csv", "jsonl", "parquet"]))
def test_join_against_on_spark_writes_the_local_engines_bytes_in_every_format(spark, left, right, measure_t, ext):
    if not any(left) or not any(right):
        return  # the local engine refuses a side with no token at all
    measure, t = measure_t
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        args = ["--sets", write_sets(tmp / "items.txt", left), "--against", write_sets(tmp / "docs.txt", right),
                "-t", t, "--measure", measure]
        want, got = both(tmp, args, ext)
        assert got == want
        assert sorted(os.listdir(tmp)) == ["docs.txt", "items.txt", f"local.{ext}", f"spark.{ext}"]
    n = len(naive.rs_pairs([[f"t{x}" for x in s] for s in left], [[f"t{x}" for x in s] for s in right],
                           Fraction(t), measure))
    if ext == "tsv":
        assert got.count(b"\n") == n + 1  # the header, then a line a pair


def test_lines_carry_their_text_and_count_and_quiet_are_the_local_engines(spark, tmp_path):
    items = tmp_path / "items.txt"
    docs = tmp_path / "docs.txt"
    items.write_text("a b c d\nx y z\nb c d e\n\nzz top\n")
    docs.write_text("a b c d e f g\nx y q\nb c d e\nx, y = z\n")
    args = ["--lines", items, "--against", docs, "-t", "0.75", "--measure", "containment"]
    local = cli("join", *args, "-q")  # no -s: chosen from the texts of both sides, as locally
    got = cli("join", *args, "--engine", "spark")
    assert got.exit_code == 0 and got.stdout == local.stdout, got.output
    assert "left_text\tright_text" in got.stdout.splitlines()[0]
    assert "5 documents against 4; word:1 shingles" in got.stderr, got.stderr
    assert "exact containment join at t = 0.75: 5 pairs" in got.stderr
    count = cli("join", *args, "--engine", "spark", "--count", "-q")
    assert count.exit_code == 0 and count.stderr == ""
    assert count.stdout == cli("join", *args, "--count", "-q").stdout == f"{len(local.stdout.splitlines()) - 1}\n"


def test_keep_col_and_id_col_of_parquet_inputs_are_carried_as_locally(spark, tmp_path):
    import pyarrow as pa
    import pyarrow.parquet as pq

    def table(path, keys, bodies, ns, tags):
        pq.write_table(pa.table({"key": pa.array(keys, pa.int64()), "body": bodies,
                                 "n": pa.array(ns, pa.float64()), "tag": tags}), path)
        return path

    items = table(tmp_path / "items.parquet", [7, 3, 9], ["a b c d", "x y z", "b c d e"], [1.5, None, 3.0],
                  ["p", "q,r", None])
    docs = table(tmp_path / "docs.parquet", [30, 10, 20], ["a b c d e f g", "x y q", "b c d e"], [4.0, 5.5, None],
                 ["=s", "t\tu", "v"])
    args = ["--parquet", items, "--against", docs, "--id-col", "key", "--text-col", "body", "-s", "word:1",
            "-t", "0.6", "--measure", "containment", "--keep-col", "n", "--keep-col", "tag"]
    for ext in ("csv", "jsonl", "tsv", "parquet"):
        want, got = both(tmp_path, args, ext)
        assert got == want, ext
        (tmp_path / f"local.{ext}").unlink()
        (tmp_path / f"spark.{ext}").unlink()
    csv = cli("join", *args, "--engine", "spark", "-q", "-f", "csv").stdout.splitlines()
    assert csv[0] == "left,right,similarity,overlap,left_size,right_size,left_n,right_n,left_tag,right_tag"
    assert csv[1].startswith("7,30,1.000000,4,4,7,1.5,4.0,p,'=s")  # the formula guard, as locally


def test_carried_columns_are_typed_as_locally_in_json_lines_and_parquet(spark, tmp_path):
    import datetime
    import json

    import pyarrow as pa
    import pyarrow.parquet as pq

    rows = [{"key": 7, "body": "a b c d", "n": 1.5, "tags": ["p", "é"], "dims": {"w": 1, "h": 2.5},
             "day": datetime.date(2024, 5, 1), "ok": True},
            {"key": 3, "body": "x y z", "n": None, "tags": [], "dims": None, "day": None, "ok": None},
            {"key": 9, "body": "b c d e", "n": 3.0, "tags": None, "dims": {"w": 3, "h": 0.5},
             "day": datetime.date(1999, 1, 2), "ok": False}]
    items, docs = tmp_path / "items.parquet", tmp_path / "docs.parquet"
    pq.write_table(pa.Table.from_pylist(rows), items)
    pq.write_table(pa.Table.from_pylist([{**r, "key": r["key"] * 10, "body": r["body"] + " f"} for r in rows]), docs)
    for inputs in (["--parquet", items, "--against", docs],):
        args = [*inputs, "--id-col", "key", "--text-col", "body", "-s", "word:1", "-t", "0.6", "--measure",
                "containment", *[x for k in ("n", "tags", "dims", "day", "ok") for x in ("--keep-col", k)]]
        for ext in ("jsonl", "parquet"):
            want, got = both(tmp_path, args, ext)
            assert got == want, ext
    got = pq.read_table(tmp_path / "spark.parquet")
    assert got.schema.field("right_day").type == pa.date32() and pa.types.is_struct(got.schema.field("left_dims").type)
    lines = [json.loads(x) for x in (tmp_path / "spark.jsonl").read_text().splitlines()]
    assert lines[0]["left_tags"] == ["p", "é"] and lines[0]["left_day"] == "2024-05-01" and lines[0]["left_ok"] is True
    # JSON Lines inputs: each field's JSON value, typed in Parquet as Arrow infers it.
    for name, path in (("items", items), ("docs", docs)):
        with open(tmp_path / f"{name}.jsonl", "w") as f:
            for r in pq.read_table(path).to_pylist():
                f.write(json.dumps({**r, "day": r["day"] and r["day"].isoformat()}) + "\n")
    args = ["--jsonl", tmp_path / "items.jsonl", "--against", tmp_path / "docs.jsonl", "--id-col", "key",
            "--text-col", "body", "-s", "word:1", "-t", "0.6", "--measure", "containment", "--keep-col", "n",
            "--keep-col", "dims", "--keep-col", "ok"]
    for ext in ("jsonl", "parquet", "tsv"):
        want, got = both(tmp_path, args, ext)
        assert got == want, ext
    assert json.loads((tmp_path / "spark.jsonl").read_text().splitlines()[0])["left_dims"] == {"w": 1, "h": 2.5}


# Real corpora.

def test_passwords_against_longer_passwords_are_the_local_engines_bytes(spark, tmp_path, shared_datasets):
    with open(shared_datasets / "passwords-john.txt", encoding="utf-8", errors="replace") as f:
        words = [w.strip() for w in islice(f, 3000) if w.strip() and not w.startswith("#!comment")]
    (tmp_path / "items.txt").write_text("".join(w + "\n" for w in words[:300]))
    (tmp_path / "docs.txt").write_text("".join(w + "\n" for w in words[300:] if len(w) >= 6))
    args = ["--lines", tmp_path / "items.txt", "--against", tmp_path / "docs.txt", "-s", "char:3", "-t", "3/4",
            "--measure", "containment"]
    want, got = both(tmp_path, args, "tsv")
    assert got == want and want.count(b"\n") > 20


def test_kosarak_transactions_against_later_ones_are_the_local_engines_bytes(spark, tmp_path, shared_datasets):
    with open(shared_datasets / "kosarak-sample.dat") as f:
        lines = list(islice(f, 4000))
    (tmp_path / "items.txt").write_text("".join(lines[:1000]))
    (tmp_path / "docs.txt").write_text("".join(lines[1000:]))
    args = ["--sets", tmp_path / "items.txt", "--against", tmp_path / "docs.txt", "-t", "0.8", "--measure",
            "containment"]
    want, got = both(tmp_path, args, "csv")
    assert got == want and want.count(b"\n") > 100


def test_go_packages_against_each_other_are_the_local_engines_bytes(spark, tmp_path, go_reference_src):
    # Two directory trees of source files: code:5 by default on both engines, ids the paths under each root.
    args = [go_reference_src / "bytes", "--against", go_reference_src / "strings", "-t", "0.5", "--measure",
            "containment", "--exclude", "*_test.go"]
    want, got = both(tmp_path, args, "jsonl")
    assert got == want and want.count(b"\n") >= 1


# Containment and overlap self-joins (item 2).

def token_frame(spark, many):
    rows, n = [], 0
    for c, sets in enumerate(many):
        for i, s in enumerate(sets):
            rows.append((f"{c}:{i}", n, [f"{c}:{tok}" for tok in s]))
            n += 1
    return spark.createDataFrame(rows, "id string, n long, toks array<string>")


@FEW
@given(st.lists(corpora(max_docs=14, max_size=10), min_size=3, max_size=6),
       st.sampled_from([("containment", Fraction(1, 2)), ("containment", Fraction(9, 10)), ("containment", 1),
                        ("overlap", 1), ("overlap", 2), ("overlap", 4)]))
def test_containment_and_overlap_self_joins_give_the_oracles_and_local_engines_pairs(spark, many, measure_t):
    measure, t = measure_t
    if not any(any(sets) for sets in many):  # no set at all: refused, as allpairs.join refuses it
        from allpairs.errors import EmptyCorpusError

        with pytest.raises(EmptyCorpusError, match=r"^(no set has 1 or more tokens|the corpus is empty)"):
            allpairs.spark.join(token_frame(spark, many), t, tokens_col="toks", order_col="n", measure=measure)
        return
    pairs = allpairs.spark.join(token_frame(spark, many), t, tokens_col="toks", order_col="n", measure=measure)
    got: dict[int, list] = {}
    for r in pairs.collect():
        (c, i), (c2, j) = (tuple(map(int, x.split(":"))) for x in (r.left, r.right))
        assert c == c2
        got.setdefault(c, []).append((i, j, r.overlap, r.left_size, r.right_size))
    pairs.unpersist()
    for c, sets in enumerate(many):
        want = naive.all_pairs(sets, t, measure)
        assert sorted(got.get(c, [])) == want, (c, sets)
        if any(sets):
            local = allpairs.join(sets, t, measure=measure)
            assert sorted(tuple(p) for p in local.pairs) == want


def test_cli_containment_and_overlap_self_joins_write_the_local_engines_pairs(spark, tmp_path):
    import pyarrow.parquet as pq

    lines = tmp_path / "lines.txt"
    lines.write_text("a b c d\na b c d e f\nb c d\nx y\na b c d\nx y z\n")
    for measure, t in (("containment", "0.75"), ("overlap", "2")):
        args = ["--lines", lines, "-t", t, "--measure", measure, "-s", "word:1"]
        local = cli("join", *args, "-q", "-f", "csv")
        out = tmp_path / measure
        got = cli("join", *args, "--engine", "spark", "--master", "local[2]", "-q", "-o", out)
        assert got.exit_code == 0 and got.stderr == "", got.output
        rows = [(r["left"], r["right"], r["overlap"], r["left_size"], r["right_size"])
                for r in pq.read_table(out).to_pylist()]
        want = [tuple(line.split(",")[:2]) + tuple(map(int, line.split(",")[3:6]))
                for line in local.stdout.splitlines()[1:]]
        assert rows == want and len(want) >= 4, (rows, want)
        count = cli("join", *args, "--engine", "spark", "--master", "local[2]", "-q", "--count")
        assert count.stdout == f"{len(want)}\n"
        # Clusters of containment (either direction) and overlap pairs: the local engine's table, lines too.
        local = cli("join", *args, "--clusters", "--singletons", "-q")
        got = cli("join", *args, "--clusters", "--singletons", "--engine", "spark", "--master", "local[2]", "-q",
                  "-o", tmp_path / f"{measure}-clusters")
        assert got.exit_code == 0 and got.stderr == "", got.output
        want = [line.split("\t") for line in local.stdout.splitlines()[1:]]
        table = pq.read_table(tmp_path / f"{measure}-clusters")
        assert [[str(v) for v in row.values()] for row in table.to_pylist()] == want and len(want) == 6


def test_containment_and_overlap_self_joins_leave_out_documents_under_min_shingles(spark, tmp_path):
    # "x y" and "b c" have 2 shingles, under --min-shingles 3: no pair, cluster or removal of theirs, as
    # locally (the self-join took every document before, whatever min_shingles said).
    import pyarrow.parquet as pq

    lines = tmp_path / "lines.txt"
    lines.write_text("a b c d\na b c d e f\nb c d\nx y\na b c d\nx y z\nb c\nc d e f g h\n")
    for command, extra in (("join", []), ("join", ["--clusters", "--singletons"]), ("dedup", [])):
        for measure, t in (("containment", "0.75"), ("overlap", "2")):
            args = [command, "--lines", lines, "-t", t, "--measure", measure, "-s", "word:1", "--min-shingles", "3",
                    *extra, "-q"]
            local = cli(*args, "-f", "tsv")
            out = tmp_path / f"{command}-{len(extra)}-{measure}"
            got = cli(*args, "--engine", "spark", "--master", "local[2]", "-o", out)
            assert got.exit_code == 0 and got.stderr == "", got.output
            want = [line.split("\t")[:2] for line in local.stdout.splitlines()[1:]]
            assert [[str(v) for v in list(row.values())[:2]] for row in pq.read_table(out).to_pylist()] == want, \
                (command, extra, measure)


@FEW
@given(corpora(max_docs=14, max_size=6), corpora(max_docs=14, max_size=40), st.sampled_from(MEASURES))
def test_the_broadcast_items_and_the_shuffled_plan_give_the_oracles_pairs(spark, left, right, measure_t):
    # Items up to ITEMS_BROADCAST shingles are broadcast and the documents streamed past their prefix
    # index; more go through the shuffled plan: both give every pair.
    from allpairs.engines.spark import against
    from allpairs.measures import get_measure, parse_threshold

    measure, t = measure_t
    row = get_measure(measure)
    sides = [against._sets(spark.createDataFrame([(i, [f"t{x}" for x in s]) for i, s in enumerate(sets)],
                                                 "id long, toks array<string>"),
                           id_col="id", text_col=None, tokens_col="toks", order_col=None, language_col=None,
                           spec=None, normalize=True, min_shingles=1) for sets in (left, right)]
    want = naive.rs_pairs([[f"t{x}" for x in s] for s in left], [[f"t{x}" for x in s] for s in right],
                          Fraction(t), measure)
    for limit in (None, 0):
        pairs, kept = against.rs_pairs(*sides, parse_threshold(t, row), row, broadcast_limit=limit)
        got = sorted((r.left, r.right, r.overlap, r.left_size, r.right_size) for r in pairs.collect())
        kept.unpersist()
        assert got == want, (limit, left, right, measure, t)


def test_a_corpus_or_side_without_a_set_is_refused_as_the_local_engine_refuses_it(spark, tmp_path):
    # An empty file, or lines without a shingle, on either side of --against or as the whole corpus of a
    # self-join, dedup or clusters: the local engine's one line and exit 1, nothing on stdout and no -o left
    # (Spark wrote a header alone, or an empty dataset, and exited 0).
    from allpairs.engines.spark import against
    from allpairs.errors import EmptyCorpusError
    from allpairs.measures import get_measure, parse_threshold

    items = tmp_path / "items.txt"
    items.write_text("the quick brown fox\nlorem ipsum dolor sit\n")
    docs = tmp_path / "docs.txt"
    docs.write_text("the quick brown fox jumps\nlorem ipsum\n")
    empty, blank = tmp_path / "empty.txt", tmp_path / "blank.txt"
    empty.write_text("")
    blank.write_text("\n \n\n")
    word = ["-t", "0.5", "-s", "word:1"]
    cases = [(["join", "--lines", items, "--against", empty, *word], []),
             (["join", "--lines", blank, "--against", docs, "--measure", "containment", *word], []),
             (["join", "--sets", items, "--against", blank, "-t", "0.5", "--count"], []),
             (["join", "--lines", blank, *word, "--count"], []),
             (["join", "--lines", empty, *word], ["-o", tmp_path / "pairs"]),
             (["dedup", "--lines", blank, *word], ["-o", tmp_path / "kept"]),
             (["join", "--clusters", "--lines", blank, *word], ["-o", tmp_path / "clusters"])]
    for args, output in cases:
        local = cli(*args, "-q")
        assert local.exit_code == 1 and local.stderr.startswith("allpairs: error: "), local.output
        got = cli(*args, "--engine", "spark", "-q", *output)
        assert (got.exit_code, got.stdout, got.stderr) == (1, "", local.stderr), (args, got.output)
    assert sorted(os.listdir(tmp_path)) == ["blank.txt", "docs.txt", "empty.txt", "items.txt"]
    # From Python, as allpairs.join refuses it; and either side of the shuffled plan, as of the broadcast one.
    frame = spark.createDataFrame([(1, "the quick brown fox")], "id long, text string")
    blanks = spark.createDataFrame([(1, " "), (2, None)], "id long, text string")
    with pytest.raises(EmptyCorpusError) as local:
        allpairs.join(["the quick brown fox"], 0.5, against=[" ", ""], shingle="word:1")
    with pytest.raises(EmptyCorpusError) as got:
        allpairs.spark.join(frame, 0.5, against=blanks, shingle="word:1", measure="containment")
    assert str(got.value) == str(local.value) == "against: no document has a word:1 shingle (2 read): every one is empty"
    row = get_measure("containment")
    sets = [against._sets(spark.createDataFrame(rows, "id long, toks array<string>"), id_col="id", text_col=None,
                          tokens_col="toks", order_col=None, language_col=None, spec=None, normalize=True,
                          min_shingles=1) for rows in ([(1, ["a", "b"])], [(1, [])])]
    refused = []

    def refuse(side):
        refused.append(side)
        raise EmptyCorpusError(side)

    for limit in (None, 0):
        for sides, side in ((sets, "against: "), (sets[::-1], "")):
            with pytest.raises(EmptyCorpusError):
                against.rs_pairs(*sides, parse_threshold("0.5", row), row, broadcast_limit=limit, refuse=refuse)
            assert refused.pop() == side and not refused, (limit, side)


def test_a_documents_items_are_those_of_the_oracle_in_every_kernel_path():
    # probe_items over item_index (no Spark): every (item, document) pair that reaches the threshold,
    # counted exactly, by merge and by search (documents more than 8 times an item's size).
    import random

    import numpy as np

    from allpairs._kernels.jit import use_kernels
    from allpairs.engines.spark._kernel import probe_items
    from allpairs.engines.spark.against import item_index
    from allpairs.measures import get_measure, parse_threshold

    rng = random.Random(7)

    def csr(sets):
        ptr = np.zeros(len(sets) + 1, np.int64)
        ptr[1:] = np.cumsum([len(s) for s in sets])
        return ptr, np.array([k for s in sets for k in s], np.uint64)

    for mode in ("python", "jit"):
        with use_kernels(mode):
            for _ in range(60):
                measure, t = rng.choice(MEASURES)
                row = get_measure(measure)
                t = parse_threshold(t, row)
                vocabulary = rng.choice([6, 30, 200])
                items = [sorted({rng.randrange(vocabulary) for _ in range(rng.randint(1, 12))})
                         for _ in range(rng.randint(1, 25))]
                docs = [sorted({rng.randrange(vocabulary) for _ in range(rng.randint(1, rng.choice([12, 150])))})
                        for _ in range(rng.randint(1, 25))]
                i_ptr, i_keys = csr(items)
                d_ptr, d_keys = csr(docs)
                df = np.array([sum(k in set(d) for d in docs) for k in i_keys.tolist()], np.int64)
                plen = np.array([row.probe_prefix(t, len(a), "left") for a in items], np.int64)
                index = item_index(i_ptr, i_keys, df, plen)
                d, i, o = probe_items(d_ptr, d_keys, *index, i_ptr, i_keys, row.code, t.p, t.q, len(items))
                want = sorted((a, b, len(set(items[a]) & set(docs[b]))) for a in range(len(items))
                              for b in range(len(docs))
                              if row.accept(t, len(set(items[a]) & set(docs[b])), len(items[a]), len(docs[b])))
                assert sorted(zip(i.tolist(), d.tolist(), o.tolist())) == want, (mode, measure, t, items, docs)


def test_small_inputs_with_no_master_are_joined_by_the_local_engine_with_a_note(spark, tmp_path, monkeypatch):
    # As a small self-join: with no --master (and no running session), PATH and OTHER under LOCAL_BELOW
    # bytes together are the local engine's work, its bytes, and one line on stderr says so.
    from allpairs.engines.spark import run, run_against
    from allpairs.engines.spark.session import SparkSetupError

    def no_spark(*a, **k):
        raise SparkSetupError("Spark was started")

    items = write_sets(tmp_path / "items.txt", [[1, 2, 3], [4, 5], [6]])
    docs = write_sets(tmp_path / "docs.txt", [[1, 2, 3, 7], [4, 9], [6, 1]])
    args = ["join", "--sets", items, "--against", docs, "-t", "0.5", "--measure", "containment"]
    local = cli(*args)
    monkeypatch.setattr(run, "_spark_active", lambda: False)
    monkeypatch.setattr(run_against, "get_session", no_spark)
    got = cli(*args, "--engine", "spark")
    assert got.exit_code == 0 and got.stdout == local.stdout and got.stdout.count("\n") == 4, got.output
    size = items.stat().st_size + docs.stat().st_size
    assert f"allpairs: {items} and {docs} hold {size:,} bytes (under 1,048,576) and no --master was given: joined " \
           "by the local engine, not Spark; give --master local[*] to run Spark" in got.stderr.splitlines()
    quiet = cli(*args, "--engine", "spark", "-q", "--count")
    assert quiet.exit_code == 0 and quiet.stdout == "3\n" and quiet.stderr == ""
    # A master given, or more bytes than LOCAL_BELOW: Spark.
    r = cli(*args, "--engine", "spark", "--master", "local[2]", "--count")
    assert r.exit_code == 1 and "Spark was started" in r.stderr, r.stderr
    monkeypatch.setattr(run, "LOCAL_BELOW", size)
    r = cli(*args, "--engine", "spark", "--count")
    assert r.exit_code == 1 and "Spark was started" in r.stderr, r.stderr


# Bad input on either side (item 3): one line, before any join work.

def test_bad_input_on_either_side_is_one_line_naming_the_column_and_the_fix(spark, tmp_path):
    import pyarrow as pa
    import pyarrow.parquet as pq

    def table(name, **cols):
        pq.write_table(pa.table(cols), tmp_path / name)
        return tmp_path / name

    good = table("good.parquet", id=pa.array([1, 2], pa.int64()), text=["a b", "b c"])
    strings = table("strings.parquet", id=["1", "2"], text=["a b", "b c"])
    nulls = table("nulls.parquet", id=pa.array([1, None, None], pa.int64()), text=["a b", "b c", "c d"])
    twice = table("twice.parquet", id=pa.array([5, 5], pa.int64()), text=["a b", "b c"])
    numbers = table("numbers.parquet", id=pa.array([1, 2], pa.int64()), text=pa.array([1, 2], pa.int64()))
    cases = [
        ((good, strings), 2, f"--id-col 'id' holds int64 in {good} but string in {strings}; the pairs' ids need "
                             "one type"),
        ((good, nulls), 1, f"{nulls}: --id-col 'id' holds 2 null ids; every row needs an id"),
        ((twice, good), 1, f"{twice}: --id-col 'id': id '5' is given 2 times; ids must be different"),
        ((good, numbers), 1, f"{numbers}: column 'text' holds int64, not strings"),
        ((good, tmp_path / "missing.parquet"), 2, f"{tmp_path / 'missing.parquet'}: no such file or directory"),
    ]
    for (a, b), code, message in cases:
        r = cli("join", "--engine", "spark", "--parquet", a, "--against", b, "-t", "0.5", "--count")
        assert r.exit_code == code and r.stderr.count("\n") == 1 and message in r.stderr, (message, r.stderr)
        assert r.stdout == "" and "Traceback" not in r.stderr
    # Integers of two widths are one kind of id: joined as locally.
    narrow = table("narrow.parquet", id=pa.array([4, 5], pa.int32()), text=["a b", "x y"])
    args = ["join", "--parquet", narrow, "--against", good, "-t", "0.5", "-s", "word:1", "-q"]
    r = cli(*args, "--engine", "spark")
    assert r.exit_code == 0 and r.stdout == cli(*args).stdout == "left\tright\tsimilarity\n4\t1\t1.000000\n", r.output
    r = cli("join", "--engine", "spark", "--parquet", good, "--against", good, "-t", "0.5", "--keep-col", "tag",
            "--count")
    assert r.exit_code == 1 and "no column 'tag'" in r.stderr and "--keep-col" in r.stderr, r.stderr
    r = cli("join", "--engine", "spark", "--parquet", good, "--against", good, "--id-col", "key", "-t", "0.5",
            "--count")
    assert r.exit_code == 1 and "no column 'key'" in r.stderr and "--id-col" in r.stderr, r.stderr
    # JSON Lines: repeated ids named by the file (the ids are read in Spark's tasks).
    (tmp_path / "a.jsonl").write_text('{"id": "x", "text": "a b"}\n{"id": "x", "text": "b c"}\n')
    (tmp_path / "b.jsonl").write_text('{"id": 1, "text": "a b"}\n')
    r = cli("join", "--engine", "spark", "--jsonl", tmp_path / "b.jsonl", "--against", tmp_path / "a.jsonl",
            "-t", "0.5", "--count")
    assert r.exit_code == 1 and r.stderr.count("\n") == 1 and "id 'x' is given 2 times" in r.stderr, r.stderr
    # A --keep-col field that a side's first record lacks: the local engine's line (Spark carried nulls).
    (tmp_path / "c.jsonl").write_text('{"id": "y", "text": "a b", "url": "u"}\n')
    for a, b in (("b.jsonl", "c.jsonl"), ("c.jsonl", "b.jsonl")):
        args = ["join", "--jsonl", tmp_path / a, "--against", tmp_path / b, "-t", "0.5", "--keep-col", "url", "-q"]
        local, r = cli(*args), cli(*args, "--engine", "spark")
        assert local.exit_code == 1 and "b.jsonl:1: no 'url' field (the record has id, text)" in local.stderr
        assert (r.exit_code, r.stdout, r.stderr) == (1, "", local.stderr), r.output
    # The Python API: another id type on the against side is one line naming both columns.
    from allpairs.errors import UsageError

    a = spark.createDataFrame([(1, "x")], "id long, text string")
    b = spark.createDataFrame([("1", "x")], "id string, text string")
    with pytest.raises(UsageError, match=r"id_col 'id' holds bigint but against's 'id' holds string; cast one"):
        allpairs.spark.join(a, 0.5, against=b, measure="containment")
    c = spark.createDataFrame([(1, 5)], "id long, text long")
    with pytest.raises(UsageError, match=r"^against's text_col 'text' holds bigint, not strings"):
        allpairs.spark.join(a, 0.5, against=c, measure="containment")
    d = spark.createDataFrame([(1, "x")], "key long, text string")
    with pytest.raises(UsageError, match=r"^against's id_col 'id' is not a column of the DataFrame; its columns "
                                         r"are key, text"):
        allpairs.spark.join(a, 0.5, against=d, measure="containment")
    from allpairs.errors import InputError

    e = spark.createDataFrame([(None, "x"), (2, "y")], "id long, text string")
    with pytest.raises(InputError, match=r"^against's id_col 'id' holds 1 null ids; every row needs an id"):
        allpairs.spark.join(a, 0.5, against=e, measure="containment")


# A signal during a Spark command (item 4): nothing left beside -o, one line, the JVM and its workers gone.

def _jsonl(path: Path, docs: int, seed: int) -> Path:
    """JSON Lines of random texts, a third of them near-copies (test_cli_signals' corpus)."""
    import random

    from test_cli_signals import _corpus

    _corpus(path, docs=docs, words=30, rng=random.Random(seed))
    return path


def _with_marker(marker: str, comm: str | None = None) -> list[int]:
    """Processes whose environment carries ``marker`` (and whose name is ``comm``, if given)."""
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/environ", "rb") as f:
                    if marker.encode() not in f.read():
                        continue
                if comm is not None:
                    with open(f"/proc/{entry}/comm") as f:
                        if f.read().strip() != comm:
                            continue
                found.append(int(entry))
            except OSError:
                pass
    return found


SIGNAL_CASES = [("dedup", "SIGINT"), ("clusters", "SIGTERM"), ("against", "SIGINT"), ("against", "SIGTERM")]


@pytest.mark.long_running
def test_a_signal_during_a_spark_command_leaves_no_partial_output(tmp_path):
    # The four cases run side by side (each a JVM of its own that mostly starts up: 4 x 16 s one after another),
    # each signalled once its own work is seen.
    import signal
    import subprocess
    import sys
    import time
    import uuid

    from allpairs.engines.spark.session import find_java

    if find_java() is None:
        pytest.skip("no Java runtime for Spark")
    corpus = _jsonl(tmp_path / "docs.jsonl", 600, 1)
    items = _jsonl(tmp_path / "items.jsonl", 200, 2)
    runs = []
    for k, (what, name) in enumerate(SIGNAL_CASES):
        out_dir = tmp_path / f"out{k}"
        out_dir.mkdir()
        common = ["--engine", "spark", "--master", "local[2]", "--jsonl", "-t", "0.5", "-s", "word:2", "-q"]
        args = {"dedup": ["dedup", *common, corpus, "-o", out_dir / "kept"],
                "clusters": ["join", "--clusters", *common, corpus, "-o", out_dir / "clusters"],
                "against": ["join", *common, items, "--against", corpus, "--measure", "containment",
                            "-o", out_dir / "pairs.tsv"]}[what]
        marker = uuid.uuid4().hex
        tmp = tmp_path / f"tmp{k}"  # pyspark's folder of the JVM's port and secret: none may be left
        tmp.mkdir()
        proc = subprocess.Popen([sys.executable, "-m", "allpairs", *map(str, args)],
                                env=dict(os.environ, ALLPAIRS_HARNESS=marker, SPARK_LOCAL_IP="127.0.0.1",
                                         TMPDIR=str(tmp)),
                                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                # A background job of a non-interactive shell ignores SIGINT, and so would the child.
                                preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
        runs.append(dict(what=what, signum=getattr(signal, name), out_dir=out_dir, marker=marker, proc=proc,
                         seen=None, tmp=tmp))

    def working(run) -> bool:
        """Dedup and clusters: Spark is writing the dataset (its _temporary, in the folder beside -o). The R–S
        join: its file beside -o is open and the JVM runs (the pairs are written once Spark has them)."""
        parts = [p for p in run["out_dir"].iterdir() if p.name.endswith(".allpairs.part")]
        if run["what"] != "against":
            return any((p / "_temporary").is_dir() for p in parts)
        return bool(parts) and bool(_with_marker(run["marker"], "java"))

    deadline = time.monotonic() + 300
    while time.monotonic() < deadline and any(r["seen"] is None and r["proc"].poll() is None for r in runs):
        for r in runs:
            if r["seen"] is None and r["proc"].poll() is None and working(r):
                r["seen"] = time.monotonic()
            if r["seen"] is not None and r["proc"].poll() is None and not r.get("sent") and (
                    r["what"] != "against" or time.monotonic() > r["seen"] + 2):  # the R–S join: into its jobs
                r["proc"].send_signal(r["signum"])
                r["sent"] = True
        time.sleep(0.01)
    while time.monotonic() < deadline and any(r["seen"] is not None and not r.get("sent") for r in runs):
        for r in runs:  # the R–S joins' two seconds
            if r["seen"] is not None and not r.get("sent") and time.monotonic() > r["seen"] + 2:
                r["proc"].send_signal(r["signum"])
                r["sent"] = True
        time.sleep(0.01)
    problems = []
    for r in runs:
        if not r.get("sent"):
            r["proc"].kill()
        _, stderr = r["proc"].communicate(timeout=120)
        case = f"{r['what']} {signal.Signals(r['signum']).name}"
        if not r.get("sent"):
            problems.append(f"{case}: the command's work was never seen: status {r['proc'].returncode}")
            continue
        line = {signal.SIGINT: "allpairs: interrupted", signal.SIGTERM: "allpairs: terminated"}[r["signum"]]
        if r["proc"].returncode != 128 + r["signum"] or stderr.decode().splitlines() != [line]:
            problems.append(f"{case}: {r['proc'].returncode} {stderr.decode()[-2000:]!r}")
        if list(r["out_dir"].iterdir()):
            problems.append(f"{case}: left {sorted(p.name for p in r['out_dir'].iterdir())}")
        if list(r["tmp"].iterdir()):  # a signal while the JVM starts left them (two a run, 72 bytes each)
            problems.append(f"{case}: left in TMPDIR {sorted(str(p) for p in r['tmp'].rglob('*'))}")
    for r in runs:
        survivors = _with_marker(r["marker"])
        for _ in range(600):  # the JVM and its Python workers notice their driver is gone
            if not survivors:
                break
            time.sleep(0.05)
            survivors = _with_marker(r["marker"])
        for pid in survivors:  # not left to the rest of the suite
            os.kill(pid, signal.SIGKILL)
        if survivors:
            problems.append(f"{r['what']}: {len(survivors)} processes of the run outlived it")
    assert not problems, problems
