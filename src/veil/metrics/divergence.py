"""Divergences between the distribution of a column before and after privatization."""

from __future__ import annotations

import math
from collections.abc import Hashable
from typing import Any

import numpy as np
import numpy.typing as npt
import pandas as pd
from pandas.api.types import is_bool_dtype, is_complex_dtype, is_numeric_dtype
from scipy.special import rel_entr
from scipy.stats import wasserstein_distance

from veil.errors import ColumnError, DataTypeError, ParameterError

__all__ = ["divergence_distributions"]


def divergence_distributions(
    df_original: pd.DataFrame,
    df_dp: pd.DataFrame,
    column: Hashable,
    new_column: bool = False,
) -> dict[str, float]:
    """Divergences between the empirical distributions of a column and its privatized copy.

    Let :math:`p` and :math:`q` be the relative frequencies of each distinct value of the
    original and the privatized column, over the union of the values seen in either, and
    :math:`m = (p + q) / 2`. The function returns

    - ``"tvd"``, the total variation distance :math:`\\tfrac12 \\sum_v |p_v - q_v|`, in
      [0, 1];
    - ``"js"``, the Jensen-Shannon divergence
      :math:`\\tfrac12 \\mathrm{KL}(p \\| m) + \\tfrac12 \\mathrm{KL}(q \\| m)` in nats, in
      [0, ln 2] (the square of SciPy's Jensen-Shannon distance with ``base=e``) [2]_;
    - ``"kl"``, the Kullback-Leibler divergence
      :math:`\\mathrm{KL}(p \\| q) = \\sum_v p_v \\ln(p_v / q_v)` in nats, as
      :func:`scipy.stats.entropy` computes it [1]_. It is ``inf`` when the privatized
      column never takes a value the original takes;
    - ``"wasserstein"``, only when both columns are numeric (not boolean): the
      1-Wasserstein (earth mover's) distance between the two samples of values, in the
      unit of the column [3]_, as :func:`scipy.stats.wasserstein_distance` computes it.

    The first three treat values as unordered labels, so they apply to numeric and
    categorical columns alike; the Wasserstein distance also accounts for how far values
    moved. The metric reads published data only: it spends no privacy budget.

    Parameters
    ----------
    df_original : pandas.DataFrame
        The original table. Not modified.
    df_dp : pandas.DataFrame
        The privatized table; its row count may differ from ``df_original``'s. Not
        modified.
    column : column label
        The privatized column, as named in ``df_original``.
    new_column : bool, default False
        If True, the privatized values are read from ``dp_{column}`` in ``df_dp`` (the
        layout produced by the ``new_column=True`` option of the LDP functions); if False,
        from ``column``.

    Returns
    -------
    dict of str to float
        Keys ``"tvd"``, ``"js"``, ``"kl"`` and, for numeric columns, ``"wasserstein"``.

    Raises
    ------
    veil.errors.ColumnError
        If ``column`` is missing from ``df_original`` or the privatized column is missing
        from ``df_dp``.
    veil.errors.ParameterError
        If either column has no rows.
    veil.errors.DataTypeError
        If either argument is not a DataFrame.

    Notes
    -----
    Missing values (NaN, None, ``pd.NA``) count as one value of their own in ``"tvd"``,
    ``"js"`` and ``"kl"``, so a mechanism that creates or removes missing values is seen
    as changing the distribution (trasgoDP drops them instead; both agree on columns
    without missing values). The Wasserstein distance uses the present values only and is
    NaN when either column has none. Values are matched by equality: ``1`` and ``1.0``
    are the same value, ``1`` and ``"1"`` are not. Unobserved categories of a ``category``
    dtype have zero frequency on both sides and do not change any result.

    References
    ----------
    .. [1] S. Kullback and R. A. Leibler, "On information and sufficiency", Annals of
       Mathematical Statistics 22(1), 79-86, 1951.
    .. [2] J. Lin, "Divergence measures based on the Shannon entropy", IEEE Transactions
       on Information Theory 37(1), 145-151, 1991.
    .. [3] L. N. Vaserstein, "Markov processes over denumerable products of spaces,
       describing large systems of automata", Problems of Information Transmission 5(3),
       47-52, 1969.

    Examples
    --------
    >>> import pandas as pd
    >>> from veil.metrics import divergence_distributions
    >>> original = pd.DataFrame({"sex": ["F", "F", "M", "M"]})
    >>> released = pd.DataFrame({"sex": ["F", "M", "M", "M"]})
    >>> divergence_distributions(original, released, "sex")["tvd"]
    0.25
    """
    for name, df in (("df_original", df_original), ("df_dp", df_dp)):
        if not isinstance(df, pd.DataFrame):
            raise DataTypeError(f"{name}: must be a pandas DataFrame, got {type(df).__name__}")
    dp_column = f"dp_{column}" if new_column else column
    original = _column(df_original, column, "df_original")
    dp = _column(df_dp, dp_column, "df_dp")

    values, p, q = _frequencies(original, dp)
    m = 0.5 * (p + q)
    result = {
        "tvd": 0.5 * float(np.sum(np.abs(p - q))),
        "js": 0.5 * float(np.sum(rel_entr(p, m))) + 0.5 * float(np.sum(rel_entr(q, m))),
        "kl": float(np.sum(rel_entr(p, q))),
    }
    if _is_numeric(original.dtype) and _is_numeric(dp.dtype):
        result["wasserstein"] = _wasserstein(values, p, q)
    return result


def _column(df: pd.DataFrame, col: Hashable, name: str) -> pd.Series[Any]:
    if col not in df.columns:
        raise ColumnError(f"column: {col!r} is not in {name}")
    selected = df[col]
    if isinstance(selected, pd.DataFrame):
        raise ColumnError(f"column: label {col!r} appears more than once in {name}")
    if len(selected) == 0:
        raise ParameterError(f"{name}: column {col!r} must have at least 1 row, got 0")
    return selected


def _frequencies(
    original: pd.Series[Any], dp: pd.Series[Any]
) -> tuple[pd.Index[Any], npt.NDArray[np.float64], npt.NDArray[np.float64]]:
    """The union of both columns' values and their relative frequencies in each."""
    codes, uniques = pd.factorize(
        pd.concat([original, dp], ignore_index=True), sort=False, use_na_sentinel=False
    )
    k = len(uniques)
    n = len(original)
    p = np.bincount(codes[:n], minlength=k) / n
    q = np.bincount(codes[n:], minlength=k) / len(dp)
    return pd.Index(uniques), p, q


def _is_numeric(dtype: Any) -> bool:
    return is_numeric_dtype(dtype) and not is_bool_dtype(dtype) and not is_complex_dtype(dtype)


def _wasserstein(
    values: pd.Index[Any], p: npt.NDArray[np.float64], q: npt.NDArray[np.float64]
) -> float:
    """W1 between the two empirical distributions, from their frequency tables.

    Equal to :func:`scipy.stats.wasserstein_distance` on the raw samples, at the cost
    of the distinct values only. Missing values are left out (weights renormalized).
    """
    points = np.asarray(values.to_numpy(dtype=np.float64, na_value=np.nan), dtype=np.float64)
    present = ~np.isnan(points)
    if not (p[present].sum() > 0 and q[present].sum() > 0):
        return math.nan
    return float(
        wasserstein_distance(
            points[present], points[present], u_weights=p[present], v_weights=q[present]
        )
    )
