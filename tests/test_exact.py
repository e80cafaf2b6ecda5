"""The exact join (order → prefix index → probe → verify → expand) against the brute-force oracle."""
import concurrent.futures
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from allpairs.exact import prefix, prefix_join
from allpairs.exact.plan import per_size
from allpairs.measures import Threshold
from allpairs.order import order_sets
from allpairs.pairs import Pairs

import naive
from naive import all_pairs
from strategies import ROUND_THRESHOLDS, corpora, corpus_and_threshold, large_denominator_thresholds, near_hits


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


@pytest.mark.kernel_paths("compiled", "python")
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


@settings(max_examples=200, deadline=None)
@given(st.sets(st.integers(-300, 300), max_size=90), st.sets(st.integers(-300, 300), max_size=90),
       st.integers(0, 5))
def test_bitmap_bound_is_never_below_the_true_overlap(a, b, unseen):
    # The index's queries: ``unseen`` tokens in no indexed set count in |x| but are not in its signature.
    from allpairs.verify._kernel import bitmap, bitmap_admits, bitmaps, popcount

    a, b = sorted(a), sorted(b)
    indptr = np.array([0, len(a), len(a) + len(b)], np.int64)
    tokens = np.array(a + b, np.int32)
    bits = bitmaps(indptr, tokens)
    assert bits[0] == bitmap(tokens, 0, len(a)) and bits[1] == bitmap(tokens, len(a), len(a) + len(b))
    common = len(set(a) & set(b))
    assert common <= (len(a) + len(b) - popcount(bits[0] ^ bits[1])) // 2
    assert bitmap_admits(len(a) + unseen, len(b), bits[0], bits[1], common)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(0, 40), max_size=60), st.booleans())
def test_per_size_gives_each_set_its_sizes_bound_sorted_or_not(sizes, sort):
    sizes = np.array(sorted(sizes) if sort else sizes, np.int64)
    got = per_size(lambda s: None if s % 7 == 3 else s * s - 5, sizes, none=-1)
    assert got.dtype == np.int64
    assert got.tolist() == [-1 if s % 7 == 3 else s * s - 5 for s in sizes.tolist()]


def test_a_small_join_is_one_task_and_a_large_one_many_per_thread():
    assert prefix.task_count(0, 10, 4) == 1
    assert prefix.task_count(prefix.MIN_TASK_COST - 1, 10_000, 2) == 1
    assert prefix.task_count(5 * prefix.MIN_TASK_COST, 10_000, 2) == 5
    assert prefix.task_count(10**12, 10_000, 2) == 2 * prefix.TASKS_PER_THREAD
    assert prefix.task_count(10**12, 3, 2) == 3


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(0, 50), max_size=40), st.integers(1, 9), st.one_of(st.none(), st.integers(1, 120)))
def test_one_threads_tasks_end_where_a_block_or_the_cost_limit_does(costs, block, limit):
    """:func:`prefix._block_cut`: ranges covering the sets in order, each of at most ``block`` sets and of cost at
    most ``limit`` (or of one set), none of which could take the next set; the cost before each boundary."""
    bounds, cum = prefix._block_cut(np.array(costs, np.int64), block, limit)
    bounds, cum = bounds.tolist(), cum.tolist()
    assert bounds[0] == 0 and bounds[-1] == len(costs) and len(bounds) >= 2
    assert cum == [sum(costs[:b]) for b in bounds]
    for a, e in zip(bounds, bounds[1:]):
        assert 0 < e - a <= block or e == a == len(costs) == 0
        if limit is not None:
            assert sum(costs[a:e]) <= limit or e - a == 1
        if e < len(costs):  # as long as both allow
            assert e - a == block or (limit is not None and sum(costs[a:e + 1]) > limit)


def test_one_thread_runs_the_tasks_without_a_thread_pool(monkeypatch):
    def no_pool(*args, **kwargs):
        raise AssertionError("a thread pool was started for --jobs 1")
    monkeypatch.setattr(concurrent.futures, "ThreadPoolExecutor", no_pool)  # imported where a pool starts
    sets = [[1, 2, 3], [1, 2, 3, 4], [2, 3, 4, 5], [7], [7, 8]]
    assert fast_pairs(sets, "0.5", jobs=1) == all_pairs(sets, Fraction(1, 2))
    # A join too small to be cut into more than one task runs on the caller's thread whatever --jobs says.
    assert fast_pairs(sets, "0.5", jobs=2) == all_pairs(sets, Fraction(1, 2))
    # So does one cut into many tasks whose probe costs less than PARALLEL_MIN_COST entries in all.
    monkeypatch.setattr(prefix, "MIN_TASK_COST", 1)
    assert fast_pairs(sets, "0.5", jobs=2) == all_pairs(sets, Fraction(1, 2))


