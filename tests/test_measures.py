"""Threshold algebra: every integer bound equals its definition in exact fractions."""
import math
import re
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from allpairs.errors import UsageError
from allpairs.measures import Threshold, jaccard

thresholds = st.fractions(min_value=Fraction(1, 1000), max_value=1, max_denominator=1000)
sizes = st.integers(0, 5000)


@given(thresholds, sizes, sizes)
def test_bounds_equal_their_fraction_definitions(t, x, y):
    th = Threshold(t.numerator, t.denominator)
    assert JACCARD.required_overlap(th, x, y) == math.ceil(t / (1 + t) * (x + y))
    assert JACCARD.partner_sizes(th, x)[0] == math.ceil(t * x)
    assert JACCARD.partner_sizes(th, x)[1] == math.floor(x / t)
    if x:
        assert JACCARD.probe_prefix(th, x) == x - math.ceil(t * x) + 1
        assert JACCARD.index_prefix(th, x) == x - math.ceil(2 * t / (1 + t) * x) + 1


@given(thresholds, st.integers(0, 200), st.integers(1, 200), st.integers(1, 200))
def test_accepts_is_jaccard_at_least_t(t, o, x, y):
    o = min(o, x, y)
    th = Threshold(t.numerator, t.denominator)
    assert JACCARD.accept(th, o, x, y) == (jaccard(o, x, y) >= t)


def test_float_thresholds_mean_their_decimal():
    assert Threshold.parse(0.7).fraction == Fraction(7, 10)
    assert JACCARD.partner_sizes(Threshold.parse("0.28"), 25)[0] == 7  # math.ceil(0.28 * 25) == 8 in floats
    assert Threshold.parse("2/3").fraction == Fraction(2, 3)
    assert str(Threshold.parse(0.5)) == "0.5"
    assert str(Threshold.parse("1/3")) == "1/3"


def test_a_numpy_float_threshold_means_its_decimal():
    # np.float64 is a float whose repr is "np.float64(0.7)" (numpy 2): it was refused as "not a number"
    # (a threshold from np.linspace, a pandas cell).
    assert Threshold.parse(np.float64(0.7)).fraction == Fraction(7, 10)
    assert Threshold.parse(np.linspace(0.5, 0.9, 5)[3]).fraction == Fraction(4, 5)


@pytest.mark.parametrize("bad", [0, -0.5, 1.5, "abc", "nan", "inf", "", None, True, "0.1234567891234"])
def test_thresholds_outside_0_1_are_usage_errors(bad):
    with pytest.raises(UsageError):
        Threshold.parse(bad)


def test_two_empty_sets_are_never_a_pair():
    assert not JACCARD.accept(Threshold.parse(1), 0, 0, 0)
    assert jaccard(0, 0, 0) == 0


# --- every measure's bounds (allpairs.measures.MEASURES) ----------------------

from allpairs.measures import _kernel as mk  # noqa: E402
from allpairs.measures import MEASURES, get_measure, parse_threshold  # noqa: E402

JACCARD = MEASURES["jaccard"]

import naive  # noqa: E402

MEASURE_NAMES = sorted(MEASURES)
small = st.integers(1, 60)


def _threshold_for(name, t, k):
    return Threshold(k, 1) if MEASURES[name].integer_threshold else Threshold(t.numerator, t.denominator)


def _sets_with(o, x, y):
    """Two sets of sizes x and y sharing exactly o tokens."""
    return set(range(x)), set(range(x - o, x - o + y))


def _meets(name, t, o, x, y):
    """The oracle's verdict for sets of sizes x, y sharing o tokens (containment: x in y)."""
    a, b = _sets_with(o, x, y)
    if name == "containment_either":
        return naive.meets("containment", a, b, t.fraction) or naive.meets("containment", b, a, t.fraction)
    return naive.meets(name, a, b, t.fraction)


def _feasible(m, t, x, y):
    """Some overlap the sizes allow (at most min(x, y)) reaches the threshold."""
    return m.accept(t, min(x, y), x, y)


@settings(max_examples=300)
@given(st.sampled_from(MEASURE_NAMES), thresholds, st.integers(1, 12), small, small, st.integers(0, 60))
def test_accept_is_the_oracle_and_alpha_is_the_least_accepted_overlap(name, t, k, x, y, o):
    m = MEASURES[name]
    th = _threshold_for(name, t, k)
    o = min(o, x, y)
    assert m.accept(th, o, x, y) == _meets(name, th, o, x, y)
    alpha = m.required_overlap(th, x, y)
    assert m.accept(th, alpha, x, y)
    assert alpha == 0 or not m.accept(th, alpha - 1, x, y)
    assert not m.accept(th, o, 0, y) and not m.accept(th, o, x, 0)


