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


def agrees_with_the_oracle(case, option: str) -> None:
    """``join(sets, floor, top=K)`` or ``neighbors=K`` gives the oracle's rows (a corpus of empty sets: nothing)."""
    sets, measure, k, floor = case
    if not any(sets):
        return
    res = allpairs.join(sets, floor, measure=measure, jobs=2, **{option: k})
    oracle = naive.top_pairs if option == "top" else naive.neighbors
    assert rows(res) == oracle(sets, k, measure, floor)
    assert len(res.pairs) == len(rows(res))


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(ranked_case())
def test_top_pairs_match_the_oracle(case):
    agrees_with_the_oracle(case, "top")


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(ranked_case())
def test_neighbors_match_the_oracle(case):
    agrees_with_the_oracle(case, "neighbors")


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(ranked_case())
def test_neighbors_found_in_blocks_of_one_match_the_oracle(case):
    # Every step's sets probed one block per set, each join's pairs taken a set's task at a time (blocks of one
    # pair, tasks of one set) and only the best entries of each set kept from one to the next.
    from unittest import mock

    from allpairs.exact import prefix, topk
    from allpairs.output import spill

    with mock.patch.object(topk, "CANDIDATE_BLOCK", 1), mock.patch.object(spill, "SET_PAIR_BYTES", 1 << 62), \
            mock.patch.object(prefix, "MIN_TASK_COST", 1), \
            mock.patch.object(prefix, "PARALLEL_MIN_COST", 0):
        agrees_with_the_oracle(case, "neighbors")


@pytest.mark.parametrize("option", ["neighbors", "top"])
@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=ranked_case())
def test_neighbors_and_top_in_blocks_bounded_by_k_match_the_oracle(option, case):
    # A block of (K + 1) pairs a set (neighbours) or a few for each pair kept (top) at most, whatever the memory
    # budget: a handful of pairs a block here.
    from unittest import mock

    from allpairs.exact import prefix, topk

    with mock.patch.object(topk, "NEIGHBOR_BLOCK", 1), mock.patch.object(topk, "MIN_NEIGHBOR_BLOCK", 1), \
            mock.patch.object(prefix, "MIN_TASK_COST", 1), \
            mock.patch.object(prefix, "PARALLEL_MIN_COST", 0):
        agrees_with_the_oracle(case, option)


def test_the_top_block_is_bounded_by_k_not_by_the_memory_budget(monkeypatch):
    # --top 10 on 20,000 two-token lines (every pair at 1/3) peaked at 1,002 MiB with blocks of the budget.
    from allpairs.exact import topk

    seen = []
    blocks = topk.prefix_join_blocks
    monkeypatch.setattr(topk, "prefix_join_blocks", lambda *a, block_pairs, **kw:
                        seen.append(block_pairs) or blocks(*a, block_pairs=block_pairs, **kw))
    allpairs.join([f"c u{i}" for i in range(300)], top=10, shingle="word:1", memory="1G")
    assert seen and set(seen) == {topk.MIN_NEIGHBOR_BLOCK}
    assert topk.top_block(100_000, (256 << 20) // 48) == 4 * 100_001
    assert topk.top_block(10, 1_000) == 1_000, "a smaller budget still bounds the block"


def test_the_neighbours_block_is_bounded_by_the_sets_not_by_the_memory_budget(monkeypatch):
    # 5,000 two-token lines took 1,666 MiB with blocks of the budget (5.6 M pairs at 256 MiB); 131 MiB bounded
    # by the sets (4 x 6 entries x 5,000 sets = 120,000 pairs a block).
    from allpairs.exact import topk

    seen = []
    blocks = topk.prefix_join_blocks
    monkeypatch.setattr(topk, "prefix_join_blocks", lambda *a, block_pairs, **kw:
                        seen.append(block_pairs) or blocks(*a, block_pairs=block_pairs, **kw))
    docs = [f"c u{i}" for i in range(300)]
    res = allpairs.join(docs, neighbors=5, shingle="word:1", memory="1G")
    assert set(seen) == {topk.MIN_NEIGHBOR_BLOCK} and topk.MIN_NEIGHBOR_BLOCK < (1 << 30) // 48
    assert topk.neighbor_block(5, 5_000, (256 << 20) // 48) == 4 * 6 * 5_000
    assert topk.neighbor_block(5, 5_000, 1_000) == 1_000, "a smaller budget still bounds the block"
    assert [(p.left, p.right) for p in res.pairs][:5] == [(0, i) for i in range(1, 6)]


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(ranked_case())
def test_top_pairs_kept_a_block_of_one_pair_at_a_time_match_the_oracle(case):
    from unittest import mock

    from allpairs.exact import prefix
    from allpairs.output import spill

    with mock.patch.object(spill, "SET_PAIR_BYTES", 1 << 62), mock.patch.object(prefix, "MIN_TASK_COST", 1), \
            mock.patch.object(prefix, "PARALLEL_MIN_COST", 0):
        agrees_with_the_oracle(case, "top")


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
    ({"top": 0}, "top=0 is below 1"),
    ({"top": -1}, "top=-1 is below 1"),
    ({"top": True}, "not a whole number"),
    ({"top": 2, "neighbors": 2}, "give one of them"),
    ({"neighbors": 2, "measure": "containment"}, "neighbors= takes measure= jaccard, cosine, dice"),
    ({"top": 2, "method": "lsh"}, "exact only"),
    ({"top": 2, "clusters": True}, "drop clusters=True"),
    ({"top": 2, "against": [["a"]]}, "self-join"),
])
def test_bad_ranked_options_are_one_usage_error(kwargs, message):
    with pytest.raises(UsageError, match=message) as e:
        allpairs.join([["a", "b"], ["a"]], **kwargs)
    assert "--" not in str(e.value), "the library names parameters, not flags"


