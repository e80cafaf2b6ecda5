"""The Spark engine (allpairs.spark, ``join --engine spark``) against the oracle and the local engine.

One SparkSession on a local[2] master (the `spark` fixture of conftest.py) serves every test here (starting one
costs 10–30 s). Random corpora are joined many at a time: each corpus's
tokens carry its number, so corpora never share a token and never pair, and
one Spark job checks a whole list of them against the oracle.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
from contextlib import contextmanager
from fractions import Fraction
from pathlib import Path
from random import Random

import numpy as np
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

import allpairs
from allpairs.cli import app

from naive import all_pairs
from strategies import corpora

pytest.importorskip("pyspark", reason="the Spark tests need the spark extra: pip install -e '.[test]'")
pytest.importorskip("pyarrow", reason="the Spark tests need the spark extra: pip install -e '.[test]'")

from allpairs.engines.spark import get_session, plan  # noqa: E402
from allpairs.engines.spark.exact import routes  # noqa: E402
from allpairs.engines.spark.session import LOCAL_JVM_OPTIONS, SparkSetupError, find_java  # noqa: E402
import allpairs.spark  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
TINY = REPO / "datasets" / "tiny" / "corpus"
GOLDEN = REPO / "datasets" / "tiny" / "golden-word1-t0.5.tsv"
SIX = ["bytes", "strings", "math/rand", "math/rand/v2", "go/types", "cmd/compile/internal/types2"]
TREE_OPTIONS = ["--exclude", "*_test.go", "--exclude", "testdata/**", "--min-bytes", "2048", "-s", "code:5"]


def cli(*args):
    return CliRunner().invoke(app, [str(a) for a in args], prog_name="allpairs")


def token_frame(spark, many):
    """One DataFrame of several corpora: id "c:i", tokens prefixed by the corpus number, n the input order."""
    rows, n = [], 0
    for c, sets in enumerate(many):
        for i, s in enumerate(sets):
            rows.append((f"{c}:{i}", n, [tok if str(tok).startswith(f"{c}:") else f"{c}:{tok}" for tok in s]))
            n += 1
    return spark.createDataFrame(rows, "id string, n long, toks array<string>")


def by_corpus(rows):
    """Spark pair rows of token_frame as {corpus: sorted oracle tuples (i, j, overlap, |s_i|, |s_j|)}."""
    out = {}
    for r in rows:
        (c, i), (c2, j) = (tuple(map(int, x.split(":"))) for x in (r.left, r.right))
        assert c == c2 and i < j
        out.setdefault(c, []).append((i, j, r.overlap, r.left_size, r.right_size))
    return {c: sorted(v) for c, v in out.items()}


THRESHOLDS = [Fraction(1, 2), Fraction(7, 10), Fraction(9, 10), Fraction(1), Fraction(1, 3), Fraction(28, 100),
              Fraction(1, 10)]


@settings(max_examples=2, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(st.lists(corpora(max_docs=20), min_size=6, max_size=12), st.data())
def test_exact_join_equals_the_oracle_on_random_corpora(spark, many, data):
    hits = sorted({Fraction(len(set(a) & set(b)), len(set(a) | set(b)))
                   for sets in many for k, a in enumerate(sets) for b in sets[k + 1:] if set(a) & set(b)})
    t = data.draw(st.sampled_from(THRESHOLDS + hits[:20]), label="threshold")
    # Small groups split (max_group 3) and the rank table joined instead of broadcast (limit 0), sometimes.
    max_group = data.draw(st.sampled_from([3, 10_000]), label="max_group")
    broadcast_limit = data.draw(st.sampled_from([0, 4_000_000]), label="broadcast_limit")
    # Prefix tokens dealt into one group (every set in one task), a few, or the default number.
    token_groups = data.draw(st.sampled_from([1, 3, None]), label="token_groups")
    df = token_frame(spark, many)
    if refused_without_a_set(many, lambda: allpairs.spark.join(df, t, tokens_col="toks", order_col="n")):
        return
    # Both plans: the distributed one (token groups, hot splits) and every set in one task.
    rows = allpairs.spark.join(df, t, tokens_col="toks", order_col="n", max_group=max_group,
                               broadcast_limit=broadcast_limit, token_groups=token_groups, one_task=False).collect()
    got = by_corpus(rows)
    for c, sets in enumerate(many):
        assert got.get(c, []) == all_pairs(sets, t), (c, sets, t)
    assert by_corpus(allpairs.spark.join(df, t, tokens_col="toks", order_col="n", one_task=True).collect()) == got


def refused_without_a_set(many, join) -> bool:
    """Whether no corpus of ``many`` has a set; then ``join()`` must refuse them, as allpairs.join refuses an
    empty corpus."""
    if any(any(sets) for sets in many):
        return False
    from allpairs.errors import EmptyCorpusError

    with pytest.raises(EmptyCorpusError, match="^the corpus is empty: no document was read$|^no set"):
        join()
    return True


def hot_corpus():
    """Sets sharing one token 'hot' that is in the prefix of every one of them: 'hot' is rarer than the
    common tokens around it (filler sets make those more frequent), and 140 of its sets have size 7."""
    rng = np.random.default_rng(5)
    common = [f"m{k}" for k in range(10)]
    sets = []
    for i in range(420):
        if i < 140:
            toks = ["hot", *rng.choice(common, 6, replace=False)]
        elif i < 420 - 100 or i % 3:
            toks = ["hot", *[m for m in common if rng.random() < 0.6], *[f"u{i}_{k}" for k in range(i % 3)]]
        sets.append(toks)
    sets += [[m for m in common if rng.random() < 0.9] for _ in range(500)]
    return sets


@contextmanager
def planned_join(spark, sets, t, **options):
    """The planned Spark join of one corpus of token sets (the distributed plan unless ``one_task`` says); its
    cached sets are freed afterwards."""
    planned = plan(token_frame(spark, [sets]), t, tokens_col="toks", order_col="n", **{"one_task": False, **options})
    try:
        yield planned
    finally:
        planned.unpersist()


def test_a_planted_hot_token_splits_its_group_by_size_and_stays_exact(spark):
    sets = hot_corpus()
    t, max_group = Fraction(1, 2), 60
    with planned_join(spark, sets, t, max_group=max_group) as planned:
        got = by_corpus(planned.pairs.collect()).get(0, [])
        assert got == all_pairs(sets, t)
        assert got == sorted(tuple(p) for p in allpairs.join(sets, t).pairs)
        # The hot token's group is split: into several size ranges, one single size (7) into chunks by id.
        assert planned.plans, "no group was split"
        biggest = max(planned.plans.values(), key=lambda p: p.chunks)
        assert biggest.chunks >= 6 and len(biggest.lo) >= 3
        assert any(m > 1 and lo == hi == 7 for lo, hi, m in zip(biggest.lo, biggest.hi, biggest.m))
        # No task of the hot token holds more than two chunks' worth of sets.
        from pyspark.sql import functions as F

        per_task = routed_rows(planned.ranked, planned.threshold, planned.plans, planned.groups) \
            .where("g >= 0").groupBy("g", "c1", "c2").count()
        largest, tasks = per_task.agg(F.max("count"), F.count(F.lit(1))).collect()[0]
        assert largest <= 2 * max_group and tasks > len(planned.plans) * 2


def routed_rows(ranked, t, plans, groups):
    """The routed rows (ROUTED_SCHEMA) of :func:`routes`, unpacked: a row per set and task it goes to."""
    from allpairs.engines.spark.arrow import struct, unpacked
    from allpairs.engines.spark.exact import ROUTED_ARROW, ROUTED_SCHEMA

    return routes(ranked, t, plans, groups).mapInArrow(lambda b: unpacked(b, ROUTED_ARROW), struct(ROUTED_SCHEMA))


def test_the_hot_tokens_size_histograms_take_one_spark_job(spark):
    # They were counted by an aggregation, whose shuffle adaptive execution ran as a job of its own: two
    # jobs. Counted per batch and summed on the driver, they are one job of one stage, and the same plans.
    from allpairs.engines.spark.exact import plan_hot_groups

    t, max_group = Fraction(1, 2), 60
    with planned_join(spark, hot_corpus(), t, max_group=max_group) as planned:
        assert planned.plans
        with jobs_run(spark, "hot histograms") as jobs:
            again = plan_hot_groups(planned.ranked, planned.threshold, planned.order.hot, max_group)
        assert len(jobs) == 1, jobs

        def shape(plans):
            return {g: (p.lo.tolist(), p.hi.tolist(), p.m.tolist(), [m.tolist() for m in p.meets])
                    for g, p in plans.items()}

        assert shape(again) == shape(planned.plans)


def long_set_corpus():
    """A set of 1,200 tokens each shared with one of 120 small sets, so that its whole probing prefix
    (601 tokens at t = 1/2) is shared tokens; and a near-copy of it (J = 1140/1201)."""
    long = [f"L{k}" for k in range(1200)]
    small = [[f"L{k}" for k in range(10 * i, 10 * i + 10)] + [f"s{i}"] for i in range(120)]
    return [long, long[:-60] + ["x"], *small]


def test_a_long_set_with_a_long_shared_prefix_is_copied_once_per_token_group(spark):
    # The whole Go tree once crashed a Python worker (killed for memory): each set went whole to
    # the task of every shared token of its prefix, 21,732 copies of a 50,579-shingle Unicode table.
    from pyspark.sql import functions as F

    sets = long_set_corpus()
    t, groups = Fraction(1, 2), 4
    with planned_join(spark, sets, t, token_groups=groups) as planned:
        got = by_corpus(planned.pairs.collect()).get(0, [])
        assert got == all_pairs(sets, t) and got[0][:2] == (0, 1)
        copies = routed_rows(planned.ranked, planned.threshold, planned.plans, groups).groupBy("set").count()
        assert copies.agg(F.max("count")).collect()[0][0] == groups  # not 601


def copies_corpus():
    """Sets with many identical copies (300 of one, copies of sets whose every token is shared, and of short
    ones), near-copies of them, and sets with tokens of their own, shuffled."""
    rng = Random(7)
    base = [[f"w{k}" for k in range(10)], ["w0", "w1", "w2", "w3", "w4", "w5", "w6", "w7", "w8", "x"],
            ["a", "b"], ["a", "b", "c"], ["b", "c"], ["w3", "w5", "a", "z"]]
    sets = [base[0]] * 300 + [base[1]] * 40 + [base[2]] * 25 + [base[3]] * 7 + [base[4]] * 3 + [base[5]] * 2
    sets += [rng.sample(base[k % 4], len(base[k % 4]) - 1) + [f"u{k}"] for k in range(60)]
    sets += [[f"v{k}", f"v{k + 1}", "w9"] for k in range(40)]
    rng.shuffle(sets)
    return sets


@pytest.mark.parametrize("groups", [1, 3, None])
def test_identical_copies_are_routed_and_paired_once_without_grouping_before_the_route(spark, groups):
    # The distributed exact join routes documents, not distinct sets (allpairs.engines.spark.copies): the
    # copies meet in the token groups' tasks, are joined as one set there and paired (J = 1) by one task.
    sets = copies_corpus()
    t = Fraction(1, 2)
    with planned_join(spark, sets, t, token_groups=groups) as planned:
        assert planned._grouped is None and planned.ranked is not None and not planned.plans
        got = by_corpus(planned.pairs.collect()).get(0, [])
        assert got == all_pairs(sets, t)
        assert planned.summary.settle().distinct == len({frozenset(s) for s in sets})
        assert planned.summary.shingles == sum(len(s) for s in {frozenset(s) for s in sets})
        # The members, read by dedup and clusters, are grouped on first use.
        assert planned.members.select("set").distinct().count() == planned.summary.distinct


def test_copies_pairs_come_in_bounded_batches():
    from allpairs.engines.spark.copies import _expanded, _members, _within

    ids = np.arange(100, 130, dtype=np.int64)
    start, count, size = np.array([0, 25]), np.array([25, 5]), np.array([4, 6])
    batches = list(_within(ids, start, count, size, limit=64))
    assert max(b.num_rows for b in batches) <= 64
    got = sorted((a, b) for batch in batches
                 for a, b in zip(batch.column("a").to_pylist(), batch.column("b").to_pylist()))
    want = sorted([(int(ids[i]), int(ids[j])) for i in range(25) for j in range(i + 1, 25)] +
                  [(int(ids[i]), int(ids[j])) for i in range(25, 30) for j in range(i + 1, 30)])
    assert got == want
    # Found pairs of first copies (1 with 3 others, 5 with 2) expanded to every copy on either side.
    rep = np.array([1, 1, 1, 1, 5, 5, 5, 7])
    members = _members(rep, np.array([1, 2, 3, 4, 5, 6, 9, 7]))
    import pyarrow as pa
    found = pa.RecordBatch.from_pydict({"a": [1, 7, 1], "b": [5, 5, 7], "overlap": [3, 2, 1], "size_a": [4, 4, 4],
                                        "size_b": [5, 5, 3]})
    out = list(_expanded(found, members, limit=5))
    assert max(b.num_rows for b in out) <= 5  # one pair's 4 x 3 copies sliced too
    got = sorted(zip(*(sum((b.column(c).to_pylist() for b in out), []) for c in ("a", "b", "overlap"))))
    assert got == sorted([(a, b, 3) for a in (1, 2, 3, 4) for b in (5, 6, 9)] + [(7, b, 2) for b in (5, 6, 9)] +
                         [(a, 7, 1) for a in (1, 2, 3, 4)])


@settings(max_examples=200, deadline=None)
@given(st.integers(1, 300), st.integers(0, 10**9), st.integers(0, 10**11), st.integers(1, 40),
       st.integers(1, 9), st.integers(1, 10**9))
def test_the_default_token_groups_are_the_fewest_multiple_of_the_slots_within_the_task_limit(
        slots, sets, shared, per_set, p, limit):
    from allpairs.engines.spark.exact import group_share, token_groups
    from allpairs.measures import Threshold

    t = Threshold(p, 10)
    shingles = shared + sets * per_set
    groups = token_groups(slots, sets, shared, shingles, t, limit)
    assert groups % slots == 0 and slots <= groups <= 2**30
    k = min(shared / sets, (1 - p / 10) * shingles / sets + 1) if sets else 0
    if groups + slots > 2**30:
        return  # at the most there is
    if groups > slots:  # the fewest: one multiple less would hold more than the limit
        assert shared * group_share(groups - slots, k) > limit
    if sets and k > 0:
        assert shared * group_share(groups, k) <= limit * (1 + 1e-9)


def test_the_default_token_groups_grow_from_the_slots_only_where_a_task_would_hold_too_much():
    from allpairs.engines.spark.exact import GROUP_TASK_RANKS, token_groups
    from allpairs.measures import Threshold

    t = Threshold(1, 2)
    # 1 M Zipf sets (bench_spark.py's): 19.3 M shared ranks, one task slot's group each on local[2] ...
    assert token_groups(2, 970_815, 19_336_849, 19_501_409, t) == 2
    # ... and ten times as many: about 133 M ranks a task at 10 groups (10 M Zipf sets at 8 groups: 3.8 GiB
    # Python workers), none over the limit; a cluster's 200 slots hold 100 times as many at 200 groups.
    assert token_groups(2, 9_708_150, 193_368_490, 195_014_090, t) == 10
    assert token_groups(200, 97_081_500, 1_933_684_900, 1_950_140_900, t) == 200
    assert token_groups(3, 0, 0, 0, t) == 3 and token_groups(4, 10, GROUP_TASK_RANKS, 10**9, t) == 4


def test_routing_hands_copies_of_long_sets_to_spark_in_bounded_batches():
    import pyarrow as pa

    from allpairs.engines.spark.arrow import csr
    from allpairs.engines.spark.exact import _route_batches

    # Five sets of 1,000 shared ranks: 501 prefix tokens each, dealt into 64 groups.
    ranks = [list(range(100 * k, 100 * k + 1000)) for k in range(5)]
    batch = pa.RecordBatch.from_arrays(
        [pa.array(range(5), pa.int64()), pa.array([1000] * 5, pa.int32()), pa.array([0] * 5, pa.int32()),
         pa.array(ranks, pa.list_(pa.int32()))], names=["set", "size", "n_single", "ranks"])
    whole = list(_route_batches([batch], 1, 2, {}, 64))
    cut = list(_route_batches([batch], 1, 2, {}, 64, limit=10_000))
    assert len(whole) == 1 and whole[0].num_rows == 5 * 64
    assert len(cut) == 32 and all(len(csr(b.column("ranks"), np.int32)[1]) <= 10_000 for b in cut)
    assert pa.Table.from_batches(cut).equals(pa.Table.from_batches(whole))


def ranked_batch(ranked):
    """The ranked sets' Arrow batch (as rank_sets hands it on) from (n_single, sorted ranks) per set; set ids 0, 1, ..."""
    import pyarrow as pa

    return pa.RecordBatch.from_arrays(
        [pa.array(range(len(ranked)), pa.int64()), pa.array([o + len(r) for o, r in ranked], pa.int32()),
         pa.array([o for o, _ in ranked], pa.int32()), pa.array([list(r) for _, r in ranked], pa.list_(pa.int32()))],
        names=["set", "size", "n_single", "ranks"])


