"""Empirical privacy audits: no mechanism leaks more than the ε it reports.

For two neighbouring inputs (the two ends of the public bounds, or two categories),
each test draws many outputs from both, counts them in events (bins of a statistic of
the output and the upper and lower tails at every cut point), and bounds the largest
privacy loss over those events with Clopper-Pearson intervals. A pure ε-DP mechanism
satisfies ``P[M(x) ∈ S] <= e^ε P[M(x') ∈ S]`` for every event, so the lower confidence
bound of the log ratio must stay below ε. Each audit is matched by a deliberately
mis-calibrated mechanism that the same audit must catch, which shows it has power.

The audits are one-sided: passing them does not prove privacy, failing them proves a
leak. Seeds are fixed; the family-wise confidence level is 1 - 1e-3 (Bonferroni over
all events and both directions).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pytest
from scipy import stats

from veil.mechanisms import (
    BinaryRandomizedResponse,
    Exponential,
    Gaussian,
    Laplace,
    PlanarLaplace,
    RandomizedResponse,
    discrete_gaussian_delta,
    ordinal_scores,
    sample_discrete_gaussian,
    sample_discrete_laplace,
)

N = 1_000_000  # draws per input
MIN_COUNT = 2_000  # an event is audited only if both inputs put this many draws in it
ALPHA = 1e-3  # family-wise error of the confidence bounds


def _rng(seed: int) -> np.random.Generator:
    return np.random.Generator(np.random.PCG64(seed))


@dataclass(frozen=True)
class Audit:
    """Largest privacy loss seen over the audited events."""

    estimate: float  # point estimate (log ratio, or hockey-stick difference)
    lower: float  # lower confidence bound of the same quantity
    events: int  # number of events that had enough mass to be audited


def _event_counts(
    stat_a: np.ndarray, stat_b: np.ndarray, cuts: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Counts of both samples in every bin between cuts and every tail at a cut."""

    def counts(stat: np.ndarray) -> np.ndarray:
        bins = np.bincount(np.searchsorted(cuts, stat, side="right"), minlength=cuts.size + 1)
        below = np.cumsum(bins)[:-1]  # {stat < cut}
        above = stat.size - below  # {stat >= cut}
        return np.concatenate([bins, below, above])

    return counts(stat_a), counts(stat_b)


def _clopper_pearson(count: np.ndarray, n: int, level: float) -> tuple[np.ndarray, np.ndarray]:
    """One-sided Clopper-Pearson bounds (each holds with probability 1 - level)."""
    c = count.astype(np.float64)
    lower = np.where(c > 0, stats.beta.ppf(level, np.maximum(c, 1), n - c + 1), 0.0)
    upper = np.where(c < n, stats.beta.ppf(1 - level, c + 1, np.maximum(n - c, 1)), 1.0)
    return lower, upper


def audit_log_ratio(stat_a: np.ndarray, stat_b: np.ndarray, cuts: np.ndarray) -> Audit:
    """Largest ``ln(P[A ∈ S] / P[B ∈ S])`` over events S, in both directions.

    Only events holding at least ``MIN_COUNT`` draws of each sample are audited, so
    that every ratio is estimated from enough mass.
    """
    count_a, count_b = _event_counts(stat_a, stat_b, np.asarray(cuts, dtype=np.float64))
    keep = (count_a >= MIN_COUNT) & (count_b >= MIN_COUNT)
    count_a, count_b = count_a[keep], count_b[keep]
    level = ALPHA / (4 * max(int(keep.sum()), 1))  # two bounds per direction
    lo_a, hi_a = _clopper_pearson(count_a, stat_a.size, level)
    lo_b, hi_b = _clopper_pearson(count_b, stat_b.size, level)
    p_a, p_b = count_a / stat_a.size, count_b / stat_b.size
    estimate = np.abs(np.log(p_a) - np.log(p_b))
    lower = np.maximum(np.log(lo_a) - np.log(hi_b), np.log(lo_b) - np.log(hi_a))
    return Audit(float(estimate.max()), float(lower.max()), int(keep.sum()))


def audit_hockey_stick(
    stat_a: np.ndarray, stat_b: np.ndarray, cuts: np.ndarray, epsilon: float
) -> Audit:
    """Largest ``P[A ∈ S] - e^ε P[B ∈ S]`` over events S, in both directions.

    An (ε, δ)-DP mechanism keeps it below δ for every S.
    """
    count_a, count_b = _event_counts(stat_a, stat_b, np.asarray(cuts, dtype=np.float64))
    level = ALPHA / (4 * count_a.size)
    lo_a, hi_a = _clopper_pearson(count_a, stat_a.size, level)
    lo_b, hi_b = _clopper_pearson(count_b, stat_b.size, level)
    p_a, p_b = count_a / stat_a.size, count_b / stat_b.size
    e = math.exp(epsilon)
    estimate = np.maximum(p_a - e * p_b, p_b - e * p_a)
    lower = np.maximum(lo_a - e * hi_b, lo_b - e * hi_a)
    return Audit(float(estimate.max()), float(lower.max()), int(count_a.size))


