"""The join's inner kernels against Python: the verification merge (sets), the size window's search (bisect)."""
from __future__ import annotations

import bisect
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from allpairs.exact._kernel import first_match_bounds
from allpairs.exact._lists import gallop
from allpairs.measures import MEASURES, Threshold
from allpairs.verify._kernel import count_marked, mark_tokens, merge, unmark_tokens

import naive
from test_exact import fast_pairs

_sets = st.lists(st.integers(0, 40), max_size=30, unique=True).map(sorted)


@pytest.mark.kernel_paths("compiled", "python", "jit")
@settings(max_examples=400, deadline=None)
@given(x=_sets, y=_sets, data=st.data())
def test_merge_counts_the_exact_overlap_whenever_it_reaches_alpha_and_stays_below_otherwise(x, y, data):
    i = data.draw(st.integers(0, len(x)))
    j = data.draw(st.integers(0, len(y)))
    counted = data.draw(st.integers(0, 3))
    alpha = data.draw(st.integers(0, min(len(x) - i, len(y) - j) + counted + 2))
    # Both sides in one array, as the join passes them (x's tokens, then y's).
    tokens = np.array(x + y, np.int32)
    exact = counted + len(set(x[i:]) & set(y[j:]))
    got = int(merge(tokens, np.int64(i), np.int64(len(x)), tokens, np.int64(len(x) + j), np.int64(len(x) + len(y)),
                    np.int64(counted), np.int64(alpha)))
    if exact >= alpha:
        assert got == exact
    else:
        assert got < alpha and got <= exact