def rank_like_spark(sets):
    """Distinct non-empty sets as (n_single, sorted ranks): shared tokens ranked by (sets holding them, token)."""
    distinct = sorted({frozenset(s) for s in sets if s}, key=sorted)
    df = {}
    for s in distinct:
        for tok in s:
            df[tok] = df.get(tok, 0) + 1
    rank = {tok: r for r, tok in enumerate(sorted((tok for tok in df if df[tok] > 1), key=lambda x: (df[x], x)))}
    return distinct, [(sum(tok not in rank for tok in s), sorted(rank[tok] for tok in s if tok in rank))
                      for s in distinct]


def block_join(ranked, t, groups, max_group=10_000, batch_rows=7, apart=False, shuffled=False):
    """The Spark exact join's routing and task joins without Spark: {(a, b): overlap} over set ids a < b.

    Rows are routed, sorted by task, and handed to the join in batches of
    ``batch_rows`` (so that tasks straddle batches); hot tokens (routes of more than ``max_group``
    sets) are split by size as plan_hot_groups splits them. ``apart``: the token groups' tasks and
    the hot tokens' tasks in two partitions of their own, else all in one. ``shuffled``: each
    partition's rows in a random order, as Spark hands them over (the join puts them in task order).
    """
    import pyarrow as pa

    from allpairs.engines.spark.exact import TASK, _join_batches, _route_batches, _routes, split_group
    from allpairs.measures import Threshold

    t = Threshold.parse(t)
    batch = ranked_batch(ranked)
    row, g = _routes(batch, t.p, t.q)
    size = np.array([o + len(r) for o, r in ranked], np.int64)
    plans = {}
    for gv in np.unique(g).tolist():
        sizes, counts = np.unique(size[row[g == gv]], return_counts=True)
        if counts.sum() > max_group:
            plans[gv] = split_group(sizes, counts, max_group, t)
    batches = [b for b in _route_batches([batch], t.p, t.q, plans, groups) if b.num_rows]
    if not batches:
        return {}
    routed = pa.Table.from_batches(batches).sort_by([(k, "ascending") for k in TASK])
    cut = int(np.searchsorted(routed.column("g").to_numpy(), 0)) if apart else 0
    found = {}
    for part in (routed.slice(0, cut), routed.slice(cut)):
        if shuffled:
            part = part.take(np.random.default_rng(part.num_rows).permutation(part.num_rows))
        for out in _join_batches(part.to_batches(max_chunksize=batch_rows), t, np.array(sorted(plans), np.int64),
                                 groups):
            for a, b, ov in zip(*(out.column(k).to_pylist() for k in ("a", "b", "overlap"))):
                key = (min(a, b), max(a, b))
                assert key not in found, f"pair {key} came out twice"
                found[key] = ov
    return found


def oracle_of_ranked(ranked, t):
    """naive.all_pairs over the ranked sets (own tokens spelled apart), as {(a, b): overlap}."""
    sets = [[f"own{i}_{k}" for k in range(o)] + list(r) for i, (o, r) in enumerate(ranked)]
    return {(i, j): ov for i, j, ov, _, _ in all_pairs(sets, t)}


@pytest.mark.kernel_paths("compiled", "python")
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(corpora(max_docs=30), st.sampled_from(THRESHOLDS), st.sampled_from([1, 2, 3, 5, 64]),
       st.sampled_from([3, 10_000]), st.booleans(), st.booleans())
def test_task_joins_find_each_pair_once_with_its_exact_overlap(sets, t, groups, max_group, apart, shuffled):
    # No Spark: the routing and the join of each task, checked against the oracle, with prefix tokens
    # dealt into 1 to 64 groups, small hot groups split by size, hot tasks in a partition of their
    # own or beside the groups' tasks, and a partition's rows sorted by task or not.
    _, ranked = rank_like_spark(sets)
    assert block_join(ranked, t, groups, max_group, apart=apart, shuffled=shuffled) == oracle_of_ranked(ranked, t)


def test_a_task_body_runs_in_small_pages_and_gives_the_settings_back():
    # Huge pages cost a task's first touch of its memory several times the work on a loaded VM: the
    # bodies run with numpy's madvise off and Arrow's system pool, and leave the process as it was.
    import pyarrow as pa

    from allpairs.engines.spark.arrow import _madvise_hugepage, in_small_pages

    switch = _madvise_hugepage()
    before = (switch(True) if switch else None, pa.default_memory_pool().backend_name)
    seen = []

    @in_small_pages
    def body(batches):
        for b in batches:
            seen.append((switch(False) if switch else False, pa.default_memory_pool().backend_name))
            yield b

    assert list(body([1, 2])) == [1, 2]
    assert seen == [(False, "system")] * 2
    assert pa.default_memory_pool().backend_name == before[1]
    if switch:
        assert switch(before[0]) is True


def test_the_one_task_bodies_join_in_small_pages(monkeypatch):
    # The one task (Go tree: 2,981 sets, 6.1 M shingles) orders and joins every set in a worker new to that
    # memory, as the token groups' tasks do: its three bodies run in small pages too, seen where they join.
    import pyarrow as pa

    from allpairs._kernels import malloc
    from allpairs.engines.spark import one_task
    from allpairs.engines.spark.arrow import _madvise_hugepage
    from allpairs.measures import Threshold

    switch = _madvise_hugepage()
    was = switch(True) if switch else None
    seen, join = [], one_task.prefix_join

    def watched(*args, **kwargs):
        seen.append((switch(False) if switch else False, pa.default_memory_pool().backend_name,
                     malloc._large_pages_wanted))
        return join(*args, **kwargs)

    monkeypatch.setattr(one_task, "prefix_join", watched)
    keys = pa.array([[1, 2, 3], [1, 2, 3, 4], [7, 8], [1, 2, 3]], pa.list_(pa.int64()))
    docs = {"ord": pa.array([0, 1, 2, 3], pa.int64()), "id": pa.array([10, 11, 12, 13], pa.int64()),
            "okey": pa.array([0, 1, 2, 3], pa.int64()), "size": pa.array([3, 4, 2, 3], pa.int32())}
    t = Threshold.parse(0.5)

    class Counted:
        def add(self, value):
            self.value = value

    sets = pa.RecordBatch.from_pydict({"set": pa.array([0, 1, 2], pa.int64()), "size": docs["size"][:3],
                                       "keys": keys[:3]})
    grouped = pa.RecordBatch.from_pydict({**docs, "set": pa.array([0, 1, 2, 0], pa.int64()), "keys": keys})
    try:
        assert len(list(one_task._joined_batches([sets], t))) == 1
        assert sum(b.num_rows for b in one_task._document_batches([grouped], t, "jaccard", None)) == 3
        assert sum(b.num_rows for b in one_task._grouping_document_batches(
            [pa.RecordBatch.from_pydict({**docs, "keys": keys})], t, "jaccard", None, Counted())) == 3
    finally:
        if switch:
            switch(was)
    assert seen == [(False, "system", False)] * 3


def test_each_token_group_has_a_partition_of_its_own_and_the_hot_tasks_those_after(spark):
    # Hashing the task keys put the 8 groups of 10 M Zipf sets into 6 partitions (one task ran three
    # groups). Placed by id, group k is alone in partition k; the hot tokens' tasks share the partitions
    # after the groups', as many as their routed rows (known from the histograms) need.
    from pyspark.sql import DataFrame
    from pyspark.sql import functions as F

    from allpairs.engines.spark import exact
    from allpairs.measures import Threshold

    if not hasattr(DataFrame, "repartitionById"):
        pytest.skip("Spark before 4.1 has no partitioning by id: the groups are hashed there")
    t = Threshold.parse(0.5)
    plans = {7: exact.split_group(np.array([4, 5, 6]), np.array([30, 40, 50]), 50, t),
             11: exact.split_group(np.array([9]), np.array([120]), 50, t)}
    assert [plan.routed for plan in plans.values()] == [(30 + 40 + 50) * 3, 120 * 3]  # each range meets all
    assert exact.hot_partitions(plans, 8) == 1 and exact.hot_partitions({}, 8) == 0
    old = exact.HOT_PARTITION_ROWS
    exact.HOT_PARTITION_ROWS = 150
    try:
        assert exact.hot_partitions(plans, 8) == 5 and exact.hot_partitions(plans, 4) == 4
        rows = [(-1 - k, 0, 0) for k in range(8) for _ in range(3)] + \
            [(g, c1, c2) for g, plan in plans.items() for c1 in range(plan.chunks) for c2 in range(c1, plan.chunks)]
        g, c1, c2 = (np.array(c, np.int64) for c in zip(*rows))
        part = exact.partition_of(g, c1, c2, 8, exact.hot_partitions(plans, 8))
        df = spark.createDataFrame([(*r, int(p)) for r, p in zip(rows, part)], "g int, c1 int, c2 int, part int")
        got = exact.placed(df, plans, 8).select("g", "c1", "c2", "part", F.spark_partition_id().alias("p")).collect()
    finally:
        exact.HOT_PARTITION_ROWS = old
    assert sorted((r.g, r.c1, r.c2) for r in got) == sorted(rows)
    for r in got:
        assert r.p == r.part
        if r.g < 0:
            assert r.p == -1 - r.g
        else:
            assert 8 <= r.p < 13
    assert len({r.p for r in got if r.g >= 0}) > 1
    # A task's rows all go to one partition, wherever they were routed.
    assert (exact.partition_of(g, c1, c2, 8, 5) == part).all()


def test_routed_rows_reach_the_jvm_packed_a_value_per_partition_and_come_back_the_same():
    # The JVM takes a value per partition of the join stage and routing batch, not a row per routed set;
    # the join's task reads back exactly the routed rows (hot tokens' tasks too, spread over 3 partitions).
    import pyarrow as pa

    from allpairs.engines.spark import exact
    from allpairs.engines.spark.arrow import unpacked
    from allpairs.measures import Threshold

    rng = np.random.default_rng(5)
    ranked = [(int(rng.integers(0, 3)), sorted(rng.choice(60, int(rng.integers(1, 25)), replace=False).tolist()))
              for _ in range(400)]
    batch = ranked_batch(ranked)
    t = Threshold.parse(0.5)
    row, g = exact._routes(batch, t.p, t.q)
    size = np.array([o + len(r) for o, r in ranked], np.int64)
    plans = {}
    for gv in np.unique(g).tolist():
        sizes, counts = np.unique(size[row[g == gv]], return_counts=True)
        if counts.sum() > 40:
            plans[gv] = exact.split_group(sizes, counts, 40, t)
    assert plans
    want = pa.Table.from_batches([b for b in exact._route_batches([batch], t.p, t.q, plans, 4) if b.num_rows])
    packs = list(exact._packed_route_batches([batch], t.p, t.q, plans, 4, 3))
    parts = pa.Table.from_batches(packs).column("part").to_pylist()
    assert len(parts) == len(set(parts)) and set(range(4)) <= set(parts) <= set(range(7))
    assert len(parts) > 5 and sum(b.num_rows for b in packs) == len(parts) < want.num_rows
    for p in parts:
        one = pa.Table.from_batches([b.filter(pa.compute.equal(b.column("part"), p)) for b in packs])
        got = pa.Table.from_batches(list(unpacked(one.to_batches(), exact.ROUTED_ARROW)))
        cols = {c: want.column(c).to_numpy() for c in exact.TASK}
        mine = exact.partition_of(cols["g"], cols["c1"], cols["c2"], 4, 3) == p
        assert got.equals(want.filter(pa.array(mine)))


def test_a_pair_whose_later_group_matches_follow_other_groups_shared_tokens_is_kept_exactly():
    # Two groups: even ranks in group 0, odd in group 1. The sets share 0 (their first shared
    # token: group 0), then 1, 3, 5 (group 1), then 6 (group 0) within the smaller set's indexed
    # prefix, and 7..13. Counting only group 0's matches in the global order would meet 6 with a
    # count of 1 where the true one is 4, and the positional bound 1 + 1 + min(20 - 5, 12 - 5) = 9
    # would drop a pair of overlap 11 (J = 11/21 >= 1/2, needing 11): its task must count every
    # match before a match it uses.
    y = [0, 1, 3, 5, 6, 7, 8, 9, 10, 11, 12, 13]
    x = y[:11] + list(range(20, 29))
    ranked = [(0, x), (0, y)]
    t = Fraction(1, 2)
    assert oracle_of_ranked(ranked, t) == {(0, 1): 11}
    assert block_join(ranked, t, groups=2) == {(0, 1): 11}
    assert block_join(ranked, t, groups=1) == {(0, 1): 11}