@settings(max_examples=300)
@given(st.sampled_from(MEASURE_NAMES), thresholds, st.integers(1, 12), small, st.sampled_from(["left", "right"]))
def test_size_window_keeps_every_feasible_partner_and_its_ends_are_feasible(name, t, k, x, side):
    m = MEASURES[name]
    th = _threshold_for(name, t, k)

    def feasible(y):  # x on the given side, y on the other
        return _feasible(m, th, x, y) if side == "left" else _feasible(m, th, y, x)

    lo, hi = m.partner_sizes(th, x, side)
    top = 4 * 60 * 1000
    for y in range(1, 400):
        if feasible(y):
            assert lo <= y and (hi is None or y <= hi), (y, lo, hi)
    if any(feasible(y) for y in range(1, 400)):  # a set that can pair at all: the window is tight
        assert feasible(lo) and not feasible(lo - 1) if lo > 1 else feasible(lo)
        if hi is not None:
            assert feasible(hi) and not feasible(hi + 1)
        else:
            assert feasible(top)


@settings(max_examples=300)
@given(st.sampled_from(MEASURE_NAMES), thresholds, st.integers(1, 12), small, st.sampled_from(["left", "right"]))
def test_prefixes_never_miss_a_pair(name, t, k, x, side):
    """Two sets reaching α share a token in their first |x| - α + 1 tokens; the prefixes are at least that."""
    m = MEASURES[name]
    th = _threshold_for(name, t, k)
    probe = m.probe_prefix(th, x, side)
    index = m.index_prefix(th, x, side)
    assert 0 <= index <= probe <= x
    for y in range(1, 200):
        sx, sy = (x, y) if side == "left" else (y, x)
        if not _feasible(m, th, sx, sy):
            continue
        need = x - m.required_overlap(th, sx, sy) + 1
        assert probe >= need, (y, probe, need)
        if y >= x:
            assert index >= need, (y, index, need)


@pytest.mark.kernel_paths("compiled", "python", "jit")
@settings(max_examples=500, deadline=None)
@given(st.sampled_from(MEASURE_NAMES), st.fractions(min_value=Fraction(1, 10**9), max_value=1,
                                                    max_denominator=10**9),
       st.integers(1, 2**31 - 1), st.integers(0, 2**31 - 1), st.integers(0, 2**31 - 1))
def test_kernel_alpha_equals_the_table_even_for_huge_sizes(name, t, k, x, y):
    m = MEASURES[name]
    th = _threshold_for(name, t, k)
    alpha = m.required_overlap(th, x, y)
    assert mk.required_overlap(m.code, th.p, th.q, x, y) == alpha


@pytest.mark.kernel_paths("compiled", "python", "jit")
@settings(deadline=None)
@given(st.integers(0, 2**63 - 1), st.integers(0, 2**63 - 1), st.integers(0, 2**63 - 1), st.integers(0, 2**63 - 1))
def test_128_bit_products_compare_exactly(a, b, c, d):
    assert mk.products_ge(a, b, c, d) == (a * b >= c * d)


def test_cosine_alpha_uses_an_exact_square_root():
    th = Threshold.parse("0.7")
    # √(49·100)·0.7 = 49 exactly: 49 common tokens reach it, 48 do not.
    assert MEASURES["cosine"].required_overlap(th, 49, 100) == 49
    assert mk.required_overlap(MEASURES["cosine"].code, 7, 10, 49, 100) == 49


def test_truncated_cosine_is_exact():
    c = MEASURES["cosine"]
    assert c.truncated(1, 2, 2, 6) == 500000
    assert c.truncated(2, 3, 3, 6) == 666666
    assert c.truncated(1, 1, 3, 6) == 577350  # 1/√3 = 0.5773502...


def test_overlap_threshold_is_a_whole_number():
    assert parse_threshold("3", "overlap") == Threshold(3, 1)
    assert parse_threshold(3, "overlap") == Threshold(3, 1)
    for bad in ["2.5", 2.5, "0", 0, "-1", "x", "1/2", True]:
        with pytest.raises(UsageError):
            parse_threshold(bad, "overlap")
    assert parse_threshold("0.7", "jaccard") == Threshold(7, 10)
    with pytest.raises(UsageError):
        parse_threshold("3", "cosine")


