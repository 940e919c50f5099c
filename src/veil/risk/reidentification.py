"""Re-identification risk from quasi-identifiers: equivalence classes and their summaries.

Records that agree on every quasi-identifier form an equivalence class. Under the
prosecutor model (the attacker knows the target is in the data and knows its
quasi-identifiers) a record in a class of size ``f`` is re-identified with probability
``1 / f``; the journalist model replaces ``f`` by the class size ``F`` in the population
the attacker links against; the marketer model is the expected share of records
re-identified when every record is targeted. Definitions follow El Emam (2013),
"Guide to the De-Identification of Personal Health Information", and ARX's risk
analysis (``org.deidentifier.arx.risk``).

Missing quasi-identifier values are a value of their own: records missing the same
attributes, and agreeing on the rest, share a class. Class ids come from positions, not
from the frame's index, so any index (duplicated, unsorted) gives the same result.
"""

from __future__ import annotations

import math
import numbers
import time
import warnings
from collections.abc import Hashable, Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass
from itertools import combinations
from typing import Any

import numpy as np
import numpy.typing as npt
import pandas as pd

from veil.classes import class_ids, class_sizes, value_codes
from veil.errors import ColumnError, ParameterError, PrivacyWarning
from veil.risk.population import check_fraction, class_size_histogram, population_uniqueness

__all__ = [
    "RiskSummary",
    "attribute_disclosure",
    "qi_scan",
    "record_risk",
    "summary",
]

IntArray = npt.NDArray[np.int64]

# Record counts up to 2^53 are exact in float64 (weights) and far from int64 overflow.
_MAX_RECORDS = 2**53


@dataclass(frozen=True)
class RiskSummary:
    """Re-identification risk of a table for one set of quasi-identifiers.

    Attributes
    ----------
    n_records, n_classes : int
        Records and equivalence classes.
    sample_uniques : int
        Records alone in their class.
    sample_uniqueness : float
        ``sample_uniques / n_records``.
    prosecutor_highest : float
        ``1 / min class size``: the risk of the most exposed record.
    prosecutor_average : float
        Mean of ``1 / f`` over records, which equals ``n_classes / n_records``.
    threshold : float
        The risk threshold used for ``records_above_threshold``.
    records_above_threshold : float
        Share of records whose prosecutor risk ``1 / f`` exceeds ``threshold``.
    marketer : float
        Expected share of records re-identified when all are targeted: ``n_classes / n``
        when the sample is the population, ``sum_k f_k / F_k / n`` against a population.
    journalist_highest : float or None
        ``max_k 1 / F_k`` over the sample's classes, with ``F_k`` the population class
        size (given, or estimated as ``f_k / pi`` from a sampling fraction); ``None``
        without population information.
    population_uniqueness : float or None
        Estimated share of population records that are unique (Dankar et al. 2012 rule,
        see :mod:`veil.risk.population`); only with a sampling fraction.
    population_model : str or None
        The model behind ``population_uniqueness``.
    """

    n_records: int
    n_classes: int
    sample_uniques: int
    sample_uniqueness: float
    prosecutor_highest: float
    prosecutor_average: float
    threshold: float
    records_above_threshold: float
    marketer: float
    journalist_highest: float | None = None
    population_uniqueness: float | None = None
    population_model: str | None = None

    def to_dict(self) -> dict[str, Any]:
        """Return the measures as a plain dictionary."""
        return asdict(self)

    def to_frame(self) -> pd.DataFrame:
        """Return the measures as a one-column frame indexed by measure name."""
        return pd.DataFrame({"value": pd.Series(self.to_dict(), dtype=object)})


def _check_frame(df: pd.DataFrame, columns: Sequence[Hashable], what: str) -> list[Hashable]:
    if isinstance(columns, str):
        columns = [columns]
    cols = list(columns)
    if not cols:
        raise ParameterError(f"{what} must name at least one column; got none")
    if len(set(cols)) != len(cols):
        raise ParameterError(f"{what} must not repeat a column; got {cols!r}")
    missing = [c for c in cols if c not in df.columns]
    if missing:
        raise ColumnError(f"{what} names columns absent from the data: {missing!r}")
    if len(df) == 0:
        raise ParameterError("df must hold at least one record; got an empty frame")
    return cols


