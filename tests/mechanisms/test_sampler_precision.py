"""Integer noise stays even at large scales, and scales that would overflow are refused.

A float64 draw resolves about 53 bits. When one exponential or normal draw is scaled to
``10^14`` grid steps, neighbouring outputs receive about 10 % more or fewer of the
values the draw can take, so the ratio of their probabilities is off by far more than
the mechanism's ``exp(-ε/Δ)``. The first tests feed the samplers a stand-in generator
whose float draws are the finest a float64 sampler can produce (consecutive doubles)
and whose integer draws sweep consecutive integers, and count how many draws land on
each output: a sampler whose outputs are resolved by exact integers gives every
output of the window the same count.
"""

from __future__ import annotations

import math
import warnings
from typing import Any

import numpy as np
import pytest
from scipy import stats

from veil.errors import ParameterError, PrivacyWarning
from veil.mechanisms import (
    BinaryRandomizedResponse,
    Exponential,
    Gaussian,
    Laplace,
    RandomizedResponse,
    clipped_mean,
    noisy_count,
    noisy_histogram,
    sample_discrete_gaussian,
    sample_discrete_laplace,
    sample_rounded_gaussian,
)
from veil.mechanisms.randomized_response import sample_keep_or_other

LARGE_GRID = 2**40  # the largest grid make_grid allows
SMALL_EPSILON = 0.01


class FinestFloatDraws:
    """A stand-in generator: consecutive doubles and consecutive integers, signs +.

    ``standard_exponential`` and ``standard_normal`` return consecutive doubles from
    ``start`` (one ulp apart: no float64 sampler resolves finer); ``integers`` returns
    ``low, low + 1, ...`` (64-bit words count up from 0, so their top bit, a sign, is
    0; byte draws for signs return 0, a positive sign); ``random`` returns 0.0 (every
    acceptance test passes). Each takes ``size`` or ``out=``, as NumPy's does.
    """

    def __init__(self, start: float) -> None:
        self._next = start
        self._counter = 0

    def _floats(self, size: int | None, out: np.ndarray | None) -> np.ndarray:
        target = np.empty(size or 0) if out is None else out
        value = self._next
        for i in range(target.size):
            target[i] = value
            value = math.nextafter(value, math.inf)
        self._next = value
        return target

    def standard_exponential(
        self, size: int | None = None, out: np.ndarray | None = None
    ) -> np.ndarray:
        return self._floats(size, out)

    def standard_normal(self, size: int | None = None, out: np.ndarray | None = None) -> np.ndarray:
        return self._floats(size, out)

    def random(self, size: int | None = None, out: np.ndarray | None = None) -> np.ndarray:
        target = np.empty(size or 0) if out is None else out
        target[...] = 0.0
        return target

    def integers(self, low: int, high: int, size: int, dtype: Any = np.int64) -> np.ndarray:
        if np.dtype(dtype) == np.uint8:
            return np.zeros(size, dtype=np.uint8)
        count = np.arange(self._counter, self._counter + size, dtype=np.uint64)
        self._counter += size
        if high - low >= 2**63:  # whole 64-bit words
            return count.astype(dtype)
        return (low + (count % np.uint64(high - low)).astype(np.int64)).astype(dtype)


def _adjacent_count_ratios(outputs: np.ndarray) -> np.ndarray:
    """Count of each output over the count of the next, inside the hit window."""
    values, counts = np.unique(outputs, return_counts=True)
    full = np.zeros(values[-1] - values[0] + 1, dtype=np.int64)
    full[values - values[0]] = counts
    inner = full[1:-1].astype(np.float64)  # the window's ends are cut
    return inner[:-1] / inner[1:]


def _rng(seed: int) -> np.random.Generator:
    return np.random.Generator(np.random.PCG64(seed))


# --- evenness at the large-grid extremes ---------------------------------------------


def test_laplace_adjacent_outputs_are_even_on_the_largest_grid() -> None:
    # Δ = 2^40 steps at ε = 0.01: scale 1.1e14 steps, adjacent outputs should have
    # probability ratio exp(-ε/Δ) = 1 - 9e-15. Tolerance: 1e-3 on every ratio (the old
    # single-draw sampler gave ratios 11/10 and 10/11).
    mech = Laplace(SMALL_EPSILON, 0, LARGE_GRID, integer=True)
    rng: Any = FinestFloatDraws(4.0)
    out = mech.randomise(np.zeros(20_000, dtype=np.int64), rng)
    ratios = _adjacent_count_ratios(out)
    assert ratios.size > 1000
    expected = math.exp(-SMALL_EPSILON / LARGE_GRID)
    np.testing.assert_allclose(ratios, expected, rtol=1e-3)


