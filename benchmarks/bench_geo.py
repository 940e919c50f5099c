"""Side-by-side benchmark of veil.geo against per-point baselines and peer tools.

Cases, each at every ``--points`` size (NYC-like points: latitude 40.75 +- 0.05,
longitude -73.98 +- 0.05, uniform, from ``numpy.random.Generator(PCG64(seed))``):

* ``cloak k=K``: a per-point quadtree cloak that rescans the points at every level for
  every point (the seed library's description: for each location, descend from the
  bounding box into the quadrant holding it while that quadrant still holds ``k``
  points, counting them by a scan) against ``veil.geo.cloak``;
* ``planar laplace (loop)``: a Python loop calling a per-point function (draw an angle
  and a Gamma(2, 1/eps) radius, convert metres to degrees on a sphere) against
  ``veil.geo.planar_laplace`` (projection included);
* ``planar laplace (textbook, <method>)``: the textbook vectorized NumPy version (uniform
  angle, Gamma(2, 1/eps) radius, metres to degrees by the equirectangular approximation
  on a sphere of 6,371,008.8 m) against ``veil.geo.planar_laplace`` with the public
  centre's projection, ``stereographic`` and ``aeqd`` (NumPy, on Gauss's conformal
  sphere; ``aeqd`` is ``projection_at``'s default) and ``utm`` (PROJ);
* ``planar laplace (trasgoDP)``: ``trasgodp.geoindis.metric_privacy`` against
  ``veil.geo.planar_laplace``;
* ``donut (MaskMyPy)``: ``maskmypy.donut`` on a GeoDataFrame projected to UTM 18N and
  back (the projection is timed, as veil's is) against ``veil.geo.donut``.

Both sides run in this process on the same frame; every veil call gets the public
projection of the frame's centre (``projection_at(40.75, -73.98, method=...)``,
stereographic unless the case names another; ``default`` is ``projection_at``'s own
default). Figures: ``--repeats`` rounds, each one baseline run then one veil run (a side
whose first run took over 5 s runs once), as min / median / max, the ratio of the
medians (baseline / veil), the 1-minute load average after the rounds, and the peak of
Python allocations (``tracemalloc``) in a separate traced run.

Accuracy: on ``--accuracy-points`` points spread uniformly over a disc of each of the
``--accuracy-radius-km`` radii around the centre, each planar Laplace version runs with a
seeded generator (a projection whose region does not hold the disc is left out and
said so), the radius it drew is drawn again from the same seed, and the length
each point actually moved along the WGS 84 ellipsoid (``pyproj.Geod.inv``) is compared
with it: the table gives the largest and the 99.9th percentile of
``|geodesic / radius - 1|`` (goal: within 0.1 %).

    python benchmarks/bench_geo.py --points 1e4,1e5,1e6
    python benchmarks/bench_geo.py --points 1e6 --quadtree-cap 1e4 --json geo.json

Not part of the test suite.
"""

from __future__ import annotations

import argparse
import gc
import json
import math
import os
import platform
import statistics
import sys
import time
import tracemalloc
import warnings
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np
import pandas as pd

EPSILON = 0.01  # per metre: mean displacement 200 m
DONUT_M = (100.0, 500.0)
EARTH_RADIUS_M = 6_371_008.8
SLOW_SECONDS = 5.0
TARGETS = {"cloak": 10.0, "planar laplace": 0.5, "donut": 0.5}  # seconds at 1M points
CENTRE = (40.75, -73.98)  # the public centre of the generated points
# veil at most this many times the textbook NumPy version, at 1M points.
TEXTBOOK_TARGET = 2.0
ACCURACY_TARGET = 1e-3  # |geodesic displacement / drawn radius - 1|


@dataclass
class Row:
    case: str
    points: int
    baseline_s: float | None = None  # the median of the rounds
    veil_s: float | None = None
    baseline_mb: float | None = None
    veil_mb: float | None = None
    note: str = ""
    baseline_runs: list[float] = field(default_factory=list)
    veil_runs: list[float] = field(default_factory=list)
    load: str = ""

    @property
    def ratio(self) -> float | None:
        if self.baseline_s is None or self.veil_s is None or self.veil_s == 0:
            return None
        return self.baseline_s / self.veil_s


