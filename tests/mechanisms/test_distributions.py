"""The mechanisms draw from the distributions they document.

Statistical tests use fixed seeds; each states its tolerance. Chi-square and KS tests
require p > 1e-3 (with fixed seeds the outcome is deterministic; the threshold says
how unusual a sample would have to be to fail).
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from veil.mechanisms import (
    BinaryRandomizedResponse,
    Exponential,
    Gaussian,
    Laplace,
    PlanarLaplace,
    RandomizedResponse,
    analytic_sigma,
    channel_epsilon,
    classic_sigma,
    clipped_mean,
    discrete_gaussian_delta,
    gaussian_delta,
    noisy_count,
    noisy_histogram,
    ordinal_scores,
    sample_discrete_gaussian,
    sample_discrete_laplace,
)

N = 200_000
P_MIN = 1e-3  # smallest p-value accepted from a goodness-of-fit test


def _rng(seed: int) -> np.random.Generator:
    return np.random.Generator(np.random.PCG64(seed))


def _chi_square_on_integers(samples: np.ndarray, pmf: dict[int, float]) -> float:
    """Chi-square p-value of integer samples against ``pmf``.

    One cell per integer whose expected count is at least 20; the two tails beyond them
    are folded into the end cells, so every cell expects at least 20 draws.
    """
    n = samples.size
    support = sorted(k for k, p in pmf.items() if p * n >= 20)
    lo, hi = support[0], support[-1]
    observed = [np.count_nonzero(samples <= lo)]
    expected = [sum(p for k, p in pmf.items() if k <= lo)]
    values, counts = np.unique(samples[(samples > lo) & (samples < hi)], return_counts=True)
    by_value = dict(zip(values.tolist(), counts.tolist(), strict=True))
    for k in range(lo + 1, hi):
        observed.append(by_value.get(k, 0))
        expected.append(pmf.get(k, 0.0))
    observed.append(np.count_nonzero(samples >= hi))
    expected.append(sum(p for k, p in pmf.items() if k >= hi))
    exp = np.asarray(expected) * n
    assert exp.min() >= 20
    # The pmf is truncated far in the tails (mass < 1e-20): rescale to the sample size.
    return float(stats.chisquare(observed, exp * n / exp.sum()).pvalue)


def _discrete_laplace_pmf(scale: float, reach: int) -> dict[int, float]:
    a = math.exp(-1.0 / scale)
    return {k: (1 - a) / (1 + a) * a ** abs(k) for k in range(-reach, reach + 1)}


def _discrete_gaussian_pmf(sigma: float) -> dict[int, float]:
    reach = int(40 * sigma) + 3
    weights = {k: math.exp(-k * k / (2 * sigma * sigma)) for k in range(-reach, reach + 1)}
    total = sum(weights.values())
    return {k: w / total for k, w in weights.items()}


# Discrete samplers ---------------------------------------------------------------------


@pytest.mark.parametrize("scale", [0.3, 1.0, 3.7, 25.0])
def test_discrete_laplace_pmf(scale: float) -> None:
    samples = sample_discrete_laplace(scale, N, _rng(1))
    assert samples.dtype == np.int64
    pmf = _discrete_laplace_pmf(scale, int(60 * scale) + 10)
    assert _chi_square_on_integers(samples, pmf) > P_MIN
    # Frequencies: standard error at most sqrt(0.25 / 2e5) ≈ 0.0011; tolerance 0.005.
    values = np.arange(-5, 6)
    freq = np.array([np.mean(samples == k) for k in values])
    np.testing.assert_allclose(freq, [pmf[k] for k in values.tolist()], atol=0.005)


@pytest.mark.parametrize("scale", [500.0, 1e5])
def test_discrete_laplace_large_scale_moments_and_tail(scale: float) -> None:
    samples = sample_discrete_laplace(scale, N, _rng(2)).astype(np.float64)
    a = math.exp(-1.0 / scale)
    variance = 2 * a / (1 - a) ** 2
    # Sample variance of a Laplace law: relative standard error sqrt(5 / n) ≈ 0.5 %;
    # tolerance 3 %.
    assert samples.var() == pytest.approx(variance, rel=0.03)
    # Mean: standard error sqrt(variance / n); tolerance 5 standard errors.
    assert abs(samples.mean()) < 5 * math.sqrt(variance / N)
    # P[|Y| >= k] = 2 a^k / (1 + a); at k = scale it is about e^-1 (s.e. 0.0011).
    k = int(scale)
    assert np.mean(np.abs(samples) >= k) == pytest.approx(2 * a**k / (1 + a), abs=0.005)


def test_discrete_laplace_is_symmetric() -> None:
    samples = sample_discrete_laplace(2.0, N, _rng(3))
    # P[Y > 0] = P[Y < 0] = a / (1 + a); s.e. of the difference ≈ 0.0015; tolerance 0.008.
    assert np.mean(samples > 0) == pytest.approx(np.mean(samples < 0), abs=0.008)


@pytest.mark.parametrize("sigma", [0.5, 2.0, 7.3])
def test_discrete_gaussian_pmf(sigma: float) -> None:
    samples = sample_discrete_gaussian(sigma, N, _rng(4))
    assert samples.dtype == np.int64
    pmf = _discrete_gaussian_pmf(sigma)
    assert _chi_square_on_integers(samples, pmf) > P_MIN
    values = np.arange(-3, 4)
    freq = np.array([np.mean(samples == k) for k in values])
    np.testing.assert_allclose(freq, [pmf[k] for k in values.tolist()], atol=0.005)


@pytest.mark.parametrize("sigma", [40.0, 3_000.0, 1e6])
def test_discrete_gaussian_variance_for_large_sigma(sigma: float) -> None:
    samples = sample_discrete_gaussian(sigma, N, _rng(5)).astype(np.float64)
    # For sigma >= 1 the variance equals sigma² to within 1e-8; sample variance of a
    # Gaussian has relative standard error sqrt(2 / n) ≈ 0.3 %; tolerance 2 %.
    assert samples.var() == pytest.approx(sigma**2, rel=0.02)
    assert abs(samples.mean()) < 5 * sigma / math.sqrt(N)
    # Normal shape: KS against N(0, sigma² + 1/12) after spreading each integer
    # uniformly over its unit cell (the jitter removes the lattice steps from the CDF).
    jittered = samples + _rng(6).uniform(-0.5, 0.5, N)
    assert stats.kstest(jittered / math.sqrt(sigma**2 + 1 / 12), "norm").pvalue > P_MIN


# Laplace mechanism ---------------------------------------------------------------------


def test_laplace_integer_output_is_int64_with_documented_variance() -> None:
    mech = Laplace(1.0, 0, 10, integer=True)
    assert mech.scale == 10.0
    out = mech.randomise(np.full(N, 5, dtype=np.int64), _rng(6))
    assert out.dtype == np.int64
    noise = (out - 5).astype(np.float64)
    # Relative standard error of a Laplace sample variance: sqrt(5 / n) ≈ 0.5 %; tol. 3 %.
    assert noise.var() == pytest.approx(mech.variance(), rel=0.03)
    assert abs(noise.mean()) < 5 * math.sqrt(mech.variance() / N)


def test_laplace_integer_output_for_integer_typed_float_input() -> None:
    out = Laplace(1.0, 0, 10, integer=True).randomise(np.array([2.0, 7.0]), _rng(6))
    assert out.dtype == np.int64


def test_laplace_float_output_lies_on_the_grid_with_documented_variance() -> None:
    mech = Laplace(0.5, -1.0, 1.0)
    step = mech.grid.step
    assert step == 2.0**-9  # largest power of two giving >= 1024 steps across [-1, 1]
    values = _rng(7).uniform(-1.0, 1.0, N)
    out = mech.randomise(values, _rng(8))
    assert out.dtype == np.float64
    steps = out / step
    np.testing.assert_array_equal(steps, np.rint(steps))
    noise = out - mech.grid.snap(values) * step
    assert noise.var() == pytest.approx(mech.variance(), rel=0.03)  # as above
    assert mech.scale == pytest.approx(mech.sensitivity / mech.epsilon)


@pytest.mark.parametrize("resolution", [0.25, 2.0**-20])
def test_laplace_explicit_resolution_is_the_grid(resolution: float) -> None:
    mech = Laplace(1.0, 0.0, 1.0, resolution=resolution)
    out = mech.randomise(np.array([0.3, 0.7, 0.9]), _rng(9))
    np.testing.assert_array_equal(out / resolution, np.rint(out / resolution))
    assert mech.sensitivity == pytest.approx(1.0)


def test_laplace_preserves_input_shape() -> None:
    out = Laplace(1.0, 0, 10, integer=True).randomise(np.zeros((3, 4), dtype=np.int64), _rng(0))
    assert out.shape == (3, 4)


def test_laplace_clips_inputs_to_the_bounds() -> None:
    mech = Laplace(1e3, 0, 10, integer=True)  # noise is 0 with probability 1 - 1e-40
    out = mech.randomise(np.array([-50, 5, 99]), _rng(10))
    np.testing.assert_array_equal(out, [0, 5, 10])


@pytest.mark.parametrize("value", [0, 1, 3, 5, 9, 10])
def test_laplace_clipping_bias_matches_bias(value: int) -> None:
    mech = Laplace(1.0, 0, 10, integer=True)
    out = mech.randomise(np.full(N, value, dtype=np.int64), _rng(11 + value))
    clipped = np.clip(out, 0, 10).astype(np.float64)
    expected = float(mech.bias(np.array([value]))[0])
    # Clipped output has sd <= 5, so the mean has s.e. <= 0.011; tolerance 0.06.
    assert clipped.mean() - value == pytest.approx(expected, abs=0.06)
    assert float(mech.bias(np.array([value]), clip=False)[0]) == 0.0


def test_laplace_bias_in_data_units_for_float_grid() -> None:
    mech = Laplace(2.0, 0.0, 1.0)
    out = mech.randomise(np.zeros(N), _rng(12))
    clipped = np.clip(out, 0.0, 1.0)
    # Clipped output sd <= 0.5 so s.e. <= 0.0011; tolerance 0.006.
    assert clipped.mean() == pytest.approx(float(mech.bias(np.array([0.0]))[0]), abs=0.006)
    # Symmetric bounds: the bias at the upper end mirrors the lower end.
    assert mech.bias(np.array([1.0]))[0] == pytest.approx(-mech.bias(np.array([0.0]))[0])


# Gaussian mechanism --------------------------------------------------------------------


@pytest.mark.parametrize(("epsilon", "delta"), [(0.5, 1e-5), (1.0, 1e-6), (0.1, 1e-3)])
def test_rounded_sampler_uses_the_classic_sigma(epsilon: float, delta: float) -> None:
    # Rounding the continuous Gaussian is post-processing: no adjustment of sigma.
    mech = Gaussian(epsilon, delta, 0, 10, integer=True)
    assert mech.sampler == "rounded"
    formula = 10 * math.sqrt(2 * math.log(1.25 / delta)) / epsilon
    assert classic_sigma(epsilon, delta, 10) == pytest.approx(formula, rel=1e-12)
    assert mech.sigma == pytest.approx(formula, rel=1e-12)


@pytest.mark.parametrize(("epsilon", "delta"), [(0.5, 1e-5), (1.0, 1e-6), (0.1, 1e-3)])
def test_discrete_sampler_keeps_the_classic_sigma_when_its_check_passes(
    epsilon: float, delta: float
) -> None:
    mech = Gaussian(epsilon, delta, 0, 10, integer=True, sampler="discrete")
    formula = 10 * math.sqrt(2 * math.log(1.25 / delta)) / epsilon
    assert discrete_gaussian_delta(formula, epsilon, 10) <= delta  # precondition
    assert mech.sigma == pytest.approx(formula, rel=1e-12)


def test_discrete_sampler_raises_sigma_when_its_check_fails() -> None:
    # The analytic sigma is tight for the continuous Gaussian; the discrete Gaussian's
    # own profile at that sigma slightly exceeds delta here, so sigma must go up.
    epsilon, delta = 0.5, 1e-5
    start = analytic_sigma(epsilon, delta, 10)
    assert discrete_gaussian_delta(start, epsilon, 10) > delta  # precondition
    mech = Gaussian(epsilon, delta, 0, 10, integer=True, calibration="analytic", sampler="discrete")
    assert start < mech.sigma < 1.01 * start
    assert discrete_gaussian_delta(mech.sigma, epsilon, 10) <= delta


def test_classic_sigma_in_data_units_for_float_grid() -> None:
    mech = Gaussian(0.5, 1e-5, 0.0, 1.0)
    step = mech.grid.step
    steps = mech.grid.sensitivity
    assert mech.sigma == pytest.approx(classic_sigma(0.5, 1e-5, steps) * step, rel=1e-9)
    assert mech.sensitivity == pytest.approx(1.0)


@settings(max_examples=60, deadline=None)
@given(
    epsilon=st.floats(0.01, 1.0),
    delta=st.floats(1e-12, 0.2),
    sensitivity=st.floats(0.01, 1e3),
)
def test_analytic_sigma_is_smallest_and_beats_classic(
    epsilon: float, delta: float, sensitivity: float
) -> None:
    sigma = analytic_sigma(epsilon, delta, sensitivity)
    assert sigma < classic_sigma(epsilon, delta, sensitivity)
    assert gaussian_delta(sigma, epsilon, sensitivity) <= delta
    assert gaussian_delta(sigma * (1 - 1e-6), epsilon, sensitivity) > delta


@settings(max_examples=30, deadline=None)
@given(epsilon=st.floats(1.0, 20.0), delta=st.floats(1e-12, 0.2))
def test_analytic_sigma_holds_for_large_epsilon(epsilon: float, delta: float) -> None:
    sigma = analytic_sigma(epsilon, delta, 1.0)
    assert gaussian_delta(sigma, epsilon, 1.0) <= delta
    assert gaussian_delta(sigma * (1 - 1e-6), epsilon, 1.0) > delta


def test_gaussian_delta_decreases_with_sigma() -> None:
    sigmas = np.geomspace(0.1, 100.0, 200)
    deltas = [gaussian_delta(float(s), 1.0, 1.0) for s in sigmas]
    assert all(a >= b for a, b in itertools.pairwise(deltas))


@pytest.mark.parametrize(("epsilon", "delta"), [(0.5, 1e-5), (2.0, 1e-6), (8.0, 1e-9)])
def test_analytic_mechanism_meets_delta_for_the_noise_drawn(epsilon: float, delta: float) -> None:
    rounded = Gaussian(epsilon, delta, 0, 10, integer=True, calibration="analytic")
    assert rounded.sigma == analytic_sigma(epsilon, delta, 10)
    assert gaussian_delta(rounded.sigma, epsilon, 10) <= delta
    discrete = Gaussian(
        epsilon, delta, 0, 10, integer=True, calibration="analytic", sampler="discrete"
    )
    assert discrete_gaussian_delta(discrete.sigma, epsilon, 10) <= delta
    if epsilon <= 1:
        assert rounded.sigma < Gaussian(epsilon, delta, 0, 10, integer=True).sigma


def _brute_force_delta(sigma: float, epsilon: float, sensitivity: int) -> float:
    """``Σ_y max(0, P(y) - e^ε P(y - Δ))`` for the discrete Gaussian, summed directly."""
    reach = math.ceil(40 * sigma) + sensitivity + 2
    ys = np.arange(-reach, reach + 1, dtype=np.float64)
    weights = np.exp(-(ys * ys) / (2 * sigma * sigma))
    p = weights / weights.sum()
    shifted = np.exp(-((ys - sensitivity) ** 2) / (2 * sigma * sigma)) / weights.sum()
    return float(np.maximum(p - math.exp(epsilon) * shifted, 0.0).sum())


@settings(max_examples=80, deadline=None)
@given(
    sigma=st.floats(0.3, 40.0),
    epsilon=st.floats(0.05, 4.0),
    sensitivity=st.integers(1, 8),
)
def test_discrete_gaussian_delta_equals_hockey_stick_sum(
    sigma: float, epsilon: float, sensitivity: int
) -> None:
    exact = _brute_force_delta(sigma, epsilon, sensitivity)
    assert discrete_gaussian_delta(sigma, epsilon, sensitivity) == pytest.approx(
        exact, rel=1e-9, abs=1e-14
    )


@pytest.mark.parametrize("sensitivity", [500, 2_000, 6_000])
def test_discrete_gaussian_delta_for_large_sigma_is_a_tight_upper_bound(sensitivity: int) -> None:
    sigma = 2_500.0  # above the exact-summation threshold: integral bounds are used
    exact = _brute_force_delta(sigma, 1.0, sensitivity)
    bound = discrete_gaussian_delta(sigma, 1.0, sensitivity)
    assert exact <= bound <= exact + 1e-3  # slack about 1/(σ√(2π)) per tail


@pytest.mark.parametrize("sampler", ["rounded", "discrete"])
@pytest.mark.parametrize("width", [4, 10_000])
def test_gaussian_noise_variance_matches_variance(sampler: str, width: int) -> None:
    mech = Gaussian(
        1.0,
        1e-5,
        0,
        width,
        integer=True,
        calibration="analytic",
        sampler=sampler,  # type: ignore[arg-type]
    )
    out = mech.randomise(np.full(N, 2, dtype=np.int64), _rng(13))
    assert out.dtype == np.int64
    # Relative standard error sqrt(2 / n) ≈ 0.3 %; tolerance 2 %.
    assert (out - 2).astype(np.float64).var() == pytest.approx(mech.variance(), rel=0.02)
    if sampler == "discrete":  # at most σ², and equal to it up to e^(-2π²σ²) for σ >= 1
        assert mech.variance() <= mech.sigma**2 * (1 + 1e-12)
    else:  # rounding to the integers adds about 1/12 step²
        assert mech.variance() == pytest.approx(mech.sigma**2 + 1 / 12, rel=1e-3)


@pytest.mark.parametrize("sampler", ["rounded", "discrete"])
def test_gaussian_float_output_lies_on_the_grid(sampler: str) -> None:
    mech = Gaussian(0.5, 1e-6, 0.0, 1.0, sampler=sampler)  # type: ignore[arg-type]
    out = mech.randomise(np.linspace(0.0, 1.0, 1000), _rng(14))
    steps = out / mech.grid.step
    np.testing.assert_array_equal(steps, np.rint(steps))


@pytest.mark.parametrize("sampler", ["rounded", "discrete"])
@pytest.mark.parametrize("value", [0, 3, 10])
def test_gaussian_clipping_bias_matches_bias(value: int, sampler: str) -> None:
    mech = Gaussian(1.0, 1e-3, 0, 10, integer=True, calibration="analytic", sampler=sampler)  # type: ignore[arg-type]
    out = mech.randomise(np.full(N, value, dtype=np.int64), _rng(15 + value))
    clipped = np.clip(out, 0, 10).astype(np.float64)
    expected = float(mech.bias(np.array([value]))[0])
    # Documented to within a grid step of the discrete truth; sampling s.e. <= 0.011.
    assert clipped.mean() - value == pytest.approx(expected, abs=0.1)


# Randomized response -------------------------------------------------------------------


def _empirical_channel(mech: object, k: int, n: int, seed: int) -> np.ndarray:
    rng = _rng(seed)
    rows = []
    for i in range(k):
        out = mech.randomise(np.full(n, i, dtype=np.int64), rng)  # type: ignore[attr-defined]
        rows.append(np.bincount(out, minlength=k) / n)
    return np.array(rows)


@pytest.mark.parametrize(("epsilon", "k"), [(1.0, 4), (0.2, 10), (3.0, 3)])
def test_randomized_response_channel(epsilon: float, k: int) -> None:
    mech = RandomizedResponse(epsilon, k)
    e = math.exp(epsilon)
    assert mech.keep_probability == pytest.approx(e / (e + k - 1))
    assert mech.other_probability == pytest.approx(1 / (e + k - 1))
    np.testing.assert_allclose(mech.channel.sum(axis=1), 1.0)
    assert channel_epsilon(mech.channel) == pytest.approx(epsilon)
    empirical = _empirical_channel(mech, k, 100_000, seed=16)
    # Each cell has s.e. <= sqrt(0.25 / 1e5) ≈ 0.0016; tolerance 0.007.
    np.testing.assert_allclose(empirical, mech.channel, atol=0.007)


def test_randomized_response_replaces_uniformly_over_the_other_categories() -> None:
    k = 7
    mech = RandomizedResponse(0.5, k)
    out = mech.randomise(np.full(N, 2, dtype=np.int64), _rng(17))
    replaced = out[out != 2]
    counts = np.bincount(replaced, minlength=k)
    # The share kept is the keep probability (s.e. 0.0011; tolerance 0.005) ...
    assert 1 - replaced.size / N == pytest.approx(mech.keep_probability, abs=0.005)
    # ... and the others are equally likely.
    assert stats.chisquare(np.delete(counts, 2)).pvalue > P_MIN


@settings(max_examples=50, deadline=None)
@given(
    epsilon=st.floats(0.01, 60.0),
    k=st.integers(2, 50),
    codes=st.lists(st.integers(0, 49), min_size=0, max_size=200),
    seed=st.integers(0, 2**32 - 1),
)
def test_randomized_response_outputs_stay_in_the_domain(
    epsilon: float, k: int, codes: list[int], seed: int
) -> None:
    arr = np.array([c % k for c in codes], dtype=np.int64)
    out = RandomizedResponse(epsilon, k).randomise(arr, _rng(seed))
    assert out.dtype == np.int64
    assert out.shape == arr.shape
    assert np.all((out >= 0) & (out < k))


def test_binary_randomized_response_flip_probability() -> None:
    mech = BinaryRandomizedResponse(0.5)
    flip = 1 / (1 + math.exp(0.5))
    bits = (np.arange(N) % 2).astype(np.int64)
    out = mech.randomise(bits, _rng(18))
    # Standard error sqrt(0.25 / 2e5) ≈ 0.0011; tolerance 0.005.
    assert np.mean(out != bits) == pytest.approx(flip, abs=0.005)
    assert np.mean(out[bits == 0] != 0) == pytest.approx(flip, abs=0.007)
    assert np.mean(out[bits == 1] != 1) == pytest.approx(flip, abs=0.007)
    assert mech.cost().epsilon == 0.5


# Exponential ---------------------------------------------------------------------------


@pytest.mark.parametrize(("epsilon", "k"), [(2.0, 4), (1.0, 10)])
def test_exponential_standard_with_trasgodp_score_spends_half(epsilon: float, k: int) -> None:
    mech = Exponential(epsilon, k)
    half = math.exp(epsilon / 2)
    np.testing.assert_allclose(mech.keep_probability, half / (half + k - 1))
    assert mech.cost().epsilon == pytest.approx(epsilon / 2)
    assert channel_epsilon(mech.channel) == pytest.approx(epsilon / 2)
    empirical = _empirical_channel(mech, k, 50_000, seed=19)
    # Cell s.e. <= sqrt(0.25 / 5e4) ≈ 0.0022; tolerance 0.01.
    np.testing.assert_allclose(empirical, mech.channel, atol=0.01)


@pytest.mark.parametrize(("epsilon", "k"), [(1.0, 4), (0.3, 6), (5.0, 3)])
def test_exponential_full_with_trasgodp_score_is_randomized_response(
    epsilon: float, k: int
) -> None:
    mech = Exponential(epsilon, k, calibration="full")
    assert mech.cost().epsilon == pytest.approx(epsilon, rel=1e-9)
    np.testing.assert_allclose(mech.channel, RandomizedResponse(epsilon, k).channel, atol=1e-9)
    empirical = _empirical_channel(mech, k, 50_000, seed=20)
    np.testing.assert_allclose(empirical, mech.channel, atol=0.01)  # as above


@pytest.mark.parametrize("calibration", ["standard", "full"])
def test_exponential_ordinal_scores_sample_the_channel(calibration: str) -> None:
    k = 5
    mech = Exponential(1.5, scores=ordinal_scores(k), calibration=calibration)  # type: ignore[arg-type]
    assert mech.sensitivity == k - 1
    # Nearby categories are more likely than distant ones.
    assert np.all(np.diff(mech.channel[0]) < 0)
    empirical = _empirical_channel(mech, k, 50_000, seed=21)
    np.testing.assert_allclose(empirical, mech.channel, atol=0.01)  # as above
    assert mech.cost().epsilon == pytest.approx(channel_epsilon(mech.channel))
    assert mech.cost().epsilon <= 1.5 + 1e-12


def test_ordinal_scores() -> None:
    np.testing.assert_array_equal(
        ordinal_scores(3), [[0.0, -1.0, -2.0], [-1.0, 0.0, -1.0], [-2.0, -1.0, 0.0]]
    )


@pytest.mark.parametrize(
    "mech",
    [
        Exponential(1.0, 3),
        Exponential(1.0, 3, sensitivity=2.0),  # overstated sensitivity: spends ε/4
        Exponential(1.0, 3, calibration="full"),
        Exponential(1.0, scores=ordinal_scores(4)),
        Exponential(1.0, scores=ordinal_scores(4), calibration="full"),
        Exponential(2.0, scores=np.array([[1.0, 0.0, 0.5], [0.0, 1.0, 0.2], [0.3, 0.3, 1.0]])),
    ],
    ids=["standard", "overstated", "full", "ordinal", "ordinal-full", "arbitrary"],
)
def test_exponential_cost_is_the_exact_channel_epsilon(mech: Exponential) -> None:
    # The ledger records the privacy the channel actually spends, never the budget
    # asked for, and never more than that budget.
    exact = channel_epsilon(mech.channel)
    assert mech.cost().epsilon == pytest.approx(exact, rel=1e-9)
    assert mech.cost().epsilon <= mech.epsilon


def test_exponential_overstated_sensitivity_spends_less() -> None:
    assert Exponential(1.0, 3, sensitivity=2.0).cost().epsilon == pytest.approx(0.25)


# Planar Laplace ------------------------------------------------------------------------


def test_planar_laplace_angle_is_uniform_and_radius_gamma() -> None:
    mech = PlanarLaplace(0.05)
    east, north, radius = mech.sample(N, _rng(22))
    np.testing.assert_allclose(np.hypot(east, north), radius, rtol=1e-12)
    angle = np.mod(np.arctan2(east, north), 2 * math.pi)
    assert stats.kstest(angle, "uniform", args=(0.0, 2 * math.pi)).pvalue > P_MIN
    assert stats.kstest(radius, "gamma", args=(2.0, 0.0, 1 / mech.epsilon)).pvalue > P_MIN
    # Mean radius 2/ε = 40 m; relative s.e. 1/sqrt(2n) ≈ 0.16 %; tolerance 1 %.
    assert mech.mean_radius == pytest.approx(40.0)
    assert radius.mean() == pytest.approx(mech.mean_radius, rel=0.01)
    # Quantiles: s.e. of an empirical 95 % coverage ≈ 0.0005; tolerance 0.003.
    assert np.mean(radius <= mech.radius_quantile(0.95)) == pytest.approx(0.95, abs=0.003)
    # Independent coordinates of equal spread: each has variance E[r²]/2 = 3/ε².
    assert east.var() == pytest.approx(3 / mech.epsilon**2, rel=0.03)
    assert north.var() == pytest.approx(3 / mech.epsilon**2, rel=0.03)


def test_planar_laplace_radius_quantile() -> None:
    mech = PlanarLaplace(0.01)
    assert mech.radius_quantile(0.0) == 0.0
    q = mech.radius_quantile(0.9)
    assert stats.gamma.cdf(q, 2.0, scale=100.0) == pytest.approx(0.9, rel=1e-9)


# Central helpers -----------------------------------------------------------------------


def test_noisy_count_is_unbiased_integer_valued_and_costed() -> None:
    rng = _rng(23)
    released = np.array([noisy_count(40, 1.0, rng).value for _ in range(20_000)])
    assert np.all(released == np.rint(released))
    # Noise variance 2a/(1-a)² ≈ 0.92 with a = e^-1: s.e. of the mean ≈ 0.0068; tol 0.035.
    assert released.mean() == pytest.approx(40.0, abs=0.035)
    result = noisy_count(40, 0.5, rng)
    assert result.scale == 2.0
    assert (result.cost.epsilon, result.cost.notion, result.cost.unit) == (
        0.5,
        "dp-central",
        "dataset",
    )


def test_noisy_histogram_is_unbiased_per_bin() -> None:
    counts = np.tile(np.array([0, 5, 100], dtype=np.int64), (N // 3, 1))
    result = noisy_histogram(counts, 2.0, _rng(24))
    assert result.value.shape == counts.shape
    noise = result.value - counts
    assert np.all(noise == np.rint(noise))
    # Variance 2a/(1-a)² ≈ 0.22 with a = e^-2: s.e. of each column mean ≈ 0.0018; tol 0.01.
    np.testing.assert_allclose(noise.mean(axis=0), 0.0, atol=0.01)
    assert result.cost.epsilon == 2.0


def test_clipped_mean_is_close_to_the_true_mean_for_large_n() -> None:
    values = _rng(25).uniform(2.0, 8.0, N)
    result = clipped_mean(values, 0.0, 10.0, 1.0, _rng(26))
    # Snapping moves each value by at most 10/2048; noise on the sum has scale
    # 2·10/ε ≈ 20 (s.e. of the mean 1e-4): tolerance 0.01.
    assert result.value == pytest.approx(values.mean(), abs=0.01)
    assert result.cost.epsilon == 1.0 and result.cost.notion == "dp-central"


def test_clipped_mean_clips_values_to_the_bounds() -> None:
    values = np.full(N, 100.0)
    result = clipped_mean(values, 0.0, 10.0, 1.0, _rng(27))
    assert 9.9 <= result.value <= 10.0