@pytest.mark.kernel_paths("compiled", "python", "jit")
@settings(max_examples=400, deadline=None)
@given(x=_sets, y=_sets, data=st.data())
def test_looking_y_up_among_x_marked_counts_the_exact_overlap_whenever_it_reaches_alpha_and_below_otherwise(x, y,
                                                                                                          data):
    i = data.draw(st.integers(0, len(x)))
    j = data.draw(st.integers(0, len(y)))
    counted = data.draw(st.integers(0, 3))
    alpha = data.draw(st.integers(0, min(len(x) - i, len(y) - j) + counted + 2))
    tokens = np.array(x + y, np.int32)
    marks = np.zeros(1 + 40 // 64, np.uint64)
    mark_tokens(marks, tokens, np.int64(i), np.int64(len(x)))
    exact = counted + len(set(x[i:]) & set(y[j:]))
    got = int(count_marked(marks, tokens, np.int64(len(x) + j), np.int64(len(x) + len(y)), np.int64(counted),
                           np.int64(alpha), np.int64(len(x) - i)))
    if exact >= alpha:
        assert got == exact
    else:
        assert got < alpha and got <= exact
    unmark_tokens(marks, tokens, np.int64(i), np.int64(len(x)))
    assert not marks.any()


def test_a_near_copy_of_a_long_set_is_merged_to_its_exact_overlap_at_every_alpha():
    x = np.arange(0, 3000, 3, dtype=np.int32)  # 1,000 tokens
    y = x.copy()
    y[::97] += 1  # 11 of them changed: 989 in common
    tokens = np.concatenate([x, y])
    for alpha in (0, 1, 500, 988, 989):
        assert merge(tokens, 0, 1000, tokens, 1000, 2000, 0, alpha) == 989
    assert merge(tokens, 0, 1000, tokens, 1000, 2000, 0, 990) < 990
    marks = np.zeros(3000 // 64 + 1, np.uint64)
    mark_tokens(marks, tokens, 0, 1000)
    for alpha in (0, 1, 500, 988, 989):
        assert count_marked(marks, tokens, 1000, 2000, 0, alpha, 1000) == 989
    assert count_marked(marks, tokens, 1000, 2000, 0, 990, 1000) < 990


@pytest.mark.kernel_paths("compiled", "python")
@settings(max_examples=300, deadline=None)
@given(a=st.lists(st.integers(0, 60), max_size=80).map(sorted), x=st.integers(-1, 62), data=st.data())
def test_gallop_finds_the_first_entry_not_below_x_as_bisect_does(a, x, data):
    lo = data.draw(st.integers(0, len(a)))
    hi = data.draw(st.integers(lo, len(a)))
    got = gallop(np.array(a, np.int32), np.int64(lo), np.int64(hi), np.int32(x))
    assert got == bisect.bisect_left(a, x, lo, hi)


@st.composite
def _near_copies(draw):
    """Long sets and near-copies of them (a few tokens swapped), of many sizes: long merges, runs of equal
    sizes in the posting lists, size windows that start inside them."""
    sets = []
    for _ in range(draw(st.integers(1, 6))):
        base = draw(st.sets(st.integers(0, 400), min_size=1, max_size=120))
        sets.append(base)
        for _ in range(draw(st.integers(0, 6))):
            drop = draw(st.sets(st.sampled_from(sorted(base)), max_size=max(1, len(base) // 8)))
            add = draw(st.sets(st.integers(0, 400), max_size=max(1, len(base) // 8)))
            sets.append((base - drop) | add or base)
    return [sorted(s) for s in sets]


@pytest.mark.kernel_paths("compiled", "python", "jit")
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_near_copies(), st.sampled_from([Fraction(999999999, 10**9), Fraction(1, 10**9), Fraction(1, 2),
                                        Fraction(7, 10), Fraction(9, 10), Fraction(1)]))
def test_a_join_of_near_copies_of_long_sets_equals_brute_force_at_the_extreme_thresholds(sets, t):
    assert fast_pairs(sets, t) == naive.all_pairs(sets, t)


@pytest.mark.kernel_paths("compiled", "python", "jit")
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_near_copies(), st.sampled_from([Fraction(999999999, 10**9), Fraction(1, 10**9), Fraction(1, 2),
                                        Fraction(9, 10), Fraction(1)]))
def test_a_join_without_the_bitmap_filter_of_long_sets_still_equals_brute_force(sets, t):
    import allpairs.verify as verify

    saved = verify.BITMAP_MEDIAN_MAX
    verify.BITMAP_MEDIAN_MAX = -1  # as for sets whose signatures are full: no signatures made
    try:
        assert fast_pairs(sets, t) == naive.all_pairs(sets, t)
    finally:
        verify.BITMAP_MEDIAN_MAX = saved


@pytest.mark.kernel_paths("compiled", "python", "jit")
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_near_copies(), st.sampled_from([Fraction(999999999, 10**9), Fraction(1, 10**9), Fraction(1, 2),
                                        Fraction(9, 10), Fraction(1)]), st.booleans())
def test_a_join_whose_probe_merges_or_looks_its_candidates_up_however_long_the_sets_equals_brute_force(sets, t,
                                                                                                      marks):
    import allpairs.exact.prefix as prefix

    saved = prefix.MARKS_MAX_TOKENS, prefix.MARKS_MIN_MEAN_SIZE
    # Look-ups whatever the sets' sizes, or merges as for a large vocabulary.
    prefix.MARKS_MAX_TOKENS, prefix.MARKS_MIN_MEAN_SIZE = (1 << 21, 0) if marks else (-1, 0)
    try:
        assert fast_pairs(sets, t) == naive.all_pairs(sets, t)
    finally:
        prefix.MARKS_MAX_TOKENS, prefix.MARKS_MIN_MEAN_SIZE = saved


@pytest.mark.kernel_paths("compiled", "python", "jit")
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_near_copies(), st.sampled_from([Fraction(999999999, 10**9), Fraction(1, 10**9), Fraction(1, 2), Fraction(1)]),
       st.sampled_from([1e-9, 100.0]), st.sampled_from([1, 2]))
def test_a_join_cut_into_many_tasks_whose_output_room_is_far_off_still_equals_brute_force(sets, t, margin, jobs):
    import allpairs.exact.prefix as prefix

    saved = prefix.MIN_TASK_COST, prefix.MIN_ROOM, prefix.FIRST_ROOM, prefix.ROOM_MARGIN, prefix.PARALLEL_MIN_COST
    # A task per set or so, on the pool with two jobs; rooms of one pair (every task's buffers grow) or of its
    # whole cost.
    prefix.MIN_TASK_COST, prefix.MIN_ROOM, prefix.FIRST_ROOM, prefix.ROOM_MARGIN = 1, 1, margin, margin
    prefix.PARALLEL_MIN_COST = 0
    try:
        assert fast_pairs(sets, t, jobs=jobs) == naive.all_pairs(sets, t)
    finally:
        (prefix.MIN_TASK_COST, prefix.MIN_ROOM, prefix.FIRST_ROOM, prefix.ROOM_MARGIN,
         prefix.PARALLEL_MIN_COST) = saved


@pytest.mark.kernel_paths("compiled", "python", "jit")
@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_near_copies(), st.sampled_from([Fraction(1, 10**9), Fraction(1, 2), Fraction(9, 10)]))
def test_postings_written_with_their_records_are_the_plain_index_with_the_records_gathered(sets, t):
    """The index written with each posting's record (its set's size and signature halves) and, where compacted,
    32-bit postings (:func:`allpairs.exact._kernel.build_index`) holds what the plain index (int64 postings and
    sizes) holds with the records looked up by each posting's set afterwards and the postings compacted."""
    import allpairs.exact.prefix as prefix

    build_index = prefix.build_index
    seen = []

    def checked(*args):
        """The join's call, then each variant on fill cursors of its own, against the plain index."""
        ptr, bits, post, post_size, records = args[8:]
        n = len(post)
        cursors = ptr.copy()
        plain, plain_size = np.empty(n, np.int64), np.empty(n, np.int32)
        build_index(*args[:8], cursors, bits, plain, plain_size, prefix._NO_RECORDS)
        build_index(*args)
        assert np.array_equal(cursors, ptr)
        of_set = plain >> 32
        sig = bits[of_set]
        gathered = np.stack([plain_size.astype(np.uint32), (sig & np.uint64(0xFFFFFFFF)).astype(np.uint32),
                             (sig >> np.uint64(32)).astype(np.uint32)], axis=1)
        compacted = (of_set << 8 | (plain & 0xFF)).astype(np.uint32)
        for dtype, expected in ((np.int64, plain), (np.uint32, compacted)):
            got, got_records = np.empty(n, dtype), np.empty((n, 3), np.uint32)
            build_index(*args[:8], np.r_[0, cursors[:-1]], bits, got, prefix._NO_SIZES, got_records)
            assert np.array_equal(got, expected) and np.array_equal(got_records, gathered)
        if len(records):
            assert np.array_equal(post, compacted if post.dtype == np.uint32 else plain)
            assert np.array_equal(records, gathered)
        else:
            assert np.array_equal(post, plain) and np.array_equal(post_size, plain_size)
        seen.append(len(records))

    saved = prefix.POSTED_BITS_MIN_SETS
    prefix.POSTED_BITS_MIN_SETS, prefix.build_index = 1, checked
    try:
        assert fast_pairs(sets, t) == naive.all_pairs(sets, t)
    finally:
        prefix.POSTED_BITS_MIN_SETS, prefix.build_index = saved, build_index
    assert seen


@pytest.mark.kernel_paths("compiled", "python", "jit")
@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_near_copies(), st.sampled_from([Fraction(1, 10**9), Fraction(1, 2), Fraction(9, 10)]))
def test_an_index_written_range_by_range_is_the_index_written_posting_by_posting(sets, t):
    _written_by_range(sets, t)


@pytest.mark.kernel_paths("compiled", "python", "jit")
@pytest.mark.kernel_paths("compiled", "python", "jit")
@settings(max_examples=200, deadline=None)
@given(st.lists(_sets, max_size=25), st.data())
def test_lists_counted_with_costs_of_the_earlier_sets_in_one_pass(sets, data):
    """:func:`allpairs.exact._kernel.counted_lists`: ``list_counts``' array, and per set its probing prefix's
    postings of earlier sets (counted by hand), never above ``probe_cost``'s bound over whole lists."""
    from allpairs.exact._kernel import counted_lists, list_counts, list_lengths, probe_cost

    probe_len = np.array([data.draw(st.integers(0, len(s))) for s in sets], np.int64)
    index_len = np.array([data.draw(st.integers(0, p)) for p in probe_len], np.int64)
    indptr = np.r_[0, np.cumsum([len(s) for s in sets])].astype(np.int64)
    tokens = np.array([t for s in sets for t in s], np.int32)
    one = np.zeros(len(sets), np.int32)
    ptr, cost = counted_lists(indptr, tokens, 41, index_len, probe_len)
    expected = list_counts(indptr, tokens, 41, index_len, one, 1)
    assert np.array_equal(ptr, expected)
    earlier = [sum(t in sets[y][:index_len[y]] for y in range(x) for t in sets[x][:probe_len[x]])
               for x in range(len(sets))]
    assert cost.tolist() == [int(p) + e for p, e in zip(probe_len, earlier)]
    whole = probe_cost(indptr, tokens, list_lengths(expected), probe_len, one, np.ones((1, 1), np.bool_), 1)
    assert (cost <= whole).all()


def test_a_join_of_near_copies_writes_its_index_range_by_range_where_it_is_large():
    sets = [sorted({(7 * i + k) % 50 for k in range(12)} | {60 + i % 3}) for i in range(40)]
    assert _written_by_range(sets, Fraction(1, 2))


def _written_by_range(sets, t):
    """:func:`allpairs.exact._kernel.build_index_by_range`, with ranges of one list to all of them, writes the
    postings, records and spent cursors of :func:`allpairs.exact._kernel.build_index`; the lists' lengths
    (int32, :func:`allpairs.exact._kernel.list_counts`) sum in place to the lists' bounds (``list_starts``)."""
    import allpairs.exact.prefix as prefix

    by_range, list_counts = prefix.build_index_by_range, prefix.list_counts
    seen = []

    def counted(indptr, tokens, num_tokens, index_len, set_class, n_classes):
        ptr = list_counts(indptr, tokens, num_tokens, index_len, set_class, n_classes)
        lists = np.concatenate([tokens[indptr[s]:indptr[s] + index_len[s]] for s in range(len(index_len))] + [[]])
        assert np.array_equal(prefix.list_lengths(ptr), np.bincount(lists.astype(np.int64), minlength=num_tokens))
        expected = np.r_[0, 0, np.cumsum(prefix.list_lengths(ptr), dtype=np.int64)]
        prefix.list_starts(ptr.copy())
        got = ptr.copy()
        prefix.list_starts(got)
        assert np.array_equal(got, expected)
        return ptr

    def checked(*args):
        """The join's call, then each range size on cursors of its own, against the plain build."""
        ptr, bits, post, records = args[8:12]
        cursors = ptr.copy()
        by_range(*args)
        plain, plain_records = np.empty_like(post), np.empty_like(records)
        plain_cursors = cursors.copy()
        prefix.build_index(*args[:8], plain_cursors, bits, plain, prefix._NO_SIZES, plain_records)
        assert np.array_equal(post, plain) and np.array_equal(records, plain_records)
        assert np.array_equal(ptr, plain_cursors)
        for range_postings in (0, 1, 3, 1 << 40):
            got, got_records, got_cursors = np.empty_like(post), np.empty_like(records), cursors.copy()
            by_range(*args[:8], got_cursors, bits, got, got_records, range_postings)
            assert np.array_equal(got, plain) and np.array_equal(got_records, plain_records)
            assert np.array_equal(got_cursors, plain_cursors)
        seen.append(len(post))

    saved = prefix.POSTED_BITS_MIN_SETS, prefix.BY_RANGE_MIN_POSTINGS
    prefix.POSTED_BITS_MIN_SETS, prefix.BY_RANGE_MIN_POSTINGS = 1, 1
    prefix.build_index_by_range, prefix.list_counts = checked, counted
    try:
        assert fast_pairs(sets, t) == naive.all_pairs(sets, t)
    finally:
        prefix.POSTED_BITS_MIN_SETS, prefix.BY_RANGE_MIN_POSTINGS = saved
        prefix.build_index_by_range, prefix.list_counts = by_range, list_counts
    return seen


@pytest.mark.kernel_paths("compiled", "python", "jit")
@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_near_copies(), st.sampled_from([Fraction(1, 2), Fraction(9, 10)]))
def test_a_join_with_compacted_postings_finds_the_oracle_pairs(sets, t):
    """The join's large variant (signatures in the postings, compacted) on small corpora: its threshold lowered."""
    import allpairs.exact.prefix as prefix

    saved = prefix.POSTED_BITS_MIN_SETS
    prefix.POSTED_BITS_MIN_SETS = 1
    try:
        assert fast_pairs(sets, t) == naive.all_pairs(sets, t)
    finally:
        prefix.POSTED_BITS_MIN_SETS = saved


@pytest.mark.kernel_paths("compiled", "python", "jit")
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_near_copies(), st.sampled_from([Fraction(999999999, 10**9), Fraction(1, 10**9), Fraction(1, 2),
                                        Fraction(9, 10), Fraction(1)]))
