"""The public domain of a table a synthesizer models: categories, bounds and bins.

A :class:`TableDomain` names, for each column, either the list of its categories or its
numeric bounds and the bins the marginal models count in. Both are public inputs: they
come from a release plan or from documentation of the data, never from the records.
:meth:`TableDomain.from_data` exists for exploration only; it warns with
:class:`~veil.errors.PrivacyLeakWarning` and records every value it read from the data in
:attr:`TableDomain.leaks`, which the model and the manifest carry.
"""

from __future__ import annotations

import math
import numbers
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypeAlias

import numpy as np
import numpy.typing as npt
import pandas as pd

from veil.errors import (
    ColumnError,
    DataTypeError,
    DomainError,
    MissingValueError,
    ParameterError,
    PrivacyLeakWarning,
)
from veil.mechanisms import PrivacyCost

__all__ = ["CategoricalColumn", "ColumnDomain", "NumericColumn", "TableDomain"]

IntArray = npt.NDArray[np.int64]

DEFAULT_BINS = 16
"""Bins of a numeric column whose domain gives bounds but no binning."""


@dataclass(frozen=True)
class CategoricalColumn:
    """A column whose values come from a public list.

    Parameters
    ----------
    values : tuple
        The categories, in the order of their codes (unique, non-empty).
    missing : bool, default False
        Whether a missing value is a category of its own (the last code). Without it a
        missing value in the data is an error.
    """

    values: tuple[Any, ...]
    missing: bool = False

    def __post_init__(self) -> None:
        if isinstance(self.values, (str, bytes)) or len(self.values) == 0:
            raise ParameterError(
                f"values: must be a non-empty list of categories, got {self.values!r}"
            )
        if len(set(self.values)) != len(self.values):
            raise ParameterError(f"values: categories must be unique, got {list(self.values)!r}")
        if any(_is_missing(v) for v in self.values):
            raise ParameterError("values: a category cannot be missing; use missing: true")

    @property
    def size(self) -> int:
        """Number of codes (categories, plus one for missing if declared)."""
        return len(self.values) + int(self.missing)

    def to_dict(self) -> dict[str, Any]:
        """The plan-like form :meth:`TableDomain.from_dict` reads back."""
        return {"values": [_plain(v) for v in self.values], "missing": self.missing}


