"""allpairs.compat against SetSimilaritySearch 1.0.1 itself: same pairs, order, values, types, attributes, errors, logs.

Every comparison is of ``repr``: numpy 2 writes a scalar with its type
(``np.int64(3)``, ``np.float64(0.5)``) and a float with all its digits, so
equal reprs mean equal values, types and order.
"""
from __future__ import annotations

import logging
import pickle
import subprocess
import sys
import tracemalloc
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from allpairs import compat
from allpairs.compat import SearchIndex, all_pairs
from strategies import corpora, exact_hits, large_denominator_fractions

SetSimilaritySearch = pytest.importorskip("SetSimilaritySearch")

SYMMETRIC = ["jaccard", "cosine", "containment_min"]
ALL = SYMMETRIC + ["containment"]
#: Thresholds hit exactly, with large denominators, ints, and numpy floats of three widths.
FIXED_THRESHOLDS = [0.0, 0.1, 0.2, 1 / 3, 0.5, 0.7, 0.9, 1.0, 0.28, 999999999 / 1000000000, 1e-9,
                    536870913 / 1000000000, 0, 1, np.float32(0.2), np.float32(0.7), np.float64(0.5),
                    np.float16(0.3)]


@st.composite
def corpus_and_threshold(draw, max_docs=20):
    sets = draw(corpora(max_docs=max_docs)) or [[1]]
    hits = [float(f) for f in exact_hits(sets)]
    choices = [st.sampled_from(FIXED_THRESHOLDS), large_denominator_fractions.map(float)]
    if hits:
        choices.append(st.sampled_from(hits))
        choices.append(st.sampled_from(hits).map(np.float32))
    return sets, draw(st.one_of(*choices))


def both_all_pairs(sets, func, t):
    theirs = list(SetSimilaritySearch.all_pairs(sets, similarity_func_name=func, similarity_threshold=t))
    ours = list(all_pairs(sets, similarity_func_name=func, similarity_threshold=t))
    return repr(ours), repr(theirs)


@pytest.mark.kernel_paths("compiled", "python")
@settings(max_examples=150, deadline=None)
@given(corpus_and_threshold(), st.sampled_from(SYMMETRIC))
def test_all_pairs_gives_set_similarity_searchs_pairs_in_its_order_with_its_values_and_types(case, func):
    sets, t = case
    ours, theirs = both_all_pairs(sets, func, t)
    assert ours == theirs


@pytest.mark.kernel_paths("compiled", "python", "jit")
@settings(max_examples=100, deadline=None)
@given(corpus_and_threshold(), corpora(max_docs=6), st.sampled_from(ALL))
def test_queries_give_set_similarity_searchs_results_in_its_order_with_its_values_and_types(case, queries, func):
    sets, t = case
    ours = SearchIndex(sets, similarity_func_name=func, similarity_threshold=t)
    theirs = SetSimilaritySearch.SearchIndex(sets, similarity_func_name=func, similarity_threshold=t)
    for q in queries + sets[:4] + [[1000, 1], [1000], [], [1, 1, 2, 2, 3]]:
        assert repr(ours.query(q)) == repr(theirs.query(q)), q
    # What clients read from the index, after the queries (a query adds the keys it reads to ``index``).
    for name in ("order", "sets", "index", "similarity_threshold"):
        assert repr(getattr(ours, name)) == repr(getattr(theirs, name)), name
    for name in ("similarity_func", "overlap_threshold_func", "overlap_index_threshold_func", "position_filter_func"):
        assert getattr(ours, name).__name__ == getattr(theirs, name).__name__


def test_ties_come_in_set_similarity_searchs_set_order_not_sorted():
    # Sets 30-39 all pair with the probe at one similarity: the order is the iteration order of a Python
    # set of their indices, which puts 32-39 (32 & 31 == 0) before 30 and 31.
    sets = [[1000 + i] for i in range(30)] + [[0, 1, 2, 100 + i] for i in range(10)] + [[0, 1, 2, 99]]
    ours = SearchIndex(sets, similarity_threshold=0.5).query([0, 1, 2, 99])
    theirs = SetSimilaritySearch.SearchIndex(sets, similarity_threshold=0.5).query([0, 1, 2, 99])
    assert repr(ours) == repr(theirs)
    assert [i for i, _ in ours] != sorted(i for i, _ in ours)
    ours_pairs, theirs_pairs = both_all_pairs(sets, "jaccard", 0.5)
    assert ours_pairs == theirs_pairs
    assert eval(ours_pairs, {"np": np}) != sorted(eval(ours_pairs, {"np": np}), key=lambda p: (p[0], p[1]))


