"""Geographic masks in projected metres: planar Laplace, grid, jitter and donut.

Every mask reads the coordinate columns of a frame, projects them to a local system in
metres (:mod:`veil.geo.projection`), displaces or aggregates them there, projects back
and returns a new frame with the coordinate columns replaced; the caller's frame is
never modified. Randomized masks take ``rng=`` (see :mod:`veil.rng`).
"""

from __future__ import annotations

import math
from typing import Any, Literal

import numpy as np
import pandas as pd

from veil.errors import ParameterError
from veil.geo._frame import MAX_OUTSIDE, check_metres, read_points, write_points
from veil.geo.projection import LocalProjection
from veil.mechanisms import PlanarLaplace, PrivacyCost, PrivacyLedger
from veil.mechanisms._validation import check_epsilon
from veil.rng import RngLike, resolve_rng

__all__ = ["donut", "grid", "jitter", "planar_laplace"]

Projection = LocalProjection | str | None
Outside = Literal["error", "drop"]
# epsilon (per metre) below which the mean displacement 2 / epsilon exceeds 20,000 km.
_MIN_EPSILON = 1e-7


def planar_laplace(
    df: pd.DataFrame,
    lat: str,
    lon: str,
    epsilon: float,
    *,
    reports: int = 1,
    truncate_to: Any = None,
    grid_m: float | None = None,
    projection: Projection = None,
    outside: Outside = "error",
    max_outside: float = MAX_OUTSIDE,
    missing: str = "error",
    rng: RngLike = None,
    ledger: PrivacyLedger | None = None,
) -> pd.DataFrame:
    """Geo-indistinguishability: planar Laplace noise in metres, ε per metre.

    Each location moves by a displacement with uniform angle and a
    ``Gamma(2, 1/ε)`` length, drawn in the local projected plane (Andrés et al.,
    "Geo-indistinguishability", CCS 2013). Two true locations ``d`` metres apart give
    output distributions within a factor ``e^(ε d)``.

    Parameters
    ----------
    df : pandas.DataFrame
        Not modified.
    lat, lon : str
        Coordinate columns, in degrees.
    epsilon : float
        Privacy budget per metre (0.01: median displacement about 168 m).
    reports : int, default 1
        How many independently masked reports of the same person this release holds;
        they compose, so the recorded cost is ``reports * ε`` per metre.
    truncate_to : shapely geometry, optional
        Region (in lon/lat, as shapely orders coordinates) the outputs must fall in;
        an output outside is moved to the nearest point of the region (post-processing,
        which keeps the guarantee; resampling would not). Needs shapely.
    grid_m : float, optional
        Snap outputs to a square grid of this step in metres (Andrés et al. 2013,
        Section 5; post-processing).
    projection : LocalProjection or "data"
        The planar system, from public knowledge: :func:`veil.geo.projection_at` (a
        public centre), :func:`veil.geo.projection_for_region` (a public box) or
        :func:`veil.geo.projection_for_crs` (a named CRS). Required: there is no
        default. ``"data"`` (or the legacy ``"auto"``, ``"utm"``, ``"aeqd"``) chooses it
        from the records, which makes every masked location depend on the others: a
        :class:`~veil.errors.PrivacyLeakWarning` says so and the output's
        ``attrs["veil.leaks"]`` records it. ``projection_at(lat, lon)`` (its
        default AEQD, 490 km) and ``method="stereographic"`` (400 km) are evaluated in
        NumPy, within 0.1 % of geodesic distances in their regions and several times
        faster than PROJ's UTM transform.
    outside : {"error", "drop"}, default "error"
        Records beyond the region where the projection keeps distances within 0.1 %
        (490 km from an AEQD centre, 3 degrees of longitude from a UTM zone's central
        meridian, a region's box): ``"error"`` refuses them, naming how many and how
        far; ``"drop"`` leaves them out of the output and records their number in
        ``attrs["veil.masking"]``.
    max_outside : float, default 0.2
        With ``outside="drop"``, the largest share of the records that may be dropped;
        more is refused (a centre with a sign typo would empty the release).
    missing : {"error", "keep"}, default "error"
    rng : None, int or numpy.random.Generator
    ledger : veil.mechanisms.PrivacyLedger, optional

    Returns
    -------
    pandas.DataFrame
        The frame with masked coordinates.
    """
    eps = check_epsilon(epsilon)
    if eps < _MIN_EPSILON:
        raise ParameterError(
            f"epsilon: must be at least {_MIN_EPSILON:g} per metre (a mean displacement of "
            f"20,000 km, what a projection can represent), got {epsilon!r}"
        )
    if isinstance(reports, bool) or not isinstance(reports, int) or reports < 1:
        raise ParameterError(f"reports: must be an integer >= 1, got {reports!r}")
    step = None if grid_m is None else check_metres(grid_m, "grid_m")
    points = read_points(
        df,
        lat,
        lon,
        missing=missing,
        projection=projection,
        outside=outside,
        max_outside=max_outside,
    )
    mechanism = PlanarLaplace(eps)
    x, y, _ = mechanism.sample(points.x.size, resolve_rng(rng, stacklevel=3))
    x += points.x  # the displacement east and north, moved to each point
    y += points.y
    if truncate_to is not None:
        x, y = _truncate(x, y, truncate_to, points.projection)
    if step is not None:
        x = (np.floor(x / step) + 0.5) * step
        y = (np.floor(y / step) + 0.5) * step
    base = mechanism.cost(f"{lat}, {lon}")
    cost = PrivacyCost(
        base.epsilon * reports,
        0.0,
        "metric",
        "metre",
        base.scope,
        f"planar laplace ({points.projection.method}"
        + (", projection chosen from the data" if points.projection.from_data else "")
        + ")"
        + (f", {reports} reports" if reports > 1 else ""),
    )
    return write_points(df, lat, lon, points, x, y, cost=cost, ledger=ledger)