def test_a_join_costing_parallel_min_cost_or_more_runs_its_tasks_on_a_pool(monkeypatch):
    started = []
    pool = concurrent.futures.ThreadPoolExecutor

    def counted_pool(*args, **kwargs):
        started.append(kwargs.get("max_workers"))
        return pool(*args, **kwargs)
    monkeypatch.setattr(concurrent.futures, "ThreadPoolExecutor", counted_pool)
    monkeypatch.setattr(prefix, "MIN_TASK_COST", 1)
    sets = [[1, 2, 3], [1, 2, 3, 4], [2, 3, 4, 5], [7], [7, 8], [1, 2, 4], [2, 3, 5, 7]]
    monkeypatch.setattr(prefix, "PARALLEL_MIN_COST", 1)
    assert fast_pairs(sets, "0.5", jobs=2) == all_pairs(sets, Fraction(1, 2))
    assert started == [2]


def test_pairs_whose_later_matches_lie_past_the_probe_prefix_are_verified_in_full():
    # Sizes 6..12 sharing a run of tokens: probing stops reading a list at |x| - α(|x|, |y|),
    # so the overlap past it is counted by verification, which must resume at the right place.
    sets = [list(range(k, k + n)) for n in range(6, 13) for k in range(0, 4)]
    for t in ("0.5", "0.6", "2/3", "0.75"):
        assert fast_pairs(sets, t) == all_pairs(sets, Fraction(t))


@pytest.mark.kernel_paths("compiled", "python")
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(corpus_and_threshold(), st.booleans(), st.data())
def test_limited_prefixes_return_exact_pairs_and_all_whose_first_common_token_lies_within_them(case, moved, data):
    # The Spark engine's token groups index and probe only within such limits, and (``moved``) read the
    # bounds at each token's position in the global order (``at``): here a permutation of each set's
    # positions, increasing along its first max(limits) tokens. A pair is then still found if no common
    # token precedes its first one in that order either (its overlap within the positional bound there).
    sets, t = case
    indptr = np.zeros(len(sets) + 1, np.int64)
    indptr[1:] = np.cumsum([len(s) for s in sets])
    o = order_sets(indptr, np.array([tok for s in sets for tok in s], np.uint64))
    m = o.num_sets
    sizes = np.diff(o.indptr).tolist()
    limits = st.lists(st.integers(0, 15), min_size=m, max_size=m).map(lambda v: np.array(v, np.int64))
    index_limit, probe_limit = data.draw(limits, label="index_limit"), data.draw(limits, label="probe_limit")
    positions = [list(range(n)) for n in sizes]
    for k, n in enumerate(sizes if moved else []):
        head = min(n, max(index_limit[k], probe_limit[k]))
        front = sorted(data.draw(st.permutations(range(n)), label=f"positions {k}")[:head])
        positions[k] = front + data.draw(st.permutations(sorted(set(range(n)) - set(front))))
    found = prefix_join(o.indptr, o.tokens, o.num_tokens, Threshold.parse(t), index_limit=index_limit,
                        probe_limit=probe_limit,
                        at=np.array([p for ps in positions for p in ps], np.int32) if moved else None,
                        live_len=np.diff(o.indptr) if moved else None)
    got = {(int(a), int(b)): int(v) for a, b, v in zip(found.left, found.right, found.overlap)}
    distinct = [o.tokens[o.indptr[k]:o.indptr[k + 1]].tolist() for k in range(m)]
    truth = {(a, b): v for a, b, v, _, _ in all_pairs(distinct, t)}
    assert got.items() <= truth.items()
    for (a, b), overlap in truth.items():
        # a (earlier: smaller) is indexed, b probes; positions of their first common token.
        first = min(set(distinct[a]) & set(distinct[b]))
        i, j = distinct[a].index(first), distinct[b].index(first)
        if i < index_limit[a] and j < probe_limit[b] and \
                overlap <= 1 + min(sizes[a] - positions[a][i] - 1, sizes[b] - positions[b][j] - 1):
            assert (a, b) in got, (a, b)