@dataclass(frozen=True)
class NumericColumn:
    """A numeric column with public bounds, counted in bins by the marginal models.

    Bin ``i`` holds ``edges[i] <= x < edges[i + 1]``; the last bin also holds its upper
    edge. A sampled value is drawn uniformly within its bin (integers: uniformly among
    the integers of the bin that lie within the bounds).

    Parameters
    ----------
    lower, upper : float
        Public bounds; a value outside is an error.
    edges : tuple of float
        Increasing bin edges covering ``[lower, upper]``.
    integer : bool, default False
        Integer data (sampled values are integers).
    missing : bool, default False
        Whether a missing value is a category of its own (the last code).
    clip : bool, default False
        Clip values outside the bounds to them instead of refusing the data (what a
        DP estimate of the bounds needs, see :func:`veil.synth.dp_bounds`).
    """

    lower: float
    upper: float
    edges: tuple[float, ...]
    integer: bool = False
    missing: bool = False
    clip: bool = False

    def __post_init__(self) -> None:
        edges = np.asarray(self.edges, dtype=np.float64)
        if edges.ndim != 1 or edges.size < 2 or not np.all(np.isfinite(edges)):
            raise ParameterError(f"edges: need at least two finite edges, got {self.edges!r}")
        if not np.all(np.diff(edges) > 0):
            raise ParameterError(f"edges: must be strictly increasing, got {self.edges!r}")
        if not (math.isfinite(self.lower) and math.isfinite(self.upper)):
            raise ParameterError(f"bounds: must be finite, got [{self.lower}, {self.upper}]")
        if not self.lower <= self.upper:
            raise ParameterError(f"bounds: need lower <= upper, got [{self.lower}, {self.upper}]")
        if edges[0] > self.lower or edges[-1] < self.upper:
            raise ParameterError(
                f"edges: must cover the bounds [{self.lower}, {self.upper}], got "
                f"[{edges[0]}, {edges[-1]}]"
            )
        if self.integer:
            lo, hi = self.integer_ranges()
            if np.any(lo > hi):
                empty = int(np.flatnonzero(lo > hi)[0])
                raise ParameterError(
                    f"edges: bin {empty} [{edges[empty]}, {edges[empty + 1]}) holds no "
                    f"integer within the bounds [{self.lower}, {self.upper}]"
                )

    @property
    def bins(self) -> int:
        """Number of bins."""
        return len(self.edges) - 1

    @property
    def size(self) -> int:
        """Number of codes (bins, plus one for missing if declared)."""
        return self.bins + int(self.missing)

    def integer_ranges(self) -> tuple[IntArray, IntArray]:
        """Smallest and largest integer of each bin within the bounds."""
        edges = np.asarray(self.edges, dtype=np.float64)
        lo = np.maximum(np.ceil(edges[:-1]), math.ceil(self.lower))
        hi = np.ceil(edges[1:]) - 1.0
        hi[-1] = math.floor(edges[-1])
        hi = np.minimum(hi, math.floor(self.upper))
        return lo.astype(np.int64), hi.astype(np.int64)

    def to_dict(self) -> dict[str, Any]:
        """The plan-like form :meth:`TableDomain.from_dict` reads back."""
        return {
            "bounds": [_plain(self.lower), _plain(self.upper)],
            "edges": [float(e) for e in self.edges],
            "integer": self.integer,
            "missing": self.missing,
            "clip": self.clip,
        }

    @classmethod
    def with_bins(
        cls,
        lower: float,
        upper: float,
        bins: int,
        *,
        integer: bool = False,
        missing: bool = False,
        clip: bool = False,
    ) -> NumericColumn:
        """Equal-width bins over the bounds.

        Integer columns get edges at half-integers, ``lower - 0.5 + i · r / k`` with ``r``
        the number of integers in the bounds, so that every bin holds at least one
        integer; ``bins`` above ``r`` gives one bin per integer.
        """
        if isinstance(bins, bool) or not isinstance(bins, numbers.Integral) or bins < 1:
            raise ParameterError(f"bins: must be an integer >= 1, got {bins!r}")
        if integer:
            lo_i, hi_i = math.ceil(lower), math.floor(upper)
            count = hi_i - lo_i + 1
            if count < 1:
                raise ParameterError(f"bounds: [{lower}, {upper}] holds no integer")
            k = min(int(bins), count)
            edges = lo_i - 0.5 + count * np.arange(k + 1) / k
        else:
            if not lower < upper:
                raise ParameterError(
                    f"bounds: need lower < upper for a float column, got [{lower}, {upper}]"
                )
            edges = np.linspace(lower, upper, int(bins) + 1)
        return cls(
            float(lower), float(upper), tuple(float(e) for e in edges), bool(integer), missing, clip
        )


ColumnDomain: TypeAlias = CategoricalColumn | NumericColumn


def _plain(value: Any) -> Any:
    """A NumPy scalar as the Python scalar a manifest can serialize."""
    return value.item() if isinstance(value, np.generic) else value


def _is_missing(value: Any) -> bool:
    try:
        return bool(pd.isna(value))
    except (TypeError, ValueError):
        return False


def _number(value: Any, name: str) -> float:
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise ParameterError(f"{name}: must be a real number, got {value!r}")
    return float(value)