def _truncate(
    x: np.ndarray, y: np.ndarray, region: Any, projection: LocalProjection
) -> tuple[np.ndarray, np.ndarray]:
    try:
        import shapely
    except ImportError as exc:  # pragma: no cover
        raise ImportError("truncate_to needs shapely: pip install 'veil[geo]'") from exc
    if not isinstance(region, shapely.Geometry) or region.is_empty:
        raise ParameterError(f"truncate_to: must be a non-empty shapely geometry, got {region!r}")

    def to_metres(coords: np.ndarray) -> np.ndarray:
        px, py = projection.forward(coords[:, 1], coords[:, 0])
        return np.column_stack([px, py])

    # Straight edges in degrees are curves in metres: densify before projecting so the
    # region keeps its shape (segments of at most 0.001 degree, about 100 m).
    planar = shapely.transform(shapely.segmentize(region, 0.001), to_metres)
    points = shapely.points(x, y)
    outside = ~shapely.contains_xy(planar, x, y)
    if outside.any():
        lines = shapely.shortest_line(points[outside], planar)
        ends = shapely.get_coordinates(shapely.get_point(lines, 1))
        x, y = x.copy(), y.copy()
        x[outside], y[outside] = ends[:, 0], ends[:, 1]
    return x, y


def grid(
    df: pd.DataFrame,
    lat: str,
    lon: str,
    cell_m: float,
    *,
    min_count: int | None = None,
    projection: Projection = None,
    outside: Outside = "error",
    max_outside: float = MAX_OUTSIDE,
    missing: str = "error",
) -> pd.DataFrame:
    """Aggregate locations to the centres of square cells of ``cell_m`` metres.

    Deterministic; no formal guarantee (Armstrong, Rushton and Zimmerman 1999). With
    ``min_count``, points in cells holding fewer than ``min_count`` points are suppressed
    (their coordinates become missing), so no released cell centre stands for fewer people.
    The cells are anchored on the projection's origin, so with a public projection no
    record moves another's cell.

    Parameters
    ----------
    df : pandas.DataFrame
        Not modified.
    lat, lon : str
        Coordinate columns, in degrees.
    cell_m : float
        Cell side in metres, in (0, 20,000 km].
    min_count : int, optional
        Suppress the points of cells holding fewer points.
    projection : LocalProjection or "data"
        The planar system, from public knowledge: :func:`veil.geo.projection_at` (a
        public centre), :func:`veil.geo.projection_for_region` (a public box) or
        :func:`veil.geo.projection_for_crs` (a named CRS). Required: there is no
        default. ``"data"`` (or the legacy ``"auto"``, ``"utm"``, ``"aeqd"``) chooses it
        from the records, which makes every masked location depend on the others: a
        :class:`~veil.errors.PrivacyLeakWarning` says so and the output's
        ``attrs["veil.leaks"]`` records it.
    outside : {"error", "drop"}, default "error"
        Records beyond the region where the projection keeps distances within 0.1 %
        (490 km from an AEQD centre, 3 degrees of longitude from a UTM zone's central
        meridian, a region's box): ``"error"`` refuses them, naming how many and how
        far; ``"drop"`` leaves them out of the output and records their number in
        ``attrs["veil.masking"]``.
    max_outside : float, default 0.2
        With ``outside="drop"``, the largest share of the records that may be dropped;
        more is refused (a centre with a sign typo would empty the release).
    missing : {"error", "keep"}, default "error"
    """
    step = check_metres(cell_m, "cell_m")
    if min_count is not None and (
        isinstance(min_count, bool) or not isinstance(min_count, int) or min_count < 1
    ):
        raise ParameterError(f"min_count: must be an integer >= 1, got {min_count!r}")
    points = read_points(
        df,
        lat,
        lon,
        missing=missing,
        projection=projection,
        outside=outside,
        max_outside=max_outside,
    )
    col = np.floor(points.x / step)
    row = np.floor(points.y / step)
    x, y = (col + 0.5) * step, (row + 0.5) * step
    if min_count is not None and x.size:
        cells = np.stack([col, row], axis=1).view(np.complex128).ravel()
        codes, _ = pd.factorize(cells)
        counts = np.bincount(codes)[codes]
        sparse = counts < min_count
        x, y = np.where(sparse, np.nan, x), np.where(sparse, np.nan, y)
    return write_points(df, lat, lon, points, x, y)