def _classes(df: pd.DataFrame, cols: Sequence[Hashable]) -> tuple[IntArray, IntArray]:
    ids, k = class_ids((df[c] for c in cols), len(df))
    return ids, np.bincount(ids, minlength=k).astype(np.int64)


def record_risk(df: pd.DataFrame, quasi_identifiers: Sequence[Hashable]) -> pd.Series:
    """Prosecutor re-identification risk of every record: 1 / its class size.

    Parameters
    ----------
    df : pandas.DataFrame
        The released table (not modified).
    quasi_identifiers : sequence of column names
        Attributes an attacker can link on.

    Returns
    -------
    pandas.Series
        Float risks in ``(0, 1]``, aligned with ``df.index``, named ``"risk"``.

    Examples
    --------
    >>> df = pd.DataFrame({"zip": ["1", "1", "2"], "sex": ["F", "F", "M"]})
    >>> record_risk(df, ["zip", "sex"]).tolist()
    [0.5, 0.5, 1.0]
    """
    cols = _check_frame(df, quasi_identifiers, "quasi_identifiers")
    ids, sizes = _classes(df, cols)
    return pd.Series(1.0 / sizes[ids], index=df.index, name="risk")


def _population_class_sizes(
    df: pd.DataFrame,
    cols: Sequence[Hashable],
    ids: IntArray,
    sizes: IntArray,
    population: pd.DataFrame | Sequence[int] | npt.ArrayLike,
) -> npt.NDArray[np.float64]:
    """Population size F_k of every sample class k."""
    if isinstance(population, pd.DataFrame):
        missing = [c for c in cols if c not in population.columns]
        if missing:
            raise ColumnError(f"population lacks the quasi-identifier columns {missing!r}")
        n = len(df)
        both = (pd.concat([df[c], population[c]], ignore_index=True) for c in cols)
        joint, k = class_ids(both, n + len(population))
        pop_counts = np.bincount(joint[n:], minlength=k)
        # Map each sample class to its joint id through any one of its records.
        first = np.zeros(len(sizes), dtype=np.int64)
        first[ids[::-1]] = np.arange(n - 1, -1, -1)
        big = pop_counts[joint[first]].astype(np.float64)
    else:
        per_record = _population_sizes(population, len(df))
        big = np.zeros(len(sizes), dtype=np.float64)
        np.maximum.at(big, ids, per_record)
    if (big < sizes).any():
        raise ParameterError(
            "population class sizes must be at least the sample class sizes "
            "(the sample must be drawn from the population)"
        )
    return np.asarray(big, dtype=np.float64)


def _population_sizes(population: object, n: int) -> npt.NDArray[np.float64]:
    """Population class sizes given per record: ``n`` whole numbers >= 1 (not NaN)."""
    try:
        per_record = np.asarray(population, dtype=np.float64).ravel()
    except (TypeError, ValueError):
        raise ParameterError(
            "population given as class sizes must hold numbers (one whole number >= 1 per "
            f"record); got {type(population).__name__} that does not convert to numbers"
        ) from None
    if per_record.shape[0] != n:
        raise ParameterError(
            f"population given as class sizes must hold one size per record ({n}); got "
            f"{per_record.shape[0]}"
        )
    bad = ~(np.isfinite(per_record) & (per_record >= 1) & (per_record == np.round(per_record)))
    if bad.any():
        first = int(np.flatnonzero(bad)[0])
        raise ParameterError(
            f"population class sizes must be whole numbers >= 1 (not NaN or infinite); got "
            f"{float(per_record[first])!r} for record {first} ({int(bad.sum())} such sizes)"
        )
    return per_record