def test_a_group_task_gives_its_join_each_tokens_position_in_the_global_order():
    # Group 0 of 2 (even ranks live). Set 0: one own token, then ranks 1, 2, 4, 5 (global positions 1..4);
    # in the task's order live 2 and 4 come first, then 1 and 5, then the own token. Set 1: ranks 3, 4, 6.
    # The probe's positional bound reads these positions at a first match (the module's docstring); the
    # join's check of a pair's first shared token merges the tokens after each set's live ones, as far as
    # those positions.
    from allpairs.engines.spark.exact import _group_sets
    from allpairs.measures import Threshold

    r_ptr = np.array([0, 4, 7], np.int64)
    ranks = np.array([1, 2, 4, 5, 3, 4, 6], np.int32)
    size, n_single = np.array([5, 3], np.int64), np.array([1, 0], np.int64)
    rows, indptr, tokens, n_live, _, _, at, live_len = _group_sets(
        np.zeros(2, np.int64), np.zeros(2, np.int64), r_ptr, ranks, size, n_single, np.zeros(0, np.int64), 2,
        Threshold.parse("0.5"))
    assert rows.tolist() == [1, 0] and indptr.tolist() == [0, 3, 8]
    assert tokens[:3].tolist() == [2, 3, n_live + 3] and tokens[3:5].tolist() == [1, 2]
    assert at.tolist() == [1, 2, 0] + [2, 3, 1, 4, 0]
    assert live_len.tolist() == [2, 2]


def test_a_pair_is_joined_only_in_the_task_of_its_first_shared_token_group():
    # The pair shares ranks 2 (group 2 of 3, its first), 3 (group 0) and 4 (group 1): all three
    # tasks hold both sets, one keeps the pair. Own tokens come first in the global order.
    from allpairs.engines.spark.exact import _route_rows

    x, y = (1, [2, 3, 4, 9]), (2, [2, 3, 4, 10])
    row, g, *_ = _route_rows(ranked_batch([x, y]), 1, 3, {}, 3)
    assert sorted(zip(row.tolist(), g.tolist())) == [(0, -3), (0, -2), (0, -1), (1, -3), (1, -2), (1, -1)]
    assert block_join([x, y], Fraction(1, 3), groups=3) == {(0, 1): 3} == oracle_of_ranked([x, y], Fraction(1, 3))


def test_ranks_too_large_for_int32_ids_are_renumbered_within_a_task():
    # Live ids take (tasks x max rank / groups) ids and the other ranks follow them: near 2**31 the
    # others are renumbered densely instead.
    top = 2**31 - 10
    ranked = [(1, [top - 6, top - 4, top - 3, top]), (0, [top - 6, top - 4, top - 3, top - 1]),
              (2, [top - 5, top - 4, top - 3, top])]
    t = Fraction(2, 5)
    assert block_join(ranked, t, groups=2) == oracle_of_ranked(ranked, t) != {}


def test_lsh_finds_the_local_engines_candidates_and_pairs(spark):
    from datasets.synthetic import zipf_sets

    from allpairs.lsh import candidates, signatures
    from allpairs.order import order_sets
    from allpairs.shingles import hash_sets

    # Tokens as token_frame spells them (corpus 0), so that both engines hash the same strings.
    sets = [[f"0:{x}" for x in s] for s in zipf_sets(n=600, avg_size=12, vocabulary=300, near_duplicates=0.4, seed=3)]
    t, k, b, r, seed, max_bucket = 0.5, 40, 10, 4, 7, 6
    planned = plan(token_frame(spark, [sets]), t, tokens_col="toks", order_col="n", method="lsh", num_perm=k,
                   bands=b, rows=r, seed=seed, max_bucket=max_bucket, max_expand=None)
    try:
        # Local candidates, as pairs of the first document of each distinct set.
        o = order_sets(*hash_sets(sets))
        cand = candidates(signatures(*o.set_keys(), k, seed=seed), b, r, max_bucket=max_bucket)
        first = o.group_docs[o.group_indptr[:-1]]
        local = sorted(zip(first[cand.left].tolist(), first[cand.right].tolist()))
        local = sorted(tuple(sorted(p)) for p in local)
        ids = {row.set: int(row.id.split(":")[1]) for row in planned.members.where("ord = set").collect()}
        got = sorted(tuple(sorted((ids[row.a], ids[row.b]))) for row in planned.candidates.collect())
        assert got == local and len(got) > 50
        oversized = sorted((row.band, row.n) for row in planned.buckets.where("a < 0 and n > 6").collect())
        assert oversized == cand.oversized
        pairs = by_corpus(planned.pairs.collect()).get(0, [])
        res = allpairs.join(sets, t, method="lsh", num_perm=k, bands=b, rows=r, seed=seed, max_bucket=max_bucket)
        assert pairs == sorted(tuple(p) for p in res.pairs)
    finally:
        planned.unpersist()


def test_lsh_joins_buckets_larger_than_max_expand_instead_of_expanding_them(spark):
    # Expanding every bucket of up to max_bucket sets, as at first, made 48 M candidates of 100k Zipf sets
    # (32 x 2 bands, max_bucket 1000), each shuffled with both sets' keys: the join never finished. Buckets
    # of more than max_expand sets are now joined exactly in one task each, as locally: the same pairs.
    from datasets.synthetic import zipf_sets

    from allpairs.engines.spark.lsh import MARKED
    from allpairs.lsh import candidates, signatures
    from allpairs.order import order_sets
    from allpairs.shingles import hash_sets

    sets = [[f"0:{x}" for x in s] for s in zipf_sets(n=400, avg_size=10, vocabulary=200, near_duplicates=0.4, seed=5)]
    t, k, b, r, seed, max_bucket, max_expand = 0.5, 32, 16, 2, 3, 40, 4
    planned = plan(token_frame(spark, [sets]), t, tokens_col="toks", order_col="n", method="lsh", num_perm=k,
                   bands=b, rows=r, seed=seed, max_bucket=max_bucket, max_expand=max_expand)
    try:
        o = order_sets(*hash_sets(sets))
        cand = candidates(signatures(*o.set_keys(), k, seed=seed), b, r, max_bucket=max_bucket, max_expand=max_expand)
        assert cand.joined_buckets and cand.oversized
        marked = planned.buckets.where(f"a = {MARKED}").groupBy("band", "first").count().collect()
        assert sorted((row.band, row["count"]) for row in marked) == cand.joined_buckets
        assert planned.candidates.count() == len(cand)
        pairs = by_corpus(planned.pairs.collect()).get(0, [])
        res = allpairs.join(sets, t, method="lsh", num_perm=k, bands=b, rows=r, seed=seed, max_bucket=max_bucket,
                            max_expand=max_expand)
        local = sorted(tuple(p) for p in res.pairs)
        expanded = allpairs.join(sets, t, method="lsh", num_perm=k, bands=b, rows=r, seed=seed, max_bucket=max_bucket,
                                 max_expand=None).pairs
        assert pairs == local == sorted(tuple(p) for p in expanded) and len(pairs) > 20
        # The run's note on the joined buckets is the local engine's, figure for figure.
        from allpairs.engines.spark.run import SparkRun, _bucket_notes

        run = SparkRun("local[2]", "lsh", "1/2", "tokens")
        _bucket_notes(planned, run)
        assert next(n for n in res.stats.notes if "joined exactly" in n) in run.notes
    finally:
        planned.unpersist()


def test_a_bucket_join_pairs_sets_only_within_one_bucket():
    import pyarrow as pa

    from allpairs.engines.spark.lsh import _bucket_join
    from allpairs.measures import Threshold

    # Sets 1 and 2 are identical but sit in different buckets; 1 and 3 share bucket (0, 1) with J = 3/5.
    rows = [(0, 1, 1, [1, 2, 3, 4]), (0, 1, 3, [1, 2, 3, 5]), (0, 1, 4, [7, 8]),
            (2, 2, 2, [1, 2, 3, 4]), (2, 2, 5, [9])]
    block = pa.table({"band": pa.array([x[0] for x in rows], pa.int32()), "first": [x[1] for x in rows],
                      "set": [x[2] for x in rows], "keys": pa.array([x[3] for x in rows], pa.list_(pa.int64()))})
    got = _bucket_join(block, Threshold.parse("1/2")).to_pylist()
    assert got == [{"a": 1, "b": 3, "overlap": 3, "size_a": 4, "size_b": 4}]


def test_cli_on_the_tiny_corpus_writes_the_golden_pairs_as_parquet(spark, tmp_path):
    import pyarrow.parquet as pq

    out = tmp_path / "pairs"
    r = cli("join", "--engine", "spark", "-t", "0.5", "-s", "word:1", TINY, "-o", out)
    assert r.exit_code == 0, r.stderr
    assert r.stdout == ""
    table = pq.read_table(out).to_pylist()
    lines = [f"{p['left']}\t{p['right']}\t{int(p['overlap'] * 10**6 // (p['left_size'] + p['right_size'] - p['overlap'])) / 10**6:.6f}"
             for p in table]
    assert "\n".join(["left\tright\tsimilarity", *lines]) + "\n" == GOLDEN.read_text()  # the golden TSV's header
    assert "skipped 2" not in r.stderr and "8 documents, 2 skipped (binary: 1" in r.stderr
    r = cli("join", "--engine", "spark", "-t", "0.5", "-s", "word:1", TINY, "-o", out)
    assert r.exit_code == 2 and "exists" in r.stderr


def test_cli_reads_lines_jsonl_and_parquet_as_the_local_engine_does(spark, tmp_path):
    lines = ["correct horse", "correct horses", "battery staple", "Battery staple!", "x", "", "correct horse"]
    (tmp_path / "l.txt").write_text("\n".join(lines) + "\n")
    local = cli("join", "-t", "0.5", "--lines", tmp_path / "l.txt", "--count")
    r = cli("join", "--engine", "spark", "-t", "0.5", "--lines", tmp_path / "l.txt", "--count")
    assert r.exit_code == 0, r.stderr
    assert r.stdout == local.stdout and int(r.stdout) > 2
    import json

    (tmp_path / "d.jsonl").write_text("".join(json.dumps({"id": f"d{k}", "text": s}) + "\n" for k, s in enumerate(lines)))
    local = cli("join", "-t", "0.3", "-s", "char:3", "--jsonl", tmp_path / "d.jsonl", "--count")
    r = cli("join", "--engine", "spark", "-t", "0.3", "-s", "char:3", "--jsonl", tmp_path / "d.jsonl", "--count")
    assert r.exit_code == 0, r.stderr
    assert r.stdout == local.stdout
    (tmp_path / "bad.jsonl").write_text('{"id": 1, "text": "a"}\n{"id": 2\n')
    r = cli("join", "--engine", "spark", "-t", "0.3", "--jsonl", tmp_path / "bad.jsonl", "--count")
    assert r.exit_code == 1 and "bad.jsonl:2: not valid JSON" in r.stderr and "Traceback" not in r.stderr
    spark.createDataFrame([(k, s.split()) for k, s in enumerate(lines)], "key long, words array<string>") \
        .write.parquet(str(tmp_path / "in"))
    r = cli("join", "--engine", "spark", "-t", "0.5", "--parquet", "--id-col", "key", "--tokens-col", "words",
            "--method", "lsh", "--max-bucket", "3", tmp_path / "in", "--count")
    assert r.exit_code == 0, r.stderr
    assert int(r.stdout) == len(allpairs.join([s.split() for s in lines], 0.5).pairs)
    assert "LSH" in r.stderr
    # A null token is left out by both engines (Spark hashed it as the token "None"), a null list is empty.
    spark.createDataFrame([(1, ["p", None, "q"]), (2, ["p", "q", "None"]), (3, None), (4, ["p", "q"])],
                          "key long, words array<string>").write.parquet(str(tmp_path / "nulls"))
    args = ["join", "-t", "0.7", "--parquet", "--id-col", "key", "--tokens-col", "words", tmp_path / "nulls", "-q"]
    local = cli(*args, "-f", "tsv")
    assert local.exit_code == 0 and local.stdout.splitlines()[1:] == ["1\t4\t1.000000"], local.output
    r = cli(*args, "--engine", "spark", "-o", tmp_path / "pairs")
    assert r.exit_code == 0, r.output
    import pyarrow.parquet as pq

    assert [(p["left"], p["right"]) for p in pq.read_table(tmp_path / "pairs").to_pylist()] == [(1, 4)]


def local_and_spark_rows(src, out, *selection):
    """The pairs (left, right, overlap, left_size, right_size) of the local engine's CSV and of the Spark
    engine's Parquet output, and the Spark run's stderr, on the Go tree with TREE_OPTIONS."""
    import pyarrow.parquet as pq

    local = cli("join", "-t", "0.5", *selection, *TREE_OPTIONS, "--format", "csv", src)
    assert local.exit_code == 0, local.stderr
    r = cli("join", "--engine", "spark", "-t", "0.5", *selection, *TREE_OPTIONS, src, "-o", out)
    assert r.exit_code == 0, r.stderr
    got = [(p["left"], p["right"], p["overlap"], p["left_size"], p["right_size"]) for p in pq.read_table(out).to_pylist()]
    want = [(a, b, int(o), int(x), int(y)) for a, b, _, o, x, y in
            (line.split(",") for line in local.stdout.splitlines()[1:])]
    return got, want, r.stderr


def test_go_six_directories_give_the_local_engines_59_pairs(spark, go_reference_src, tmp_path):
    include = [arg for d in SIX for arg in ("--include", f"/{d}/*.go")]
    got, want, stderr = local_and_spark_rows(go_reference_src, tmp_path / "p", *include)
    assert "139 documents" in stderr
    assert len(got) == 59 and got == want


#: Spark jobs of the command line's join of a small tree (the Go tree's six directories) with -s given, joined in
#: one task and written with -o, counted (issue 32); 11 by the distributed plan (the Go tree counted: 2 against 8);
#: 6 while the identical sets were grouped by a shuffle (the one task groups them now).
JOBS_OF_A_SMALL_TREE = 5


def test_a_small_input_joined_in_one_task_writes_the_distributed_plans_dataset_byte_for_byte(
        spark, go_reference_src, tmp_path):
    import pyarrow.parquet as pq

    from allpairs.engines.spark.run import run

    include = tuple(f"/{d}/*.go" for d in SIX)
    tables, jobs = {}, {}
    for one_task in (False, True, None):
        with jobs_run(spark, f"six directories, one_task {one_task}") as jobs[one_task]:
            res = run(str(go_reference_src), 0.5, output=str(tmp_path / str(one_task)), include=include,
                      exclude=("*_test.go", "testdata/**"), min_bytes=2048, shingle="code:5", one_task=one_task)
        assert res.pairs == 59 and res.documents == 139, res
        assert any(note.startswith("plan: one task" if one_task is not False else "plan: distributed")
                   for note in res.notes), res.notes
        tables[one_task] = pq.read_table(tmp_path / str(one_task))
    # The same rows in the same order, of the same types (the ids' too).
    assert tables[True].schema == tables[False].schema and tables[True].equals(tables[False])
    assert tables[None].equals(tables[False])
    assert len(jobs[None]) <= JOBS_OF_A_SMALL_TREE < len(jobs[False]), {k: len(v) for k, v in jobs.items()}