def test_the_probe_finds_the_same_pairs_and_candidates_with_the_signatures_in_the_postings_or_not(sets, t):
    """The probe's variants (the signatures in the postings, these compacted to 32 bits or not, and none) find the
    same pairs and candidates in the same order (:func:`allpairs.exact._kernel.build_index`)."""
    import inspect

    import allpairs.exact.prefix as prefix
    from allpairs.verify._kernel import bitmaps

    probe_verify = prefix.probe_verify
    names = list(inspect.signature(probe_verify.py_func).parameters)
    runs = []

    def both_variants(*args):
        """Each of the probe's calls run again by both variants, on real signatures and scratch of their own."""
        a = dict(zip(names, args))
        bits = bitmaps(a["indptr"], a["tokens"])
        found = []
        of_set = a["post"] >> 32
        posted = np.stack([a["post_size"].astype(np.uint32), (bits[of_set] & np.uint64(0xFFFFFFFF)).astype(np.uint32),
                           (bits[of_set] >> np.uint64(32)).astype(np.uint32)], axis=1)
        compacted = (of_set << 8 | (a["post"] & 0xFF)).astype(np.uint32)
        for post_bits, post in ((posted, a["post"]), (None, a["post"]), (posted, compacted)):
            state = np.zeros_like(a["state"])
            scratch = dict(state=state, touched=np.empty_like(a["touched"]), front=np.zeros_like(a["front"]),
                           alpha_of=np.empty_like(a["alpha_of"]),
                           alpha_at=np.full_like(a["alpha_at"], -1),
                           out_x=np.empty(1, np.int32), out_y=np.empty(1, np.int32), out_a=np.empty(1, np.int32))
            ox, oy, oa, n, n_cand = probe_verify(*[{**a, **scratch, "post": post, "post_bits": post_bits,
                                                    "bits": bits, "n_out": 0}[k] for k in names])
            assert not state[:, 0].any()
            found.append((ox[:n].tolist(), oy[:n].tolist(), oa[:n].tolist(), n_cand))
        assert found[0] == found[1] == found[2]
        runs.append(found[0])
        return probe_verify(*args)

    prefix.probe_verify = both_variants
    try:
        assert fast_pairs(sets, t) == naive.all_pairs(sets, t)
    finally:
        prefix.probe_verify = probe_verify
    assert runs


