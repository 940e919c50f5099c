"""Local metric projections: mask in metres, never in degrees.

A jitter of 0.01 degrees of longitude is 1.1 km at the equator and 380 m in Anchorage;
every mask in :mod:`veil.geo` therefore projects the coordinates to a local planar
system in metres, works there, and projects back. The projection is chosen from the
data's extent (a public, coarse property: its centre and spread, not any single
record) or given by the caller:

* ``"utm"``: the UTM zone of the data's centre (WGS 84, EPSG 326xx north / 327xx
  south); scale error below 0.1 % within 3 degrees of the zone's central meridian;
* ``"aeqd"``: an azimuthal equidistant projection centred on the data, exact for
  distances from the centre and within 0.1 % for displacements anywhere within about
  1 000 km of it; used near the poles, across the equator or the antimeridian, and for
  data spanning several UTM zones.

Data that no single local projection can hold (spread over more than
``max_extent_km`` from its centre) is refused with an error naming the extent.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np

from veil.errors import DomainError, ParameterError

__all__ = [
    "LocalProjection",
    "ProjectionMethod",
    "check_coordinates",
    "local_projection",
    "projection_at",
]

ProjectionMethod = Literal["auto", "utm", "aeqd"]

_EARTH_RADIUS_M = 6_371_008.8
# UTM's scale factor is 0.9996 on the central meridian and grows with the distance from
# it; within 3 degrees of longitude it stays within 0.1 % of true scale (the zone's
# own half-width). Beyond, "auto" switches to the centred azimuthal projection.
_UTM_HALF_WIDTH_DEG = 3.0
_UTM_MAX_LAT = 84.0


def _pyproj() -> Any:
    try:
        import pyproj
    except ImportError as exc:  # pragma: no cover - exercised without the extra
        raise ImportError("veil.geo needs pyproj: pip install 'veil[geo]'") from exc
    return pyproj


@dataclass(frozen=True)
class LocalProjection:
    """A planar coordinate system in metres and its transformations.

    Attributes
    ----------
    method : {"utm", "aeqd"}
    crs : str
        The PROJ definition of the planar system (``"EPSG:32618"``, ``"+proj=aeqd ..."``).
    centre_lat, centre_lon : float
        Centre of the data the projection was chosen for.
    """

    method: Literal["utm", "aeqd"]
    crs: str
    centre_lat: float
    centre_lon: float

    def _transformer(self, inverse: bool) -> Any:
        pyproj = _pyproj()
        source, target = ("EPSG:4326", self.crs) if not inverse else (self.crs, "EPSG:4326")
        return pyproj.Transformer.from_crs(source, target, always_xy=True)

    def forward(self, lat: np.ndarray, lon: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Degrees to metres: returns ``(x, y)`` (easting, northing)."""
        x = np.array(lon, dtype=np.float64)
        y = np.array(lat, dtype=np.float64)
        self._transformer(inverse=False).transform(x, y, inplace=True)
        return x, y

    def inverse(self, x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Metres to degrees: returns ``(lat, lon)``, longitude wrapped to [-180, 180)."""
        lon = np.array(x, dtype=np.float64)
        lat = np.array(y, dtype=np.float64)
        self._transformer(inverse=True).transform(lon, lat, inplace=True)
        lon += 180.0
        np.remainder(lon, 360.0, out=lon)
        lon -= 180.0
        return lat, lon


def _centre(lat: np.ndarray, lon: np.ndarray) -> tuple[float, float]:
    """Centre of the points: mean latitude, circular mean of longitude."""
    radians = np.radians(lon)
    centre_lon = math.degrees(
        math.atan2(float(np.sin(radians).mean()), float(np.cos(radians).mean()))
    )
    return float(lat.mean()), centre_lon


def _great_circle_m(lat: np.ndarray, lon: np.ndarray, lat0: float, lon0: float) -> np.ndarray:
    phi, phi0 = np.radians(lat), math.radians(lat0)
    dphi = phi - phi0
    dlam = np.radians(lon - lon0)
    a = np.sin(dphi / 2) ** 2 + np.cos(phi) * math.cos(phi0) * np.sin(dlam / 2) ** 2
    return np.asarray(2 * _EARTH_RADIUS_M * np.arcsin(np.sqrt(np.clip(a, 0.0, 1.0))))


def _utm(lat0: float, lon0: float) -> str:
    zone = math.floor((lon0 + 180.0) / 6.0) % 60 + 1
    return f"EPSG:{32600 + zone if lat0 >= 0 else 32700 + zone}"


def _utm_central_meridian(crs: str) -> float:
    zone = int(crs.split(":")[1]) % 100
    return -183.0 + 6.0 * zone


def check_coordinates(lat: np.ndarray, lon: np.ndarray, lat_name: str, lon_name: str) -> None:
    """Refuse missing or out-of-range coordinates, naming the column and the values."""
    for name, values, limit in ((lat_name, lat, 90.0), (lon_name, lon, 180.0)):
        bad = ~np.isfinite(values)
        if bad.any():
            raise DomainError(
                f"column {name!r}: {int(bad.sum())} missing or infinite coordinates; "
                "drop them or pass missing='keep'"
            )
        outside = np.abs(values) > limit
        if outside.any():
            raise DomainError(
                f"column {name!r}: must lie in [-{limit:g}, {limit:g}], got "
                f"{values[outside][:5].tolist()} ({int(outside.sum())} rows)"
            )


def local_projection(
    lat: np.ndarray,
    lon: np.ndarray,
    *,
    method: ProjectionMethod = "auto",
    max_extent_km: float = 1000.0,
) -> LocalProjection:
    """Choose the planar system in metres for a set of points.

    Parameters
    ----------
    lat, lon : array of float
        Coordinates in degrees (finite, in range).
    method : {"auto", "utm", "aeqd"}, default "auto"
        ``"auto"`` takes the UTM zone of the centre when every point lies within
        3 degrees of longitude of its central meridian, below 84 degrees of latitude
        and in the centre's hemisphere; otherwise the centred azimuthal equidistant
        projection.
    max_extent_km : float, default 1000
        Refuse data with a point farther than this from the centre.

    Raises
    ------
    veil.errors.ParameterError
        Empty input, unknown method, ``"utm"`` forced on data it cannot hold.
    veil.errors.DomainError
        Data too spread out for any local projection.
    """
    if method not in ("auto", "utm", "aeqd"):
        raise ParameterError(f"projection: must be 'auto', 'utm' or 'aeqd', got {method!r}")
    lat_arr = np.asarray(lat, dtype=np.float64)
    lon_arr = np.asarray(lon, dtype=np.float64)
    if lat_arr.size == 0:
        raise ParameterError("lat, lon: need at least one point to choose a projection")
    lat0, lon0 = _centre(lat_arr, lon_arr)
    # The farthest corner of the bounding box (longitudes taken relative to the centre,
    # so that the antimeridian does not matter) bounds every point's distance.
    offsets = np.remainder(lon_arr - lon0 + 180.0, 360.0) - 180.0
    corners_lat = np.array([lat_arr.min(), lat_arr.min(), lat_arr.max(), lat_arr.max()])
    corners_lon = lon0 + np.array([offsets.min(), offsets.max(), offsets.min(), offsets.max()])
    extent_m = float(_great_circle_m(corners_lat, corners_lon, lat0, lon0).max())
    if extent_m > max_extent_km * 1000.0:
        raise DomainError(
            f"lat, lon: the points reach {extent_m / 1000:.0f} km from their centre "
            f"({lat0:.3f}, {lon0:.3f}); no local projection in metres holds more than "
            f"max_extent_km={max_extent_km:g} km. Mask each region separately"
        )
    utm = _utm(lat0, lon0)
    meridian = _utm_central_meridian(utm)
    off_meridian = np.abs(np.remainder(lon_arr - meridian + 180.0, 360.0) - 180.0)
    same_hemisphere = bool(np.all(lat_arr >= 0) or np.all(lat_arr < 0))
    utm_fits = (
        bool(np.all(np.abs(lat_arr) <= _UTM_MAX_LAT))
        and bool(np.all(off_meridian <= _UTM_HALF_WIDTH_DEG))
        and same_hemisphere
    )
    if method == "utm" and not utm_fits:
        raise ParameterError(
            "projection: 'utm' cannot hold these points (beyond 84 degrees of latitude, "
            f"more than {_UTM_HALF_WIDTH_DEG} degrees from the zone's central meridian "
            "or on both sides of the equator); use 'auto' or 'aeqd'"
        )
    if method == "utm" or (method == "auto" and utm_fits):
        return LocalProjection("utm", utm, lat0, lon0)
    crs = f"+proj=aeqd +lat_0={lat0:.10f} +lon_0={lon0:.10f} +datum=WGS84 +units=m +no_defs"
    return LocalProjection("aeqd", crs, lat0, lon0)


def projection_at(
    centre_lat: float, centre_lon: float, *, method: Literal["utm", "aeqd"] = "aeqd"
) -> LocalProjection:
    """The projection centred on a public point (a city centre), independent of the data.

    Choosing the projection from the data makes every masked point depend slightly on
    the other records (through the centre); a projection fixed from public knowledge
    does not.
    """
    check_coordinates(
        np.array([centre_lat], dtype=np.float64),
        np.array([centre_lon], dtype=np.float64),
        "centre_lat",
        "centre_lon",
    )
    if method == "utm":
        if abs(centre_lat) > _UTM_MAX_LAT:
            raise ParameterError(f"method: UTM is undefined at latitude {centre_lat}; use 'aeqd'")
        return LocalProjection("utm", _utm(centre_lat, centre_lon), centre_lat, centre_lon)
    if method != "aeqd":
        raise ParameterError(f"method: must be 'utm' or 'aeqd', got {method!r}")
    crs = (
        f"+proj=aeqd +lat_0={centre_lat:.10f} +lon_0={centre_lon:.10f} "
        "+datum=WGS84 +units=m +no_defs"
    )
    return LocalProjection("aeqd", crs, centre_lat, centre_lon)
