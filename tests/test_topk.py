"""Top-k pairs and k-nearest neighbours (allpairs/exact/topk.py, allpairs/pairs/ranked.py) against the oracles."""
from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import allpairs
from allpairs.errors import UsageError
from allpairs.exact.topk import exact_ranks

import naive
from strategies import corpora, exact_hits

MEASURES = ("jaccard", "cosine", "dice")


def rows(res):
    return [tuple(p) for p in res.pairs]


@st.composite
def ranked_case(draw, max_docs=24):
    sets = draw(corpora(max_docs=max_docs))
    measure = draw(st.sampled_from(MEASURES))
    n = len(sets)
    # K at, around and beyond the number of pairs (ties at the K-th place come from duplicates and edits).
    k = draw(st.one_of(st.just(1), st.integers(1, 6), st.integers(1, n * (n - 1) // 2 + 3)))
    hits = exact_hits(sets)
    floor = draw(st.one_of(st.none(), st.sampled_from(hits) if hits else st.none(),
                           st.sampled_from([Fraction(1, 2), Fraction(1, 10), Fraction(1)])))
    return sets, measure, k, floor


def nonempty(sets) -> bool:
    return any(sets)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(ranked_case())
def test_top_pairs_match_the_oracle(case):
    sets, measure, k, floor = case
    if not nonempty(sets):
        return
    res = allpairs.join(sets, floor, top=k, measure=measure, jobs=2)
    assert rows(res) == naive.top_pairs(sets, k, measure, floor)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(ranked_case())
def test_neighbors_match_the_oracle(case):
    sets, measure, k, floor = case
    if not nonempty(sets):
        return
    res = allpairs.join(sets, floor, neighbors=k, measure=measure, jobs=2)
    assert rows(res) == naive.neighbors(sets, k, measure, floor)
    assert len(res.pairs) == len(rows(res))


def test_ties_at_the_kth_place_are_broken_by_left_then_right():
    # Four copies of one set: six pairs at 1.0; K = 4 keeps the first four in (left, right) order.
    sets = [["a", "b"], ["x"], ["a", "b"], ["a", "b"], ["a", "b"]]
    res = allpairs.join(sets, top=4)
    assert [(p.left, p.right) for p in res.pairs] == [(0, 2), (0, 3), (0, 4), (2, 3)]


def test_top_k_larger_than_the_number_of_pairs_gives_every_pair_sharing_a_token():
    sets = [["a", "b"], ["b", "c"], ["d"]]
    res = allpairs.join(sets, top=100)
    assert rows(res) == [(0, 1, 1, 2, 2)]


def test_neighbors_of_identical_documents_are_each_other_at_one():
    res = allpairs.join([["a"], ["a"], ["a", "b"]], neighbors=1)
    assert [(p.left, p.right, p.similarity) for p in res.pairs] == [(0, 1, 1), (1, 0, 1), (2, 0, Fraction(1, 2))]


def test_neighbors_list_more_identical_documents_than_k():
    # Five copies: each lists K = 2 others, the first two but itself.
    res = allpairs.join([["a"]] * 5, neighbors=2)
    assert [(p.left, p.right) for p in res.pairs] == [(0, 1), (0, 2), (1, 0), (1, 2), (2, 0), (2, 1),
                                                     (3, 0), (3, 1), (4, 0), (4, 1)]


def test_exact_ranks_order_fractions_that_share_a_float():
    # 1/3 and (2**53 + 1)/(3 * 2**53 + 3) are equal; 2**52/(3 * 2**52 + 1) lies just below 1/3, a float
    # apart at most: the ranks still separate them and keep equal ones equal.
    o = np.array([1, 3, 2**20], np.int64)
    x = np.array([3, 9, 3 * 2**20 + 1], np.int64)
    ranks = exact_ranks("dice", o, x, x)  # dice(o, x, x) = o / x
    assert ranks[0] == ranks[1] > ranks[2]


def test_cosine_top_pairs_order_by_the_exact_square():
    # cos = 2/√6 ≈ 0.8165 beats 4/√25 = 0.8 and 1/√2 ≈ 0.7071.
    sets = [["a", "b"], ["a", "b", "c"], ["d", "e", "f", "g", "h"], ["d", "e", "f", "g", "i"], ["j"], ["j", "k"]]
    res = allpairs.join(sets, top=3, measure="cosine")
    assert [(p.left, p.right) for p in res.pairs] == [(0, 1), (2, 3), (4, 5)]


@pytest.mark.parametrize("kwargs, message", [
    ({"top": 0}, "--top 0 is below 1"),
    ({"top": -1}, "--top -1 is below 1"),
    ({"top": True}, "not a whole number"),
    ({"top": 2, "neighbors": 2}, "give one of them"),
    ({"neighbors": 2, "measure": "containment"}, "--neighbors takes --measure jaccard, cosine, dice"),
    ({"top": 2, "method": "lsh"}, "exact only"),
    ({"top": 2, "clusters": True}, "drop --clusters"),
    ({"top": 2, "against": [["a"]]}, "self-join"),
])
def test_bad_ranked_options_are_one_usage_error(kwargs, message):
    with pytest.raises(UsageError, match=message):
        allpairs.join([["a", "b"], ["a"]], **kwargs)


def test_ranked_results_index_like_a_list():
    res = allpairs.join([["a"], ["a"], ["a", "b"], ["b"]], neighbors=2)
    every = list(res.pairs)
    assert [res.pairs[i] for i in range(len(every))] == every == res.pairs[:]
    assert res.pairs[-1] == every[-1]
    top = allpairs.join([["a"], ["a"], ["a", "b"], ["b"]], top=3)
    assert top.pairs[1:] == list(top.pairs)[1:]