def _codes_cuts(k: int) -> np.ndarray:
    return np.arange(k - 1) + 0.5


# Laplace ------------------------------------------------------------------------------


def test_laplace_integer_passes_audit() -> None:
    mech = Laplace(1.0, 0, 4, integer=True)
    rng = _rng(101)
    out_lo = mech.randomise(np.zeros(N, dtype=np.int64), rng)
    out_hi = mech.randomise(np.full(N, 4, dtype=np.int64), rng)
    result = audit_log_ratio(out_lo, out_hi, np.arange(-30, 35) + 0.5)
    assert result.events > 20
    assert result.lower <= mech.epsilon
    # The audit is tight: every tail beyond the bounds has ratio exactly e^ε.
    assert result.estimate > 0.9 * mech.epsilon


def test_laplace_float_grid_passes_audit() -> None:
    mech = Laplace(1.0, 0.0, 1.0)
    rng = _rng(102)
    out_lo = mech.randomise(np.zeros(N), rng)
    out_hi = mech.randomise(np.ones(N), rng)
    result = audit_log_ratio(out_lo, out_hi, np.linspace(-6.0, 7.0, 131))
    assert result.lower <= mech.epsilon
    assert result.estimate > 0.9 * mech.epsilon


def test_laplace_with_half_the_noise_fails_audit() -> None:
    # Scale Δ/(2ε) is only 2ε-DP: the audit at ε must detect it.
    epsilon, width = 1.0, 4
    rng = _rng(103)
    out_lo = sample_discrete_laplace(width / (2 * epsilon), N, rng)
    out_hi = width + sample_discrete_laplace(width / (2 * epsilon), N, rng)
    result = audit_log_ratio(out_lo, out_hi, np.arange(-30, 35) + 0.5)
    assert result.lower > epsilon


# Gaussian -----------------------------------------------------------------------------


def _rounded_gaussian_delta(sigma: float, epsilon: float, sensitivity: int) -> float:
    """Exact hockey-stick divergence of ``rint(σZ)`` noise between inputs 0 and Δ."""
    reach = math.ceil(40 * sigma) + sensitivity
    ys = np.arange(-reach, reach + 1, dtype=np.float64)

    def pmf(centre: float) -> np.ndarray:
        return np.asarray(
            stats.norm.cdf((ys - centre + 0.5) / sigma)
            - stats.norm.cdf((ys - centre - 0.5) / sigma)
        )

    return float(np.maximum(pmf(0.0) - math.exp(epsilon) * pmf(sensitivity), 0.0).sum())


@pytest.mark.parametrize("sampler", ["rounded", "discrete"])
@pytest.mark.parametrize("calibration", ["classic", "analytic"])
def test_gaussian_passes_hockey_stick_audit(calibration: str, sampler: str) -> None:
    # A large δ makes the hockey-stick divergence measurable with 1e6 draws.
    mech = Gaussian(
        1.0,
        0.05,
        0,
        10,
        integer=True,
        calibration=calibration,
        sampler=sampler,  # type: ignore[arg-type]
    )
    rng = _rng(104)
    out_lo = mech.randomise(np.zeros(N, dtype=np.int64), rng)
    out_hi = mech.randomise(np.full(N, 10, dtype=np.int64), rng)
    result = audit_hockey_stick(out_lo, out_hi, np.arange(-80, 91) + 0.5, mech.epsilon)
    assert result.lower <= mech.delta
    # The estimate tracks the exact δ of the noise actually drawn (tolerance 0.01, about
    # 10 standard errors of a difference of two frequencies weighted by 1 and e).
    if sampler == "discrete":
        exact = discrete_gaussian_delta(mech.sigma, mech.epsilon, 10)
    else:
        exact = _rounded_gaussian_delta(mech.sigma, mech.epsilon, 10)
    assert exact <= mech.delta
    assert result.estimate == pytest.approx(exact, abs=0.01)


@pytest.mark.parametrize("sampler", ["rounded", "discrete"])
def test_gaussian_with_half_the_noise_fails_hockey_stick_audit(sampler: str) -> None:
    # Half the calibrated sigma, built by hand with each sampler, claimed as (ε, δ).
    epsilon, delta, width = 1.0, 0.05, 10
    sigma = Gaussian(epsilon, delta, 0, width, integer=True, calibration="analytic").sigma
    rng = _rng(105)

    def noise() -> np.ndarray:
        if sampler == "discrete":
            return sample_discrete_gaussian(sigma / 2, N, rng)
        return np.rint(rng.standard_normal(N) * (sigma / 2)).astype(np.int64)

    out_lo, out_hi = noise(), width + noise()
    result = audit_hockey_stick(out_lo, out_hi, np.arange(-80, 91) + 0.5, epsilon)
    assert result.lower > delta


# Randomized response ------------------------------------------------------------------