def _weighted_classes(
    df: pd.DataFrame, cols: Sequence[Hashable], weights: Hashable, population: object
) -> tuple[pd.DataFrame, IntArray, IntArray]:
    """Rows of positive weight, their class ids and the classes' record counts."""
    if population is not None:
        raise ParameterError("weights cannot be combined with population; pass one of them")
    if weights not in df.columns or weights in cols:
        raise ColumnError(
            f"weights must name a column of df other than the quasi-identifiers, got {weights!r}"
        )
    column = df[weights]
    if not pd.api.types.is_numeric_dtype(column) or column.isna().any():
        raise ParameterError(f"weights column {weights!r} must hold integer counts >= 0")
    counts = column.to_numpy(dtype=np.float64)
    with np.errstate(over="ignore"):  # a sum beyond float64 is inf, refused below
        total = float(counts.sum())
    if (
        not np.isfinite(counts).all()
        or (counts < 0).any()
        or (counts != np.round(counts)).any()
        or total < 1
    ):
        raise ParameterError(
            f"weights column {weights!r} must hold finite integer counts >= 0 summing to >= 1"
        )
    if total > _MAX_RECORDS:
        raise ParameterError(
            f"weights column {weights!r} sums to {total:.3g} records; at most 2^53 (about "
            f"9.0e15) records are supported, where counts are exact"
        )
    keep = counts > 0
    df = df.loc[keep]
    ids, k = class_ids((df[c] for c in cols), len(df))
    sizes = np.bincount(ids, weights=counts[keep], minlength=k).astype(np.int64)
    return df, ids, sizes


def summary(
    df: pd.DataFrame,
    quasi_identifiers: Sequence[Hashable],
    *,
    threshold: float = 0.2,
    population: pd.DataFrame | npt.ArrayLike | None = None,
    sampling_fraction: float | None = None,
    weights: Hashable | None = None,
) -> RiskSummary:
    """Summarize re-identification risk: prosecutor, journalist and marketer models.

    Measures only: nothing is released or changed. The prosecutor risk of a record in a
    class of size ``f`` is ``1 / f`` (El Emam and Dankar 2008; El Emam 2013; ARX).

    Parameters
    ----------
    df : pandas.DataFrame
        The released table (not modified).
    quasi_identifiers : sequence of column names
        Attributes an attacker can link on. Missing values form their own value.
    threshold : float, default 0.2
        Risk threshold in ``(0, 1]`` for the share of records at risk.
    population : pandas.DataFrame or array-like of int, optional
        For the journalist and marketer models: the population table the attacker
        links against (holding the quasi-identifier columns and every sample record),
        or the population class size of every sample record, in row order.
    sampling_fraction : float, optional
        ``n / N`` in ``(0, 1]`` when the table is a sample of a population of known
        size. Adds the population-uniqueness estimate and, if ``population`` is not
        given, estimates population class sizes as ``f_k / pi``.
    weights : column name, optional
        A column of record counts (integers >= 0): each row stands for that many
        records, as in a table aggregated by a distributed group-by. Not combinable
        with ``population``.

    Returns
    -------
    RiskSummary

    Examples
    --------
    >>> df = pd.DataFrame({"zip": ["1", "1", "2", "2", "3"], "sex": list("FFMMF")})
    >>> s = summary(df, ["zip", "sex"])
    >>> s.n_classes, s.sample_uniques, s.prosecutor_highest, s.prosecutor_average
    (3, 1, 1.0, 0.6)
    """
    cols = _check_frame(df, quasi_identifiers, "quasi_identifiers")
    threshold = check_fraction("threshold", threshold)
    if sampling_fraction is not None:
        sampling_fraction = check_fraction("sampling_fraction", sampling_fraction)
    if weights is None:
        ids, sizes = _classes(df, cols)
    else:
        df, ids, sizes = _weighted_classes(df, cols, weights, population)
    n, k = int(sizes.sum()), len(sizes)
    uniques = int((sizes == 1).sum())
    at_risk = int(sizes[1.0 / sizes > threshold].sum())

    journalist: float | None = None
    marketer = k / n
    big: npt.NDArray[np.float64] | None = None
    if population is not None:
        big = _population_class_sizes(df, cols, ids, sizes, population)
    elif sampling_fraction is not None:
        big = np.maximum(sizes / sampling_fraction, 1.0)
    if big is not None:
        journalist = float(1.0 / big.min())
        marketer = float((sizes / big).sum() / n)

    pop_share: float | None = None
    pop_model: str | None = None
    if sampling_fraction is not None:
        estimate = population_uniqueness(class_size_histogram(sizes), sampling_fraction)
        pop_share, pop_model = estimate.share, estimate.model

    return RiskSummary(
        n_records=n,
        n_classes=k,
        sample_uniques=uniques,
        sample_uniqueness=uniques / n,
        prosecutor_highest=float(1.0 / sizes.min()),
        prosecutor_average=k / n,
        threshold=threshold,
        records_above_threshold=at_risk / n,
        marketer=marketer,
        journalist_highest=journalist,
        population_uniqueness=pop_share,
        population_model=pop_model,
    )


