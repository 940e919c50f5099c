"""Personal information factor (PIF) assessment: how much each cell of a table gives away.

The setting of piflib (CSIRO Data61) and of the OptimShare paper: an attacker knows every
attribute of a person but one. The records equal to that person on all the other
attributes form the person's *cohort*; the distribution of the unknown attribute inside
the cohort is the *posterior*, its marginal over the table (or a public distribution) is
the *prior*. For the cell of record ``i`` and attribute ``A``:

* **CSF** (cell surprise factor): ``|P(x_i | cohort) - P(x_i)|``, a change of
  probability, in ``[0, 1]``;
* **CIG** (cell information gain): ``KL(P(A | cohort) || P(A))`` in bits, the same for
  every cell of a cohort;
* **wCIG**: the CIG times ``w_A = H(A | other attributes) / H(A)``;
* **RIG** (row information gain): a record's CIGs summed, in bits.

Two different summaries carry the name PIF, and veil names them apart:

* ``pif_a`` -- the OptimShare paper's **PIF_A** of an attribute: the mean CSF of its cells,
  in ``[0, 1]`` (Definition 1 and Eq. 10 of the paper);
* ``pif_n(n)`` -- piflib's **PIF_n**: the ``n``-th percentile of the RIGs, in bits (not
  bounded by 1).

CSF, CIG, wCIG, RIG and PIF_n follow piflib 0.1.1 (``compute_csfs``, ``compute_cigs``,
``compute_weighted_cigs``, ``compute_pif``), including its feature priors and feature
accuracies, with three differences: a missing value is a category of its own (piflib
fails on NaN); wCIG weights are not rounded (piflib rounds both entropies and the
wCIGs to two decimals); piflib's random sampling of feature subsets is not offered.

Numeric attributes need categories: each is taken as its exact values, cut at public bin
edges, or cut at quantiles of its own values. Quantile bins are computed from the
records, and the result says so (a :class:`~veil.errors.PrivacyLeakWarning` when the
assessment is meant for publication).

The assessment is a measurement of the raw data for its custodian. It is not a privacy
mechanism and carries no guarantee: every figure it returns is computed from the
records.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, TypeAlias

import numpy as np
import numpy.typing as npt
import pandas as pd

from veil.classes import value_codes
from veil.errors import ColumnError, DataTypeError, DomainError, ParameterError, PrivacyLeakWarning

__all__ = ["ColumnBins", "PifAssessment", "assess_pif"]

IntArray = npt.NDArray[np.int64]
FloatArray = npt.NDArray[np.float64]

BinSpec: TypeAlias = "Literal['exact'] | int | Sequence[float]"
"""How a numeric column becomes categories: ``"exact"`` (every distinct value), an
``int`` ``q >= 2`` (``q`` quantile bins of the column's own values), or a sequence of
public bin edges."""

_PRIOR_TOLERANCE = 1e-6


@dataclass(frozen=True)
class ColumnBins:
    """How one column was turned into categories for the assessment.

    Attributes
    ----------
    column : hashable
        The column.
    kind : {"categorical", "exact", "public", "quantile"}
        ``"categorical"``: a non-numeric column, one category per value; ``"exact"``: a
        numeric column, one category per distinct value; ``"public"``: cut at edges the
        caller gave; ``"quantile"``: cut at quantiles of the column's values.
    edges : tuple of float
        The bin edges (empty unless ``kind`` is ``"public"`` or ``"quantile"``). Bins are
        ``[e0, e1), [e1, e2), ..., [e_{m-1}, e_m]``: the last one is closed.
    from_data : bool
        True when the categories depend on the records beyond their values: quantile
        edges are computed from the column.
    n_categories : int
        Categories present in the data, a missing-value category included.
    n_missing : int
        Missing cells, which form one category of their own.
    """

    column: Hashable
    kind: Literal["categorical", "exact", "public", "quantile"]
    edges: tuple[float, ...]
    from_data: bool
    n_categories: int
    n_missing: int

    def labels(self) -> list[str]:
        """The bin labels, ``"[a, b)"`` and a closed last bin ``"[a, b]"`` (binned kinds only)."""
        pairs = list(zip(self.edges[:-1], self.edges[1:], strict=True))
        return [
            f"[{low:g}, {high:g}{']' if i == len(pairs) - 1 else ')'}"
            for i, (low, high) in enumerate(pairs)
        ]

    def to_dict(self) -> dict[str, Any]:
        """The record as plain data (for JSON)."""
        return {
            "column": self.column,
            "kind": self.kind,
            "edges": list(self.edges),
            "from_data": self.from_data,
            "n_categories": self.n_categories,
            "n_missing": self.n_missing,
        }


@dataclass(frozen=True)
class PifAssessment:
    """Cell-level disclosure measures of a table and their summaries.

    No privacy guarantee: every figure is computed from the records (see the module
    docstring).

    Attributes
    ----------
    csf : pandas.DataFrame
        Cell surprise factor of every cell, in ``[0, 1]``; same index and columns as the
        assessed table.
    cig : pandas.DataFrame
        Cell information gain of every cell, in bits.
    wcig : pandas.DataFrame
        Weighted CIG (``cig * weights``), in bits.
    pif_a : pandas.Series
        The OptimShare paper's PIF_A per attribute: the mean CSF of its cells, in
        ``[0, 1]``.
    rig : pandas.Series
        Row information gain (sum of a record's CIGs), in bits, aligned with the index.
    weights : pandas.Series
        wCIG weight per attribute, ``H(A | others) / H(A)`` (0 when ``H(A) = 0``).
    entropy : pandas.DataFrame
        Per attribute: ``H`` (entropy of its marginal) and ``H_given_others``, in bits.
    bins : tuple of ColumnBins
        How every column was turned into categories.
    priors : dict
        Per column, ``"data"`` (its marginal in the table) or ``"public"`` (given).
    accuracies : dict
        Per column, the feature accuracy used (1 unless given).
    n_records : int
        Records assessed.
    """

    csf: pd.DataFrame
    cig: pd.DataFrame
    wcig: pd.DataFrame
    pif_a: pd.Series
    rig: pd.Series
    weights: pd.Series
    entropy: pd.DataFrame
    bins: tuple[ColumnBins, ...]
    priors: dict[Hashable, str]
    accuracies: dict[Hashable, float]
    n_records: int
    data_dependent: tuple[str, ...] = field(default=())

    def pif_n(self, percentile: float = 95.0) -> float:
        """piflib's PIF_n: the ``percentile``-th percentile of the RIGs, in bits.

        Parameters
        ----------
        percentile : float, default 95
            In ``[0, 100]``; 100 gives the largest RIG. Linear interpolation, as
            ``numpy.percentile`` (what piflib's ``compute_pif`` calls).
        """
        value = float(percentile)
        if not 0.0 <= value <= 100.0:
            raise ParameterError(f"percentile must be in [0, 100]; got {percentile!r}")
        return float(np.percentile(self.rig.to_numpy(dtype=np.float64), value))

    def summary(self) -> pd.DataFrame:
        """One row per attribute: PIF_A, worst CSF, mean CIG, wCIG weight and binning."""
        kinds = {b.column: b.kind for b in self.bins}
        return pd.DataFrame(
            {
                "pif_a": self.pif_a,
                "max_csf": self.csf.max(axis=0),
                "mean_cig": self.cig.mean(axis=0),
                "weight": self.weights,
                "bins": pd.Series(kinds),
            }
        )

    def to_dict(self, percentile: float = 95.0) -> dict[str, Any]:
        """The summaries (no per-cell values) as plain data, for JSON or a report."""
        summary = self.summary()
        return {
            "n_records": self.n_records,
            "columns": [str(c) for c in self.csf.columns],
            "pif_a": {str(k): float(v) for k, v in self.pif_a.items()},
            "max_csf": {str(k): float(v) for k, v in summary["max_csf"].items()},
            "mean_cig_bits": {str(k): float(v) for k, v in summary["mean_cig"].items()},
            "wcig_weight": {str(k): float(v) for k, v in self.weights.items()},
            "pif_n": {"percentile": float(percentile), "bits": self.pif_n(percentile)},
            "bins": [b.to_dict() for b in self.bins],
            "priors": {str(k): v for k, v in self.priors.items()},
            "accuracies": {str(k): v for k, v in self.accuracies.items()},
            "data_dependent": list(self.data_dependent),
        }


# ----------------------------------------------------------------------------- inputs


def _columns(df: pd.DataFrame, columns: Sequence[Hashable] | None) -> list[Hashable]:
    if not isinstance(df, pd.DataFrame):
        raise DataTypeError(f"df must be a pandas DataFrame; got {type(df).__name__}")
    cols: list[Hashable]
    if columns is None:
        cols = list(df.columns)
    elif isinstance(columns, str):
        cols = [columns]
    else:
        cols = list(columns)
    if not cols:
        raise ParameterError("columns must name at least one column; got none")
    if len(set(cols)) != len(cols):
        raise ParameterError(f"columns must not repeat a column; got {cols!r}")
    missing = [c for c in cols if c not in df.columns]
    if missing:
        raise ColumnError(f"columns names columns absent from the data: {missing!r}")
    if pd.Index(df.columns).has_duplicates:
        twice = [c for c in cols if int((df.columns == c).sum()) > 1]
        if twice:
            raise ColumnError(f"df holds the columns {twice!r} more than once")
    if len(df) == 0:
        raise ParameterError("df must hold at least one record; got an empty frame")
    return cols


def _is_numeric(series: pd.Series) -> bool:
    return bool(
        pd.api.types.is_numeric_dtype(series.dtype) and not pd.api.types.is_bool_dtype(series)
    )


def _spec_of(
    column: Hashable,
    series: pd.Series,
    bins: Mapping[Hashable, BinSpec],
    default_bins: BinSpec | None,
) -> BinSpec | None:
    """The binning asked for ``column``; None for a non-numeric column."""
    numeric = _is_numeric(series)
    if column in bins:
        if not numeric:
            raise ParameterError(
                f"bins[{column!r}]: bins apply to numeric columns only; column {column!r} "
                f"has dtype {series.dtype}"
            )
        return bins[column]
    if not numeric:
        return None
    if default_bins is not None:
        return default_bins
    values = series.to_numpy(dtype=np.float64, na_value=np.nan)
    finite = values[~np.isnan(values)]
    if pd.api.types.is_integer_dtype(series.dtype) or bool(np.all(finite == np.round(finite))):
        return "exact"
    raise ParameterError(
        f"bins: column {column!r} holds non-integer numbers; give it public bin edges, a "
        "number of quantile bins or 'exact' (one category per distinct value), or give "
        "default bins for every such column"
    )


def _edges(column: Hashable, spec: Sequence[float]) -> FloatArray:
    try:
        edges = np.asarray(list(spec), dtype=np.float64)
    except (TypeError, ValueError):
        raise ParameterError(f"bins[{column!r}]: edges must be numbers; got {spec!r}") from None
    if edges.ndim != 1 or edges.size < 2:
        raise ParameterError(f"bins[{column!r}]: give at least two edges; got {spec!r}")
    if np.isnan(edges).any() or not bool(np.all(np.diff(edges) > 0)):
        raise ParameterError(
            f"bins[{column!r}]: edges must be strictly increasing numbers; got {spec!r}"
        )
    return edges


def _quantile_edges(column: Hashable, q: int, values: FloatArray) -> FloatArray:
    if q < 2:
        raise ParameterError(f"bins[{column!r}]: quantile bins need q >= 2; got {q!r}")
    finite = values[~np.isnan(values)]
    if finite.size == 0:
        return np.zeros(0, dtype=np.float64)
    edges = np.unique(np.quantile(finite, np.linspace(0.0, 1.0, q + 1)))
    if edges.size == 1:  # a constant column: one closed bin [v, v]
        edges = np.array([edges[0], edges[0]])
    return np.asarray(edges, dtype=np.float64)


def _bin_codes(column: Hashable, values: FloatArray, edges: FloatArray) -> IntArray:
    """Bin index of every value (``len(edges) - 1`` for a missing value)."""
    missing = np.isnan(values)
    n_bins = max(edges.size - 1, 0)
    if n_bins == 0:
        return np.zeros(values.size, dtype=np.int64)
    present = values[~missing]
    outside = (present < edges[0]) | (present > edges[-1])
    if outside.any():
        raise DomainError(
            f"bins[{column!r}]: {int(outside.sum())} values fall outside the edges "
            f"[{edges[0]:g}, {edges[-1]:g}]; the public bins must cover the column "
            "(add -inf/inf end edges to catch everything)"
        )
    codes = np.searchsorted(edges, values, side="right").astype(np.int64) - 1
    codes = np.minimum(codes, n_bins - 1)
    codes[missing] = n_bins
    return codes


def _encode(
    column: Hashable, series: pd.Series, spec: BinSpec | None
) -> tuple[IntArray, list[Any], ColumnBins]:
    """Dense codes of a column, the category of each code, and how it was binned."""
    n_missing = int(series.isna().sum())
    if spec is None or (isinstance(spec, str) and spec == "exact"):
        raw_codes, uniques = pd.factorize(series, use_na_sentinel=False)
        kind: Literal["categorical", "exact"] = "categorical" if spec is None else "exact"
        record = ColumnBins(column, kind, (), False, len(uniques), n_missing)
        return raw_codes.astype(np.int64, copy=False), list(uniques), record
    if isinstance(spec, str):
        raise ParameterError(
            f"bins[{column!r}]: expected 'exact', a number of quantile bins or a sequence "
            f"of edges; got {spec!r}"
        )
    values = series.to_numpy(dtype=np.float64, na_value=np.nan)
    if isinstance(spec, bool | float):
        raise ParameterError(
            f"bins[{column!r}]: a number of quantile bins must be an int >= 2; got {spec!r}"
        )
    if isinstance(spec, int | np.integer):
        edges = _quantile_edges(column, int(spec), values)
        kind_binned: Literal["public", "quantile"] = "quantile"
    else:
        edges = _edges(column, spec)
        kind_binned = "public"
    raw = _bin_codes(column, values, edges)
    codes, size = value_codes(pd.Index(raw))
    record = ColumnBins(
        column,
        kind_binned,
        tuple(float(e) for e in edges),
        kind_binned == "quantile",
        size,
        n_missing,
    )
    labels = [*record.labels(), None]
    first = np.full(size, -1, dtype=np.int64)
    first[codes[::-1]] = raw[::-1]
    return codes, [labels[i] for i in first], record


def _prior(
    column: Hashable,
    codes: IntArray,
    categories: list[Any],
    public: Mapping[Any, float] | None,
) -> tuple[FloatArray, float]:
    """Prior probability of every category code, and the prior's total mass."""
    counts = np.bincount(codes, minlength=len(categories)).astype(np.float64)
    if public is None:
        return counts / counts.sum(), 1.0
    keys = list(public.keys())
    try:
        probs = np.asarray([float(public[k]) for k in keys], dtype=np.float64)
    except (TypeError, ValueError):
        raise ParameterError(f"priors[{column!r}]: probabilities must be numbers") from None
    if not np.all(np.isfinite(probs)) or (probs < 0).any() or (probs > 1).any():
        raise ParameterError(f"priors[{column!r}]: probabilities must be in [0, 1]")
    total = float(probs.sum())
    if abs(total - 1.0) > _PRIOR_TOLERANCE:
        raise ParameterError(
            f"priors[{column!r}]: probabilities must sum to 1; they sum to {total:.6g}"
        )
    index = pd.Index(keys, dtype=object)
    if index.has_duplicates:
        raise ParameterError(f"priors[{column!r}]: a category is given twice")
    cats = pd.Index(categories, dtype=object)
    where = index.get_indexer(cats)
    missing_key = [i for i, k in enumerate(keys) if _is_missing(k)]
    if missing_key:
        for j, category in enumerate(categories):
            if where[j] < 0 and _is_missing(category):
                where[j] = missing_key[0]
    prior = np.where(where >= 0, probs[np.maximum(where, 0)], 0.0)
    lacking = int(((where < 0) | (prior <= 0)).sum())
    if lacking:
        raise DomainError(
            f"priors[{column!r}]: {lacking} categories present in the data have no "
            "positive prior probability; a public prior must cover every value"
        )
    return prior, total


def _is_missing(value: Any) -> bool:
    try:
        return bool(pd.isna(value))
    except (TypeError, ValueError):
        return False


def _accuracy(column: Hashable, accuracies: Mapping[Hashable, float]) -> float:
    if column not in accuracies:
        return 1.0
    value = accuracies[column]
    if isinstance(value, bool) or not isinstance(value, int | float | np.floating):
        raise ParameterError(f"accuracies[{column!r}]: must be a number in [0, 1]; got {value!r}")
    if not (math.isfinite(float(value)) and 0.0 <= float(value) <= 1.0):
        raise ParameterError(f"accuracies[{column!r}]: must be in [0, 1]; got {value!r}")
    return float(value)


# ------------------------------------------------------------------------ the measures


_Ids = tuple[IntArray, int]
"""Dense ids ``0 .. k-1`` of the rows (every id used) and ``k``."""


def _dense_pair(a: _Ids, b: _Ids) -> _Ids:
    """Dense ids of the rows' pairs ``(a, b)``.

    Rows already all distinct on one side stay so: that side is the answer, with no
    hashing (on wide tables most prefixes are). A small key range uses a presence table,
    a large one pandas' hash table.
    """
    (left, k_left), (right, k_right) = a, b
    n = left.size
    if k_left == n or k_right == 1:
        return a
    if k_right == n or k_left == 1:
        return b
    key = left * k_right + right
    span = k_left * k_right
    if span <= 4 * n + 4096:
        seen = np.zeros(span, dtype=bool)
        seen[key] = True
        dense = np.cumsum(seen, dtype=np.int64) - 1
        return dense[key], int(dense[-1]) + 1
    codes, uniques = pd.factorize(key)
    return codes.astype(np.int64, copy=False), len(uniques)


def _cohorts(columns: list[_Ids], n: int) -> tuple[list[_Ids], _Ids]:
    """Cohort ids of every column (records equal on all the *other* columns) and the
    row classes (records equal on every column).

    Prefix and suffix class ids make this ``O(m n)`` instead of ``O(m^2 n)``.
    """
    m = len(columns)
    none: _Ids = (np.zeros(n, dtype=np.int64), 1)
    prefix = [none]
    for j in range(m):
        prefix.append(_dense_pair(prefix[-1], columns[j]))
    suffix = [none]
    for j in range(m - 1, 0, -1):
        suffix.append(_dense_pair(suffix[-1], columns[j]))
    suffix.reverse()  # suffix[j]: the columns after j
    return [_dense_pair(prefix[j], suffix[j]) for j in range(m)], prefix[m]


def _entropy(counts: FloatArray, n: int) -> float:
    p = counts[counts > 0] / n
    return float(-(p * np.log2(p)).sum())


def _column_measures(
    x: IntArray,
    cohort: IntArray,
    rows: tuple[IntArray, FloatArray, IntArray],
    prior: FloatArray,
    prior_total: float,
    accuracy: float,
) -> tuple[FloatArray, FloatArray, FloatArray]:
    """CSF and CIG of every cell of one column, and the cohort sizes.

    ``rows`` is the row class of every record (records equal on *all* the columns), the
    size of each class and one record of each. A class is one (cohort, value) pair, so
    the posterior of a cell is its class size over its cohort size.
    """
    row_class, class_size, representative = rows
    n_cohort = np.bincount(cohort).astype(np.float64)
    class_cohort = cohort[representative]
    posterior = class_size / n_cohort[class_cohort]
    q = prior[x[representative]]
    csf_class = accuracy * np.abs(posterior - q)
    mixed = accuracy * posterior + (1.0 - accuracy) * q
    with np.errstate(divide="ignore", invalid="ignore"):
        terms = np.where(mixed > 0, mixed * np.log2(mixed / q), 0.0)
    kl = np.bincount(class_cohort, weights=terms, minlength=n_cohort.size)
    if accuracy < 1.0:
        # Prior categories absent from a cohort keep (1 - a) of their prior mass.
        seen = np.bincount(class_cohort, weights=q, minlength=n_cohort.size)
        unseen = np.clip(prior_total - seen, 0.0, None)
        kl = kl + unseen * (1.0 - accuracy) * math.log2(1.0 - accuracy)
    cig_class = np.maximum(kl[class_cohort], 0.0)
    return csf_class[row_class], cig_class[row_class], n_cohort


def assess_pif(
    df: pd.DataFrame,
    columns: Sequence[Hashable] | None = None,
    *,
    bins: Mapping[Hashable, BinSpec] | None = None,
    default_bins: BinSpec | None = None,
    priors: Mapping[Hashable, Mapping[Any, float]] | None = None,
    accuracies: Mapping[Hashable, float] | None = None,
    for_publication: bool = False,
) -> PifAssessment:
    """CSF, CIG, wCIG, RIG, the paper's PIF_A and piflib's PIF_n of a table.

    No privacy guarantee: this measures the raw data for its custodian, and every
    figure depends on the records.

    Parameters
    ----------
    df : pandas.DataFrame
        The table (not modified). Missing values are a category of their own.
    columns : sequence of column names, optional
        The attributes assessed (default: all). The cohort of a cell is taken over these
        columns only.
    bins : mapping, optional
        Per numeric column: ``"exact"`` (every distinct value is a category), an int
        ``q >= 2`` (quantile bins of the column's own values: data-dependent) or public
        edges ``[e0, ..., em]`` that must cover the column (use ``-inf``/``inf`` ends).
    default_bins : "exact", int or edges, optional
        The binning of numeric columns not named in ``bins``. Without it, an integer
        column (or one whose values are all whole numbers) is taken exactly and any other
        numeric column is refused.
    priors : mapping, optional
        Per column, a public prior ``{category: probability}`` (probabilities summing
        to 1, positive for every category in the data; a binned column's categories are
        its bin labels, see :meth:`ColumnBins.labels`; a missing-value key such as
        ``None`` stands for the missing category). Default: the column's marginal.
    accuracies : mapping, optional
        Per column, piflib's feature accuracy ``a`` in ``[0, 1]`` (default 1): the
        posterior is ``a * P(x | cohort) + (1 - a) * prior``.
    for_publication : bool, default False
        The result is meant to be published: quantile bins raise a
        :class:`~veil.errors.PrivacyLeakWarning`.

    Returns
    -------
    PifAssessment

    Raises
    ------
    ParameterError
        Bad columns, bins, priors or accuracies (the message names which).
    DomainError
        Public bins or a public prior that do not cover the data.

    References
    ----------
    CSIRO Data61, piflib 0.1.1 (2021). Arachchige, Ranbaduge, Kashyap et al.,
    "OptimShare: a unified framework for privacy preserving data sharing", Definition 1.

    Examples
    --------
    >>> df = pd.DataFrame({"A": [1, 1, 2, 2], "B": ["a", "a", "b", "b"],
    ...                    "C": ["blue", "green", "red", "cyan"]})
    >>> result = assess_pif(df)
    >>> result.csf["C"].tolist()
    [0.25, 0.25, 0.25, 0.25]
    >>> result.pif_a.round(3).tolist()
    [0.5, 0.5, 0.25]
    """
    cols = _columns(df, columns)
    bins = dict(bins or {})
    priors = dict(priors or {})
    accuracies = dict(accuracies or {})
    for what, given in (("bins", bins), ("priors", priors), ("accuracies", accuracies)):
        unknown = [c for c in given if c not in cols]
        if unknown:
            raise ColumnError(f"{what} names columns that are not assessed: {unknown!r}")
    n = len(df)
    codes: list[IntArray] = []
    sizes: list[int] = []
    records: list[ColumnBins] = []
    prior_list: list[tuple[FloatArray, float]] = []
    for column in cols:
        series = df[column]
        spec = _spec_of(column, series, bins, default_bins)
        column_codes, categories, record = _encode(column, series, spec)
        codes.append(column_codes)
        sizes.append(len(categories))
        records.append(record)
        prior_list.append(_prior(column, column_codes, categories, priors.get(column)))
    acc = {c: _accuracy(c, accuracies) for c in cols}
    cohorts, (row_class, _) = _cohorts(list(zip(codes, sizes, strict=True)), n)

    csf = np.empty((n, len(cols)), dtype=np.float64, order="F")
    cig = np.empty((n, len(cols)), dtype=np.float64, order="F")
    entropy = np.empty((len(cols), 2), dtype=np.float64)
    class_size = np.bincount(row_class).astype(np.float64)
    representative = np.empty(class_size.size, dtype=np.int64)
    representative[row_class] = np.arange(n, dtype=np.int64)
    rows = (row_class, class_size, representative)
    h_all = _entropy(class_size, n)
    for j, column in enumerate(cols):
        cohort, _ = cohorts[j]
        prior, total = prior_list[j]
        csf[:, j], cig[:, j], n_cohort = _column_measures(
            codes[j], cohort, rows, prior, total, acc[column]
        )
        h_x = _entropy(np.bincount(codes[j]).astype(np.float64), n)
        h_rest = _entropy(n_cohort, n)
        entropy[j] = (h_x, max(h_all - h_rest, 0.0))
    with np.errstate(divide="ignore", invalid="ignore"):
        weights = np.where(entropy[:, 0] > 0, entropy[:, 1] / entropy[:, 0], 0.0)
    return _result(df, cols, csf, cig, weights, entropy, records, priors, acc, for_publication)


def _result(
    df: pd.DataFrame,
    cols: list[Hashable],
    csf: FloatArray,
    cig: FloatArray,
    weights: FloatArray,
    entropy: FloatArray,
    records: list[ColumnBins],
    priors: Mapping[Hashable, object],
    accuracies: dict[Hashable, float],
    for_publication: bool,
) -> PifAssessment:
    labels = pd.Index(cols, dtype=object)
    csf_frame = pd.DataFrame(csf, index=df.index, columns=labels, copy=False)
    cig_frame = pd.DataFrame(cig, index=df.index, columns=labels, copy=False)
    wcig_frame = pd.DataFrame(cig * weights, index=df.index, columns=labels, copy=False)
    quantiled = [r.column for r in records if r.kind == "quantile"]
    dependent = [f"quantile bins of {c!r} are computed from the records" for c in quantiled]
    dependent.extend(
        f"the prior of {c!r} is its marginal in the records" for c in cols if c not in priors
    )
    if for_publication and quantiled:
        warnings.warn(
            f"assess_pif: quantile bins of {quantiled!r} are computed from the records, so "
            "the published assessment reveals where the data's quantiles fall; give public "
            "bin edges instead (and note that PIF figures are computed from the raw data "
            "and carry no privacy guarantee)",
            PrivacyLeakWarning,
            stacklevel=3,
        )
    return PifAssessment(
        csf=csf_frame,
        cig=cig_frame,
        wcig=wcig_frame,
        pif_a=pd.Series(csf.mean(axis=0), index=labels, name="pif_a"),
        rig=pd.Series(cig.sum(axis=1), index=df.index, name="rig"),
        weights=pd.Series(weights, index=labels, name="weight"),
        entropy=pd.DataFrame(entropy, index=labels, columns=["H", "H_given_others"]),
        bins=tuple(records),
        priors={c: ("public" if c in priors else "data") for c in cols},
        accuracies=accuracies,
        n_records=len(df),
        data_dependent=tuple(dependent),
    )
