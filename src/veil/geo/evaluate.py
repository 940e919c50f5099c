"""Privacy and utility of a location release on one scale for every mask.

Privacy is the success of a linkage attack (Zandbergen 2014) by an adversary
who holds the true locations and assigns each released point to the nearest true one;
utility is the displacement and the fidelity of a neighbourhood-density feature (true
residents versus released residents within a radius of probe points). Distances are
measured in one local projection in metres (:mod:`veil.geo.projection`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from veil.errors import DataTypeError, DomainError, ParameterError
from veil.geo._frame import read_points
from veil.geo.projection import LocalProjection, ProjectionMethod
from veil.rng import RngLike, resolve_rng

__all__ = ["LocationEvaluation", "evaluate", "evaluate_xy"]

# Distances within this much count as equal (ties): the round trip metres -> degrees ->
# metres moves a point by far less, and no release resolves locations this finely.
_TIE_ABS_M = 1e-6
_TIE_REL = 1e-9
_K_THRESHOLD = 5


def _scipy_spatial() -> Any:
    try:
        from scipy import spatial
    except ImportError as exc:  # pragma: no cover - scipy is a core dependency
        raise ImportError("veil.geo.evaluate needs scipy: pip install scipy") from exc
    return spatial


@dataclass(frozen=True, eq=False)
class LocationEvaluation:
    """Linkage risk and utility of one location release (after Zandbergen 2014).

    Attributes
    ----------
    n : int
        Rows evaluated.
    reid_rate : float
        Share of rows a nearest-neighbour linkage attacker re-identifies: the released
        point's nearest true point is its own (ties between equally near true points
        count as the attacker's random pick, ``1 / ties``); suppressed rows count as
        not re-identified.
    suppressed_share : float
        Share of rows whose released location is missing.
    median_shift_m, mean_shift_m, p95_shift_m : float
        Displacement between true and released location, metres, over released rows.
    density_corr : float
        Pearson correlation, over the probe points, of the number of true and of
        released residents within ``density_radius_m``; NaN when either count is
        constant.
    density_radius_m : float
        Radius of the density feature, metres.
    n_probes : int
        Probe points the density feature was measured at.
    k_anonymity : numpy.ndarray
        Per row: how many true points are at least as close to the released point as
        its own true point (>= 1; 1 means the attacker's nearest guess is right); NaN
        for suppressed rows. Read-only.
    k_median : float
        Median of ``k_anonymity`` over released rows.
    k_below_5_share : float
        Share of all rows whose estimate is below 5 (suppressed rows count as
        protected).
    """

    n: int
    reid_rate: float
    suppressed_share: float
    median_shift_m: float
    mean_shift_m: float
    p95_shift_m: float
    density_corr: float
    density_radius_m: float
    n_probes: int
    k_anonymity: np.ndarray
    k_median: float
    k_below_5_share: float

    def summary(self) -> dict[str, float]:
        """The scalar measures, by field name (everything but ``k_anonymity``)."""
        return {
            "reid_rate": self.reid_rate,
            "suppressed_share": self.suppressed_share,
            "median_shift_m": self.median_shift_m,
            "mean_shift_m": self.mean_shift_m,
            "p95_shift_m": self.p95_shift_m,
            "density_corr": self.density_corr,
            "k_median": self.k_median,
            "k_below_5_share": self.k_below_5_share,
        }


def _as_xy(values: Any, name: str) -> np.ndarray:
    try:
        array = np.asarray(values, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise DataTypeError(f"{name}: expected an (n, 2) array of numbers in metres") from exc
    if array.ndim != 2 or array.shape[1] != 2:
        raise ParameterError(f"{name}: expected shape (n, 2), got {array.shape}")
    return array


def _positive(value: float, name: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise ParameterError(f"{name}: must be a positive number, got {value!r}")
    number = float(value)
    if not (math.isfinite(number) and number > 0):
        raise ParameterError(f"{name}: must be a positive finite number, got {value!r}")
    return number


def _pearson(a: np.ndarray, b: np.ndarray) -> float:
    # Written out rather than np.corrcoef, which warns (and gives NaN) on a constant input.
    da = a - a.mean()
    db = b - b.mean()
    denominator = math.sqrt(float(da @ da) * float(db @ db))
    return float(da @ db) / denominator if denominator > 0 else math.nan


def _default_probes(
    true_xy: np.ndarray, n_probes: int, jitter_m: float, generator: np.random.Generator
) -> np.ndarray:
    """``n_probes`` true points (without replacement) moved by ``N(0, jitter_m)`` noise."""
    picks = generator.choice(true_xy.shape[0], size=min(n_probes, true_xy.shape[0]), replace=False)
    noise = generator.normal(0.0, jitter_m, (picks.size, 2))
    return np.asarray(true_xy[picks] + noise, dtype=np.float64)


def _check_probe_count(n_probes: int) -> int:
    if isinstance(n_probes, bool) or not isinstance(n_probes, (int, np.integer)) or n_probes < 2:
        raise ParameterError(f"n_probes: must be an integer >= 2, got {n_probes!r}")
    return int(n_probes)


def evaluate_xy(
    true_xy: Any,
    masked_xy: Any,
    *,
    density_radius_m: float = 750.0,
    probes: Any = None,
    n_probes: int = 500,
    probe_jitter_m: float = 300.0,
    rng: RngLike = None,
) -> LocationEvaluation:
    """Evaluate a release given as planar coordinates in metres.

    Parameters
    ----------
    true_xy : array of shape (n, 2)
        True locations (easting, northing) in metres, all finite.
    masked_xy : array of shape (n, 2)
        Released locations of the same rows in the same system; a row with a NaN
        coordinate is a suppressed point.
    density_radius_m : float, default 750
        Radius of the neighbourhood-density feature, metres.
    probes : array of shape (m, 2), optional
        Probe points in metres. Default: ``n_probes`` true points sampled without
        replacement, each moved by ``N(0, probe_jitter_m)`` noise per axis (as in seed
        003, section 83.6.2). Pass the same probes to compare several releases.
    n_probes : int, default 500
        Probes drawn when ``probes`` is not given (at most ``n``).
    probe_jitter_m : float, default 300
        Standard deviation of the probe noise per axis, metres.
    rng : None, int or numpy.random.Generator
        Draws the default probes (see :mod:`veil.rng`); unused when ``probes`` is given.

    Returns
    -------
    LocationEvaluation

    Raises
    ------
    veil.errors.ParameterError
        Shapes that differ or are not (n, 2), fewer than 2 rows, bad radii or counts.
    veil.errors.DomainError
        Non-finite true coordinates or probes, infinite released coordinates.
    """
    truth = _as_xy(true_xy, "true_xy")
    masked = _as_xy(masked_xy, "masked_xy")
    if truth.shape != masked.shape:
        raise ParameterError(
            f"masked_xy: must have the shape of true_xy {truth.shape}, got {masked.shape}"
        )
    n = truth.shape[0]
    if n < 2:
        raise ParameterError(f"true_xy: need at least 2 points to evaluate, got {n}")
    if not np.isfinite(truth).all():
        raise DomainError("true_xy: holds missing or infinite coordinates")
    if np.isinf(masked).any():
        raise DomainError("masked_xy: holds infinite coordinates (missing ones must be NaN)")
    radius = _positive(density_radius_m, "density_radius_m")
    if probes is None:
        count = _check_probe_count(n_probes)
        jitter = _positive(probe_jitter_m, "probe_jitter_m")
        probe_xy = _default_probes(truth, count, jitter, resolve_rng(rng, stacklevel=3))
    else:
        probe_xy = _as_xy(probes, "probes")
        if probe_xy.shape[0] < 2 or not np.isfinite(probe_xy).all():
            raise DomainError("probes: need at least 2 probe points, all finite")

    spatial = _scipy_spatial()
    truth_tree = spatial.cKDTree(truth)
    released = np.isfinite(masked).all(axis=1)
    shown = masked[released]
    shift = np.hypot(*(shown - truth[released]).T)
    nearest, _ = truth_tree.query(shown, k=1)
    own_nearest = shift <= nearest * (1 + _TIE_REL) + _TIE_ABS_M
    # True points at least as close as the own one (the own one included).
    k_released = np.asarray(
        truth_tree.query_ball_point(
            shown, r=shift * (1 + _TIE_REL) + _TIE_ABS_M, return_length=True
        ),
        dtype=np.float64,
    )
    k_released = np.maximum(k_released, 1.0)
    k_anonymity = np.full(n, np.nan)
    k_anonymity[released] = k_released
    k_anonymity.setflags(write=False)

    true_density = np.asarray(
        truth_tree.query_ball_point(probe_xy, r=radius, return_length=True), dtype=np.float64
    )
    if shown.shape[0]:
        released_density = np.asarray(
            spatial.cKDTree(shown).query_ball_point(probe_xy, r=radius, return_length=True),
            dtype=np.float64,
        )
        median_shift = float(np.median(shift))
        mean_shift = float(shift.mean())
        p95_shift = float(np.quantile(shift, 0.95))
        k_median = float(np.median(k_released))
    else:
        released_density = np.zeros(probe_xy.shape[0])
        median_shift = mean_shift = p95_shift = k_median = math.nan
    return LocationEvaluation(
        n=n,
        reid_rate=float(np.where(own_nearest, 1.0 / k_released, 0.0).sum()) / n,
        suppressed_share=float(n - shown.shape[0]) / n,
        median_shift_m=median_shift,
        mean_shift_m=mean_shift,
        p95_shift_m=p95_shift,
        density_corr=_pearson(true_density, released_density),
        density_radius_m=radius,
        n_probes=int(probe_xy.shape[0]),
        k_anonymity=k_anonymity,
        k_median=k_median,
        k_below_5_share=float((k_released < _K_THRESHOLD).sum()) / n,
    )


def evaluate(
    original: pd.DataFrame,
    masked: pd.DataFrame,
    lat: str,
    lon: str,
    *,
    density_radius_m: float = 750.0,
    probes: Any = None,
    n_probes: int = 500,
    probe_jitter_m: float = 300.0,
    projection: ProjectionMethod | LocalProjection | None = None,
    rng: RngLike = None,
) -> LocationEvaluation:
    """Measure the linkage risk and utility of a masked location release.

    An adversary holding the true locations of ``original`` links each released point
    of ``masked`` to its nearest true location (Zandbergen 2014); the
    re-identification rate is the share of rows linked to themselves. Utility is the
    displacement and the correlation of a neighbourhood-density feature. Both frames
    are projected with one local projection in metres.

    This measures one adversary, not a guarantee: an attacker who knows the mask and
    computes a posterior over true locations does better against random displacement.

    Parameters
    ----------
    original, masked : pandas.DataFrame
        The true and the released frame, row-aligned (same length and index). The
        original must have every coordinate; a missing released coordinate is a
        suppressed point.
    lat, lon : str
        Coordinate columns (degrees), the same names in both frames.
    density_radius_m : float, default 750
        Radius of the density feature, metres.
    probes : array of shape (m, 2), optional
        Probe points as (latitude, longitude) in degrees. Default: ``n_probes`` true
        points with ``N(0, probe_jitter_m)`` metres of noise per axis.
    n_probes : int, default 500
    probe_jitter_m : float, default 300
    projection : {"auto", "utm", "aeqd"} or LocalProjection, optional
        Planar system for both frames; default (None): chosen from the original's
        points, as ``"auto"``.
    rng : None, int or numpy.random.Generator
        Draws the default probes.

    Returns
    -------
    LocationEvaluation

    Raises
    ------
    veil.errors.ParameterError
        Frames of different length or index, absent columns.
    veil.errors.MissingValueError
        Missing coordinates in the original.
    veil.errors.DomainError
        Coordinates out of range, data too spread out for a local projection.
    """
    for name, frame in (("original", original), ("masked", masked)):
        if not isinstance(frame, pd.DataFrame):
            raise DataTypeError(f"{name}: expected a pandas DataFrame, got {type(frame).__name__}")
    if len(original) != len(masked):
        raise ParameterError(
            f"masked: must have one row per row of original ({len(original)}), got {len(masked)}"
        )
    if not original.index.equals(masked.index):
        raise ParameterError(
            "masked: its index differs from the original's; the frames must be row-aligned"
        )
    truth = read_points(original, lat, lon, missing="error", projection=projection or "auto")
    release = read_points(masked, lat, lon, missing="keep", projection=truth.projection)
    masked_xy = np.full((len(masked), 2), np.nan)
    masked_xy[release.present, 0] = release.x
    masked_xy[release.present, 1] = release.y
    probe_xy = None
    if probes is not None:
        probe_deg = _as_xy(probes, "probes")
        px, py = truth.projection.forward(probe_deg[:, 0], probe_deg[:, 1])
        probe_xy = np.column_stack([px, py])
    return evaluate_xy(
        np.column_stack([truth.x, truth.y]),
        masked_xy,
        density_radius_m=density_radius_m,
        probes=probe_xy,
        n_probes=n_probes,
        probe_jitter_m=probe_jitter_m,
        rng=resolve_rng(rng, stacklevel=3) if probes is None else None,
    )