def test_ranked_results_index_like_a_list():
    res = allpairs.join([["a"], ["a"], ["a", "b"], ["b"]], neighbors=2)
    every = list(res.pairs)
    assert [res.pairs[i] for i in range(len(every))] == every == res.pairs[:]
    assert res.pairs[-1] == every[-1]
    top = allpairs.join([["a"], ["a"], ["a", "b"], ["b"]], top=3)
    assert top.pairs[1:] == list(top.pairs)[1:]


# --- the command line -------------------------------------------------------

from pathlib import Path  # noqa: E402

from typer.testing import CliRunner  # noqa: E402

from allpairs.cli import app  # noqa: E402

TINY = Path(__file__).resolve().parents[1] / "datasets" / "tiny" / "corpus"


def run(*args):
    return CliRunner().invoke(app, [str(a) for a in args], prog_name="allpairs")


def test_cli_top_prints_the_best_pairs_first():
    r = run("join", "--top", "4", "-s", "word:1", "-q", "--no-header", TINY)
    assert r.exit_code == 0, r.stderr
    assert r.stdout.splitlines() == ["fox-copy.txt\tfox-shouted.txt\t1.000000", "fox-copy.txt\tfox.txt\t1.000000",
                                     "fox-shouted.txt\tfox.txt\t1.000000", "fox-copy.txt\tfox-jumped.txt\t0.777777"]


def test_cli_neighbors_with_a_floor_lists_each_document_in_input_order():
    r = run("join", "--neighbors", "1", "-t", "0.5", "-s", "word:1", "-q", "--no-header", "-f", "csv", TINY)
    assert r.exit_code == 0, r.stderr
    assert r.stdout.splitlines() == ["fox-copy.txt,fox-shouted.txt,1.000000,8,8,8",
                                     "fox-jumped.txt,fox-copy.txt,0.777777,7,8,8",
                                     "fox-short.txt,fox-copy.txt,0.500000,4,4,8",
                                     "fox-shouted.txt,fox-copy.txt,1.000000,8,8,8",
                                     "fox.txt,fox-copy.txt,1.000000,8,8,8"]