def group_join(sets, order, group, g, t):
    """One token group's join as a Spark token-group task makes it, of distinct non-empty ``sets``:
    {(a, b): overlap} over indexes into ``sets``, a < b.

    ``order`` ranks the tokens (a global order, not by frequency), ``group`` maps each token to its group
    (-1: a hot token, in none). In the join's order each set's live tokens (of group ``g``) come first, as
    their ranks, then the other shared ones, as ranks from ``len(order)`` on (never indexed), then its own
    (in no other set), as ranks from ``2 len(order)`` on; ``at`` is each token's position in the set's global
    order (so that the own tokens' positions need not follow the others'); each set indexes and probes only
    its live tokens within its indexing and probing prefixes of the global order.
    """
    from collections import Counter

    from allpairs.exact.plan import join_plan
    from allpairs.measures import get_measure

    n = len(order)
    held = Counter(order[tok] for s in sets for tok in s)
    by_size = sorted(range(len(sets)), key=lambda k: len(sets[k]))
    sizes = np.array([len(sets[k]) for k in by_size], np.int64)
    _, index_len, probe_len, _, _ = join_plan(get_measure("jaccard"), t, sizes)
    tokens, at, index_limit, probe_limit, live_len = [], [], [], [], []
    for k, s in enumerate(by_size):
        ranked = sorted(order[tok] for tok in sets[s])  # the set in the global order
        live = [pos for pos, r in enumerate(ranked) if held[r] > 1 and group[r] == g]
        rest = [pos for pos, r in enumerate(ranked) if held[r] > 1 and group[r] != g]
        own = [pos for pos, r in enumerate(ranked) if held[r] == 1]
        tokens += ([ranked[pos] for pos in live] + [n + ranked[pos] for pos in rest]
                   + [2 * n + ranked[pos] for pos in own])
        at += live + rest + own
        index_limit.append(sum(pos < index_len[k] for pos in live))
        probe_limit.append(sum(pos < probe_len[k] for pos in live))
        live_len.append(len(live))
    indptr = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
    found = prefix_join(indptr, np.array(tokens, np.int32), n, t, jobs=1, index_limit=np.array(index_limit, np.int64),
                        probe_limit=np.array(probe_limit, np.int64), at=np.array(at, np.int32),
                        live_len=np.array(live_len, np.int64))
    return {(min(by_size[a], by_size[b]), max(by_size[a], by_size[b])): int(o)
            for a, b, o in zip(found.left, found.right, found.overlap)}


@pytest.mark.kernel_paths("compiled", "python")
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(corpus_and_threshold(), st.integers(1, 4), st.data())
def test_token_group_joins_keep_each_pair_in_the_group_of_its_first_common_token_only(case, groups, data):
    # The Spark engine's token-group tasks: any global order, any dealing of the tokens into groups, some
    # tokens hot (in no group). Every group's join drops, unverified, the pairs that share a token not live
    # before their first match in the global order, so each pair that reaches t comes out of exactly one
    # group's join, that of its first common token, with its exact overlap (none if that token is hot).
    sets, t = case
    distinct = sorted({tuple(sorted(set(s))) for s in sets if s})
    universe = sorted({tok for s in distinct for tok in s})
    order = dict(zip(universe, data.draw(st.permutations(range(len(universe))), label="order")))
    group = data.draw(st.lists(st.integers(-1, groups - 1), min_size=len(universe), max_size=len(universe)),
                      label="group of each rank")
    t = Threshold.parse(t)
    found = [group_join(distinct, order, group, g, t) for g in range(groups)]
    truth = {(a, b): v for a, b, v, _, _ in all_pairs(distinct, Fraction(t.p, t.q))}
    for (a, b), overlap in truth.items():
        first = min(order[tok] for tok in set(distinct[a]) & set(distinct[b]))
        assert [g for g in range(groups) if (a, b) in found[g]] == ([group[first]] if group[first] >= 0 else [])
    for g in range(groups):
        assert found[g].items() <= truth.items()