def jitter(
    df: pd.DataFrame,
    lat: str,
    lon: str,
    radius_m: float,
    *,
    kind: Literal["disc", "gaussian"] = "disc",
    projection: Projection = None,
    outside: Outside = "error",
    max_outside: float = MAX_OUTSIDE,
    missing: str = "error",
    rng: RngLike = None,
) -> pd.DataFrame:
    """Random displacement: uniform over a disc of ``radius_m``, or Gaussian.

    ``kind="disc"``: uniform over the disc's area (radius ``R √U``, uniform angle).
    ``kind="gaussian"``: independent normal east and north offsets with standard
    deviation ``radius_m``. No formal guarantee, and repeated releases with fresh
    noise average out.

    Parameters
    ----------
    df : pandas.DataFrame
        Not modified.
    lat, lon : str
        Coordinate columns, in degrees.
    radius_m : float
        Disc radius or standard deviation in metres, in (0, 20,000 km].
    kind : {"disc", "gaussian"}, default "disc"
    projection : LocalProjection or "data"
        The planar system, from public knowledge: :func:`veil.geo.projection_at` (a
        public centre), :func:`veil.geo.projection_for_region` (a public box) or
        :func:`veil.geo.projection_for_crs` (a named CRS). Required: there is no
        default. ``"data"`` (or the legacy ``"auto"``, ``"utm"``, ``"aeqd"``) chooses it
        from the records, which makes every masked location depend on the others: a
        :class:`~veil.errors.PrivacyLeakWarning` says so and the output's
        ``attrs["veil.leaks"]`` records it.
    outside : {"error", "drop"}, default "error"
        Records beyond the region where the projection keeps distances within 0.1 %
        (490 km from an AEQD centre, 3 degrees of longitude from a UTM zone's central
        meridian, a region's box): ``"error"`` refuses them, naming how many and how
        far; ``"drop"`` leaves them out of the output and records their number in
        ``attrs["veil.masking"]``.
    max_outside : float, default 0.2
        With ``outside="drop"``, the largest share of the records that may be dropped;
        more is refused (a centre with a sign typo would empty the release).
    missing : {"error", "keep"}, default "error"
    rng : None, int or numpy.random.Generator
    """
    scale = check_metres(radius_m, "radius_m")
    if kind not in ("disc", "gaussian"):
        raise ParameterError(f"kind: must be 'disc' or 'gaussian', got {kind!r}")
    points = read_points(
        df,
        lat,
        lon,
        missing=missing,
        projection=projection,
        outside=outside,
        max_outside=max_outside,
    )
    generator = resolve_rng(rng, stacklevel=3)
    n = points.x.size
    if kind == "gaussian":
        east, north = generator.normal(0.0, scale, n), generator.normal(0.0, scale, n)
    else:
        east, north = _polar(scale * np.sqrt(generator.random(n)), generator)
    return write_points(df, lat, lon, points, points.x + east, points.y + north)


