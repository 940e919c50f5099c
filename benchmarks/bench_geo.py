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
* ``planar laplace (trasgoDP)``: ``trasgodp.geoindis.metric_privacy`` against
  ``veil.geo.planar_laplace``;
* ``donut (MaskMyPy)``: ``maskmypy.donut`` on a GeoDataFrame projected to UTM 18N and
  back (the projection is timed, as veil's is) against ``veil.geo.donut``.

Both sides run in this process on the same frame. Figures: best wall time of
``--repeats`` runs (one run when a call takes over 5 s), the ratio baseline / veil,
and the peak of Python allocations (``tracemalloc``) in a separate traced run.

    python benchmarks/bench_geo.py --points 1e4,1e5,1e6
    python benchmarks/bench_geo.py --points 1e6 --quadtree-cap 1e4 --json geo.json

Not part of the test suite.
"""

from __future__ import annotations

import argparse
import gc
import json
import math
import platform
import sys
import time
import tracemalloc
import warnings
from collections.abc import Callable
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np
import pandas as pd

EPSILON = 0.01  # per metre: mean displacement 200 m
DONUT_M = (100.0, 500.0)
EARTH_RADIUS_M = 6_371_008.8
SLOW_SECONDS = 5.0
TARGETS = {"cloak": 10.0, "planar laplace": 0.5, "donut": 0.5}  # seconds at 1M points


@dataclass
class Row:
    case: str
    points: int
    baseline_s: float | None = None
    veil_s: float | None = None
    baseline_mb: float | None = None
    veil_mb: float | None = None
    note: str = ""

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


def timed(call: Callable[[], Any], repeats: int) -> float:
    best = math.inf
    for i in range(repeats):
        gc.collect()
        start = time.perf_counter()
        call()
        elapsed = time.perf_counter() - start
        best = min(best, elapsed)
        if i == 0 and elapsed > SLOW_SECONDS:
            break
    return best


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
    for side, call in (("baseline", baseline), ("veil", ours)):
        if call is None:
            continue
        seconds = timed(call, args.repeats)
        setattr(row, f"{side}_s", seconds)
        if not args.no_trace and seconds <= args.trace_limit:
            setattr(row, f"{side}_mb", traced_mb(call))
    print(format_row(row), flush=True)
    return row


def cases(n: int, args: argparse.Namespace) -> list[Row]:
    import veil.geo

    df = make_points(n, args.seed)
    rows: list[Row] = []

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
    ours = None if cloak is None else (lambda: cloak(df, "lat", "lon", args.k))
    if cloak is None:
        row.note = (row.note + "; " if row.note else "") + "veil.geo.cloak absent"
    rows.append(measure(row, quad, ours, args))

    def veil_laplace() -> Any:
        return veil.geo.planar_laplace(df, "lat", "lon", EPSILON)

    row = Row("planar laplace (loop)", n)
    loop = None
    if n <= args.loop_cap:
        loop = lambda: planar_laplace_loop(df, EPSILON)  # noqa: E731
    else:
        row.note = f"baseline skipped above --loop-cap {args.loop_cap:g}"
    rows.append(measure(row, loop, veil_laplace, args))

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
    rows.append(measure(row, peer, lambda: veil.geo.donut(df, "lat", "lon", *DONUT_M), args))
    return rows


# --- output ---------------------------------------------------------------------------------

HEADER = ("case", "points", "baseline s", "veil s", "ratio", "baseline MB", "veil MB", "note")


def _num(value: float | None, digits: int = 3) -> str:
    return "-" if value is None else f"{value:.{digits}f}"


def format_row(row: Row) -> str:
    cells = (
        row.case,
        f"{row.points:,}",
        _num(row.baseline_s),
        _num(row.veil_s),
        "-" if row.ratio is None else f"{row.ratio:.1f}",
        _num(row.baseline_mb, 1),
        _num(row.veil_mb, 1),
        row.note,
    )
    return "| " + " | ".join(cells) + " |"


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
        }
        with open(args.json, "w", encoding="utf-8") as handle:
            json.dump(payload, handle, indent=2)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