def _column_from_spec(name: str, spec: Any) -> ColumnDomain:
    if isinstance(spec, (CategoricalColumn, NumericColumn)):
        return spec
    if isinstance(spec, (list, tuple)):
        return CategoricalColumn(tuple(spec))
    if not isinstance(spec, Mapping):
        raise ParameterError(
            f"domain[{name!r}]: must be a list of categories or a mapping with 'values' or "
            f"'bounds', got {type(spec).__name__}"
        )
    known = {"values", "missing", "bounds", "bins", "edges", "integer", "clip"}
    unknown = sorted(set(spec) - known)
    if unknown:
        raise ParameterError(f"domain[{name!r}]: unknown keys {unknown}; allowed: {sorted(known)}")
    missing = spec.get("missing", False)
    if not isinstance(missing, bool):
        raise ParameterError(f"domain[{name!r}].missing: must be true or false, got {missing!r}")
    if "values" in spec:
        if {"bounds", "bins", "edges", "integer", "clip"} & set(spec):
            raise ParameterError(
                f"domain[{name!r}]: give either 'values' (categorical) or 'bounds' (numeric)"
            )
        return CategoricalColumn(tuple(spec["values"]), missing)
    integer = spec.get("integer", False)
    clip = spec.get("clip", False)
    for key, flag in (("integer", integer), ("clip", clip)):
        if not isinstance(flag, bool):
            raise ParameterError(f"domain[{name!r}].{key}: must be true or false, got {flag!r}")
    edges = spec.get("edges")
    bounds = spec.get("bounds")
    if edges is not None:
        if "bins" in spec:
            raise ParameterError(f"domain[{name!r}]: give 'bins' or 'edges', not both")
        edge_list = [_number(e, f"domain[{name!r}].edges") for e in edges]
        if bounds is None:
            bounds = (edge_list[0], edge_list[-1]) if edge_list else (0.0, 0.0)
        lo, hi = _bounds(name, bounds)
        return NumericColumn(lo, hi, tuple(edge_list), integer, missing, clip)
    if bounds is None:
        raise ParameterError(
            f"domain[{name!r}]: needs 'values' (categorical) or 'bounds' (numeric)"
        )
    lo, hi = _bounds(name, bounds)
    return NumericColumn.with_bins(
        lo, hi, spec.get("bins", DEFAULT_BINS), integer=integer, missing=missing, clip=clip
    )


def _bounds(name: str, bounds: Any) -> tuple[float, float]:
    if isinstance(bounds, (str, bytes)) or not isinstance(bounds, Sequence) or len(bounds) != 2:
        raise ParameterError(f"domain[{name!r}].bounds: must be [lower, upper], got {bounds!r}")
    return (
        _number(bounds[0], f"domain[{name!r}].bounds"),
        _number(bounds[1], f"domain[{name!r}].bounds"),
    )