def test_repeated_tokens_score_as_set_similarity_search_scores_them():
    # ``intersect1d(assume_unique=True)`` counts every repeat as a match: 7 "matches" over 6 distinct words,
    # 7/6, where the sets {the, cat, sat, on, mat} and {the, cat, sat, on, rug} have 4/6.
    tm = ["the cat sat on the mat".split(), "a dog sat on a log".split()]
    query = "the cat sat on the the rug".split()
    ours = SearchIndex(tm, similarity_func_name="jaccard", similarity_threshold=0.3).query(query)
    theirs = SetSimilaritySearch.SearchIndex(tm, similarity_func_name="jaccard", similarity_threshold=0.3).query(query)
    assert repr(ours) == repr(theirs)
    by_set = dict(ours)
    assert by_set == {0: 7 / 6} and float(Fraction(4, 6)) != by_set[0]
    pairs = list(all_pairs([["a", "a", "b"], ["a", "c"]], similarity_threshold=0.3))
    assert repr(pairs) == repr(list(SetSimilaritySearch.all_pairs([["a", "a", "b"], ["a", "c"]],
                                                                   similarity_threshold=0.3)))
    assert pairs == [(1, 0, 2 / 3)]  # 1/3 as sets


def test_numpy_thresholds_compare_in_numpys_precision_as_there():
    # J = 1/5 exactly: a Python float 0.2 >= np.float32(0.2) compares in float32 (numpy 2), so it passes;
    # cosine's numpy.float64 compares in float64, where 0.2 < float32(0.2).
    sets = [[0], [0, 100, 101, 102, 103]]
    for func in ("jaccard", "cosine", "containment_min"):
        for t in (np.float32(0.2), np.float32(0.1), np.float16(0.2), np.float64(0.2)):
            ours, theirs = both_all_pairs(sets, func, t)
            assert ours == theirs, (func, t)
    assert list(all_pairs(sets, "jaccard", np.float32(0.2))) == [(1, 0, 0.2)]
    assert list(all_pairs(sets, "jaccard", float(np.float32(0.2)))) == []
    cosine_one_fifth = [[0], [0, *range(100, 124)]]  # 1 / sqrt(1 * 25)
    assert both_all_pairs(cosine_one_fifth, "cosine", np.float32(0.2)) == ("[]", "[]")
    assert list(all_pairs(cosine_one_fifth, "containment_min", np.float32(0.04))) == [(1, 0, 0.04)]


def errors(make):
    try:
        make()
    except Exception as e:  # noqa: BLE001 - the type and message are what is compared
        return type(e), str(e)
    return None


def test_bad_input_raises_set_similarity_searchs_exceptions_with_its_messages():
    nan = float("nan")
    cases = [([], {}), ((["a"],), {}), ("ab", {}), ([["a"]], {"similarity_func_name": "dice"}),
             ([["a"]], {"similarity_threshold": 1.5}), ([["a"]], {"similarity_threshold": -0.1}),
             ([["a"]], {"similarity_threshold": nan}), ([["a"]], {"similarity_threshold": np.float32(nan)}),
             ([["a"]], {"similarity_threshold": "0.5"}), ([["a"], 3], {}), ([["a"], [["b"]]], {}),
             ([["a"]], {"similarity_func_name": "containment"}), ([["a"]], {"similarity_func_name": ["jaccard"]})]
    for sets, kw in cases:
        theirs = errors(lambda: SetSimilaritySearch.SearchIndex(sets, **kw))
        assert errors(lambda: SearchIndex(sets, **kw)) == theirs, (sets, kw)
        theirs = errors(lambda: list(SetSimilaritySearch.all_pairs(sets, **kw)))
        assert errors(lambda: list(all_pairs(sets, **kw))) == theirs, (sets, kw)
        assert theirs is not None
    index, theirs = SearchIndex([["a"]]), SetSimilaritySearch.SearchIndex([["a"]])
    for q in (3, [["a"]], iter(["a"])):
        assert errors(lambda: index.query(q)) == errors(lambda: theirs.query(q)) is not None


def records(run):
    """The root logger's records (logger, level, function, message) while ``run`` runs."""
    seen = []

    class Keep(logging.Handler):
        def emit(self, record):
            seen.append((record.name, record.levelname, record.funcName, record.getMessage()))

    root = logging.getLogger()
    keep, level = Keep(), root.level
    root.addHandler(keep)
    root.setLevel(logging.DEBUG)
    try:
        run()
    finally:
        root.removeHandler(keep)
        root.setLevel(level)
    return seen


def test_debug_records_are_set_similarity_searchs():
    sets = [["a", "b", "c"], ["a", "b"], ["c", "d"], ["a", "b", "c", "x"]]

    def use(module):
        def run():
            list(module.all_pairs(sets, "cosine", 0.5))
            module.SearchIndex(sets, "containment", 0.5).query(["a", "b", "z"])
        return run

    ours, theirs = records(use(compat)), records(use(SetSimilaritySearch))
    assert ours == theirs and len(ours) == 14


