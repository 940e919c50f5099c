"""Microaggregation of numeric quasi-identifiers: MDAV and univariate optimal partitions.

Records are partitioned into groups of at least ``k`` records that are close to one
another on the chosen numeric columns, and each value is replaced by its group's mean
(or median). All records of a group then carry the same values on those columns, so the
release is k-anonymous on them: a record is indistinguishable from at least ``k - 1``
others there (Domingo-Ferrer & Mateo-Sanz 2002 [1]_).

* ``method="mdav"`` -- Maximum Distance to Average Vector, the fixed-size heuristic of
  [1]_ and [2]_, as sdcMicro's ``microaggregation(method="mdav")`` runs it [4]_: while at
  least ``3k`` records remain, take their centroid, the record ``r`` farthest from it and
  the record ``s`` farthest from ``r``; form a group of ``r`` and its ``k - 1`` nearest
  records and, from what is left, a group of ``s`` and its ``k - 1`` nearest. With
  ``2k .. 3k - 1`` records left, one group forms around ``r`` and the rest is the last
  group; fewer than ``2k`` records left form one group. Every group therefore has
  ``k .. 2k - 1`` records (all but the last exactly ``k``). Distances are Euclidean on the
  columns scaled to unit (population) variance, as sdcMicro does. (Given one variable,
  sdcMicro's ``microaggregation`` switches to its ``mafast`` routine instead, and its
  MDAV ignores ``measure``; here MDAV runs on any number of columns and ``aggregate``
  applies to every method.)
* ``method="optimal"`` -- the univariate optimal partition of Hansen & Mukherjee [3]_:
  the groups of the minimum within-group sum of squares are contiguous in sorted order
  with ``k .. 2k - 1`` records, so a shortest path over the sorted values finds them.

Ties: the farthest record is the first one (in row order) at the largest distance, and
among records equally near a centre the later rows join the group first, which is how
sdcMicro's C++ routine breaks them (it measures distances in single precision, so values
that tie only in single precision may still be grouped differently).

References
----------
.. [1] J. Domingo-Ferrer, J. M. Mateo-Sanz, "Practical data-oriented microaggregation
   for statistical disclosure control", IEEE TKDE 14(1), 2002.
.. [2] J. Domingo-Ferrer, V. Torra, "Ordinal, continuous and heterogeneous
   k-anonymity through microaggregation", Data Mining and Knowledge Discovery 11, 2005.
.. [3] S. L. Hansen, S. Mukherjee, "A polynomial algorithm for optimal univariate
   microaggregation", IEEE TKDE 15(4), 2003.
.. [4] M. Templ, A. Kowarik, B. Meindl, "Statistical disclosure control for micro-data
   using the R package sdcMicro", Journal of Statistical Software 67(4), 2015.
.. [5] J. M. Mateo-Sanz, F. Sebé, J. Domingo-Ferrer, "Outlier protection in continuous
   microdata masking", PSD 2004, LNCS 3050 (the IL1s measure).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
import pandas as pd

from veil.classes import class_ids
from veil.errors import (
    ColumnError,
    DataTypeError,
    DomainError,
    MissingValueError,
    ParameterError,
)
from veil.frames import output_frame

__all__ = ["AGGREGATES", "MICROAGGREGATION_METHODS", "MicroaggregationResult", "microaggregate"]

MICROAGGREGATION_METHODS = ("mdav", "optimal")
AGGREGATES = ("mean", "median")

# Largest magnitude of a value to microaggregate. Distances and the scaling square
# differences of up to twice it and sum them over columns and records: below 1e100 that
# stays far from the float64 overflow at 1.8e308 for any table (values near 1e308 made
# MDAV's distances NaN, so it never finished, and made means infinite).
_MAX_MAGNITUDE = 1e100

_Floats = npt.NDArray[np.float64]
_Ints = npt.NDArray[np.int64]
_Bools = npt.NDArray[np.bool_]


@dataclass(frozen=True)
class MicroaggregationResult:
    """A microaggregated table and how it was grouped.

    Attributes
    ----------
    data : pandas.DataFrame
        The table with each microaggregated column replaced by its group aggregate
        (float); every other column and the index as in the input.
    groups : pandas.Series
        Group id (int64) of each record, aligned with ``data``. MDAV numbers groups in
        the order it forms them; the optimal method in increasing order of value; with
        strata, stratum after stratum (in order of first appearance).
    sizes : pandas.Series
        Records per group, indexed by group id.
    information_loss : dict of str to float
        ``"sse"`` -- within-group sum of squared distances of the records to their group
        mean, in the space the groups were formed in (standardized columns when
        ``standardize=True``); for ``aggregate="mean"`` it is also the squared error of
        the release there. ``"sst"`` -- total sum of squares in the same space.
        ``"sse_sst"`` -- SSE / SST, the homogeneity loss of [1]_ (0 is no loss; 0 when
        SST is 0). ``"il1s"`` -- mean over records and columns of
        ``|x - x'| / (sqrt(2) S)``, ``S`` the column's sample standard deviation
        (Mateo-Sanz et al. 2004; constant columns contribute 0). ``"il1s_sdcmicro"`` --
        the value sdcMicro's ``dUtility(method="IL1")`` reports, which multiplies by
        ``sqrt(2)`` instead of dividing: exactly ``2 * il1s``.
    k : int
        The minimum group size.
    method : str
        ``"mdav"`` or ``"optimal"``.
    """

    data: pd.DataFrame
    groups: pd.Series
    sizes: pd.Series
    information_loss: dict[str, float]
    k: int
    method: str


# ------------------------------------------------------------------------ validation


def _columns(df: pd.DataFrame, columns: str | Sequence[str]) -> list[str]:
    names = [columns] if isinstance(columns, str) else list(columns)
    if not names:
        raise ParameterError("columns must name at least one numeric column, got none")
    absent = [c for c in names if c not in df.columns]
    if absent:
        raise ColumnError(f"columns {absent} are absent from df")
    names = list(dict.fromkeys(names))
    for name in names:
        column = df[name]
        if isinstance(column, pd.DataFrame):
            raise ColumnError(f"column {name!r} appears more than once in df")
        dtype = column.dtype
        if pd.api.types.is_bool_dtype(dtype) or not pd.api.types.is_numeric_dtype(dtype):
            raise DataTypeError(
                f"column {name!r} has dtype {dtype}; microaggregation needs numeric "
                "(integer or float) columns"
            )
    return names


def _fill_values(
    missing: str | float | Mapping[str, float], names: list[str]
) -> dict[str, float] | None:
    if isinstance(missing, str):
        if missing != "error":
            raise ParameterError(
                f'missing must be "error", a number or a mapping of column to number, '
                f"got {missing!r}"
            )
        return None
    values = (
        dict(missing)
        if isinstance(missing, Mapping)
        else dict.fromkeys(names, missing)  # one public value for every column
    )
    for name, value in values.items():
        if isinstance(value, bool) or not isinstance(value, (int, float, np.number)):
            raise ParameterError(f"missing[{name!r}] must be a number, got {value!r}")
        if not math.isfinite(float(value)):
            raise ParameterError(f"missing[{name!r}] must be finite, got {value!r}")
    return {name: float(value) for name, value in values.items()}


def _matrix(df: pd.DataFrame, names: list[str], fill: dict[str, float] | None) -> _Floats:
    x = np.empty((len(df), len(names)), dtype=np.float64)
    for j, name in enumerate(names):
        values = df[name].to_numpy(dtype=np.float64, na_value=np.nan)
        absent = np.isnan(values)
        if absent.any():
            if fill is None or name not in fill:
                raise MissingValueError(
                    f"column {name!r} holds {int(absent.sum())} missing value(s); pass "
                    'missing=<public number> to impute them or drop those records (missing="error")'
                )
            values = np.where(absent, fill[name], values)
        if not np.isfinite(values).all():
            raise DomainError(
                f"column {name!r} holds {int((~np.isfinite(values)).sum())} infinite "
                "value(s); microaggregation needs finite numbers"
            )
        huge = np.abs(values) > _MAX_MAGNITUDE
        if huge.any():
            raise DomainError(
                f"column {name!r} holds {int(huge.sum())} value(s) beyond +-{_MAX_MAGNITUDE:.0e} "
                f"(largest magnitude {float(np.abs(values).max()):.3g}); microaggregation "
                "squares and sums values, which overflows there: rescale the column"
            )
        x[:, j] = values
    return x


def _check_k(k: object, n: int) -> int:
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 1:
        raise ParameterError(f"k must be an integer >= 1, got {k!r}")
    if k > n:
        raise ParameterError(
            f"k must be at most the number of records ({n}), got k={k}; no group of "
            f"{k} records can be formed"
        )
    return int(k)


# ------------------------------------------------------------------------------ MDAV


def _squared_distances(
    columns: _Floats, centre: _Floats, out: _Floats, scratch: _Floats
) -> _Floats:
    """Squared distance of each point (a column of ``columns``, shape (p, m)) to ``centre``.

    Written into the first m entries of ``out`` (``scratch`` is overwritten): one pass
    per variable over contiguous memory, no temporary of the points' size.
    """
    m = columns.shape[1]
    distances, buffer = out[:m], scratch[:m]
    np.subtract(columns[0], centre[0], out=distances)
    np.multiply(distances, distances, out=distances)
    for j in range(1, len(columns)):
        np.subtract(columns[j], centre[j], out=buffer)
        np.multiply(buffer, buffer, out=buffer)
        np.add(distances, buffer, out=distances)
    return distances


def _nearest(distances: _Floats, k: int) -> _Ints:
    """Positions of the ``k`` smallest distances; ties at the cut go to the later rows."""
    cut = np.partition(distances, k - 1)[k - 1]
    below = np.flatnonzero(distances < cut)
    tied = np.flatnonzero(distances == cut)
    return np.concatenate([below, tied[len(tied) - (k - len(below)) :]])


def _without(count: int, taken: _Ints) -> _Ints:
    keep = np.ones(count, dtype=bool)
    keep[taken] = False
    return np.flatnonzero(keep)


def _mdav(z: _Floats, k: int) -> _Ints:
    """Group id per row of ``z`` (rows are records, already scaled)."""
    n = len(z)
    groups = np.empty(n, dtype=np.int64)
    if k == 1:
        groups[:] = np.arange(n)
        return groups
    rows = np.arange(n)
    # One contiguous row per variable: every step below streams over the remaining
    # records variable by variable.
    rest = np.ascontiguousarray(z.T)
    out, scratch = np.empty(n), np.empty(n)
    group = 0
    # Each pass removes k or 2k records: O(n / k) passes of O(n) vectorized work.
    while len(rows) >= 2 * k:
        two = len(rows) >= 3 * k
        centre = rest.sum(axis=1) / len(rows)
        r = int(np.argmax(_squared_distances(rest, centre, out, scratch)))
        from_r = _squared_distances(rest, rest[:, r].copy(), out, scratch)
        taken = _nearest(from_r, k)
        groups[rows[taken]] = group
        group += 1
        # s: the first row farthest from r; never among r's group while >= 3k remain.
        from_r[taken] = -1.0
        s = int(np.argmax(from_r))
        kept = _without(len(rows), taken)
        s_kept = int(np.searchsorted(kept, s))
        rows, rest = rows[kept], rest.take(kept, axis=1)
        if two:
            taken = _nearest(_squared_distances(rest, rest[:, s_kept].copy(), out, scratch), k)
            groups[rows[taken]] = group
            group += 1
            kept = _without(len(rows), taken)
            rows, rest = rows[kept], rest.take(kept, axis=1)
    if len(rows):
        groups[rows] = group
    return groups


# ---------------------------------------------------------------- univariate optimal


def _optimal(x: _Floats, k: int) -> _Ints:
    """Hansen-Mukherjee optimal groups of one column (group ids in increasing value)."""
    n = len(x)
    order = np.argsort(x, kind="stable")
    v = x[order]
    best = np.full(n + 1, np.inf)
    best[0] = 0.0
    size = np.zeros(n + 1, dtype=np.int64)
    sizes = np.arange(k, 2 * k)
    back = np.arange(1, 2 * k)
    # best[j] needs best[j - s] for s >= k only, so k consecutive ends are independent:
    # each block of k ends is one vectorized step, O(n / k) steps of O(k^2).
    for start in range(k, n + 1, k):
        ends = np.arange(start, min(start + k, n + 1))
        # The 2k - 1 values before each end, as deviations from the last of them: a
        # group's SSE then comes from sums of small numbers, not from sums over the
        # column that would cancel away the SSE of close values far from the mean.
        where = ends[:, None] - back[None, :]
        inside = where >= 0
        window = v[np.maximum(where, 0)]
        deviation = np.where(inside, window - window[:, :1], 0.0)
        total = np.cumsum(deviation, axis=1)[:, sizes - 1]
        squares = np.cumsum(deviation * deviation, axis=1)[:, sizes - 1]
        sse = np.maximum(squares - total * total / sizes, 0.0)
        begins = ends[:, None] - sizes[None, :]
        cost = np.where(begins >= 0, best[np.maximum(begins, 0)] + sse, np.inf)
        pick = np.argmin(cost, axis=1)
        best[ends] = cost[np.arange(len(ends)), pick]
        size[ends] = sizes[pick]
    # Walk back from n: one step per group.
    bounds = [n]
    while bounds[-1] > 0:
        bounds.append(bounds[-1] - int(size[bounds[-1]]))
    starts = np.array(bounds[::-1][:-1], dtype=np.int64)
    sorted_groups = np.repeat(np.arange(len(starts)), np.diff(np.append(starts, n)))
    groups = np.empty(n, dtype=np.int64)
    groups[order] = sorted_groups
    return groups


# --------------------------------------------------------------------- aggregation


def _group_means(x: _Floats, groups: _Ints, counts: _Ints) -> _Floats:
    sums = np.stack(
        [np.bincount(groups, weights=x[:, j], minlength=len(counts)) for j in range(x.shape[1])],
        axis=1,
    )
    means: _Floats = sums / counts[:, None]
    return means


def _group_medians(x: _Floats, groups: _Ints, counts: _Ints) -> _Floats:
    starts = np.concatenate([[0], np.cumsum(counts)[:-1]])
    low, high = starts + (counts - 1) // 2, starts + counts // 2
    medians = np.empty((len(counts), x.shape[1]))
    for j in range(x.shape[1]):
        ordered = x[np.lexsort((x[:, j], groups)), j]
        medians[:, j] = (ordered[low] + ordered[high]) / 2.0
    return medians


def _information_loss(
    x: _Floats, released: _Floats, z: _Floats, groups: _Ints, counts: _Ints
) -> dict[str, float]:
    centred = z - _group_means(z, groups, counts)[groups]
    sse = float(np.einsum("ij,ij->", centred, centred))
    spread = z - z.mean(axis=0)
    sst = float(np.einsum("ij,ij->", spread, spread))
    n, p = x.shape
    sd = x.std(axis=0, ddof=1) if n > 1 else np.zeros(p)
    scaled = np.abs(x - released)[:, sd > 0] / sd[sd > 0]
    il1s = float(scaled.sum()) / (math.sqrt(2.0) * n * p)
    return {
        "sse": sse,
        "sst": sst,
        "sse_sst": sse / sst if sst > 0 else 0.0,
        "il1s": il1s,
        "il1s_sdcmicro": 2.0 * il1s,
    }


def _strata(df: pd.DataFrame, strata: str | Sequence[str] | None, names: list[str]) -> list[str]:
    if strata is None:
        return []
    by = [strata] if isinstance(strata, str) else list(strata)
    absent = [c for c in by if c not in df.columns]
    if absent:
        raise ColumnError(f"strata {absent} are absent from df")
    both = [c for c in by if c in names]
    if both:
        raise ParameterError(
            f"strata {both} are also microaggregated columns; a column is one or the other"
        )
    return list(dict.fromkeys(by))


def _grouped(
    df: pd.DataFrame, x: _Floats, k: int, method: str, standardize: bool, by: list[str]
) -> tuple[_Floats, _Ints]:
    """The (scaled) points and the group of each record, strata grouped separately."""
    n = len(x)
    stratum, n_strata = class_ids((df[c] for c in by), n) if by else (np.zeros(n, np.int64), 1)
    z = np.empty_like(x)
    groups = np.empty(n, dtype=np.int64)
    order = np.argsort(stratum, kind="stable")
    bounds = np.searchsorted(stratum[order], np.arange(n_strata + 1))
    first = 0
    # One pass per stratum (not per record); within a stratum rows keep their order.
    for s in range(n_strata):
        rows = order[bounds[s] : bounds[s + 1]]
        if len(rows) < k:
            values = df[by].iloc[int(rows[0])].tolist()
            raise ParameterError(
                f"k={k} is above the size of the stratum {dict(zip(by, values, strict=True))} "
                f"({len(rows)} record(s)); merge strata or lower k"
            )
        part = x[rows]
        if standardize:
            sd = part.std(axis=0)
            part = (part - part.mean(axis=0)) / np.where(sd > 0, sd, 1.0)
        z[rows] = part
        local = _optimal(part[:, 0], k) if method == "optimal" else _mdav(part, k)
        groups[rows] = local + first
        first += int(local.max()) + 1
    return z, groups


def microaggregate(
    df: pd.DataFrame,
    columns: str | Sequence[str],
    k: int,
    *,
    method: str = "mdav",
    standardize: bool = True,
    aggregate: str = "mean",
    missing: str | float | Mapping[str, float] = "error",
    strata: str | Sequence[str] | None = None,
) -> MicroaggregationResult:
    """Replace numeric quasi-identifiers by the aggregates of groups of >= k records.

    The released table is k-anonymous on ``columns``: every group of ``k .. 2k - 1``
    records shares one value per column, so no record's released values can be told
    apart from those of at least ``k - 1`` others (records of different groups that end
    up with equal values only make the classes larger). Other columns are untouched.
    The guarantee covers ``columns`` only; other quasi-identifiers need their own
    treatment.

    Parameters
    ----------
    df : pandas.DataFrame
        The table; not modified.
    columns : str or sequence of str
        Numeric columns to microaggregate jointly (integer or float; not boolean).
    k : int
        Minimum group size, 1 <= k <= number of records (k = 1 releases the values
        unchanged).
    method : {"mdav", "optimal"}
        MDAV (any number of columns, [1]_ [2]_), or Hansen & Mukherjee's optimal
        partition (one column only, [3]_).
    standardize : bool, default True
        Measure distances on the columns scaled to unit variance (sdcMicro's MDAV
        always does); False uses the raw values, so wide-ranging columns dominate.
    aggregate : {"mean", "median"}
        Value released for each group and column. The mean keeps column totals; the
        median is robust to an outlier inside a group.
    missing : "error" or float or mapping of str to float, default "error"
        Missing values raise :class:`~veil.errors.MissingValueError`; a number (or one
        per column) is a public value imputed before grouping, and its records are
        microaggregated like the others.
    strata : str or sequence of str, optional
        Columns whose value combinations are microaggregated separately, as sdcMicro's
        ``strata_variables``: no group mixes strata, and each stratum is scaled on its
        own. The release is then k-anonymous on ``columns`` and ``strata`` together.
        Every stratum needs at least ``k`` records; a missing value is a value.

    Returns
    -------
    MicroaggregationResult
        The released table, the group of each record, group sizes and information loss.

    Raises
    ------
    ParameterError
        For a bad ``k`` (not an integer, < 1 or above the number of records),
        ``method``, ``aggregate``, ``standardize`` or ``missing``, or ``"optimal"`` with
        several columns, a stratum of fewer than ``k`` records, or a column both
        microaggregated and a stratum.
    ColumnError
        If a column is absent.
    DataTypeError
        If ``df`` is not a DataFrame or a column is not numeric.
    MissingValueError
        If a column holds missing values and ``missing="error"``.
    DomainError
        If a column holds infinite values, or values beyond +-1e100 (rescale it).

    References
    ----------
    .. [1] J. Domingo-Ferrer, J. M. Mateo-Sanz, IEEE TKDE 14(1), 2002.
    .. [2] J. Domingo-Ferrer, V. Torra, Data Mining and Knowledge Discovery 11, 2005.
    .. [3] S. L. Hansen, S. Mukherjee, IEEE TKDE 15(4), 2003.

    Examples
    --------
    >>> df = pd.DataFrame({"age": [20, 21, 22, 50, 52, 53], "sex": list("mfmfmf")})
    >>> result = microaggregate(df, "age", 3, method="optimal")
    >>> result.data["age"].tolist()
    [21.0, 21.0, 21.0, 51.666666666666664, 51.666666666666664, 51.666666666666664]
    >>> result.groups.tolist()
    [0, 0, 0, 1, 1, 1]
    """
    if not isinstance(df, pd.DataFrame):
        raise DataTypeError(f"df must be a pandas DataFrame, got {type(df).__name__}")
    if method not in MICROAGGREGATION_METHODS:
        raise ParameterError(f"method must be one of {MICROAGGREGATION_METHODS}, got {method!r}")
    if aggregate not in AGGREGATES:
        raise ParameterError(f"aggregate must be one of {AGGREGATES}, got {aggregate!r}")
    if not isinstance(standardize, (bool, np.bool_)):
        raise ParameterError(f"standardize must be True or False, got {standardize!r}")
    names = _columns(df, columns)
    if method == "optimal" and len(names) != 1:
        raise ParameterError(
            f'method="optimal" microaggregates one column; got {len(names)} columns '
            f'{names}; use method="mdav" for several'
        )
    if len(df) == 0:
        raise ParameterError("df must hold at least one record, got an empty data frame")
    k = _check_k(k, len(df))
    x = _matrix(df, names, _fill_values(missing, names))
    z, groups = _grouped(df, x, k, method, standardize, _strata(df, strata, names))
    counts = np.bincount(groups).astype(np.int64)
    values = (
        _group_means(x, groups, counts)
        if aggregate == "mean"
        else _group_medians(x, groups, counts)
    )
    released = values[groups]
    out = output_frame(df)
    for j, name in enumerate(names):
        out[name] = pd.Series(released[:, j], index=df.index, name=name)
    return MicroaggregationResult(
        data=out,
        groups=pd.Series(groups, index=df.index, name="group"),
        sizes=pd.Series(counts, name="size").rename_axis("group"),
        information_loss=_information_loss(x, released, z, groups, counts),
        k=k,
        method=method,
    )
