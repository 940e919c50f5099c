"""Planar Laplace noise in metres (geo-indistinguishability)."""

from __future__ import annotations

import math

import numpy as np

from veil.mechanisms._validation import check_epsilon
from veil.mechanisms.cost import PrivacyCost

__all__ = ["PlanarLaplace"]


class PlanarLaplace:
    r"""Planar Laplace mechanism: ε-geo-indistinguishability, ε per metre.

    A displacement is drawn with density ``∝ exp(-ε ‖d‖)`` on the plane: a uniform
    angle ``θ ∈ [0, 2π)`` and a radius ``r ~ Gamma(shape 2, scale 1/ε)`` (Andrés et
    al., "Geo-indistinguishability: differential privacy for location-based systems",
    CCS 2013, Section 4).

    Guarantee: for true locations ``x, x'`` and any output region ``S``,
    ``P[M(x) ∈ S] <= e^(ε d(x, x')) P[M(x') ∈ S]`` with ``d`` in metres.

    Parameters
    ----------
    epsilon : float
        Privacy budget per metre (for example ``0.01`` protects within 100 m at a
        privacy level of 1).
    """

    def __init__(self, epsilon: float) -> None:
        self.epsilon = check_epsilon(epsilon)

    @property
    def mean_radius(self) -> float:
        """Expected displacement ``2 / ε`` in metres."""
        return 2.0 / self.epsilon

    def radius_quantile(self, q: float) -> float:
        """Radius (metres) within which the displacement falls with probability ``q``."""
        from scipy import special

        return float(special.gammaincinv(2.0, q)) / self.epsilon

    def cost(self, scope: str = "") -> PrivacyCost:
        """Privacy spent: ε per metre (metric privacy)."""
        return PrivacyCost(self.epsilon, 0.0, "metric", "metre", scope, "planar laplace")

    def sample(
        self, size: int, rng: np.random.Generator
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Draw ``size`` displacements.

        Returns
        -------
        east, north, radius : numpy.ndarray
            Displacement east and north in metres, and its length ``r``.
        """
        # The angle theta = 2 pi u is used through t = tan(theta / 2): sin theta =
        # 2t / (1 + t^2), cos theta = (1 - t^2) / (1 + t^2). Equal to within rounding,
        # and NumPy's float64 tan is several times faster than its sin and cos.
        t = rng.random(size)
        t *= math.pi
        np.tan(t, out=t)
        radius = rng.gamma(2.0, 1.0 / self.epsilon, size)
        scale = t * t
        scale += 1.0
        np.divide(radius, scale, out=scale)
        scale *= 2.0  # radius * 2 / (1 + t^2)
        east = scale * t
        north = np.subtract(scale, radius, out=scale)
        return east, north, radius