def test_the_bounds_read_the_positions_given_by_at():
    # Sets of sizes 10 and 11 (α = 7 at t = 1/2, overlap 9), each indexing and probing its first token only,
    # their first common one: a candidate, and a pair. At position 8 of both in ``at``'s order it is no
    # first match that can reach α (8 > 11 - 7: the order would put 8 common tokens before it): none.
    indptr = np.array([0, 10, 21], np.int64)
    tokens = np.array(list(range(10)) + list(range(9)) + [20, 21], np.int32)
    t, one = Threshold.parse("0.5"), np.ones(2, np.int64)
    plain = prefix_join(indptr, tokens, 30, t, index_limit=one, probe_limit=one)
    at = np.array([8, 0, 1, 2, 3, 4, 5, 6, 7, 9] + [8, 0, 1, 2, 3, 4, 5, 6, 7, 9, 10], np.int32)
    late = prefix_join(indptr, tokens, 30, t, index_limit=one, probe_limit=one, at=at, live_len=np.diff(indptr))
    assert (plain.candidates, plain.overlap.tolist()) == (1, [9])
    assert (late.candidates, late.overlap.tolist()) == (0, [])


@pytest.mark.kernel_paths("compiled", "python")
def test_pair_exactly_at_threshold_is_found():
    # J = 7/10 exactly: 7 common tokens, union 10.
    a = list(range(8))            # 8 tokens
    b = list(range(1, 10))        # 9 tokens, 7 shared, union 10
    assert fast_pairs([a, b], 0.7) == [(0, 1, 7, 8, 9)]
    assert fast_pairs([a, b], "0.7000001") == []


@pytest.mark.kernel_paths("compiled", "python")
def test_prefix_is_not_shortened_by_float_rounding():
    # math.ceil(0.28 * 25) == 8 in floating point, the true value is 7.
    t = Threshold.parse(0.28)
    from allpairs.measures import get_measure

    assert get_measure("jaccard").partner_sizes(t, 25)[0] == 7
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


# --- every measure, self and R–S, and clusters, against the oracle -------------

from math import isqrt  # noqa: E402

from allpairs.pipeline import exact_pairs  # noqa: E402
from allpairs.measures import get_measure, parse_threshold  # noqa: E402

MEASURES = ["jaccard", "cosine", "dice", "containment", "overlap"]


def _ordered(sets):
    indptr = np.zeros(len(sets) + 1, np.int64)
    indptr[1:] = np.cumsum([len(s) for s in sets])
    return order_sets(indptr, np.array([tok for s in sets for tok in s], np.uint64))


def measure_pairs(sets, threshold, measure, against=None, jobs=1, clusters=False):
    """The package's exact path for any measure (R–S when ``against`` is given), as the oracle's tuples."""
    n_left = None if against is None else len(sets)
    o = _ordered(list(sets) + list(against or []))
    m = get_measure(measure)
    pairs, _ = exact_pairs(o, parse_threshold(threshold, m), m, n_left=n_left, jobs=jobs)
    out = [tuple(p) for p in pairs]
    assert len(out) == len(pairs)
    if clusters:
        from allpairs.pairs.clusters import find_clusters
        return out, list(find_clusters(pairs))
    return out


def _hits(measure, sets):
    """Values of the measure that some pair of the corpus reaches exactly (rational ones for cosine)."""
    ss = [set(s) for s in sets if s]
    out = set()
    for a in ss:
        for b in ss:
            o = len(a & b)
            if not o:
                continue
            if measure == "cosine":
                num, den = o * o, len(a) * len(b)
                if isqrt(num) ** 2 == num and isqrt(den) ** 2 == den:
                    out.add(Fraction(isqrt(num), isqrt(den)))
            elif measure == "overlap":
                out.add(Fraction(o))
            else:
                out.add({"jaccard": naive.jaccard, "dice": naive.dice, "containment": naive.containment}[measure](a, b))
    return sorted(out)


@st.composite
def measure_case(draw, rs=False):
    measure = draw(st.sampled_from(MEASURES))
    sets = draw(corpora(max_docs=18))
    other = draw(corpora(max_docs=18)) if rs else None
    if other is not None and sets and draw(st.booleans()):
        other = other + [list(s) for s in draw(st.lists(st.sampled_from(sets), max_size=4))]  # shared copies
    hits = _hits(measure, sets + (other or []))
    if measure == "overlap":
        choices = [st.integers(1, 6).map(Fraction)]
    else:
        near = near_hits(sets + (other or []))
        choices = [st.sampled_from(ROUND_THRESHOLDS), large_denominator_thresholds] + (
            [st.sampled_from(near)] if near else [])
    t = draw(st.one_of(*choices, st.sampled_from(hits)) if hits else st.one_of(*choices))
    return measure, sets, other, t


def _t(measure, t):
    return int(t) if measure == "overlap" else t


