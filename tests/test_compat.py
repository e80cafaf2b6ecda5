"""allpairs.compat against SetSimilaritySearch itself: same pairs, same similarity values, same errors."""
from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from allpairs.compat import SearchIndex, all_pairs
from strategies import LARGE_DENOMINATORS, corpora, large_denominator_fractions

SetSimilaritySearch = pytest.importorskip("SetSimilaritySearch")

SYMMETRIC = ["jaccard", "cosine", "containment_min"]
ALL = SYMMETRIC + ["containment"]
#: Round thresholds and large-denominator ones (SetSimilaritySearch takes floats: 1e-9, 0.999999999, ...).
THRESHOLDS = st.one_of(st.sampled_from([0.0, 0.1, 1 / 3, 0.5, 0.7, 0.9, 1.0, 0.28]),
                       st.sampled_from([float(t) for t in LARGE_DENOMINATORS]),
                       large_denominator_fractions.map(float))


def ours_all_pairs(sets, func, t):
    return sorted(all_pairs(sets, similarity_func_name=func, similarity_threshold=t))


def theirs_all_pairs(sets, func, t):
    return sorted((int(x), int(y), float(s)) for x, y, s in
                  SetSimilaritySearch.all_pairs(sets, similarity_func_name=func, similarity_threshold=t))


@settings(max_examples=60, deadline=None)
@given(corpora(max_docs=20), st.sampled_from(SYMMETRIC), THRESHOLDS)
def test_all_pairs_is_set_similarity_search(sets, func, t):
    sets = [sorted(set(s)) for s in sets] or [[1]]
    assert ours_all_pairs(sets, func, t) == theirs_all_pairs(sets, func, t)


@settings(max_examples=60, deadline=None)
@given(corpora(max_docs=20), corpora(max_docs=6), st.sampled_from(ALL), THRESHOLDS)
def test_search_index_is_set_similarity_search(sets, queries, func, t):
    sets = [sorted(set(s)) for s in sets] or [[1]]
    ours = SearchIndex(sets, similarity_func_name=func, similarity_threshold=t)
    theirs = SetSimilaritySearch.SearchIndex(sets, similarity_func_name=func, similarity_threshold=t)
    for q in queries + [[1000, 1], [1000], []]:
        q = sorted(set(q))
        assert ours.query(q) == sorted((int(i), float(s)) for i, s in theirs.query(q))


def test_return_shapes_and_types():
    sets = [["a", "b", "c"], ["a", "b"], ["a", "b", "c"], ["z"]]
    pairs = list(all_pairs(sets, similarity_threshold=0.6))
    assert pairs == [(1, 0, 2 / 3), (2, 0, 1.0), (2, 1, 2 / 3)]
    assert all(type(x) is int and type(y) is int and type(s) is float for x, y, s in pairs)
    index = SearchIndex(sets, similarity_threshold=0.5)
    assert index.query(["a", "b", "unseen"]) == [(0, 0.5), (1, 2 / 3), (2, 0.5)]
    assert index.query([]) == [] and index.query(["unseen"]) == []


def test_elements_compare_as_python_compares_them():
    index = SearchIndex([[1, 2], [3]], similarity_threshold=1.0)
    assert index.query([1.0, 2]) == [(0, 1.0)]


def test_bad_arguments_raise_value_error_like_set_similarity_search():
    for sets, kw in [([], {}), ((["a"],), {}), ([["a"]], {"similarity_func_name": "dice"}),
                     ([["a"]], {"similarity_threshold": 1.5}), ([["a"]], {"similarity_threshold": -0.1}),
                     ([["a"]], {"similarity_threshold": float("nan")})]:
        with pytest.raises(ValueError):
            SearchIndex(sets, **kw)
        with pytest.raises(ValueError):
            list(all_pairs(sets, **kw))
    gen = all_pairs([["a"]], similarity_func_name="containment")  # a generator: raises when iterated
    with pytest.raises(ValueError, match="symmetric"):
        next(gen)
