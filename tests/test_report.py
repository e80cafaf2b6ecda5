"""Exact and LSH on the same sets: LSH pairs are exact pairs, and the report adds up."""
import json

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import allpairs
from allpairs.report import compare, render_table

from naive import all_pairs
from strategies import corpus_and_threshold


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(corpus_and_threshold(max_docs=30), st.sampled_from([(4, 2), (8, 1), (2, 8), (16, 3)]))
def test_lsh_pairs_are_a_subset_of_exact_pairs(case, banding):
    sets, t = case
    if not any(sets):
        return
    b, r = banding
    exact = [tuple(p) for p in allpairs.join(sets, t).pairs]
    lsh = [tuple(p) for p in allpairs.join(sets, t, method="lsh", num_perm=b * r, bands=b, rows=r).pairs]
    assert set(lsh) <= set(exact)
    assert exact == all_pairs(sets, t)
    # Identical non-empty sets share every bucket: LSH never misses them.
    assert {p for p in exact if p[2] == p[3] == p[4]} <= set(lsh)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(corpus_and_threshold(max_docs=30))
def test_comparison_adds_up(case):
    sets, t = case
    if sum(1 for s in sets if s) < 2:
        return
    c = compare(sets, t, num_perm=16, bands=8, rows=2)
    assert c.exact_pairs == len(all_pairs(sets, t))
    assert sum(b.exact for b in c.bins) == c.exact_pairs
    assert sum(b.found for b in c.bins) == c.lsh_pairs <= c.exact_pairs
    assert all(0 <= b.found <= b.exact for b in c.bins)
    assert c.documents == len(sets) and c.joined == sum(1 for s in sets if s)
    assert c.all_pairs == c.joined * (c.joined - 1) // 2
    distinct = len({frozenset(s) for s in sets if s})
    assert c.all_set_pairs == distinct * (distinct - 1) // 2 >= c.lsh_candidates
    assert c.missed == int((~c.true_found).sum()) and (c.missed == 0) == (c.lsh_pairs == c.exact_pairs)
    json.dumps(c.as_dict())  # serialisable (NaN turned into null)
    assert "recall by true similarity" in render_table(c)


def test_bins_are_cut_exactly_at_tenths():
    # J = 7/10 exactly belongs to [0.7, 0.8), not below it.
    sets = [list(range(8)), list(range(1, 10))]
    c = compare(sets, 0.5, num_perm=8, bands=8, rows=1)
    by_lo = {round(b.lo, 2): b.exact for b in c.bins}
    assert by_lo[0.7] == 1 and by_lo[0.6] == 0


def test_estimate_mode_marks_estimates(tmp_path):
    sets = [list(range(20)), list(range(20)) + [99], list(range(100, 130))]
    res = allpairs.join(sets, 0.5, method="lsh", verify="estimate", num_perm=64)
    assert res.pairs.estimated
    w = allpairs.PairWriter(res.ids, "tsv", estimated=True)
    out = tmp_path / "o.tsv"
    with open(out, "wb") as f:
        w.write(res.pairs, f)
    header, row = out.read_text().splitlines()
    assert header == "left\tright\testimate"
    left, right, sim = row.split("\t")
    assert (left, right) == ("0", "1") and sim.startswith("~0.")


def test_lsh_settings_errors_name_the_numbers():
    with pytest.raises(allpairs.UsageError, match=r"16 × 4 = 64 exceeds num_perm 48"):
        allpairs.join([[1, 2]], 0.5, method="lsh", num_perm=48, bands=16, rows=4)
    with pytest.raises(allpairs.UsageError, match="bits 0 is outside 1..32"):
        allpairs.join([[1, 2]], 0.5, method="lsh", bits=0)
    with pytest.raises(allpairs.UsageError, match="bands= needs rows="):
        allpairs.join([[1, 2]], 0.5, method="lsh", bands=4)
    with pytest.raises(allpairs.UsageError, match="num_perm must be"):
        allpairs.join([[1, 2]], 0.5, method="lsh", num_perm=0)
    with pytest.raises(allpairs.UsageError, match="goes with method='lsh'"):
        allpairs.join([[1, 2]], 0.5, verify="estimate")


def test_oversized_buckets_are_bounded_and_reported():
    # 300 near-empty documents that all share their only token: one huge bucket.
    sets = [["boiler"] for _ in range(300)] + [[str(i), "boiler"] for i in range(300)]
    res = allpairs.join(sets, 0.5, method="lsh", num_perm=8, bands=8, rows=1, max_bucket=50)
    assert any("larger than --max-bucket 50" in n for n in res.stats.notes)
    # Identical documents are one distinct set: buckets count distinct sets.
    assert res.lsh.oversized and res.lsh.largest_bucket > 50


def test_candidates_at_exactly_the_threshold_count_as_verified():
    # J = 7/10 exactly, where 7/10 as a float sits above 0.7 and the float ratio below it.
    sets = [list(range(8)), list(range(1, 10))]
    c = compare(sets, "0.7", num_perm=8, bands=8, rows=1)
    assert c.candidate_verified.tolist() == [True]
    assert c.lsh_pairs == c.exact_pairs == 1


def test_similarity_ranges_are_called_bins_and_never_bands_in_the_report():
    sets = [list(range(8)), list(range(1, 10)), list(range(20, 30))]
    c = compare(sets, 0.5, num_perm=8, bands=8, rows=1)
    d = c.as_dict()
    assert "bands" not in d and [b["lo"] for b in d["bins"]][:2] == [0.5, 0.6]
    assert d["settings"]["bands"] == 8
    table = render_table(c)
    assert "bin " in table and "by true similarity (pairs of documents) in bins" in table