def test_a_tree_expected_small_has_its_identical_files_grouped_by_the_one_task(spark, tmp_path):
    # Known small before any job, a tree's identical sets are grouped by the one task itself (no shuffle by
    # the key arrays): the distributed plan's rows, and the local engine's distinct sets, reported once the
    # pairs are computed.
    import shutil

    import pyarrow.parquet as pq

    from allpairs.engines.spark.run import run

    tree = tmp_path / "tree"
    shutil.copytree(TINY, tree)
    (tree / "again").mkdir()
    for name in ("cat.txt", "fox.txt", "fox-short.txt"):
        shutil.copy(tree / name, tree / "again" / name)
    local = cli("join", "-t", "0.5", "-s", "word:1", tree, "--count")
    assert local.exit_code == 0, local.stderr
    distinct = int(local.stderr.split(" distinct sets")[0].rsplit(" ", 1)[1].replace(",", ""))
    got, jobs = {}, {}
    for one_task in (None, False):
        with jobs_run(spark, f"tree with copies, one_task {one_task}") as jobs[one_task]:
            got[one_task] = run(str(tree), 0.5, shingle="word:1", output=str(tmp_path / str(one_task)),
                                one_task=one_task)
    assert got[None].pairs == got[False].pairs == int(local.stdout) > 0
    assert got[None].distinct_sets == got[False].distinct_sets == distinct < got[None].joined, (got, distinct)
    assert any(note.startswith(f"plan: one task ({distinct} distinct sets of ") for note in got[None].notes), got
    assert pq.read_table(tmp_path / "None").equals(pq.read_table(tmp_path / "False"))
    assert len(jobs[None]) < len(jobs[False]), jobs


def test_few_members_are_broadcast_to_the_set_pairs_with_the_same_rows(spark, monkeypatch):
    # The set pairs were joined with the members (twice, and the identical documents once more) by shuffles
    # of the pairs and the members: 1 M Zipf sets, two stages of sort-merge joins and a 13.6 MiB shuffle.
    # Up to MEMBERS_BROADCAST joined documents the members are broadcast instead, as Spark plans it before
    # adaptive execution (which may broadcast small sides itself); the same rows either way.
    import importlib

    join_module = importlib.import_module("allpairs.engines.spark.join")
    sets = [["a", "b", "c"], ["a", "b", "c"], ["a", "b", "d"], ["x", "y"], ["x", "y"], ["a", "b", "c", "d"], ["q"]]
    df = token_frame(spark, [sets])
    # The join's own plan pairs identical documents in the token groups' tasks (.copies): two joins, the
    # pair's two sides. Where the members are read (dedup, clusters) identical sets are grouped first and
    # their documents paired by a third join.
    rows, limits = {}, (join_module.MEMBERS_BROADCAST, 0)
    for members_read, joins in ((False, 2), (True, 3)):
        found = {}
        for limit in limits:
            monkeypatch.setattr(join_module, "MEMBERS_BROADCAST", limit)
            pairs = plan(df, 0.5, tokens_col="toks", one_task=False, members_read=members_read).pairs
            physical = pairs._jdf.queryExecution().sparkPlan().toString()
            found[limit] = (physical.count("BroadcastHashJoin"), physical.count("SortMergeJoin"),
                            sorted(map(tuple, pairs.select("left", "right", "similarity", "overlap").collect())))
        broadcast, shuffled = found.values()
        assert broadcast[:2] == (joins, 0) and shuffled[:2] == (0, joins), (members_read, found)
        assert broadcast[2] == shuffled[2] and len(broadcast[2]) == 7, found
        rows[members_read] = broadcast[2]
    assert rows[False] == rows[True]


def test_one_task_gives_the_distributed_plans_rows_whatever_the_order_columns_type(spark):
    # The one task picks each pair's left document itself where Arrow orders the okeys as Spark does
    # (integers, strings); other types (a double here, null among them) go through the members join.
    from pyspark.sql import functions as F

    sets = [["a", "b", "c"], ["a", "b", "c"], ["a", "b", "d"], ["x", "y"], ["x", "y"], ["a", "b", "c", "d"]]
    df = token_frame(spark, [sets])
    for n in (F.col("n"), F.col("n").cast("string"), F.when(F.col("n") != 2, -F.col("n").cast("double"))):
        framed = df.withColumn("n", n)
        rows = {one: sorted(map(tuple, allpairs.spark.join(framed, 0.5, tokens_col="toks", order_col="n",
                                                          one_task=one, cache=False).collect()))
                for one in (False, True)}
        assert rows[True] == rows[False] and len(rows[True]) == 7, rows
        # The plan asked for is the one that runs, whatever the order column's type.
        assert [plan(framed, 0.5, tokens_col="toks", order_col="n", one_task=one).one_task
                for one in (False, True)] == [False, True]


def test_a_tree_expected_small_whose_shingles_do_not_fit_one_task_is_counted_then_distributed(spark, monkeypatch):
    # A local tree of few files is expected small: its planning pass leaves out the shingles' counts. Past the
    # one task's bounds after all, they are counted by a second pass and the distributed plan joins.
    from allpairs.engines.spark import one_task
    from allpairs.engines.spark.run import run

    with jobs_run(spark, "tiny, within the one task's bounds") as one:
        expected = run(str(TINY), 0.5, shingle="word:1", count=True)
    monkeypatch.setattr(one_task, "ONE_TASK_SHINGLES", 10)
    with jobs_run(spark, "tiny, past the one task's bounds") as jobs:
        got = run(str(TINY), 0.5, shingle="word:1", count=True)
    assert got.pairs == expected.pairs == 10 and got.skipped == expected.skipped
    assert any(note.startswith("plan: distributed") for note in got.notes), got.notes
    assert any(note.startswith("plan: one task") for note in expected.notes), expected.notes
    assert len(jobs) > len(one), (jobs, one)


def test_go_tree_sample_gives_the_local_engines_pairs_row_for_row(spark, go_reference_src, tmp_path):
    # The files whose names start with t or z (528 of the tree's 3,104, a third of its shingles):
    # the generated Unicode tables (~50,000 shingles, ~21,700 shared tokens in the prefix), which
    # once ran a Spark worker out of memory (see the token-group test above), and the generated
    # z*.go syscall tables, whose many identical and near-identical sets give most of the pairs.
    # The whole tree took 87 s of the suite; it is measured by scripts/bench_spark.py --go.
    got, want, stderr = local_and_spark_rows(go_reference_src, tmp_path / "p", "--include", "[tz]*.go")
    assert "528 documents, 0 skipped" in stderr
    assert len(got) == 1296 and got == want


def test_cli_spark_usage_errors_exit_2_before_starting_spark(tmp_path):
    r = cli("join", "--engine", "spark", "-t", "0.5", TINY)
    assert r.exit_code == 2 and "-o DIR" in r.stderr
    r = cli("join", "-t", "0.5", "--parquet", TINY)  # read locally: a directory of text files is no Parquet dataset
    assert r.exit_code == 1 and "cannot read as Parquet" in r.stderr
    r = cli("join", "--engine", "spark", "-t", "0.5", "--format", "csv", TINY, "--count")
    assert r.exit_code == 2 and "--format" in r.stderr


def test_a_missing_java_runtime_is_one_clear_error(monkeypatch):
    from pyspark.sql import SparkSession

    monkeypatch.setattr(SparkSession, "getActiveSession", classmethod(lambda cls: None))
    monkeypatch.setenv("JAVA_HOME", "/nonexistent/java")
    with pytest.raises(SparkSetupError, match="needs a Java runtime.*openjdk-17-jre-headless"):
        get_session("local[1]")


def test_the_local_engine_imports_nothing_of_spark():
    code = ("import sys; from typer.testing import CliRunner; from allpairs.cli import app; "
            f"r = CliRunner().invoke(app, ['join', '-t', '0.5', '-s', 'word:1', {str(TINY)!r}]); "
            "assert r.exit_code == 0, r.output; "
            "print(sorted(m for m in sys.modules if m.split('.')[0] in ('pyspark', 'py4j', 'pyarrow') "
            "or m.startswith('allpairs.engines') or m == 'allpairs.spark'))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


@settings(max_examples=30, deadline=None)
@given(st.lists(st.lists(st.integers(-2**63, 2**63 - 1) | st.integers(0, 40), max_size=60), max_size=8))
def test_sorted_distinct_sorts_each_row_as_uint64_and_drops_repeats(rows):
    # The shingle pass's canonical sets (signed longs in Spark, sorted as uint64); rows past 16 keys take
    # the distribution sort.
    from allpairs.engines.spark.sets import sorted_distinct

    indptr = np.zeros(len(rows) + 1, np.int64)
    np.cumsum([len(r) for r in rows], out=indptr[1:])
    values = np.array([v for r in rows for v in r], np.int64)
    ptr, out = sorted_distinct(indptr, values)
    assert out.dtype == np.uint64
    assert [out[ptr[i]:ptr[i + 1]].tolist() for i in range(len(rows))] == \
        [sorted({v % 2**64 for v in r}) for r in rows]


@settings(max_examples=60, deadline=None)
@given(st.lists(st.lists(st.integers(0, 7) | st.integers(-2**63, 2**63 - 1), max_size=5), max_size=30),
       st.integers(0, 3), st.randoms(use_true_random=False))
@example([[1, 6], [2, 5], [3, 4], [1, 6], [2, 5, 7], [0]], 0, Random(1))
def test_identical_sets_are_the_smallest_ord_of_equal_keys_even_where_hashes_collide(docs, min_size, rnd):
    # The grouping pass hashes each set by its keys' xor and size: few small keys make same-size sets
    # collide ({1, 6} and {2, 5}), each then grouped by its bytes. Half the sets come again.
    from allpairs.engines.spark.sets import identical_sets

    docs = docs + rnd.sample(docs, len(docs) // 2)
    sets = [sorted({k % 2**64 for k in keys}) for keys in docs]
    ords = np.array(rnd.sample(range(10**6), len(sets)), np.int64)
    indptr = np.zeros(len(sets) + 1, np.int64)
    np.cumsum([len(s) for s in sets], out=indptr[1:])
    keys = np.array([k for s in sets for k in s], np.uint64).view(np.int64)
    kept = np.array([len(s) >= max(1, min_size) for s in sets], bool)
    got = identical_sets(indptr, keys, ords, kept)
    want = [min(int(ords[j]) for j in range(len(sets)) if sets[j] == sets[i]) if kept[i] else -1
            for i in range(len(sets))]
    assert got.tolist() == want


@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(st.lists(st.integers(-2**63, 2**63 - 1) | st.integers(0, 30), max_size=8),
                          st.booleans(), st.booleans(), st.none() | st.integers(0, 12)), max_size=40),
       st.lists(st.integers(1, 39), max_size=4), st.integers(1, 9), st.integers(1, 4))
def test_planning_counts_summed_by_hash_bucket_are_the_counts_of_every_document(docs, cuts, bits, reducers):
    # summarize's tasks hand on their partial counts as a row of bytes per bucket (the keys' top bits),
    # summed per bucket on the other side of a shuffle: whatever the tasks, batches and buckets, the totals
    # of all documents.
    import pyarrow as pa

    from allpairs.engines.spark import sets as S

    rows = [(k, None if not joined else k if own or k == 0 else k - 1, sorted(set(keys)), idh)
            for k, (keys, joined, own, idh) in enumerate(docs)]

    def batch(part):
        return pa.RecordBatch.from_arrays(
            [pa.array([r[0] for r in part], pa.int64()), pa.array([r[1] for r in part], pa.int64()),
             pa.array([r[2] for r in part], pa.list_(pa.int64())), pa.array([r[3] for r in part], pa.int64())],
            names=["ord", "set", "keys", "idh"])

    edges = sorted({0, len(rows), *(c for c in cuts if c < len(rows))})
    tasks = [rows[a:b] for a, b in zip(edges, edges[1:])] or [[]]
    by_reducer = {}
    for task in tasks:
        for out in S._partial_batches([batch(task[:3]), batch(task[3:])], True, True, bits):
            for j in range(out.num_rows):
                assert 0 <= out.column("b")[j].as_py() < 1 << bits
                by_reducer.setdefault(out.column("b")[j].as_py() % reducers, []).append(out.slice(j, 1))
    got = {}
    for part in by_reducer.values():
        for out in S._merged_batches(part):
            for kind, key, n in zip(*(out.column(c).to_pylist() for c in ("kind", "key", "n"))):
                assert (kind, key) not in got
                got[kind, key] = n
    distinct = [r for r in rows if r[1] == r[0]]
    shingles = {x: sum(x in r[2] for r in distinct) for r in distinct for x in r[2]}
    ids = {i: sum(r[3] == i for r in rows) for r in rows if (i := r[3]) is not None}
    want = {(S.SHINGLE, x): n for x, n in shingles.items() if n >= 2}
    want |= {(S.ID, i): n for i, n in ids.items() if n >= 2}
    if any(r[3] is None for r in rows):
        want[S.NULL_ID, 0] = sum(r[3] is None for r in rows)
    want |= {(S.COUNT, S.DOCUMENTS): len(rows), (S.COUNT, S.JOINED): sum(r[1] is not None for r in rows),
             (S.COUNT, S.DISTINCT): len(distinct), (S.COUNT, S.SHINGLES): sum(len(r[2]) for r in distinct)}
    assert got == want


# --- the API as a PySpark user meets it (issue 21, items 1-4; issue 24, item 8) ---


@contextmanager
def jobs_run(spark, name):
    """Count the Spark jobs started inside the block (a job group read back from the status tracker)."""
    sc = spark.sparkContext
    found = []
    sc.setJobGroup(name, name)
    try:
        yield found
    finally:
        sc.setLocalProperty("spark.jobGroup.id", None)
        found.extend(sc.statusTracker().getJobIdsForGroup(name))


def test_workers_that_cannot_import_pyarrow_are_one_error_before_any_job(spark, tmp_path, monkeypatch):
    from allpairs.engines.spark import session

    # As a session started from a venv's python whose workers run the system's python3.
    fake = tmp_path / "python3"
    fake.write_text("#!/bin/sh\necho \"ModuleNotFoundError: No module named 'pyarrow'\" >&2\nexit 1\n")
    fake.chmod(0o755)
    monkeypatch.setattr(session, "_workers_ok", set())
    df = spark.createDataFrame([("a", "x y z"), ("b", "x y w")], "id string, text string")
    for exe, why in ((str(fake), "cannot import pyarrow and allpairs (ModuleNotFoundError: No module named "
                                 "'pyarrow')"), (str(tmp_path / "missing"), "which is not found")):
        monkeypatch.setattr(spark.sparkContext, "pythonExec", exe)
        with jobs_run(spark, f"workers-{why}") as jobs:
            with pytest.raises(SparkSetupError) as e:
                allpairs.spark.join(df, 0.5, shingle="word:1")
        assert jobs == []
        assert why in str(e.value) and "PYSPARK_PYTHON" in str(e.value) and "\n" not in str(e.value)