def make_points(n: int, seed: int) -> pd.DataFrame:
    rng = np.random.Generator(np.random.PCG64(seed))
    return pd.DataFrame(
        {"lat": 40.75 + rng.uniform(-0.05, 0.05, n), "lon": -73.98 + rng.uniform(-0.05, 0.05, n)}
    )


# --- baselines ----------------------------------------------------------------------------


def quadtree_cloak_per_point(df: pd.DataFrame, k: int, min_cell_deg: float = 1e-5) -> pd.DataFrame:
    """For each point, descend the quadtree by rescanning the points at every level."""
    lat = df["lat"].to_numpy()
    lon = df["lon"].to_numpy()
    south, north = lat.min(), lat.max() + 1e-12
    west, east = lon.min(), lon.max() + 1e-12
    out_lat = np.empty_like(lat)
    out_lon = np.empty_like(lon)
    for i in range(lat.size):
        s, n, w, e = south, north, west, east
        inside_lat, inside_lon = lat, lon
        while (n - s) > min_cell_deg:
            mid_lat, mid_lon = (s + n) / 2, (w + e) / 2
            qs, qn = (s, mid_lat) if lat[i] < mid_lat else (mid_lat, n)
            qw, qe = (w, mid_lon) if lon[i] < mid_lon else (mid_lon, e)
            hit = (inside_lat >= qs) & (inside_lat < qn) & (inside_lon >= qw) & (inside_lon < qe)
            if int(hit.sum()) < k:
                break
            s, n, w, e = qs, qn, qw, qe
            inside_lat, inside_lon = inside_lat[hit], inside_lon[hit]
        out_lat[i], out_lon[i] = (s + n) / 2, (w + e) / 2
    out = df.copy()
    out["lat"], out["lon"] = out_lat, out_lon
    return out


def _laplace_point(
    lat: float, lon: float, epsilon: float, rng: np.random.Generator
) -> tuple[float, float]:
    theta = rng.random() * 2 * math.pi
    radius = rng.gamma(2.0, 1.0 / epsilon)
    north, east = radius * math.cos(theta), radius * math.sin(theta)
    dlat = math.degrees(north / EARTH_RADIUS_M)
    dlon = math.degrees(east / (EARTH_RADIUS_M * math.cos(math.radians(lat))))
    return lat + dlat, lon + dlon


def planar_laplace_textbook(
    df: pd.DataFrame, epsilon: float, rng: np.random.Generator | None = None
) -> pd.DataFrame:
    """The textbook vectorized version: angle, Gamma radius, equirectangular degrees."""
    rng = np.random.default_rng() if rng is None else rng
    lat = df["lat"].to_numpy()
    lon = df["lon"].to_numpy()
    theta = rng.random(lat.size) * (2 * math.pi)
    radius = rng.gamma(2.0, 1.0 / epsilon, lat.size)
    dlat = np.degrees(radius * np.cos(theta) / EARTH_RADIUS_M)
    dlon = np.degrees(radius * np.sin(theta) / (EARTH_RADIUS_M * np.cos(np.radians(lat))))
    out = df.copy()
    out["lat"], out["lon"] = lat + dlat, lon + dlon
    return out


def planar_laplace_loop(df: pd.DataFrame, epsilon: float) -> pd.DataFrame:
    rng = np.random.default_rng()
    pairs = [
        _laplace_point(a, b, epsilon, rng)
        for a, b in zip(df["lat"].tolist(), df["lon"].tolist(), strict=True)
    ]
    out = df.copy()
    out[["lat", "lon"]] = np.array(pairs, dtype=np.float64).reshape(-1, 2)
    return out


def maskmypy_donut(df: pd.DataFrame, low: float, high: float) -> pd.DataFrame:
    import geopandas
    import maskmypy

    gdf = geopandas.GeoDataFrame(
        df, geometry=geopandas.points_from_xy(df["lon"], df["lat"]), crs="EPSG:4326"
    ).to_crs("EPSG:32618")
    masked = maskmypy.donut(gdf, low, high).to_crs("EPSG:4326")
    out = df.copy()
    out["lat"], out["lon"] = masked.geometry.y.to_numpy(), masked.geometry.x.to_numpy()
    return out


# --- measurement ----------------------------------------------------------------------------


