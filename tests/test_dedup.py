"""Streaming dedup against the brute-force oracle."""
from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import naive
from allpairs import EmptyCorpusError
from allpairs.index import dedup
from allpairs.measures import JOIN_MEASURES
from strategies import corpus_and_threshold


@pytest.mark.kernel_paths("compiled", "python", "jit")
@settings(max_examples=80, deadline=None)
@given(corpus_and_threshold(), st.sampled_from(JOIN_MEASURES))
def test_dedup_matches_the_oracle(case, measure):
    sets, t = case
    t = t.numerator % 4 + 1 if measure == "overlap" else t
    expected = naive.dedup(sets, t, measure)
    if not expected:
        return
    res = dedup(sets, t, measure=measure)
    assert res.kept.tolist() == [d for d, k in expected if k is None]
    removed = [(d, k) for d, k in expected if k is not None]
    assert list(zip(res.removed.tolist(), res.duplicate_of.tolist())) == removed
    for d, k, o in zip(res.removed.tolist(), res.duplicate_of.tolist(), res.overlap.tolist()):
        assert o == len(set(sets[d]) & set(sets[k]))


def test_identical_documents_keep_the_first():
    res = dedup(["a b c d", "x y z", "a b c d", "a b c e"], 0.5, shingle="word:1")
    assert res.kept.tolist() == [0, 1]
    assert list(zip(res.removed.tolist(), res.duplicate_of.tolist())) == [(2, 0), (3, 0)]


def test_documents_with_no_shingle_are_skipped_not_kept():
    res = dedup(["a b", "", "a b"], 0.5, shingle="word:1")
    assert res.kept.tolist() == [0] and res.removed.tolist() == [2]
    assert res.stats.skipped == [(1, "no shingle")]  # a list's ids are its positions, as ints


def test_empty_corpus_is_an_error():
    with pytest.raises(EmptyCorpusError):
        dedup([[], []], 0.5)