def test_unknown_measure_is_a_usage_error():
    with pytest.raises(UsageError, match="unknown measure 'tanimoto'"):
        get_measure("tanimoto")
    assert get_measure("dice").name == "dice"


@pytest.mark.kernel_paths("compiled", "python", "jit")
@settings(max_examples=300, deadline=None)
@given(st.integers(1, 2**31 - 1), st.integers(1, 2**31 - 1), st.integers(0, 2**31 - 1),
       st.sampled_from([1, 10**6, 10**9]))
def test_printed_cosine_is_truncated_exactly(x, y, o, scale):
    import decimal

    o = min(o, x, y)
    with decimal.localcontext() as ctx:
        ctx.prec = 60
        want = int((decimal.Decimal(o * scale) / decimal.Decimal(x * y).sqrt()).to_integral_value(decimal.ROUND_FLOOR))
    got = mk.cosine_truncated(np.array([o], np.int64), np.array([x], np.int64), np.array([y], np.int64), scale)
    assert int(got[0]) == want == MEASURES["cosine"].truncated(o, x, y, len(str(scale)) - 1)


@pytest.mark.parametrize("text", ["1e-100", "1e-999999999", "1e+999999999999", "5E-41"])
def test_a_threshold_exponent_beyond_the_bound_is_refused_without_computing_it(text):
    with pytest.raises(UsageError) as info:
        Threshold.parse(text)
    assert f"{text!r} has an exponent beyond ±40" in str(info.value)


def test_a_threshold_longer_than_the_bound_is_refused():
    with pytest.raises(UsageError, match="has 41 characters, more than the 40 read"):
        Threshold.parse("0." + "5" * 39)
    assert Threshold.parse("0." + "5" + "0" * 37).fraction == Fraction(1, 2)  # 40 characters are read


@pytest.mark.parametrize("value, advice", [
    ("0.3333333333333333", "e.g. 0.333333333 or 1/3"),
    (0.3333333333333333, "e.g. 0.333333333 or 1/3"),
    ("1e-10", "e.g. 0.000000001"),
    ("0.9999999999", "e.g. 1"),
    ("0.1234567891234", "e.g. 0.123456789"),
])
def test_a_too_fine_threshold_error_names_the_accepted_forms_and_a_valid_rounding(value, advice):
    with pytest.raises(UsageError) as info:
        Threshold.parse(value)
    message = str(info.value)
    assert "a decimal with at most 9 decimal places" in message and "a fraction p/q" in message
    assert message.endswith(advice)
    for suggestion in advice.removeprefix("e.g. ").split(" or "):
        Threshold.parse(suggestion)  # the advice is itself accepted


@given(st.fractions(min_value=Fraction(1, 10**12), max_value=1))
def test_the_suggested_rounding_of_any_too_fine_threshold_is_accepted(t):
    try:
        Threshold.parse(t)
    except UsageError as e:
        advice = str(e).rsplit("e.g. ", 1)[1]
        for suggestion in advice.split(" or "):
            assert 0 < Threshold.parse(suggestion).fraction <= 1


def test_a_threshold_that_is_not_a_number_names_the_accepted_forms():
    with pytest.raises(UsageError, match=r"is not a number; give a decimal .* or a fraction p/q"):
        Threshold.parse("half")


# --- issue 23: one arithmetic on every kernel path, bounds within the set sizes ---

from strategies import LARGE_DENOMINATORS, large_denominator_thresholds  # noqa: E402

from allpairs.index._kernel import more_similar  # noqa: E402
from allpairs.measures import MAX_SET_SIZE  # noqa: E402

int32_sizes = st.one_of(st.integers(1, 60), st.integers(1, 2**31 - 1), st.sampled_from([46340, 46341, 2**31 - 1]))


@pytest.mark.kernel_paths("compiled", "python", "jit")
@settings(max_examples=300, deadline=None)
@given(st.sampled_from(MEASURE_NAMES), st.one_of(large_denominator_thresholds, thresholds), st.integers(1, 2**31 - 1),
       int32_sizes, int32_sizes, st.integers(0, 2**31 - 1), st.integers(0, 2**31 - 1))
