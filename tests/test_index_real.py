"""The index and dedup on a real password list, against the exact join (R–S and self) as a second fast path."""
from __future__ import annotations

import pytest

import allpairs
from allpairs.index import SearchIndex, dedup


@pytest.fixture(scope="module")
def passwords():
    import datasets.passwords as pw

    try:
        return pw.zxcvbn_passwords()
    except FileNotFoundError as e:
        pytest.skip(str(e).replace("\n", " "))


def test_queries_equal_the_rs_join_on_passwords(passwords):
    indexed, queries = passwords[:8000], passwords[8000:10000]
    index = SearchIndex.build(indexed, 0.5, shingle="char:3")
    got = sorted((m.query, int(index.ids[m.indexed]), m.overlap) for m in index.query(queries, 0.6))
    joined = allpairs.join(queries, 0.6, shingle="char:3", against=indexed)
    expected = sorted((p.left, p.right, p.overlap) for p in joined.pairs)
    assert got == expected and len(got) > 100


def test_grown_index_equals_the_built_one_on_passwords(passwords):
    words = [w for w in passwords[:6000] if len(w) >= 3]  # each has a 3-gram: added ids are input positions
    grown = SearchIndex.build(words[:1000], 0.6, shingle="char:3")
    for k in range(1000, 6000, 700):
        grown.add(words[k:k + 700])  # new 3-grams get ranks of their own; ids continue the positions
    built = SearchIndex.build(words, 0.6, shingle="char:3")
    queries = passwords[6000:7000]
    answer = lambda ix: sorted((m.query, int(ix.ids[m.indexed]), m.overlap) for m in ix.query(queries))  # noqa: E731
    assert answer(grown) == answer(built)


def test_dedup_equals_greedy_over_the_joined_pairs(passwords):
    words = passwords[:5000]
    res = dedup(words, 0.7, shingle="char:3")
    joined = allpairs.join(words, 0.7, shingle="char:3")
    near: dict[int, list[int]] = {}
    kept_set: set[int] = set()
    for p in joined.pairs:
        near.setdefault(p.right, []).append(p.left)
    skipped = {int(i) for i, _ in joined.stats.skipped}  # no 3-gram: neither kept nor removed
    kept: list[int] = []
    for d in range(len(words)):
        if d not in skipped and not any(k in kept_set for k in near.get(d, [])):
            kept.append(d)
            kept_set.add(d)
    assert res.kept.tolist() == kept and len(res.removed) > 10