def test_candidate_shares_are_of_the_pairs_of_distinct_sets():
    # 4 documents, two of them identical: 6 pairs of documents but 3 pairs of distinct sets.
    sets = [["a", "b"], ["a", "b"], ["a", "c"], ["x", "y"]]
    c = compare(sets, 0.3, num_perm=8, bands=8, rows=1)
    assert (c.all_pairs, c.all_set_pairs) == (6, 3)
    d = c.as_dict()
    assert d["lsh"]["candidate_share"] == c.lsh_candidates / 3
    assert d["exact"]["candidate_share"] == c.exact_candidates / 3
    assert f"{c.lsh_candidates} ({c.lsh_candidates / 3:.4%})" in render_table(c)


def test_each_method_reports_its_own_peak_memory_not_the_process_peak(monkeypatch):
    import allpairs.report.comparison as report

    big = {}
    real = report.lsh_pairs

    def lsh_pairs_holding_200_mib(*a, **k):
        block = np.ones(200 * 2**20 // 8)  # touched: resident
        big["sum"] = float(block.sum())
        del block
        return real(*a, **k)

    monkeypatch.setattr(report, "lsh_pairs", lsh_pairs_holding_200_mib)
    c = compare([list(range(8)), list(range(1, 10))], 0.5, num_perm=8, bands=8, rows=1)
    if c.memory["exact"] is None:
        pytest.skip("no /proc/self/clear_refs here: per-method peaks are not measured")
    assert c.memory["lsh"] >= 190 * 2**20 > c.memory["exact"]
    assert c.memory["shared"] > 0


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(corpus_and_threshold(max_docs=30), st.sampled_from([(4, 2), (8, 1), (2, 8), (1, 6)]))
def test_the_missed_pairs_are_the_exact_pairs_the_lsh_join_did_not_find(case, banding):
    sets, t = case
    if sum(1 for s in sets if s) < 2:
        return
    b, r = banding
    c = compare(sets, t, num_perm=b * r, bands=b, rows=r)
    lsh = {tuple(p) for p in allpairs.join(sets, t, method="lsh", num_perm=b * r, bands=b, rows=r).pairs}
    expected = [p for p in all_pairs(sets, t) if p not in lsh]
    assert [tuple(p) for p in c.missed_pairs] == expected
    assert len(c.missed_pairs) == c.exact_pairs - c.lsh_pairs
    d = c.as_dict()
    assert d["lsh"]["missed_pairs"] == len(expected) and d["lsh"]["missed_set_pairs"] == c.missed
    assert d["exact"]["missed_pairs"] == d["exact"]["missed_set_pairs"] == 0


def _keys(d, prefix="") -> set[str]:
    """Every key of a JSON document as a dotted path; the items of a list under ``name[]``."""
    out = set()
    for k, v in d.items():
        out.add(prefix + k)
        if k == "seconds":  # its keys are the stages' names
            continue
        if isinstance(v, dict):
            out |= _keys(v, f"{prefix}{k}.")
        elif isinstance(v, list) and v and isinstance(v[0], dict):
            out |= _keys(v[0], f"{prefix}{k}[].")
    return out


def test_the_json_report_gives_numbers_as_numbers_and_the_same_keys_for_both_methods():
    sets = [["a", "b"], ["a", "b"], ["a", "b", "c"], ["a", "c", "d"], ["x", "y"]]
    c = compare(sets, "0.5", num_perm=8, bands=1, rows=8)
    d = json.loads(json.dumps(c.as_dict()))
    assert d["settings"]["threshold"] == 0.5
    assert (d["settings"]["bands"], d["settings"]["rows"], d["settings"]["num_perm"]) == (1, 8, 8)
    assert d["documents"] == {"read": 5, "skipped": 0, "joined": 5}
    assert (d["all_pairs"], d["all_set_pairs"]) == (10, 6)
    assert set(d["exact"]) <= set(d["lsh"])
    assert d["exact"]["pairs"] == c.exact_pairs and d["exact"]["set_pairs"] == len(c.true_found)
    assert d["lsh"]["pairs"] + d["lsh"]["missed_pairs"] == d["exact"]["pairs"]
    assert d["lsh"]["set_pairs"] + d["lsh"]["missed_set_pairs"] == d["exact"]["set_pairs"]
    assert sum(b["pairs"] for b in d["bins"]) == d["exact"]["pairs"]

    def strings(x, path=""):
        if isinstance(x, dict):
            return [s for k, v in x.items() for s in strings(v, f"{path}.{k}")]
        if isinstance(x, list):
            return [s for v in x for s in strings(v, path + "[]")]
        return [path] if isinstance(x, str) else []
    assert strings(d) == [".settings.shingle"], "a number written as a string"


def test_every_key_of_the_json_report_is_documented():
    from pathlib import Path

    doc = (Path(__file__).resolve().parents[1] / "docs" / "compare.md").read_text()
    c = compare([["a", "b"], ["a", "b", "c"], ["x"]], 0.5, num_perm=8, bands=8, rows=1)
    keys = _keys(c.as_dict())
    missing = sorted(k for k in keys if f"`{k}`" not in doc)
    assert not missing, f"docs/compare.md does not list {missing}"
