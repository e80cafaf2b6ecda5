"""Spark's dedup, clusters and R–S joins against the oracle and the local engine.

The one SparkSession of the run is conftest.py's ``spark`` fixture. Random
corpora are decided many at a time: each corpus's tokens carry its number, so
corpora share no token, no pair and no component, and one Spark run checks a
whole list of them.
"""
from __future__ import annotations

from fractions import Fraction
from itertools import islice
from pathlib import Path

import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

import allpairs
from allpairs.errors import EmptyCorpusError
from allpairs.index import dedup as local_dedup

import naive
from strategies import corpora

pytest.importorskip("pyspark", reason="the Spark tests need the spark extra: pip install -e '.[test]'")
pytest.importorskip("pyarrow", reason="the Spark tests need the spark extra: pip install -e '.[test]'")

from allpairs.engines.spark.against import plan_against  # noqa: E402
from allpairs.engines.spark.clusters import plan_clusters  # noqa: E402
from allpairs.engines.spark.dedup import plan_dedup  # noqa: E402
from allpairs.engines.spark.shingle import choose_shingle  # noqa: E402

THRESHOLDS = [Fraction(1, 2), Fraction(7, 10), Fraction(9, 10), Fraction(1), Fraction(1, 3), Fraction(1, 10)]
# Two examples, no shrinking: each example is a few Spark jobs (tens of seconds on a loaded machine), and
# a failure prints the corpora it was given.
FEW = settings(max_examples=2, deadline=None, phases=(Phase.explicit, Phase.reuse, Phase.generate),
               suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


def token_frame(spark, many):
    """One DataFrame of several corpora: id "c:i", tokens prefixed by the corpus number, n the input order,
    and a column of the user's (``note``) that must come back untouched."""
    rows, n = [], 0
    for c, sets in enumerate(many):
        for i, s in enumerate(sets):
            rows.append((f"{c}:{i}", n, [f"{c}:{tok}" for tok in s], f"note {c}/{i}"))
            n += 1
    return spark.createDataFrame(rows, "id string, n long, toks array<string>, note string")


def no_set(spark, many) -> bool:
    """Whether no corpus of ``many`` has a set (an empty corpus, as allpairs.join and allpairs.dedup refuse
    it): then every plan refuses the frame of them all."""
    if any(any(sets) for sets in many):
        return False
    frame = token_frame(spark, many)
    for refused in (lambda: plan_dedup(frame, 0.5, tokens_col="toks", order_col="n"),
                    lambda: plan_clusters(frame, 0.5, tokens_col="toks", order_col="n", singletons=True)):
        with pytest.raises(EmptyCorpusError, match="^the corpus is empty: no document was read$|^no set has 1 or"):
            refused()
    return True


def split(id_):
    c, i = id_.split(":")
    return int(c), int(i)


@FEW
@given(st.lists(corpora(max_docs=18), min_size=4, max_size=8), st.sampled_from(THRESHOLDS),
       st.sampled_from(["jaccard", "cosine", "dice"]), st.sampled_from([3, 2_000_000]))
def test_dedup_keeps_and_removes_the_rows_the_local_rule_does(spark, many, t, measure, max_component):
    # max_component 3: every component of more than three pairs is decided in rounds, then in one task.
    if no_set(spark, many):
        return
    res = plan_dedup(token_frame(spark, many), t, tokens_col="toks", order_col="n", measure=measure,
                     all_rows=True, max_component=max_component)
    rows = res.rows.collect()
    assert [r.n for r in rows] == sorted(r.n for r in rows)  # input order
    got: dict[int, list] = {}
    for r in rows:
        c, i = split(r.id)
        assert r.note == f"note {c}/{i}" and r.toks == [f"{c}:{tok}" for tok in many[c][i]]
        got.setdefault(c, []).append((i, None if r.duplicate_of is None else split(r.duplicate_of)[1]))
    for c, sets in enumerate(many):
        assert got.get(c, []) == naive.dedup(sets, t, measure), (c, sets, t, measure)
        if not any(sets):
            continue  # the local engine refuses a corpus with no token at all
        want = local_dedup(sets, t, measure=measure)
        removed = {i: d for i, d in got.get(c, []) if d is not None}
        assert removed == dict(zip(want.removed.tolist(), want.duplicate_of.tolist()))


@FEW
@given(st.lists(corpora(max_docs=18), min_size=4, max_size=8),
       st.sampled_from([("containment", Fraction(1, 2)), ("containment", Fraction(9, 10)), ("containment", 1),
                        ("overlap", 1), ("overlap", 3)]),
       st.sampled_from([3, 2_000_000]), st.booleans())
def test_dedup_and_clusters_by_containment_and_overlap_are_the_local_engines(spark, many, measure_t, max_component,
                                                                             singletons):
    # Containment is directed: a row goes when an earlier kept row contains it (not when it contains one);
    # clusters link a pair in either direction. max_component 3: the rounds over Spark see the same edges.
    measure, t = measure_t
    if no_set(spark, many):
        return
    frame = token_frame(spark, many)
    res = plan_dedup(frame, t, tokens_col="toks", order_col="n", measure=measure, all_rows=True,
                     max_component=max_component)
    got: dict[int, list] = {}
    for r in res.rows.collect():
        c, i = split(r.id)
        got.setdefault(c, []).append((i, None if r.duplicate_of is None else split(r.duplicate_of)[1], r.similarity))
    for c, sets in enumerate(many):
        assert [(i, d) for i, d, _ in got.get(c, [])] == naive.dedup(sets, t, measure), (c, sets, t, measure)
        if not any(sets):
            continue  # the local engine refuses a corpus with no token at all
        want = local_dedup(sets, t, measure=measure)
        removed = {i: (d, x) for i, d, x in got.get(c, []) if d is not None}
        assert removed == {r: (d, float(want.rule.similarity(o, a, b))) for r, d, o, a, b in zip(
            *(v.tolist() for v in (want.removed, want.duplicate_of, want.overlap, want.removed_size, want.kept_size)))}
    flat = [[f"{c}:{tok}" for tok in s] for c, sets in enumerate(many) for s in sets]
    ids = [f"{c}:{i}" for c, sets in enumerate(many) for i in range(len(sets))]
    clusters = plan_clusters(frame, t, tokens_col="toks", order_col="n", measure=measure, singletons=singletons)
    rows = [tuple(r) for r in clusters.rows.collect()]
    if any(flat):
        local = allpairs.join(flat, t, measure=measure, clusters=True, ids=ids).clusters.to_pandas(singletons=singletons)
        assert rows == [tuple(r) for r in local.itertuples(index=False)]


def test_passwords_dedup_and_clusters_by_containment_equal_the_local_engines(spark, shared_datasets):
    # A password contained (char:3, at 3/4) in an earlier kept one is removed; one containing it is not.
    from allpairs.shingles import ShingleSpec

    with open(shared_datasets / "passwords-john.txt", encoding="utf-8", errors="replace") as f:
        words = [w.strip() for w in islice(f, 2000) if w.strip() and not w.startswith("#!comment")]
    t = Fraction(3, 4)
    ids = [str(i) for i in range(len(words))]
    df = spark.createDataFrame([(str(i), i, w) for i, w in enumerate(words)], "id string, n long, text string")
    options = dict(text_col="text", order_col="n", shingle=ShingleSpec.parse("char:3"), measure="containment")
    want = local_dedup(words, t, measure="containment", shingle="char:3")
    rows = [(int(r.id), r.duplicate_of and int(r.duplicate_of)) for r in plan_dedup(df, t, all_rows=True,
                                                                                    **options).rows.collect()]
    assert [i for i, d in rows if d is None] == want.kept.tolist()
    assert [(i, d) for i, d in rows if d is not None] == list(zip(want.removed.tolist(), want.duplicate_of.tolist()))
    assert len(want.removed) > 20
    local = allpairs.join(words, t, measure="containment", shingle="char:3", clusters=True, ids=ids).clusters
    got = plan_clusters(df, t, **options)
    assert [tuple(r) for r in got.rows.collect()] == [tuple(r) for r in local.to_pandas().itertuples(index=False)]
    assert got.largest > 2


def planted_giant(n_chain=10, n_stars=6):
    """A chain of sets each sharing most tokens with the next (one component of n_chain - 1 and more
    pairs, decided against input order: later links kept, earlier removed), beside small stars. Ten links
    at max_component 8 take four rounds (the first kept, two removed by it, the next kept once their pairs
    are dropped, two removed by that one), then the last task: each round a few Spark jobs, so no longer."""
    sets = []
    for i in range(n_chain):
        sets.append([f"g{j}" for j in range(i, i + 6)])
    for s in range(n_stars):
        core = [f"s{s}_{j}" for j in range(5)]
        sets += [core, core + [f"s{s}_x"], core[:4]]
    return sets


def test_a_planted_giant_component_is_decided_in_rounds_as_the_local_rule_decides_it(spark):
    sets = planted_giant()
    t = Fraction(1, 2)
    res = plan_dedup(token_frame(spark, [sets]), t, tokens_col="toks", order_col="n", all_rows=True,
                     max_component=8)
    assert res.decided.giant == 1 and res.decided.giant_rounds >= 2, res.decided
    assert res.decided.largest > 8
    got = [(split(r.id)[1], None if r.duplicate_of is None else split(r.duplicate_of)[1]) for r in res.rows.collect()]
    assert got == naive.dedup(sets, t)
    assert res.counts() == (sum(d is None for _, d in got), sum(d is not None for _, d in got), 0)



def test_a_document_removed_in_a_round_is_charged_to_a_partner_kept_after_that_round(spark):
    # Input order 0..4, jaccard >= 1/4, one path 0-2-3-4-1. Round 1 keeps 0 and 1 (no earlier partner);
    # round 2 removes 2 (by 0) and 4 (by 1); 3 is kept after that, when its one earlier partner (2) is
    # gone, and 4 is more similar to 3 (1/2) than to 1 (1/4): the rule charges 4 to 3. (CI caught the
    # charge made against the kept documents of the rounds only, which gave 1.)
    sets = [[1, 2], [6, 7], [2, 3], [3, 4, 5], [4, 5, 6]]
    t = Fraction(1, 4)
    res = plan_dedup(token_frame(spark, [sets]), t, tokens_col="toks", order_col="n", all_rows=True,
                     max_component=3)
    assert res.decided.giant == 1 and res.decided.giant_rounds >= 2, res.decided
    got = [(split(r.id)[1], None if r.duplicate_of is None else split(r.duplicate_of)[1]) for r in res.rows.collect()]
    assert got == naive.dedup(sets, t) == [(0, None), (1, None), (2, 0), (3, None), (4, 3)]

@FEW
@given(st.lists(corpora(max_docs=18), min_size=4, max_size=8), st.sampled_from(THRESHOLDS), st.booleans())
def test_clusters_are_numbered_as_the_local_engine_numbers_them(spark, many, t, singletons):
    flat = [[f"{c}:{tok}" for tok in s] for c, sets in enumerate(many) for s in sets]
    ids = [f"{c}:{i}" for c, sets in enumerate(many) for i in range(len(sets))]
    if no_set(spark, many):
        return
    res = plan_clusters(token_frame(spark, many), t, tokens_col="toks", order_col="n", singletons=singletons)
    got = [tuple(r) for r in res.rows.collect()]
    local = allpairs.join(flat, t, clusters=True, ids=ids).clusters.to_pandas(singletons=singletons)
    assert got == [tuple(r) for r in local.itertuples(index=False)]
    components = naive.clusters(len(flat), naive.all_pairs(flat, t))
    assert res.clusters == len(components) and res.largest == max(map(len, components), default=0)


@FEW
@given(corpora(max_docs=16, max_size=6), corpora(max_docs=16, max_size=30),
       st.sampled_from([("containment", Fraction(1, 2)), ("containment", Fraction(9, 10)), ("containment", 1),
                        ("overlap", 2), ("jaccard", Fraction(1, 3)), ("dice", Fraction(1, 2))]))
def test_an_rs_join_gives_the_oracles_pairs_for_every_measure(spark, left, right, measure_t):
    measure, t = measure_t
    frame = lambda sets: spark.createDataFrame([(i, [str(x) for x in s]) for i, s in enumerate(sets)],  # noqa: E731
                                               "id long, toks array<string>")
    if not any(left) or not any(right):  # a side without a set: refused as allpairs.join refuses it
        with pytest.raises(EmptyCorpusError, match="^the corpus is empty|^no set" if not any(left) else "^against: "):
            plan_against(frame(left), frame(right), t, measure=measure, id_col="id", text_col=None,
                         tokens_col="toks", spec=None)
        return
    pairs, _, _ = plan_against(frame(left), frame(right), t, measure=measure, id_col="id", text_col=None,
                               tokens_col="toks", spec=None)
    got = sorted((r.left, r.right, r.overlap, r.left_size, r.right_size) for r in pairs.collect())
    assert got == naive.rs_pairs(left, right, t, measure)


def test_an_against_frame_with_ids_of_another_type_is_one_line_before_any_job(spark):
    from allpairs.errors import UsageError

    a = spark.createDataFrame([(1, ["x"])], "id long, toks array<string>")
    b = spark.createDataFrame([("1", ["x"])], "id string, toks array<string>")
    with pytest.raises(UsageError, match=r"id_col 'id' holds bigint but against's 'id' holds string; cast one"):
        plan_against(a, b, 0.5, measure="containment", id_col="id", text_col=None, tokens_col="toks", spec=None)


def test_the_default_shingle_is_the_local_engines_choice_on_the_same_texts(spark):
    from allpairs.shingles.keys import shingle_for_texts

    short = [f"pw{i}" for i in range(1500)]
    titles = [f"a title of some {i} words" for i in range(1200)]
    for texts in (short, titles, short[:10] + titles):
        df = spark.createDataFrame([(i, t) for i, t in enumerate(texts)], "n long, text string")
        assert choose_shingle([(df, "text", "n")]) == shingle_for_texts(texts)


# Real corpora: samples small enough for a few Spark jobs each.

def kosarak_sets(shared_datasets, n=1500):
    with open(shared_datasets / "kosarak-sample.dat") as f:
        return [line.split() for line in islice(f, n)]


def test_kosarak_dedup_and_clusters_equal_the_local_engines(spark, shared_datasets):
    sets = kosarak_sets(shared_datasets)
    t = Fraction(1, 2)
    df = spark.createDataFrame([(str(i + 1), i, s) for i, s in enumerate(sets)], "id string, n long, toks array<string>")
    want = local_dedup(sets, t)
    got = plan_dedup(df, t, tokens_col="toks", order_col="n", all_rows=True)
    rows = [(int(r.id) - 1, None if r.duplicate_of is None else int(r.duplicate_of) - 1) for r in got.rows.collect()]
    assert [i for i, d in rows if d is None] == want.kept.tolist()
    assert [(i, d) for i, d in rows if d is not None] == list(zip(want.removed.tolist(), want.duplicate_of.tolist()))
    local = allpairs.join(sets, t, clusters=True, ids=[str(i + 1) for i in range(len(sets))]).clusters.to_pandas()
    clusters = plan_clusters(df, t, tokens_col="toks", order_col="n")
    assert [tuple(r) for r in clusters.rows.collect()] == [tuple(r) for r in local.itertuples(index=False)]
    assert clusters.largest > 2


def test_passwords_in_longer_passwords_are_the_local_engines_containment_pairs(spark, shared_datasets):
    # Short items contained in longer ones (char:3): the decontamination shape on real text.
    from allpairs.shingles import ShingleSpec

    with open(shared_datasets / "passwords-john.txt", encoding="utf-8", errors="replace") as f:
        words = [w.strip() for w in islice(f, 3000) if w.strip() and not w.startswith("#!comment")]
    items, docs = words[:300], [w for w in words[300:] if len(w) >= 6]
    t = Fraction(3, 4)
    res = allpairs.join(items, t, against=docs, measure="containment", shingle="char:3")
    want = sorted((items[p.left], docs[p.right], p.overlap) for p in res.pairs)
    frame = lambda ws, tag: spark.createDataFrame([(f"{tag}{i}", w) for i, w in enumerate(ws)],  # noqa: E731
                                                  "id string, text string")
    pairs, _, _ = plan_against(frame(items, "i"), frame(docs, "d"), t, measure="containment", id_col="id",
                               text_col="text", tokens_col=None, spec=ShingleSpec.parse("char:3"))
    got = sorted((items[int(r.left[1:])], docs[int(r.right[1:])], r.overlap) for r in pairs.collect())
    assert got == want and len(want) > 20


def test_go_tree_sample_dedup_equals_the_local_engines(spark, go_reference_src):
    # The six directories of the reference experiment, code:5 as locally.
    from allpairs.corpus import read_corpus
    from allpairs.shingles import ShingleSpec

    six = ["bytes", "strings", "math/rand", "go/types", "cmd/compile/internal/types2"]
    corpus = read_corpus(str(go_reference_src), "directory", include=[f"{d}/*.go" for d in six],
                         exclude=["*_test.go", "testdata/**"], min_bytes=2048)
    texts = list(corpus.texts)
    langs = list(corpus.languages)
    t = Fraction(7, 10)
    want = local_dedup(corpus, t, shingle="code:5")
    df = spark.createDataFrame([(str(i), n, x, lang) for n, (i, x, lang) in enumerate(zip(corpus.ids, texts, langs))],
                               "id string, n long, text string, language string")
    got = plan_dedup(df, t, text_col="text", language_col="language", order_col="n", shingle=ShingleSpec("code", 5),
                     all_rows=True)
    ids = list(corpus.ids)
    rows = [(r.id, r.duplicate_of) for r in got.rows.collect()]
    assert [i for i, d in rows if d is None] == [ids[k] for k in want.kept.tolist()]
    assert [(i, d) for i, d in rows if d is not None] == [(ids[a], ids[b]) for a, b in
                                                          zip(want.removed.tolist(), want.duplicate_of.tolist())]
    assert len(want.removed) > 10


# The public names and the command line.

def lines_file(tmp_path, n=300, seed=1):
    import random

    rng = random.Random(seed)
    base = ["the quick brown fox jumps", "lorem ipsum dolor sit amet", "allpairs finds every pair", "spark runs tasks"]
    path = tmp_path / "lines.txt"
    with open(path, "w") as f:
        for _ in range(n):
            words = rng.choice(base).split()
            if rng.random() < 0.5:
                words[rng.randrange(len(words))] = f"w{rng.randrange(50)}"
            f.write(" ".join(words + [f"x{rng.randrange(4)}"]) + "\n")
    return path


def test_dedup_engine_spark_writes_the_local_engines_kept_and_removed_lines(spark, tmp_path):
    import pyarrow.parquet as pq
    from typer.testing import CliRunner

    from allpairs.cli import app

    path = lines_file(tmp_path)
    with open(path, "a") as f:
        f.write("-- !!\n")  # a line with no word: kept by both engines, and said so by both
    run = lambda *a: CliRunner().invoke(app, [str(x) for x in a], prog_name="allpairs")  # noqa: E731
    local = run("dedup", "-t", "0.6", "--lines", path)
    local_removed = run("dedup", "-t", "0.6", "--lines", path, "--removed", "-q")
    # No -s: the local engine's choice from the lines' lengths (word:1 here), on both engines.
    kept = run("dedup", "-t", "0.6", "--lines", path, "--engine", "spark", "-o", tmp_path / "kept")
    removed = run("dedup", "-t", "0.6", "--lines", path, "--engine", "spark", "--removed", "-q",
                  "-o", tmp_path / "removed")
    assert kept.exit_code == 0 and removed.exit_code == 0, (kept.output, removed.output)
    assert "word:1 shingles" in kept.stderr and "large-star/small-star round" in kept.stderr
    note = "allpairs: 1 document with no word:1 shingle kept as it is: nothing reaches a threshold with an empty set"
    assert note in local.stderr.splitlines() and note in kept.stderr.splitlines(), (local.stderr, kept.stderr)
    want = [line.split("\t")[0] for line in local.stdout.splitlines()[1:]]
    table = pq.read_table(tmp_path / "kept")
    assert table.column("id").to_pylist() == want
    assert table.column_names == ["id", "text"] and table.column("text").to_pylist() == [path.read_text().splitlines()[int(i) - 1] for i in want]
    want_removed = [line.split("\t")[:2] for line in local_removed.stdout.splitlines()[1:]]
    got = pq.read_table(tmp_path / "removed")
    assert [list(r) for r in zip(got.column("removed").to_pylist(), got.column("kept").to_pylist())] == want_removed
    # The local engine's table, as its Parquet output has it: pair columns, then each line (removed_text, kept_text).
    assert run("dedup", "-t", "0.6", "--lines", path, "--removed", "-q", "-o", tmp_path / "local.parquet").exit_code == 0
    assert got.to_pylist() == pq.read_table(tmp_path / "local.parquet").to_pylist() and len(want_removed) > 5
    assert not list(tmp_path.glob(".*part*"))  # nothing left beside the datasets


def test_dedup_engine_spark_writes_the_kept_json_lines_records_whole_as_locally(spark, tmp_path):
    # The local dedup writes every field of a kept record (typed as in its Parquet output), the id under its
    # own name; Spark wrote its frame's id, text and line number instead.
    import json

    import pyarrow.parquet as pq
    from typer.testing import CliRunner

    from allpairs.cli import app

    records = [{"key": "a", "body": "the quick brown fox", "n": 1, "tags": ["x"], "ok": True},
               {"key": "b", "body": "the quick brown fox!", "n": 2, "tags": [], "ok": None, "late": 2.5},
               {"key": "c", "body": "lorem ipsum", "n": None, "tags": ["y", "z"], "ok": False},
               {"key": "d", "body": "", "n": 4, "tags": None, "ok": True}]
    path = tmp_path / "docs.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    run = lambda *a: CliRunner().invoke(app, [str(x) for x in a], prog_name="allpairs")  # noqa: E731
    args = ["dedup", "-q", "-t", "0.6", "-s", "word:1", "--jsonl", path, "--id-col", "key", "--text-col", "body"]
    assert run(*args, "-o", tmp_path / "local.parquet").exit_code == 0
    got = run(*args, "--engine", "spark", "-o", tmp_path / "kept")
    assert got.exit_code == 0, got.output
    want, table = pq.read_table(tmp_path / "local.parquet"), pq.read_table(tmp_path / "kept")
    assert table.schema.remove_metadata() == want.schema.remove_metadata()
    assert table.to_pylist() == want.to_pylist() and table.column("key").to_pylist() == ["a", "c", "d"]
    # --removed: the local engine's table of the removed record and its kept twin, every field typed as locally.
    assert run(*args, "--removed", "--keep-all", "-o", tmp_path / "local-removed.parquet").exit_code == 0
    got = run(*args, "--removed", "--keep-all", "--engine", "spark", "-o", tmp_path / "removed")
    assert got.exit_code == 0, got.output
    want, table = pq.read_table(tmp_path / "local-removed.parquet"), pq.read_table(tmp_path / "removed")
    assert table.to_pylist() == want.to_pylist() and [r["removed_late"] for r in table.to_pylist()] == [2.5]
    assert [(f.name, f.type) for f in table.schema][6:] == [(f.name, f.type) for f in want.schema][6:]


def test_dedup_engine_spark_writes_the_kept_ids_of_sets_as_locally(spark, tmp_path):
    # The local dedup of --sets writes the kept line numbers alone (a set's tokens are not carried, as in
    # its joins); Spark wrote each set's line beside.
    import pyarrow.parquet as pq
    from typer.testing import CliRunner

    from allpairs.cli import app

    path = tmp_path / "sets.txt"
    path.write_text("a b c\na b c\nb c d e\n\nx y\nx y z\n")
    run = lambda *a: CliRunner().invoke(app, [str(x) for x in a], prog_name="allpairs")  # noqa: E731
    args = ["dedup", "-q", "-t", "0.5", "--sets", path]
    assert run(*args, "-o", tmp_path / "local.parquet").exit_code == 0
    got = run(*args, "--engine", "spark", "-o", tmp_path / "kept")
    assert got.exit_code == 0, got.output
    want, table = pq.read_table(tmp_path / "local.parquet"), pq.read_table(tmp_path / "kept")
    assert table.column_names == want.column_names == ["id"]
    assert table.column("id").to_pylist() == want.column("id").to_pylist() == ["1", "3", "4", "5"]


def test_the_public_names_give_rs_containment_pairs_and_a_join_writes_one_file(spark, tmp_path):
    import allpairs.spark
    from allpairs.errors import UsageError

    items = spark.createDataFrame([(i, t) for i, t in enumerate(["a b c d", "x y z", "b c d e"])], "id long, text string")
    docs = spark.createDataFrame([(10 + i, t) for i, t in enumerate(["a b c d e f g", "x y q", "b c d e"])],
                                 "id long, text string")
    hits = allpairs.spark.join(items, 0.75, against=docs, measure="containment", shingle="word:1")
    assert sorted((r.left, r.right, r.overlap) for r in hits.collect()) == [(0, 10, 4), (0, 12, 3), (2, 10, 4), (2, 12, 4)]
    with pytest.raises(UsageError, match="max_group does not apply to an R–S join"):
        allpairs.spark.join(items, 0.75, against=docs, measure="containment", max_group=3)
    # 2,016 pairs of 64 identical rows: one Parquet file, not one per task (issue 33, item 11).
    same = spark.createDataFrame([(i, "p q r s") for i in range(64)], "id long, text string")
    pairs = allpairs.spark.join(same, 0.5, shingle="word:1")
    pairs.write.parquet(str(tmp_path / "pairs"))
    assert len(list((tmp_path / "pairs").glob("part-*"))) <= 2  # rebalanced by size: not one file per shuffle partition (318 before); at most one per core here
    assert pairs.count() == 64 * 63 // 2
    pairs.unpersist()


def test_join_clusters_engine_spark_writes_the_local_engines_cluster_table(spark, tmp_path):
    import pyarrow.parquet as pq
    from typer.testing import CliRunner

    from allpairs.cli import app

    path = lines_file(tmp_path, n=150, seed=3)
    run = lambda *a: CliRunner().invoke(app, [str(x) for x in a], prog_name="allpairs")  # noqa: E731
    local = run("join", "-t", "0.7", "--lines", path, "--clusters", "--singletons", "-q")
    got = run("join", "-t", "0.7", "--lines", path, "--clusters", "--singletons", "--engine", "spark",
              "-o", tmp_path / "clusters")
    assert got.exit_code == 0, got.output
    assert "large-star/small-star round" in got.stderr
    table = pq.read_table(tmp_path / "clusters")
    want = [line.split("\t") for line in local.stdout.splitlines()[1:]]
    assert table.column_names == local.stdout.split("\n")[0].split("\t") == ["id", "cluster", "cluster_size", "text"]
    assert [[str(v) for v in row.values()] for row in table.to_pylist()] == want


def test_columns_named_with_dots_spaces_and_backticks_are_read_and_given_back_as_they_are(spark):
    # Spark's parser reads "doc.id" as a field of a struct "doc" and refuses a lone backtick: each column the
    # user names is quoted (before, every call below raised AnalysisException: `doc`.`id` cannot be resolved).
    import allpairs.spark

    texts = ["a b c d", "a b c e", "x y z", "a b c d", None]
    df = spark.createDataFrame([(f"d{i}", t, 10 - i, i * 7) for i, t in enumerate(texts)],
                               "`doc.id` string, `the text` string, `seen.at` long, `a``b` int")
    names = dict(id_col="doc.id", text_col="the text", shingle="word:1")
    pairs = allpairs.spark.join(df, 0.5, keep=["a`b"], order_col="seen.at", **names)
    assert sorted((r.left, r.right, r.overlap, r["left_a`b"]) for r in pairs.collect()) == [
        ("d1", "d0", 3, 7), ("d3", "d0", 4, 21), ("d3", "d1", 3, 21)]  # left first by `seen.at`: d4 first
    kept = allpairs.spark.dedup(df, 0.5, **names)
    assert kept.schema == df.schema and [r["doc.id"] for r in kept.collect()] == ["d0", "d2", "d4"]
    got = allpairs.spark.clusters(df, 0.5, singletons=True, **names).collect()
    assert [tuple(r) for r in got] == [("d0", 1, 3), ("d1", 1, 3), ("d3", 1, 3), ("d2", 2, 1), ("d4", 3, 1)]
    hits = allpairs.spark.join(df, 0.8, against=df, measure="containment", keep=["a`b"], **names)
    assert sorted((r.left, r.right) for r in hits.collect() if r.left != r.right) == [("d0", "d3"), ("d3", "d0")]


def test_all_rows_over_a_frame_with_a_similarity_column_is_refused_before_any_job(spark):
    # all_rows adds duplicate_of and similarity: a frame of the user's with either gave a frame of two columns of
    # one name, which Spark refuses to write (COLUMN_ALREADY_EXISTS) only after the whole dedup had run.
    import allpairs.spark
    from allpairs.errors import UsageError

    df = spark.createDataFrame([("a", "x y z", 0.3), ("b", "x y z", 0.9)], "id string, text string, similarity double")
    with pytest.raises(UsageError, match="input has a column 'similarity', which all_rows= adds"):
        allpairs.spark.dedup(df, 0.8, shingle="word:1", all_rows=True)
    assert [r.id for r in allpairs.spark.dedup(df, 0.8, shingle="word:1").collect()] == ["a"]  # without all_rows: kept as is


def test_a_parquet_dataset_of_two_files_is_read_in_the_local_engines_order(spark, tmp_path):
    # Spark packs a dataset's files into tasks largest first: part-1 (the larger) was read first, so dedup
    # --engine spark kept b7 and removed a0, where the local engine (files by path) keeps a0.
    import pyarrow as pa
    import pyarrow.parquet as pq
    from typer.testing import CliRunner

    from allpairs.cli import app

    data = tmp_path / "crawl"
    data.mkdir()
    pq.write_table(pa.table({"id": ["a0", "a1"], "text": ["the same words here", "alpha beta"], "n": [100, 101]}), data / "part-0.parquet")
    texts = [f"only{i} its{i} own{i} words{i}" for i in range(400)]
    texts[7] = "the same words here"
    pq.write_table(pa.table({"id": [f"b{i}" for i in range(400)], "text": texts, "n": list(range(400))}),
                   data / "part-1.parquet")
    run = lambda *a: CliRunner().invoke(app, [str(x) for x in a], prog_name="allpairs")  # noqa: E731
    flags = ["-t", "0.8", "-s", "word:1", "--parquet", data, "--engine", "spark", "--master", "local[2]", "-q"]
    removed = run("dedup", *flags, "--removed", "--keep-all", "-o", tmp_path / "removed")
    pairs = run("join", *flags, "--keep-all", "-o", tmp_path / "pairs")
    assert removed.exit_code == 0 and pairs.exit_code == 0, (removed.output, pairs.output)
    got = pq.read_table(tmp_path / "removed")
    # The local engine's --removed table, every column carried as --keep-all carries it (Spark: overlaps int32).
    assert got.to_pylist() == [{"removed": "b7", "kept": "a0", "similarity": 1.0, "overlap": 4, "removed_size": 4,
                                "kept_size": 4, "removed_text": "the same words here",
                                "kept_text": "the same words here", "removed_n": 7, "kept_n": 100}]
    local = run("dedup", *flags[:-5], "-q", "--removed", "--keep-all", "-o", tmp_path / "local.parquet")
    assert local.exit_code == 0, local.output
    assert pq.read_table(tmp_path / "local.parquet").to_pylist() == got.to_pylist()
    assert pq.read_table(tmp_path / "pairs").select(["left", "right", "left_n", "right_n"]).to_pylist() == [
        {"left": "a0", "right": "b7", "left_n": 100, "right_n": 7}]


def test_an_order_column_with_nulls_or_timestamps_orders_every_plan_alike(spark):
    # Spark sorts a null order key first; the one task's comparison put it neither before nor after, and
    # dedup's Arrow sort put it last: the pairs' left documents depended on the plan, and dedup kept d5 and d2
    # together (J = 4/5). A timestamp order column raised AssertionError (Arrow had no time zone for it).
    import datetime

    import allpairs.spark

    texts = ["a b c d", "a b c e", "a b c d", "x y z", "x y z w", "a b c d e", None, "q r s"]
    days = [3, None, 1, 3, 9, None, 5, 2]
    df = spark.createDataFrame([(f"d{i}", t, d, d and datetime.datetime(2026, 1, d)) for i, (t, d) in
                                enumerate(zip(texts, days))], "id string, text string, n long, at timestamp")
    one, spread = ({(r.left, r.right) for r in allpairs.spark.join(df, 0.5, shingle="word:1", order_col="n",
                                                                   one_task=plan).collect()} for plan in (True, False))
    assert one == spread and ("d1", "d0") in one and ("d1", "d5") in one  # nulls first, then by row
    # Nulls first: d1 kept, d5 (4/5 with d1) and d2 (3/5) removed; d3 at day 3 is kept before d4 at day 9.
    assert [r.id for r in allpairs.spark.dedup(df, 0.5, shingle="word:1", order_col="at").collect()] == \
        ["d1", "d7", "d3", "d6"]


@pytest.mark.parametrize("flags", [["--keep-all"], ["--id-col", "key"], ["--text-col", "body"], ["--count"],
                                   ["--count", "--removed"]])
def test_dedup_engine_spark_refuses_the_input_options_the_local_engine_refuses(tmp_path, flags):
    # --keep-all of --lines did nothing on Spark, silently, where the local engine refuses it (exit 2); so did
    # --count's -o and --removed.
    from typer.testing import CliRunner

    from allpairs.cli import app

    path = tmp_path / "lines.txt"
    path.write_text("a b\na b c\n")
    runs = [CliRunner().invoke(app, [str(x) for x in ["dedup", "-t", "0.5", "--lines", path, *flags, *engine,
                                                        "-o", tmp_path / "out"]], prog_name="allpairs")
            for engine in ([], ["--engine", "spark"])]
    assert [r.exit_code for r in runs] == [2, 2] and runs[0].stderr == runs[1].stderr, [r.stderr for r in runs]
    why = "with --count" if "--count" in flags else "without --jsonl, --csv, --tsv or --parquet"
    assert why in runs[1].stderr and not (tmp_path / "out").exists()


def test_dedup_engine_spark_writes_a_utc_timestamp_column_as_the_input_had_it(spark, tmp_path):
    # The kept rows (and the removed ones beside their twins) went out as Spark's INT96, read back as
    # timestamp[ns] without the time zone, where the local engine and Spark's join keep timestamp[us, tz=UTC].
    import datetime

    import pyarrow as pa
    import pyarrow.parquet as pq
    from typer.testing import CliRunner

    from allpairs.cli import app

    utc = datetime.timezone.utc
    path = tmp_path / "t.parquet"
    pq.write_table(pa.table({"id": ["a", "b", "c"], "text": ["x y z", "x y z", "p q"],
                             "at": pa.array([datetime.datetime(2026, 1, d, 12, tzinfo=utc) for d in (1, 2, 3)],
                                            pa.timestamp("us", tz="UTC"))}), path)
    run = lambda *a: CliRunner().invoke(app, [str(x) for x in a], prog_name="allpairs")  # noqa: E731
    for flags in ([], ["--removed", "--keep-all"]):
        args = ["dedup", "-q", "-t", "0.5", "-s", "word:1", "--parquet", path, *flags]
        name = "removed" if flags else "kept"
        assert run(*args, "-o", tmp_path / f"{name}.parquet").exit_code == 0
        got = run(*args, "--engine", "spark", "--master", "local[2]", "-o", tmp_path / name)
        assert got.exit_code == 0, got.output
        want, table = pq.read_table(tmp_path / f"{name}.parquet"), pq.read_table(tmp_path / name)
        assert table.to_pylist() == want.to_pylist()
        stamps = [f for f in table.schema if "at" in f.name.split("_")]
        assert stamps and all(f.type == pa.timestamp("us", tz="UTC") for f in stamps), table.schema