def test_the_pairs_are_joined_once_count_then_write_reuse_them(spark, tmp_path):
    df = spark.createDataFrame([(i, f"a b c d{i % 3} e{i % 5}") for i in range(40)], "id long, text string")
    with jobs_run(spark, "plan") as planning:
        pairs = allpairs.spark.join(df, 0.5, shingle="word:1")
    with jobs_run(spark, "count") as first:
        n = pairs.count()
    with jobs_run(spark, "count again") as second:
        assert pairs.count() == n
    with jobs_run(spark, "write") as write:
        pairs.write.parquet(str(tmp_path / "out"))
    # The jobs the docstring names: ids checked and shingles counted in one pass, their counts merged (AQE may
    # split each); identical sets are not grouped by a job of their own before (allpairs.engines.spark.copies).
    assert 2 <= len(planning) <= 10, planning
    # Uncached, every action re-ran the join (7 jobs here); cached, it reads the stored pairs.
    assert len(first) >= 3 and len(second) <= 2 and len(write) <= 2, (first, second, write)
    assert spark.read.parquet(str(tmp_path / "out")).count() == n > 0
    pairs.unpersist()


#: Spark jobs of one join() and a count of its pairs, ids checked and a shingle given (issue 32; AQE shows a
#: shuffle's map stage as a job of its own): the planning pass and its map stages, the count's; 18 before,
#: 12 before small inputs were joined in one task (its shingles are counted: a DataFrame's size is unknown
#: before the planning pass).
JOBS_OF_ONE_JOIN = 7


def test_one_join_and_count_run_no_more_spark_jobs_than_counted(spark):
    # Planning used to run a job to check ids, one to group identical sets, two to count and collect the
    # shared shingles, and three after the join for the summary's counts; they are one pass now.
    df = spark.createDataFrame([(i, f"a b c d{i % 3} e{i % 5} f{i}") for i in range(60)], "id long, text string")
    with jobs_run(spark, "one join") as jobs:
        pairs = allpairs.spark.join(df, 0.5, shingle="word:1")
        n = pairs.count()
    pairs.unpersist()
    assert n > 0
    assert len(jobs) <= JOBS_OF_ONE_JOIN, f"{len(jobs)} Spark jobs, more than the {JOBS_OF_ONE_JOIN} counted"


#: Spark jobs of one join() and a count on the distributed plan (issue 32): the planning pass (ids checked,
#: each shingle's documents counted) and its merge, the hot tokens' histograms, the route, the members'
#: collect, the groups' joins and the count (AQE shows a shuffle's map stage as a job of its own): 8 for this
#: frame; the 1 M Zipf sets of scripts/bench_spark.py run 10 (15 before session 55, when identical sets were
#: grouped by a shuffle before the ranking and the members joined with the pairs by shuffles).
JOBS_OF_A_DISTRIBUTED_JOIN = 8


def test_a_distributed_join_and_count_run_no_more_spark_jobs_than_counted(spark):
    df = spark.createDataFrame([(i, f"a b c d{i % 3} e{i % 5} f{i}") for i in range(60)], "id long, text string")
    with jobs_run(spark, "one distributed join") as jobs:
        pairs = allpairs.spark.join(df, 0.5, shingle="word:1", one_task=False)
        n = pairs.count()
    pairs.unpersist()
    assert n > 0
    assert len(jobs) <= JOBS_OF_A_DISTRIBUTED_JOIN, \
        f"{len(jobs)} Spark jobs, more than the {JOBS_OF_A_DISTRIBUTED_JOIN} counted: {jobs}"


#: Spark jobs of the command line's join of the tiny corpus with -s given, counted (issue 32): the files are
#: read, decoded and their skipped ones counted by the planning pass; 9 before, with a job of their own; 8
#: before small inputs were joined in one task (no shingle counted, ranked, broadcast or routed; the
#: document pairs made by the one task: the planning pass and the join).
JOBS_OF_A_DIRECTORY = 2


def test_a_directory_with_its_shingle_known_is_read_by_the_planning_pass_not_a_job_of_its_own(spark):
    from allpairs.engines.spark.run import run

    with jobs_run(spark, "tiny, shingle given") as jobs:
        given = run(str(TINY), 0.5, shingle="word:1", count=True)
    # Without -s the texts choose the shingle: the files are read and counted by a job first, as before.
    chosen = run(str(TINY), 0.5, count=True)
    assert given.skipped == chosen.skipped == {"binary": 1, "no shingle": 1}, (given.skipped, chosen.skipped)
    assert given.documents == chosen.documents and given.pairs == 10
    assert len(jobs) <= JOBS_OF_A_DIRECTORY, f"{len(jobs)} Spark jobs, more than the {JOBS_OF_A_DIRECTORY} counted"


def test_a_bad_tree_on_spark_is_one_line_and_leaves_no_jvm_behind(tmp_path):
    # A path that is no directory is refused before the JVM starts; a tree with no file chosen once it runs,
    # and the run's end ends it.
    import time
    import uuid

    from test_spark_against import _with_marker

    for args, status, message in (([tmp_path / "missing"], 2, "no such directory"),
                                  ([TINY, "--include", "*.nothing"], 1, "the corpus is empty")):
        marker = uuid.uuid4().hex
        r = subprocess.run([sys.executable, "-m", "allpairs", "join", "--engine", "spark", "--master", "local[2]",
                            "-q", "-t", "0.5", *map(str, args), "--count"], capture_output=True, text=True,
                           env=dict(os.environ, ALLPAIRS_HARNESS=marker, SPARK_LOCAL_IP="127.0.0.1"))
        lines = r.stderr.splitlines()
        assert r.returncode == status and r.stdout == "" and len(lines) == 1 and message in lines[0], r
        survivors = _with_marker(marker)
        assert status != 2 or survivors == [], survivors  # none started: none could have ended so soon
        for _ in range(600):  # the JVM notices its driver is gone
            if not survivors:
                break
            time.sleep(0.05)
            survivors = _with_marker(marker)
        for pid in survivors:  # not left to the rest of the suite
            os.kill(pid, 9)
        assert not survivors, (args, survivors)


def test_a_trees_files_read_and_shingled_in_one_pass_give_the_documents_of_two(spark, tmp_path):
    # A local tree's decoded files are read and shingled by one Python task each (the texts never cross
    # into the JVM): the same (ord, id, okey, size, keys) rows as shingling the decoded frame's texts,
    # ord as monotonically_increasing_id numbers them, the skipped files counted and left out.
    from allpairs.engines.spark import sets
    from allpairs.engines.spark.files import SkipCounts, decoded, read_directory, skipped_by_reason, task_groups
    from allpairs.engines.spark.run import SparkRun
    from allpairs.shingles import ShingleSpec
    from pyspark.sql import functions as F

    for name, data in {"a.go": b"package a\nfunc f() { return 1 }\n", "b.c": b"int main() { return 0; }",
                       "c.go": b"\xff\xfe not UTF-8", "d.bin": b"\x00\x01", "e.py": b"\xef\xbb\xbfx = 1\n",
                       "sub/f.go": b"package a\nfunc f() { return 1 }\n", "g.go": b""}.items():
        (tmp_path / name).parent.mkdir(exist_ok=True)
        (tmp_path / name).write_bytes(data)
    skips = spark.sparkContext.accumulator({}, SkipCounts())
    files, _ = read_directory(spark, str(tmp_path), (), (), 0, SparkRun(None, "exact", "0.5", ""), skips)
    one_pass = decoded(files)
    two_passes = files.where(F.col("skip").isNull())
    assert task_groups(one_pass) is not None and task_groups(two_passes) is None
    spec = ShingleSpec.parse("code:2")
    got, want = (sets.docs_frame(df, id_col="id", text_col="text", tokens_col=None, order_col="id",
                                 language_col="language", spec=spec, normalize=True).orderBy("ord").collect()
                 for df in (one_pass, two_passes))
    assert got == want and len(got) == 5 and {r.id for r in got} == {"a.go", "b.c", "e.py", "sub/f.go", "g.go"}
    assert skipped_by_reason(skips.value) == {"binary": 1, "not UTF-8": 1}


def test_a_trees_files_are_dealt_into_tasks_of_about_equal_bytes():
    from allpairs.engines.spark.files import balanced

    sizes = [100, 1, 1, 1, 50, 50, 3, 2]
    groups = balanced(sizes, 3)
    # Each file once, in listing order within its task; the largest first to the task holding least.
    assert sorted(k for g in groups for k in g) == list(range(len(sizes)))
    assert all(g == sorted(g) for g in groups)
    assert sorted(sum(sizes[k] for k in g) for g in groups) == [54, 54, 100]
    assert balanced([5], 4) == [[0]]


def test_skipped_files_counted_twice_in_one_partition_are_counted_once():
    from allpairs.engines.spark.files import SkipCounts, skipped_by_reason

    param = SkipCounts()
    total = param.zero({})
    for update in ({0: (("binary", 1),)}, {1: (("binary", 2), ("not UTF-8", 1))}, {0: (("binary", 1),)}):
        total = param.addInPlace(total, update)
    assert skipped_by_reason(total) == {"binary": 3, "not UTF-8": 1}

def test_workers_are_forked_from_a_daemon_that_imported_the_join_once(spark):
    # Each Python worker imported numpy, pyarrow and allpairs itself on a session's first job (~3 s an
    # interpreter at load 11). Sessions allpairs starts name a daemon that imports them before it forks
    # the workers, and starts no thread doing so (a fork keeps only the forking thread). A reused worker
    # may have imported more since (numba, for a kernel run by numba in another test): the daemon's own
    # modules are what is checked.
    from allpairs.engines.spark.session import DAEMON_MODULE

    assert spark.sparkContext.getConf().get("spark.python.daemon.module") == DAEMON_MODULE

    def probe(batches):
        import pyarrow as pa

        daemon = sys.modules.get(DAEMON_MODULE)
        for _ in batches:
            yield pa.RecordBatch.from_pylist([{
                "pid": os.getpid(), "ppid": os.getppid(), "daemon": getattr(daemon, "PRELOADED_IN", -1),
                "threads": getattr(daemon, "THREADS", -1), "failed": getattr(daemon, "FAILED", "no daemon module"),
                "sets": "allpairs.engines.spark.sets" in getattr(daemon, "LOADED", ()),
                "heavy": ",".join(m for m in ("numba", "typer", "rich") if m in getattr(daemon, "LOADED", ())),
                "pandas": "pandas" in getattr(daemon, "LOADED", ()), "pyspark": sys.modules["pyspark"].__file__}])

    rows = spark.range(4, numPartitions=2).mapInArrow(
        probe, "pid long, ppid long, daemon long, threads long, failed string, sets boolean, heavy string, "
               "pandas boolean, pyspark string").collect()
    assert len(rows) == 2
    import pyspark

    for r in rows:
        assert r.ppid == r.daemon != r.pid, r  # the worker is a child of the daemon that imported the modules
        # No thread at the fork; the join's modules imported (pandas too: pyarrow imports it at a worker's
        # first pa.array of a list), and none that a task has no use for.
        assert r.failed is None and r.threads == 1 and r.sets and r.pandas and r.heavy == "", r
        # The installed pyspark (compiled once), not Spark's zip of the same sources (compiled at each import).
        assert r.pyspark == pyspark.__file__ and ".zip" not in r.pyspark, r


def test_workers_reuse_the_memory_their_tasks_freed(spark):
    # A worker's large arrays were mapped apart and unmapped when freed, so each task (and phase of one)
    # faulted its memory in anew: on this VM ~0.3-1.8 s of system time per token group's task at 1 M sets.
    # The daemon sets glibc's malloc to keep freed memory (forked workers inherit it): 64 MiB freed and
    # allocated again faults no page in (without it: 16,384 small pages, or 32 large ones).
    def probe(batches):
        import resource

        import numpy as np
        import pyarrow as pa

        daemon = sys.modules.get("allpairs.engines.spark_daemon")
        for _ in batches:
            a = np.ones(1 << 23)
            del a
            before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
            b = np.ones(1 << 23)
            faults = resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before
            del b
            yield pa.RecordBatch.from_pylist([{"keeps": getattr(daemon, "KEEPS_FREED", None), "faults": faults}])

    rows = spark.range(2, numPartitions=1).mapInArrow(probe, "keeps boolean, faults long").collect()
    assert rows[0].faults < 16 and rows[0].keeps is True, rows


def test_the_daemon_leaves_malloc_as_the_environment_sets_it(monkeypatch):
    from allpairs.engines import spark_daemon

    monkeypatch.setenv("MALLOC_TRIM_THRESHOLD_", "131072")
    assert spark_daemon.keep_freed_memory() is False


def test_the_daemon_drops_only_the_zip_of_the_installed_pyspark(tmp_path, monkeypatch):
    import pyspark

    from allpairs.engines import spark_daemon

    own = os.path.join(os.path.dirname(pyspark.__file__), "python", "lib", "pyspark.zip")
    other = str(tmp_path / "spark-home" / "python" / "lib" / "pyspark.zip")  # a distribution's own copy
    monkeypatch.setattr(sys, "path", [other, own, *sys.path])
    assert spark_daemon.installed_pyspark() == own
    assert sys.path[0] == other and own not in sys.path  # another Spark's zip stays where it was
    monkeypatch.setattr(sys, "path", [other, *sys.path])
    assert spark_daemon.installed_pyspark() is None and sys.path[0] == other  # no zip of the installed one


def test_schema_errors_name_the_column_before_any_job(spark):
    from allpairs.errors import UsageError

    df = spark.createDataFrame([(1, "x y", 7, 1.5, ["x"])], "id long, text string, n int, f double, toks array<string>")
    cases = [({"text_col": "body"}, "text_col 'body' is not a column of the DataFrame; its columns are id, text"),
             ({"id_col": "f"}, "id_col 'f' holds double; ids are strings or integers"),
             ({"id_col": "toks"}, "id_col 'toks' holds array<string>; ids are strings or integers"),
             ({"text_col": "n"}, "text_col 'n' holds int, not strings: cast it"),
             ({"text_col": "toks"}, "text_col 'toks' holds array<string>, not strings; an array of tokens goes in "
                                    "tokens_col"),
             ({"tokens_col": "f"}, "tokens_col 'f' holds double; give an array of strings or integers")]
    for options, message in cases:
        with jobs_run(spark, f"schema {options}") as jobs:
            with pytest.raises(UsageError) as e:
                allpairs.spark.join(df, 0.5, **options)
        assert jobs == [] and message in str(e.value) and "\n" not in str(e.value), (options, str(e.value))


def test_null_and_repeated_ids_are_refused_in_one_line(spark):
    from allpairs.errors import InputError

    null = spark.createDataFrame([(None, "a b c"), ("x", "a b c"), (None, "a b d")], "id string, text string")
    empty = spark.createDataFrame([("", "a b c"), ("x", "a b c"), ("y", "a b d")], "id string, text string")
    twice = spark.createDataFrame([(3, "a b c"), (5, "a b c"), (3, "a b d")], "key int, text string")
    # Either plan's planning pass (one task: the ids' hashes read on the driver).
    for one_task in (None, True):
        with pytest.raises(InputError, match=r"^id_col 'id' holds 2 null ids; every row needs an id"):
            allpairs.spark.join(null, 0.5, shingle="word:1", one_task=one_task)
        with pytest.raises(InputError, match=r"^id_col 'id' holds 1 empty ids; every row needs an id"):
            allpairs.spark.join(empty, 0.5, shingle="word:1", one_task=one_task)
        with pytest.raises(InputError, match=r"^id_col 'key': id 3 is given 2 times; ids must be different"):
            allpairs.spark.join(twice, 0.5, id_col="key", shingle="word:1", one_task=one_task)


