"""Correlation loss: how far a release moves the pairwise correlations of a table."""

from __future__ import annotations

import math
from collections.abc import Hashable, Sequence
from typing import Any, Final, Literal

import numpy as np
import numpy.typing as npt
import pandas as pd
from pandas.api.types import (
    is_bool_dtype,
    is_complex_dtype,
    is_numeric_dtype,
    is_object_dtype,
    is_string_dtype,
)

from veil.errors import ColumnError, DataTypeError, ParameterError

__all__ = ["CorrelationMethod", "correlation_loss"]

CorrelationMethod = Literal["pearson", "spearman", "kendall"]

_METHODS: Final[tuple[str, ...]] = ("pearson", "spearman", "kendall")

# Variance inflation of Spearman's rho under Fisher's z relative to Pearson's r
# (Fieller, Hartley & Pearson, 1957).
_SPEARMAN_VARIANCE_FACTOR: Final[float] = 1.06


def correlation_loss(
    df_original: pd.DataFrame,
    df_dp: pd.DataFrame,
    features: Sequence[Hashable] | None = None,
    method: CorrelationMethod = "pearson",
    new_column: bool = False,
    confidence: float = 1.96,
) -> float:
    """Percentage of the original pairwise correlation lost in a privatized table.

    With :math:`R` and :math:`R'` the correlation matrices of the selected features in the
    original and the privatized table and :math:`\\mathcal{O}` the off-diagonal index pairs,

    .. math::

        L = 100 \\cdot
            \\frac{\\operatorname{mean}_{(i, j) \\in \\mathcal{O}} |\\rho_{ij} - \\rho'_{ij}|}
                  {\\operatorname{mean}_{(i, j) \\in \\mathcal{O}} |\\rho_{ij}|}.

    ``L = 0`` when every correlation is preserved; ``L = 200`` when every correlation flips
    sign; it is unbounded above when the release creates correlation the original lacks.
    The metric reads published data only: it spends no privacy budget.

    Parameters
    ----------
    df_original : pandas.DataFrame
        The original table. Not modified.
    df_dp : pandas.DataFrame
        The privatized table, with as many rows as ``df_original``. Not modified.
    features : sequence of column labels, optional
        At least two distinct columns of ``df_original`` whose pairwise correlations are
        compared. ``None`` (default) uses every column of ``df_original``.
    method : {"pearson", "spearman", "kendall"}, default "pearson"
        Correlation coefficient, computed as :meth:`pandas.DataFrame.corr` does.
    new_column : bool, default False
        If True, the privatized values of feature ``col`` are read from ``dp_{col}`` when
        ``df_dp`` has that column and from ``col`` otherwise (the layout produced by the
        ``new_column=True`` option of the LDP functions). If False, from ``col``.
    confidence : float, default 1.96
        Critical value (> 0) of the significance check below; 1.96 is a two-sided 95 % level.

    Returns
    -------
    float
        The correlation loss in percent. It is NaN when a correlation is undefined, e.g.
        when a feature is constant in either table.

    Raises
    ------
    veil.errors.ColumnError
        If a feature is missing from ``df_original`` or (under its privatized name) from
        ``df_dp``.
    veil.errors.ParameterError
        If ``method`` is unknown, ``confidence`` is not > 0, fewer than two features are
        given or they repeat, the tables differ in row count, there are fewer than 4 rows
        (Pearson, Spearman) or 2 rows (Kendall), or the original correlation is too weak
        to measure (see Notes).
    veil.errors.DataTypeError
        If a feature has a dtype that is neither numeric, boolean nor categorical
        (``object``, string, ``category``), e.g. datetimes.

    Notes
    -----
    *Categorical features.* A feature whose dtype is ``object``, string or ``category``
    in either table is replaced by integer codes: each distinct value observed in the
    original column or its privatized column gets one code, in order of first appearance
    (original rows first), and both columns use the same codes. Other features are used as
    floating-point numbers (booleans as 0/1). Pearson correlations of such codes depend on
    the arbitrary order of the codes; Spearman and Kendall depend on it too. The encoding
    follows trasgoDP, so values agree with ``trasgodp.metrics.correlation_loss``.

    *Missing values* are excluded pairwise, as in :meth:`pandas.DataFrame.corr`: each
    correlation uses the rows where both of its features are present. A missing
    categorical value is missing, not a category of its own.

    *Significance check.* With :math:`n` rows the standard error of a correlation near
    zero is :math:`1/\\sqrt{n-3}` for Pearson (Fisher's z), :math:`\\sqrt{1.06/(n-3)}` for
    Spearman (Fieller, Hartley & Pearson) and :math:`\\sqrt{(4n+10)/(9n(n-1))}` for Kendall
    (Kendall). If the mean absolute off-diagonal correlation of the original is below
    ``min(confidence * se, 1)`` the ratio above divides by noise, and a
    :class:`~veil.errors.ParameterError` is raised; compare the marginal distributions
    with :func:`veil.metrics.divergence_distributions` instead.

    References
    ----------
    .. [1] J. Sáinz-Pardo Díaz and Á. López García, "trasgoDP: An Open Source Framework
       for Releasing Noised Tabular Microdata under Local Differential Privacy",
       arXiv:2607.22230, 2026 (definition of the correlation loss).
    .. [2] R. A. Fisher, "On the 'probable error' of a coefficient of correlation deduced
       from a small sample", Metron 1, 3-32, 1921.
    .. [3] E. C. Fieller, H. O. Hartley and E. S. Pearson, "Tests for rank correlation
       coefficients. I", Biometrika 44, 470-481, 1957.
    .. [4] M. G. Kendall, "A new measure of rank correlation", Biometrika 30, 81-93, 1938.

    Examples
    --------
    >>> import pandas as pd
    >>> from veil.metrics import correlation_loss
    >>> original = pd.DataFrame({"x": [1, 2, 3, 4, 5, 6, 7, 8], "y": [1, 3, 2, 5, 4, 6, 8, 7]})
    >>> correlation_loss(original, original)
    0.0
    >>> correlation_loss(original, original.assign(y=-original["y"]))
    200.0
    """
    _check_frame(df_original, "df_original")
    _check_frame(df_dp, "df_dp")
    columns = _check_features(df_original, features)
    _check_method(method)
    _check_confidence(confidence)
    dp_columns = [_dp_name(df_dp, col, new_column) for col in columns]
    n_rows = len(df_original)
    if len(df_dp) != n_rows:
        raise ParameterError(
            f"df_dp: must have as many rows as df_original ({n_rows}), got {len(df_dp)}"
        )
    se = _standard_error(method, n_rows)

    x_original = np.empty((n_rows, len(columns)), dtype=np.float64, order="F")
    x_dp = np.empty_like(x_original)
    for j, (col, dp_col) in enumerate(zip(columns, dp_columns, strict=True)):
        x_original[:, j], x_dp[:, j] = _encode_pair(
            _column(df_original, col, "df_original"), _column(df_dp, dp_col, "df_dp"), col
        )

    off_diagonal = ~np.eye(len(columns), dtype=bool)
    rho = _correlations(x_original, method)[off_diagonal]
    rho_dp = _correlations(x_dp, method)[off_diagonal]
    mean_abs_rho = float(np.mean(np.abs(rho)))
    threshold = min(confidence * se, 1.0)
    if mean_abs_rho < threshold:
        raise ParameterError(
            f"features: mean absolute {method} correlation of the original "
            f"({mean_abs_rho:.4g}) is below min(confidence * se, 1) = {threshold:.4g} "
            f"(confidence={confidence!r}, n={n_rows}); the loss would measure noise. "
            "Choose correlated features, lower confidence, or compare marginals with "
            "divergence_distributions"
        )
    return float(100.0 * np.mean(np.abs(rho - rho_dp)) / mean_abs_rho)