@pytest.mark.kernel_paths("compiled", "python", "jit")
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_near_copies(), st.sampled_from([Fraction(1, 10**9), Fraction(1, 2), Fraction(7, 10), Fraction(9, 10)]),
       st.booleans())
def test_the_probe_called_set_by_set_backwards_on_one_scratch_finds_each_sets_pairs_and_candidates(sets, t, posted):
    """Each probe set called alone, from the last to the first, with one ``front`` (each list's cursor to its
    window's start, which then moves back from call to call; any values at first) finds the pairs and candidates
    of the calls in order, with the signatures in the postings or not."""
    import inspect

    import allpairs.exact.prefix as prefix

    probe_verify = prefix.probe_verify
    names = list(inspect.signature(probe_verify.py_func).parameters)
    runs = []

    def backwards(*args):
        """Each of the probe's calls made again, one set a call, backwards, on scratch of its own."""
        a = dict(zip(names, args))
        scratch = dict(state=np.zeros_like(a["state"]), touched=np.empty_like(a["touched"]),
                       front=np.random.default_rng(len(runs)).integers(-3, 9, len(a["front"]), np.int32),
                       alpha_of=np.empty_like(a["alpha_of"]),
                       alpha_at=np.full_like(a["alpha_at"], -1))
        each, n_cand = [], 0
        for x in range(int(a["hi"]) - 1, int(a["lo"]) - 1, -1):
            out = dict(out_x=np.empty(1, np.int32), out_y=np.empty(1, np.int32), out_a=np.empty(1, np.int32),
                       n_out=0, lo=x, hi=x + 1)
            ox, oy, oa, n, c = probe_verify(*[{**a, **scratch, **out}[k] for k in names])
            each = list(zip(ox[:n].tolist(), oy[:n].tolist(), oa[:n].tolist())) + each
            n_cand += c
        got = probe_verify(*args)
        n_out, n = int(a["n_out"]), int(got[3])
        assert each == list(zip(got[0][n_out:n].tolist(), got[1][n_out:n].tolist(), got[2][n_out:n].tolist()))
        assert n_cand == got[4]
        runs.append(n_cand)
        return got

    saved = prefix.POSTED_BITS_MIN_SETS
    prefix.POSTED_BITS_MIN_SETS = 1 if posted else saved
    prefix.probe_verify = backwards
    try:
        assert fast_pairs(sets, t) == naive.all_pairs(sets, t)
    finally:
        prefix.probe_verify = probe_verify
        prefix.POSTED_BITS_MIN_SETS = saved
    assert runs