def test_binary_randomized_response_passes_audit() -> None:
    mech = BinaryRandomizedResponse(1.0)
    rng = _rng(106)
    out_0 = mech.randomise(np.zeros(N, dtype=np.int64), rng)
    out_1 = mech.randomise(np.ones(N, dtype=np.int64), rng)
    result = audit_log_ratio(out_0, out_1, _codes_cuts(2))
    assert result.lower <= mech.epsilon
    assert result.estimate == pytest.approx(mech.epsilon, abs=0.03)


def test_randomized_response_passes_audit() -> None:
    mech = RandomizedResponse(1.0, 4)
    rng = _rng(107)
    out_0 = mech.randomise(np.zeros(N, dtype=np.int64), rng)
    out_3 = mech.randomise(np.full(N, 3, dtype=np.int64), rng)
    result = audit_log_ratio(out_0, out_3, _codes_cuts(4))
    assert result.lower <= mech.epsilon
    assert result.estimate == pytest.approx(mech.epsilon, abs=0.03)


def test_randomized_response_keeping_for_twice_epsilon_fails_audit() -> None:
    # The keep probability e^(2ε)/(e^(2ε)+k-1) claimed as ε-DP.
    epsilon = 1.0
    leaky = RandomizedResponse(2 * epsilon, 4)
    rng = _rng(108)
    out_0 = leaky.randomise(np.zeros(N, dtype=np.int64), rng)
    out_3 = leaky.randomise(np.full(N, 3, dtype=np.int64), rng)
    result = audit_log_ratio(out_0, out_3, _codes_cuts(4))
    assert result.lower > epsilon


# Exponential --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("mech", "spent"),
    [
        (Exponential(2.0, 4), 1.0),  # trasgoDP score, standard: spends ε/2
        (Exponential(1.0, 4, calibration="full"), 1.0),
        (Exponential(1.0, scores=ordinal_scores(5)), 0.5),
        (Exponential(1.0, scores=ordinal_scores(5), calibration="full"), 1.0),
    ],
    ids=["standard", "full", "ordinal-standard", "ordinal-full"],
)
def test_exponential_passes_audit_at_its_reported_cost(mech: Exponential, spent: float) -> None:
    assert mech.cost().epsilon == pytest.approx(spent, rel=1e-6)
    rng = _rng(109)
    out_first = mech.randomise(np.zeros(N, dtype=np.int64), rng)
    out_last = mech.randomise(np.full(N, mech.k - 1, dtype=np.int64), rng)
    result = audit_log_ratio(out_first, out_last, _codes_cuts(mech.k))
    assert result.lower <= mech.cost().epsilon
    assert result.estimate == pytest.approx(mech.cost().epsilon, abs=0.05)


def test_exponential_audited_below_its_reported_cost_fails() -> None:
    # The standard calibration with trasgoDP's score spends ε/2: claiming ε/4 is caught.
    mech = Exponential(2.0, 4)
    rng = _rng(110)
    out_first = mech.randomise(np.zeros(N, dtype=np.int64), rng)
    out_last = mech.randomise(np.full(N, 3, dtype=np.int64), rng)
    result = audit_log_ratio(out_first, out_last, _codes_cuts(4))
    assert result.lower > mech.cost().epsilon / 2


# Planar Laplace -----------------------------------------------------------------------

PLANAR_DISTANCE = 1.0  # metres between the two true locations (along the east axis)


def _planar_outputs(mech: PlanarLaplace, seed: int) -> tuple[np.ndarray, ...]:
    rng = _rng(seed)
    east_a, _, radius_a = mech.sample(N, rng)
    east_b, north_b, _ = mech.sample(N, rng)
    east_b = east_b + PLANAR_DISTANCE
    # Statistics of the output in the two directions the pair differs:
    # east coordinate (half-planes) and distance from location a (rings).
    return east_a, east_b, radius_a, np.hypot(east_b, north_b)


def _planar_audit(mech: PlanarLaplace, seed: int) -> tuple[Audit, Audit]:
    east_a, east_b, ring_a, ring_b = _planar_outputs(mech, seed)
    scale = 1.0 / mech.epsilon
    half_planes = audit_log_ratio(east_a, east_b, np.linspace(-12, 13, 101) * scale)
    rings = audit_log_ratio(ring_a, ring_b, np.linspace(0.0, 12.0, 61) * scale)
    return half_planes, rings


def test_planar_laplace_passes_audit() -> None:
    mech = PlanarLaplace(1.0)
    bound = mech.epsilon * PLANAR_DISTANCE
    half_planes, rings = _planar_audit(mech, 111)
    assert half_planes.lower <= bound
    assert rings.lower <= bound
    # Half-planes far out approach the worst case e^(ε d).
    assert half_planes.estimate > 0.7 * bound


def test_planar_laplace_with_half_the_noise_fails_audit() -> None:
    leaky = PlanarLaplace(2.0)  # claimed as ε = 1 per metre
    half_planes, _ = _planar_audit(leaky, 112)
    assert half_planes.lower > 1.0 * PLANAR_DISTANCE
