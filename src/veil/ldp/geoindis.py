"""Geo-indistinguishability for latitude/longitude pairs (trasgoDP API).

Same names, positional parameters and outputs as ``trasgodp.geoindis``; deliberate
differences:

* ``seed=None`` by default and randomness from ``rng=`` (trasgoDP reseeds NumPy's
  global generator with 42 on every call, which makes its noise, and every later
  mechanism's noise, predictable and so removable);
* every record gets its own noise; trasgoDP gives all records at the same coordinates
  one shared draw, which is available as ``shared_noise_for_duplicates=True`` with a
  weaker guarantee (per distinct location, not per record: see :func:`metric_privacy`);
* vectorized (no row-wise ``apply``), index preserved, missing-value policy;
* the noisy latitude is clamped to [-90, 90] and the longitude wrapped to
  [-180, 180);
* the map draws only the privatized points unless ``show_original=True``.

The displacement is converted to degrees with the local equirectangular
approximation of trasgoDP's Definition 10 (accurate to well under 1% for
displacements of a few kilometres away from the poles). For masking in projected
metres use :mod:`veil.geo`.
"""

from __future__ import annotations

import math
import os
import warnings
from dataclasses import replace
from typing import Any

import numpy as np
import pandas as pd

from veil.errors import (
    DomainError,
    MissingValueError,
    ParameterError,
    PrivacyLeakWarning,
    PrivacyWarning,
)
from veil.ldp._column import MissingPolicy, check_missing, column_of, numeric_input, with_column
from veil.mechanisms import PlanarLaplace, PrivacyLedger
from veil.mechanisms._validation import check_epsilon, check_positive
from veil.rng import RngLike, resolve_rng

__all__ = ["EARTH_RADIUS_M", "metric_privacy", "plot_metric_dp_map"]

EARTH_RADIUS_M = 6_371_000.0
# Output coordinates keep 7 decimals (about 1 cm): the digits below carry no location
# information and would otherwise repeat low-order bits of the input.
_OUTPUT_DECIMALS = 7
# What the recorded cost's mechanism adds when duplicates share one draw.
_SHARED_NOISE = "one draw per distinct location (guarantee per location, co-location released)"


def _coordinates(
    df: pd.DataFrame, column_lat: Any, column_lon: Any, missing: MissingPolicy
) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
    if column_lat == column_lon:
        raise ParameterError(
            f"column_lat, column_lon: both name the column {column_lat!r}; give the "
            "latitude and the longitude columns"
        )
    lat_col = numeric_input(
        column_of(df, column_lat),
        name=f"column {column_lat!r}",
        missing="keep",
        mechanism="geo-indistinguishability",
    )
    lon_col = numeric_input(
        column_of(df, column_lon),
        name=f"column {column_lon!r}",
        missing="keep",
        mechanism="geo-indistinguishability",
    )
    lat = lat_col.values.astype(np.float64, copy=False)
    lon = lon_col.values.astype(np.float64, copy=False)
    mask = None
    for part in (lat_col.missing, lon_col.missing):
        if part is not None:
            mask = part if mask is None else (mask | part)
    if mask is not None:
        if missing == "error":
            raise MissingValueError(
                f"columns {column_lat!r}, {column_lon!r}: {int(mask.sum())} rows lack a "
                "coordinate; pass missing='keep' to leave them missing"
            )
        lat = np.where(mask, 0.0, lat)
        lon = np.where(mask, 0.0, lon)
    bad_lat = (lat < -90) | (lat > 90)
    if bad_lat.any():
        raise DomainError(
            f"column {column_lat!r}: latitude must be in [-90, 90], got "
            f"{lat[bad_lat][:5].tolist()} ({int(bad_lat.sum())} rows)"
        )
    bad_lon = (lon < -180) | (lon > 180)
    if bad_lon.any():
        raise DomainError(
            f"column {column_lon!r}: longitude must be in [-180, 180], got "
            f"{lon[bad_lon][:5].tolist()} ({int(bad_lon.sum())} rows)"
        )
    return lat, lon, mask