@pytest.mark.kernel_paths("compiled", "python", "jit")
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_near_copies(), st.sampled_from([Fraction(1, 10**9), Fraction(1, 2), Fraction(7, 10), Fraction(9, 10),
                                        Fraction(999999999, 10**9), Fraction(1)]), st.booleans(),
       st.sampled_from([(False, 1), (True, 1), (True, 2)]))
# Two threads asked for, the costs cut into one task: it runs on the caller's thread and reaps (it ran unreaped).
@example(sets=[[0], [0, 1]], t=Fraction(1, 10**9), compact=False, tasks_jobs=(True, 2))
def test_the_probe_in_blocks_finds_the_probes_pairs_and_candidates_in_its_order(sets, t, compact, tasks_jobs):
    """:func:`allpairs.exact.large.probe_blocked` with any block and bucket sizes, reaping dead postings or
    not, on scratch of its own, against :func:`allpairs.exact._kernel.probe_verify` over the same range: the
    same pairs in the same order, the same candidates, ``state`` left zero; the join's own calls likewise,
    one thread's in order on the postings their predecessors reaped; the join itself against the oracle."""
    _blocked_against_the_probe(sets, t, compact, *tasks_jobs)


@pytest.mark.kernel_paths("compiled", "python", "jit")
@pytest.mark.parametrize("compact", [False, True])
@pytest.mark.parametrize("tasks_jobs", [(False, 1), (True, 1), (True, 2)])
def test_the_probe_in_blocks_runs_on_near_copies_of_zipf_sets(compact, tasks_jobs):
    """The same on 400 sets of Zipf tokens with near-copies (sizes 7-33), t = 0.5: the blocked probe is run."""
    rng = np.random.default_rng(5)
    sets = []
    while len(sets) < 400:
        if sets and rng.random() < 0.3:
            base = list(sets[rng.integers(len(sets))])
            base[rng.integers(len(base))] = int(rng.zipf(1.3)) % 3000
            sets.append(sorted(set(base)))
        else:
            sets.append(sorted({int(v) % 3000 for v in rng.zipf(1.3, rng.integers(7, 34))}))
    runs, reaped = _blocked_against_the_probe(sets, Fraction(1, 2), compact, *tasks_jobs)
    assert runs and reaped != (tasks_jobs[1] > 1) or tasks_jobs == (False, 1)  # one thread reaps, two do not