class TableDomain:
    """Public per-column domains of a table, in column order.

    Parameters
    ----------
    columns : mapping of column name to CategoricalColumn or NumericColumn
    leaks : sequence of str, optional
        Data-dependent choices behind this domain that no privacy cost covers (filled
        by :meth:`from_data`).
    costs : sequence of PrivacyCost, optional
        What a DP estimate of parts of this domain spent (filled by
        :func:`veil.synth.dp_bounds`); a model fitted on the domain adds them to its
        own cost.

    Examples
    --------
    >>> from veil.synth import TableDomain
    >>> domain = TableDomain.from_dict({
    ...     "sex": ["Female", "Male"],
    ...     "age": {"bounds": [16, 100], "bins": 4, "integer": True},
    ... })
    >>> domain.sizes
    {'sex': 2, 'age': 4}
    """

    def __init__(
        self,
        columns: Mapping[str, ColumnDomain],
        *,
        leaks: Sequence[str] = (),
        costs: Sequence[PrivacyCost] = (),
    ) -> None:
        if not isinstance(columns, Mapping) or len(columns) == 0:
            raise ParameterError("domain: needs at least one column")
        for name, col in columns.items():
            if not isinstance(col, (CategoricalColumn, NumericColumn)):
                raise ParameterError(
                    f"domain[{name!r}]: must be a CategoricalColumn or NumericColumn, got "
                    f"{type(col).__name__}"
                )
        self.columns: dict[str, ColumnDomain] = dict(columns)
        self.leaks: tuple[str, ...] = tuple(leaks)
        self.costs: tuple[PrivacyCost, ...] = tuple(costs)

    @classmethod
    def from_dict(cls, spec: Mapping[str, Any]) -> TableDomain:
        """Build from a plan-like mapping.

        Each column maps to a list of categories, or to a mapping with ``values`` (and
        optionally ``missing: true``), or with ``bounds: [lower, upper]`` and either
        ``bins`` (equal width, default 16) or ``edges``, plus ``integer`` and
        ``missing``.
        """
        if isinstance(spec, TableDomain):
            return spec
        if not isinstance(spec, Mapping):
            raise ParameterError(
                f"domain: must be a mapping of column to domain, got {type(spec).__name__}"
            )
        return cls({str(name): _column_from_spec(str(name), s) for name, s in spec.items()})

    @classmethod
    def from_data(
        cls,
        data: pd.DataFrame,
        *,
        columns: Sequence[str] | None = None,
        bins: int = DEFAULT_BINS,
    ) -> TableDomain:
        """Read categories and bounds from the records (not private: warns and records).

        Categories are the distinct values seen, bounds the minimum and maximum, and a
        column holding a missing value declares ``missing``. Every one of these is a
        leak: a category seen once tells that its holder is in the data, and the bounds
        are the extreme records' values. The leaks are listed in :attr:`leaks`.
        """
        if not isinstance(data, pd.DataFrame):
            raise DataTypeError(f"data: must be a pandas DataFrame, got {type(data).__name__}")
        names = list(data.columns) if columns is None else list(columns)
        absent = [c for c in names if c not in data.columns]
        if absent:
            raise ColumnError(f"columns: {absent} are not columns of data")
        warnings.warn(
            f"TableDomain.from_data reads the categories and bounds of {names} from the "
            "records: they are not protected by the synthesizer's guarantee; declare them "
            "from public knowledge for a release",
            PrivacyLeakWarning,
            stacklevel=2,
        )
        out: dict[str, ColumnDomain] = {}
        leaks = []
        for name in names:
            series = data[name]
            missing = bool(series.isna().any())
            present = series.dropna()
            if pd.api.types.is_numeric_dtype(series) and not pd.api.types.is_bool_dtype(series):
                if present.empty:
                    raise DomainError(f"{name}: no value to read bounds from")
                lo, hi = float(present.min()), float(present.max())
                integer = pd.api.types.is_integer_dtype(series) or bool(
                    np.all(np.mod(present.to_numpy(dtype=np.float64), 1.0) == 0)
                )
                if lo == hi and not integer:
                    hi = lo + 1.0
                out[name] = NumericColumn.with_bins(lo, hi, bins, integer=integer, missing=missing)
                leaks.append(f"{name}: bounds [{lo:g}, {hi:g}] read from the data")
            else:
                values = tuple(sorted(pd.unique(present).tolist(), key=str))
                if not values:
                    raise DomainError(f"{name}: no value to read categories from")
                out[name] = CategoricalColumn(values, missing)
                leaks.append(f"{name}: {len(values)} categories read from the data")
            if missing:
                leaks.append(f"{name}: presence of missing values read from the data")
        return cls(out, leaks=leaks)

    @property
    def names(self) -> tuple[str, ...]:
        """Column names, in order."""
        return tuple(self.columns)

    @property
    def sizes(self) -> dict[str, int]:
        """Number of codes of each column."""
        return {name: col.size for name, col in self.columns.items()}

    def project(self, names: Sequence[str]) -> TableDomain:
        """The domain of a subset of the columns (in the order given)."""
        self.check_names(names, "names")
        return TableDomain({n: self.columns[n] for n in names}, leaks=self.leaks, costs=self.costs)

    def check_names(self, names: Sequence[str], parameter: str) -> None:
        """Raise ColumnError if a name is not a column of this domain."""
        unknown = [n for n in names if n not in self.columns]
        if unknown:
            raise ColumnError(
                f"{parameter}: {unknown} are not columns of the domain (columns: "
                f"{list(self.columns)})"
            )

    def to_dict(self) -> dict[str, Any]:
        """Plan-like mapping of every column (what a manifest can carry)."""
        return {name: col.to_dict() for name, col in self.columns.items()}

    def encode(self, data: pd.DataFrame, names: Sequence[str] | None = None) -> dict[str, IntArray]:
        """Integer codes of each column of ``data`` (the frame is only read).

        Raises
        ------
        veil.errors.ColumnError
            A domain column is missing from ``data``.
        veil.errors.DomainError
            A value lies outside its column's categories or bounds (the message gives
            counts, not values).
        veil.errors.MissingValueError
            A missing value in a column whose domain does not declare ``missing``.
        """
        cols = self.names if names is None else tuple(names)
        self.check_names(cols, "names")
        absent = [c for c in cols if c not in data.columns]
        if absent:
            raise ColumnError(f"data: lacks the domain columns {absent}")
        return {c: _encode(c, data[c], self.columns[c]) for c in cols}

    def decode(self, codes: Mapping[str, IntArray], rng: np.random.Generator) -> dict[str, Any]:
        """Column values for codes; a numeric bin becomes a uniform draw within it."""
        return {c: _decode(codes[c], self.columns[c], rng) for c in codes}

    def __repr__(self) -> str:
        return f"TableDomain({self.sizes})"


