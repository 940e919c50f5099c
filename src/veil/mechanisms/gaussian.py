"""The Gaussian mechanism for bounded numerical values, in its float-safe form."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Literal

import numpy as np
from scipy import special

from veil.errors import ParameterError
from veil.mechanisms._grid import Grid, make_grid
from veil.mechanisms._validation import check_delta, check_epsilon
from veil.mechanisms.cost import PrivacyCost
from veil.mechanisms.discrete import (
    MAX_NOISE_SCALE,
    sample_discrete_gaussian,
    sample_rounded_gaussian,
    smallest_epsilon,
)

__all__ = [
    "Calibration",
    "Gaussian",
    "GaussianSampler",
    "analytic_sigma",
    "classic_sigma",
    "discrete_gaussian_delta",
    "gaussian_delta",
]

Calibration = Literal["classic", "analytic"]
GaussianSampler = Literal["rounded", "discrete"]

# Up to this sigma (in grid steps) the discrete Gaussian's privacy profile is summed
# exactly; above it, rigorous integral bounds are used (their slack is about 1/sigma).
_EXACT_SIGMA = 2000.0


def classic_sigma(epsilon: float, delta: float, sensitivity: float) -> float:
    """``σ = Δ √(2 ln(1.25/δ)) / ε`` (Dwork and Roth 2014, Theorem A.1; ε < 1)."""
    return sensitivity * math.sqrt(2.0 * math.log(1.25 / delta)) / epsilon


def gaussian_delta(sigma: float, epsilon: float, sensitivity: float) -> float:
    """Smallest δ for which ``N(0, σ²)`` noise is (ε, δ)-DP at sensitivity ``Δ``.

    ``δ = Φ(Δ/(2σ) - εσ/Δ) - e^ε Φ(-Δ/(2σ) - εσ/Δ)`` (Balle and Wang, "Improving the
    Gaussian mechanism for differential privacy", ICML 2018, Theorem 8).
    """
    a = sensitivity / (2.0 * sigma)
    b = epsilon * sigma / sensitivity
    first = float(special.ndtr(a - b))
    second = math.exp(epsilon + float(special.log_ndtr(-a - b)))
    return max(first - second, 0.0)


def analytic_sigma(epsilon: float, delta: float, sensitivity: float) -> float:
    """Smallest σ with :func:`gaussian_delta` ``<= δ`` (the analytic Gaussian mechanism).

    Valid for every ε > 0 (Balle and Wang 2018); found by bisection to a relative
    precision of 1e-12, rounding up.
    """
    lo, hi = 0.0, sensitivity
    while gaussian_delta(hi, epsilon, sensitivity) > delta:
        lo, hi = hi, hi * 2.0
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        if gaussian_delta(mid, epsilon, sensitivity) > delta:
            lo = mid
        else:
            hi = mid
        if hi - lo <= 1e-12 * hi:
            break
    return hi


def _tail_exact(sigma: float, thresholds: tuple[int, ...]) -> list[float]:
    reach = math.ceil(40.0 * sigma) + 2
    ks = np.arange(0, reach + 1, dtype=np.float64)
    weights = np.exp(-(ks * ks) / (2.0 * sigma * sigma))
    suffix = np.cumsum(weights[::-1])[::-1]
    total = weights[0] + 2.0 * suffix[1]

    def upper_tail(m: int) -> float:  # P[Y >= m]
        if m > reach:
            return 0.0
        if m >= 0:
            return float(suffix[m] / total)
        return 1.0 - upper_tail(1 - m)

    return [upper_tail(m) for m in thresholds]


def _tail_bounds(sigma: float, m: int) -> tuple[float, float]:
    """Lower and upper bounds of ``P[Y >= m]`` for the discrete Gaussian."""

    def integral(x: float) -> float:  # ∫_x^∞ exp(-k²/2σ²) dk
        return sigma * math.sqrt(math.pi / 2.0) * float(special.erfc(x / (sigma * math.sqrt(2.0))))

    def density(x: float) -> float:
        return math.exp(-(x * x) / (2.0 * sigma * sigma))

    z_lo = 1.0 + 2.0 * integral(1.0)
    z_hi = z_lo + 2.0 * density(1.0)
    if m >= 1:
        return integral(m) / z_hi, (integral(m) + density(m)) / z_lo
    far = 1 - m
    return 1.0 - (integral(far) + density(far)) / z_lo, 1.0 - integral(far) / z_hi


def discrete_gaussian_delta(sigma: float, epsilon: float, sensitivity: int) -> float:
    """An upper bound of δ for discrete Gaussian noise at integer sensitivity ``Δ``.

    The privacy profile of ``N_Z(0, σ²)`` is
    ``δ = P[Y > εσ²/Δ - Δ/2] - e^ε P[Y > εσ²/Δ + Δ/2]`` (Canonne, Kamath and Steinke,
    "The discrete Gaussian for differential privacy", NeurIPS 2020, Theorem 7). The
    tails are summed exactly for ``σ <= 2000``; above, they are bounded with
    ``∫_m^∞ f <= Σ_{k>=m} f(k) <= f(m) + ∫_m^∞ f``, which only overstates δ.
    """
    centre = epsilon * sigma * sigma / sensitivity
    m_first = math.floor(centre - sensitivity / 2.0) + 1
    m_second = math.floor(centre + sensitivity / 2.0) + 1
    if sigma <= _EXACT_SIGMA:
        p_first, p_second = _tail_exact(sigma, (m_first, m_second))
        p_first_hi, p_second_lo = p_first, p_second
    else:
        p_first_hi = _tail_bounds(sigma, m_first)[1]
        p_second_lo = _tail_bounds(sigma, m_second)[0]
    second = math.exp(epsilon + math.log(p_second_lo)) if p_second_lo > 0 else 0.0
    return max(p_first_hi - second, 0.0)


def _calibrate_discrete(sigma: float, epsilon: float, delta: float, sensitivity: int) -> float:
    if discrete_gaussian_delta(sigma, epsilon, sensitivity) <= delta:
        return sigma
    lo, hi = sigma, sigma * 1.01
    while discrete_gaussian_delta(hi, epsilon, sensitivity) > delta:
        lo, hi = hi, hi * 1.1
    for _ in range(60):
        mid = 0.5 * (lo + hi)
        if discrete_gaussian_delta(mid, epsilon, sensitivity) > delta:
            lo = mid
        else:
            hi = mid
        if hi - lo <= 1e-9 * hi:
            break
    return hi


class Gaussian:
    r"""Gaussian mechanism on a public grid: (ε, δ)-local-DP per record.

    Each value is clipped to ``[lower, upper]``, snapped to the grid (integers for
    integer data, a power-of-two step otherwise) and receives an integer number of grid
    steps of Gaussian noise, so the output carries no floating-point bits of the input
    (Mironov 2012). Two samplers:

    * ``"rounded"`` (default, fastest): the rounded Gaussian ``rint(σ Z)`` with ``Z``
      standard normal (not the discrete Gaussian). On a snapped (integer) value,
      ``x + rint(σZ) = rint(x + σZ)`` is a post-processing of the continuous Gaussian
      mechanism, so it inherits its (ε, δ); σ is the continuous mechanism's.
    * ``"discrete"``: the discrete Gaussian (Canonne, Kamath and Steinke 2020), sampled
      by rejection from a discrete Laplace proposal with double-precision acceptance
      tests; ``σ`` is checked against the discrete Gaussian's own privacy profile and
      raised if needed.

    Both samplers draw each output with a probability right to a relative error of
    about ``2^-50`` at every σ up to ``2^50`` grid steps (see
    :mod:`veil.mechanisms.discrete`); larger σ is refused.

    Guarantee: for inputs ``x, x'`` in the bounds and any set ``S`` of outputs,
    ``P[M(x) ∈ S] <= e^ε P[M(x') ∈ S] + δ``, up to that sampling error.

    Parameters
    ----------
    epsilon : float
        Privacy budget per record, finite and > 0 (``<= 1`` for ``"classic"``).
    delta : float
        In (0, 1); choose it well below one over the number of records.
    lower, upper : float
        Public bounds.
    calibration : {"classic", "analytic"}, default "classic"
        ``"classic"``: ``σ = Δ√(2 ln(1.25/δ))/ε`` (Dwork and Roth 2014, as in trasgoDP),
        proven for ε < 1. ``"analytic"``: the smallest σ that gives (ε, δ), for any ε
        (Balle and Wang 2018); it also needs less noise.
    integer : bool, default False
        Integer data.
    resolution : float, optional
        Grid step for float data (see :class:`~veil.mechanisms.Laplace`).
    sampler : {"rounded", "discrete"}, default "rounded"
        How integer noise is drawn (see above).

    Raises
    ------
    veil.errors.ParameterError
        For ε, δ, bounds, resolution, calibration or sampler outside their ranges, or a
        σ of ``2^50`` grid steps or more (the message gives the smallest ε allowed).
    """

    def __init__(
        self,
        epsilon: float,
        delta: float,
        lower: float,
        upper: float,
        *,
        calibration: Calibration = "classic",
        integer: bool = False,
        resolution: float | None = None,
        sampler: GaussianSampler = "rounded",
    ) -> None:
        self.epsilon = check_epsilon(epsilon)
        self.delta = check_delta(delta)
        if sampler not in ("rounded", "discrete"):
            raise ParameterError(f"sampler: must be 'rounded' or 'discrete', got {sampler!r}")
        self.sampler: GaussianSampler = sampler
        if calibration not in ("classic", "analytic"):
            raise ParameterError(
                f"calibration: must be 'classic' or 'analytic', got {calibration!r}"
            )
        if calibration == "classic" and self.epsilon > 1.0:
            raise ParameterError(
                f"epsilon: the classic Gaussian calibration needs epsilon <= 1, got "
                f"{self.epsilon}; use calibration='analytic' or the Laplace mechanism"
            )
        self.calibration: Calibration = calibration
        self.integer = bool(integer)
        self.grid: Grid = make_grid(lower, upper, integer=self.integer, resolution=resolution)
        steps = self.grid.sensitivity
        sigma_at = self._sigma_function(steps)
        start = sigma_at(self.epsilon, calibrate_discrete=False)
        if start < MAX_NOISE_SCALE and sampler == "discrete":
            start = _calibrate_discrete(start, self.epsilon, self.delta, steps)
        if start >= MAX_NOISE_SCALE:
            smallest = smallest_epsilon(lambda e: sigma_at(e, calibrate_discrete=True))
            raise ParameterError(
                f"epsilon: {self.epsilon!r} (with delta={self.delta!r}) is too small for "
                f"bounds [{lower}, {upper}] at resolution {self.grid.step:g} ({steps} grid "
                f"steps): sigma would be {start:.3g} steps, not below the largest supported "
                f"2^50; the smallest epsilon allowed here is {smallest:g} (or raise delta, "
                "coarsen resolution, narrow the bounds)"
            )
        self._sigma_steps = start

    def _sigma_function(self, steps: int) -> Callable[..., float]:
        """σ in grid steps as a function of ε, for this calibration, δ and sampler."""

        def sigma_at(epsilon: float, *, calibrate_discrete: bool) -> float:
            if self.calibration == "classic":
                sigma = classic_sigma(epsilon, self.delta, steps)
            else:
                sigma = analytic_sigma(epsilon, self.delta, steps)
            if calibrate_discrete and self.sampler == "discrete" and sigma < MAX_NOISE_SCALE:
                sigma = _calibrate_discrete(sigma, epsilon, self.delta, steps)
            return sigma

        return sigma_at

    @property
    def sensitivity(self) -> float:
        """Width of the (grid-aligned) bounds in data units."""
        return self.grid.sensitivity * self.grid.step

    @property
    def sigma(self) -> float:
        """Scale σ of the Gaussian noise before rounding to the grid, in data units."""
        return self._sigma_steps * self.grid.step

    def cost(self, scope: str = "") -> PrivacyCost:
        """Privacy spent on each record: ``(ε, δ)`` local DP."""
        return PrivacyCost(
            self.epsilon,
            self.delta,
            "ldp",
            "record",
            scope,
            f"gaussian ({self.calibration}, {self.sampler}, grid step {self.grid.step:g})",
        )

    def variance(self) -> float:
        """Variance of the noise (before clipping), in data units².

        For the rounded sampler, the exact variance of ``rint(σZ)`` (a sum over the
        integers; ``σ² + 1/12`` steps² for large σ); for the discrete Gaussian, its exact
        variance (at most ``σ²``).
        """
        s = self._sigma_steps
        if self.sampler == "rounded":
            if s > _EXACT_SIGMA:
                return (s * s + 1.0 / 12.0) * self.grid.step**2
            ks = np.arange(-math.ceil(40 * s) - 2, math.ceil(40 * s) + 3, dtype=np.float64)
            mass = special.ndtr((ks + 0.5) / s) - special.ndtr((ks - 0.5) / s)
            return float((ks * ks * mass).sum()) * self.grid.step**2
        if s > _EXACT_SIGMA:
            return self.sigma**2
        ks = np.arange(-int(40 * s) - 2, int(40 * s) + 3, dtype=np.float64)
        w = np.exp(-(ks * ks) / (2.0 * s * s))
        return float((ks * ks * w).sum() / w.sum()) * self.grid.step**2

    def bias(self, values: np.ndarray, *, clip: bool = True) -> np.ndarray:
        """Expected output minus the snapped input, per value.

        Zero without clipping. With clipping to the bounds, the continuous-Gaussian
        expression ``σ(φ(A/σ) - φ(B/σ)) - A Φ(-A/σ) + B Φ(-B/σ)`` (``A``, ``B``: distance
        to the lower and upper bound), accurate to within a grid step.
        """
        idx = self.grid.snap(np.asarray(values))
        if not clip:
            return np.zeros(idx.shape, dtype=np.float64)
        s = self._sigma_steps
        below = (idx - self.grid.lo).astype(np.float64)
        above = (self.grid.hi - idx).astype(np.float64)

        def excess(c: np.ndarray) -> np.ndarray:  # E[(N - c)+] for N ~ N(0, s²)
            z = c / s
            return np.asarray(
                s * np.exp(-0.5 * z * z) / math.sqrt(2 * math.pi) - c * special.ndtr(-z)
            )

        return np.asarray((excess(below) - excess(above)) * self.grid.step, dtype=np.float64)

    def randomise(self, values: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """Return noisy values (unclipped): int64 for integer data, float64 otherwise."""
        idx = self.grid.snap(np.asarray(values))
        if self.sampler == "discrete":
            noise = sample_discrete_gaussian(self._sigma_steps, idx.size, rng)
        else:
            noise = sample_rounded_gaussian(self._sigma_steps, idx.size, rng)
        idx += noise.reshape(idx.shape)
        return self.grid.values(idx, self.integer)