@pytest.mark.kernel_paths("compiled", "python", "jit")
@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(measure_case())
def test_every_measure_self_join_equals_brute_force(case):
    measure, sets, _, t = case
    assert measure_pairs(sets, _t(measure, t), measure) == naive.all_pairs(sets, t, measure)


@pytest.mark.kernel_paths("compiled", "python", "jit")
@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(measure_case(rs=True))
def test_every_measure_rs_join_equals_brute_force(case):
    measure, sets, other, t = case
    assert measure_pairs(sets, _t(measure, t), measure, against=other) == naive.rs_pairs(sets, other, t, measure)


@pytest.mark.kernel_paths("compiled", "python")
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(measure_case())
def test_clusters_are_the_components_of_the_oracle_pairs(case):
    measure, sets, _, t = case
    _, found = measure_pairs(sets, _t(measure, t), measure, clusters=True)
    assert found == naive.clusters(len(sets), naive.all_pairs(sets, t, measure))


@pytest.mark.kernel_paths("compiled", "python")
@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(measure_case(), st.booleans())
def test_the_long_cluster_form_numbers_each_document_as_the_oracle_components_are(case, singletons):
    from allpairs.pairs.clusters import find_clusters

    measure, sets, _, t = case
    m = get_measure(measure)
    pairs, _ = exact_pairs(_ordered(sets), parse_threshold(_t(measure, t), m), m)
    doc, cluster, size = find_clusters(pairs).rows(len(sets), singletons)
    groups = naive.clusters(len(sets), naive.all_pairs(sets, t, measure))
    if singletons:  # every other document a cluster of its own, in input order, numbered on
        clustered = {d for g in groups for d in g}
        groups += [[d] for d in range(len(sets)) if d not in clustered]
    want = [(d, k + 1, len(g)) for k, g in enumerate(groups) for d in g]
    assert list(zip(doc.tolist(), cluster.tolist(), size.tolist())) == want


@settings(max_examples=40, deadline=None)
@given(measure_case(rs=True), st.integers(2, 4))
def test_every_measure_does_not_depend_on_jobs(case, jobs):
    measure, sets, other, t = case
    t = _t(measure, t)
    assert measure_pairs(sets, t, measure, jobs=jobs) == measure_pairs(sets, t, measure)
    assert measure_pairs(sets, t, measure, other, jobs=jobs) == measure_pairs(sets, t, measure, other)


def test_containment_is_printed_contained_first_in_both_directions():
    small, big = [1, 2, 3], [1, 2, 3, 4]
    # 3/3 of small is in big; 3/4 of big is in small.
    assert measure_pairs([big, small], Fraction(3, 4), "containment") == [(0, 1, 3, 4, 3), (1, 0, 3, 3, 4)]
    assert measure_pairs([big, small], Fraction(4, 5), "containment") == [(1, 0, 3, 3, 4)]


def test_overlap_below_k_pairs_nothing_not_even_identical_sets():
    sets = [[1, 2], [1, 2], [1, 2, 3], [1, 2, 3]]
    assert measure_pairs(sets, 3, "overlap") == [(2, 3, 3, 3, 3)]


def test_rs_join_never_pairs_two_documents_of_one_side():
    left = [[1, 2, 3], [1, 2, 3]]
    right = [[1, 2, 3], [7]]
    assert measure_pairs(left, 1, "jaccard", against=right) == [(0, 0, 3, 3, 3), (1, 0, 3, 3, 3)]


@pytest.mark.parametrize("measure, t", [("jaccard", "0.6"), ("cosine", "0.7"), ("dice", "0.7"),
                                        ("containment", "0.8"), ("overlap", "6")])
def test_john_passwords_against_zxcvbn_equal_brute_force_for_every_measure(measure, t):
    """A real R–S join: which of John's passwords are near-copies of zxcvbn's, on char:3 shingles."""
    import allpairs
    import datasets.passwords as pw

    try:
        john, zxcvbn = pw.john_passwords()[:400], pw.zxcvbn_passwords()[:500]
    except FileNotFoundError as e:
        pytest.skip(str(e).replace("\n", " "))
    threshold = int(t) if measure == "overlap" else Fraction(t)
    res = allpairs.join(john, t, against=zxcvbn, shingle="char:3", measure=measure)
    want = naive.rs_pairs([naive.char_shingles(p, 3) for p in john], [naive.char_shingles(p, 3) for p in zxcvbn],
                          threshold, measure)
    assert [tuple(p) for p in res.pairs] == want
    assert len(want) > 20


