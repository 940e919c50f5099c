"""Local DP for bounded numerical columns: Laplace and Gaussian (trasgoDP API).

Same names, positional parameters, defaults and return types as
``trasgodp.numerical``; deliberate differences:

* noise is float-safe: an integer number of steps of a public grid (integers for
  integer columns), so the output carries no floating-point bits of the input. The
  Laplace noise is the discrete Laplace (two-sided geometric) distribution; the
  Gaussian noise is the rounded Gaussian ``rint(σZ)`` by default, or the discrete
  Gaussian with ``sampler="discrete"``;
* randomness comes from ``rng=`` (secure by default; trasgoDP uses NumPy's global
  state);
* missing values are refused (``missing="error"``) or kept missing
  (``missing="keep"``) instead of passing silently through the noise;
* nullable ``Int64``/``Float64`` columns are accepted;
* ``clip_output=False`` keeps the unclipped noisy values, whose mean is unbiased;
* each call records its :class:`~veil.mechanisms.PrivacyCost` in ``ledger=`` and in
  the output frame's ``attrs["veil.privacy"]``.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from veil.ldp._column import (
    MissingPolicy,
    check_missing,
    column_of,
    numeric_input,
    numeric_output,
    record,
    target_name,
    with_column,
)
from veil.mechanisms import Calibration, Gaussian, GaussianSampler, Laplace, PrivacyLedger
from veil.rng import RngLike, resolve_rng

__all__ = [
    "dp_clip_gaussian",
    "dp_clip_gaussian_array",
    "dp_clip_laplace",
    "dp_clip_laplace_array",
]


def _apply(
    data: Any,
    mechanism_name: str,
    build: Any,
    *,
    name: str,
    clip_output: bool,
    missing: MissingPolicy,
    rng: RngLike,
) -> tuple[Any, Any]:
    policy = check_missing(missing)
    column = numeric_input(data, name=name, missing=policy, mechanism=mechanism_name)
    mechanism = build(column.integer)
    generator = resolve_rng(rng, stacklevel=4)
    noisy = mechanism.randomise(column.values, generator)
    if clip_output:
        lo, hi = mechanism.grid.lower, mechanism.grid.upper
        if column.integer:
            np.clip(noisy, int(lo), int(hi), out=noisy)
        else:
            np.clip(noisy, lo, hi, out=noisy)
    return numeric_output(noisy, column), mechanism


def dp_clip_laplace(
    df: pd.DataFrame,
    column: str,
    epsilon: float,
    lower_bound: float,
    upper_bound: float,
    new_column: bool = False,
    *,
    overwrite: bool = False,
    resolution: float | None = None,
    clip_output: bool = True,
    missing: MissingPolicy = "error",
    rng: RngLike = None,
    ledger: PrivacyLedger | None = None,
) -> pd.DataFrame:
    """Apply the Laplace mechanism to a numerical column: ε-local-DP per record.

    Values are clipped to the public bounds and receive discrete Laplace noise of
    scale ``(upper_bound - lower_bound) / ε`` on a grid (see
    :class:`veil.mechanisms.Laplace`); the result is clipped back to the bounds
    (post-processing) unless ``clip_output=False``. Integer columns stay int64.

    Parameters
    ----------
    df : pandas.DataFrame
        The data; it is not modified.
    column : str
        Column to privatize (integer or float dtype, nullable dtypes included).
    epsilon : float
        Privacy budget per record, > 0.
    lower_bound, upper_bound : float
        Public bounds (domain knowledge, never read from the data).
    new_column : bool, default False
        Write the result to ``dp_{column}`` instead of replacing ``column``. If the
        frame already has a ``dp_{column}`` column this raises, unless ``overwrite``.
    overwrite : bool, default False
        Let ``new_column=True`` replace an existing ``dp_{column}`` column.
    resolution : float, optional
        Grid step for float columns (default: a power of two, >= 1024 steps across
        the bounds).
    clip_output : bool, default True
        Clip noisy values to the bounds (trasgoDP's behaviour; biases the mean toward
        the centre). ``False`` keeps an unbiased mean.
    missing : {"error", "keep"}, default "error"
        Missing values raise, or stay missing (their pattern is not protected).
    rng : None, int or numpy.random.Generator
        Randomness (see :mod:`veil.rng`); None is cryptographically secure.
    ledger : veil.mechanisms.PrivacyLedger, optional
        Receives the cost of this call.

    Returns
    -------
    pandas.DataFrame
        A new frame with the privatized column.

    Raises
    ------
    ValueError
        Missing column, wrong column type, epsilon <= 0, invalid bounds, missing or
        infinite values (veil's errors subclass ``ValueError``).
    """
    series = column_of(df, column)
    target = target_name(df, column, new_column, overwrite)
    values, mechanism = _apply(
        series,
        "Laplace",
        lambda integer: Laplace(
            epsilon, lower_bound, upper_bound, integer=integer, resolution=resolution
        ),
        name=f"column {column!r}",
        clip_output=clip_output,
        missing=missing,
        rng=rng,
    )
    return with_column(df, target, values, mechanism.cost(str(column)), ledger)


def dp_clip_laplace_array(
    data: Any,
    epsilon: float,
    lower_bound: float,
    upper_bound: float,
    *,
    resolution: float | None = None,
    clip_output: bool = True,
    missing: MissingPolicy = "error",
    rng: RngLike = None,
    ledger: PrivacyLedger | None = None,
) -> np.ndarray:
    """Apply the Laplace mechanism to a list or array: ε-local-DP per element.

    Same mechanism and keyword options as :func:`dp_clip_laplace`; returns a NumPy
    array (int64 for integer input, float64 otherwise; with ``missing="keep"`` an
    integer input with missing values gives a pandas nullable integer array).
    """
    values, mechanism = _apply(
        data,
        "Laplace",
        lambda integer: Laplace(
            epsilon, lower_bound, upper_bound, integer=integer, resolution=resolution
        ),
        name="data",
        clip_output=clip_output,
        missing=missing,
        rng=rng,
    )
    record(mechanism.cost("array"), ledger)
    return values  # type: ignore[no-any-return]


def dp_clip_gaussian(
    df: pd.DataFrame,
    column: str,
    epsilon: float,
    lower_bound: float,
    upper_bound: float,
    delta: float = 1e-3,
    new_column: bool = False,
    *,
    overwrite: bool = False,
    calibration: Calibration = "classic",
    sampler: GaussianSampler = "rounded",
    resolution: float | None = None,
    clip_output: bool = True,
    missing: MissingPolicy = "error",
    rng: RngLike = None,
    ledger: PrivacyLedger | None = None,
) -> pd.DataFrame:
    """Apply the Gaussian mechanism to a numerical column: (ε, δ)-local-DP per record.

    Values are clipped to the bounds and receive an integer number of grid steps of
    Gaussian noise (see :class:`veil.mechanisms.Gaussian`). With the default
    ``sampler="rounded"`` the noise is the rounded Gaussian ``rint(σZ)``: a
    post-processing of the continuous Gaussian mechanism with the σ of
    ``calibration``, so it has that mechanism's (ε, δ). With ``sampler="discrete"`` it
    is the discrete Gaussian, and σ is raised if needed so that (ε, δ) holds for the
    discrete Gaussian's own privacy profile. Either way each output probability is
    drawn right to a relative error of about ``2^-50`` (double-precision sampling).

    Parameters
    ----------
    df, column, epsilon, lower_bound, upper_bound, new_column, overwrite
        As in :func:`dp_clip_laplace`.
    delta : float, default 1e-3
        In (0, 1); trasgoDP's default. Choose it well below 1 / number of records.
    calibration : {"classic", "analytic"}, default "classic"
        ``"classic"`` (trasgoDP's, needs ε <= 1) or ``"analytic"`` (Balle and Wang 2018,
        any ε, less noise).
    sampler : {"rounded", "discrete"}, default "rounded"
        The rounded Gaussian (fastest) or the discrete Gaussian (see above).
    resolution, clip_output, missing, rng, ledger
        As in :func:`dp_clip_laplace`.

    Raises
    ------
    ValueError
        As :func:`dp_clip_laplace`, plus δ outside (0, 1) and ε > 1 with the classic
        calibration.
    """
    series = column_of(df, column)
    target = target_name(df, column, new_column, overwrite)
    values, mechanism = _apply(
        series,
        "Gaussian",
        lambda integer: Gaussian(
            epsilon,
            delta,
            lower_bound,
            upper_bound,
            calibration=calibration,
            integer=integer,
            resolution=resolution,
            sampler=sampler,
        ),
        name=f"column {column!r}",
        clip_output=clip_output,
        missing=missing,
        rng=rng,
    )
    return with_column(df, target, values, mechanism.cost(str(column)), ledger)


def dp_clip_gaussian_array(
    data: Any,
    epsilon: float,
    lower_bound: float,
    upper_bound: float,
    delta: float = 1e-3,
    *,
    calibration: Calibration = "classic",
    sampler: GaussianSampler = "rounded",
    resolution: float | None = None,
    clip_output: bool = True,
    missing: MissingPolicy = "error",
    rng: RngLike = None,
    ledger: PrivacyLedger | None = None,
) -> np.ndarray:
    """Apply the Gaussian mechanism to a list or array: (ε, δ)-local-DP per element.

    Same mechanism and keyword options as :func:`dp_clip_gaussian`.
    """
    values, mechanism = _apply(
        data,
        "Gaussian",
        lambda integer: Gaussian(
            epsilon,
            delta,
            lower_bound,
            upper_bound,
            calibration=calibration,
            integer=integer,
            resolution=resolution,
            sampler=sampler,
        ),
        name="data",
        clip_output=clip_output,
        missing=missing,
        rng=rng,
    )
    record(mechanism.cost("array"), ledger)
    return values  # type: ignore[no-any-return]