def donut(
    df: pd.DataFrame,
    lat: str,
    lon: str,
    r_min_m: float,
    r_max_m: float,
    *,
    projection: Projection = None,
    outside: Outside = "error",
    max_outside: float = MAX_OUTSIDE,
    missing: str = "error",
    rng: RngLike = None,
) -> pd.DataFrame:
    """Donut masking: a displacement uniform over the annulus ``r_min_m <= r <= r_max_m``.

    Uniform over the annulus area (radius ``√U(r_min², r_max²)``) and over the angle, so
    that no point stays within ``r_min_m`` of its true location (Armstrong, Rushton and
    Zimmerman 1999; Hampton et al. 2010). No formal guarantee.

    Parameters
    ----------
    df : pandas.DataFrame
        Not modified.
    lat, lon : str
        Coordinate columns, in degrees.
    r_min_m, r_max_m : float
        Inner and outer radius in metres, ``0 <= r_min_m < r_max_m <= 20,000 km``.
    projection : LocalProjection or "data"
        The planar system, from public knowledge: :func:`veil.geo.projection_at` (a
        public centre), :func:`veil.geo.projection_for_region` (a public box) or
        :func:`veil.geo.projection_for_crs` (a named CRS). Required: there is no
        default. ``"data"`` (or the legacy ``"auto"``, ``"utm"``, ``"aeqd"``) chooses it
        from the records, which makes every masked location depend on the others: a
        :class:`~veil.errors.PrivacyLeakWarning` says so and the output's
        ``attrs["veil.leaks"]`` records it.
    outside : {"error", "drop"}, default "error"
        Records beyond the region where the projection keeps distances within 0.1 %
        (490 km from an AEQD centre, 3 degrees of longitude from a UTM zone's central
        meridian, a region's box): ``"error"`` refuses them, naming how many and how
        far; ``"drop"`` leaves them out of the output and records their number in
        ``attrs["veil.masking"]``.
    max_outside : float, default 0.2
        With ``outside="drop"``, the largest share of the records that may be dropped;
        more is refused (a centre with a sign typo would empty the release).
    missing : {"error", "keep"}, default "error"
    rng : None, int or numpy.random.Generator
    """
    outer = check_metres(r_max_m, "r_max_m")
    inner = check_metres(r_min_m, "r_min_m", zero=True)
    if not inner < outer:
        raise ParameterError(f"r_min_m: must be less than r_max_m ({outer:g}), got {r_min_m!r}")
    points = read_points(
        df,
        lat,
        lon,
        missing=missing,
        projection=projection,
        outside=outside,
        max_outside=max_outside,
    )
    generator = resolve_rng(rng, stacklevel=3)
    n = points.x.size
    radius = np.sqrt(inner**2 + generator.random(n) * (outer**2 - inner**2))
    east, north = _polar(radius, generator)
    return write_points(df, lat, lon, points, points.x + east, points.y + north)


def _polar(radius: np.ndarray, generator: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    theta = generator.random(radius.size) * (2.0 * math.pi)
    return radius * np.sin(theta), radius * np.cos(theta)
