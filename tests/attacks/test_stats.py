"""Success rates, their Wilson intervals and the advantage over a baseline."""

from __future__ import annotations

import math

import pytest
from scipy.stats import binomtest

from veil.attacks.stats import Rate, advantage, rate
from veil.errors import ParameterError


@pytest.mark.parametrize(("k", "n"), [(0, 10), (3, 10), (50, 100), (499, 500), (500, 500)])
def test_rate_is_the_wilson_interval_scipy_computes(k: int, n: int) -> None:
    ours = rate(k, n)
    theirs = binomtest(k, n).proportion_ci(confidence_level=0.95, method="wilson")
    assert ours.value == k / n
    assert ours.low == pytest.approx(theirs.low, abs=1e-12)
    assert ours.high == pytest.approx(theirs.high, abs=1e-12)


def test_fractional_successes_count_as_expected_values() -> None:
    # A pick among 4 tied candidates is a quarter of a success.
    assert rate(2.5, 10).value == 0.25
    assert rate(2.5, 10).low < 0.25 < rate(2.5, 10).high


def test_rate_refuses_impossible_counts() -> None:
    with pytest.raises(ParameterError, match="successes"):
        rate(11, 10)
    with pytest.raises(ParameterError, match="successes"):
        rate(-1, 10)


def test_no_trial_gives_an_uninformative_interval() -> None:
    assert rate(0, 0) == Rate(0.0, 0.0, 1.0, 0)


def test_advantage_over_an_exact_baseline_rescales_the_rate_interval() -> None:
    attack = rate(90, 100)
    value, low, high = advantage(attack, Rate.exact(0.5))
    assert value == pytest.approx(0.8)
    # With no error on the baseline, the half-width is the rate's (symmetrised) over 0.5.
    assert high - low == pytest.approx((attack.high - attack.low) / 0.5)


def test_advantage_adds_both_errors_and_may_be_negative() -> None:
    attack, control = rate(30, 200), rate(40, 200)
    value, low, high = advantage(attack, control)
    assert value == pytest.approx((0.15 - 0.2) / 0.8)
    assert low < value < high < 0.2
    lone = advantage(attack, Rate.exact(0.2))
    assert high - low > lone[2] - lone[1]  # the control's own error widens the interval


def test_advantage_stays_within_minus_one_and_one() -> None:
    value, low, high = advantage(rate(1, 1), Rate.exact(0.0))
    assert (value, high) == (1.0, 1.0) and low < 1.0
    assert advantage(rate(5, 10), Rate.exact(1.0)) == (0.0, -1.0, 1.0)
    assert not math.isnan(advantage(rate(0, 3), rate(3, 3))[0])
