"""The location section of the release report: original and released points, a
zoom on the busiest area, and :func:`veil.geo.evaluate`'s linkage and utility measures.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Hashable
from dataclasses import dataclass, field
from typing import Any, Final

import numpy as np
import numpy.typing as npt
import pandas as pd

from veil.errors import DataTypeError, VeilError
from veil.geo.circle import longitude_centre, unwrap_longitudes
from veil.release.report.context import _Context, _systematic
from veil.release.report.glossary import _explained
from veil.release.report.kinds import _is_number
from veil.release.report.page import _attempt, _e, _p, _pct, _table
from veil.release.report.plots import (
    _ORIGINAL_COLOUR,
    _RELEASED_COLOUR,
    FloatArray,
    _figure,
    _img,
)

# Points per panel of a location figure (a systematic sample beyond this).
_MAP_POINTS: Final[int] = 5_000
# Location figures and measures keep the points within this distance of the median
# original location: one local projection in metres holds them, and (0, 0) placeholders
# or other far outliers do not squash the map.
_REGION_KM: Final[float] = 500.0


@dataclass
class _LocationReview:
    """The location measures of one pair, computed once for the verdict and the section.

    ``measures`` is :meth:`veil.geo.LocationEvaluation.summary` on the records whose
    original location is within ``_REGION_KM`` of the median one (``measured`` of
    ``matched`` records); ``dropped`` counts the records the pair's mask dropped as
    outside its projection, which are not among the matched ones.
    """

    pair: tuple[Hashable, Hashable]
    measures: dict[str, float] = field(default_factory=dict)
    measured: int = 0
    matched: int = 0
    dropped: int = 0
    error: str | None = None
    released: bool = True

    @property
    def reid_rate(self) -> float | None:
        value = self.measures.get("reid_rate")
        return None if value is None else float(value)

    @property
    def name(self) -> str:
        return f"{self.pair[0]}, {self.pair[1]}"


def _review_locations(
    ctx: _Context, generator: np.random.Generator | None
) -> list[_LocationReview]:
    """The measures of every location pair (none measured without a generator)."""
    reviews = []
    for lat, lon in ctx.pairs:
        review = _LocationReview((lat, lon))
        review.dropped = sum(
            d.count for d in ctx.dropped() if set(d.columns) == {str(lat), str(lon)}
        )
        if lat not in ctx.released.columns or lon not in ctx.released.columns:
            review.released = False
        elif generator is not None:
            try:
                _measure(ctx, review, generator)
            except (VeilError, ValueError, TypeError) as exc:
                review.error = str(exc)
        reviews.append(review)
    return reviews


def _map_section(ctx: _Context, reviews: list[_LocationReview]) -> str:
    parts = []
    for review in reviews:
        lat, lon = review.pair
        parts.append(f"<h3>{_e(lat)}, {_e(lon)}</h3>")
        if not review.released:
            parts.append(_p("Not released."))
            continue
        parts.append(_attempt(functools.partial(_location_figure, ctx, lat, lon)))
        parts.append(_measures_table(ctx, review))
    parts.append(
        _p(
            "The figures draw original locations: they are as confidential as the raw data.",
            "muted",
        )
    )
    return "".join(parts)


def _points(frame: pd.DataFrame, lat: Hashable, lon: Hashable) -> tuple[FloatArray, FloatArray]:
    y = frame[lat].to_numpy(dtype=np.float64, na_value=np.nan)
    x = frame[lon].to_numpy(dtype=np.float64, na_value=np.nan)
    keep = np.isfinite(x) & np.isfinite(y)
    return x[keep], y[keep]


def _location_figure(ctx: _Context, lat: Hashable, lon: Hashable) -> str:
    for frame, name in ((ctx.original, "original"), (ctx.released, "released")):
        for column in (lat, lon):
            if not _is_number(frame[column]):
                raise DataTypeError(f"{name}: coordinate column {column!r} is not numeric")
    x0, y0 = _points(ctx.original, lat, lon)
    x1, y1 = _points(ctx.released, lat, lon)
    if x0.size == 0:
        return _p("The original has no complete coordinate pair.")
    centre = (float(np.median(y0)), longitude_centre(x0))
    near0 = _within_region(y0, x0, centre)
    near1 = _within_region(y1, x1, centre)
    # Longitudes as one continuous run about the centre: points on both sides of the
    # antimeridian are drawn side by side, not at the two edges of the world.
    x0 = unwrap_longitudes(x0[near0], centre[1])
    x1 = unwrap_longitudes(x1[near1], centre[1])
    y0, y1 = y0[near0], y1[near1]
    fig = _figure(13.0, 4.4)
    axes = fig.subplots(1, 3)
    aspect = 1.0 / max(math.cos(math.radians(centre[0])), 0.01)
    s0, s1 = _systematic(x0.size, _MAP_POINTS), _systematic(x1.size, _MAP_POINTS)
    xs = np.concatenate([x0[s0], x1[s1]])
    ys = np.concatenate([y0[s0], y1[s1]])
    xlim = _padded(np.percentile(xs, [0.5, 99.5]))
    ylim = _padded(np.percentile(ys, [0.5, 99.5]))
    for ax, x, y, picks, colour, label in (
        (axes[0], x0, y0, s0, _ORIGINAL_COLOUR, f"original ({x0.size:,} points)"),
        (axes[1], x1, y1, s1, _RELEASED_COLOUR, f"released ({x1.size:,} points)"),
    ):
        ax.scatter(x[picks], y[picks], s=2.0, c=colour, linewidths=0)
        ax.set_title(label, fontsize=9)
        ax.set_xlim(*xlim)
        ax.set_ylim(*ylim)
    # Zoom on the busiest cell of a 20 x 20 grid over the central extent.
    counts, xe, ye = np.histogram2d(x0, y0, bins=20, range=[xlim, ylim])
    i, j = np.unravel_index(int(np.argmax(counts)), counts.shape)
    zx, zy = (xe[i], xe[i + 1]), (ye[j], ye[j + 1])
    for x, y, colour, size in ((x0, y0, _ORIGINAL_COLOUR, 6.0), (x1, y1, _RELEASED_COLOUR, 4.0)):
        inside = (x >= zx[0]) & (x <= zx[1]) & (y >= zy[0]) & (y <= zy[1])
        idx = np.flatnonzero(inside)
        idx = idx[_systematic(idx.size, _MAP_POINTS)]
        axes[2].scatter(x[idx], y[idx], s=size, c=colour, linewidths=0, alpha=0.8)
    axes[2].set_xlim(*zx)
    axes[2].set_ylim(*zy)
    axes[2].set_title("zoom on the busiest area: original (grey), released (red)", fontsize=9)
    for ax in axes:
        ax.set_aspect(aspect)
        ax.locator_params(nbins=4)
        ax.ticklabel_format(useOffset=False)
        ax.tick_params(labelsize=7)
        ax.set_xlabel("longitude", fontsize=8)
    axes[0].set_ylabel("latitude", fontsize=8)
    figure = f"<figure>{_img(fig, f'locations {lat}, {lon} before and after')}</figure>"
    far = (int((~near0).sum()), int((~near1).sum()))
    if any(far):
        figure += _p(
            f"Not drawn: {far[0]:,} original and {far[1]:,} released points more than "
            f"{_REGION_KM:g} km from the median original location ({centre[0]:.4f}, "
            f"{centre[1]:.4f}): the figure holds one region ((0, 0) placeholders and other "
            "far points are left out).",
            "muted",
        )
    return figure


def _within_region(
    lat: FloatArray, lon: FloatArray, centre: tuple[float, float]
) -> npt.NDArray[np.bool_]:
    """Points within ``_REGION_KM`` of ``centre`` (haversine on a 6 371 km sphere)."""
    phi0, lam0 = math.radians(centre[0]), math.radians(centre[1])
    phi, lam = np.radians(lat), np.radians(lon)
    a = (
        np.sin((phi - phi0) / 2.0) ** 2
        + math.cos(phi0) * np.cos(phi) * np.sin((lam - lam0) / 2.0) ** 2
    )
    distance_km = 2.0 * 6371.0088 * np.arcsin(np.sqrt(np.clip(a, 0.0, 1.0)))
    near: npt.NDArray[np.bool_] = distance_km <= _REGION_KM
    return near


def _padded(limits: FloatArray) -> tuple[float, float]:
    low, high = float(limits[0]), float(limits[1])
    pad = 0.02 * (high - low) if high > low else 0.001
    return low - pad, high + pad


def _measure(ctx: _Context, review: _LocationReview, generator: np.random.Generator) -> None:
    from veil.geo.evaluate import evaluate
    from veil.geo.projection import projection_at

    matched = ctx.matched()
    if matched is None:
        review.error = "the released rows cannot be matched to original rows"
        return
    lat, lon = review.pair
    # evaluate takes string labels: hand it the two coordinate columns under fixed names.
    before, after = (frame[[lat, lon]].set_axis(["lat", "lon"], axis=1) for frame in matched)
    y0 = before["lat"].to_numpy(dtype=np.float64, na_value=np.nan)
    x0 = before["lon"].to_numpy(dtype=np.float64, na_value=np.nan)
    complete = np.isfinite(y0) & np.isfinite(x0)
    review.matched = len(before)
    if not complete.any():
        review.error = "the original has no complete coordinate pair"
        return
    centre = (float(np.median(y0[complete])), longitude_centre(x0[complete]))
    # One local projection in metres must hold every point: far outliers are left out.
    keep = complete & _within_region(y0, x0, centre)
    # The projection only measures distances for this confidential report (nothing is
    # masked with it): centred on the original points, it keeps them within 0.1 %.
    review.measures = {
        k: float(v)
        for k, v in evaluate(
            before[keep].reset_index(drop=True),
            after[keep].reset_index(drop=True),
            "lat",
            "lon",
            projection=projection_at(*centre),
            rng=generator,
        )
        .summary()
        .items()
    }
    review.measured = int(keep.sum())


def _measures_table(ctx: _Context, review: _LocationReview) -> str:
    if review.error is not None:
        return _p(f"Linkage is not measured: {review.error}.", "error")
    if not review.measures:
        return ""
    note = ""
    if review.measured < review.matched:
        note = _p(
            f"Measured on the {review.measured:,} records whose original location is "
            f"complete and within {_REGION_KM:g} km of the median original location; "
            f"{review.matched - review.measured:,} are left out.",
            "muted",
        )
    labels = {
        "reid_rate": "re-identified by a nearest-location attacker",
        "suppressed_share": "released records whose location is suppressed",
        "median_shift_m": "median displacement (m)",
        "mean_shift_m": "mean displacement (m)",
        "p95_shift_m": "95th percentile displacement (m)",
        "density_corr": "neighbourhood-density correlation",
        "k_median": "median spatial k (true points at least as close)",
        "k_below_5_share": "records with spatial k below 5",
    }
    shares = {"reid_rate", "suppressed_share", "k_below_5_share"}
    rows: list[tuple[str, Any]] = [
        (labels.get(k, k), _pct(v) if k in shares else v) for k, v in review.measures.items()
    ]
    rows_in = max(ctx.rows_in(), 1)
    dropped = f"{review.dropped:,} of {rows_in:,} ({_pct(review.dropped / rows_in)})"
    rows.insert(2, ("records dropped as outside the mask's projection", dropped))
    return (
        note
        + _table(["measure", "value"], rows)
        + _p(
            "Measured against an attacker who holds the true locations and links each "
            "released point to the nearest one (veil.geo.evaluate). Dropped records are "
            "not in the release, so they are not measured.",
            "muted",
        )
        + _explained(["linkage", "displacement", "spatial-k"])
    )