def _check_frame(df: Any, name: str) -> None:
    if not isinstance(df, pd.DataFrame):
        raise DataTypeError(f"{name}: must be a pandas DataFrame, got {type(df).__name__}")


def _check_features(df: pd.DataFrame, features: Sequence[Hashable] | None) -> list[Hashable]:
    columns: list[Hashable]
    if features is None:
        columns = list(df.columns)
    elif isinstance(features, (str, bytes)):
        raise ParameterError(
            f"features: must be a sequence of column labels, got the string {features!r}"
        )
    else:
        columns = list(features)
    if len(columns) < 2:
        raise ParameterError(f"features: need at least 2 columns to correlate, got {columns!r}")
    if len(set(columns)) != len(columns):
        raise ParameterError(f"features: columns must be distinct, got {columns!r}")
    missing = [col for col in columns if col not in df.columns]
    if missing:
        raise ColumnError(f"features: columns {missing!r} are not in df_original")
    return columns


def _check_method(method: Any) -> None:
    if method not in _METHODS:
        raise ParameterError(f"method: must be one of {list(_METHODS)!r}, got {method!r}")


def _check_confidence(confidence: Any) -> None:
    if isinstance(confidence, bool) or not isinstance(
        confidence, (int, float, np.integer, np.floating)
    ):
        raise ParameterError(f"confidence: must be a real number > 0, got {confidence!r}")
    if not confidence > 0:
        raise ParameterError(f"confidence: must be > 0, got {confidence!r}")