@pytest.mark.parametrize("sampler", ["rounded", "discrete"])
def test_gaussian_adjacent_outputs_are_even_on_the_largest_grid(sampler: str) -> None:
    # σ ≈ 4e14 steps; neighbours 1 step apart a few σ out differ by far less than 1e-3.
    mech = Gaussian(
        SMALL_EPSILON,
        1e-3,
        0,
        LARGE_GRID,
        integer=True,
        sampler=sampler,  # type: ignore[arg-type]
    )
    rng: Any = FinestFloatDraws(1.0 if sampler == "rounded" else 4.0)
    out = mech.randomise(np.zeros(20_000, dtype=np.int64), rng)
    ratios = _adjacent_count_ratios(out)
    assert ratios.size > 1000
    np.testing.assert_allclose(ratios, 1.0, rtol=1e-3)


@pytest.mark.parametrize("scale", [3.0e5, 1.1e14, 2.0**50])
def test_discrete_laplace_magnitude_is_exponential_at_large_scales(scale: float) -> None:
    # |Y| / t is Exp(1) up to O(1/t); KS p > 1e-3 on 100 000 draws (fixed seed). The
    # sign is fair: positive share within 0.01 of 1/2 (3 se).
    draws = sample_discrete_laplace(scale, 100_000, _rng(11))
    assert stats.kstest(np.abs(draws) / scale, "expon").pvalue > 1e-3
    assert abs(float(np.mean(draws > 0)) - 0.5) < 0.01


@pytest.mark.parametrize("sampler", [sample_rounded_gaussian, sample_discrete_gaussian])
@pytest.mark.parametrize("sigma", [3.0e5, 4.0e14])
def test_gaussian_samplers_are_normal_at_large_scales(sampler: Any, sigma: float) -> None:
    # Y / σ is N(0, 1) up to O(1/σ); KS p > 1e-3 on 100 000 draws (fixed seed).
    draws = sampler(sigma, 100_000, _rng(12))
    assert draws.dtype == np.int64
    assert stats.kstest(draws / sigma, "norm").pvalue > 1e-3


def test_rounded_gaussian_matches_its_pmf_at_small_sigma() -> None:
    # The single-draw path: P[Y = k] = Φ((k+½)/σ) - Φ((k-½)/σ); chi-square p > 1e-3.
    sigma = 2.5
    draws = sample_rounded_gaussian(sigma, 200_000, _rng(13))
    ks = np.arange(-12, 13)
    pmf = stats.norm.cdf((ks + 0.5) / sigma) - stats.norm.cdf((ks - 0.5) / sigma)
    observed = np.array([np.count_nonzero(draws == k) for k in ks])
    expected = pmf / pmf.sum() * observed.sum()
    assert stats.chisquare(observed, expected).pvalue > 1e-3


# --- scales that would overflow ------------------------------------------------------


def test_laplace_refuses_an_epsilon_whose_scale_overflows() -> None:
    # ε = 1e-30 used to return the lower bound for every record (int64 overflow).
    with pytest.raises(ParameterError) as info:
        Laplace(1e-30, 0, 100, integer=True)
    message = str(info.value)
    assert "epsilon: 1e-30" in message
    assert "[0, 100]" in message and "resolution 1" in message
    smallest = float(message.split("smallest epsilon allowed here is ")[1].split(" ")[0])
    assert smallest == pytest.approx(100 / 2**50, rel=0.01)
    # The quoted smallest epsilon is accepted and draws without overflow warnings.
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        mech = Laplace(smallest, 0, 100, integer=True)
        out = mech.randomise(np.zeros(1000, dtype=np.int64), _rng(1))
    assert np.abs(out).max() < 2**62
    assert len(np.unique(out)) == 1000  # noise of scale 2^50: all distinct


@pytest.mark.parametrize(
    ("calibration", "sampler", "delta"),
    [("classic", "rounded", 1e-5), ("analytic", "rounded", 1e-300), ("classic", "discrete", 1e-9)],
)
def test_gaussian_refuses_an_epsilon_whose_sigma_overflows(
    calibration: Any, sampler: Any, delta: float
) -> None:
    with pytest.raises(ParameterError) as info:
        Gaussian(1e-30, delta, 0, 1000, integer=True, calibration=calibration, sampler=sampler)
    message = str(info.value)
    assert "epsilon: 1e-30" in message and f"delta={delta!r}" in message
    smallest = float(message.split("smallest epsilon allowed here is ")[1].split(" ")[0])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        mech = Gaussian(
            smallest, delta, 0, 1000, integer=True, calibration=calibration, sampler=sampler
        )
        out = mech.randomise(np.zeros(1000, dtype=np.int64), _rng(2))
    assert mech.sigma < 2**50
    assert float(np.std(out)) == pytest.approx(mech.sigma, rel=0.1)  # 1000 draws: se 2.2 %


