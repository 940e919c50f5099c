"""The public grid on which bounded numerical noise is added.

Values are snapped to multiples of a resolution ``step`` (exact for integers with
``step = 1``), noise is an integer number of steps, and the output is
``(integer) * step``: a post-processing of an integer, so no floating-point bits of
the true value survive in the output (Mironov 2012).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from veil.errors import ParameterError
from veil.mechanisms._validation import check_bounds, check_positive

# Default number of grid steps across [lower, upper] for float data: fine enough that
# snapping moves a value by at most (upper - lower) / 2048, coarse enough that the
# noise in steps stays far below 2^53.
_DEFAULT_STEPS = 1024


@dataclass(frozen=True)
class Grid:
    """Grid of multiples of ``step`` covering ``[lower, upper]``.

    ``lo`` and ``hi`` are the integer indices of the first and last grid points inside
    the bounds; ``sensitivity`` is ``hi - lo``, the largest change of one snapped value
    in grid steps.
    """

    step: float
    lo: int
    hi: int

    @property
    def sensitivity(self) -> int:
        return self.hi - self.lo

    @property
    def lower(self) -> float:
        return self.lo * self.step

    @property
    def upper(self) -> float:
        return self.hi * self.step

    def snap(self, values: np.ndarray) -> np.ndarray:
        """Clip ``values`` to the bounds and return their int64 grid indices."""
        if values.dtype.kind in "iu" and self.step == 1.0:
            # np.clip returns a new array: the caller's values are never written.
            ints = values if values.dtype == np.int64 else values.astype(np.int64)
            return np.asarray(np.clip(ints, self.lo, self.hi))
        scaled = np.asarray(values, dtype=np.float64) / self.step
        np.rint(scaled, out=scaled)
        np.clip(scaled, self.lo, self.hi, out=scaled)
        return scaled.astype(np.int64)

    def values(self, indices: np.ndarray, integer: bool) -> np.ndarray:
        """Map grid indices back to data values (int64 for integer data)."""
        if integer:
            return indices
        return indices * self.step


def make_grid(lower: float, upper: float, *, integer: bool, resolution: float | None) -> Grid:
    """Build the grid for data bounded by ``[lower, upper]``.

    Parameters
    ----------
    lower, upper : float
        Public bounds.
    integer : bool
        Integer data: the grid is the integers inside the bounds (``resolution`` must
        be None or 1).
    resolution : float or None
        Grid step for float data. None picks the largest power of two that puts at
        least 1024 steps across the bounds (powers of two make snapping exact).
    """
    lo_f, hi_f = check_bounds(lower, upper)
    if integer:
        if resolution not in (None, 1, 1.0):
            raise ParameterError(
                f"resolution: integer data is noised on the integers; pass None or 1, "
                f"got {resolution!r}"
            )
        step = 1.0
    elif resolution is None:
        step = 2.0 ** math.floor(math.log2((hi_f - lo_f) / _DEFAULT_STEPS))
    else:
        step = check_positive(resolution, "resolution")
    lo = math.ceil(lo_f / step)
    hi = math.floor(hi_f / step)
    if max(abs(lo), abs(hi)) > 2**53:
        raise ParameterError(
            f"lower_bound, upper_bound: [{lo_f}, {hi_f}] lies {max(abs(lo), abs(hi)):.3g} "
            f"steps of {step:g} from 0; at most 2^53 are allowed (grid indices must be "
            "exact in float64 and leave room for the noise in int64)"
        )
    if hi <= lo:
        raise ParameterError(
            f"lower_bound, upper_bound: [{lo_f}, {hi_f}] holds fewer than two points of "
            f"the grid with step {step}; widen the bounds or refine resolution"
        )
    if hi - lo > 2**40:
        raise ParameterError(
            f"resolution: {step} gives {hi - lo} steps across the bounds; at most 2^40 "
            "are allowed (noise in steps must stay exact in float64)"
        )
    return Grid(step=step, lo=lo, hi=hi)
