"""The split samplers (scales above 2^16 steps) draw the exact laws they document.

Above ``2^16`` steps the discrete Laplace sampler draws ``|Y| = U + m V`` (``U`` an exact
uniform low part kept with probability ``exp(-U/t)``, ``m`` a power of two) and the
rounded Gaussian picks a block of ``2^bits`` steps from a normal draw, then an exact
uniform point of it kept with the density's ratio (:mod:`veil.mechanisms.discrete`).
Both are exact in real arithmetic at every scale, so:

* at small scales, where every integer's count is testable, the split paths are called
  directly and their draws are checked against the closed-form pmf on the integers;
* at the largest grid the benchmarks use (``2^40`` steps at ε = 0.01: Laplace scale
  ``t = 1.1e14``, Gaussian ``σ = 4.2e14`` steps), the public samplers' draws are checked
  against closed-form probabilities of coarse cells, of the low part's place in its
  block and of the lowest 10 bits.

Draws come from :mod:`veil.rng` with fixed seeds. Every check is a chi-square test with
p > 1e-3 (the outcome is deterministic; the threshold says how unusual a sample would
have to be to fail).
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable

import numpy as np
import pytest
from scipy import stats

from veil.errors import ReproducibleNoiseWarning
from veil.mechanisms import Gaussian, Laplace, sample_discrete_laplace, sample_rounded_gaussian
from veil.mechanisms.discrete import _laplace_split, _rounded_gaussian_split
from veil.rng import resolve_rng

P_MIN = 1e-3
LARGE_GRID = 2**40
SMALL_EPSILON = 0.01


def _veil_rng(seed: int) -> np.random.Generator:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ReproducibleNoiseWarning)
        return resolve_rng(seed)


def _chi_square(observed: np.ndarray, probability: np.ndarray) -> float:
    """p-value of counts against cell probabilities (which must sum to 1)."""
    assert math.isclose(float(probability.sum()), 1.0, rel_tol=1e-9)
    expected = probability * observed.sum()
    assert expected.min() >= 20
    return float(stats.chisquare(observed, expected * observed.sum() / expected.sum()).pvalue)


def _integer_cells(
    draws: np.ndarray, pmf: Callable[[np.ndarray], np.ndarray], reach: int
) -> tuple[np.ndarray, np.ndarray]:
    """One cell per integer in ``[-reach, reach]`` expecting >= 20 draws, plus two tails."""
    ks = np.arange(-reach, reach + 1)
    mass = pmf(ks)
    inner = ks[mass * draws.size >= 20]
    lo, hi = int(inner[0]), int(inner[-1])
    counts = np.bincount(draws[(draws > lo) & (draws < hi)] - (lo + 1), minlength=hi - lo - 1)
    inside = mass[(ks > lo) & (ks < hi)]
    below = float(mass[ks <= lo].sum())
    above = 1.0 - below - float(inside.sum())
    observed = np.concatenate(
        [[np.count_nonzero(draws <= lo)], counts, [np.count_nonzero(draws >= hi)]]
    )
    return observed, np.concatenate([[below], inside, [above]])


def _laplace_pmf(t: float) -> Callable[[np.ndarray], np.ndarray]:
    a = math.exp(-1.0 / t)
    return lambda ks: (1 - a) / (1 + a) * np.exp(-np.abs(ks) / t)


# --- the split paths at small scales: the law on the integers ------------------------


@pytest.mark.parametrize("scale", [0.6, 1.0, 3.7, 25.0, 1000.5])
def test_laplace_split_draws_the_two_sided_geometric_law(scale: float) -> None:
    # m is 1, 1, 2, 16 and 512: the low part, its acceptance, the high part and the
    # redrawn (negative, 0) pair all shape these counts.
    draws = _laplace_split(scale, 400_000, _veil_rng(31))
    assert draws.dtype == np.int64
    observed, probability = _integer_cells(draws, _laplace_pmf(scale), int(40 * scale) + 10)
    assert _chi_square(observed, probability) > P_MIN


def _block_law(sigma: float, bits: int, ks: np.ndarray) -> np.ndarray:
    """P[Y = k] of the block sampler: the block's normal mass, shared by the density."""
    block = 1 << bits
    first = np.floor(ks / block) * block  # the block holding k: σZ + 1/2 fell in it
    mass = stats.norm.cdf((first + block - 0.5) / sigma) - stats.norm.cdf((first - 0.5) / sigma)
    inside = first[:, None] + np.arange(block)[None, :]
    density = np.exp(-(ks * ks) / (2 * sigma * sigma))
    total = np.exp(-(inside * inside) / (2 * sigma * sigma)).sum(axis=1)
    return np.asarray(mass * density / total)


@pytest.mark.parametrize(("sigma", "bits"), [(5.3, 0), (5.3, 2), (40.0, 3)])
def test_rounded_gaussian_split_draws_the_block_law(sigma: float, bits: int) -> None:
    # bits = 0: one point per block, the rounded Gaussian itself. With 4 and 8 points a
    # block, the acceptance tilts the points toward 0 by the density's ratio.
    draws = _rounded_gaussian_split(sigma, 400_000, _veil_rng(32), bits)
    assert draws.dtype == np.int64
    observed, probability = _integer_cells(
        draws, lambda ks: _block_law(sigma, bits, ks), int(12 * sigma) + 16
    )
    assert _chi_square(observed, probability) > P_MIN


