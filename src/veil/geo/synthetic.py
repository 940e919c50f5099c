"""A synthetic metro area for testing and comparing geographic masks.

Residents of a dense core, two suburbs and a rural scatter, drawn in kilometres around a
centre and mapped to degrees through an azimuthal equidistant projection centred there
(exact for distances from the centre).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from veil.errors import ParameterError
from veil.geo.projection import projection_at
from veil.rng import RngLike, resolve_rng

__all__ = ["synthetic_city"]

# (centre x km, centre y km, standard deviation km) of the core and the two suburbs.
_CLUSTERS = ((0.0, 0.0, 1.5), (8.0, 5.0, 1.2), (-6.0, 7.0, 1.0))
_RURAL_HALF_WIDTH_KM = 15.0


def _count(value: int, name: str) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 0:
        raise ParameterError(f"{name}: must be an integer >= 0, got {value!r}")
    return int(value)


def synthetic_city(
    n_core: int = 2200,
    n_suburb_a: int = 900,
    n_suburb_b: int = 700,
    n_rural: int = 400,
    *,
    centre: tuple[float, float] = (39.0, -94.5),
    rng: RngLike = None,
) -> pd.DataFrame:
    """Residents of a synthetic city: a dense core, two suburbs and a rural scatter.

    In kilometres from ``centre``: the core is normal around (0, 0) with standard
    deviation 1.5 km, suburb A normal around (8, 5) with 1.2 km, suburb B normal around
    (-6, 7) with 1.0 km, and the rural residents uniform over the square [-15, 15]² km
    The kilometre coordinates are mapped to degrees by the
    azimuthal equidistant projection centred on ``centre``
    (:func:`veil.geo.projection_at`), so ``projection_at(*centre)`` maps ``lat, lon``
    back to ``1000 * (x_km, y_km)`` metres.

    Parameters
    ----------
    n_core, n_suburb_a, n_suburb_b, n_rural : int
        Residents per zone, each >= 0; rows come in this order.
    centre : (float, float), default (39.0, -94.5)
        Latitude and longitude of the city centre, in degrees.
    rng : None, int or numpy.random.Generator
        Source of randomness (see :mod:`veil.rng`).

    Returns
    -------
    pandas.DataFrame
        Columns ``lat``, ``lon`` (degrees) and ``x_km``, ``y_km`` (easting and northing
        from the centre, kilometres); one row per resident.
    """
    sizes = [
        _count(n_core, "n_core"),
        _count(n_suburb_a, "n_suburb_a"),
        _count(n_suburb_b, "n_suburb_b"),
    ]
    rural = _count(n_rural, "n_rural")
    if not isinstance(centre, tuple) or len(centre) != 2:
        raise ParameterError(f"centre: must be a (latitude, longitude) pair, got {centre!r}")
    projection = projection_at(float(centre[0]), float(centre[1]), method="aeqd")
    generator = resolve_rng(rng, stacklevel=3)
    blocks = [
        generator.normal((cx, cy), spread, (size, 2))
        for (cx, cy, spread), size in zip(_CLUSTERS, sizes, strict=True)
    ]
    blocks.append(generator.uniform(-_RURAL_HALF_WIDTH_KM, _RURAL_HALF_WIDTH_KM, (rural, 2)))
    homes = np.vstack(blocks)
    lat, lon = projection.inverse(homes[:, 0] * 1000.0, homes[:, 1] * 1000.0)
    return pd.DataFrame({"lat": lat, "lon": lon, "x_km": homes[:, 0], "y_km": homes[:, 1]})