def test_logging_configures_the_root_logger_as_logging_debug_does():
    script = ("import logging, allpairs.compat as c; list(c.all_pairs([[1, 2], [1, 2]])); "
              "print(len(logging.getLogger().handlers))")
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "1"


def test_install_makes_every_module_of_set_similarity_search_resolve_to_compat():
    script = """
import sys, types, allpairs.compat
allpairs.compat.install()
import SetSimilaritySearch, SetSimilaritySearch.search, SetSimilaritySearch.utils, SetSimilaritySearch.all_pairs
from SetSimilaritySearch import all_pairs, SearchIndex
from SetSimilaritySearch.utils import _similarity_funcs, _frequency_order_transform
assert SetSimilaritySearch is allpairs.compat and SearchIndex is allpairs.compat.SearchIndex
assert all_pairs is allpairs.compat.all_pairs and isinstance(all_pairs, types.FunctionType)
assert sys.modules["SetSimilaritySearch.all_pairs"].all_pairs is all_pairs
assert SetSimilaritySearch.utils is sys.modules["allpairs.compat.utils"]
print(sorted(_similarity_funcs))
"""
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "['containment', 'containment_min', 'cosine', 'jaccard']"


def test_a_bare_sys_modules_substitution_resolves_the_submodules_to_the_same_modules():
    script = """
import sys, types, allpairs.compat
sys.modules["SetSimilaritySearch"] = allpairs.compat
from SetSimilaritySearch.utils import _similarity_funcs
import SetSimilaritySearch.all_pairs, SetSimilaritySearch.search
from SetSimilaritySearch import all_pairs, SearchIndex
assert isinstance(all_pairs, types.FunctionType) and all_pairs is vars(allpairs.compat)["all_pairs"]
assert _similarity_funcs is sys.modules["allpairs.compat.utils"]._similarity_funcs
assert sys.modules["SetSimilaritySearch.search"] is sys.modules["allpairs.compat.search"]
assert sys.modules["SetSimilaritySearch.all_pairs"] is sys.modules["allpairs.compat.all_pairs"]
print(list(all_pairs([[1, 2], [1, 2, 3]], similarity_threshold=0.5)))
"""
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[(np.int64(1), np.int64(0), 0.6666666666666666)]"


def test_frequency_order_transform_is_set_similarity_searchs():
    from allpairs.compat.utils import _frequency_order_transform
    from SetSimilaritySearch.utils import _frequency_order_transform as theirs

    sets = [["b", "a", "b"], [], ["c", "a"], iter(["d", "a"]), {"x": 1, "a": 2}, "ab", [1, 1.0, True]]
    again = [s if not hasattr(s, "__next__") else iter(["d", "a"]) for s in sets]
    assert repr(_frequency_order_transform(sets)) == repr(theirs(again))


def test_all_pairs_yields_its_first_pair_without_holding_all_pairs():
    # 600 identical sets: 179,700 pairs, ~27 MiB as tuples; the generator holds one batch (~5 MiB).
    sets = [[1, 2, 3, 4, 5]] * 600
    list(all_pairs(sets[:10]))  # kernels loaded before measuring
    tracemalloc.start()
    try:
        pairs = all_pairs(sets)
        first = next(pairs)
        at_first = tracemalloc.get_traced_memory()[1]
        n = 1 + sum(1 for _ in pairs)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert first[2] == 1.0 and n == 600 * 599 // 2
    assert at_first < 4 * 2**20, at_first
    assert peak < 10 * 2**20, peak


def test_a_token_a_program_adds_to_order_is_queried_as_there():
    sets = [["a", "b"], ["b", "c"], ["a", "b", "c"]]
    ours, theirs = SearchIndex(sets, similarity_threshold=0.3), SetSimilaritySearch.SearchIndex(sets, similarity_threshold=0.3)
    for index in (ours, theirs):
        index.order["new"] = len(index.order)  # beyond every posting list
    for q in (["new", "a", "b"], ["new"], ["b", "c", "new"]):
        assert repr(ours.query(q)) == repr(theirs.query(q))
    assert repr(ours.index) == repr(theirs.index)


def test_a_pickled_index_answers_as_the_original():
    sets = [[1, 2, 3], [2, 3, 4], [3, 4, 5], [9]]
    index = SearchIndex(sets, similarity_threshold=0.2)
    index.query([7, 8])
    copy = pickle.loads(pickle.dumps(index))
    assert repr(copy.query([2, 3])) == repr(index.query([2, 3]))
    assert repr(copy.index) == repr(SetSimilaritySearch.SearchIndex(sets, similarity_threshold=0.2).index)
