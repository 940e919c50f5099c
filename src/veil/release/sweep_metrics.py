"""The swept column and the metrics a sweep scores its releases with.

:class:`Target` is the column a sweep varies, checked and encoded once for every run;
the metric classes score all the runs of one cell (a mechanism at an epsilon) at once:
a divergence between the column's distributions (:func:`veil.metrics.divergence_distributions`),
or trasgoDP's correlation loss (:func:`veil.metrics.correlation_loss`), computed from the
one row of the correlation matrix a release of the column changes when it can be.
"""

from __future__ import annotations

from collections.abc import Hashable
from dataclasses import dataclass
from typing import Any

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

from veil.metrics import CorrelationMethod, correlation_loss, divergence_distributions

__all__ = [
    "Metric",
    "Target",
    "correlation_metric",
    "divergence_metric",
    "is_number",
    "is_text",
]


def is_text(dtype: Any) -> bool:
    return (
        isinstance(dtype, pd.CategoricalDtype) or is_object_dtype(dtype) or is_string_dtype(dtype)
    )


def is_number(dtype: Any) -> bool:
    return is_numeric_dtype(dtype) and not is_bool_dtype(dtype) and not is_complex_dtype(dtype)


@dataclass(frozen=True)
class Target:
    """The swept column, checked and encoded once for every run."""

    name: Hashable
    values: npt.NDArray[Any]  # numbers for numerical mechanisms
    codes: npt.NDArray[np.int64] | None  # codes over ``domain`` for categorical ones
    labels: pd.Categorical | None  # the same codes as a categorical over ``domain``
    domain: npt.NDArray[Any] | None
    integer: bool
    categorical_dtype: bool


class Metric:
    """Scores the releases of one column; ``score`` takes the runs of one cell at once."""

    def score(self, released: list[npt.NDArray[Any]]) -> list[float]:
        raise NotImplementedError


class _Divergence(Metric):
    def __init__(self, target: Target, name: str) -> None:
        self._name = name
        self._column = target.name
        # Codes stand for categories: the divergences see labels, not their spelling.
        original = target.codes if target.codes is not None else target.values
        self._original = pd.DataFrame({target.name: original})

    def score(self, released: list[npt.NDArray[Any]]) -> list[float]:
        return [
            divergence_distributions(
                self._original, pd.DataFrame({self._column: values}), self._column
            )[self._name]
            for values in released
        ]


class _CorrelationLossByFrame(Metric):
    """The general path: :func:`veil.metrics.correlation_loss` on every release."""

    def __init__(
        self, df: pd.DataFrame, target: Target, features: list[Hashable], method: str
    ) -> None:
        self._original = df[features]
        self._target = target
        self._features = features
        self._method: CorrelationMethod = method  # type: ignore[assignment]

    def score(self, released: list[npt.NDArray[Any]]) -> list[float]:
        target = self._target
        out = []
        for values in released:
            column: npt.NDArray[Any] = values
            if target.domain is not None:
                column = target.domain[values]
                if not target.categorical_dtype:
                    column = column.astype(np.float64)
            dp = self._original.drop(columns=[target.name])
            dp[target.name] = column
            out.append(correlation_loss(self._original, dp, self._features, self._method))
        return out