def test_kernel_bounds_take_int32_sizes_as_the_join_passes_them(name, t, k, x, y, o1, o2):
    # The kernels read sizes and overlaps from int32 arrays. numba widens them to int64; the plain path
    # kept int32 and wrapped p·x (and the 128-bit halves of cosine's products) at 2**31.
    m = MEASURES[name]
    th = _threshold_for(name, t, k)
    alpha = m.required_overlap(th, x, y)
    assert mk.required_overlap(m.code, th.p, th.q, np.int32(x), np.int32(y)) == alpha
    o1, o2 = min(o1, x), min(o2, x, y)
    if name not in ("containment", "containment_either"):  # the dedup ranks matches of one query x
        s1, s2 = (m.similarity(o1, x, x), m.similarity(o2, x, y)) if name != "cosine" else (
            Fraction(o1 * o1, x * x), Fraction(o2 * o2, x * y))
        want = (s1 > s2) - (s1 < s2)
        assert more_similar(m.code, np.int32(x), np.int32(o1), np.int32(x), np.int32(o2), np.int32(y)) == want


EXTREME_SIZES = [0, 1, 2, 11, 12, 46341, 10**6, 2**31 - 1]


@pytest.mark.parametrize("t", [*LARGE_DENOMINATORS, Fraction(1)], ids=str)
def test_no_bound_of_any_measure_leaves_the_set_sizes(t):
    # Cosine's upper size bound at 1e-9 was ⌊x/t²⌋ = 10**18·x, past int64 for x >= 10: the index
    # raised OverflowError. Every size bound now lies within [0, MAX_SET_SIZE], every prefix within [0, x].
    from allpairs.index.rule import Rule

    for name, m in MEASURES.items():
        th = _threshold_for(name, t, 1 if t == 1 else 2**31 - 1)
        for x in EXTREME_SIZES:
            for side in ("left", "right"):
                lo, hi = m.partner_sizes(th, x, side)
                assert 0 <= lo and (hi is None or hi <= MAX_SET_SIZE), (name, x, side, lo, hi)
                assert 0 <= m.index_prefix(th, x, side) <= m.probe_prefix(th, x, side) <= x
        if name in ("containment_min", "containment_either"):
            continue
        rule = Rule(name, th.p, th.q)
        plen, lo, hi = rule.probe(np.array(EXTREME_SIZES, np.int64))
        assert ((0 <= plen) & (plen <= EXTREME_SIZES)).all() and (hi <= 2**62).all()
        assert (0 <= rule.index_prefix(np.array(EXTREME_SIZES))).all()


@pytest.mark.kernel_paths("compiled", "python")
def test_cosine_alpha_at_the_extreme_thresholds_of_huge_sets_is_exact():
    c = MEASURES["cosine"]
    for t in LARGE_DENOMINATORS:
        th = Threshold(t.numerator, t.denominator)
        for x, y in [(2**31 - 1, 2**31 - 1), (2**31 - 1, 1), (46341, 46340), (12, 1)]:
            alpha = c.required_overlap(th, x, y)
            assert Fraction(alpha * alpha, x * y) >= t * t > Fraction((alpha - 1) ** 2, x * y)
            assert mk.required_overlap(c.code, th.p, th.q, np.int32(x), np.int32(y)) == alpha


def test_plain_cosine_alpha_takes_a_few_exact_steps_not_millions(monkeypatch):
    # At 536870913/10**9 the plain path stepped o by one from an estimate made of wrapped
    # products, through the 128-bit comparison each time: minutes for a join of 100 sets. Now
    # each α is the float root's ceiling, or a few exact comparisons where the root is near a
    # whole number (as at t = 1/2 and x = y).
    from allpairs._kernels.jit import use_kernels

    calls = 0
    real = mk.products_ge.py_func

    def counted(*args):
        nonlocal calls
        calls += 1
        assert calls <= 10_000, "the cosine α loop runs away"
        return real(*args)

    monkeypatch.setattr(mk.products_ge, "py_func", counted)
    c = MEASURES["cosine"]
    sizes = [1, 2, 3, 7, 12, 40, 100, 46341, 2**31 - 1]
    alphas = 0
    with use_kernels("python"):
        for t in [Fraction(536870913, 10**9), Fraction(1, 2), Fraction(7, 10), Fraction(1, 10**9)]:
            th = Threshold(t.numerator, t.denominator)
            for x in sizes:
                for y in sizes:
                    alphas += 1
                    assert mk.required_overlap(c.code, th.p, th.q, np.int32(x), np.int32(y)) == \
                        c.required_overlap(th, x, y)
    assert calls <= 2 * alphas + 2 * sum(1 for x in sizes for y in sizes if x == y), (calls, alphas)


