"""Tests of veil.risk.population: population-uniqueness estimators."""

from __future__ import annotations

import math

import numpy as np
import pytest

from veil.errors import ParameterError
from veil.risk.population import (
    class_size_histogram,
    pitman,
    population_uniqueness,
    zayatz,
)

from .._hang import within


def _histogram(seed: int = 3, n: int = 5000) -> dict[int, int]:
    # Class sizes of a sample from a skewed population (fixed seed).
    rng = np.random.default_rng(seed)
    codes = rng.zipf(1.6, n)
    _, sizes = np.unique(codes, return_counts=True)
    return class_size_histogram(sizes)


def test_class_size_histogram() -> None:
    assert class_size_histogram([3, 1, 1, 2]) == {1: 2, 2: 1, 3: 1}
    with pytest.raises(ParameterError):
        class_size_histogram([0, 1])


def test_zayatz_hand_computed() -> None:
    # n = 4 (sizes 1, 1, 2), pi = 0.5 -> N = 8, hypergeometric P(X=1):
    # size 1: 4/8 = 0.5; size 2: 2 * C(6,3) / C(8,4) = 40/70.
    h = {1: 2, 2: 1}
    p1, p2 = 0.5, 40 / 70
    conditional = (2 / 3 * p1) / (2 / 3 * p1 + 1 / 3 * p2)
    expected = 2 * conditional / 0.5 / 8
    assert zayatz(h, 0.5) == pytest.approx(expected)


@pytest.mark.parametrize("estimator", [zayatz, pitman])
def test_estimates_in_unit_interval(estimator: object) -> None:
    h = _histogram()
    for pi in (0.001, 0.01, 0.05, 0.1, 0.3, 0.7, 1.0):
        value = estimator(h, pi)  # type: ignore[operator]
        assert math.isnan(value) or 0.0 <= value <= 1.0


def test_full_sample_gives_sample_uniqueness() -> None:
    h = _histogram()
    n = sum(s * c for s, c in h.items())
    assert zayatz(h, 1.0) == pytest.approx(h[1] / n)
    result = population_uniqueness(h, 1.0)
    assert result.share == pytest.approx(h[1] / n)
    assert result.model == "zayatz"


@pytest.mark.parametrize("estimator", [zayatz, pitman])
def test_uniqueness_grows_with_sampling_fraction(estimator: object) -> None:
    # The smaller the sample share, the more sample uniques have look-alikes outside.
    h = _histogram()
    values = [estimator(h, pi) for pi in (0.01, 0.05, 0.1, 0.3, 0.6, 0.9)]  # type: ignore[operator]
    assert all(np.isfinite(values))
    assert np.all(np.diff(values) > 0)


def test_estimates_below_sample_uniqueness() -> None:
    h = _histogram()
    n = sum(s * c for s, c in h.items())
    for pi in (0.01, 0.1, 0.5):
        assert zayatz(h, pi) <= h[1] / n
        assert pitman(h, pi) <= h[1] / n


def test_dankar_rule_switches_at_ten_percent() -> None:
    h = _histogram()
    low = population_uniqueness(h, 0.05)
    assert low.model == "pitman"
    assert low.share == pytest.approx(pitman(h, 0.05))
    high = population_uniqueness(h, 0.2)
    assert high.model == "zayatz"
    assert high.share == pytest.approx(zayatz(h, 0.2))


def test_dankar_falls_back_to_zayatz_when_pitman_has_no_fit() -> None:
    h = {1: 10}  # every class unique: no interior maximum of Pitman's likelihood
    assert math.isnan(pitman(h, 0.05))
    result = population_uniqueness(h, 0.05)
    assert result.model == "zayatz"
    assert result.share == pytest.approx(zayatz(h, 0.05))


def test_no_sample_uniques_means_zero() -> None:
    for model in ("dankar", "pitman", "zayatz"):
        result = population_uniqueness({2: 5, 3: 1}, 0.05, model=model)  # type: ignore[arg-type]
        assert (result.share, result.model) == (0.0, "none")


def test_errors() -> None:
    for bad in (0.0, -0.5, 1.01):
        with pytest.raises(ParameterError, match="sampling_fraction"):
            zayatz({1: 1}, bad)
    with pytest.raises(ParameterError, match="histogram"):
        pitman({}, 0.5)
    with pytest.raises(ParameterError, match="histogram"):
        zayatz({0: 3}, 0.5)
    with pytest.raises(ParameterError, match="model"):
        population_uniqueness({1: 2, 2: 1}, 0.5, model="snb")  # type: ignore[arg-type]


# ------------------------------------------------- issue 14 C: tiny sampling fractions


def test_zayatz_matches_the_hypergeometric_distribution() -> None:
    # The closed form of P(exactly one drawn) against scipy's hypergeometric pmf where
    # scipy is quick and exact enough (N up to 1e6); relative tolerance 1e-9.
    from scipy import stats

    h = _histogram()
    n = sum(size * count for size, count in h.items())
    sizes = np.array(sorted(h), dtype=np.int64)
    counts = np.array([h[s] for s in sizes])
    for fraction in (0.9, 0.3, 0.05, 0.005):
        population = max(n, round(n / fraction))
        p_one = stats.hypergeom.pmf(1, population, sizes, n)
        conditional = h[1] * stats.hypergeom.pmf(1, population, 1, n) / (counts * p_one).sum()
        expected = min(h[1] * conditional / fraction / population, 1.0)
        assert zayatz(h, fraction) == pytest.approx(expected, rel=1e-9)


def test_a_tiny_sampling_fraction_is_estimated_not_hung() -> None:
    # pi = 1e-10 makes N = 5e13: scipy's hypergeometric pmf used to run for minutes.
    h = _histogram(n=2000)
    n = sum(size * count for size, count in h.items())
    result = within(30, "population_uniqueness at pi = 1e-10", population_uniqueness, h, 1e-10)
    share = within(30, "zayatz at pi = 1e-10", zayatz, h, 1e-10)
    assert result.sampling_fraction == 1e-10 and 0.0 <= result.share <= 1.0
    # As N grows, P(exactly one drawn) tends to s n / N for a class of size s, so the
    # estimate tends to (f1 / n)^2; at N = 5e13 it is that within 1e-6 (relative).
    assert share == pytest.approx((h[1] / n) ** 2, rel=1e-6)


def test_a_population_beyond_2_to_the_53_is_refused() -> None:
    with pytest.raises(ParameterError, match=r"sampling_fraction 1e-300 makes the population"):
        zayatz({1: 3, 2: 1}, 1e-300)
    with pytest.raises(ParameterError, match=r"sampling_fraction must be a number in \(0, 1\]"):
        population_uniqueness({1: 3}, "0.1")  # type: ignore[arg-type]