def test_ids_keep_their_type_and_text_col_defaults_to_text(spark):
    texts = ["a b c d", "a b c e", "x y z", "a b c d"]
    for kind, ids in (("long", [10, 20, 30, 40]), ("string", ["p", "q", "r", "s"]), ("int", [1, 2, 3, 4])):
        df = spark.createDataFrame(list(zip(ids, texts)), f"id {kind}, text string")
        pairs = allpairs.spark.join(df, 0.5, shingle="word:1")
        assert dict(pairs.dtypes)["left"] == dict(pairs.dtypes)["right"] == ("bigint" if kind == "long" else kind)
        got = sorted((r.left, r.right, r.overlap) for r in pairs.collect())
        assert got == [(ids[0], ids[1], 3), (ids[0], ids[3], 4), (ids[1], ids[3], 3)]
        pairs.unpersist()


def test_options_are_those_of_allpairs_join_and_an_unknown_one_is_a_type_error(spark):
    from allpairs.errors import UsageError

    df = spark.createDataFrame([("a", "x y")], "id string, text string")
    with pytest.raises(TypeError, match=r"^allpairs\.spark\.join\(\) got an unexpected keyword argument 'treshold'"):
        allpairs.spark.join(df, 0.5, treshold=0.7)
    # against= is an R–S join now (tests/test_spark_dedup.py); the self-join's options do not apply to it.
    with pytest.raises(UsageError, match="max_group does not apply to an R–S join"):
        allpairs.spark.join(df, 0.5, against=df, max_group=5)
    with pytest.raises(UsageError, match="unknown measure 'cosinus'"):
        allpairs.spark.dedup(df, 0.5, measure="cosinus")
    with pytest.raises(UsageError, match="unknown measure 'cosinus'"):
        allpairs.spark.join(df, 0.5, measure="cosinus")


@settings(max_examples=3, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(st.lists(corpora(max_docs=16), min_size=3, max_size=6), st.sampled_from(["cosine", "dice"]),
       st.sampled_from([Fraction(1, 2), Fraction(7, 10), Fraction(2, 3), Fraction(9, 10), Fraction(1, 3),
                        Fraction(999999999, 10**9)]))
def test_cosine_and_dice_equal_the_oracle(spark, many, measure, t):
    # A Jaccard join at a bound low enough (t/(2-t) for Dice, t² for cosine), then the measure's own test.
    if refused_without_a_set(many, lambda: allpairs.spark.join(token_frame(spark, many), t, tokens_col="toks",
                                                                 order_col="n", measure=measure)):
        return
    for one_task in (False, True):
        pairs = allpairs.spark.join(token_frame(spark, many), t, tokens_col="toks", order_col="n", measure=measure,
                                    cache=False, one_task=one_task)
        got = by_corpus(pairs.collect())
        for c, sets in enumerate(many):
            assert got.get(c, []) == all_pairs(sets, t, measure), (c, sets, t, one_task)


def test_cli_refuses_a_bad_output_or_parquet_input_before_spark_starts(tmp_path, monkeypatch):
    import pyarrow as pa
    import pyarrow.parquet as pq

    from allpairs.engines.spark import run

    def no_spark(*args, **kwargs):
        raise AssertionError("Spark was started")

    monkeypatch.setattr(run, "get_session", no_spark)
    (tmp_path / "exists").mkdir()
    pq.write_table(pa.table({"id": ["a", "b"], "text": [1, 2], "toks": [["x"], ["y"]]}), tmp_path / "t.parquet")
    (tmp_path / "not.parquet").write_text("id,text\na,b\n")
    base = ["join", "--engine", "spark", "-t", "0.5"]
    cases = [
        ([TINY, "-o", tmp_path / "exists"], 2, f"{tmp_path / 'exists'} exists; remove it or choose another -o"),
        ([TINY, "-o", tmp_path / "no" / "out"], 1, f"output {tmp_path / 'no' / 'out'}: directory {tmp_path / 'no'} "
                                                   "does not exist"),
        (["--parquet", tmp_path / "missing", "--count"], 2, f"{tmp_path / 'missing'}: no such file or directory"),
        (["--parquet", tmp_path / "not.parquet", "--count"], 1, f"{tmp_path / 'not.parquet'}: cannot read as Parquet"),
        (["--parquet", tmp_path / "t.parquet", "--count"], 1, "column 'text' holds int64, not strings"),
        (["--parquet", tmp_path / "t.parquet", "--text-col", "body", "--count"], 1,
         "no column 'body' (it has "),
        (["--parquet", tmp_path / "t.parquet", "--tokens-col", "text", "--count"], 1,
         "column 'text' holds int64, not lists of strings"),
    ]
    for args, status, message in cases:
        r = cli(*base, *args)
        lines = [line for line in r.stderr.splitlines() if not line.startswith("Try ")]
        assert r.exit_code == status and len(lines) == 1 and message in lines[0], (args, r.stderr)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["exists", "not.parquet", "t.parquet"]


def test_cli_refuses_null_and_repeated_ids_as_the_local_engine_does(spark, tmp_path):
    import json

    import pyarrow as pa
    import pyarrow.parquet as pq

    pq.write_table(pa.table({"id": ["a", None, "c"], "text": ["x y z", "x y w", "x y z"]}), tmp_path / "n.parquet")
    (tmp_path / "d.jsonl").write_text("".join(json.dumps({"id": i, "text": "x y z"}) + "\n" for i in ("a", "b", "a")))
    (tmp_path / "e.jsonl").write_text("".join(json.dumps({"id": i, "text": "x y z"}) + "\n" for i in ("a", "", "c")))
    for args, message in ((["--parquet", tmp_path / "n.parquet"], "holds 1 null ids"),
                          (["--jsonl", tmp_path / "d.jsonl"], "id 'a' is given 2 times"),
                          (["--jsonl", tmp_path / "e.jsonl"], "holds 1 empty ids"),
                          (["--jsonl", tmp_path / "e.jsonl", "--against", tmp_path / "d.jsonl"], "holds 1 empty ids")):
        local = cli("join", "-t", "0.5", *args, "--count")
        assert local.exit_code == 1, local.stderr
        r = cli("join", "--engine", "spark", "-t", "0.5", *args, "--count")
        assert r.exit_code == 1 and r.stderr.count("\n") == 1 and message in r.stderr, r.stderr
        assert "Traceback" not in r.stderr and r.stdout == ""


def test_cli_spark_takes_cosine_and_dice(spark, tmp_path):
    for measure in ("cosine", "dice"):
        local = cli("join", "-t", "0.6", "-s", "word:1", "--measure", measure, TINY, "--count")
        r = cli("join", "--engine", "spark", "-t", "0.6", "-s", "word:1", "--measure", measure, TINY, "--count")
        assert r.exit_code == 0 and r.stdout == local.stdout, r.stderr


def _free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextmanager
def standalone_cluster(tmp_path):
    """A Spark standalone master and one worker on 127.0.0.1, each its own JVM, as on real machines;
    yields the master URL once the master is elected, with the worker starting (a driver started
    meanwhile waits for it), and a function that waits for the worker's registration; stops both
    afterwards. The worker offers 4 cores and 1.5 GiB: two drivers asking for 2 cores and 512 MiB each
    (``spark.cores.max``) get their executors at once, side by side."""
    import os
    import time

    import pyspark

    spark_class = Path(pyspark.__file__).parent / "bin" / "spark-class"
    # Lean: the daemons' heaps 256 MiB, the worker offers 1.5 GiB (a driver asks 512 MiB per executor).
    env = dict(os.environ, SPARK_LOCAL_IP="127.0.0.1", SPARK_WORKER_DIR=str(tmp_path / "work"),
               SPARK_LOG_DIR=str(tmp_path / "logs"), SPARK_NO_DAEMONIZE="1", SPARK_DAEMON_MEMORY="256m",
               SPARK_DAEMON_JAVA_OPTS=LOCAL_JVM_OPTIONS)
    port = _free_port()
    url = f"spark://127.0.0.1:{port}"
    started = []

    def start(name, args):
        with open(tmp_path / f"{name}.log", "wb") as f:
            started.append(subprocess.Popen([str(spark_class), *args], env=env, stdout=f, stderr=subprocess.STDOUT))
        return started[-1]

    def wait(name, proc, ready):
        log = tmp_path / f"{name}.log"
        deadline = time.monotonic() + 120
        while ready not in log.read_text(errors="replace"):
            assert proc.poll() is None and time.monotonic() < deadline, \
                f"the {name} did not start: {log.read_text(errors='replace')[-2000:]}"
            time.sleep(0.2)

    try:
        master = start("master", ["org.apache.spark.deploy.master.Master", "--host", "127.0.0.1", "--port",
                                  str(port), "--webui-port", str(_free_port())])
        # The worker only once the master listens: a worker that misses it retries 5-15 s later.
        wait("master", master, "I have been elected leader")
        worker = start("worker", ["org.apache.spark.deploy.worker.Worker", url, "--host", "127.0.0.1", "--cores",
                                  "4", "--memory", "1536m", "--webui-port", str(_free_port())])
        yield url, lambda: wait("worker", worker, "Successfully registered with master")
    finally:
        for proc in reversed(started):
            proc.terminate()
            try:
                proc.wait(30)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(30)


@pytest.mark.long_running
def test_a_standalone_cluster_runs_join_and_dedup_as_the_local_engine_and_q_leaves_stderr_empty(tmp_path):
    # A master and a worker in JVMs of their own, and two drivers side by side in processes of their own
    # (one SparkContext per process: the session of the other tests is local[2]), each an application of
    # 2 cores: a join and a dedup give the local engine's counts; -q keeps every JVM log line off stderr.
    if find_java() is None:
        pytest.skip("no Java runtime (JAVA_HOME or java on PATH)")
    from test_spark_dedup import lines_file

    path = lines_file(tmp_path, n=120, seed=2)
    commands = {"join": ["join", "-t", "0.5", "-s", "word:1", str(TINY), "--count"],
                "dedup": ["dedup", "-t", "0.6", "-s", "word:1", "--lines", str(path), "--count"]}
    local = {what: subprocess.run([sys.executable, "-m", "allpairs", *args, "-q"], capture_output=True, text=True)
             for what, args in commands.items()}
    submit = (f"--conf spark.executor.memory=512m --conf spark.cores.max=2 --conf spark.executorEnv.PYTHONPATH={REPO} "
              f"--conf 'spark.executor.extraJavaOptions={LOCAL_JVM_OPTIONS}' --driver-memory 512m pyspark-shell")
    # Each driver's JVM keeps its scratch (blockmgr-*, spark-*, artifacts-*) in folders of its own here: it
    # must remove it as it ends (once it was killed as the program ended, and left it in /tmp).
    scratch = {what: [tmp_path / f"{what}-local", tmp_path / f"{what}-tmp"] for what in commands}
    for folder in (f for fs in scratch.values() for f in fs):
        folder.mkdir()
    with standalone_cluster(tmp_path) as (url, worker_registered):
        # The drivers start their JVMs while the worker starts its own; their jobs wait for the worker.
        drivers = {what: subprocess.Popen(
            [sys.executable, "-m", "allpairs", *args[:1], "--engine", "spark", "--master", url, "-q", *args[1:]],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
            env=dict(os.environ, SPARK_LOCAL_IP="127.0.0.1", PYSPARK_PYTHON=sys.executable,
                     SPARK_LOCAL_DIRS=str(scratch[what][0]),
                     PYSPARK_SUBMIT_ARGS=f"--conf 'spark.driver.extraJavaOptions={LOCAL_JVM_OPTIONS} "
                                         f"-Djava.io.tmpdir={scratch[what][1]}' " + submit))
            for what, args in commands.items()}
        try:
            worker_registered()
            got = {what: driver.communicate(timeout=600) for what, driver in drivers.items()}
        finally:
            for driver in drivers.values():
                if driver.poll() is None:
                    driver.kill()
                    driver.wait(30)
    for what, (stdout, stderr) in got.items():
        assert drivers[what].returncode == 0 and stderr == "", (what, stderr[-3000:])
        assert stdout == local[what].stdout and int(stdout) > 0, what
    assert int(got["join"][0]) == 10
    from test_cli_signals import left_in

    assert {what: left_in(folders) for what, folders in scratch.items()} == {what: [] for what in commands}


def test_a_local_session_shuffles_into_four_partitions_per_core_not_200(spark):
    # Spark's default of 200 made every shuffled stage 200 Python tasks: 834 tasks for the tiny corpus.
    import os

    from allpairs.engines.spark.session import local_cores

    assert [local_cores(m) for m in ("local", "local[2]", "local[ 3 ]", "local[4, 2]", "local[*]")] == \
        [1, 2, 3, 4, os.cpu_count()]
    assert spark.conf.get("spark.sql.shuffle.partitions") == "2"  # the fixture's conf wins over the default


def test_the_session_allpairs_starts_maps_or_writes_the_jvm_class_archive(spark):
    # get_session started the fixture's JVM: with the archive of an earlier run mapped, else writing one as it
    # ends (tests/test_spark_class_archive.py runs both with a JVM of its own).
    from allpairs.engines.spark import class_archive

    if class_archive.folder() is None:
        pytest.skip(f"{class_archive.ENV}=off")
    options = spark.sparkContext.getConf().get(class_archive.SETTING, "")
    where = class_archive.folder() / class_archive.key(find_java(), {})
    if not options and ((where / "unusable").exists() or any(where.glob("classes.*.tmp"))):
        pytest.skip("another run was writing the archive, or this JDK cannot write one")
    assert "-XX:SharedArchiveFile=" in options or "-XX:ArchiveClassesAtExit=" in options, options
    assert "-Xlog:cds*=off" in options  # nothing of the JVM's CDS messages on stdout, where a count goes


def test_the_jvm_writes_its_log_on_a_pipe_of_this_process_not_on_the_callers_streams(spark):
    # The JVM outlives the run by a few tenths of a second (its shutdown): on the caller's stdout and stderr it
    # kept a caller reading them (``$(allpairs ...)``, subprocess.run) waiting that long. It writes on a pipe
    # whose read end this process holds (a thread copies it to stderr); stdout, for data, is not its.
    import threading

    proc = getattr(spark.sparkContext._gateway, "proc", None)
    if proc is None or not os.path.isdir(f"/proc/{proc.pid}/fd"):
        pytest.skip("the session's JVM was not started here, or no /proc")
    out, err = (os.readlink(f"/proc/{proc.pid}/fd/{fd}") for fd in (1, 2))
    assert out == err and err.startswith("pipe:"), (out, err)
    ours = {}
    for fd in os.listdir("/proc/self/fd"):
        try:
            ours[os.readlink(f"/proc/self/fd/{fd}")] = int(open(f"/proc/self/fdinfo/{fd}").read().split("flags:")[1]
                                                         .split()[0], 8)
        except (OSError, IndexError):
            continue
    assert err in ours and ours[err] & os.O_ACCMODE == os.O_RDONLY  # the read end, here
    assert any(t.name == "allpairs-jvm-log" and t.is_alive() for t in threading.enumerate())


def test_a_command_line_run_shows_none_of_the_jvms_notices_about_allpairs_own_settings():
    # Spark 4's JVM says on stderr that it loads an incubating module, and Spark warns (three times a run) that
    # minPartitionNum, which allpairs sets on local masters, is deprecated: nothing a user can act on, so
    # neither reaches stderr; the run's own lines do.
    from allpairs.engines.spark.session import JVM_NOTICE, _shown

    assert _shown(JVM_NOTICE + b"x WARN y\n") == b"x WARN y\n" and _shown(b"x\n" + JVM_NOTICE) == b"x\n" + JVM_NOTICE
    r = subprocess.run([sys.executable, "-m", "allpairs", "join", "--engine", "spark", "--master", "local[1]",
                        "-t", "0.5", "-s", "word:1", str(TINY), "--count"], capture_output=True, text=True,
                       env=dict(os.environ, SPARK_LOCAL_IP="127.0.0.1"))
    assert r.returncode == 0 and r.stdout == "10\n", r
    assert "incubator" not in r.stderr and "minPartitionNum" not in r.stderr, r.stderr
    assert "allpairs: spark local[1]: 8 documents" in r.stderr, r.stderr


def test_a_small_local_input_starts_the_jvm_with_the_quick_compiler_only(tmp_path, monkeypatch):
    # A short run's JVM spends more on C2 compiling than C2's faster code saves (docs/spark.md): a local
    # master and an input under QUICK_JVM_BELOW get LOCAL_JVM_OPTIONS; anything else the JVM's defaults.
    from allpairs.engines.spark import run
    from allpairs.engines.spark.session import JVM_OPTION_VARIABLES, LOCAL_JVM_OPTIONS

    monkeypatch.setattr(run, "_spark_active", lambda: False)
    for name in JVM_OPTION_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    quick = {"spark.driver.extraJavaOptions": LOCAL_JVM_OPTIONS}
    assert run.session_conf(None, [TINY], None) == quick
    assert run.session_conf("local[2]", [TINY, TINY], {"spark.driver.memory": "6g"}) == {**quick,
                                                                                         "spark.driver.memory": "6g"}
    mine = {"spark.driver.extraJavaOptions": "-Xss4m"}
    assert run.session_conf("local[2]", [TINY], mine) == mine  # the caller's options stay
    assert run.session_conf("spark://127.0.0.1:7077", [TINY], None) == {}  # a cluster's executors: their own JVMs
    assert run.session_conf("local[2]", ["hdfs://host/corpus"], None) == {}  # size unknown
    monkeypatch.setattr(run, "QUICK_JVM_BELOW", 600)
    assert run.session_conf("local[2]", [TINY], None) == quick  # 316 bytes
    assert run.session_conf("local[2]", [TINY, TINY], None) == {}  # 632 bytes in all
    monkeypatch.setenv("JAVA_TOOL_OPTIONS", "-XX:+UseG1GC")
    assert run.session_conf("local[2]", [TINY], None) == {}  # with the serial collector two: the JVM would not start
    monkeypatch.delenv("JAVA_TOOL_OPTIONS")
    monkeypatch.setattr(run, "_spark_active", lambda: True)
    assert run.session_conf("local[2]", [TINY], None) == {}  # the running JVM keeps its options


def test_a_jvm_started_for_a_local_master_gets_the_parallel_collector_unless_jvm_options_are_given(tmp_path,
                                                                                                    monkeypatch):
    # The parallel collector cost a session's first 1 M join less JVM CPU than G1 (docs/spark.md): added to the
    # JVM allpairs starts for a local master. A collector named anywhere else beside it would be two, and the JVM
    # refuses to start with two: then none is added, nor to a JVM that runs already or a cluster's.
    from allpairs.engines.spark import class_archive, session

    monkeypatch.setattr(session, "_jvm_running", lambda: False)
    monkeypatch.setattr(class_archive, "conf_dir", lambda: tmp_path)
    for name in session.JVM_OPTION_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    gc = session.LOCAL_GC_OPTION
    assert session._gc_option("local[2]", {}) == gc
    assert session._gc_option("local[*]", {"spark.driver.memory": "6g"}) == gc
    assert session._gc_option("spark://127.0.0.1:7077", {}) is None
    for key in ("spark.driver.extraJavaOptions", "spark.driver.defaultJavaOptions"):
        assert session._gc_option("local[2]", {key: "-Xss4m"}) is None
    monkeypatch.setenv("PYSPARK_SUBMIT_ARGS", "--driver-memory 2g pyspark-shell")
    assert session._gc_option("local[2]", {}) == gc
    for name, value in (("JAVA_TOOL_OPTIONS", "-XX:+UseZGC"), ("PYSPARK_SUBMIT_ARGS", "--driver-java-options -Xss4m x"),
                        ("PYSPARK_SUBMIT_ARGS", "--conf spark.driver.extraJavaOptions=-Xss4m pyspark-shell")):
        monkeypatch.setenv(name, value)
        assert session._gc_option("local[2]", {}) is None, (name, value)
        monkeypatch.delenv(name, raising=False)
    (tmp_path / "spark-defaults.conf").write_text("spark.driver.extraJavaOptions -XX:+UseG1GC\n")
    assert session._gc_option("local[2]", {}) is None
    (tmp_path / "spark-defaults.conf").write_text("spark.driver.memory 2g\n")
    assert session._gc_option("local[2]", {}) == gc
    monkeypatch.setattr(session, "_jvm_running", lambda: True)
    assert session._gc_option("local[2]", {}) is None  # the running JVM keeps its collector


def test_the_session_of_the_tests_runs_the_parallel_collector(spark):
    # The session fixture names no JVM options: its JVM was started with LOCAL_GC_OPTION.
    from allpairs.engines.spark.session import JVM_OPTION_VARIABLES, LOCAL_GC_OPTION

    proc = getattr(spark.sparkContext._gateway, "proc", None)
    if proc is None or not os.path.isfile(f"/proc/{proc.pid}/cmdline") or any(
            os.environ.get(name) for name in JVM_OPTION_VARIABLES):
        pytest.skip("the session's JVM was not started here, or JVM options come from the environment")
    assert LOCAL_GC_OPTION in open(f"/proc/{proc.pid}/cmdline").read().split("\0")


def test_a_small_input_with_no_master_is_joined_by_the_local_engine_as_spark_writes_it(spark, tmp_path, monkeypatch):
    # Starting Spark takes 10-30 s, the tiny corpus's join a fraction of one: with no --master (and no
    # running session) an input under LOCAL_BELOW bytes is joined locally, into the same dataset.
    import pyarrow.parquet as pq

    from allpairs.engines.spark import run

    args = ["join", "--engine", "spark", "-t", "0.5", "-s", "word:1", TINY]
    r = cli(*args, "-o", tmp_path / "spark")
    assert r.exit_code == 0 and "local engine" not in r.stderr, r.stderr

    def no_spark(*a, **k):
        raise SparkSetupError("Spark was started")

    monkeypatch.setattr(run, "_spark_active", lambda: False)
    monkeypatch.setattr(run, "get_session", no_spark)
    r = cli(*args, "-o", tmp_path / "local")
    assert r.exit_code == 0, r.stderr
    note = [line for line in r.stderr.splitlines() if "joined by the local engine" in line]
    assert note == [f"allpairs: {TINY} holds 316 bytes (under 1,048,576) and no --master was given: joined by the "
                    "local engine, not Spark; give --master local[*] to run Spark"]
    assert pq.read_table(tmp_path / "local").equals(pq.read_table(tmp_path / "spark"))
    assert sorted(p.name for p in (tmp_path / "local").iterdir()) == ["part-00000.parquet"]
    r = cli(*args, "--count", "-q")
    assert r.exit_code == 0 and r.stdout == "10\n" and r.stderr == ""
    # Never with a master given, nor above the size, nor for Parquet input: those start Spark.
    for extra in (["--master", "local[2]", TINY], [TINY]):
        if extra == [TINY]:
            monkeypatch.setattr(run, "LOCAL_BELOW", 316)
        r = cli(*args[:-1], *extra, "--count")
        assert r.exit_code == 1 and "Spark was started" in r.stderr, (extra, r.stderr)
    import pyarrow as pa

    pq.write_table(pa.table({"id": ["a", "b"], "text": ["x y", "x z"]}), tmp_path / "t.parquet")
    r = cli("join", "--engine", "spark", "-t", "0.5", "--parquet", tmp_path / "t.parquet", "--count")
    assert r.exit_code == 1 and "Spark was started" in r.stderr, r.stderr


def test_lines_carry_their_text_beside_each_pair_as_locally(spark, tmp_path, monkeypatch):
    # The local engine carries each line of --lines beside the pair (left_text, right_text); Spark's self-join
    # wrote the pair columns alone. Spark and the small input's local run write the same dataset.
    import pyarrow.parquet as pq

    from allpairs.engines.spark import run

    lines = tmp_path / "lines.txt"
    lines.write_text("the quick brown fox\nthe quick brown fox jumps\n\nlorem ipsum\nLorem ipsum!\n")
    args = ["join", "-q", "-t", "0.5", "-s", "word:1", "--lines", lines]
    assert cli(*args, "-o", tmp_path / "local.parquet").exit_code == 0
    r = cli(*args, "--engine", "spark", "--master", "local[2]", "-o", tmp_path / "spark")
    assert r.exit_code == 0, r.output
    got = pq.read_table(tmp_path / "spark")
    want = pq.read_table(tmp_path / "local.parquet")
    assert got.column_names == want.column_names == ["left", "right", "similarity", "overlap", "left_size",
                                                     "right_size", "left_text", "right_text"]
    assert [[str(v) for v in row.values()] for row in got.to_pylist()] == \
        [[str(v) for v in row.values()] for row in want.to_pylist()] == \
        [["1", "2", "0.8", "4", "4", "5", "the quick brown fox", "the quick brown fox jumps"],
         ["4", "5", "1.0", "2", "2", "2", "lorem ipsum", "Lorem ipsum!"]]
    monkeypatch.setattr(run, "_spark_active", lambda: False)
    r = cli(*args, "--engine", "spark", "-o", tmp_path / "small")
    assert r.exit_code == 0 and pq.read_table(tmp_path / "small").equals(got), r.output


def test_a_worker_s_error_names_flags_on_the_command_line_and_parameters_in_python():
    # A worker's error reaches the driver as traceback text: its template rides along as a note, so that
    # a missing JSON Lines field reads --id-col on the command line, as the local engine's does.
    import traceback

    from allpairs.cli._app import message
    from allpairs.engines.spark.run import _from_spark_error
    from allpairs.errors import InputError

    try:
        raise InputError("line 3 has no field 'key' ({{id_field=key}})", param="id_field")
    except InputError as raised:
        text = "".join(traceback.format_exception(raised))
    err = _from_spark_error(RuntimeError("Python worker failed:\n" + text + "\n\tat org.apache.spark..."))
    assert isinstance(err, InputError)
    assert str(err) == "line 3 has no field 'key' (id_field='key')"
    assert message(err) == "line 3 has no field 'key' (--id-col key)"


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(-2**63, 2**63 - 1), max_size=300, unique=True),
       st.lists(st.lists(st.integers(0, 400), max_size=30), max_size=40), st.randoms(use_true_random=False))