@settings(max_examples=300, deadline=None)
@given(st.sampled_from(["jaccard", "cosine", "dice", "overlap"]),
       st.one_of(st.sampled_from(["1e-9", "0.5", "0.7", "0.9", "0.999999999", "536870913/1000000000", "1", "3"]),
                 st.fractions(min_value=Fraction(1, 10**9), max_value=1, max_denominator=10**9).map(str)),
       st.lists(st.integers(0, 2**31 - 1) | st.integers(0, 60), min_size=1, max_size=40))
def test_prefix_arrays_equal_the_per_size_bounds(measure, t, sizes):
    m = get_measure(measure)
    t = str(max(1, int(Fraction(t)))) if measure == "overlap" else str(min(Fraction(t), 1))
    th = parse_threshold(t, m)
    got = m.prefix_arrays(th, np.array(sizes, np.int64))
    if got is None:  # products that could leave 62 bits: the caller asks per size
        return
    index, probe, lo = got
    assert index.tolist() == [m.index_prefix(th, s) for s in sizes]
    assert probe.tolist() == [m.probe_prefix(th, s) for s in sizes]
    assert lo.tolist() == [m.partner_sizes(th, s)[0] for s in sizes]


@pytest.mark.parametrize("text", ["0.7", "7E-1", "0.70", "0.700000000"])
def test_a_decimal_threshold_is_exact(text):
    # A decimal.Decimal is no numbers.Real: it was refused as "not a number", and float() would round it.
    from decimal import Decimal

    import allpairs

    assert Threshold.parse(Decimal(text)) == Threshold(7, 10)
    # J = 7/10 exactly: {1..8} and {2..10} share 7 of 10 tokens, a pair at t = 0.7 and not above it.
    sets = [list(range(1, 9)), list(range(2, 11))]
    assert len(allpairs.join(sets, threshold=Decimal(text)).pairs) == 1
    assert len(allpairs.join(sets, threshold=Decimal("0.700000001")).pairs) == 0
    assert parse_threshold(Decimal("3"), "overlap") == parse_threshold(Decimal("3.0"), "overlap") == Threshold(3, 1)


@pytest.mark.parametrize("value, says", [("NaN", "not a number"), ("Infinity", "not a number"),
                                         ("1.5", "outside (0, 1]"), ("0", "outside (0, 1]"),
                                         ("1E-999999999", "exponent beyond ±40"),
                                         ("0.1234567891", "too many decimal places")])
def test_a_decimal_threshold_is_checked_as_its_text_is(value, says):
    from decimal import Decimal

    with pytest.raises(UsageError, match=re.escape(says)):
        Threshold.parse(Decimal(value))


def test_a_numpy_float32_threshold_is_read_as_its_own_shortest_decimal():
    # np.float32(0.7) (a pandas float32 column's value) was read as 0.699999988079071 and refused with
    # "too many decimal places; e.g. 0.699999988": a float32 is read as its own shortest decimal, as a float.
    import numpy as np

    from allpairs.measures.threshold import Threshold

    assert Threshold.parse(np.float32(0.7)) == Threshold(7, 10)
    assert Threshold.parse(np.float32(1e-9)) == Threshold(1, 10**9)
    assert Threshold.parse(np.float16(0.5)) == Threshold(1, 2)
    assert Threshold.parse(np.float64(0.7)) == Threshold.parse(0.7) == Threshold(7, 10)


@settings(max_examples=300, deadline=None)
@given(st.sampled_from(["jaccard", "cosine", "dice", "containment", "overlap"]),
       st.lists(st.tuples(st.integers(1, 2**31 - 1), st.integers(0, 2**31 - 1), st.integers(0, 2**31 - 1)),
                max_size=20))
@example("cosine", [(3, 7, 11), (2**31 - 1, 2**31 - 1, 2**31 - 1)])
@example("dice", [(2**31 - 1, 2**31 - 1, 2**31 - 1)])
def test_similarity_texts_of_many_pairs_are_the_texts_of_each(name, triples):
    # The writers print many pairs' similarities at once from the measure's integer ratio: the same text as
    # the exact per-pair truncation (Fraction), at every size an int32 overlap allows.
    from allpairs.measures import get_measure
    from allpairs.pairs.result import similarity_floats, similarity_text, similarity_texts

    row = get_measure(name)
    pairs = [(o, max(o, x), max(o, y)) for o, x, y in triples]  # an overlap is at most either size
    o, x, y = ([p[k] for p in pairs] for k in range(3))
    assert similarity_texts(row, o, x, y) == [similarity_text(row, *p) for p in pairs]
    if not row.integer_threshold:  # and the floats Parquet gets, each the float of the exact value
        assert similarity_floats(row, o, x, y).tolist() == [float(row.similarity(*p)) for p in pairs]