def _encode(name: str, series: pd.Series, col: ColumnDomain) -> IntArray:
    missing = series.isna().to_numpy()
    n_missing = int(missing.sum())
    if n_missing and not col.missing:
        raise MissingValueError(
            f"{name}: {n_missing} missing values, and its domain does not declare missing "
            "(set missing: true to model them as a category of their own)"
        )
    if isinstance(col, CategoricalColumn):
        categories = pd.Index(list(col.values), dtype=object)
        try:
            codes = np.asarray(categories.get_indexer(series.astype(object)), dtype=np.int64)
        except (TypeError, ValueError) as exc:
            raise DomainError(
                f"{name}: values cannot be matched to its categories ({exc})"
            ) from exc
        outside = int(((codes < 0) & ~missing).sum())
        if outside:
            raise DomainError(
                f"{name}: {outside} values are not among its {len(col.values)} declared "
                "categories; the domain must cover the data"
            )
        codes[missing] = len(col.values)
        return codes
    if not pd.api.types.is_numeric_dtype(series) or pd.api.types.is_bool_dtype(series):
        raise DataTypeError(
            f"{name}: a numeric domain needs a numeric column, got dtype {series.dtype}"
        )
    values = series.to_numpy(dtype=np.float64, na_value=np.nan)
    present = ~missing
    if col.clip:
        values = np.clip(values, col.lower, col.upper)
    outside = int(((values[present] < col.lower) | (values[present] > col.upper)).sum())
    if outside:
        raise DomainError(
            f"{name}: {outside} values fall outside the public bounds [{col.lower:g}, "
            f"{col.upper:g}]; the domain must cover the data"
        )
    if col.integer and np.any(np.mod(values[present], 1.0) != 0):
        raise DomainError(f"{name}: the domain is integer but the column holds fractions")
    edges = np.asarray(col.edges, dtype=np.float64)
    codes = np.searchsorted(edges, np.where(present, values, edges[0]), side="right") - 1
    codes = np.clip(codes, 0, col.bins - 1).astype(np.int64)
    codes[missing] = col.bins
    return codes


def _decode(codes: IntArray, col: ColumnDomain, rng: np.random.Generator) -> Any:
    codes = np.asarray(codes, dtype=np.int64)
    if isinstance(col, CategoricalColumn):
        labels = np.empty(len(col.values) + 1, dtype=object)
        labels[: len(col.values)] = list(col.values)
        labels[-1] = None
        return pd.Series(labels[codes]).infer_objects().to_numpy()
    is_missing = codes >= col.bins
    safe = np.where(is_missing, 0, codes)
    if col.integer:
        lo, hi = col.integer_ranges()
        draws = lo[safe] + np.floor(rng.random(codes.size) * (hi[safe] - lo[safe] + 1)).astype(
            np.int64
        )
        draws = np.minimum(draws, hi[safe])
        if is_missing.any():
            out = draws.astype(np.float64)
            out[is_missing] = np.nan
            return out
        return draws
    edges = np.asarray(col.edges, dtype=np.float64)
    lo = np.maximum(edges[safe], col.lower)
    hi = np.minimum(edges[safe + 1], col.upper)
    out = lo + rng.random(codes.size) * (hi - lo)
    out[is_missing] = np.nan
    return out