# --- the largest grid: coarse cells, the low part's place, the lowest bits -----------


def _laplace_cdf(t: float, y: np.ndarray) -> np.ndarray:
    """P[Y <= y] of the two-sided geometric law with scale ``t`` (integer ``y``)."""
    a = math.exp(-1.0 / t)
    upper = 1.0 - np.exp(-(np.maximum(y, 0) + 1.0) / t) / (1 + a)
    lower = np.exp(np.minimum(y, 0) / t) / (1 + a)
    return np.where(y >= 0, upper, lower)


def _cells_from_cdf(
    draws: np.ndarray, edges: np.ndarray, cdf: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    observed = np.bincount(np.searchsorted(edges, draws, side="left"), minlength=edges.size + 1)
    probability = np.diff(np.concatenate([[0.0], cdf, [1.0]]))
    return observed, probability


def _laplace_scale() -> float:
    return float(Laplace(SMALL_EPSILON, 0, LARGE_GRID, integer=True).scale)


def test_laplace_on_the_largest_grid_follows_its_cdf() -> None:
    t = _laplace_scale()
    draws = sample_discrete_laplace(t, 1_000_000, _veil_rng(33))
    # 60 cells Y <= edge, edges at multiples of t/6 from -5t to 5t (both signs).
    edges = np.round(np.linspace(-5.0, 5.0, 61) * t).astype(np.int64)
    observed, probability = _cells_from_cdf(draws, edges, _laplace_cdf(t, edges))
    assert _chi_square(observed, probability) > P_MIN


def test_laplace_low_part_keeps_its_truncated_geometric_law_on_the_largest_grid() -> None:
    # |Y| mod m is the low part U; m = 2^46 here. Cells of m/16: P[U in [lo, hi)] =
    # 2 a^lo (1 - a^(hi - lo)) / ((1 + a)(1 - a^m)), minus P[Y = 0] in the first cell.
    # 4M draws: an acceptance exp(-U / (1.02 t)) instead of exp(-U / t) fails here.
    t = _laplace_scale()
    m = 1 << (math.frexp(t)[1] - 1)
    draws = np.abs(sample_discrete_laplace(t, 4_000_000, _veil_rng(34)))
    a = math.exp(-1.0 / t)
    lows = np.arange(16) * (m // 16)
    width = m // 16
    probability = 2 * np.exp(-lows / t) * -math.expm1(-width / t) / ((1 + a) * -math.expm1(-m / t))
    probability[0] -= (1 - a) / (1 + a)
    observed = np.bincount((draws % m) // width, minlength=16)
    assert _chi_square(observed, probability) > P_MIN


def test_laplace_lowest_bits_follow_the_law_on_the_largest_grid() -> None:
    # P[|Y| mod 1024 = r] = 2 a^r (1 - a) / ((1 + a)(1 - a^1024)) (minus P[Y = 0] at r = 0).
    t = _laplace_scale()
    draws = np.abs(sample_discrete_laplace(t, 1_000_000, _veil_rng(35)))
    a = math.exp(-1.0 / t)
    r = np.arange(1024)
    probability = 2 * np.exp(-r / t) * -math.expm1(-1 / t) / ((1 + a) * -math.expm1(-1024 / t))
    probability[0] -= (1 - a) / (1 + a)
    observed = np.bincount(draws % 1024, minlength=1024)
    assert _chi_square(observed, probability) > P_MIN
    # The sign is a fair coin: P[Y > 0] = a / (1 + a), 1/2 to 1e-14.
    signs = np.sign(sample_discrete_laplace(t, 400_000, _veil_rng(36)))
    assert _chi_square(np.bincount(signs + 1, minlength=3)[[0, 2]], np.array([0.5, 0.5])) > P_MIN


def test_rounded_gaussian_on_the_largest_grid_follows_its_cdf_and_lowest_bits() -> None:
    sigma = Gaussian(SMALL_EPSILON, 1e-3, 0, LARGE_GRID, integer=True).sigma
    assert sigma > 2**48
    draws = sample_rounded_gaussian(sigma, 1_000_000, _veil_rng(37))
    # P[Y <= e] = Φ((e + 1/2) / σ): the block's mass is the normal's, exactly.
    edges = np.round(np.linspace(-3.5, 3.5, 57) * sigma).astype(np.int64)
    cdf = stats.norm.cdf((edges + 0.5) / sigma)
    observed, probability = _cells_from_cdf(draws, edges, cdf)
    assert _chi_square(observed, probability) > P_MIN
    # Across 1024 consecutive integers the density changes by less than 1e-10: the
    # lowest 10 bits are uniform.
    observed = np.bincount(draws % 1024, minlength=1024)
    assert _chi_square(observed, np.full(1024, 1 / 1024)) > P_MIN
