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