@pytest.mark.parametrize("args, message", [
    (["--top", "0"], "--top 0 is below 1"),
    (["--top", "-1"], "--top -1 is below 1"),
    (["--top", "3", "--count"], "--count goes with a threshold join"),
    (["--top", "3", "--neighbors", "3"], "give one of them"),
    (["--neighbors", "3", "--measure", "containment"], "--neighbors takes --measure jaccard, cosine, dice"),
    (["--top", "3", "--measure", "overlap"], "--top takes --measure"),
    ([], "missing option '--threshold'"),
])
def test_cli_bad_ranked_options_are_one_line_and_exit_2(args, message):
    r = run("join", *args, "-s", "word:1", TINY)
    assert r.exit_code == 2
    assert r.stdout == ""
    assert r.stderr.startswith("allpairs: error: ") and message in r.stderr.splitlines()[0]
    assert "Traceback" not in r.stderr


# --- real corpora -------------------------------------------------------------

def ranked_oracle(res_pairs, measure, k, per_document=False):
    """Rank a threshold join's pairs (each oracle-checked elsewhere) by exact similarity, as --top/--neighbors
    would over them: the k best, or each document's k best."""
    value = {"jaccard": lambda o, a, b: Fraction(o, a + b - o), "dice": lambda o, a, b: Fraction(2 * o, a + b),
             "cosine": lambda o, a, b: Fraction(o * o, a * b)}[measure]
    if not per_document:
        return [p[:5] for p in sorted((tuple(p) for p in res_pairs), key=lambda p: (-value(*p[2:]), p[0], p[1]))[:k]]
    by_doc: dict = {}
    for i, j, o, a, b in res_pairs:
        by_doc.setdefault(i, []).append((-value(o, a, b), j, o, a, b))
        by_doc.setdefault(j, []).append((-value(o, b, a), i, o, b, a))
    return [(i, *row[1:]) for i in sorted(by_doc) for row in sorted(by_doc[i])[:k]]


@pytest.mark.parametrize("measure", MEASURES)
def test_kosarak_distinct_sets_top_1000_and_neighbors_equal_the_ranked_threshold_join(shared_datasets, measure):
    path = shared_datasets / "kosarak-sample.dat"
    if not path.exists():
        pytest.skip(f"Kosarak sample not found at {path}")
    from datasets.kosarak import kosarak_sets

    sets = kosarak_sets(distinct=True)
    floor = "0.7" if measure == "jaccard" else "0.8"  # at least the 7,693 pairs of Jaccard 0.7 (REFERENCE.md §4)
    every = list(allpairs.join(sets, floor, measure=measure).pairs)
    assert len(every) > 1000
    top = allpairs.join(sets, top=1000, measure=measure)
    assert rows(top) == ranked_oracle(every, measure, 1000)
    near = allpairs.join(sets, floor, neighbors=3, measure=measure)
    assert rows(near) == ranked_oracle(every, measure, 3, per_document=True)


def test_john_passwords_top_and_neighbors_equal_brute_force():
    import datasets.passwords as pw

    try:
        words = pw.john_passwords()[:700]
    except FileNotFoundError as e:
        pytest.skip(str(e).replace("\n", " "))
    sets = [naive.char_shingles(w, 3) for w in words]
    res = allpairs.join(words, top=300, shingle="char:3")
    assert rows(res) == naive.top_pairs(sets, 300)
    res = allpairs.join(words, neighbors=2, shingle="char:3")
    assert rows(res) == naive.neighbors(sets, 2)


