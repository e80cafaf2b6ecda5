"""The LSH path in bounded memory (issue 30): counted, spilled and clustered as the exact path is.

The bounded result is compared with the in-memory one of the same banding
with every bucket expanded (``max_expand=None``: no bucket join at all), and
the verified pairs with the oracle of tests/naive.py; the budget is the
smallest the library takes, with blocks of three pairs, so that a few pairs
make several blocks and runs.
"""
from __future__ import annotations

import io
import os

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import allpairs
import naive
from allpairs.pairs.clusters import find_clusters
from allpairs.pairs.streamed import CountedPairs, SpilledPairs

from strategies import corpora
from test_memory import TINY, _cli, _written, tiny_blocks, titles  # noqa: F401 (fixtures)

#: A banding that puts many small sets in one bucket: few rows a band, so buckets of more than
#: ``max_expand`` sets (joined exactly, a block at a time) are common.
BANDING = dict(method="lsh", num_perm=16, bands=8, rows=2)


@st.composite
def lsh_joins(draw):
    sets = draw(corpora(max_docs=30, max_size=6))
    t = draw(st.sampled_from(["1/5", "1/3", "1/2", "2/3"]))
    verify = draw(st.sampled_from(["exact", "estimate"]))
    bits = draw(st.sampled_from([None, 16])) if verify == "estimate" else None
    return sets, t, verify, bits, draw(st.sampled_from([1, 2, 3]))