@pytest.mark.kernel_paths("compiled", "python", "jit")
@pytest.mark.parametrize("tasks_jobs", [(False, 1), (True, 1), (True, 2)])
def test_the_probe_in_blocks_grows_its_buffers_mid_block_and_resumes(tasks_jobs):
    """240 near-copies of 3 sets (t = 0.5): a block's hits outgrow their first buffers (1,024) while hits are
    kept, and its pairs the output's, so the loops over visits and over probe sets stop, grow them and
    resume at the visit (its cursor already moved, reaped or not) or probe set (its candidates counted)."""
    rng = np.random.default_rng(7)
    bases = [sorted({int(v) for v in rng.integers(0, 60, 12)}) for _ in range(3)]
    sets = []
    for k in range(240):
        s = list(bases[k % 3])
        s[rng.integers(len(s))] = 60 + k
        sets.append(sorted(set(s)))
    runs, _ = _blocked_against_the_probe(sets, Fraction(1, 2), True, *tasks_jobs)
    assert sum(len(found[0]) for found in runs) > 4 * 1024  # (9,480 pairs: the hits more still)


@pytest.mark.kernel_paths("compiled", "python", "jit")
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_near_copies(), st.sampled_from([Fraction(1, 10**9), Fraction(1, 2), Fraction(7, 10), Fraction(1)]),
       st.integers(1, 9), st.integers(1, 60))