def quiet(call: Callable[[], Any], category: type[Warning]) -> Callable[[], Any]:
    """``call`` with warnings of ``category`` silenced."""

    def run() -> Any:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", category)
            return call()

    return run


def _once(call: Callable[[], Any]) -> float:
    gc.collect()
    start = time.perf_counter()
    call()
    return time.perf_counter() - start


def traced_mb(call: Callable[[], Any]) -> float:
    gc.collect()
    tracemalloc.start()
    try:
        call()
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return peak / 2**20


def measure(
    row: Row,
    baseline: Callable[[], Any] | None,
    ours: Callable[[], Any] | None,
    args: argparse.Namespace,
) -> Row:
    """Alternate one baseline run and one veil run for ``--repeats`` rounds (a side
    whose first run took over 5 s runs once); the medians go in the row."""
    for i in range(args.repeats):
        for side, call in (("baseline", baseline), ("veil", ours)):
            runs: list[float] = getattr(row, f"{side}_runs")
            if call is None or (i > 0 and runs[0] > SLOW_SECONDS):
                continue
            runs.append(_once(call))
    row.load = f"{os.getloadavg()[0]:.1f}"
    for side, call in (("baseline", baseline), ("veil", ours)):
        runs = getattr(row, f"{side}_runs")
        if not runs:
            continue
        setattr(row, f"{side}_s", statistics.median(runs))
        if not args.no_trace and min(runs) <= args.trace_limit:
            setattr(row, f"{side}_mb", traced_mb(call))  # type: ignore[arg-type]
    print(format_row(row), flush=True)
    return row


def cases(n: int, args: argparse.Namespace) -> list[Row]:
    import veil.geo
    from veil.errors import PrivacyLeakWarning

    df = make_points(n, args.seed)
    rows: list[Row] = []
    public = veil.geo.projection_at(*CENTRE, method="stereographic")

    try:
        from veil.geo.cloak import cloak
    except ImportError:
        cloak = None
    row = Row(f"cloak k={args.k}", n)
    quad = None
    if n <= args.quadtree_cap:
        quad = lambda: quadtree_cloak_per_point(df, args.k)  # noqa: E731
    else:
        row.note = f"baseline skipped above --quadtree-cap {args.quadtree_cap:g}"
    # Like the baseline, veil's quadtree root comes from the data here (it warns so).
    ours = (
        None
        if cloak is None
        else quiet(lambda: cloak(df, "lat", "lon", args.k, projection=public), PrivacyLeakWarning)
    )
    if cloak is None:
        row.note = (row.note + "; " if row.note else "") + "veil.geo.cloak absent"
    rows.append(measure(row, quad, ours, args))

    def veil_laplace(projection: Any = public) -> Any:
        return veil.geo.planar_laplace(df, "lat", "lon", EPSILON, projection=projection)

    row = Row("planar laplace (loop)", n)
    loop = None
    if n <= args.loop_cap:
        loop = lambda: planar_laplace_loop(df, EPSILON)  # noqa: E731
    else:
        row.note = f"baseline skipped above --loop-cap {args.loop_cap:g}"
    rows.append(measure(row, loop, veil_laplace, args))

    for method in ("default", "stereographic", "aeqd", "utm"):
        projection = (
            veil.geo.projection_at(*CENTRE)
            if method == "default"
            else veil.geo.projection_at(*CENTRE, method=method)  # type: ignore[arg-type]
        )
        label = f"default: {projection.method}" if method == "default" else method
        row = Row(f"planar laplace (textbook, {label})", n)
        rows.append(
            measure(
                row,
                lambda: planar_laplace_textbook(df, EPSILON),
                lambda projection=projection: veil_laplace(projection),
                args,
            )
        )

    row = Row("planar laplace (trasgoDP)", n)
    try:
        import trasgodp.geoindis as t_geo

        trasgo = None
        if n <= args.trasgo_cap:
            trasgo = lambda: t_geo.metric_privacy(df, "lat", "lon", EPSILON)  # noqa: E731
        else:
            row.note = f"trasgoDP skipped above --trasgo-cap {args.trasgo_cap:g}"
    except ImportError:
        trasgo, row.note = None, "trasgodp not installed"
    rows.append(measure(row, trasgo, veil_laplace, args))

    row = Row("donut (MaskMyPy)", n)
    try:
        import maskmypy  # noqa: F401

        peer = None
        if n <= args.maskmypy_cap:
            peer = lambda: maskmypy_donut(df, *DONUT_M)  # noqa: E731
        else:
            row.note = f"MaskMyPy skipped above --maskmypy-cap {args.maskmypy_cap:g}"
    except ImportError as exc:
        peer, row.note = None, f"maskmypy not importable ({exc})"
    rows.append(
        measure(
            row,
            peer,
            lambda: veil.geo.donut(df, "lat", "lon", *DONUT_M, projection=public),
            args,
        )
    )
    return rows