def qi_scan(
    df: pd.DataFrame,
    candidates: Sequence[Hashable] | Mapping[str, Sequence[Hashable]],
    *,
    max_size: int | None = None,
    max_combinations: int = 100_000,
    time_limit: float | None = None,
) -> pd.DataFrame:
    """Risk of every quasi-identifier combination: classes, uniques and prosecutor risk.

    Measures only: nothing is released or changed.

    Parameters
    ----------
    df : pandas.DataFrame
        The table (not modified).
    candidates : sequence of column names, or mapping of label to column names
        Columns whose non-empty subsets are scanned (sizes 1 to ``max_size``), or named
        combinations to scan as given.
    max_size : int, optional
        Largest subset size when ``candidates`` is a sequence; default all.
    max_combinations : int, default 100 000
        Most combinations scanned. ``m`` columns have ``2^m - 1`` subsets (a billion
        for 30 columns): a scan over more than this many is refused up front, with the
        ``max_size`` that fits.
    time_limit : float, optional
        Seconds after which the scan stops. Combinations are scanned by size (all
        singles, then all pairs, ...), so the table returned is complete for the sizes
        it reaches; a :class:`~veil.errors.PrivacyWarning` names how many were left
        out, and ``attrs["veil.qi_scan"]`` records ``complete``, ``scanned`` and
        ``total``.

    Returns
    -------
    pandas.DataFrame
        One row per combination (labelled ``"a + b"`` or by the mapping's key) with
        ``n_qis``, ``n_classes``, ``unique_rate``, ``mean_risk`` and ``max_risk``.

    Raises
    ------
    ParameterError
        For a ``max_size``, ``max_combinations`` or ``time_limit`` that is not a
        positive number, or more combinations than ``max_combinations``.

    Examples
    --------
    >>> df = pd.DataFrame({"zip": ["1", "1", "2"], "sex": ["F", "M", "M"]})
    >>> qi_scan(df, ["zip", "sex"])["n_classes"].tolist()
    [2, 2, 3]
    """
    limit = _positive_int("max_combinations", max_combinations)
    if time_limit is not None and (
        isinstance(time_limit, bool)
        or not isinstance(time_limit, numbers.Real)
        or not 0.0 < float(time_limit) < math.inf
    ):
        raise ParameterError(f"time_limit must be a positive number of seconds; got {time_limit!r}")
    combos: Iterable[tuple[str, list[Hashable]]]
    if isinstance(candidates, Mapping):
        named = {str(label): list(cols) for label, cols in candidates.items()}
        if not named:
            raise ParameterError("candidates must hold at least one combination; got none")
        total = len(named)
        if total > limit:
            raise ParameterError(
                f"candidates: {total:,} named combinations, more than max_combinations={limit:,}"
            )
        combos = named.items()
    else:
        cols = _check_frame(df, candidates, "candidates")
        top = len(cols) if max_size is None else _positive_int("max_size", max_size)
        top = min(top, len(cols))
        total = _n_subsets(len(cols), top)
        combos = (
            (" + ".join(map(str, combo)), list(combo))
            for size in range(1, top + 1)
            for combo in combinations(cols, size)
        )
        if total > limit:
            fits = max(
                (k for k in range(1, top + 1) if _n_subsets(len(cols), k) <= limit), default=0
            )
            hint = f"max_size={fits} scans {_n_subsets(len(cols), fits):,}; " if fits else ""
            raise ParameterError(
                f"candidates: {len(cols)} columns give {total:,} combinations of sizes 1 to "
                f"{top}, more than max_combinations={limit:,}; {hint}or raise max_combinations"
            )
    deadline = None if time_limit is None else time.perf_counter() + float(time_limit)
    rows = []
    coded: dict[Hashable, tuple[npt.NDArray[np.int64], int]] = {}  # each column once
    for label, combo in combos:
        if deadline is not None and rows and time.perf_counter() > deadline:
            break
        qis = _check_frame(df, combo, f"candidates[{label!r}]")
        for c in qis:
            if c not in coded:
                coded[c] = value_codes(df[c])
        sizes = class_sizes([coded[c] for c in qis], len(df))
        rows.append(
            {
                "combination": label,
                "n_qis": len(qis),
                "n_classes": len(sizes),
                "unique_rate": float((sizes == 1).sum() / len(df)),
                "mean_risk": len(sizes) / len(df),
                "max_risk": float(1.0 / sizes.min()),
            }
        )
    if len(rows) < total:
        warnings.warn(
            f"qi_scan: time_limit={time_limit!r} s reached after {len(rows):,} of {total:,} "
            f"combinations (the last of {rows[-1]['n_qis']} columns); the other "
            f"{total - len(rows):,} were not measured and may carry a higher risk",
            PrivacyWarning,
            stacklevel=2,
        )
    out = pd.DataFrame(rows).set_index("combination")
    out.attrs["veil.qi_scan"] = {
        "complete": len(rows) == total,
        "scanned": len(rows),
        "total": total,
    }
    return out


