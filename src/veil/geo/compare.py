"""Compare the geographic mask families on one privacy and utility scale.

Each family (grid aggregation, donut masking, quadtree cloaking, geo-indistinguishability)
runs over a grid of its parameter on the
same data, and every release is scored with :func:`veil.geo.evaluate.evaluate_xy`
against the same probe points, in the same projection.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, Literal

import numpy as np
import pandas as pd

from veil.atomic import write_atomic
from veil.errors import ColumnError, ParameterError
from veil.geo import masks
from veil.geo._frame import read_points
from veil.geo.evaluate import LocationEvaluation, _default_probes, evaluate_xy
from veil.geo.projection import LocalProjection, ProjectionMethod
from veil.rng import RngLike, resolve_rng

__all__ = ["DEFAULT_SETTINGS", "compare", "plot_comparison"]

#: Parameter grids of the comparison, in metres: grid cell side; donut outer radius
#: (inner radius is half of it); cloak k; planar Laplace epsilon per metre.
DEFAULT_SETTINGS: Mapping[str, tuple[float, ...]] = {
    "grid": (100.0, 250.0, 500.0, 1000.0, 2000.0),
    "donut": (50.0, 150.0, 300.0, 600.0, 1200.0),
    "cloak": (2, 5, 10, 25, 50),
    "geo-ind": (0.04, 0.015, 0.006, 0.003, 0.0015),
}

_COLUMNS = [
    "method",
    "setting",
    "reid_rate",
    "median_shift_m",
    "density_corr",
    "mean_shift_m",
    "p95_shift_m",
]
_MARKERS = {"grid": "s", "donut": "o", "cloak": "^", "geo-ind": "D"}


def _number(value: Any) -> str:
    return f"{float(value):g}"


def _label(method: str, value: float) -> str:
    if method == "grid":
        return f"cell {_number(value)} m"
    if method == "donut":
        return f"r in [{_number(value / 2)}, {_number(value)}] m"
    if method == "cloak":
        return f"k = {int(value)}"
    return f"eps = {_number(value)} per m"


def _check_settings(
    methods: Sequence[str], settings: Mapping[str, Sequence[float]] | None
) -> list[tuple[str, tuple[float, ...]]]:
    if isinstance(methods, str):
        methods = (methods,)
    unknown = [m for m in methods if m not in DEFAULT_SETTINGS]
    if unknown or not methods:
        raise ParameterError(
            f"methods: must be a non-empty selection of {list(DEFAULT_SETTINGS)}, got "
            f"{list(methods)!r}"
        )
    grids = dict(DEFAULT_SETTINGS)
    for key, values in (settings or {}).items():
        if key not in DEFAULT_SETTINGS:
            raise ParameterError(
                f"settings: key {key!r} is not one of the methods {list(DEFAULT_SETTINGS)}"
            )
        grids[key] = tuple(values)
    plan = []
    for method in dict.fromkeys(methods):
        values = grids[method]
        if not values:
            raise ParameterError(f"settings[{method!r}]: needs at least one value")
        for value in values:
            bad = isinstance(value, bool) or not isinstance(value, (int, float, np.number))
            if method == "cloak":
                bad = bad or float(value) != int(value) or value < 1
            else:
                bad = bad or not (np.isfinite(value) and value > 0)
            if bad:
                allowed = "an integer k >= 1" if method == "cloak" else "a positive number"
                raise ParameterError(f"settings[{method!r}]: {value!r} is not {allowed}")
        plan.append((method, values))
    return plan


def compare(
    df: pd.DataFrame,
    lat: str,
    lon: str,
    *,
    methods: Sequence[str] = ("grid", "donut", "cloak", "geo-ind"),
    settings: Mapping[str, Sequence[float]] | None = None,
    density_radius_m: float = 750.0,
    rng: RngLike = None,
    projection: ProjectionMethod | LocalProjection | None = None,
    cloak_bounds_m: tuple[float, float, float] | None = None,
    cloak_variant: Literal["reciprocal", "paper"] = "reciprocal",
) -> pd.DataFrame:
    """Run each mask family over a parameter grid and score every release.

    Every release is evaluated against the same true points, probe points and local
    projection: re-identification rate of a nearest-neighbour linkage attack (Zandbergen
    2014), displacement and the correlation of the number of residents within
    ``density_radius_m`` of 500 probe points.

    Parameters
    ----------
    df : pandas.DataFrame
        Not modified; every row needs both coordinates.
    lat, lon : str
        Coordinate columns, degrees.
    methods : sequence of {"grid", "donut", "cloak", "geo-ind"}
        Families to run, in table order.
    settings : mapping, optional
        Parameter values per family, replacing :data:`DEFAULT_SETTINGS` for the families
        given: grid cell side in metres (:func:`veil.geo.grid`); donut outer radius in
        metres, inner radius half of it (:func:`veil.geo.donut`); cloak ``k``
        (quadtree cloaking, :mod:`veil.geo.cloak`); geo-indistinguishability epsilon per
        metre (:func:`veil.geo.planar_laplace`).
    density_radius_m : float, default 750
        Radius of the density feature, metres.
    rng : None, int or numpy.random.Generator
        One generator draws the probes and then every randomized mask, in table order.
    projection : {"auto", "utm", "aeqd"} or LocalProjection, optional
        One planar system for every mask and measure; default (None) chosen from the
        data, as ``"auto"``. Pass :func:`veil.geo.projection_at` of a public centre to
        fix the grid's origin.
    cloak_bounds_m : (x_min, y_min, side), optional
        Square region of the cloaking quadtree in the projection's metres; default: the
        data's bounding square.
    cloak_variant : {"reciprocal", "paper"}, default "reciprocal"
        Quadtree construction (:func:`veil.geo.cloak`); ``"paper"`` rescans the points
        per quadrant as Gruteser and Grunwald (2003) describe.

    Returns
    -------
    pandas.DataFrame
        One row per release: ``method``, ``setting`` (the parameter as text),
        ``reid_rate``, ``median_shift_m``, ``density_corr``, ``mean_shift_m``,
        ``p95_shift_m``.
    """
    plan = _check_settings(methods, settings)
    for name in (lat, lon):
        if not isinstance(df, pd.DataFrame) or name not in df.columns:
            raise ColumnError(f"column: {name!r} is not in the dataframe")
    frame = df[[lat, lon]]
    truth = read_points(frame, lat, lon, missing="error", projection=projection or "auto")
    chosen = truth.projection
    true_xy = np.column_stack([truth.x, truth.y])
    if true_xy.shape[0] < 2:
        raise ParameterError(f"df: need at least 2 located rows to compare, got {len(df)}")
    generator = resolve_rng(rng, stacklevel=3)
    probes = _default_probes(true_xy, 500, 300.0, generator)

    def score(masked_xy: np.ndarray) -> LocationEvaluation:
        return evaluate_xy(true_xy, masked_xy, density_radius_m=density_radius_m, probes=probes)

    def score_frame(masked: pd.DataFrame) -> LocationEvaluation:
        lat_m = masked[lat].to_numpy(dtype=np.float64)
        lon_m = masked[lon].to_numpy(dtype=np.float64)
        x, y = chosen.forward(lat_m, lon_m)
        return score(np.column_stack([x, y]))

    runners: dict[str, Callable[[float], LocationEvaluation]] = {
        "grid": lambda s: score_frame(masks.grid(frame, lat, lon, s, projection=chosen)),
        "donut": lambda r: score_frame(
            masks.donut(frame, lat, lon, r / 2, r, projection=chosen, rng=generator)
        ),
        "geo-ind": lambda e: score_frame(
            masks.planar_laplace(frame, lat, lon, e, projection=chosen, rng=generator)
        ),
        "cloak": lambda k: score(_cloak(true_xy, int(k), cloak_bounds_m, cloak_variant)),
    }
    rows = []
    for method, values in plan:
        for value in values:
            result = runners[method](value)
            rows.append(
                [
                    method,
                    _label(method, float(value)),
                    result.reid_rate,
                    result.median_shift_m,
                    result.density_corr,
                    result.mean_shift_m,
                    result.p95_shift_m,
                ]
            )
    return pd.DataFrame(rows, columns=_COLUMNS)


def _cloak(
    xy: np.ndarray,
    k: int,
    bounds: tuple[float, float, float] | None,
    variant: Literal["reciprocal", "paper"],
) -> np.ndarray:
    # Imported here: quadtree cloaking lives in its own module, needed by one family only.
    from veil.geo.cloak import cloak_xy

    cx, cy, _, _ = cloak_xy(xy[:, 0], xy[:, 1], k, bounds=bounds, variant=variant)
    return np.column_stack([cx, cy])


def plot_comparison(table: pd.DataFrame, path: str | os.PathLike[str]) -> None:
    """Draw the two-panel privacy/utility figure of a comparison to a file.

    Left: re-identification rate against median displacement (metres, log scale).
    Right: re-identification rate against ``1 - density_corr`` (log scale; values below
    1e-4 are drawn at 1e-4). One line and marker per family. Lower-left is better.

    Parameters
    ----------
    table : pandas.DataFrame
        The output of :func:`compare`.
    path : str or path-like
        Ending in ``.png`` or ``.svg``; written atomically.
    """
    needed = {"method", "reid_rate", "median_shift_m", "density_corr"}
    if not isinstance(table, pd.DataFrame) or not needed <= set(table.columns):
        raise ColumnError(f"table: needs the columns {sorted(needed)} of compare()")
    suffix = Path(os.fspath(path)).suffix.lower()
    if suffix not in (".png", ".svg"):
        raise ParameterError(f"path: must end in '.png' or '.svg', got {os.fspath(path)!r}")
    try:
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.figure import Figure
    except ImportError as exc:  # pragma: no cover - exercised without the extra
        raise ImportError("plot_comparison needs matplotlib: pip install 'veil[geo]'") from exc

    # A bare Figure with the Agg canvas: no pyplot state, no change of the caller's backend.
    figure = Figure(figsize=(10, 4.2))
    FigureCanvasAgg(figure)
    left, right = figure.subplots(1, 2)
    for method, sub in table.groupby("method", sort=False):
        marker = _MARKERS.get(str(method), "x")
        shift = np.clip(sub["median_shift_m"].to_numpy(dtype=np.float64), 1e-3, None)
        loss = np.clip(1.0 - sub["density_corr"].to_numpy(dtype=np.float64), 1e-4, None)
        reid = sub["reid_rate"].to_numpy(dtype=np.float64)
        left.plot(shift, reid, marker=marker, label=str(method))
        right.plot(loss, reid, marker=marker, label=str(method))
    left.set_xscale("log")
    right.set_xscale("log")
    left.set_xlabel("median displacement (m, log scale)")
    right.set_xlabel("1 - corr. of density feature (log scale)")
    for axis in (left, right):
        axis.set_ylabel("re-identification rate")
        axis.grid(alpha=0.3)
    left.legend()
    figure.tight_layout()
    write_atomic(path, lambda tmp: figure.savefig(tmp, format=suffix[1:]))