# --- accuracy -------------------------------------------------------------------------------


def disc_points(n: int, radius_m: float, seed: int) -> pd.DataFrame:
    """``n`` points uniform over a disc of ``radius_m`` around the centre (geodesic)."""
    import pyproj

    rng = np.random.Generator(np.random.PCG64(seed))
    lon, lat, _ = pyproj.Geod(ellps="WGS84").fwd(
        np.full(n, CENTRE[1]),
        np.full(n, CENTRE[0]),
        rng.uniform(0.0, 360.0, n),
        radius_m * np.sqrt(rng.uniform(0.0, 1.0, n)),
    )
    return pd.DataFrame({"lat": np.asarray(lat), "lon": np.asarray(lon)})


def displacement_errors(df: pd.DataFrame, out: pd.DataFrame, radius: np.ndarray) -> np.ndarray:
    """``|geodesic length of each move / drawn radius - 1|`` on the WGS 84 ellipsoid."""
    import pyproj

    _, _, moved = pyproj.Geod(ellps="WGS84").inv(
        df["lon"].to_numpy(), df["lat"].to_numpy(), out["lon"].to_numpy(), out["lat"].to_numpy()
    )
    return np.asarray(np.abs(np.asarray(moved) / radius - 1.0))


def accuracy(args: argparse.Namespace, disc_km: float) -> list[dict[str, Any]]:
    """Each version's displacement error over the disc, from seeded draws replayed."""
    import veil.geo
    from veil.mechanisms import PlanarLaplace

    n = int(args.accuracy_points)
    df = disc_points(n, disc_km * 1000.0, args.seed)
    seed = args.seed + 1

    def replay() -> np.random.Generator:
        return np.random.Generator(np.random.PCG64(seed))

    textbook = planar_laplace_textbook(df, EPSILON, replay())
    draw = replay()
    draw.random(n)  # the textbook draws the angles first, then the radii
    results = [("textbook (sphere, equirectangular)", textbook, draw.gamma(2.0, 1 / EPSILON, n))]
    skipped = []
    for method in ("stereographic", "aeqd"):
        projection = veil.geo.projection_at(*CENTRE, method=method)  # type: ignore[arg-type]
        if projection.outside(df["lat"].to_numpy(), df["lon"].to_numpy())[0].any():
            skipped.append(f"veil {method}")
            continue
        out = veil.geo.planar_laplace(
            df, "lat", "lon", EPSILON, projection=projection, rng=replay()
        )
        _, _, radius = PlanarLaplace(EPSILON).sample(n, replay())
        results.append((f"veil {method}", out, radius))
    table = []
    for name, out, radius in results:
        errors = displacement_errors(df, out, radius)
        table.append(
            {
                "version": name,
                "points": n,
                "disc_km": disc_km,
                "max": float(errors.max()),
                "p99.9": float(np.quantile(errors, 0.999)),
            }
        )
    table += [{"version": name, "points": n, "disc_km": disc_km} for name in skipped]
    return table


# --- output ---------------------------------------------------------------------------------

HEADER = (
    "case",
    "points",
    "baseline s (min / median / max)",
    "veil s (min / median / max)",
    "ratio of medians",
    "baseline MB",
    "veil MB",
    "load",
    "note",
)


def _num(value: float | None, digits: int = 3) -> str:
    return "-" if value is None else f"{value:.{digits}f}"


def _spread(runs: list[float]) -> str:
    if not runs:
        return "-"
    return f"{min(runs):.3f} / {statistics.median(runs):.3f} / {max(runs):.3f}"