class _PearsonLoss(Metric):
    """Correlation loss of Pearson correlations when only one feature changes.

    Equal to :func:`veil.metrics.correlation_loss` (same integer coding of categorical
    features, same pairs), computed from the one row of the correlation matrix that a
    release of the swept column can change: all runs of a cell in one matrix product.
    Valid on complete features only (no pairwise deletion).
    """

    def __init__(self, df: pd.DataFrame, target: Target, features: list[Hashable]) -> None:
        n = len(df)
        others = [f for f in features if f != target.name]
        coded = np.empty((n, len(others)), dtype=np.float64)
        for j, feature in enumerate(others):
            coded[:, j] = _coded(df[feature])
        centred = coded - coded.mean(axis=0)
        norms = np.sqrt(np.einsum("ij,ij->j", centred, centred))
        self._unit = centred / norms
        self._target = target
        d = len(features)
        self._pairs = d * (d - 1)
        self._scale = 100.0 / _mean_abs_correlation(df[features])
        self._lookup = np.empty(0, dtype=np.int64)
        self._present = 0
        if target.codes is not None and target.categorical_dtype:
            # The metric codes a categorical feature by first appearance over the original
            # rows, then the released ones: categories absent from the original come last.
            codes, uniques = pd.factorize(df[target.name], sort=False)
            self._lookup = pd.Index(uniques, dtype=object).get_indexer(target.domain)
            self._present = len(uniques)
            original = codes.astype(np.float64)
        elif target.codes is not None:
            original = np.asarray(target.domain, dtype=np.float64)[target.codes]
        else:
            original = target.values.astype(np.float64)
        self._rho = self._row(original[:, None])[:, 0]

    def _encode(self, released: npt.NDArray[Any]) -> npt.NDArray[np.float64]:
        target = self._target
        if target.codes is None:
            return np.asarray(released, dtype=np.float64)
        assert target.domain is not None
        if not target.categorical_dtype:
            return np.asarray(target.domain[released], dtype=np.float64)
        mapped = self._lookup[released]
        new = np.flatnonzero(mapped < 0)
        if new.size:
            categories, first = np.unique(released[new], return_index=True)
            extra = np.empty(target.domain.size, dtype=np.int64)
            extra[categories[np.argsort(first)]] = self._present + np.arange(categories.size)
            mapped[new] = extra[released[new]]
        return np.asarray(mapped, dtype=np.float64)

    def _row(self, columns: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
        centred = columns - columns.mean(axis=0)
        norms = np.sqrt(np.einsum("ij,ij->j", centred, centred))
        with np.errstate(invalid="ignore", divide="ignore"):
            # A constant release has no correlation: NaN, as pandas gives.
            return np.asarray((self._unit.T @ centred) / norms, dtype=np.float64)

    def score(self, released: list[npt.NDArray[Any]]) -> list[float]:
        columns = np.empty((self._unit.shape[0], len(released)), dtype=np.float64, order="F")
        for r, values in enumerate(released):
            columns[:, r] = self._encode(values)
        rho = self._row(columns)
        change = np.abs(rho - self._rho[:, None]).sum(axis=0)
        # Each changed correlation appears twice among the ordered off-diagonal pairs.
        return [float(v) for v in self._scale * 2.0 * change / self._pairs]


def _coded(series: pd.Series[Any]) -> npt.NDArray[np.float64]:
    """A feature as the metric sees it when it is not released: numbers or codes."""
    if is_text(series.dtype):
        codes, _ = pd.factorize(pd.concat([series, series], ignore_index=True), sort=False)
        return codes[: len(series)].astype(np.float64)
    return series.to_numpy(dtype=np.float64)


def _mean_abs_correlation(features: pd.DataFrame) -> float:
    matrix = np.column_stack([_coded(features[c]) for c in features.columns])
    rho = pd.DataFrame(matrix).corr().to_numpy()
    return float(np.mean(np.abs(rho[~np.eye(rho.shape[0], dtype=bool)])))


def correlation_metric(
    df: pd.DataFrame,
    target: Target,
    features: list[Hashable] | None,
    method: CorrelationMethod,
) -> Metric:
    chosen: list[Hashable] = list(df.columns) if features is None else list(features)
    if target.name not in chosen:
        chosen.append(target.name)
    # Validates the features, the method and the strength of the original correlations
    # (it raises when they are too weak to measure a loss); 0 on an unchanged table.
    correlation_loss(df, df, chosen, method)
    frame = df[chosen]
    fast = (
        method == "pearson"
        and not frame.isna().to_numpy().any()
        and not isinstance(frame[target.name].dtype, pd.CategoricalDtype)
        and all(
            is_text(frame[c].dtype) or is_number(frame[c].dtype) or is_bool_dtype(frame[c].dtype)
            for c in chosen
        )
        and all(frame[c].nunique() > 1 for c in chosen)
    )
    if fast:
        return _PearsonLoss(frame, target, chosen)
    return _CorrelationLossByFrame(df, target, chosen, method)


def divergence_metric(target: Target, name: str) -> Metric:
    """The divergence ``name`` (tvd, js, kl, wasserstein) of the column's distribution."""
    return _Divergence(target, name)
