"""Threshold algebra: every integer bound equals its definition in exact fractions."""
import math
from fractions import Fraction

import pytest
from hypothesis import given
from hypothesis import strategies as st

from allpairs.errors import UsageError
from allpairs.measures import Threshold, jaccard

thresholds = st.fractions(min_value=Fraction(1, 1000), max_value=1, max_denominator=1000)
sizes = st.integers(0, 5000)


@given(thresholds, sizes, sizes)
def test_bounds_equal_their_fraction_definitions(t, x, y):
    th = Threshold(t.numerator, t.denominator)
    assert th.required_overlap(x, y) == math.ceil(t / (1 + t) * (x + y))
    assert th.min_size(x) == math.ceil(t * x)
    assert th.max_size(x) == math.floor(x / t)
    if x:
        assert th.probe_prefix(x) == x - math.ceil(t * x) + 1
        assert th.index_prefix(x) == x - math.ceil(2 * t / (1 + t) * x) + 1


@given(thresholds, st.integers(0, 200), st.integers(1, 200), st.integers(1, 200))
def test_accepts_is_jaccard_at_least_t(t, o, x, y):
    o = min(o, x, y)
    th = Threshold(t.numerator, t.denominator)
    assert th.accepts(o, x, y) == (jaccard(o, x, y) >= t)


def test_float_thresholds_mean_their_decimal():
    assert Threshold.parse(0.7).fraction == Fraction(7, 10)
    assert Threshold.parse("0.28").min_size(25) == 7  # math.ceil(0.28 * 25) == 8 in floats
    assert Threshold.parse("2/3").fraction == Fraction(2, 3)
    assert str(Threshold.parse(0.5)) == "0.5"
    assert str(Threshold.parse("1/3")) == "1/3"


@pytest.mark.parametrize("bad", [0, -0.5, 1.5, "abc", "nan", "inf", "", None, True, "0.1234567891234"])
def test_thresholds_outside_0_1_are_usage_errors(bad):
    with pytest.raises(UsageError):
        Threshold.parse(bad)


def test_two_empty_sets_are_never_a_pair():
    assert not Threshold.parse(1).accepts(0, 0, 0)
    assert jaccard(0, 0, 0) == 0


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
