"""One numeric encoding of the release and of the attacker's targets, column by column.

The attacks compare what an attacker knows of a target (its true values, put in the
release's form by :meth:`veil.attacks.Release.view`) with released rows. Every compared
frame is encoded jointly with the release, so that a value has one code everywhere:

* a column whose values are numbers in every frame (text that reads as a number counts, so
  a release read back from CSV compares with the raw records) stays a number, divided by
  its range in the release (what the attacker sees; over all frames when the release's
  values are all equal), so that two released values differ by at most 1 (Gower 1971, as
  in Giomi et al. 2023) and the targets and the control records are measured on one
  scale; missing numbers are NaN;
* any other column is categorical: its values, compared as text, get integer codes shared
  by all frames, missing values the code -1.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
import pandas as pd

__all__ = ["Encoded", "encode", "groups"]

FloatMatrix = npt.NDArray[np.float64]


@dataclass(frozen=True)
class Encoded:
    """Frames encoded column by column on one scale.

    Attributes
    ----------
    columns : tuple of str
    numeric : numpy.ndarray of bool
        Which columns are numbers (the others hold integer codes, -1 for missing).
    frames : tuple of numpy.ndarray
        One ``(rows, columns)`` float matrix per encoded frame, in the order given;
        the first is the release.
    spans : numpy.ndarray
        The range each numeric column was divided by (1 for categorical columns).
    labels : tuple
        For each categorical column, its categories by code (None for numeric columns).
    """

    columns: tuple[str, ...]
    numeric: npt.NDArray[np.bool_]
    frames: tuple[FloatMatrix, ...]
    spans: npt.NDArray[np.float64]
    labels: tuple[npt.NDArray[np.object_] | None, ...]

    def decode(self, column: int, value: float) -> str:
        """An encoded value of column ``column`` as text, as it reads in the data."""
        labels = self.labels[column]
        if labels is None:
            return "missing" if np.isnan(value) else f"{value * self.spans[column]:g}"
        code = int(value)
        return "missing" if code < 0 else str(labels[code])


def _as_numbers(series: pd.Series) -> npt.NDArray[np.float64] | None:
    """The column as floats, or None when a value is not a number (text such as "35" is)."""
    if pd.api.types.is_bool_dtype(series):
        return None
    if pd.api.types.is_numeric_dtype(series):
        return series.to_numpy(dtype=np.float64, na_value=np.nan)
    if not (pd.api.types.is_string_dtype(series) or pd.api.types.is_object_dtype(series)):
        return None
    parsed = pd.to_numeric(series, errors="coerce")
    if bool((parsed.isna() & series.notna()).any()):
        return None
    return parsed.to_numpy(dtype=np.float64, na_value=np.nan)


def _as_text(series: pd.Series) -> npt.NDArray[np.object_]:
    missing = pd.isna(series).to_numpy()
    out = np.full(len(series), None, dtype=object)
    if not missing.all():
        out[~missing] = series[~missing].astype(str).to_numpy(dtype=object)
    return out


def _span(values: npt.NDArray[np.float64]) -> float:
    finite = values[np.isfinite(values)]
    return float(finite.max() - finite.min()) if finite.size else 0.0


def encode(columns: Sequence[str], frames: Sequence[pd.DataFrame]) -> Encoded:
    """Encode ``columns`` of ``frames`` (the release first) on one scale.

    Parameters
    ----------
    columns : sequence of str
        Columns every frame holds.
    frames : sequence of pandas.DataFrame
        The release, then the attacker's views of the targets. None is modified.
    """
    sizes = [len(f) for f in frames]
    bounds = np.cumsum([0, *sizes])
    matrices = [np.empty((n, len(columns)), dtype=np.float64) for n in sizes]
    numeric = np.zeros(len(columns), dtype=bool)
    spans = np.ones(len(columns), dtype=np.float64)
    labels: list[npt.NDArray[np.object_] | None] = []
    for j, column in enumerate(columns):
        series = [f[column] for f in frames]
        numbers = [_as_numbers(s) for s in series]
        if all(x is not None for x in numbers):
            numeric[j] = True
            values = np.concatenate([x for x in numbers if x is not None])
            span = _span(values[: sizes[0]]) or _span(values)
            if span > 0:
                values, spans[j] = values / span, span
            labels.append(None)
        else:
            texts = np.concatenate([_as_text(s) for s in series])
            codes, uniques = pd.factorize(texts, use_na_sentinel=True)
            values = codes.astype(np.float64)
            labels.append(np.asarray(uniques, dtype=object))
        for i, matrix in enumerate(matrices):
            matrix[:, j] = values[bounds[i] : bounds[i + 1]]
    return Encoded(tuple(columns), numeric, tuple(matrices), spans, tuple(labels))


def groups(
    release: FloatMatrix, targets: FloatMatrix
) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]]:
    """Number the distinct encoded rows: each released row's group and each target's.

    A target whose values no released row has gets -1. Missing numbers form one value.

    Returns
    -------
    (release groups, target groups)
    """
    n = release.shape[0]
    if release.shape[1] == 0:
        return np.zeros(n, dtype=np.int64), np.zeros(targets.shape[0], dtype=np.int64)
    keys = np.nan_to_num(np.concatenate([release, targets]), nan=-np.inf)
    _, inverse = np.unique(keys, axis=0, return_inverse=True)
    inverse = inverse.ravel().astype(np.int64)
    ours, theirs = inverse[:n], inverse[n:]
    return ours, np.where(np.isin(theirs, ours), theirs, -1)