def _dp_name(df_dp: pd.DataFrame, col: Hashable, new_column: bool) -> Hashable:
    if new_column:
        dp_col = f"dp_{col}"
        if dp_col in df_dp.columns:
            return dp_col
    if col not in df_dp.columns:
        tried = f"'dp_{col}' or {col!r}" if new_column else repr(col)
        raise ColumnError(f"features: column {tried} is not in df_dp")
    return col


def _standard_error(method: str, n: int) -> float:
    if method == "kendall":
        if n < 2:
            raise ParameterError(f"df_original: kendall correlation needs at least 2 rows, got {n}")
        return math.sqrt((4 * n + 10) / (9 * n * (n - 1)))
    if n < 4:
        raise ParameterError(f"df_original: {method} correlation needs at least 4 rows, got {n}")
    se = 1.0 / math.sqrt(n - 3)
    if method == "spearman":
        se *= math.sqrt(_SPEARMAN_VARIANCE_FACTOR)
    return se


def _column(df: pd.DataFrame, col: Hashable, name: str) -> pd.Series[Any]:
    selected = df[col]
    if isinstance(selected, pd.DataFrame):
        raise ColumnError(f"features: column label {col!r} appears more than once in {name}")
    return selected


def _is_categorical(dtype: Any) -> bool:
    return (
        isinstance(dtype, pd.CategoricalDtype) or is_object_dtype(dtype) or is_string_dtype(dtype)
    )


def _encode_pair(
    original: pd.Series[Any], dp: pd.Series[Any], col: Hashable
) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64]]:
    """Return both columns as floats; categoricals become shared first-appearance codes."""
    if _is_categorical(original.dtype) or _is_categorical(dp.dtype):
        codes, _ = pd.factorize(pd.concat([original, dp], ignore_index=True), sort=False)
        values = codes.astype(np.float64)
        values[codes < 0] = np.nan
        return values[: len(original)], values[len(original) :]
    return _as_float(original, col, "df_original"), _as_float(dp, col, "df_dp")


def _as_float(series: pd.Series[Any], col: Hashable, name: str) -> npt.NDArray[np.float64]:
    dtype = series.dtype
    if is_bool_dtype(dtype) or (is_numeric_dtype(dtype) and not is_complex_dtype(dtype)):
        return series.to_numpy(dtype=np.float64, na_value=np.nan)
    raise DataTypeError(
        f"features: column {col!r} of {name} has dtype {dtype}; allowed are numeric, "
        "boolean, object, string and category"
    )


def _correlations(x: npt.NDArray[np.float64], method: CorrelationMethod) -> npt.NDArray[np.float64]:
    # pandas gives the pairwise-complete handling of missing values for all three methods.
    corr = pd.DataFrame(x, copy=False).corr(method=method)
    values: npt.NDArray[np.float64] = corr.to_numpy(dtype=np.float64)
    return values