def test_a_sets_keys_are_ranked_as_the_rank_table_says_whether_found_or_not(table_keys, rows, rnd):
    import pyarrow as pa

    from allpairs.engines.spark.arrow import csr, key_array
    from allpairs.engines.spark.sets import _lookup_batches, rank_table

    ranks = list(range(len(table_keys)))
    rnd.shuffle(ranks)
    rank_of = dict(zip(table_keys, ranks))
    # Row keys drawn from the table (by index) and from outside it (other values).
    pool = table_keys + [k * 7919 + 1 for k in range(400)]
    sets = [sorted({pool[i % len(pool)] for i in row}) for row in rows]
    indptr = np.concatenate([[0], np.cumsum([len(r) for r in sets])]).astype(np.int64)
    keys = np.array([k for r in sets for k in r], np.int64)
    column = key_array(indptr, keys)
    assert [list(map(int, csr(column)[1][a:b])) for a, b in zip(indptr[:-1], indptr[1:])] == sets

    class Broadcast:
        value = rank_table(np.array(table_keys, np.int64), np.array(ranks, np.int32))

    batch = pa.RecordBatch.from_arrays([pa.array(range(len(sets)), pa.int64()),
                                        pa.array([len(r) for r in sets], pa.int32()), column],
                                       names=["set", "size", "keys"])
    got = [b for b in _lookup_batches([batch], Broadcast)]
    want = [sorted(rank_of[k] for k in r if k in rank_of) for r in sets]
    assert sum((b.column("ranks").to_pylist() for b in got), []) == want
    assert sum((b.column("n_single").to_pylist() for b in got), []) == [len(r) - len(w) for r, w in zip(sets, want)]


@st.composite
def _rank_lookups(draw):
    """A rank table (distinct uint64 keys, distinct int32 ranks up to 2**31 - 1) bucketed by a drawn number of
    top bits (1: a few long buckets) or by :func:`rank_table`'s, and rows of keys in it and not in it (none,
    one, many a row), the rows a slice of a longer CSR (``indptr[0] > 0``), as a batch's column may be."""
    key = st.one_of(st.integers(0, 2**64 - 1), st.integers(0, 50), st.integers(2**64 - 50, 2**64 - 1),
                    st.integers(2**63 - 25, 2**63 + 25))
    table = draw(st.lists(key, max_size=150, unique=True))
    rank = st.one_of(st.integers(0, 2**31 - 1), st.integers(0, 2**22 + 5), st.integers(0, 2 * len(table) + 1))
    ranks = draw(st.lists(rank, min_size=len(table), max_size=len(table), unique=True))
    outside = draw(st.lists(key, max_size=40, unique=True).map(lambda ks: [k for k in ks if k not in set(table)]))
    pool = table + outside
    rows = draw(st.lists(st.lists(st.integers(0, max(0, len(pool) - 1)), max_size=40, unique=True)
                         .map(lambda r: [pool[i] for i in r] if pool else []), max_size=30))
    return table, ranks, rows, draw(st.integers(0, 3)), draw(st.one_of(st.none(), st.integers(1, 9)))


@pytest.mark.kernel_paths("compiled", "python", "jit")
@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_rank_lookups())
def test_lookup_ranks_gives_each_rows_found_keys_ranks_sorted_as_a_dict_does(case):
    from allpairs.engines.spark._kernel import lookup_ranks
    from allpairs.engines.spark.sets import rank_table

    table, ranks, rows, lead, bits = case
    if bits is None:  # the engine's own table
        keys, by_key, offsets, shift = rank_table(np.array(table, np.uint64).view(np.int64), np.array(ranks, np.int32))
    else:  # buckets of the top ``bits`` bits: long ones, empty ones
        order = sorted(range(len(table)), key=table.__getitem__)
        keys, by_key = np.array([table[i] for i in order], np.uint64), np.array([ranks[i] for i in order], np.int32)
        shift = np.uint64(64 - bits)
        offsets = np.zeros((1 << bits) + 1, np.int64)
        np.cumsum(np.bincount((keys >> shift).astype(np.int64), minlength=1 << bits), out=offsets[1:])
    # ``lead`` keys before the rows' (another row's, not looked up).
    flat = [2**64 - 1 - k for k in range(lead)] + [k for r in rows for k in r]
    indptr = lead + np.concatenate([[0], np.cumsum([len(r) for r in rows])]).astype(np.int64)
    ptr, got = lookup_ranks(indptr, np.array(flat, np.uint64), keys, offsets, shift, by_key)
    rank_of = dict(zip(table, ranks))
    want = [sorted(rank_of[k] for k in r if k in rank_of) for r in rows]
    assert ptr.dtype == np.int64 and got.dtype == np.int32
    assert [got[a:b].tolist() for a, b in zip(ptr[:-1], ptr[1:])] == want