def _positive_int(name: str, value: object) -> int:
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)) or value < 1:
        raise ParameterError(f"{name} must be an integer >= 1; got {value!r}")
    return int(value)


def _n_subsets(m: int, top: int) -> int:
    """Non-empty subsets of ``m`` columns with at most ``top`` of them."""
    return sum(math.comb(m, size) for size in range(1, top + 1))


def attribute_disclosure(
    df: pd.DataFrame,
    quasi_identifiers: Sequence[Hashable],
    sensitive: Hashable,
    *,
    threshold: float = 0.8,
) -> pd.DataFrame:
    """Classes whose sensitive value is (nearly) homogeneous: the homogeneity attack.

    Knowing that someone is in such a class reveals their sensitive value with
    probability at least ``threshold`` without identifying their record (Machanavajjhala
    et al. 2007, the homogeneity attack, with 80 % as the default threshold).

    Parameters
    ----------
    df : pandas.DataFrame
        The table (not modified).
    quasi_identifiers : sequence of column names
        The class-defining attributes.
    sensitive : column name
        The sensitive attribute; missing is a value.
    threshold : float, default 0.8
        Share in ``(0, 1]`` of the most common sensitive value at or above which a class
        is reported.

    Returns
    -------
    pandas.DataFrame
        One row per reported class: its quasi-identifier values, ``size``, the most
        common sensitive value (column ``"sensitive_value"``) and its ``share``; sorted
        by share, then size, descending.

    Examples
    --------
    >>> df = pd.DataFrame({"zip": ["1"] * 5 + ["2"] * 2, "dx": list("aaaab") + list("ab")})
    >>> attribute_disclosure(df, ["zip"], "dx")[["zip", "size", "share"]].values.tolist()
    [['1', 5, 0.8]]
    """
    cols = _check_frame(df, quasi_identifiers, "quasi_identifiers")
    if sensitive in cols:
        raise ParameterError(f"sensitive must not be a quasi-identifier; got {sensitive!r}")
    _check_frame(df, [sensitive], "sensitive")
    threshold = check_fraction("threshold", threshold)
    ids, sizes = _classes(df, cols)
    values, n_values = value_codes(df[sensitive])
    pair, _ = value_codes(pd.Index(ids * n_values + values))
    pair_counts = np.bincount(pair)
    pair_first = np.zeros(len(pair_counts), dtype=np.int64)
    pair_first[pair[::-1]] = np.arange(len(df) - 1, -1, -1)
    pair_class = ids[pair_first]
    # Largest count per class: sort pairs by class, then count descending; keep the first.
    order = np.lexsort((-pair_counts, pair_class))
    heads = order[np.r_[True, pair_class[order][1:] != pair_class[order][:-1]]]
    head_class = pair_class[heads]
    share = pair_counts[heads] / sizes[head_class]
    keep = share >= threshold
    rows = pair_first[heads[keep]]
    out = df.iloc[rows][cols].reset_index(drop=True)
    out["size"] = sizes[head_class[keep]]
    out["sensitive_value"] = df[sensitive].iloc[rows].to_numpy()
    out["share"] = share[keep]
    ordered: pd.DataFrame = out.sort_values(["share", "size"], ascending=False, kind="stable")
    return ordered.reset_index(drop=True)