def test_one_thread_short_of_memory_blocks_the_pairs_of_the_join_probed_in_blocks(sets, t, block, block_pairs):
    """One thread probing in blocks of ``block`` sets with tasks cut where a block ends or where the memory
    bound's cost per task does (:func:`allpairs.exact.prefix._block_cut`): its blocks of pairs, concatenated,
    the oracle's pairs, each at most ``block_pairs``, one task's (held to its cost) and one set's more."""
    import allpairs.exact.prefix as prefix
    from allpairs.order import order_sets
    from allpairs.pairs import Pairs

    names = ("BLOCKED_MIN_SETS", "POSTED_BITS_MIN_SETS", "MARKS_MAX_TOKENS", "MIN_TASK_COST", "BLOCK_SETS")
    saved = [getattr(prefix, n) for n in names]
    for n, v in zip(names, (0, 0, -1, 1, block)):
        setattr(prefix, n, v)
    try:
        indptr = np.r_[0, np.cumsum([len(x) for x in sets])].astype(np.int64)
        o = order_sets(indptr, np.array([tok for x in sets for tok in x], np.uint64))
        blocks = list(prefix.prefix_join_blocks(o.indptr, o.tokens, o.num_tokens, Threshold.parse(t),
                                                block_pairs=block_pairs, jobs=1))
    finally:
        for n, v in zip(names, saved):
            setattr(prefix, n, v)
    left, right, overlap = (np.concatenate([getattr(b, c) for b in blocks]) for c in ("left", "right", "overlap"))
    assert [tuple(p) for p in Pairs(o, left, right, overlap)] == naive.all_pairs(sets, t)
    assert all(len(b.left) <= block_pairs + max(block_pairs // 4, 1) + o.num_sets for b in blocks)


def _blocked_against_the_probe(sets, t, compact, tasks=False, jobs=1):
    """The join of ``sets`` at ``t`` with the probe in blocks, each call checked against the probe (its runs).

    ``tasks``: a task per set at most (the costs allow it), run in order on one thread with ``jobs`` 1, so
    that each call reaps postings its successors read; ``jobs`` 2: threads side by side, which must not reap.
    Every variant (block sizes, reaping or not) runs on the postings as built, checked against the probe's
    pairs and candidates; the join's own call, on the postings its predecessors reaped, too."""
    import allpairs.exact.prefix as prefix

    probe_blocked = prefix.probe_blocked
    runs, reaps, reaped, built = [], [], [], []

    def found_of(got, n_out=0):
        return (got[0][n_out:got[3]].tolist(), got[1][n_out:got[3]].tolist(), got[2][n_out:got[3]].tolist(),
                got[4])

    def against_the_probe(indptr, tokens, list_ptr, post, post_bits, bits, probe_len, win_lo, win_hi, stop_ptr,
                          stop_of, alpha2, lo, hi, block, shift, state, touched, front, reap, ox, oy, oa, n_out):
        m, largest = len(indptr) - 1, len(alpha2) - 1
        reaps.append(reap)
        if not built or built[0][0] is not list_ptr:  # the join's first call: its postings as built
            built[:] = [(list_ptr, post.copy(), post_bits.copy())]
        post0, bits0 = built[0][1], built[0][2]
        if not compact and post0.dtype == np.uint32:  # the same postings as int64 (set << 32 | bound)
            post0 = ((post0.astype(np.int64) >> 8) << 32) | (post0.astype(np.int64) & 255)
        found = []
        for b, sh, r in ((block, shift, 1), (block, shift, 0), (1, 0, 2), (2, 1, 0), (7, 5, 8)):
            st_ = np.zeros((m, 4), np.int32)
            hints = np.zeros(len(front), np.int32) if r else np.random.default_rng(b).integers(-3, 9, len(front),
                                                                                             np.int32)
            got = probe_blocked(indptr, tokens, list_ptr, post0.copy(), bits0.copy(), bits, probe_len, win_lo, win_hi,
                                stop_ptr, stop_of, alpha2, lo, hi, b, sh, st_, np.empty(m, np.int32), hints, r,
                                *(np.empty(1, np.int32) for _ in range(3)), 0)
            assert not st_[:, 0].any()
            found.append(found_of(got))
        got = prefix.probe_verify(indptr, tokens, list_ptr, post0, prefix._NO_SIZES, bits0, bits,
                                  prefix._NO_POSITIONS, prefix._NO_LENGTHS, probe_len, win_lo, win_hi, stop_ptr,
                                  stop_of, np.zeros(m, np.int32), np.ones((1, 1), np.bool_), 1, *prefix_code[0], lo, hi,
                                  np.zeros((m, 4), np.int32), np.empty(m, np.int32), np.zeros(len(front), np.int32),
                                  np.zeros(0, np.uint64), np.empty(largest + 1, np.int32),
                                  np.full(largest + 1, -1, np.int64), *(np.empty(1, np.int32) for _ in range(3)), 0)
        found.append(found_of(got))
        assert all(f == found[-1] for f in found)
        runs.append(found[-1])
        before = post.copy()
        got = probe_blocked(indptr, tokens, list_ptr, post, post_bits, bits, probe_len, win_lo, win_hi, stop_ptr,
                            stop_of, alpha2, lo, hi, block, shift, state, touched, front, reap, ox, oy, oa, n_out)
        assert found_of(got, n_out) == found[-1]
        reaped.append(not np.array_equal(before, post))
        assert reap or not reaped[-1]
        return got

    th = Threshold.parse(t)
    prefix_code = [(MEASURES["jaccard"].code, th.p, th.q)]
    names = ("BLOCKED_MIN_SETS", "POSTED_BITS_MIN_SETS", "MARKS_MAX_TOKENS", "MIN_TASK_COST", "PARALLEL_MIN_COST",
             "REAP_MIN_DEAD", "BLOCK_SETS")
    saved = [getattr(prefix, n) for n in names]
    # (One thread cuts its tasks where the probe's blocks end: blocks of one set make a task per set.)
    for n, v in zip(names, (0, 0, -1, 1 if tasks else saved[3], 0 if jobs > 1 else saved[4], 1 if tasks else 8,
                            1 if tasks and jobs == 1 else saved[6])):
        setattr(prefix, n, v)
    prefix.probe_blocked = against_the_probe
    try:
        assert fast_pairs(sets, t, jobs) == naive.all_pairs(sets, t)
    finally:
        prefix.probe_blocked = probe_blocked
        for n, v in zip(names, saved):
            setattr(prefix, n, v)
    assert all((r > 0) == (jobs == 1 or len(reaps) == 1) for r in reaps)
    return runs, any(reaped)


@st.composite
def _bound_tables_input(draw):
    """Sets sorted by size with prefixes to index and probe, positions (``at``, or none) increasing along them."""
    sizes = sorted(draw(st.lists(st.integers(0, 24), min_size=1, max_size=12)))
    index_len, probe_len, at = [], [], []
    for s in sizes:
        index_len.append(draw(st.integers(0, s)))
        probe_len.append(draw(st.integers(0, s)))
        head = sorted(draw(st.permutations(range(s)))[:max(index_len[-1], probe_len[-1])])
        at += head + [k for k in range(s) if k not in head]
    return sizes, np.array(index_len, np.int64), np.array(probe_len, np.int64), draw(st.booleans()), at


@pytest.mark.kernel_paths("compiled", "python", "jit")
@settings(max_examples=300, deadline=None)
@given(_bound_tables_input(), st.sampled_from(sorted(MEASURES)),
       st.sampled_from([(0, 1), (1, 10**9), (1, 3), (1, 2), (7, 10), (999999999, 10**9), (1, 1), (3, 1)]))
def test_the_first_match_bound_tables_hold_the_largest_sizes_alpha_admits_at_every_position(case, name, pq):
    """x_max and stop_of against α of the measure's own row, every position a prefix reaches: where α steps, at
    p = 0 (α = 0), for each measure (containment's α grows with the probe's size only, overlap's with neither)."""
    sizes, index_len, probe_len, with_at, positions = case
    measure = MEASURES[name]
    t = Threshold(*pq) if name == "overlap" or pq[0] <= pq[1] else Threshold(1, 1)
    indptr = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
    at = np.array(positions if with_at else [], np.int32)
    x_ptr, x_max, stop_ptr, stop_of = first_match_bounds(indptr, index_len, probe_len, at, np.int64(measure.code),
                                                         np.int64(t.p), np.int64(t.q))
    largest = max(sizes)
    alpha = measure.required_overlap
    for k, s in enumerate(sizes):
        for n, ptr, table, probing in ((index_len[k], x_ptr, x_max, False), (probe_len[k], stop_ptr, stop_of, True)):
            for e in range(indptr[k], indptr[k] + n):
                g = positions[e] if with_at else e - indptr[k]
                if probing:  # the first set larger than every partner size α lets a first match at g in x reach
                    admitted = [v for v in range(largest + 1) if alpha(t, s, v) <= s - g]
                    want = sum(1 for u in sizes if u <= max(admitted, default=-1))
                else:  # the largest probe size for which a first match at g in y passes y's bound
                    want = max((v for v in range(largest + 1) if alpha(t, v, s) <= s - g), default=-1)
                assert table[ptr[s] + g] == want, (s, g, probing)
