"""The index's probe with the join's filters: the bitmap bound (on, off, by the join's rule), α cached per
partner size from call to call, the probing prefix worked out in the kernel; queries and dedup against the
brute-force oracle at thresholds hit exactly and at the extremes, for every measure."""
from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import naive
import allpairs.verify as verify
from allpairs.index import SearchIndex, dedup
from allpairs.index._kernel import probe_prefix, required_overlap
from allpairs.index.rule import Rule
from allpairs.measures import JOIN_MEASURES
from strategies import exact_hits

#: The bitmap filter as the join's rule has it, everywhere, or nowhere (verify.BITMAP_MEDIAN_MAX).
BITMAP = {"rule": verify.BITMAP_MEDIAN_MAX, "on": 2**62, "off": -1}
EXTREMES = [Fraction(1, 10**9), Fraction(999999999, 10**9)]


@st.composite
def near_copies(draw):
    """Sets of up to 150 tokens, short and long, with near-copies of them (a few tokens swapped): runs of
    equal sizes, signatures full and sparse, overlaps near every threshold."""
    sets = []
    for _ in range(draw(st.integers(1, 5))):
        base = draw(st.sets(st.integers(0, 300), min_size=1, max_size=draw(st.sampled_from([6, 40, 150]))))
        sets.append(sorted(base))
        for _ in range(draw(st.integers(0, 4))):
            drop = draw(st.sets(st.sampled_from(sorted(base)), max_size=max(1, len(base) // 8)))
            add = draw(st.sets(st.integers(0, 300), max_size=max(1, len(base) // 8)))
            sets.append(sorted((base - drop) | add or base))
    order = draw(st.permutations(range(len(sets))))
    return [sets[k] for k in order]


@st.composite
def case(draw):
    """Sets, a measure and a threshold: one its pairs hit exactly, or an extreme one (overlap: a count)."""
    sets = draw(near_copies())
    measure = draw(st.sampled_from(JOIN_MEASURES))
    if measure == "overlap":
        return sets, measure, draw(st.sampled_from([1, 2, 5, 40, 149, 2**31 - 1]))
    hits = [h for h in exact_hits(sets) if h > 0]
    return sets, measure, draw(st.sampled_from(EXTREMES + hits[:20]))


def answers(index: SearchIndex, queries, threshold=None):
    return sorted((q, int(index.ids[d]), o, qs, ds) for q, d, o, qs, ds in index.query(queries, threshold))


@pytest.fixture
def bitmap(request, monkeypatch):
    monkeypatch.setattr(verify, "BITMAP_MEDIAN_MAX", BITMAP[request.param])
    return request.param


@pytest.mark.kernel_paths("compiled", "python", "jit")
@pytest.mark.parametrize("bitmap", sorted(BITMAP), indirect=True)
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                  HealthCheck.function_scoped_fixture])
@given(case(), st.integers(0, 8))
def test_queries_with_and_without_the_bitmap_filter_match_the_oracle(bitmap, c, cut):
    sets, measure, t = c
    indexed = sets[cut:] or sets
    # Queries with tokens no indexed set holds (1000 + k): counted in |x|, absent from its signature.
    queries = sets[:cut] + [s + [1000 + k] for k, s in enumerate(sets[:3])] + [[1000, 1001], []]
    index = SearchIndex.build(indexed, t, measure=measure)
    assert answers(index, queries) == naive.rs_pairs(queries, indexed, t, measure)


@pytest.mark.kernel_paths("compiled", "python", "jit")
@pytest.mark.parametrize("bitmap", sorted(BITMAP), indirect=True)
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                  HealthCheck.function_scoped_fixture])
@given(case())
def test_dedup_with_and_without_the_bitmap_filter_matches_the_oracle(bitmap, c):
    sets, measure, t = c
    expected = naive.dedup(sets, t, measure)
    res = dedup(sets, t, measure=measure)
    assert res.kept.tolist() == [d for d, k in expected if k is None]
    assert list(zip(res.removed.tolist(), res.duplicate_of.tolist())) == [(d, k) for d, k in expected
                                                                          if k is not None]


@pytest.mark.kernel_paths("compiled", "python", "jit")
@pytest.mark.parametrize("bitmap", ["on", "off"], indirect=True)
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                  HealthCheck.function_scoped_fixture])
@given(near_copies(), st.lists(st.sampled_from([Fraction(1, 2), Fraction(7, 10), Fraction(9, 10), Fraction(1),
                                                Fraction(999999999, 10**9)]), min_size=2, max_size=5))
def test_alpha_cached_in_one_call_is_never_used_by_a_query_at_another_threshold(bitmap, sets, thresholds):
    # One index, one scratch and α cache per thread, queried at several thresholds in turn (and sets
    # appended between): every answer as the oracle's at that threshold.
    index = SearchIndex.build(sets, Fraction(1, 2))
    for k, t in enumerate(thresholds):
        assert answers(index, sets, t) == naive.rs_pairs(sets, sets, t)
        if k == 1:
            index.add([s + [2000] for s in sets[:2]])
            sets = sets + [s + [2000] for s in sets[:2]]


@pytest.mark.parametrize("measure", JOIN_MEASURES)
@pytest.mark.parametrize("t", ["1/1000000000", "1/2", "7/10", "999999999/1000000000", "1"])
def test_the_kernel_s_probing_prefix_is_never_shorter_than_the_measure_table_s_own(measure, t):
    # The probing prefix is worked out in the kernel from α at the window's smallest partner; the table's
    # (measures.probe_prefix) is what the index used to pass in. Never shorter: no pair is lost.
    rule = Rule.parse(measure, 3 if measure == "overlap" else t)
    sizes = np.arange(1, 400)
    table, lo, _ = rule.probe(sizes)
    for x, want, low in zip(sizes.tolist(), table.tolist(), lo.tolist()):
        got = int(probe_prefix(rule.code, rule.p, rule.q, x, low))
        assert max(got, 0) >= min(max(want, 0), x), (x, want, got)  # at most 0: no probe at all
        assert got == x - int(required_overlap(rule.code, rule.p, rule.q, x, low)) + 1