def metric_privacy(
    df: pd.DataFrame,
    column_lat: str,
    column_lon: str,
    epsilon: float,
    new_cols: bool = False,
    earth_radius_m: float = EARTH_RADIUS_M,
    seed: int | None = None,
    *,
    shared_noise_for_duplicates: bool = False,
    radius: bool = True,
    missing: MissingPolicy = "error",
    rng: RngLike = None,
    ledger: PrivacyLedger | None = None,
) -> pd.DataFrame:
    """Perturb latitude/longitude pairs with planar Laplace noise: ε-geo-indistinguishability.

    Each location moves by a displacement with uniform angle and a
    ``Gamma(2, 1/ε)``-distributed length in metres (Andrés et al. 2013), so two
    locations ``d`` metres apart are ``e^(ε d)``-indistinguishable.

    Parameters
    ----------
    df : pandas.DataFrame
        The data; it is not modified.
    column_lat, column_lon : str
        Latitude in [-90, 90] and longitude in [-180, 180], in degrees.
    epsilon : float
        Privacy budget per metre (for example 0.01: mean displacement 200 m).
    new_cols : bool, default False
        Add ``lat_dp``/``lon_dp`` instead of replacing the coordinate columns.
    earth_radius_m : float, default 6 371 000
        Earth radius for the metres-to-degrees conversion.
    seed : int, optional
        trasgoDP's parameter, kept for compatibility: the same as ``rng=seed``
        (reproducible noise, with a :class:`~veil.errors.ReproducibleNoiseWarning`).
    shared_noise_for_duplicates : bool, default False
        Give rows at identical coordinates one shared displacement (trasgoDP's
        behaviour). The guarantee is then ε-geo-indistinguishability per *distinct
        location*, not per record: moving all the records at one location together by
        ``d`` metres changes the output's probability by at most ``e^(ε d)``, but which
        records share a location is released exactly (they get identical points), so
        moving one record off a shared location, by any distance, is seen with
        certainty. Use it only when the records at one location are one unit (one
        person's repeated visits, say) and their co-location is public. A
        :class:`~veil.errors.PrivacyLeakWarning` says so and the recorded cost's
        ``mechanism`` names it. The default draws every record independently: the
        guarantee holds per record, and co-location is not revealed.
    radius : bool, default True
        Add ``radius_m``, the length of each displacement, as trasgoDP does. It tells
        anyone that the true location lies on the circle of that radius around the
        released point, which voids geo-indistinguishability for the released pair: a
        :class:`~veil.errors.PrivacyLeakWarning` says so. Drop the column before
        publishing, or pass ``radius=False``.
    missing : {"error", "keep"}, default "error"
        Rows lacking a coordinate raise, or stay missing in the output.
    rng : None, int or numpy.random.Generator
    ledger : veil.mechanisms.PrivacyLedger, optional

    Returns
    -------
    pandas.DataFrame
        With the perturbed coordinates and, if ``radius``, ``radius_m`` (metres).
    """
    eps = check_epsilon(epsilon)
    earth = check_positive(earth_radius_m, "earth_radius_m")
    policy = check_missing(missing)
    if seed is not None and rng is not None:
        raise ParameterError("seed, rng: give at most one of them (seed=s is rng=s)")
    lat, lon, mask = _coordinates(df, column_lat, column_lon, policy)
    generator = resolve_rng(seed if seed is not None else rng, stacklevel=3)
    mechanism = PlanarLaplace(eps)
    cost = mechanism.cost(f"{column_lat}, {column_lon}")
    if shared_noise_for_duplicates:
        warnings.warn(
            "shared_noise_for_duplicates=True: records at identical coordinates get "
            "identical released points, so which records share a location is released "
            "exactly; the guarantee holds per distinct location, not per record",
            PrivacyLeakWarning,
            stacklevel=2,
        )
        cost = replace(cost, mechanism=f"{cost.mechanism}, {_SHARED_NOISE}")
        # A (lat, lon) pair read as one complex number: one hash per row.
        pairs = np.stack([lat + 0.0, lon + 0.0], axis=1).view(np.complex128).ravel()
        groups = pd.factorize(pairs)[0]
        east, north, dist = mechanism.sample(int(groups.max()) + 1 if groups.size else 0, generator)
        east, north, dist = east[groups], north[groups], dist[groups]
    else:
        east, north, dist = mechanism.sample(lat.size, generator)
    to_degrees = 180.0 / math.pi / earth
    cos_lat = np.maximum(np.cos(np.radians(lat)), 1e-12)
    lat_dp = np.clip(lat + north * to_degrees, -90.0, 90.0)
    lon_dp = np.remainder(lon + east * to_degrees / cos_lat + 180.0, 360.0) - 180.0
    lat_dp = np.round(lat_dp, _OUTPUT_DECIMALS)
    lon_dp = np.round(lon_dp, _OUTPUT_DECIMALS)
    if mask is not None:
        lat_dp[mask] = np.nan
        lon_dp[mask] = np.nan
        dist = np.where(mask, np.nan, dist)
    lat_target, lon_target = ("lat_dp", "lon_dp") if new_cols else (column_lat, column_lon)
    out = with_column(df, lat_target, lat_dp, cost, ledger)
    out[lon_target] = lon_dp
    if radius:
        warnings.warn(
            "radius_m is the exact distance between each released point and its true "
            "location; publishing it voids geo-indistinguishability. Drop it before "
            "release, or pass radius=False",
            PrivacyLeakWarning,
            stacklevel=2,
        )
        out["radius_m"] = dist
    return out