@settings(max_examples=60, deadline=None)
@given(st.integers(2, 60), st.lists(st.lists(st.integers(0, 80), min_size=1, max_size=25), max_size=40),
       st.integers(0, 20), st.sampled_from(THRESHOLDS), st.randoms(use_true_random=False))
def test_the_hot_tokens_histograms_found_by_keys_or_ranks_count_their_prefix_routes(n_shared, rows, n_hot, t, rnd):
    # The histograms find a set's hot tokens (the top ranks) among its keys, or its ranks, without ranking
    # its other tokens: the same counts as routing the ranked set and keeping the routes to hot tokens.
    import pyarrow as pa

    from allpairs.engines.spark.arrow import key_array, numpy
    from allpairs.engines.spark.exact import _histogram_batches, _routes
    from allpairs.engines.spark.sets import _lookup_batches, rank_table
    from allpairs.measures import Threshold

    t = Threshold.parse(t)
    table_keys = rnd.sample(range(-2**40, 2**40), n_shared)
    rank_of = {k: r for r, k in enumerate(table_keys)}  # ranks 0 .. n_shared - 1, the top n_hot hot
    pool = table_keys + [k * 7919 + 1 for k in range(81)]  # shared keys and keys of one set only
    sets = [sorted({pool[i % len(pool)] for i in row}) for row in rows]
    indptr = np.concatenate([[0], np.cumsum([len(r) for r in sets])]).astype(np.int64)
    batch = pa.RecordBatch.from_arrays(
        [pa.array(range(len(sets)), pa.int64()), pa.array([len(r) for r in sets], pa.int32()),
         key_array(indptr, np.array([k for r in sets for k in r], np.int64))], names=["set", "size", "keys"])
    # Through Arrow's stream format, as a task reads it from Spark (its buffers read-only).
    sink = pa.BufferOutputStream()
    with pa.ipc.new_stream(sink, batch.schema) as writer:
        writer.write_batch(batch)
    batch = pa.ipc.open_stream(sink.getvalue()).read_next_batch()

    class Broadcast:
        value = rank_table(np.array(table_keys, np.int64), np.arange(n_shared, dtype=np.int32))

    ranked = list(_lookup_batches([batch], Broadcast))
    hot = np.arange(max(0, n_shared - n_hot), n_shared, dtype=np.int32)
    want = {}
    for b in ranked:
        row, g = _routes(b, t.p, t.q)
        size = numpy(b.column("size"), np.int64)
        for r, gv in zip(row.tolist(), g.tolist()):
            if gv in set(hot.tolist()):
                want[(gv, int(size[r]))] = want.get((gv, int(size[r])), 0) + 1
    hot_keys = np.array(sorted(k for k in table_keys if rank_of[k] >= n_shared - n_hot), np.int64)
    hot_key_ranks = np.array([rank_of[k] for k in hot_keys.tolist()], np.int32)
    for got in (_histogram_batches([batch], t.p, t.q, "keys", hot_keys, hot_key_ranks),
                _histogram_batches(ranked, t.p, t.q, "ranks", hot, hot)):
        counts = {}
        for out in got:
            for gv, s, n in zip(*(out.column(c).to_pylist() for c in ("g", "size", "n"))):
                counts[(gv, s)] = counts.get((gv, s), 0) + n
        assert counts == want


def test_modules_imported_while_the_jvm_starts_leave_a_failing_one_to_pyspark(monkeypatch):
    from allpairs.engines.spark import session

    monkeypatch.setattr(session, "IMPORTED_WHILE_THE_JVM_STARTS", ("allpairs_no_such_module", "fractions"))
    session._import_while_the_jvm_starts().join(60)  # the failing import raises nothing; the next one is made
    assert "fractions" in sys.modules and "allpairs_no_such_module" not in sys.modules


#: Parquet's encodings by name (parquet.thrift's enum Encoding), as pyarrow names them.
ENCODINGS = {"PLAIN": 0, "PLAIN_DICTIONARY": 2, "RLE": 3, "BIT_PACKED": 4, "DELTA_BINARY_PACKED": 5,
             "DELTA_LENGTH_BYTE_ARRAY": 6, "DELTA_BYTE_ARRAY": 7, "RLE_DICTIONARY": 8, "BYTE_STREAM_SPLIT": 9}


def _hadoop_crc(data: bytes, per: int = 512) -> bytes:
    """A Hadoop checksum file of ``data``, as its local file system writes one (``.NAME.crc``)."""
    import struct
    import zlib

    return b"crc\0" + struct.pack(">i", per) + b"".join(struct.pack(">I", zlib.crc32(data[i:i + per]))
                                                        for i in range(0, len(data), per))


def test_spark_s_dataset_gets_names_without_the_job_uuid_and_sorted_encodings_with_valid_checksums(tmp_path):
    # parquet-mr lists a column chunk's encodings in a HashSet's order, new in every JVM (apache/parquet-java
    # issue 3215): two runs of the same job differed in those footer bytes, and in the job's UUID in the names.
    import pyarrow as pa
    import pyarrow.parquet as pq

    from allpairs.engines.spark.dataset import encoding_lists, make_reproducible

    table = pa.table({"id": [f"d{i % 7}" for i in range(300)], "n": list(range(300)),
                      "toks": [[f"t{i % 3}", None] if i % 5 else None for i in range(300)]},
                     metadata={"org.apache.spark.version": "4.0.0"})
    plain = tmp_path / "plain.parquet"
    pq.write_table(table, plain, row_group_size=100)  # three row groups, a nested column, key-value metadata
    data = plain.read_bytes()
    length = int.from_bytes(data[-8:-4], "little")
    start = len(data) - 8 - length
    lists = encoding_lists(data[start:-8])
    meta = pq.ParquetFile(plain).metadata
    want = [[ENCODINGS[e] for e in meta.row_group(g).column(c).encodings]
            for g in range(meta.num_row_groups) for c in range(meta.num_columns)]
    assert [values for _, _, values in lists] == want and len(want) == 9
    # The lists reversed, as another JVM might order them (small values: a zigzag varint is one byte, 2v).
    shuffled = bytearray(data)
    for s, e, values in lists:
        shuffled[start + s:start + e] = bytes(2 * v for v in reversed(values))
    assert bytes(shuffled) != data or all(len(v) < 2 for v in want)
    folder = tmp_path / "dataset"
    folder.mkdir()
    name = "part-00003-0f0e8c2a-1b2c-4d5e-8f90-a1b2c3d4e5f6-c000.snappy.parquet"
    (folder / name).write_bytes(bytes(shuffled))
    (folder / f".{name}.crc").write_bytes(_hadoop_crc(bytes(shuffled)))
    (folder / "_SUCCESS").write_bytes(b"")
    (folder / "._SUCCESS.crc").write_bytes(_hadoop_crc(b""))
    make_reproducible(str(folder))
    assert sorted(p.name for p in folder.iterdir()) == ["._SUCCESS.crc", ".part-00003-c000.snappy.parquet.crc",
                                                        "_SUCCESS", "part-00003-c000.snappy.parquet"]
    got = (folder / "part-00003-c000.snappy.parquet").read_bytes()
    assert len(got) == len(data) and pq.read_table(folder / "part-00003-c000.snappy.parquet").equals(table)
    meta = pq.ParquetFile(folder / "part-00003-c000.snappy.parquet").metadata
    assert [[ENCODINGS[e] for e in meta.row_group(g).column(c).encodings]
            for g in range(meta.num_row_groups) for c in range(meta.num_columns)] == [sorted(v) for v in want]
    assert (folder / ".part-00003-c000.snappy.parquet.crc").read_bytes() == _hadoop_crc(got)
    # Both orders give the same bytes; a file already sorted is left as it is.
    again = tmp_path / "again"
    again.mkdir()
    (again / name.replace("0f0e", "9a9b")).write_bytes(data)
    make_reproducible(str(again))
    assert (again / "part-00003-c000.snappy.parquet").read_bytes() == got


@pytest.mark.long_running
def test_two_spark_runs_of_a_command_write_the_same_files_byte_for_byte(tmp_path):
    # Each run a process and a JVM of its own, as two runs of the program are: the file names and the footers'
    # encodings lists (a HashSet's order in each JVM) were the two differences.
    if find_java() is None:
        pytest.skip("no Java runtime (JAVA_HOME or java on PATH)")
    commands = {"join": ["join", "-t", "0.5", "-s", "word:1", str(TINY)],
                "dedup": ["dedup", "-t", "0.5", "-s", "word:1", str(TINY)],
                "clusters": ["join", "--clusters", "-t", "0.5", "-s", "word:1", str(TINY)]}
    # A run: one process, its JVM, the three commands in it (a JVM each cost 13 s of the suite).
    program = ("import json, sys\nfrom allpairs.cli import app\n"
               "for args in json.loads(sys.argv[1]):\n"
               "    try:\n        app(args, prog_name='allpairs')\n"
               "    except SystemExit as e:\n        assert not e.code, (args, e.code)\n")
    runs = []
    for run in (1, 2):
        argv = [[*args[:1], "--engine", "spark", "--master", "local[1]", "-q", *args[1:],
                 "-o", str(tmp_path / f"{what}-{run}")] for what, args in commands.items()]
        r = subprocess.run([sys.executable, "-c", program, json.dumps(argv)], capture_output=True, text=True)
        assert r.returncode == 0 and r.stderr == "", r.stderr[-2000:]
        runs.append({what: {p.name: p.read_bytes() for p in sorted((tmp_path / f"{what}-{run}").iterdir())}
                     for what in commands})
    for what in commands:
        assert "part-00000-c000.snappy.parquet" in runs[0][what], (what, sorted(runs[0][what]))
        assert runs[0][what] == runs[1][what], (what, sorted(runs[0][what]), sorted(runs[1][what]))


def test_the_rows_of_each_part_file_are_the_same_on_every_run_and_master(spark, tmp_path, monkeypatch):
    # A sort's partitions follow range bounds that Spark samples (seeded by the session's count of shuffles),
    # as many as the master's cores make: three writes of one join in one session split their rows three
    # ways, and a master of more cores wrote more files. Now part file k holds the k-th run of PAIRS_PER_FILE
    # pairs (ROWS_PER_FILE rows for dedup and clusters), whatever the shuffles' partitions.
    # (The join distributed, not in one task: one partition to sort, Spark wrote one file.)
    import pyarrow.parquet as pq

    from allpairs.engines.spark import run as spark_run
    from allpairs.engines.spark import run_dedup
    from allpairs.engines.spark.files import _session_conf
    from allpairs.index import dedup as local_dedup

    rng = Random(59)
    sets = [[f"t{x}" for x in rng.sample(range(12), 5)] for _ in range(200)]
    path = tmp_path / "sets.txt"
    path.write_text("".join(" ".join(s) + "\n" for s in sets))
    monkeypatch.setattr(spark_run, "PAIRS_PER_FILE", 300)
    monkeypatch.setattr(run_dedup, "ROWS_PER_FILE", 15)
    written = []
    for partitions in ("2", "5"):  # as on masters of one core and of more: the sort's partitions, uncoalesced
        with _session_conf(spark, {"spark.sql.shuffle.partitions": partitions,
                                   "spark.sql.adaptive.coalescePartitions.enabled": "false"}):
            out = tmp_path / f"pairs-{partitions}"
            n = spark_run.run(str(path), "0.5", kind="sets", output=str(out), one_task=False).pairs
            written.append({p.name: p.read_bytes() for p in sorted(out.iterdir())})
            assert sum(name.endswith(".parquet") for name in written[-1]) == -(-n // 300) > 2, sorted(written[-1])
    assert written[0] == written[1], [sorted(files) for files in written]
    table = pq.read_table(tmp_path / "pairs-5")
    assert list(zip(table.column("left").to_pylist(), table.column("right").to_pylist())) == \
        [(str(p.left + 1), str(p.right + 1)) for p in allpairs.join(sets, 0.5).pairs]
    # Dedup's kept rows (and clusters', written alike): a file per ROWS_PER_FILE of them, in input order.
    with _session_conf(spark, {"spark.sql.shuffle.partitions": "5",
                               "spark.sql.adaptive.coalescePartitions.enabled": "false"}):
        kept = run_dedup.run_dedup(str(path), "0.5", kind="sets", output=str(tmp_path / "kept")).rows
    parts = sorted((tmp_path / "kept").glob("part-*.parquet"))
    assert [p.name for p in parts] == [f"part-{k:05d}-c000.snappy.parquet" for k in range(-(-kept // 15))]
    assert len(parts) > 2 and [len(pq.read_table(p)) for p in parts[:-1]] == [15] * (len(parts) - 1)
    assert [int(i) - 1 for i in pq.read_table(tmp_path / "kept").column("id").to_pylist()] == \
        local_dedup(sets, 0.5).kept.tolist()


@pytest.mark.parametrize("flags", [["--clusters", "--singletons", "--count"], ["--seed", "3", "-o", "x"],
                                   ["--count", "-o", "x"], ["--singletons", "-o", "x"], ["--wide", "-o", "x"]])
def test_join_engine_spark_refuses_the_options_the_local_engine_refuses(tmp_path, flags):
    # The local engine refused these (they would do nothing); Spark took --singletons with --count, the
    # exact join's --seed, --count's -o, silently.
    flags = [tmp_path / "x" if f == "x" else f for f in flags]
    runs = [cli("join", "-q", "-t", "0.5", "-s", "word:1", TINY, *flags, *engine)
            for engine in ([], ["--engine", "spark", "--master", "local[2]"])]
    assert [r.exit_code for r in runs] == [2, 2] and runs[0].stderr == runs[1].stderr, [r.stderr for r in runs]
    assert "does nothing" in runs[1].stderr and not (tmp_path / "x").exists()


def test_normalize_false_with_sets_of_tokens_is_refused_as_locally_before_any_job(spark):
    from allpairs.errors import UsageError

    df = token_frame(spark, [[["A", "b"], ["a", "b"]]])
    for call in (lambda: allpairs.spark.join(df, 0.5, tokens_col="toks", normalize=False),
                 lambda: allpairs.spark.join(df, 0.5, tokens_col="toks", against=df, normalize=False),
                 lambda: allpairs.spark.dedup(df, 0.5, tokens_col="toks", normalize=False)):
        with pytest.raises(UsageError, match="normalize=False changes nothing"):
            call()
