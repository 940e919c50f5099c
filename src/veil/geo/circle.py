"""Longitudes on the circle: centres and extents that do not break at the antimeridian.

A longitude is an angle: 179.9 and -179.9 are 22 km apart at the equator, not 360
degrees. A median or a min/max taken on the raw numbers puts the centre of points around
±180 on the other side of the Earth and makes their extent the whole world. These
functions work on the circle instead:

* :func:`wrap_longitudes` maps any longitude (the 0-360 convention included) to
  [-180, 180);
* :func:`longitude_centre` is the median of the longitudes measured as offsets from
  their circular mean, so a cluster around the antimeridian is centred in it;
* :func:`unwrap_longitudes` writes longitudes as a continuous run about a reference
  (179, 181 rather than 179, -179), for plots and extents;
* :func:`longitude_extent` is the shortest arc that holds every longitude (the
  complement of the largest gap between them), as ``(west, east)``.

Reference: the circular mean (Mardia and Jupp, *Directional Statistics*, 2000, sect. 2.2).
No privacy guarantee: geometry only.
"""

from __future__ import annotations

import math

import numpy as np
import numpy.typing as npt

from veil.errors import ParameterError

__all__ = ["longitude_centre", "longitude_extent", "unwrap_longitudes", "wrap_longitudes"]

FloatArray = npt.NDArray[np.float64]


def _finite(lon: npt.ArrayLike) -> FloatArray:
    values = np.asarray(lon, dtype=np.float64).ravel()
    return np.asarray(values[np.isfinite(values)], dtype=np.float64)


def wrap_longitudes(lon: npt.ArrayLike) -> FloatArray:
    """Longitudes in degrees mapped to [-180, 180) (181.6 becomes -178.4).

    Parameters
    ----------
    lon : array-like of float
        Longitudes in degrees, any convention (-180..180, 0..360); NaN stays NaN.

    Returns
    -------
    numpy.ndarray of float64
        A new array; the input is not modified.
    """
    values = np.asarray(lon, dtype=np.float64)
    return np.asarray(np.remainder(values + 180.0, 360.0) - 180.0, dtype=np.float64)


def _circular_mean(values: FloatArray) -> float:
    radians = np.radians(values)
    s, c = float(np.sin(radians).mean()), float(np.cos(radians).mean())
    if math.hypot(s, c) < 1e-12:
        # Spread evenly round the circle: no mean direction; the first point serves.
        return float(values[0])
    return math.degrees(math.atan2(s, c))


def longitude_centre(lon: npt.ArrayLike) -> float:
    """The median longitude on the circle, in [-180, 180).

    The longitudes are taken as offsets in (-180, 180] from their circular mean; their
    median, added back and wrapped, is the centre. For points that do not straddle the
    antimeridian this is the ordinary median; for points around it (Fiji: 178 to -178)
    it lies among them, not on the far side of the Earth.

    Parameters
    ----------
    lon : array-like of float
        Longitudes in degrees (any convention); NaN and infinities are ignored.

    Returns
    -------
    float

    Raises
    ------
    veil.errors.ParameterError
        If no longitude is finite.

    Examples
    --------
    >>> longitude_centre([179.0, -179.0, 178.5])
    179.0
    >>> longitude_centre([181.6, 181.0, 184.1])
    -178.4
    """
    values = _finite(lon)
    if values.size == 0:
        raise ParameterError("lon: needs at least one finite longitude for a centre")
    mean = _circular_mean(values)
    offsets = wrap_longitudes(values - mean)
    return round(float(wrap_longitudes(np.array([mean + float(np.median(offsets))]))[0]), 10)


def unwrap_longitudes(lon: npt.ArrayLike, about: float) -> FloatArray:
    """Longitudes as a continuous run within 180 degrees of ``about``.

    For drawing or measuring points near the antimeridian on one flat axis: about 180,
    -179 becomes 181.

    Parameters
    ----------
    lon : array-like of float
        Longitudes in degrees; NaN stays NaN.
    about : float
        The reference longitude (a centre from :func:`longitude_centre`).

    Returns
    -------
    numpy.ndarray of float64
        Values in [about - 180, about + 180).
    """
    values = np.asarray(lon, dtype=np.float64)
    return np.asarray(about + wrap_longitudes(values - about), dtype=np.float64)


def longitude_extent(lon: npt.ArrayLike) -> tuple[float, float]:
    """The shortest arc holding every longitude, as ``(west, east)`` in [-180, 180).

    ``west > east`` means the arc crosses the antimeridian (Fiji: ``(165.7, -171.9)``).
    The arc is the circle less its largest gap between consecutive longitudes.

    Parameters
    ----------
    lon : array-like of float
        Longitudes in degrees (any convention); NaN and infinities are ignored.

    Returns
    -------
    tuple of float

    Raises
    ------
    veil.errors.ParameterError
        If no longitude is finite.

    Examples
    --------
    >>> longitude_extent([170.0, -175.0, 179.0])
    (170.0, -175.0)
    >>> longitude_extent([-74.0, -73.5])
    (-74.0, -73.5)
    """
    values = np.unique(wrap_longitudes(_finite(lon)))
    if values.size == 0:
        raise ParameterError("lon: needs at least one finite longitude for an extent")
    if values.size == 1:
        return float(values[0]), float(values[0])
    gaps = np.diff(np.append(values, values[0] + 360.0))
    widest = int(np.argmax(gaps))
    # The arc starts after the widest gap and ends before it.
    west = float(values[(widest + 1) % values.size])
    east = float(values[widest])
    return west, east