def test_go_tree_sets_top_20_and_neighbors_equal_the_ranked_threshold_join(go_reference_src):
    # The six directories of tests/test_go_reference.py (59 pairs at 0.5): their 20 best, code:5 shingles.
    from test_go_reference import SIX, TREE_OPTIONS

    include = [arg for d in SIX for arg in ("--include", f"/{d}/*.go")]

    def csv_rows(*args):
        r = run("join", "-q", "--no-header", "-f", "csv", *args, *include, *TREE_OPTIONS, go_reference_src)
        assert r.exit_code == 0, r.stderr
        return [line.split(",") for line in r.stdout.splitlines()]

    every = csv_rows("-t", "0.5")
    assert len(every) == 59
    value = {tuple(r[:2]): Fraction(int(r[3]), int(r[4]) + int(r[5]) - int(r[3])) for r in every}
    order = {name: k for k, name in enumerate(sorted({n for r in every for n in r[:2]}))}
    expected = sorted(value, key=lambda p: (-value[p], order[p[0]], order[p[1]]))[:20]
    assert [tuple(r[:2]) for r in csv_rows("--top", "20")] == expected
    # Each file's 2 nearest at or above 0.5, from the same 59 pairs seen from both ends.
    partners: dict = {}
    for (a, b), v in value.items():
        partners.setdefault(a, []).append((-v, order[b], b))
        partners.setdefault(b, []).append((-v, order[a], a))
    expected = [(a, row[2]) for a in sorted(partners, key=order.get) for row in sorted(partners[a])[:2]]
    assert [tuple(r[:2]) for r in csv_rows("--neighbors", "2", "-t", "0.5")] == expected


# --- the saved index: query --top ------------------------------------------------

@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(corpora(), st.integers(0, 30), st.sampled_from(MEASURES), st.integers(1, 4),
       st.sampled_from([Fraction(1, 10), Fraction(1, 2), Fraction(7, 10)]))
def test_index_query_top_keeps_each_querys_best_matches_as_the_oracle(sets, cut, measure, k, t):
    from allpairs.index import SearchIndex

    indexed, queries = sets[:cut], [list(s) for s in sets[cut:]] + [list(s) + [1000] for s in sets[:3]]
    if not any(indexed):
        return
    index = SearchIndex.build(indexed, t, measure=measure)
    got = [(q, int(index.ids[d]), o, a, b) for q, d, o, a, b in index.query(queries, top=k)]
    value = naive._ranked_value
    expected = []
    every = naive.rs_pairs(queries, indexed, t, measure)
    for q in sorted({row[0] for row in every}):
        mine = [row for row in every if row[0] == q]
        mine.sort(key=lambda row: (-value(measure, set(queries[q]), set(indexed[row[1]])), row[1]))
        expected += mine[:k]
    assert got == expected


def test_cli_index_query_top(tmp_path):
    idx = tmp_path / "tiny.idx"
    r = run("index", "build", "-q", "-t", "0.5", "-s", "word:1", "-o", idx, TINY)
    assert r.exit_code == 0, r.stderr
    r = run("index", "query", "-q", "--no-header", "--top", "1", idx, TINY / "fox.txt", TINY / "fox-short.txt")
    assert r.exit_code == 0, r.stderr
    # fox.txt: three identical files at 1.0, the first indexed wins; fox-short.txt: itself.
    assert [line.split("\t")[1:] for line in r.stdout.splitlines()] == [["fox-copy.txt", "1.000000"],
                                                                        ["fox-short.txt", "1.000000"]]
    bad = run("index", "query", "--top", "0", idx, TINY / "fox.txt")
    assert bad.exit_code == 2 and bad.stderr.startswith("allpairs: error: --top 0 is below 1")


def test_ranked_results_convert_to_pandas_in_their_order():
    pytest.importorskip("pandas")
    res = allpairs.join({"a": ["x", "y"], "b": ["x", "y", "z"], "c": ["x", "y"], "d": ["q"]}, top=2)
    df = res.to_pandas()
    assert df[["left", "right"]].values.tolist() == [["a", "c"], ["a", "b"]]
    assert df["similarity"].tolist() == [1.0, 2 / 3]


def test_the_neighbours_summary_says_what_each_count_of_pairs_counts(tmp_path):
    # It once read "150,000 pairs (1,021,186 between distinct sets)": more pairs behind fewer, unexplained.
    lines = tmp_path / "two.txt"
    lines.write_text("".join(f"c u{i}\n" for i in range(40)))
    r = run("join", "--neighbors", "3", "-s", "word:1", "--lines", lines)
    assert r.exit_code == 0, r.stderr
    line = next(x for x in r.stderr.splitlines() if "nearest" in x)
    assert line.startswith("allpairs: 120 pairs output, the 3 nearest neighbours of each document")
    assert "read 780 candidates and verified 780 pairs of distinct sets, of which each set keeps its 3 best" in line
