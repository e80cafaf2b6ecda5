"""The exact join (order → prefix index → probe → verify → expand) against the brute-force oracle."""
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from allpairs.exact import prefix_join
from allpairs.measures import Threshold
from allpairs.order import order_sets
from allpairs.pairs import Pairs

from naive import all_pairs
from strategies import corpus_and_threshold


def fast_pairs(sets, threshold, jobs=1):
    """The package's exact path on integer token sets, as the oracle's tuples."""
    indptr = np.zeros(len(sets) + 1, np.int64)
    indptr[1:] = np.cumsum([len(s) for s in sets])
    keys = np.array([tok for s in sets for tok in s], np.uint64)
    o = order_sets(indptr, keys)
    t = Threshold.parse(threshold)
    found = prefix_join(o.indptr, o.tokens, o.num_tokens, t, jobs=jobs)
    pairs = Pairs(o, found.left, found.right, found.overlap)
    out = [tuple(p) for p in pairs]
    assert len(out) == len(pairs)
    return out


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(corpus_and_threshold())
def test_exact_join_equals_brute_force(case):
    sets, t = case
    assert fast_pairs(sets, t) == all_pairs(sets, t)


@settings(max_examples=60, deadline=None)
@given(corpus_and_threshold(max_docs=40), st.integers(2, 5))
def test_result_does_not_depend_on_jobs(case, jobs):
    sets, t = case
    assert fast_pairs(sets, t, jobs=jobs) == fast_pairs(sets, t, jobs=1)


def test_pair_exactly_at_threshold_is_found():
    # J = 7/10 exactly: 7 common tokens, union 10.
    a = list(range(8))            # 8 tokens
    b = list(range(1, 10))        # 9 tokens, 7 shared, union 10
    assert fast_pairs([a, b], 0.7) == [(0, 1, 7, 8, 9)]
    assert fast_pairs([a, b], "0.7000001") == []


def test_prefix_is_not_shortened_by_float_rounding():
    # math.ceil(0.28 * 25) == 8 in floating point, the true value is 7.
    t = Threshold.parse(0.28)
    assert t.min_size(25) == 7
    a = list(range(25))
    b = list(range(7))            # J = 7/25 = 0.28 exactly
    assert fast_pairs([a, b], 0.28) == [(0, 1, 7, 25, 7)]


def test_two_empty_sets_are_not_a_pair_and_duplicates_expand():
    sets = [[], [], [1, 2], [1, 2], [1, 2], [3]]
    assert fast_pairs(sets, 1.0) == [(2, 3, 2, 2, 2), (2, 4, 2, 2, 2), (3, 4, 2, 2, 2)]


def test_threshold_one_pairs_identical_sets_only():
    sets = [[1, 2, 3], [1, 2, 3, 4], [3, 2, 1], [4]]
    assert fast_pairs(sets, 1) == [(0, 2, 3, 3, 3)]


def test_kosarak_sample_distinct_sets_match_reference_counts(kosarak_sets):
    """REFERENCE.md §4: 1,482,549 / 7,693 / 30 pairs among the distinct Kosarak sets."""
    seen, distinct = set(), []
    for s in kosarak_sets:
        key = tuple(sorted(set(s)))
        if key not in seen:
            seen.add(key)
            distinct.append([int(v) for v in key])
    assert len(distinct) == 34_985
    for t, expected in [(0.5, 1_482_549), (0.7, 7_693), (0.9, 30)]:
        indptr = np.zeros(len(distinct) + 1, np.int64)
        indptr[1:] = np.cumsum([len(s) for s in distinct])
        o = order_sets(indptr, np.array([v for s in distinct for v in s], np.uint64))
        found = prefix_join(o.indptr, o.tokens, o.num_tokens, Threshold.parse(t))
        assert len(found.left) == expected, t


@pytest.fixture(scope="module")
def kosarak_sets(shared_datasets):
    path = shared_datasets / "kosarak-sample.dat"
    if not path.exists():
        pytest.skip(f"Kosarak sample not found at {path}")
    return [line.split() for line in path.read_text().splitlines() if line.strip()]