@settings(max_examples=50, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(lsh_joins(), st.sampled_from([1, 2]))
def test_lsh_pairs_spilled_past_a_tiny_budget_are_the_in_memory_pairs_in_every_format(tiny_blocks, tmp_path,
                                                                                       case, jobs):
    sets, t, verify, bits, max_expand = case
    try:
        want = allpairs.join(sets, t, verify=verify, bits=bits, max_expand=None, jobs=1, **BANDING)
    except allpairs.EmptyCorpusError:
        return
    got = allpairs.join(sets, t, verify=verify, bits=bits, max_expand=max_expand, jobs=jobs, memory=TINY,
                        spill=tmp_path, **BANDING)
    assert len(got.pairs) == len(want.pairs)
    if want.stats.set_pairs > 6:  # more than two blocks: the pairs went to disk
        assert isinstance(got.pairs, SpilledPairs) and got.pairs.runs.bytes > 0
    assert got.pairs.estimated == want.pairs.estimated == (verify == "estimate")
    for fmt in ("tsv", "csv", "jsonl", "parquet"):
        assert _written(got, fmt) == _written(want, fmt), fmt
    assert list(got.pairs) == list(want.pairs)
    if verify == "exact":  # every pair LSH keeps is a true pair, with its exact overlap
        truth = {(a, b): (o, x, y) for a, b, o, x, y in naive.all_pairs([set(s) for s in sets], t)}
        assert all(truth[p.left, p.right] == (p.overlap, p.left_size, p.right_size) for p in got.pairs)
    if isinstance(got.pairs, SpilledPairs):
        got.pairs.close()
    assert os.listdir(tmp_path) == []


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(lsh_joins())
def test_an_lsh_count_keeps_no_pairs_and_is_the_number_of_pairs(tiny_blocks, case):
    sets, t, verify, bits, max_expand = case
    try:
        want = allpairs.join(sets, t, verify=verify, bits=bits, max_expand=None, **BANDING)
    except allpairs.EmptyCorpusError:
        return
    got = allpairs.join(sets, t, verify=verify, bits=bits, max_expand=max_expand, count=True, memory=TINY, **BANDING)
    assert isinstance(got.pairs, CountedPairs)
    assert (len(got.pairs), got.pairs.num_set_pairs) == (len(want.pairs), want.pairs.num_set_pairs)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(lsh_joins())
def test_lsh_clusters_from_pairs_streamed_past_are_the_clusters_of_all_the_pairs(tiny_blocks, case):
    sets, t, verify, bits, max_expand = case
    if verify == "estimate":  # clusters come from verified pairs only, refused before any work
        with pytest.raises(allpairs.UsageError, match="verified pairs only"):
            allpairs.join(sets, t, verify=verify, clusters=True, count=True, **BANDING)
        return
    try:
        want = allpairs.join(sets, t, verify=verify, bits=bits, max_expand=None, **BANDING)
    except allpairs.EmptyCorpusError:
        return
    got = allpairs.join(sets, t, verify=verify, bits=bits, max_expand=max_expand, clusters=True, count=True,
                        memory=TINY, **BANDING)
    expected = naive.clusters(len(sets), [(p.left, p.right) for p in want.pairs])
    assert [list(c) for c in got.clusters] == [list(c) for c in find_clusters(want.pairs)]
    assert sorted(sorted(c) for c in got.clusters) == sorted(sorted(c) for c in expected)


def test_the_lsh_api_stops_in_one_line_before_the_pairs_exceed_its_memory():
    docs = [f"title number {i} of the catalogue" for i in range(200)]  # 19,900 pairs, all in joined buckets
    with pytest.raises(allpairs.AllPairsError) as e:
        allpairs.join(docs, 0.5, shingle="word:1", method="lsh", memory=TINY)
    assert "\n" not in str(e.value) and "reached" in str(e.value)


def test_an_lsh_join_written_past_its_memory_is_the_same_file_count_and_clusters(tmp_path, titles):
    base = ["join", "-t", "0.5", "-s", "word:1", "--method", "lsh", "--lines", str(titles)]
    whole = tmp_path / "whole.tsv"
    assert _cli(tmp_path, *base, "-q", "-o", str(whole)).returncode == 0
    out = tmp_path / "pairs.tsv"
    run = _cli(tmp_path, *base, "--memory", "64K", "-o", str(out))
    assert run.returncode == 0, run.stderr
    assert out.read_bytes() == whole.read_bytes() and len(whole.read_bytes().splitlines()) == 1 + 79_800
    assert "went past the memory budget" in run.stderr.decode()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["pairs.tsv", "whole.tsv"]
    piped = _cli(tmp_path, *base, "-q", "--memory", "64K", env={"TMPDIR": str(tmp_path)})
    assert piped.stdout == whole.read_bytes()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["pairs.tsv", "whole.tsv"]
    assert _cli(tmp_path, *base, "-q", "--memory", "64K", "--count").stdout == b"79800\n"
    clusters = _cli(tmp_path, *base, "-q", "--memory", "64K", "--clusters", "--count")
    assert clusters.stdout == _cli(tmp_path, *base, "-q", "--clusters", "--count").stdout == b"1\n"


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(corpora(max_docs=30, max_size=6), st.sampled_from(["1/5", "1/3", "1/2"]),
       st.sampled_from([(4, 2), (8, 1), (1, 6)]))
def test_a_comparison_in_blocks_past_a_tiny_budget_is_the_comparison_in_memory(tiny_blocks, tmp_path, sets, t,
                                                                             banding):
    from allpairs.report import compare

    if sum(1 for s in sets if s) < 2:
        return
    b, r = banding
    lsh = dict(num_perm=b * r, bands=b, rows=r, max_expand=1)
    want = compare(sets, t, **lsh)
    got = compare(sets, t, memory=TINY, spill=tmp_path, keep_pairs=False, **lsh)
    assert got.true_found is None
    if got.missed > 6:  # more than two blocks of missed pairs: they went to disk
        assert isinstance(got.missed_pairs, SpilledPairs)
    assert _written_missed(got) == _written_missed(want)
    truth = {p[:2] for p in naive.all_pairs([set(s) for s in sets], t)}
    found = {(p.left, p.right) for p in allpairs.join(sets, t, method="lsh", **lsh).pairs}
    assert [(p.left, p.right) for p in got.missed_pairs] == sorted(truth - found)
    assert (got.exact_pairs, got.lsh_pairs, got.missed) == (want.exact_pairs, want.lsh_pairs, want.missed)
    assert got.missed == int((~want.true_found).sum())
    for g, w in zip(got.bins, want.bins, strict=True):
        assert (g.lo, g.hi, g.exact, g.found, g.clusters, g.largest) == (w.lo, w.hi, w.exact, w.found, w.clusters,
                                                                        w.largest)
        assert g.predicted == pytest.approx(w.predicted, rel=1e-12, nan_ok=True)
    d, e = got.as_dict(), want.as_dict()
    assert [(m["pairs"], m["set_pairs"], m["missed_pairs"]) for m in (d["exact"], d["lsh"])] == \
        [(m["pairs"], m["set_pairs"], m["missed_pairs"]) for m in (e["exact"], e["lsh"])]
    close = getattr(got.missed_pairs, "close", None)
    if close is not None:
        close()
    assert os.listdir(tmp_path) == []


def _written_missed(c) -> bytes:
    from allpairs.pairs import PairWriter

    out = io.BytesIO()
    PairWriter(c.ids, "tsv").write(c.missed_pairs, out)
    return out.getvalue()


def test_compare_missed_written_past_its_memory_is_the_same_file_and_leaves_no_spill(tmp_path, titles):
    base = ["compare", "-q", "-t", "0.5", "-s", "word:1", "-k", "8", "-b", "1", "-r", "8", "--lines", str(titles)]
    whole, small = tmp_path / "whole.tsv", tmp_path / "small.tsv"
    first = _cli(tmp_path, *base, "--missed", str(whole))
    assert first.returncode == 0, first.stderr
    run = _cli(tmp_path, *base, "--memory", "64K", "--missed", str(small))
    assert run.returncode == 0, run.stderr
    assert small.read_bytes() == whole.read_bytes() and len(whole.read_bytes().splitlines()) > 10_000
    assert sorted(p.name for p in tmp_path.iterdir()) == ["small.tsv", "whole.tsv"]