def format_row(row: Row) -> str:
    cells = (
        row.case,
        f"{row.points:,}",
        _spread(row.baseline_runs),
        _spread(row.veil_runs),
        "-" if row.ratio is None else f"{row.ratio:.2f}",
        _num(row.baseline_mb, 1),
        _num(row.veil_mb, 1),
        row.load,
        row.note,
    )
    return "| " + " | ".join(cells) + " |"


def print_accuracy(args: argparse.Namespace) -> list[dict[str, Any]]:
    """The accuracy table, one disc radius after the other."""
    print(
        f"\nDisplacement along the ellipsoid against the drawn radius "
        f"({int(args.accuracy_points):,} points over a disc around the centre, "
        f"epsilon {EPSILON:g}):"
    )
    print("| disc km | version | max error | 99.9th percentile | within 0.1 % |")
    print("|---|---|---|---|---|")
    checked: list[dict[str, Any]] = []
    for disc_km in (float(part) for part in str(args.accuracy_radius_km).split(",")):
        for entry in accuracy(args, disc_km):
            checked.append(entry)
            if "max" not in entry:
                print(f"| {disc_km:g} | {entry['version']} | - | - | beyond its region |")
                continue
            verdict = "yes" if entry["max"] <= ACCURACY_TARGET else "no"
            print(
                f"| {disc_km:g} | {entry['version']} | {100 * entry['max']:.4f} % | "
                f"{100 * entry['p99.9']:.4f} % | {verdict} |"
            )
    return checked


def parse_counts(text: str) -> list[int]:
    return [int(float(part)) for part in text.split(",") if part.strip()]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--points", default="1e4,1e5,1e6", help="comma-separated sizes")
    parser.add_argument("--k", type=int, default=10, help="anonymity level for cloaking")
    parser.add_argument("--quadtree-cap", type=float, default=1e4, help="max points, rescan")
    parser.add_argument("--loop-cap", type=float, default=1e6, help="max points, Python loop")
    parser.add_argument("--trasgo-cap", type=float, default=1e6, help="max points, trasgoDP")
    parser.add_argument("--maskmypy-cap", type=float, default=1e5, help="max points, MaskMyPy")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--trace-limit", type=float, default=30.0, help="no tracing above S s")
    parser.add_argument("--no-trace", action="store_true")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--accuracy-points", type=float, default=2e5, help="0: no check")
    parser.add_argument(
        "--accuracy-radius-km",
        default="399,489",
        help="comma-separated disc radii (the stereographic region ends at 400 km in the "
        "plane, 399.9 km of geodesic; the AEQD's at 490 km)",
    )
    parser.add_argument("--json", metavar="PATH")
    args = parser.parse_args(argv)

    warnings.simplefilter("ignore", FutureWarning)
    print("| " + " | ".join(HEADER) + " |")
    print("|" + "---|" * len(HEADER))
    rows: list[Row] = []
    for n in parse_counts(args.points):
        rows += cases(n, args)

    print("\nTargets at 1M points (veil s):")
    for row in rows:
        if row.points == 1_000_000 and row.veil_s is not None:
            target = next(t for key, t in TARGETS.items() if row.case.startswith(key))
            verdict = "meets" if row.veil_s <= target else "MISSES"
            print(f"  {row.case}: {row.veil_s:.3f} s, target {target:g} s: {verdict}")
            if row.case.startswith("planar laplace (textbook") and row.ratio is not None:
                times = 1.0 / row.ratio
                verdict = "meets" if times <= TEXTBOOK_TARGET else "MISSES"
                print(
                    f"    {times:.2f}x the textbook version, target {TEXTBOOK_TARGET:g}x: {verdict}"
                )

    checked: list[dict[str, Any]] = []
    if args.accuracy_points > 0:
        checked = print_accuracy(args)

    if args.json:
        versions = {"python": platform.python_version(), "numpy": np.__version__}
        versions["pandas"] = pd.__version__
        for name in ("pyproj", "shapely", "trasgodp", "maskmypy", "geopandas"):
            module = sys.modules.get(name)
            versions[name] = getattr(module, "__version__", "?") if module else "absent"
        payload = {
            "settings": vars(args),
            "versions": versions,
            "rows": [asdict(r) | {"ratio": r.ratio} for r in rows],
            "accuracy": checked,
        }
        with open(args.json, "w", encoding="utf-8") as handle:
            json.dump(payload, handle, indent=2)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
