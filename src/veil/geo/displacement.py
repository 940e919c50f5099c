"""How far a location mask moves a point, from its parameters alone (no data is read).

The median displacement of the masks that draw a random offset, the cell side of the
masks that aggregate, and the displacements under which a mask protects practically
nothing or over which little of the locations' use is left. Said before a run (``veil
geo``, ``veil release``) so that a parameter in the wrong unit is caught before any data
is released.
"""

from __future__ import annotations

import math
from typing import Literal

from veil.errors import ParameterError
from veil.geo._frame import check_metres
from veil.mechanisms._validation import check_epsilon

__all__ = [
    "EXCESSIVE_M",
    "NEGLIGIBLE_M",
    "expected_scale",
    "median_displacement",
    "scale_concern",
]

# The median of Gamma(shape 2, scale 1): the root of 1 - (1 + r) e^-r = 1/2, equal to
# scipy.special.gammaincinv(2, 0.5); kept as a literal so the figure said is exact.
_GAMMA2_MEDIAN = 1.6783469900166608

NEGLIGIBLE_M = 1.0
"""Displacement in metres under which a mask barely moves the points (GPS error alone)."""

EXCESSIVE_M = 10_000.0
"""Displacement in metres over which little of the locations' use is left (a city's size)."""


def median_displacement(
    method: str,
    *,
    epsilon: float | None = None,
    radius_m: float | None = None,
    kind: str = "disc",
    r_min_m: float | None = None,
    r_max_m: float | None = None,
) -> float | None:
    r"""The median distance in metres between a point and its masked version.

    Each formula is the median of the mask's radial law, exact (no approximation):

    * ``"planar_laplace"``: the radius is ``Gamma(2, 1/ε)`` (Andrés et al.,
      "Geo-indistinguishability", CCS 2013, Section 4), so the median is
      ``m₂ / ε`` with ``m₂ ≈ 1.678347`` the root of ``1 - (1 + r) e^{-r} = 1/2``
      (the regularized lower incomplete gamma function ``P(2, r) = 1/2``).
    * ``"jitter"``, ``kind="disc"``: uniform over the disc of radius ``R``, so
      ``P(r <= x) = x² / R²`` and the median is ``R / √2``.
    * ``"jitter"``, ``kind="gaussian"``: independent normal east and north offsets of
      standard deviation ``σ``, so the radius is Rayleigh(``σ``) with
      ``P(r <= x) = 1 - e^{-x² / 2σ²}`` and the median is ``σ √(2 ln 2)``.
    * ``"donut"``: uniform over the area of the annulus ``r_min <= r <= r_max``
      (Hampton et al. 2010), so ``r² ~ U(r_min², r_max²)`` and the median is
      ``√((r_min² + r_max²) / 2)``.

    Parameters
    ----------
    method : str
        The mask: ``"planar_laplace"``, ``"jitter"`` or ``"donut"``; any other mask
        (``"grid"``, ``"cloak"``) has no random displacement and gives None.
    epsilon : float, optional
        planar_laplace: privacy budget per metre, > 0.
    radius_m : float, optional
        jitter: disc radius, or standard deviation of each offset, in metres.
    kind : {"disc", "gaussian"}, default "disc"
        jitter: the law of the offset.
    r_min_m, r_max_m : float, optional
        donut: inner and outer radius in metres, ``0 <= r_min_m < r_max_m``.

    Returns
    -------
    float or None
        Metres; None when the method has no random displacement or a parameter it
        needs is not given (a budget allocated at run time).

    Raises
    ------
    veil.errors.ParameterError
        A given parameter is out of range, with the message the mask itself gives.
    """
    if method == "planar_laplace" and epsilon is not None:
        return _GAMMA2_MEDIAN / check_epsilon(epsilon)
    if method == "jitter" and radius_m is not None:
        radius = check_metres(radius_m, "radius_m")
        if kind not in ("disc", "gaussian"):
            raise ParameterError(f"kind: must be 'disc' or 'gaussian', got {kind!r}")
        factor = math.sqrt(2.0 * math.log(2.0)) if kind == "gaussian" else 1.0 / math.sqrt(2.0)
        return radius * factor
    if method == "donut" and r_min_m is not None and r_max_m is not None:
        outer = check_metres(r_max_m, "r_max_m")
        inner = check_metres(r_min_m, "r_min_m", zero=True)
        if not inner < outer:
            raise ParameterError(f"r_min_m: must be less than r_max_m ({outer:g}), got {r_min_m!r}")
        return math.sqrt((inner**2 + outer**2) / 2.0)
    return None


def expected_scale(
    method: str,
    *,
    epsilon: float | None = None,
    radius_m: float | None = None,
    kind: str = "disc",
    r_min_m: float | None = None,
    r_max_m: float | None = None,
    cell_m: float | None = None,
    root_size_m: float | None = None,
) -> tuple[str, float | None]:
    """What a location mask's parameters say of its displacement: a phrase and metres.

    The median displacement of planar Laplace, jitter and donut masking
    (:func:`median_displacement`), the cell side of a grid, or the root cell of
    quadtree cloaking (None when the data set it).

    Parameters
    ----------
    method : str
        ``"planar_laplace"``, ``"jitter"``, ``"donut"``, ``"grid"`` or ``"cloak"``.
    epsilon, radius_m, kind, r_min_m, r_max_m
        As in :func:`median_displacement`.
    cell_m : float, optional
        grid: the cell side in metres.
    root_size_m : float, optional
        cloak: the side of the quadtree's public root square in metres.

    Returns
    -------
    phrase : str
        What the figure is (``"expected median displacement"``, ``"cell side"``, ...).
    metres : float or None
        The figure, or None when it is not known before the run.

    Raises
    ------
    veil.errors.ParameterError
        As :func:`median_displacement`.
    """
    median = median_displacement(
        method, epsilon=epsilon, radius_m=radius_m, kind=kind, r_min_m=r_min_m, r_max_m=r_max_m
    )
    if median is not None:
        return "expected median displacement", median
    if method == "grid" and cell_m is not None:
        return "cell side", float(cell_m)
    if method == "cloak" and root_size_m is not None:
        return "root cell side (cells halve until each holds k locations)", float(root_size_m)
    if method == "cloak":
        return "cell size set by the data (each cell holds at least k locations)", None
    return "displacement not known before the run", None


def scale_concern(metres: float | None) -> Literal["negligible", "excessive"] | None:
    """Whether a displacement is under :data:`NEGLIGIBLE_M` or over :data:`EXCESSIVE_M`.

    Parameters
    ----------
    metres : float or None
        A figure of :func:`expected_scale`.

    Returns
    -------
    {"negligible", "excessive"} or None
        ``"negligible"``: the mask protects practically nothing; ``"excessive"``: the
        parameters are likely in the wrong unit (metres; ε per metre). None for a
        figure in between, or none that is known, finite and positive.
    """
    if metres is None or not math.isfinite(metres) or metres <= 0.0:
        return None
    if metres < NEGLIGIBLE_M:
        return "negligible"
    if metres > EXCESSIVE_M:
        return "excessive"
    return None