@pytest.mark.kernel_paths("compiled", "python", "jit")
@pytest.mark.parametrize("measure, t", [(m, t) for m in ("jaccard", "cosine", "dice")
                                         for t in ("0.9", "0.8", "0.7", "9/10", "0.999999999")]
                         + [("overlap", "3"), ("overlap", "10")])
def test_sets_only_an_identical_set_could_pair_are_skipped_without_losing_a_pair(measure, t):
    # At t = 0.9 sets of fewer than 10 tokens have no partner but an identical set (join_plan's lone); their
    # copies, subsets one token shorter and supersets one token longer must still pair where they reach t.
    rng = np.random.default_rng(7)
    sets = []
    for size in range(1, 14):
        base = sorted(rng.choice(40, size, replace=False).tolist())
        sets += [base, base, base[:-1], base + [40 + size], base[1:] + [60 + size]]
    assert measure_pairs(sets, _t(measure, t), measure) == naive.all_pairs(sets, t, measure)
    assert measure_pairs(sets, _t(measure, t), measure, against=sets[::2]) == naive.rs_pairs(sets, sets[::2], t,
                                                                                             measure)


def test_lone_sets_probe_nothing_and_are_indexed_only_where_a_larger_size_admits_them():
    from allpairs.exact.plan import join_plan
    from allpairs.measures import get_measure

    m, t = get_measure("jaccard"), Threshold.parse("0.9")
    sizes = np.array([3, 3, 8, 9, 9, 10, 12, 20, 20], np.int64)
    _, index_len, probe_len, _, _ = join_plan(m, t, sizes, lone=True)
    # 3, 8, 9 and 12 (whose window, sizes 11 and 12, holds only 12) pair with nothing but copies; 10 probes
    # the 9s (α(10, 9) = 9) and is a partner of no larger size present; 20 pairs with 20 (α = 19).
    assert (probe_len > 0).tolist() == [False, False, False, False, False, True, False, True, True]
    assert (index_len > 0).tolist() == [False, False, False, True, True, False, False, True, True]


@settings(max_examples=200, deadline=None)
@given(st.sampled_from(["jaccard", "cosine", "dice", "overlap", "containment"]),
       st.sampled_from(["1e-9", "0.5", "0.7", "0.9", "0.999999999", "999999999/1000000000", "3"]),
       st.lists(st.integers(1, 60) | st.integers(1, 2**31 - 1), min_size=1, max_size=30), st.booleans())
def test_join_plan_per_distinct_size_equals_the_bounds_of_each_set(measure, t, sizes, ordered):
    # join_plan works each bound out once per distinct size and spreads it over the sets; sorted or not.
    from allpairs.exact.plan import join_plan

    m = get_measure(measure)
    t = str(max(1, int(Fraction(t)))) if measure == "overlap" else str(min(Fraction(t), 1))
    th = parse_threshold(t, m)
    sizes = np.array(sorted(sizes) if ordered else sizes, np.int64)
    row, index_len, probe_len, win_lo, win_hi = join_plan(m, th, sizes)
    if not m.symmetric:
        assert index_len.tolist() == sizes.tolist()
        assert probe_len.tolist() == [row.index_prefix(th, int(s)) for s in sizes]
        return
    assert index_len.tolist() == [m.index_prefix(th, int(s)) for s in sizes]
    assert probe_len.tolist() == [m.probe_prefix(th, int(s)) for s in sizes]
    assert win_hi.tolist() == list(range(len(sizes)))
    if ordered:  # the window starts at the first set of the smallest partner size
        assert win_lo.tolist() == [int(np.searchsorted(sizes, m.partner_sizes(th, int(s))[0])) for s in sizes]
        _, kept_len, lone_len, _, _ = join_plan(m, th, sizes, lone=True)
        assert ((kept_len == index_len) | (kept_len == 0)).all() and ((lone_len == probe_len) | (lone_len == 0)).all()


@given(st.lists(st.integers(0, 300), min_size=0, max_size=50))
def test_bitmaps_prune_reads_the_median_of_sorted_sizes_as_numpy_finds_it(sizes):
    from allpairs.verify import bitmaps_prune

    sizes = np.sort(np.array(sizes, np.int64))
    assert bitmaps_prune(sizes, ordered=True) == bitmaps_prune(sizes)
