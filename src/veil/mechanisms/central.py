"""Central-DP helpers for reports: noisy counts, histograms and a clipped mean.

These protect aggregates computed by a trusted curator (central DP), not records; the
cost notion is ``"dp-central"`` per dataset. See Dwork and Roth (2014), chapter 3.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from veil.errors import ParameterError
from veil.mechanisms._grid import make_grid
from veil.mechanisms._validation import check_bounds, check_epsilon
from veil.mechanisms.cost import PrivacyCost
from veil.mechanisms.discrete import MAX_NOISE_SCALE, sample_discrete_laplace, smallest_epsilon

__all__ = ["NoisyValue", "clipped_mean", "noisy_count", "noisy_histogram"]


def _scale(sensitivity: float, epsilon: float, what: str) -> float:
    """Laplace scale ``sensitivity / ε`` in integer steps, refused above 2^50."""
    scale = sensitivity / epsilon
    if scale > MAX_NOISE_SCALE:
        raise ParameterError(
            f"epsilon: {epsilon!r} is too small for {what} (sensitivity {sensitivity:g} "
            f"steps): the noise scale would be {scale:.3g} steps, above the largest "
            f"supported 2^50; the smallest epsilon allowed here is "
            f"{smallest_epsilon(lambda e: sensitivity / e):g}"
        )
    return scale


@dataclass(frozen=True)
class NoisyValue:
    """A released statistic and what it cost."""

    value: float | np.ndarray
    cost: PrivacyCost
    scale: float


def noisy_count(count: int, epsilon: float, rng: np.random.Generator) -> NoisyValue:
    """Release a count with discrete Laplace noise of scale ``1/ε``: ε-DP.

    Adding or removing one person changes a count by at most 1.
    """
    eps = check_epsilon(epsilon)
    scale = _scale(1.0, eps, "a count")
    noise = int(sample_discrete_laplace(scale, 1, rng)[0])
    cost = PrivacyCost(eps, 0.0, "dp-central", "dataset", "", "noisy count")
    return NoisyValue(float(int(count) + noise), cost, scale)


def noisy_histogram(counts: np.ndarray, epsilon: float, rng: np.random.Generator) -> NoisyValue:
    """Release every bin of a histogram with discrete Laplace noise of scale ``1/ε``.

    One person falls in one bin, so adding or removing them changes the vector of
    counts by 1 in L1 norm (parallel composition): the whole histogram is ε-DP.
    Negative noisy counts are kept (clip them as post-processing if needed).
    """
    eps = check_epsilon(epsilon)
    scale = _scale(1.0, eps, "a histogram")
    arr = np.asarray(counts, dtype=np.int64)
    noisy = arr + sample_discrete_laplace(scale, arr.size, rng).reshape(arr.shape)
    cost = PrivacyCost(eps, 0.0, "dp-central", "dataset", "", "noisy histogram")
    return NoisyValue(noisy.astype(np.float64), cost, scale)


def clipped_mean(
    values: np.ndarray,
    lower: float,
    upper: float,
    epsilon: float,
    rng: np.random.Generator,
) -> NoisyValue:
    """Release a mean as noisy sum / noisy count, each with half the budget: ε-DP.

    Values are clipped to the public ``[lower, upper]`` and snapped to a public grid;
    the sum of grid indices (exact integer arithmetic) has sensitivity
    ``max(|lower|, |upper|)`` in grid steps for adding or removing one person and gets
    discrete Laplace noise with budget ε/2; the count gets discrete Laplace noise with
    ε/2. The ratio is clipped to the bounds (post-processing), and a noisy count below
    1 is treated as 1. No floating-point bits of the true sum reach the output.
    """
    lo, hi = check_bounds(lower, upper)
    eps = check_epsilon(epsilon)
    grid = make_grid(lo, hi, integer=False, resolution=None)
    indices = grid.snap(np.asarray(values, dtype=np.float64))
    bound = max(abs(grid.lo), abs(grid.hi))
    sum_scale = _scale(2.0 * bound, eps, f"a sum of values in [{lo}, {hi}]")
    total = int(indices.sum()) + int(sample_discrete_laplace(sum_scale, 1, rng)[0])
    count = indices.size + int(sample_discrete_laplace(2.0 / eps, 1, rng)[0])
    mean = float(np.clip(total * grid.step / max(count, 1), lo, hi))
    cost = PrivacyCost(eps, 0.0, "dp-central", "dataset", "", "clipped mean")
    return NoisyValue(mean, cost, 2.0 * bound * grid.step / eps)
