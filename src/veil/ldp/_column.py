"""Turning data-frame columns and arrays into mechanism inputs, and back.

Shared by :mod:`veil.ldp.numerical`, :mod:`veil.ldp.categorical` and
:mod:`veil.ldp.geoindis`: column look-up, dtype checks, the missing-value policy,
declared categorical domains, and assembling the output without copying or mutating
the caller's frame.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
import pandas as pd

from veil.errors import (
    ColumnError,
    DataTypeError,
    DomainError,
    MissingValueError,
    ParameterError,
    PrivacyLeakWarning,
)
from veil.frames import arrow_strings, factorize_objects, output_frame, record_cost
from veil.mechanisms import PrivacyCost, PrivacyLedger

MissingPolicy = Literal["error", "keep"]
ArrayLike = Sequence[Any] | np.ndarray | pd.Series | pd.Index | pd.Categorical

_SHOWN = 10
# Records whose distinct values guess an Arrow string column's domain (_arrow_factorize).
_PREFIX = 1 << 16


def check_missing(missing: Any) -> MissingPolicy:
    """Validate the ``missing=`` policy."""
    if missing not in ("error", "keep"):
        raise ParameterError(
            f"missing: must be 'error' (refuse missing values) or 'keep' (leave them "
            f"missing, unprotected), got {missing!r}"
        )
    return missing  # type: ignore[no-any-return]


def column_of(df: Any, column: Any) -> pd.Series:
    """Return ``df[column]`` or raise :class:`ColumnError` naming the column."""
    if not isinstance(df, pd.DataFrame):
        raise DataTypeError(f"df: expected a pandas DataFrame, got {type(df).__name__}")
    if column not in df.columns:
        raise ColumnError(
            f"column: {column!r} is not in the dataframe (columns: {list(df.columns)[:20]})"
        )
    selected = df[column]
    if isinstance(selected, pd.DataFrame):
        raise ColumnError(
            f"column: {column!r} names {selected.shape[1]} columns; names must be unique"
        )
    series: pd.Series = selected
    return series


def _describe(values: np.ndarray) -> str:
    shown = [repr(v) for v in values[:_SHOWN]]
    more = f" and {len(values) - _SHOWN} more" if len(values) > _SHOWN else ""
    return ", ".join(shown) + more


@dataclass(frozen=True)
class NumericColumn:
    """Values ready for a numerical mechanism."""

    values: np.ndarray  # int64 or float64, missing entries filled with a valid value
    integer: bool
    missing: np.ndarray | None  # boolean mask of missing entries, if any are kept


def numeric_input(data: Any, *, name: str, missing: MissingPolicy, mechanism: str) -> NumericColumn:
    """Check a numeric column/array and split off its missing entries.

    Integer dtypes (NumPy or pandas nullable) give integer data; float dtypes give
    float data. Booleans, strings, categoricals and objects are refused.
    """
    if isinstance(data, list):
        data = np.asarray(data)
    dtype = data.dtype
    kind = getattr(dtype, "kind", "O")
    if isinstance(dtype, pd.CategoricalDtype) or kind not in "iuf":
        raise DataTypeError(
            f"{name}: type {dtype} not allowed for the {mechanism} mechanism; it needs "
            "integer or float values"
        )
    integer = kind in "iu"
    if isinstance(data, (pd.Series, pd.Index)) and integer and isinstance(dtype, np.dtype):
        # A NumPy integer column holds no missing value: its buffer is read as it is,
        # as an array's is below (the mechanisms never write into their input).
        values = np.asarray(data.to_numpy())
        mask = np.zeros(values.shape, dtype=bool)
    elif isinstance(data, (pd.Series, pd.Index)) or not isinstance(data, np.ndarray):
        mask = np.asarray(pd.isna(data))
        target = np.int64 if integer else np.float64
        fill = 0 if integer else np.nan
        values = np.asarray(pd.Series(data).to_numpy(dtype=target, na_value=fill))
    else:
        values = data
        mask = np.isnan(values) if not integer else np.zeros(values.shape, dtype=bool)
    if not integer:
        infinite = np.isinf(values)
        if infinite.any():
            raise DomainError(
                f"{name}: holds {int(infinite.sum())} infinite values; the mechanism needs "
                "finite values (clean them or treat them as missing first)"
            )
    n_missing = int(mask.sum())
    if n_missing and missing == "error":
        raise MissingValueError(
            f"{name}: holds {n_missing} missing values; pass missing='keep' to leave them "
            "missing in the output (their missingness is released unprotected)"
        )
    if n_missing:
        values = np.where(mask, values.dtype.type(0), values)
    return NumericColumn(values=values, integer=integer, missing=mask if n_missing else None)


def numeric_output(values: np.ndarray, column: NumericColumn) -> Any:
    """Return noisy values with missing entries restored (nullable Int64 for integers)."""
    if column.missing is None:
        return values
    if column.integer:
        return pd.arrays.IntegerArray(values.astype(np.int64), column.missing.copy())
    out = values.astype(np.float64, copy=True)
    out[column.missing] = np.nan
    return out


@dataclass(frozen=True)
class CategoricalColumn:
    """Integer codes over a domain, ready for a categorical mechanism."""

    codes: np.ndarray  # int32 (Arrow strings) or int64, -1 for kept missing entries
    categories: np.ndarray
    missing: np.ndarray | None
    dtype: Any  # the input's dtype, to shape the output alike
    inferred: bool

    def valid_codes(self) -> np.ndarray:
        """The codes with kept missing entries set to 0 (their output is masked later)."""
        return self.codes if self.missing is None else np.maximum(self.codes, 0)


_NUMERIC_KINDS = frozenset(
    {"integer", "floating", "mixed-integer-float", "decimal", "complex", "boolean"}
)


def _list_to_array(data: Sequence[Any]) -> np.ndarray:
    """A list as an array: numbers stay numbers, all-string lists become NumPy strings."""
    if pd.api.types.infer_dtype(data, skipna=True) in _NUMERIC_KINDS:
        return np.asarray(data)
    if pd.api.types.infer_dtype(data, skipna=False) == "string":
        return np.asarray(data)
    return np.asarray(data, dtype=object)


def _is_text_like(data: Any) -> bool:
    dtype = data.dtype
    if isinstance(dtype, (pd.CategoricalDtype, pd.StringDtype)):
        return True
    kind = getattr(dtype, "kind", "")
    if kind in "US":
        return True
    if kind != "O":
        return False
    # Object columns: judge by the first present value, as trasgoDP does (a full scan
    # of millions of Python objects would cost more than the mechanism).
    present = pd.Series(np.asarray(data, dtype=object)[:1000]).dropna()
    return present.empty or isinstance(present.iloc[0], str)


def categorical_input(
    data: Any,
    *,
    name: str,
    domain: ArrayLike | None,
    missing: MissingPolicy,
    mechanism: str,
) -> CategoricalColumn:
    """Encode a categorical column/array as codes over its domain.

    With ``domain`` given (the public list of categories) values outside it raise
    :class:`DomainError`. Without it the domain is read from the data (the categories of
    a pandas categorical dtype, else the sorted distinct values) and a
    :class:`PrivacyLeakWarning` says that this makes the output depend on which
    categories happen to be present.
    """
    check_domain_argument(domain)
    if isinstance(data, (list, tuple)):
        data = _list_to_array(data)
    dtype = data.dtype
    if domain is None and not _is_text_like(data):
        raise DataTypeError(
            f"{name}: the {mechanism} mechanism needs a categorical column (strings or a "
            f"categorical dtype), got {dtype}; pass domain= to randomize coded values"
        )
    if domain is None:
        if isinstance(dtype, pd.CategoricalDtype):
            categories = np.asarray(dtype.categories, dtype=object)
            codes = np.asarray(pd.Categorical(data).codes, dtype=np.int64)
            source = "the categories of its categorical dtype"
        elif _is_arrow_string(dtype):
            codes, categories = _arrow_factorize(data)
            source = "the distinct values present in the data"
        elif _is_object(dtype):
            # By identity first, then the few distinct objects by value (sorted): the
            # codes and categories of pd.factorize(values, sort=True), hashing integers.
            by_object, objects = factorize_objects(np.asarray(data))
            by_value, uniques = pd.factorize(objects, sort=True)
            codes = np.asarray(by_value, dtype=np.int64)[by_object]
            categories = np.asarray(uniques, dtype=object)
            source = "the distinct values present in the data"
        else:
            codes, uniques = pd.factorize(np.asarray(data, dtype=object), sort=True)
            codes = codes.astype(np.int64, copy=False)
            categories = np.asarray(uniques, dtype=object)
            source = "the distinct values present in the data"
        warnings.warn(
            f"{name}: no domain= given, so the domain is {source}; a category held by one "
            "person appears in the output only because that person is in the data. "
            "Declare the public domain with domain=[...]",
            PrivacyLeakWarning,
            stacklevel=5,
        )
        inferred = True
    else:
        categories = np.asarray(list(domain), dtype=object)
        if categories.ndim != 1 or categories.size == 0:
            raise ParameterError(
                f"domain: must be a non-empty sequence of categories, got {domain!r}"
            )
        if pd.Index(categories).has_duplicates:
            dup = pd.Index(categories)[pd.Index(categories).duplicated()].unique().to_numpy()
            raise ParameterError(f"domain: categories must be unique, repeated: {_describe(dup)}")
        codes = _codes_over(data, pd.Index(categories, dtype=object))
        inferred = False
    unknown = codes < 0
    mask: np.ndarray | None = None
    if unknown.any():
        flat = _values_at(data, unknown)
        is_missing = np.asarray(pd.isna(flat), dtype=bool)
        if not is_missing.all():
            bad = pd.unique(flat[~is_missing])
            raise DomainError(
                f"{name}: {len(bad)} values are not in the declared domain: {_describe(bad)}"
            )
        if missing == "error":
            raise MissingValueError(
                f"{name}: holds {int(unknown.sum())} missing values; pass missing='keep' to "
                "leave them missing in the output (their missingness is released unprotected)"
            )
        mask = unknown
    return CategoricalColumn(
        codes=codes, categories=categories, missing=mask, dtype=dtype, inferred=inferred
    )


def _is_object(dtype: Any) -> bool:
    """A NumPy object dtype (pandas 2's default for strings)."""
    return isinstance(dtype, np.dtype) and dtype.kind == "O"


def _is_arrow_string(dtype: Any) -> bool:
    return isinstance(dtype, pd.StringDtype) and dtype.storage == "pyarrow"


def _arrow_factorize(data: Any) -> tuple[np.ndarray, np.ndarray]:
    """Sorted distinct values and int64 codes (-1: missing) of an Arrow string column.

    Encoded in Arrow, without making a Python string per record. The distinct values
    of the first :data:`_PREFIX` records usually hold them all, and looking every record
    up in them costs about half of building a dictionary of the whole column; values
    the prefix lacks are found among the records it left unmatched, then every record
    is looked up again in the completed set. UTF-8 byte order is code-point order, so
    the categories come out in the order ``pd.factorize(..., sort=True)`` gives.
    """
    import pyarrow as pa
    import pyarrow.compute as pc

    array = pa.array(data)
    if isinstance(array, pa.ChunkedArray):
        array = array.combine_chunks()
    categories = _sorted_distinct(pc.unique(array.slice(0, _PREFIX)))
    found = pc.index_in(array, value_set=categories)
    if found.null_count > array.null_count:  # values the prefix does not hold
        unmatched = pc.and_(pc.is_null(found), pc.is_valid(array))
        rest = pc.unique(pc.filter(array, unmatched))
        categories = _sorted_distinct(pa.concat_arrays([categories, rest]))
        found = pc.index_in(array, value_set=categories)
    return _arrow_codes(found), np.asarray(categories.to_pylist(), dtype=object)


def _arrow_codes(found: Any) -> np.ndarray:
    """Arrow's int32 look-up result as codes, -1 where it is null.

    Without nulls the codes are Arrow's buffer itself (read-only, no copy): the
    mechanisms only read them, and int32 halves the memory of every later pass.
    """
    import pyarrow.compute as pc

    if found.null_count:
        found = pc.fill_null(found, -1)
    return np.asarray(found.to_numpy())


def _sorted_distinct(values: Any) -> Any:
    """The non-null ``values`` (already distinct) of an Arrow array, sorted."""
    import pyarrow.compute as pc

    present = values.drop_null()
    return present.take(pc.array_sort_indices(present))


def _values_at(data: Any, mask: np.ndarray) -> np.ndarray:
    """``data[mask]`` as an object array, converting only the selected entries."""
    values = data.array if isinstance(data, pd.Series) else data
    try:
        picked = values[mask]
    except (TypeError, IndexError, KeyError):
        picked = np.asarray(values, dtype=object)[mask]
    return np.asarray(picked, dtype=object)


def _codes_over(data: Any, domain: pd.Index) -> np.ndarray:
    """Position of each value in ``domain``; -1 for missing values and unknown ones."""
    if isinstance(data.dtype, pd.CategoricalDtype):
        own = pd.Categorical(data)
        mapping = domain.get_indexer(own.categories)
        codes = np.asarray(own.codes, dtype=np.int64)
        return np.where(codes >= 0, mapping[np.maximum(codes, 0)], -1)
    if _is_arrow_string(data.dtype) and all(isinstance(c, str) for c in domain):
        # Arrow strings are looked up in Arrow, without Python string objects.
        import pyarrow as pa
        import pyarrow.compute as pc

        found = pc.index_in(pa.array(data), value_set=pa.array(list(domain), pa.string()))
        return _arrow_codes(found)
    if _is_object(data.dtype):
        # Each distinct object is looked up once (see factorize_objects).
        by_object, objects = factorize_objects(np.asarray(data))
        return np.asarray(domain.get_indexer(objects), dtype=np.int64)[by_object]
    return np.asarray(domain.get_indexer(data), dtype=np.int64)


def categorical_output(codes: np.ndarray, column: CategoricalColumn, *, array: bool) -> Any:
    """Map randomized codes back to categories, shaped like the input.

    A pandas categorical input gives a categorical over the domain; arrays of NumPy
    strings give NumPy strings; everything else gives an object array. Kept missing
    entries are restored.
    """
    if column.missing is not None:
        codes = np.where(column.missing, -1, codes)
    if isinstance(column.dtype, pd.CategoricalDtype):
        if column.inferred:
            dtype = column.dtype
        else:
            dtype = pd.CategoricalDtype(
                pd.Index(column.categories.tolist()), ordered=column.dtype.ordered
            )
        return pd.Categorical.from_codes(codes, dtype=dtype)
    categories = column.categories
    if (
        not array
        and isinstance(column.dtype, pd.StringDtype)
        and column.dtype.storage == "pyarrow"
        and all(isinstance(c, str) for c in categories)
    ):
        return arrow_strings(codes, categories, column.dtype)
    if array and getattr(column.dtype, "kind", "") == "U" and column.missing is None:
        return np.asarray(categories.astype(str)).take(codes)
    out = categories.take(codes if column.missing is None else np.maximum(codes, 0))
    if column.missing is not None:
        out[column.missing] = np.nan
    if isinstance(column.dtype, pd.StringDtype) and not array:
        return pd.array(out, dtype=column.dtype)
    return out


def with_column(
    df: pd.DataFrame,
    target: Any,
    values: Any,
    cost: PrivacyCost,
    ledger: PrivacyLedger | None,
) -> pd.DataFrame:
    """Return a copy of ``df`` with ``target`` set to ``values``.

    The caller's frame is not modified. Under copy-on-write (pandas 3, or pandas 2 with
    ``mode.copy_on_write`` on) the copy shares the untouched columns; otherwise it is a
    deep copy, so that editing the output in place cannot reach the input. The cost is
    appended to ``ledger`` and to ``out.attrs["veil.privacy"]``.
    """
    out = output_frame(df)
    if not _wrote_into_own_copy(out, df, target, values):
        if not isinstance(values, pd.Series):
            # An object array stays object: pandas 3 would otherwise infer its strings
            # into a new str column (a copy of every value, and a dtype the input did
            # not have).
            dtype = object if isinstance(values, np.ndarray) and values.dtype == object else None
            values = pd.Series(values, index=df.index, dtype=dtype, copy=False)
        out[target] = values
    record_cost(out, df, cost, ledger)
    return out


def _wrote_into_own_copy(out: pd.DataFrame, df: pd.DataFrame, target: Any, values: Any) -> bool:
    """Write ``values`` over ``out[target]`` in place when ``out`` holds its own copy of it.

    On pandas 2 without copy-on-write ``out`` is a deep copy; replacing one column of a
    block of several (the object strings of a frame share one) would copy the block's
    other columns once more, while writing into the copy costs one pass. Only a NumPy
    column of exactly ``values``' dtype, whose memory is not the caller's, is written;
    anything else (copy-on-write frames, a new column, another dtype) returns False.
    """
    if (
        not isinstance(values, np.ndarray)
        or values.ndim != 1
        or len(values) != len(df)
        or target not in df.columns
    ):
        return False
    loc = out.columns.get_loc(target)
    if not isinstance(loc, int):
        return False
    mine, theirs = out.iloc[:, loc], df.iloc[:, loc]
    if not isinstance(mine.dtype, np.dtype) or mine.dtype != values.dtype:
        return False
    if np.may_share_memory(mine.to_numpy(), theirs.to_numpy()):
        return False  # copy-on-write: the column is still the caller's
    out.iloc[:, loc] = values
    return True


def record(cost: PrivacyCost, ledger: PrivacyLedger | None) -> None:
    """Append ``cost`` to ``ledger`` if one was given."""
    if ledger is not None:
        ledger.record(cost)


def target_name(df: pd.DataFrame, column: Any, new_column: bool, overwrite: bool) -> Any:
    """``dp_{column}`` for a new column, else the column itself (trasgoDP's naming).

    A new column must not replace one the frame already holds unless ``overwrite`` is
    True: the caller would otherwise lose a column without being told.
    """
    if not new_column:
        return column
    target = f"dp_{column}"
    if target in df.columns and not overwrite:
        raise ParameterError(
            f"new_column: the frame already has a column {target!r}, which new_column=True "
            f"would replace; pass overwrite=True to replace it, or rename or drop it first"
        )
    return target


def check_domain_argument(domain: Any) -> None:
    """Refuse a bare string or bytes where a sequence of categories is expected.

    ``list("abc")`` is ``["a", "b", "c"]``: a string passed as ``domain=`` would
    silently become a domain of its characters.
    """
    if isinstance(domain, (str, bytes)):
        raise ParameterError(
            f"domain: must be a sequence of categories (a list, tuple or array), got the "
            f"{type(domain).__name__} {domain!r}; write domain=[{domain!r}] for a single "
            "category"
        )
