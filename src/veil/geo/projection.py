"""Local metric projections: mask in metres, never in degrees.

A jitter of 0.01 degrees of longitude is 1.1 km at the equator and 380 m in Anchorage;
every mask in :mod:`veil.geo` therefore projects the coordinates to a planar system in
metres, works there, and projects back.

The projection is part of the mechanism, so it must not depend on the records: a
centre, UTM zone or origin computed from the data moves every released point when one
record moves (17 m of one record switched a release from UTM to AEQD and moved the other
999 points by a median 1.9 m), and a grid anchored on the data moves every cell when one
person is added. The projection is therefore built from public knowledge:

* :func:`projection_at`: a public centre (a city's centre), with
  ``method="aeqd"`` (azimuthal equidistant), ``"utm"`` (the UTM zone of the centre,
  evaluated by PROJ) or ``"stereographic"`` (the oblique stereographic projection,
  PROJ's ``sterea``). Both azimuthal projections are taken from Gauss's conformal
  sphere and evaluated in closed form with NumPy, several times faster than PROJ's
  ellipsoidal AEQD (which solves a geodesic per point); the AEQD so evaluated stays
  within 0.13 m of PROJ's and its distances from the centre within 3e-7 of the
  geodesic ones, up to 490 km;
* :func:`projection_for_region`: a public bounding box (south, west, north, east);
* :func:`projection_for_crs`: a named planar CRS in metres (``"EPSG:32616"``).

:func:`local_projection` chooses a projection from the data itself; the masks accept it
only as an explicit opt-in (``projection="data"``), which warns with
:class:`~veil.errors.PrivacyLeakWarning` and records the leak in the output frame.

Every projection has a region where it keeps distances within 0.1 % of the geodesic
ones (its Tissot scale factors lie in [0.999, 1.001]):

* AEQD: 490 km from its centre (the scale across the radius is ``c / sin c`` for an
  angular distance ``c``, 1.001 at 492 km on the smallest of Gauss's conformal
  spheres, the equator's);
* stereographic: 400 km from its centre (scale ``1 + rho^2 / 4R^2``);
* UTM: 3 degrees of longitude from the zone's central meridian, up to 84 degrees of
  latitude;
* a region: its bounding box (which must lie inside its projection's region);
* a named CRS: its area of use, where its scale factors stay within 0.1 %.

:meth:`LocalProjection.outside` tells which points lie beyond that region; the masks
refuse them, or drop them with ``outside="drop"``.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, ClassVar, Literal

import numpy as np

from veil.errors import DomainError, ParameterError

__all__ = [
    "LocalProjection",
    "ProjectionMethod",
    "check_coordinates",
    "local_projection",
    "projection_at",
    "projection_for_crs",
    "projection_for_region",
]

ProjectionMethod = Literal["auto", "utm", "aeqd"]
PublicMethod = Literal["utm", "aeqd", "stereographic"]

_EARTH_RADIUS_M = 6_371_008.8
# UTM's scale factor is 0.9996 on the central meridian and grows with the distance from
# it; within 3 degrees of longitude it stays within 0.1 % of true scale (the zone's
# own half-width). Beyond, "auto" switches to the centred azimuthal projection.
_UTM_HALF_WIDTH_DEG = 3.0
_UTM_MAX_LAT = 84.0
# Largest relative distance error a projection may make inside its region.
_SCALE_TOLERANCE = 1e-3
# AEQD's scale across the radius is c / sin(c) ~ 1 + c^2 / 6: 1.001 at c = 0.0775 rad.
_AEQD_REACH_M = 490_000.0
# The stereographic scale is 1 + rho^2 / (4 R^2): 1.001 at rho = 2 R sqrt(0.001).
_STEREO_REACH_M = 400_000.0
# Values per block of the NumPy azimuthal projections: a few arrays of this size fit in a core's
# L2 cache, so the dozens of passes over each block do not go to memory.
_BLOCK = 1 << 14
_TINY = 1e-300  # stands for a zero radius, whose scale ratio is 1
# WGS 84.
_A = 6_378_137.0
_F = 1.0 / 298.257223563
_E2 = _F * (2.0 - _F)
_E = math.sqrt(_E2)
_N3 = _F / (2.0 - _F)  # third flattening
# Conformal to geodetic latitude, phi = chi + sum d_j sin(2 j chi) (Karney 2011, to n^6;
# 0.01 micrometre at most on the ellipsoid, where the series to n^4 was 2.5 micrometres
# off at 40 degrees).
_CHI_TO_PHI = (
    2 * _N3
    - 2 / 3 * _N3**2
    - 2 * _N3**3
    + 116 / 45 * _N3**4
    + 26 / 45 * _N3**5
    - 2854 / 675 * _N3**6,
    7 / 3 * _N3**2 - 8 / 5 * _N3**3 - 227 / 45 * _N3**4 + 2704 / 315 * _N3**5 + 2323 / 945 * _N3**6,
    56 / 15 * _N3**3 - 136 / 35 * _N3**4 - 1262 / 105 * _N3**5 + 73814 / 2835 * _N3**6,
    4279 / 630 * _N3**4 - 332 / 35 * _N3**5 - 399572 / 14175 * _N3**6,
    4174 / 315 * _N3**5 - 144838 / 6237 * _N3**6,
    601676 / 22275 * _N3**6,
)


def _pyproj() -> Any:
    try:
        import pyproj
    except ImportError as exc:  # pragma: no cover - exercised without the extra
        raise ImportError("veil.geo needs pyproj: pip install 'veil[geo]'") from exc
    return pyproj


@dataclass(frozen=True)
class LocalProjection:
    """A planar coordinate system in metres, its transformations and its region.

    Build one with :func:`projection_at`, :func:`projection_for_region` or
    :func:`projection_for_crs` from public knowledge; :func:`local_projection` builds
    one from the data (``from_data=True``), which the masks treat as a leak.

    Attributes
    ----------
    method : {"utm", "aeqd", "stereographic", "crs"}
    crs : str
        The PROJ definition of the planar system (``"EPSG:32618"``, ``"+proj=aeqd ..."``).
        ``"aeqd"`` is evaluated in NumPy on Gauss's conformal sphere, within 0.13 m of
        this definition up to 490 km from the centre.
    centre_lat, centre_lon : float
        Centre of the projection (for ``"utm"`` and ``"crs"``: of its region).
    from_data : bool, default False
        The centre or zone was computed from the records being masked.
    region : (south, west, north, east) or None
        Public bounding box in degrees the points must lie in (``west > east`` crosses
        the antimeridian); ``None`` for the projection's own region only.
    """

    method: Literal["utm", "aeqd", "stereographic", "crs"]
    crs: str
    centre_lat: float
    centre_lon: float
    from_data: bool = False
    region: tuple[float, float, float, float] | None = None
    _transformers: dict[bool, Any] = field(
        default_factory=dict, init=False, repr=False, compare=False, hash=False
    )

    def _transformer(self, inverse: bool) -> Any:
        cached = self._transformers.get(inverse)
        if cached is None:
            pyproj = _pyproj()
            source, target = ("EPSG:4326", self.crs) if not inverse else (self.crs, "EPSG:4326")
            cached = pyproj.Transformer.from_crs(source, target, always_xy=True)
            self._transformers[inverse] = cached
        return cached

    def forward(self, lat: np.ndarray, lon: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Degrees to metres: returns ``(x, y)`` (easting, northing)."""
        azimuthal = _AZIMUTHAL.get(self.method)
        if azimuthal is not None:
            return azimuthal.of(self.centre_lat, self.centre_lon).forward(
                np.asarray(lat, dtype=np.float64), np.asarray(lon, dtype=np.float64)
            )
        x = np.array(lon, dtype=np.float64)
        y = np.array(lat, dtype=np.float64)
        self._transformer(inverse=False).transform(x, y, inplace=True)
        return x, y

    def inverse(self, x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Metres to degrees: returns ``(lat, lon)``, longitude wrapped to [-180, 180)."""
        azimuthal = _AZIMUTHAL.get(self.method)
        if azimuthal is not None:
            lat, lon = azimuthal.of(self.centre_lat, self.centre_lon).inverse(
                np.asarray(x, dtype=np.float64), np.asarray(y, dtype=np.float64)
            )
        else:
            lon = np.array(x, dtype=np.float64)
            lat = np.array(y, dtype=np.float64)
            self._transformer(inverse=True).transform(lon, lat, inplace=True)
        if lon.size and not (lon.min() >= -180.0 and lon.max() < 180.0):
            lon += 180.0
            np.remainder(lon, 360.0, out=lon)
            lon -= 180.0
        return lat, lon

    def describe(self) -> str:
        """A short public description (never the centre of a data-chosen projection)."""
        if self.from_data:
            return f"{self.method} (chosen from the data)"
        if self.region is not None:
            south, west, north, east = self.region
            return f"{self.method} for the region ({south:g}, {west:g}, {north:g}, {east:g})"
        if self.method in ("utm", "crs"):
            return self.crs
        return f"{self.method} centred at ({self.centre_lat:g}, {self.centre_lon:g})"

    def outside(
        self,
        lat: np.ndarray,
        lon: np.ndarray,
        x: np.ndarray | None = None,
        y: np.ndarray | None = None,
    ) -> tuple[np.ndarray, float]:
        """Which points lie beyond the region where distances stay within 0.1 %.

        Parameters
        ----------
        lat, lon : array of float
            Coordinates in degrees.
        x, y : array of float, optional
            Their projected coordinates, if already computed.

        Returns
        -------
        outside : numpy.ndarray of bool
        beyond_km : float
            How far the farthest of them lies beyond the region, in km (0 if none).
        """
        lat = np.asarray(lat, dtype=np.float64)
        lon = np.asarray(lon, dtype=np.float64)
        if self.method in ("aeqd", "stereographic"):
            if x is None or y is None:
                x, y = self.forward(lat, lon)
            reach = _AEQD_REACH_M if self.method == "aeqd" else _STEREO_REACH_M
            with np.errstate(invalid="ignore", over="ignore"):
                rho2 = x * x
                rho2 += y * y
                mask = ~(rho2 <= reach * reach)
            if mask.any():
                beyond = _great_circle_m(lat[mask], lon[mask], self.centre_lat, self.centre_lon)
                beyond_m = beyond - reach
            else:
                beyond_m = np.empty(0)
        elif self.method == "utm":
            meridian = _utm_central_meridian(self.crs)
            off = np.abs(_wrap(lon - meridian))
            mask = (off > _UTM_HALF_WIDTH_DEG) | (np.abs(lat) > _UTM_MAX_LAT)
            beyond_m = _degrees_beyond(
                lat[mask], off[mask] - _UTM_HALF_WIDTH_DEG, np.abs(lat[mask]) - _UTM_MAX_LAT
            )
        else:
            mask = np.zeros(lat.shape, dtype=bool)
            beyond_m = np.empty(0)
        if self.region is not None:
            in_box, beyond_box = _outside_box(lat, lon, self.region)
            mask = mask | in_box
            beyond_m = np.concatenate([beyond_m, beyond_box])
        if self.method == "crs":
            mask = mask | self._distorted(lat, lon)
        beyond_km = float(np.max(beyond_m, initial=0.0)) / 1000.0
        return mask, max(beyond_km, 0.0)

    def _distorted(self, lat: np.ndarray, lon: np.ndarray) -> np.ndarray:
        """Points where the named CRS's Tissot axes leave [0.999, 1.001]."""
        if lat.size == 0:
            return np.zeros(0, dtype=bool)
        pyproj = _pyproj()
        with np.errstate(invalid="ignore"):
            factors = pyproj.Proj(self.crs).get_factors(lon, lat)
            major = np.asarray(factors.tissot_semimajor, dtype=np.float64)
            minor = np.asarray(factors.tissot_semiminor, dtype=np.float64)
            ok = (np.abs(major - 1.0) <= _SCALE_TOLERANCE) & (
                np.abs(minor - 1.0) <= _SCALE_TOLERANCE
            )
        return np.asarray(~ok)


class _Stereographic:
    """Oblique stereographic projection on Gauss's conformal sphere, in NumPy.

    The ellipsoid is mapped conformally to a sphere of radius ``sqrt(M0 N0)`` touching
    it at the centre's latitude, then projected stereographically with scale 1 at the
    centre (EPSG guidance note 7-2, method 9809; PROJ's ``sterea`` with ``k=1``).
    Conformal, so the scale is the same in every direction: ``1 + rho^2 / 4R^2`` at
    ``rho`` metres from the centre, plus less than 1e-7 from the double projection
    within 400 km.

    Evaluated in blocks of :data:`_BLOCK` values that stay in the CPU cache, with
    half-angle tangents instead of sines and cosines (NumPy's vectorized ``tan``,
    ``arctanh``, ``tanh`` and ``cosh`` are several times faster than its ``sin`` and
    ``cos`` on float64), and ``atanh(sin(phi)) = 2 atanh(tan(phi / 2))``, which also
    stays accurate near the poles.
    """

    _cache: ClassVar[dict[tuple[type[_Stereographic], float, float], _Stereographic]] = {}

    def __init__(self, lat0: float, lon0: float) -> None:
        phi0 = math.radians(lat0)
        s0 = math.sin(phi0)
        w = 1.0 - _E2 * s0 * s0
        rho0 = _A * (1.0 - _E2) / w**1.5
        nu0 = _A / math.sqrt(w)
        self.radius2 = 2.0 * math.sqrt(rho0 * nu0)
        cos4 = math.cos(phi0) ** 4 * _E2 / (1.0 - _E2)
        self.n = n = math.sqrt(1.0 + cos4)
        n_less_1 = cos4 / (n + 1.0)
        # The sphere's centre latitude chi0 has sin(chi0) = sin(phi0) / n, and the shift
        # of isometric latitudes is atanh(sin(phi0) / n) - n q(phi0), both odd in phi0.
        # Written with 1 - |sin(phi0)| = 2 sin^2(colatitude / 2) so that a centre at or
        # near a pole (where both atanh diverge) stays exact.
        sign = math.copysign(1.0, lat0)
        a = 2.0 * math.sin(math.radians(90.0 - abs(lat0)) / 2.0) ** 2  # 1 - |sin(phi0)|
        s = 1.0 - a
        shift = math.log(n + s) - n * math.log(1.0 + s)
        if a > 0.0:  # (n - 1) log(a) - log(1 + (n - 1) / a), which tends to 0 at the pole
            shift += n_less_1 * math.log(a) - math.log1p(n_less_1 / a)
        self.shift = sign * (0.5 * shift + n * _E * math.atanh(_E * s))
        self.sin_chi0 = sign * s / n
        self.cos_chi0 = math.sqrt((n_less_1 + a) * (n + s)) / n
        self.lon0 = lon0

    @classmethod
    def of(cls, lat0: float, lon0: float) -> _Stereographic:
        key = (cls, float(lat0), float(lon0))
        found = cls._cache.get(key)
        if found is None:
            found = cls._cache[key] = cls(float(lat0), float(lon0))
        return found

    def forward(self, lat: np.ndarray, lon: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        east = lon - self.lon0
        if east.size and not (east.min() >= -180.0 and east.max() < 180.0):
            east = _wrap(east)
        return _blockwise(self._forward_block, lat, east)

    def _forward_block(
        self, lat: np.ndarray, east: np.ndarray, x: np.ndarray, y: np.ndarray
    ) -> None:
        """Degrees of latitude and of longitude east of the centre to metres, in place."""
        t = np.tan(lat * (math.pi / 360.0))  # tan(phi / 2)
        sin_phi = t * t
        sin_phi += 1.0
        np.divide(2.0 * t, sin_phi, out=sin_phi)
        # Isometric latitude atanh(sin phi) - e atanh(e sin phi), then Gauss's sphere.
        w = np.arctanh(t)
        w *= 2.0
        sin_phi *= _E
        w -= _E * np.arctanh(sin_phi)
        w *= self.n
        w += self.shift
        sin_chi = np.tanh(w)
        cos_chi = np.cosh(w, out=w)
        np.divide(1.0, cos_chi, out=cos_chi)
        # Conformal longitude n * (lon - lon0) from the tangent of its half.
        u = np.tan(east * (math.pi / 360.0 * self.n))
        cos_dl = u * u
        cos_dl += 1.0
        sin_dl = np.divide(2.0 * u, cos_dl)
        np.divide(2.0, cos_dl, out=cos_dl)
        cos_dl -= 1.0  # (1 - u^2) / (1 + u^2)
        cc = cos_chi * cos_dl
        b = self.cos_chi0 * cc
        b += 1.0
        b += self.sin_chi0 * sin_chi
        np.divide(self.radius2, b, out=b)
        np.multiply(b, cos_chi, out=x)
        x *= sin_dl
        np.multiply(self.cos_chi0, sin_chi, out=y)
        cc *= self.sin_chi0
        y -= cc
        y *= b

    def inverse(self, x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        return _blockwise(self._inverse_block, x, y)

    def _inverse_block(
        self, x: np.ndarray, y: np.ndarray, lat: np.ndarray, lon: np.ndarray
    ) -> None:
        """Metres to degrees (longitude not wrapped), in place."""
        xs = x * (1.0 / self.radius2)
        ys = y * (1.0 / self.radius2)
        t2 = xs * xs
        t2 += ys * ys
        one_minus = 1.0 - t2
        t2 += 1.0
        ys *= 2.0
        sin_chi = self.sin_chi0 * one_minus
        sin_chi += self.cos_chi0 * ys
        sin_chi /= t2
        np.clip(sin_chi, -1.0, 1.0, out=sin_chi)
        one_minus *= self.cos_chi0
        one_minus -= self.sin_chi0 * ys
        xs *= 2.0
        np.arctan2(xs, one_minus, out=lon)
        lon *= 180.0 / math.pi / self.n
        lon += self.lon0
        # Back from Gauss's sphere to the isometric latitude q, then to the ellipsoid's
        # conformal latitude (sine tanh q, cosine sech q) and to the geodetic latitude.
        q = np.arctanh(sin_chi, out=sin_chi)
        q -= self.shift
        q /= self.n
        s = np.tanh(q)
        c = np.cosh(q, out=q)
        np.divide(1.0, c, out=c)
        sin2 = s * c
        sin2 *= 2.0
        two_cos2 = s * s
        two_cos2 *= -4.0
        two_cos2 += 2.0
        # Clenshaw's sum of d_j sin(2 j chi), j = 1..6: b_j = 2 cos(2 chi) b_(j+1)
        # - b_(j+2) + d_j, and the sum is b_1 sin(2 chi).
        *rest, d5, d6 = _CHI_TO_PHI
        after = two_cos2 * d6
        after += d5
        b = two_cos2 * after
        b += rest[-1] - d6
        for d in reversed(rest[:-1]):
            after, b = b, np.subtract(two_cos2 * b, after)
            b += d
        b *= sin2
        np.arcsin(s, out=lat)
        lat += b
        lat *= 180.0 / math.pi


class _Equidistant(_Stereographic):
    """Azimuthal equidistant projection of Gauss's conformal sphere, in NumPy.

    Both projections are azimuthal on the same sphere of radius ``R``: a point at the
    angular distance ``c`` from the centre lies at ``2 R tan(c / 2)`` in the
    stereographic plane and at ``R c`` in this one, in the same direction. So each
    stereographic point is moved along its radius by ``atan(t) / t`` with
    ``t = rho / 2R`` (forward), or by ``tan(h) / h`` with ``h = rho / 2R`` (inverse).

    Accuracy. Gauss's sphere is conformal, with a scale within 1.2e-6 of 1 up to
    4.5 degrees of latitude from the centre's; on the sphere the AEQD's scale is 1 along
    the radius and ``c / sin c`` across it. So planar displacements are within
    ``(1 + 1.2e-6) c / sin c - 1`` of geodesic ones: 9.92e-4 at ``rho = 490 km`` on the
    smallest sphere (the equator's, R = 6,356.75 km; ``c / sin c`` reaches 1.001 at
    492 km). The points stay within 0.13 m of PROJ's ellipsoidal ``aeqd`` (measured
    from the equator to 89.9 degrees; ``tests/geo/test_projection.py``). Reference:
    J. P. Snyder, *Map Projections: A Working Manual*, USGS PP 1395 (1987), ch. 25.
    """

    def _forward_block(
        self, lat: np.ndarray, east: np.ndarray, x: np.ndarray, y: np.ndarray
    ) -> None:
        super()._forward_block(lat, east, x, y)
        t = x * x
        t += y * y
        np.sqrt(t, out=t)
        t *= 1.0 / self.radius2
        np.maximum(t, _TINY, out=t)  # the centre: atan(t) / t = 1
        f = np.arctan(t)
        f /= t
        x *= f
        y *= f

    def _inverse_block(
        self, x: np.ndarray, y: np.ndarray, lat: np.ndarray, lon: np.ndarray
    ) -> None:
        h = x * x
        h += y * y
        np.sqrt(h, out=h)
        h *= 1.0 / self.radius2  # half the angular distance
        np.maximum(h, _TINY, out=h)
        f = np.tan(h)
        f /= h
        f[h >= 0.5 * math.pi] = np.nan  # beyond the antipode: no point of the sphere
        super()._inverse_block(x * f, y * f, lat, lon)


_AZIMUTHAL: dict[str, type[_Stereographic]] = {
    "stereographic": _Stereographic,
    "aeqd": _Equidistant,
}


def _blockwise(
    step: Callable[[np.ndarray, np.ndarray, np.ndarray, np.ndarray], None],
    a: np.ndarray,
    b: np.ndarray,
) -> tuple[np.ndarray, np.ndarray]:
    """Two new arrays filled by ``step(a, b, out1, out2)`` over blocks of :data:`_BLOCK`."""
    first, second = np.empty(a.shape), np.empty(a.shape)
    # Poles and points opposite the centre pass through infinities on the way.
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        for start in range(0, a.size, _BLOCK):
            block = slice(start, start + _BLOCK)
            step(a[block], b[block], first[block], second[block])
    return first, second


def _wrap(degrees: np.ndarray) -> np.ndarray:
    return np.asarray(np.remainder(degrees + 180.0, 360.0) - 180.0)


def _degrees_beyond(lat: np.ndarray, lon_excess: np.ndarray, lat_excess: np.ndarray) -> np.ndarray:
    """Metres beyond a box edge, from excesses in degrees (negative: not beyond)."""
    metres_per_degree = math.pi / 180.0 * _EARTH_RADIUS_M
    east_west = np.maximum(lon_excess, 0.0) * metres_per_degree * np.cos(np.radians(lat))
    north_south = np.maximum(lat_excess, 0.0) * metres_per_degree
    return np.asarray(np.maximum(east_west, north_south))


def _outside_box(
    lat: np.ndarray, lon: np.ndarray, box: tuple[float, float, float, float]
) -> tuple[np.ndarray, np.ndarray]:
    south, west, north, east = box
    width = (east - west) % 360.0 or 360.0
    offset = np.remainder(lon - west, 360.0)  # degrees east of the west edge
    lon_excess = np.where(offset <= width, 0.0, np.minimum(offset - width, 360.0 - offset))
    lat_excess = np.maximum(south - lat, lat - north)
    mask = (lon_excess > 0) | (lat_excess > 0)
    return mask, _degrees_beyond(lat[mask], lon_excess[mask], lat_excess[mask])


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


def check_coordinates(
    lat: np.ndarray, lon: np.ndarray, lat_name: str, lon_name: str, *, east: bool = True
) -> None:
    """Refuse missing or out-of-range coordinates, naming the column and the values.

    With ``east`` (the default, for data columns) longitudes may follow either
    convention, -180..180 or 0..360 (east of Greenwich, as seismic and climate tables
    give them): the projections measure longitude offsets on the circle, and masked
    points come back in [-180, 180). Without it (a centre) only -180..180 is accepted.
    """
    for name, values, limit in ((lat_name, lat, 90.0), (lon_name, lon, 180.0)):
        # Two reductions when all is well (NaN makes both comparisons false); the
        # checks below name the fault.
        if values.size == 0 or (values.min() >= -limit and values.max() <= limit):
            continue
        if east and name == lon_name and values.min() >= 0.0 and values.max() <= 360.0:
            warnings.warn(
                f"column {name!r}: longitudes in 0-360 (east of Greenwich) are measured on "
                "the circle; masked points are written in -180..180",
                UserWarning,
                stacklevel=3,
            )
            continue  # the 0-360 convention
        bad = ~np.isfinite(values)
        if bad.any():
            raise DomainError(
                f"column {name!r}: {int(bad.sum())} missing or infinite coordinates; "
                "drop them or pass missing='keep'"
            )
        outside = np.abs(values) > limit
        if outside.any():
            allowed = (
                "[-180, 180], or [0, 360] for every value of the column"
                if east and name == lon_name
                else f"[-{limit:g}, {limit:g}]"
            )
            raise DomainError(
                f"column {name!r}: must lie in {allowed}, got "
                f"{values[outside][:5].tolist()} ({int(outside.sum())} rows)"
            )


def local_projection(
    lat: np.ndarray,
    lon: np.ndarray,
    *,
    method: ProjectionMethod = "auto",
    max_extent_km: float = 1000.0,
) -> LocalProjection:
    """Choose the planar system in metres from the points themselves (a leak).

    The centre and zone depend on every record, so the masked location of each record
    depends on the others; the result carries ``from_data=True`` and the masks warn
    (:class:`~veil.errors.PrivacyLeakWarning`) and record the leak when given it. Use
    :func:`projection_at`, :func:`projection_for_region` or :func:`projection_for_crs`
    for a release.

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
        return LocalProjection("utm", utm, lat0, lon0, from_data=True)
    crs = f"+proj=aeqd +lat_0={lat0:.10f} +lon_0={lon0:.10f} +datum=WGS84 +units=m +no_defs"
    return LocalProjection("aeqd", crs, lat0, lon0, from_data=True)


def projection_at(
    centre_lat: float, centre_lon: float, *, method: PublicMethod = "aeqd"
) -> LocalProjection:
    """The projection centred on a public point (a city centre), independent of the data.

    Choosing the projection from the data makes every masked point depend on the other
    records (through the centre); a projection fixed from public knowledge does not.

    Parameters
    ----------
    centre_lat, centre_lon : float
        The public centre, degrees.
    method : {"aeqd", "utm", "stereographic"}, default "aeqd"
        ``"aeqd"``: azimuthal equidistant, within 0.1 % of geodesic distances up to
        490 km from the centre (evaluated in NumPy on Gauss's conformal sphere, within
        0.13 m of PROJ's ellipsoidal AEQD there). ``"utm"``: the centre's UTM zone
        (PROJ), within 0.1 % up to 3 degrees of longitude from its central meridian.
        ``"stereographic"``: oblique stereographic on Gauss's conformal sphere (NumPy,
        slightly faster than ``"aeqd"``), within 0.1 % up to 400 km from the centre.

    Examples
    --------
    >>> projection = projection_at(40.75, -73.98, method="stereographic")
    >>> x, y = projection.forward(np.array([40.75]), np.array([-73.98]))
    >>> bool(abs(x[0]) < 1e-6 and abs(y[0]) < 1e-6)
    True
    """
    check_coordinates(
        np.array([centre_lat], dtype=np.float64),
        np.array([centre_lon], dtype=np.float64),
        "centre_lat",
        "centre_lon",
        east=False,
    )
    lat0, lon0 = float(centre_lat), float(centre_lon)
    if method == "utm":
        if abs(lat0) > _UTM_MAX_LAT:
            raise ParameterError(f"method: UTM is undefined at latitude {lat0}; use 'aeqd'")
        return LocalProjection("utm", _utm(lat0, lon0), lat0, lon0)
    if method == "stereographic":
        crs = (
            f"+proj=sterea +lat_0={lat0:.10f} +lon_0={lon0:.10f} +k=1 "
            "+datum=WGS84 +units=m +no_defs"
        )
        return LocalProjection("stereographic", crs, lat0, lon0)
    if method != "aeqd":
        raise ParameterError(f"method: must be 'aeqd', 'utm' or 'stereographic', got {method!r}")
    crs = f"+proj=aeqd +lat_0={lat0:.10f} +lon_0={lon0:.10f} +datum=WGS84 +units=m +no_defs"
    return LocalProjection("aeqd", crs, lat0, lon0)


def projection_for_region(
    south: float, west: float, north: float, east: float, *, method: PublicMethod = "aeqd"
) -> LocalProjection:
    """The projection for a public bounding box; points outside the box are outside.

    Parameters
    ----------
    south, west, north, east : float
        The box in degrees; ``west > east`` crosses the antimeridian.
    method : {"aeqd", "utm", "stereographic"}, default "aeqd"
        Projection centred on the box (see :func:`projection_at`); the whole box must
        lie in its 0.1 % region.

    Raises
    ------
    veil.errors.ParameterError
        A malformed box, or one too large for the method.

    Examples
    --------
    >>> projection = projection_for_region(40.49, -74.26, 40.92, -73.70)
    >>> projection.region
    (40.49, -74.26, 40.92, -73.7)
    """
    for name, value, limit in (
        ("south", south, 90.0),
        ("west", west, 180.0),
        ("north", north, 90.0),
        ("east", east, 180.0),
    ):
        if (
            isinstance(value, bool)
            or not isinstance(value, (int, float, np.integer, np.floating))
            or not math.isfinite(float(value))
            or abs(float(value)) > limit
        ):
            raise ParameterError(
                f"{name}: must be a number of degrees in [-{limit:g}, {limit:g}], got {value!r}"
            )
    s, w, n, e = float(south), float(west), float(north), float(east)
    if not s < n:
        raise ParameterError(f"south, north: need south < north, got {s:g} >= {n:g}")
    width = (e - w) % 360.0
    if width == 0.0:
        raise ParameterError(f"west, east: the box has no width ({w:g} to {e:g})")
    centre_lon = float(_wrap(np.array([w + width / 2.0]))[0])
    projection = projection_at((s + n) / 2.0, centre_lon, method=method)
    edge = np.linspace(0.0, 1.0, 65)
    lat = np.concatenate([s + (n - s) * edge, s + (n - s) * edge, np.full(65, s), np.full(65, n)])
    lon = _wrap(
        np.concatenate([np.full(65, w), np.full(65, w + width), w + width * edge, w + width * edge])
    )
    far, beyond_km = projection.outside(lat, lon)
    if far.any():
        raise ParameterError(
            f"south, west, north, east: the box reaches {beyond_km:.0f} km beyond the region "
            f"where {method!r} centred on it keeps distances within 0.1 %; split the region "
            "or use a smaller box"
        )
    return LocalProjection(
        projection.method, projection.crs, projection.centre_lat, centre_lon, region=(s, w, n, e)
    )


def projection_for_crs(crs: str) -> LocalProjection:
    """The projection of a named planar CRS in metres (``"EPSG:32616"``).

    A UTM code gives the ``"utm"`` projection of that zone; any other projected CRS in
    metres is used through PROJ, over its declared area of use and only where its
    scale factors stay within 0.1 % (points elsewhere are outside).

    Raises
    ------
    veil.errors.ParameterError
        An unknown CRS, a geographic one, or one whose unit is not the metre.

    Examples
    --------
    >>> projection_for_crs("EPSG:32616").method
    'utm'
    """
    pyproj = _pyproj()
    if not isinstance(crs, str):
        raise ParameterError(f"crs: must be a CRS name such as 'EPSG:32616', got {crs!r}")
    try:
        parsed = pyproj.CRS.from_user_input(crs)
    except pyproj.exceptions.CRSError:
        raise ParameterError(f"crs: PROJ does not know {crs!r}") from None
    unit = parsed.axis_info[0].unit_name if parsed.axis_info else ""
    if not parsed.is_projected or unit not in ("metre", "meter"):
        raise ParameterError(
            f"crs: must be a projected CRS in metres, got {crs!r} "
            f"({'projected' if parsed.is_projected else 'not projected'}, unit {unit or 'none'})"
        )
    code = parsed.to_epsg()
    if code is not None and (32601 <= code <= 32660 or 32701 <= code <= 32760):
        meridian = -183.0 + 6.0 * (code % 100)
        lat0 = 42.0 if code < 32700 else -40.0
        return LocalProjection("utm", f"EPSG:{code}", lat0, meridian)
    area = parsed.area_of_use
    if area is None:
        raise ParameterError(f"crs: {crs!r} declares no area of use to check the points against")
    west, south, east, north = area.bounds
    width = (east - west) % 360.0 or 360.0
    centre_lon = float(_wrap(np.array([west + width / 2.0]))[0])
    return LocalProjection(
        "crs",
        parsed.to_string(),
        (south + north) / 2.0,
        centre_lon,
        region=(float(south), float(west), float(north), float(east)),
    )