def plot_metric_dp_map(
    df_dp: pd.DataFrame,
    column_lat: str,
    column_lon: str,
    save_file: str | os.PathLike[str] = "metric_dp_map.html",
    *,
    show_original: bool = False,
    max_detail_points: int = 2000,
) -> Any:
    """Write an interactive HTML map of privatized locations; returns the folium map.

    Usable with 100 000 points and more: points are drawn on a canvas in the browser
    from one embedded array instead of one HTML object per point.

    Parameters
    ----------
    df_dp : pandas.DataFrame
        Output of :func:`metric_privacy`, preferably with ``new_cols=True`` (columns
        ``lat_dp``, ``lon_dp``, ``radius_m``); with ``new_cols=False`` the coordinate
        columns themselves are drawn as the privatized points.
    column_lat, column_lon : str
        The original coordinate columns.
    save_file : str or path, default "metric_dp_map.html"
        Must end in ``.html``; written atomically.
    show_original : bool, default False
        Also draw the original points, the perturbation radius and the displacement
        (trasgoDP always does). A map with originals discloses what the release
        protects: keep it private. A :class:`~veil.errors.PrivacyWarning` says so.
    max_detail_points : int, default 2000
        Radius circles and displacement lines are drawn for at most this many points.
    """
    if not str(os.fspath(save_file)).endswith(".html"):
        raise ParameterError(f"save_file: must end in '.html', got {os.fspath(save_file)!r}")
    from veil.maps import render_privacy_map

    column_of(df_dp, column_lat)
    column_of(df_dp, column_lon)
    if "lat_dp" in df_dp.columns and "lon_dp" in df_dp.columns:
        lat_dp, lon_dp = df_dp["lat_dp"], df_dp["lon_dp"]
        has_original = True
    else:
        lat_dp, lon_dp = df_dp[column_lat], df_dp[column_lon]
        has_original = False
    if show_original and not has_original:
        raise ParameterError(
            "show_original: the frame holds no original coordinates (metric_privacy was "
            "called with new_cols=False)"
        )
    radius = df_dp["radius_m"].to_numpy(dtype=np.float64) if "radius_m" in df_dp.columns else None
    lat = lon = None
    if show_original:
        warnings.warn(
            "the map shows the original locations: it discloses what the release protects "
            "and must not be published",
            PrivacyWarning,
            stacklevel=2,
        )
        lat = df_dp[column_lat].to_numpy(dtype=np.float64, na_value=np.nan)
        lon = df_dp[column_lon].to_numpy(dtype=np.float64, na_value=np.nan)
    return render_privacy_map(
        lat_dp.to_numpy(dtype=np.float64, na_value=np.nan),
        lon_dp.to_numpy(dtype=np.float64, na_value=np.nan),
        radius,
        save_file,
        lat=lat,
        lon=lon,
        max_detail_points=max_detail_points,
    )
