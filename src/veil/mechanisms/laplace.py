"""The Laplace mechanism for bounded numerical values, in its float-safe form."""

from __future__ import annotations

import math

import numpy as np

from veil.errors import ParameterError
from veil.mechanisms._grid import Grid, make_grid
from veil.mechanisms._validation import check_epsilon
from veil.mechanisms.cost import PrivacyCost
from veil.mechanisms.discrete import MAX_NOISE_SCALE, sample_discrete_laplace, smallest_epsilon

__all__ = ["Laplace"]


class Laplace:
    r"""Laplace mechanism on a public grid: ε-local-DP per record.

    Each value is clipped to ``[lower, upper]``, snapped to the grid, and receives
    two-sided geometric noise (the discrete Laplace distribution) with scale
    ``Δ / ε`` where ``Δ`` is the width of the bounds in grid steps. For integer data
    the grid is the integers and the output is an integer; for float data the grid
    step is a power of two (``resolution``) and the output is a multiple of it.

    Guarantee: for any two inputs ``x, x'`` in the bounds and any output ``y``,
    ``P[M(x) = y] <= e^ε P[M(x') = y]`` (Ghosh, Roughgarden and Sundararajan 2009), up
    to the sampler's double-precision acceptance tests, which leave each output
    probability right to a relative error of about ``2^-50`` at every scale (see
    :mod:`veil.mechanisms.discrete`). Because the output is an integer number of grid
    steps, the floating-point attack on textbook Laplace (Mironov, CCS 2012) does not
    apply.

    Parameters
    ----------
    epsilon : float
        Privacy budget per record, finite and > 0.
    lower, upper : float
        Public bounds, finite, ``lower < upper``; never derive them from the data.
    integer : bool, default False
        Integer data (noise in whole units, integer output).
    resolution : float, optional
        Grid step for float data; None picks a power of two with at least 1024 steps
        across the bounds.

    Raises
    ------
    veil.errors.ParameterError
        For ε not finite and > 0, invalid bounds or resolution, or a noise scale
        ``Δ / ε`` above ``2^50`` grid steps (the message gives the smallest ε allowed).

    Examples
    --------
    >>> import numpy as np
    >>> mech = Laplace(1.0, 0, 100, integer=True)
    >>> mech.scale
    100.0
    >>> from veil.rng import secure_generator
    >>> out = mech.randomise(np.array([10, 20]), secure_generator())
    >>> out.dtype
    dtype('int64')
    """

    def __init__(
        self,
        epsilon: float,
        lower: float,
        upper: float,
        *,
        integer: bool = False,
        resolution: float | None = None,
    ) -> None:
        self.epsilon = check_epsilon(epsilon)
        self.integer = bool(integer)
        self.grid: Grid = make_grid(lower, upper, integer=self.integer, resolution=resolution)
        steps = self.grid.sensitivity
        self._scale_steps = steps / self.epsilon
        if self._scale_steps > MAX_NOISE_SCALE:
            raise ParameterError(
                f"epsilon: {self.epsilon!r} is too small for bounds [{lower}, {upper}] at "
                f"resolution {self.grid.step:g} ({steps} grid steps): the noise scale would be "
                f"{self._scale_steps:.3g} steps, above the largest supported 2^50; the smallest "
                f"epsilon allowed here is {smallest_epsilon(lambda e: steps / e):g} (or "
                "coarsen resolution / narrow the bounds)"
            )

    @property
    def sensitivity(self) -> float:
        """Width of the (grid-aligned) bounds in data units."""
        return self.grid.sensitivity * self.grid.step

    @property
    def scale(self) -> float:
        """Noise scale ``b`` in data units: ``P[noise = k·step] ∝ exp(-|k·step| / b)``."""
        return self._scale_steps * self.grid.step

    @property
    def _ratio(self) -> float:
        return math.exp(-1.0 / self._scale_steps)

    def cost(self, scope: str = "") -> PrivacyCost:
        """Privacy spent on each record: ``(ε, 0)`` local DP."""
        return PrivacyCost(
            self.epsilon,
            0.0,
            "ldp",
            "record",
            scope,
            f"laplace (discrete, grid step {self.grid.step:g})",
        )

    def variance(self) -> float:
        """Variance of the noise (before any clipping of the output), in data units²."""
        a = self._ratio
        return 2.0 * a / (1.0 - a) ** 2 * self.grid.step**2

    def bias(self, values: np.ndarray, *, clip: bool = True) -> np.ndarray:
        """Expected output minus the snapped input, per value.

        Zero without clipping. With the output clipped to the bounds it is, in grid
        steps, ``(a^(A+1) - a^(B+1)) / (1 - a²)`` with ``a = exp(-ε/Δ)``, ``A`` and
        ``B`` the distances of the value to the lower and upper bound (exact for the
        discrete Laplace distribution).
        """
        idx = self.grid.snap(np.asarray(values))
        if not clip:
            return np.zeros(idx.shape, dtype=np.float64)
        a = self._ratio
        below = (idx - self.grid.lo).astype(np.float64)
        above = (self.grid.hi - idx).astype(np.float64)
        steps = (np.power(a, below + 1.0) - np.power(a, above + 1.0)) / (1.0 - a * a)
        return steps * self.grid.step

    def randomise(self, values: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """Return noisy values (unclipped): int64 for integer data, float64 otherwise.

        ``values`` must not contain NaN (the caller applies its missing-value policy).
        """
        idx = self.grid.snap(np.asarray(values))
        idx += sample_discrete_laplace(self._scale_steps, idx.size, rng).reshape(idx.shape)
        return self.grid.values(idx, self.integer)