@pytest.mark.parametrize(
    "call",
    [
        lambda: noisy_count(3, 1e-30, _rng(3)),
        lambda: noisy_histogram(np.array([1, 2]), 1e-30, _rng(3)),
        lambda: clipped_mean(np.array([1.0, 2.0]), 0.0, 10.0, 1e-30, _rng(3)),
    ],
    ids=["count", "histogram", "mean"],
)
def test_central_helpers_refuse_an_epsilon_whose_scale_overflows(call: Any) -> None:
    with pytest.raises(ParameterError, match=r"epsilon: 1e-30 .*smallest epsilon allowed"):
        call()


@pytest.mark.parametrize(
    "sampler", [sample_discrete_laplace, sample_rounded_gaussian, sample_discrete_gaussian]
)
def test_samplers_refuse_scales_beyond_int64_room(sampler: Any) -> None:
    with pytest.raises(ParameterError, match="2\\^50"):
        sampler(1e20, 10, _rng(4))


def test_grid_far_from_zero_is_refused() -> None:
    # Grid indices beyond 2^53 are not exact in float64 and leave no room for noise.
    with pytest.raises(ParameterError, match="2\\^53"):
        Laplace(1.0, 2**60, 2**60 + 1024, integer=True)


# --- categorical channels with probabilities below what 53-bit draws realize ---------


@pytest.mark.parametrize(
    "build",
    [
        lambda e: RandomizedResponse(e, 4),
        lambda e: BinaryRandomizedResponse(e),
        lambda e: Exponential(2 * e, 4),
        lambda e: Exponential(e, 4, calibration="full"),
    ],
    ids=["kary", "binary", "exponential", "exponential-full"],
)
def test_categorical_channels_warn_when_probabilities_cannot_be_realized(build: Any) -> None:
    # At ε = 40 the other categories have probability about e^-40 = 4e-18 < 2^-53:
    # they round to 0 and the input is released unchanged, while ε = 40 is recorded.
    with pytest.warns(PrivacyWarning, match=r"epsilon: .* below 2\^-40"):
        build(40.0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        build(20.0)
        build(1e-30)  # probabilities uniform: nothing is lost


def test_tiny_epsilon_categorical_channels_are_uniform_and_quiet() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        mech = RandomizedResponse(1e-30, 4)
        out = mech.randomise(np.zeros(40_000, dtype=np.int64), _rng(5))
    # Uniform over 4 categories: each share within 0.01 of 1/4 (4.6 se).
    shares = np.bincount(out, minlength=4) / out.size
    np.testing.assert_allclose(shares, 0.25, atol=0.01)


# --- what the docstrings claim about the samplers (issue 14 B15) ----------------------


def test_no_docstring_claims_exact_sampling_that_float_arithmetic_cannot_give() -> None:
    # "Sampled by exact rejection" was written over acceptance tests computed with
    # float64 exp; the docstrings now say double-precision acceptance.
    import veil.ldp
    import veil.mechanisms

    documented = [
        obj
        for module in (veil.mechanisms, veil.ldp)
        for obj in (getattr(module, name) for name in module.__all__)
        if getattr(obj, "__doc__", None)
    ]
    assert len(documented) > 20
    for obj in documented:
        doc = " ".join(obj.__doc__.split()).lower()
        assert "exact rejection" not in doc, obj
    gaussian = " ".join((Gaussian.__doc__ or "").split())
    assert "double-precision acceptance" in gaussian


class LargestUniform:
    """A stand-in generator whose uniform doubles are all the largest below 1."""

    def random(self, size: int | None = None, out: np.ndarray | None = None) -> np.ndarray:
        target = np.empty(size or 0) if out is None else out
        target[...] = math.nextafter(1.0, 0.0)
        return target


@pytest.mark.parametrize("k", [2, 3, 4, 42, 1025])
def test_keep_or_other_never_wraps_to_the_original_category(k: int) -> None:
    # u just below 1 replaces the code by offset k - 1, i.e. code - 1 (mod k). Summing
    # the offset and the code in floating point rounded it up to k for some k (k = 2:
    # 1 + (1 - 2^-53) + 1 rounds to 3), which wrapped to the original category.
    codes = np.arange(k, dtype=np.int64)
    rng: Any = LargestUniform()
    out = sample_keep_or_other(codes, k, 0.5, rng)
    np.testing.assert_array_equal(out, (codes - 1) % k)
