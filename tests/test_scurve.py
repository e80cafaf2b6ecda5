"""The S-curve, its knee, expected recall, and the recall-first choice of bands and rows."""
from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from allpairs.errors import UsageError
from allpairs.lsh import choose_params, expected_recall, knee, probability


def test_probability_is_the_banding_formula():
    s = np.linspace(0, 1, 11)
    assert np.allclose(probability(s, 16, 3), 1 - (1 - s**3) ** 16, rtol=1e-12, atol=0)
    assert probability(0.0, 16, 3) == 0.0
    assert probability(1.0, 16, 3) == 1.0
    assert isinstance(probability(0.5, 16, 3), float)
    assert probability(np.zeros((2, 3)), 4, 2).shape == (2, 3)


def test_probability_keeps_its_digits_far_below_the_knee():
    # 1 - (1 - 1e-30)**20 is 0 in floating point; the true value is about 2e-29.
    assert probability(1e-10, 20, 3) == pytest.approx(20e-30, rel=1e-9)


def test_the_go_experiment_figures():
    # REFERENCE §1: 16 × 3 at K = 48 catches a pair at exactly J = 0.5 with P ≈ 0.88, 12 × 4 with P ≈ 0.54.
    assert probability(0.5, 16, 3) == pytest.approx(1 - (7 / 8) ** 16)
    assert round(probability(0.5, 16, 3), 3) == 0.882
    assert round(probability(0.5, 12, 4), 3) == 0.539
    assert knee(16, 3) == pytest.approx((1 / 16) ** (1 / 3))
    assert round(knee(12, 4), 3) == 0.537


# What the recall-first rule picks at recall 0.99 (also in choose_params' docstring).
CHOICES = {
    (48, 0.5): (24, 2), (48, 0.7): (16, 3), (48, 0.9): (8, 6),
    (128, 0.5): (42, 3), (128, 0.7): (32, 4), (128, 0.9): (12, 10),
}


@pytest.mark.parametrize("key", sorted(CHOICES))
def test_choose_params_table(key):
    num_perm, t = key
    assert choose_params(t, num_perm) == CHOICES[key]


@settings(max_examples=200, deadline=None)
@given(st.floats(0.05, 1.0), st.integers(1, 256), st.floats(0.5, 0.999))
def test_choose_params_is_the_largest_r_meeting_the_target(t, num_perm, recall):
    try:
        b, r = choose_params(t, num_perm, recall=recall)
    except UsageError as err:
        # Only when even num_perm bands of one row miss the target.
        assert probability(t, num_perm, 1) < recall
        assert str(num_perm) in str(err)
        return
    assert b * r <= num_perm and b == num_perm // r
    assert probability(t, b, r) >= recall
    if r < num_perm:
        assert probability(t, num_perm // (r + 1), r + 1) < recall


def test_choose_params_says_how_many_permutations_are_needed():
    with pytest.raises(UsageError) as info:
        choose_params(0.1, 8)
    need = math.ceil(math.log(0.01) / math.log(0.9))
    assert f"at least {need}" in str(info.value)
    b, r = choose_params(0.1, need)
    assert probability(0.1, b, r) >= 0.99


@pytest.mark.parametrize("call", [
    lambda: choose_params(0.0, 48),
    lambda: choose_params(1.5, 48),
    lambda: choose_params(0.5, 0),
    lambda: choose_params(0.5, 48, recall=1.0),
    lambda: choose_params(0.5, 48, recall=0),
    lambda: probability(0.5, 0, 3),
    lambda: probability(1.2, 4, 3),
    lambda: knee(4, -1),
])
def test_bad_values_raise_usage_errors(call):
    with pytest.raises(UsageError):
        call()


def test_expected_recall_is_the_mean_of_p():
    s = [0.5, 0.7, 0.9, 1.0]
    assert expected_recall(s, 12, 4) == pytest.approx(np.mean([probability(x, 12, 4) for x in s]))
    assert math.isnan(expected_recall([], 12, 4))


def test_choose_params_never_advises_more_permutations_than_allowed():
    # t = 1e-9 needs 4.6 billion bands of one row: the advice must not be --num-perm 4605170184.
    with pytest.raises(UsageError) as info:
        choose_params(1e-9, 128)
    message = str(info.value)
    assert "4605170184" not in message and "limit of 4,096" in message and "lower recall=" in message
    with pytest.raises(UsageError, match="limit of 4,096"):
        choose_params(0.5, 100_000_000)  # refused at once, not after 10**8 trials
