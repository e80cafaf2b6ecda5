"""Streaming dedup against the brute-force oracle."""
from __future__ import annotations

import importlib

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
    if not any(sets):  # no document has a token: an empty corpus, an error (below)
        return
    res = dedup(sets, t, measure=measure)
    assert res.kept.tolist() == [d for d, k in expected if k is None]
    removed = [(d, k) for d, k in expected if k is not None]
    assert list(zip(res.removed.tolist(), res.duplicate_of.tolist())) == removed
    for d, k, o in zip(res.removed.tolist(), res.duplicate_of.tolist(), res.overlap.tolist()):
        assert o == len(set(sets[d]) & set(sets[k]))


@pytest.mark.kernel_paths("compiled", "python")
@settings(max_examples=40, deadline=None)
@given(corpus_and_threshold(), st.sampled_from(JOIN_MEASURES), st.integers(1, 4))
def test_dedup_taken_a_block_of_documents_at_a_time_matches_the_oracle(case, measure, block):
    """The compiled loop runs BLOCK documents a call (so that progress can be reported between calls),
    its state carried across: blocks of 1 to 4 documents give the oracle's answer and tell progress."""
    module = importlib.import_module(dedup.__module__)

    sets, t = case
    t = t.numerator % 4 + 1 if measure == "overlap" else t
    expected = naive.dedup(sets, t, measure)
    if not any(sets):  # no document has a token: an empty corpus, an error (below)
        return
    seen = []
    before, module.BLOCK = module.BLOCK, block
    try:
        res = dedup(sets, t, measure=measure, progress=lambda stage, done, total: seen.append((stage, done, total)))
    finally:
        module.BLOCK = before
    assert res.kept.tolist() == [d for d, k in expected if k is None]
    assert list(zip(res.removed.tolist(), res.duplicate_of.tolist())) == [(d, k) for d, k in expected if k is not None]
    steps = [(done, total) for stage, done, total in seen if stage == "dedup"]
    assert steps and steps[-1][0] == steps[-1][1] and [d for d, _ in steps] == sorted(d for d, _ in steps)


def test_identical_documents_keep_the_first():
    res = dedup(["a b c d", "x y z", "a b c d", "a b c e"], 0.5, shingle="word:1")
    assert res.kept.tolist() == [0, 1]
    assert list(zip(res.removed.tolist(), res.duplicate_of.tolist())) == [(2, 0), (3, 0)]


def test_documents_with_no_shingle_are_kept_not_skipped():
    """Nothing reaches a threshold with an empty set: the document stays in the kept rows (a table comes back
    whole but for what was removed), twice if it comes twice, and the statistics say so."""
    res = dedup(["a b", "", "a b", "", "!!"], 0.5, shingle="word:1")
    assert res.kept.tolist() == [0, 1, 3, 4] and res.removed.tolist() == [2]
    assert res.stats.skipped == []
    assert "3 documents with no word:1 shingle kept as they are" in " ".join(res.stats.notes)


def test_documents_below_min_shingles_are_dropped_as_asked():
    res = dedup(["a b c", "a", "", "a b c"], 0.5, shingle="word:1", min_shingles=2)
    assert res.kept.tolist() == [0, 2] and res.removed.tolist() == [3] and res.stats.dropped == 1


def test_empty_corpus_is_an_error():
    with pytest.raises(EmptyCorpusError):
        dedup([[], []], 0.5)
