"""Epsilon sweeps: how utility changes with the privacy budget, run by run.

A sweep applies one or more local-DP mechanisms of :mod:`veil.ldp` to one column of a
table, for each privacy budget ε of a grid, ``runs`` times each, and measures every
release with a utility metric of :mod:`veil.metrics`. The result is a tidy frame with
one row per run (:func:`sweep`), reduced to the mean and standard deviation per
mechanism and ε by :func:`summarize`, plotted with error bars by :func:`plot_sweep`
and written to a folder by :func:`write_sweep`. This module only orchestrates: the
noise comes from :mod:`veil.ldp` and the numbers from :mod:`veil.metrics`.

The trasgoDP protocol
---------------------
:func:`paper_protocol` repeats the experiment of Sáinz-Pardo Díaz and López García [1]_
(Section "Tests and examples", Figure 3 on Adult; Figure 7 repeats the protocol on
another data set): the eight columns of their Table 4 (workclass, education,
marital-status, occupation, sex, native-country, age, salary-class) are the features of
the correlation loss; ``age`` is privatized with the Laplace and the Gaussian mechanism
(δ = 1e-6, public bounds 16 and 100), ``workclass`` with the exponential mechanism and
k-ary randomized response, ``sex`` with the exponential mechanism and binary randomized
response; ε runs over {0.1, 0.4, 0.7, 1.0} ∪ {2.5, 3.0, ..., 12.0} (24 values), 10 runs
each. The correlation loss ([1]_, "Correlation loss (%)") is the mean absolute change
of the off-diagonal Pearson correlations of the features, in percent of their mean
absolute value, with categorical features coded as integers
(:func:`veil.metrics.correlation_loss`).

Three differences from the paper are deliberate and change numbers, not trends:

* the Gaussian mechanism uses the analytic calibration (Balle and Wang 2018) [2]_: the
  classic ``σ = Δ√(2 ln(1.25/δ))/ε`` the paper used is proven for ε < 1 only, and
  trasgoDP 2.1.0 itself now refuses ε > 1. With δ = 1e-6 the analytic σ is 0.7 to 0.8
  times the classic σ at ε <= 1 and about the same at ε = 8 to 12, and 2.6 (ε = 0.1) to
  4 (ε = 12) times the standard deviation of the Laplace noise at the same ε;
* categorical domains are the public ones of :data:`veil.datasets.ADULT_DOMAINS`, not
  the values present in the data: ``workclass`` has 8 categories ("Never-worked"
  included) where trasgoDP, reading the processed file, sees 7;
* the exponential mechanism keeps trasgoDP's calibration, which spends ε/2 per record
  (the column ``epsilon_spent`` of the result says so): at a nominal ε it is k-ary
  randomized response at ε/2. This, not a property of the exponential mechanism, is
  why its loss falls more slowly than randomized response's in the paper.

Randomness
----------
``rng`` is resolved once (:func:`veil.rng.resolve_rng`) and split with
:func:`veil.rng.spawn` into one independent stream per run: run ``r`` of mechanism
``i`` at ε number ``j`` uses child ``(i * len(epsilons) + j) * runs + r``. An integer
seed therefore reproduces a whole sweep, and no two runs share noise.

References
----------
.. [1] J. Sáinz-Pardo Díaz and Á. López García, "trasgoDP: An Open Source Framework for
   Releasing Noised Tabular Microdata under Local Differential Privacy",
   arXiv:2607.22230, 2026.
.. [2] B. Balle and Y.-X. Wang, "Improving the Gaussian mechanism for differential
   privacy: analytical calibration and optimal denoising", ICML 2018.
"""

from __future__ import annotations

import math
import numbers
import os
from collections.abc import Hashable, Mapping, Sequence
from pathlib import Path
from typing import Any, Final, Literal

import numpy as np
import numpy.typing as npt
import pandas as pd

from veil.atomic import write_atomic
from veil.datasets import ADULT_BOUNDS, ADULT_DOMAINS
from veil.errors import (
    ColumnError,
    DataTypeError,
    DomainError,
    MissingValueError,
    ParameterError,
)
from veil.ldp import (
    dp_clip_gaussian_array,
    dp_clip_laplace_array,
    dp_exponential_array,
    dp_randomized_response_binary_array,
    dp_randomized_response_kary_array,
)
from veil.mechanisms import (
    Calibration,
    Exponential,
    ExponentialCalibration,
    Gaussian,
    Laplace,
    PrivacyLedger,
    RandomizedResponse,
)
from veil.metrics import CorrelationMethod
from veil.release.sweep_metrics import (
    Target,
    correlation_metric,
    divergence_metric,
    is_number,
    is_text,
)
from veil.rng import RngLike, resolve_rng, spawn

__all__ = [
    "CATEGORICAL_MECHANISMS",
    "FRAME_COLUMNS",
    "MECHANISMS",
    "METRICS",
    "NUMERICAL_MECHANISMS",
    "PAPER_COLUMNS",
    "PAPER_DELTA",
    "PAPER_EPSILONS",
    "PAPER_FEATURES",
    "SUMMARY_COLUMNS",
    "MechanismName",
    "MetricName",
    "paper_protocol",
    "plot_sweep",
    "summarize",
    "sweep",
    "write_sweep",
]

MechanismName = Literal["laplace", "gaussian", "exponential", "krr", "binary_rr"]
MetricName = Literal["correlation_loss", "tvd", "js", "kl", "wasserstein"]

NUMERICAL_MECHANISMS: Final[tuple[str, ...]] = ("laplace", "gaussian")
CATEGORICAL_MECHANISMS: Final[tuple[str, ...]] = ("exponential", "krr", "binary_rr")
MECHANISMS: Final[tuple[str, ...]] = NUMERICAL_MECHANISMS + CATEGORICAL_MECHANISMS
METRICS: Final[tuple[str, ...]] = ("correlation_loss", "tvd", "js", "kl", "wasserstein")

FRAME_COLUMNS: Final[tuple[str, ...]] = (
    "column",
    "mechanism",
    "epsilon",
    "epsilon_spent",
    "run",
    "metric",
    "value",
)
SUMMARY_COLUMNS: Final[tuple[str, ...]] = (
    "column",
    "mechanism",
    "epsilon",
    "epsilon_spent",
    "metric",
    "mean",
    "std",
    "runs",
)
_KEYS: Final[list[str]] = ["column", "mechanism", "epsilon", "epsilon_spent", "metric"]

#: The eight Adult columns of the paper's Table 4, the features of its correlation loss.
PAPER_FEATURES: Final[tuple[str, ...]] = (
    "workclass",
    "education",
    "marital-status",
    "occupation",
    "sex",
    "native-country",
    "age",
    "salary-class",
)
#: {0.1 + 0.3k | k = 0..3} ∪ {2 + 0.5k | k = 1..20}: 24 budgets per record.
PAPER_EPSILONS: Final[tuple[float, ...]] = tuple(
    [round(0.1 + 0.3 * k, 10) for k in range(4)] + [2.0 + 0.5 * k for k in range(1, 21)]
)
PAPER_DELTA: Final[float] = 1e-6
#: The column swept by the paper and the two mechanisms compared on it.
PAPER_COLUMNS: Final[Mapping[str, tuple[str, str]]] = {
    "age": ("laplace", "gaussian"),
    "workclass": ("exponential", "krr"),
    "sex": ("exponential", "binary_rr"),
}

_METRIC_LABELS: Final[Mapping[str, str]] = {
    "correlation_loss": "correlation loss (%)",
    "tvd": "total variation distance",
    "js": "Jensen-Shannon divergence (nats)",
    "kl": "Kullback-Leibler divergence (nats)",
    "wasserstein": "Wasserstein distance (column units)",
}


# --------------------------------------------------------------------------- inputs


def _as_list(value: Any, name: str) -> list[Any]:
    if isinstance(value, (str, bytes)) or not isinstance(value, Sequence | np.ndarray):
        return [value]
    items = list(value)
    if not items:
        raise ParameterError(f"{name}: must not be empty")
    return items


def _check_mechanisms(mechanisms: str | Sequence[str]) -> list[str]:
    names = _as_list(mechanisms, "mechanisms")
    for name in names:
        if name not in MECHANISMS:
            raise ParameterError(
                f"mechanisms: unknown mechanism {name!r}; allowed are {list(MECHANISMS)}"
            )
    if len(set(names)) != len(names):
        raise ParameterError(f"mechanisms: must be distinct, got {names}")
    return names


def _check_epsilons(epsilons: float | Sequence[float]) -> list[float]:
    values = _as_list(epsilons, "epsilons")
    checked: list[float] = []
    for value in values:
        if isinstance(value, bool) or not isinstance(value, numbers.Real):
            raise ParameterError(f"epsilons: each must be a real number > 0, got {value!r}")
        eps = float(value)
        if not (math.isfinite(eps) and eps > 0):
            raise ParameterError(f"epsilons: each must be finite and > 0, got {value!r}")
        checked.append(eps)
    if len(set(checked)) != len(checked):
        raise ParameterError(f"epsilons: must be distinct, got {checked}")
    return checked


def _check_runs(runs: Any) -> int:
    if isinstance(runs, bool) or not isinstance(runs, numbers.Integral) or runs < 1:
        raise ParameterError(f"runs: must be an integer >= 1, got {runs!r}")
    return int(runs)


def _target(
    df: pd.DataFrame,
    column: Hashable,
    mechanisms: list[str],
    bounds: tuple[float, float] | None,
    domain: Sequence[Any] | None,
    delta: float | None,
) -> Target:
    if column not in df.columns:
        raise ColumnError(f"column: {column!r} is not in df; columns are {list(df.columns)}")
    series = df[column]
    if isinstance(series, pd.DataFrame):
        raise ColumnError(f"column: label {column!r} appears more than once in df")
    n_missing = int(series.isna().sum())
    if n_missing:
        raise MissingValueError(
            f"column: {column!r} has {n_missing} missing values; a sweep needs a complete "
            "column (drop or impute the rows first, e.g. df.dropna(subset=[column]))"
        )
    numerical = [m for m in mechanisms if m in NUMERICAL_MECHANISMS]
    categorical = [m for m in mechanisms if m in CATEGORICAL_MECHANISMS]
    if numerical and categorical:
        raise ParameterError(
            f"mechanisms: {numerical} treat {column!r} as numbers and {categorical} as "
            "categories; sweep them in separate calls"
        )
    values: npt.NDArray[Any] = series.to_numpy()
    integer = bool(is_number(series.dtype) and series.dtype.kind in "iu")
    if numerical:
        if not is_number(series.dtype):
            raise DataTypeError(
                f"column: {column!r} has dtype {series.dtype}; mechanisms {numerical} need a "
                "numeric column"
            )
        if bounds is None:
            raise ParameterError(
                f"bounds: the public (lower, upper) bounds of {column!r} are required by "
                f"{numerical}; they are never read from the data"
            )
        if "gaussian" in numerical and delta is None:
            raise ParameterError(
                "delta: required by the gaussian mechanism, in (0, 1) and well below "
                f"1 / number of rows ({1 / max(len(series), 1):.3g})"
            )
        values = series.to_numpy(dtype=np.int64 if integer else np.float64)
    codes: npt.NDArray[np.int64] | None = None
    labels: pd.Categorical | None = None
    categories: npt.NDArray[Any] | None = None
    if categorical:
        if domain is None:
            raise ParameterError(
                f"domain: the public categories of {column!r} are required by {categorical}; "
                "they are never read from the data"
            )
        categories = np.asarray(list(domain), dtype=object)
        index = pd.Index(categories, dtype=object)
        if categories.ndim != 1 or categories.size == 0 or index.has_duplicates:
            raise ParameterError(
                f"domain: must be a non-empty sequence of distinct categories, got {domain!r}"
            )
        k = categories.size
        if "binary_rr" in categorical and k != 2:
            raise ParameterError(f"domain: binary_rr needs exactly 2 categories, got {k}")
        if "krr" in categorical and k < 3:
            raise ParameterError(
                f"domain: krr needs 3 or more categories, got {k}; use binary_rr for two"
            )
        if "exponential" in categorical and k < 2:
            raise ParameterError(f"domain: exponential needs 2 or more categories, got {k}")
        codes = index.get_indexer(np.asarray(series, dtype=object)).astype(np.int64)
        if (codes < 0).any():
            outside = pd.unique(np.asarray(series, dtype=object)[codes < 0])[:5]
            raise DomainError(
                f"column: {column!r} holds values outside domain=, e.g. {list(outside)}"
            )
        labels = pd.Categorical.from_codes(codes, dtype=pd.CategoricalDtype(index))
    return Target(
        name=column,
        values=values,
        codes=codes,
        labels=labels,
        domain=categories,
        integer=integer,
        categorical_dtype=is_text(series.dtype),
    )


def _check_cells(
    mechanisms: list[str],
    epsilons: list[float],
    target: Target,
    bounds: tuple[float, float] | None,
    delta: float | None,
    gaussian_calibration: Calibration,
    exponential_calibration: ExponentialCalibration,
) -> None:
    """Build every mechanism once so that a bad parameter fails before any noise."""
    k = 0 if target.domain is None else target.domain.size
    for mechanism in mechanisms:
        for eps in epsilons:
            if mechanism == "laplace":
                assert bounds is not None
                Laplace(eps, bounds[0], bounds[1], integer=target.integer)
            elif mechanism == "gaussian":
                assert bounds is not None and delta is not None
                Gaussian(
                    eps,
                    delta,
                    bounds[0],
                    bounds[1],
                    calibration=gaussian_calibration,
                    integer=target.integer,
                )
            elif mechanism == "exponential":
                Exponential(eps, k, calibration=exponential_calibration)
            else:
                RandomizedResponse(eps, k)


# --------------------------------------------------------------------------- noise


def _release(
    mechanism: str,
    epsilon: float,
    target: Target,
    *,
    bounds: tuple[float, float] | None,
    delta: float | None,
    gaussian_calibration: Calibration,
    exponential_calibration: ExponentialCalibration,
    rng: np.random.Generator,
    ledger: PrivacyLedger,
) -> npt.NDArray[Any]:
    """One vectorized call of a :mod:`veil.ldp` function over the whole column."""
    if mechanism in NUMERICAL_MECHANISMS:
        assert bounds is not None
        if mechanism == "laplace":
            return dp_clip_laplace_array(
                target.values, epsilon, bounds[0], bounds[1], rng=rng, ledger=ledger
            )
        assert delta is not None
        return dp_clip_gaussian_array(
            target.values,
            epsilon,
            bounds[0],
            bounds[1],
            delta,
            calibration=gaussian_calibration,
            rng=rng,
            ledger=ledger,
        )
    assert target.labels is not None and target.domain is not None
    # A categorical over the domain is encoded by veil.ldp from its k categories, not
    # from its n values: the column is encoded once per sweep, not once per run.
    released: Any
    if mechanism == "exponential":
        released = dp_exponential_array(
            target.labels,
            epsilon,
            domain=target.domain,
            calibration=exponential_calibration,
            rng=rng,
            ledger=ledger,
        )
    elif mechanism == "krr":
        released = dp_randomized_response_kary_array(
            target.labels, epsilon, domain=target.domain, rng=rng, ledger=ledger
        )
    else:
        released = dp_randomized_response_binary_array(
            target.labels, epsilon, domain=target.domain, rng=rng, ledger=ledger
        )
    return np.asarray(released.codes, dtype=np.int64)


# --------------------------------------------------------------------------- public API


def sweep(
    df: pd.DataFrame,
    column: Hashable,
    mechanisms: str | Sequence[str],
    epsilons: float | Sequence[float],
    *,
    runs: int = 10,
    features: Sequence[Hashable] | None = None,
    metric: MetricName = "correlation_loss",
    method: CorrelationMethod = "pearson",
    bounds: tuple[float, float] | None = None,
    domain: Sequence[Any] | None = None,
    delta: float | None = None,
    gaussian_calibration: Calibration = "classic",
    exponential_calibration: ExponentialCalibration = "standard",
    rng: RngLike = None,
) -> pd.DataFrame:
    """Release one column under each mechanism and ε, ``runs`` times, and score each release.

    Each run is one call of the :mod:`veil.ldp` array function over the whole column,
    with its own random stream (see the module's "Randomness"); each release gives an
    ε-local-DP (Gaussian: (ε, δ)) column per record, and is scored against the original
    with ``metric``. The scores are computed from ``df``'s records: on private data they
    are as confidential as the data (nothing in them is differentially private), and an
    epsilon chosen from them depends on the records, outside any ledger. Sweep a public
    or synthetic sample with the same columns to choose epsilon without that leak (the
    CLI refuses a private plan input without ``--sample`` or ``--private-input``).

    Parameters
    ----------
    df : pandas.DataFrame
        The original table; it is not modified.
    column : column label
        The column to privatize; it must be complete (no missing values).
    mechanisms : str or sequence of str
        Any of ``"laplace"``, ``"gaussian"`` (numerical columns), ``"exponential"``,
        ``"krr"`` (k-ary randomized response, 3 or more categories) and ``"binary_rr"``
        (categorical columns).
    epsilons : float or sequence of float
        Distinct privacy budgets per record, each finite and > 0; passed as given to the
        mechanism (see ``exponential_calibration`` for what is spent).
    runs : int, default 10
        Repetitions per mechanism and ε, >= 1.
    features : sequence of column labels, optional
        Features of the correlation loss; ``column`` is added when absent. ``None``:
        every column of ``df``. Ignored by the divergence metrics.
    metric : {"correlation_loss", "tvd", "js", "kl", "wasserstein"}, default "correlation_loss"
        :func:`veil.metrics.correlation_loss` (percent), or one entry of
        :func:`veil.metrics.divergence_distributions` between the original and the
        released column (``"wasserstein"`` for numerical mechanisms only).
    method : {"pearson", "spearman", "kendall"}, default "pearson"
        Correlation coefficient of the correlation loss.
    bounds : (float, float), optional
        Public ``(lower, upper)`` bounds; required by ``"laplace"`` and ``"gaussian"``.
    domain : sequence, optional
        Public categories of ``column``; required by the categorical mechanisms (exactly
        2 for ``"binary_rr"``). Values of the column outside it raise.
    delta : float, optional
        δ of the Gaussian mechanism, in (0, 1); required by ``"gaussian"``.
    gaussian_calibration : {"classic", "analytic"}, default "classic"
        As in :func:`veil.ldp.dp_clip_gaussian`; ``"classic"`` accepts ε <= 1 only.
    exponential_calibration : {"standard", "full"}, default "standard"
        As in :func:`veil.ldp.dp_exponential`: ``"standard"`` (trasgoDP's) spends ε/2.
    rng : None, int or numpy.random.Generator
        Randomness (see :mod:`veil.rng`): None is secure, an int seed reproduces the
        sweep (with a :class:`~veil.errors.ReproducibleNoiseWarning`).

    Returns
    -------
    pandas.DataFrame
        One row per run with the columns ``column``, ``mechanism``, ``epsilon`` (as
        given), ``epsilon_spent`` (the ε the mechanism's privacy ledger recorded),
        ``run`` (0-based), ``metric`` and ``value``, ordered by mechanism, ε and run.

    Raises
    ------
    veil.errors.ColumnError
        ``column`` or a feature is not in ``df``.
    veil.errors.ParameterError
        Unknown or repeated mechanism or metric, an ε that is not finite and > 0,
        ``runs`` < 1, missing ``bounds``, ``domain`` or ``delta``, a domain too small for
        a mechanism, ε > 1 with the classic Gaussian calibration, correlations too weak
        to measure.
    veil.errors.DataTypeError
        A numerical mechanism on a non-numeric column.
    veil.errors.DomainError
        Values outside ``domain``.
    veil.errors.MissingValueError
        ``column`` has missing values.

    Examples
    --------
    >>> import warnings
    >>> from veil.datasets import ADULT_DOMAINS, load_adult
    >>> adult = load_adult().dropna()
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore")  # seeded noise, for the example only
    ...     runs = sweep(adult, "sex", ["binary_rr", "exponential"], [1.0, 4.0], runs=3,
    ...                  features=["age", "relationship", "salary-class"],
    ...                  domain=ADULT_DOMAINS["sex"], rng=0)
    >>> runs.shape
    (12, 7)
    >>> summary = summarize(runs)
    >>> list(summary["mechanism"])
    ['binary_rr', 'binary_rr', 'exponential', 'exponential']
    """
    if not isinstance(df, pd.DataFrame):
        raise DataTypeError(f"df: must be a pandas DataFrame, got {type(df).__name__}")
    names = _check_mechanisms(mechanisms)
    grid = _check_epsilons(epsilons)
    n_runs = _check_runs(runs)
    if metric not in METRICS:
        raise ParameterError(f"metric: must be one of {list(METRICS)}, got {metric!r}")
    if metric == "wasserstein" and any(m in CATEGORICAL_MECHANISMS for m in names):
        raise ParameterError(
            "metric: 'wasserstein' needs ordered numbers, so numerical mechanisms only; got "
            f"{names}"
        )
    if bounds is not None:
        if not isinstance(bounds, Sequence | np.ndarray) or len(bounds) != 2:
            raise ParameterError(f"bounds: must be a (lower, upper) pair, got {bounds!r}")
        bounds = (bounds[0], bounds[1])
    target = _target(df, column, names, bounds, domain, delta)
    _check_cells(names, grid, target, bounds, delta, gaussian_calibration, exponential_calibration)
    scorer = (
        correlation_metric(
            df, target, None if features is None else _as_list(features, "features"), method
        )
        if metric == "correlation_loss"
        else divergence_metric(target, metric)
    )

    generator = resolve_rng(rng)
    streams = spawn(generator, len(names) * len(grid) * n_runs)
    rows_mechanism: list[str] = []
    rows_epsilon: list[float] = []
    rows_spent: list[float] = []
    values: list[float] = []
    for i, mechanism in enumerate(names):
        for j, eps in enumerate(grid):
            first = (i * len(grid) + j) * n_runs
            ledger = PrivacyLedger()
            released = [
                _release(
                    mechanism,
                    eps,
                    target,
                    bounds=bounds,
                    delta=delta,
                    gaussian_calibration=gaussian_calibration,
                    exponential_calibration=exponential_calibration,
                    rng=streams[first + r],
                    ledger=ledger,
                )
                for r in range(n_runs)
            ]
            values.extend(scorer.score(released))
            rows_mechanism.extend([mechanism] * n_runs)
            rows_epsilon.extend([eps] * n_runs)
            rows_spent.extend(entry.epsilon for entry in ledger.entries)
    total = len(values)
    return pd.DataFrame(
        {
            "column": pd.Series([column] * total, dtype=object),
            "mechanism": rows_mechanism,
            "epsilon": np.asarray(rows_epsilon, dtype=np.float64),
            "epsilon_spent": np.asarray(rows_spent, dtype=np.float64),
            "run": np.tile(np.arange(n_runs, dtype=np.int64), total // n_runs),
            "metric": [metric] * total,
            "value": np.asarray(values, dtype=np.float64),
        }
    )


def summarize(frame: pd.DataFrame) -> pd.DataFrame:
    """Mean and standard deviation of a sweep's runs per column, mechanism and ε.

    Parameters
    ----------
    frame : pandas.DataFrame
        The tidy result of :func:`sweep` or :func:`paper_protocol` (columns
        :data:`FRAME_COLUMNS`).

    Returns
    -------
    pandas.DataFrame
        Columns :data:`SUMMARY_COLUMNS`: the keys, ``mean``, ``std`` (sample standard
        deviation, ``ddof=1``; NaN for a single run) and ``runs`` (the count), in the
        order of first appearance in ``frame``.

    Raises
    ------
    veil.errors.ParameterError
        If ``frame`` lacks one of :data:`FRAME_COLUMNS` or has no rows.
    """
    _check_tidy(frame, "frame")
    groups = frame.groupby(_KEYS, sort=False, dropna=False)["value"]
    out = groups.agg(["count"]).reset_index()
    stats = [_mean_std(np.asarray(v, dtype=np.float64)) for _, v in groups]
    out["mean"] = [s[0] for s in stats]
    out["std"] = [s[1] for s in stats]
    out = out.rename(columns={"count": "runs"})
    return out[list(SUMMARY_COLUMNS)]


def _mean_std(values: npt.NDArray[np.float64]) -> tuple[float, float]:
    # A run can score inf (KL when the release misses a category); say so without warnings.
    if values.size == 0 or not np.isfinite(values).all():
        mean = float("nan") if np.isnan(values).any() or values.size == 0 else float("inf")
        return mean, float("nan")
    std = float(np.std(values, ddof=1)) if values.size > 1 else float("nan")
    return float(np.mean(values)), std


def _check_tidy(frame: Any, name: str) -> None:
    if not isinstance(frame, pd.DataFrame):
        raise DataTypeError(f"{name}: must be a pandas DataFrame, got {type(frame).__name__}")
    absent = [c for c in FRAME_COLUMNS if c not in frame.columns]
    if absent:
        raise ParameterError(
            f"{name}: missing columns {absent}; expected the result of sweep() with "
            f"{list(FRAME_COLUMNS)}"
        )
    if frame.empty:
        raise ParameterError(f"{name}: has no rows")


def paper_protocol(
    df: pd.DataFrame,
    *,
    runs: int = 10,
    epsilons: Sequence[float] = PAPER_EPSILONS,
    rng: RngLike = None,
) -> pd.DataFrame:
    """Run the trasgoDP paper's sweep of Figures 3 and 7 on Adult.

    ``age`` with Laplace and Gaussian (δ = :data:`PAPER_DELTA`, bounds 16 and 100, the
    analytic calibration), ``workclass`` with the exponential mechanism and k-ary
    randomized response, ``sex`` with the exponential mechanism and binary randomized
    response; the correlation loss (Pearson) over :data:`PAPER_FEATURES`; domains from
    :data:`veil.datasets.ADULT_DOMAINS`. See the module docstring for the differences
    from the paper.

    Parameters
    ----------
    df : pandas.DataFrame
        Adult (:func:`veil.datasets.load_adult`) without missing values in
        :data:`PAPER_FEATURES`, as the paper's processed file: pass
        ``load_adult().dropna(subset=PAPER_FEATURES)`` (30 162 rows).
    runs : int, default 10
        Repetitions per mechanism and ε.
    epsilons : sequence of float, default :data:`PAPER_EPSILONS`
        The budgets; the paper's 24 by default.
    rng : None, int or numpy.random.Generator
        Randomness; one independent stream per column (:func:`veil.rng.spawn`), then per
        run.

    Returns
    -------
    pandas.DataFrame
        The tidy frame of :func:`sweep` for the three columns, in the order age,
        workclass, sex.

    Raises
    ------
    veil.errors.ColumnError
        A column of :data:`PAPER_FEATURES` is missing.
    veil.errors.MissingValueError
        Rows with missing values in :data:`PAPER_FEATURES`.
    """
    if not isinstance(df, pd.DataFrame):
        raise DataTypeError(f"df: must be a pandas DataFrame, got {type(df).__name__}")
    absent = [c for c in PAPER_FEATURES if c not in df.columns]
    if absent:
        raise ColumnError(f"df: the paper's columns {absent} are missing; is it Adult?")
    incomplete = int(df[list(PAPER_FEATURES)].isna().any(axis=1).sum())
    if incomplete:
        raise MissingValueError(
            f"df: {incomplete} rows have missing values in {list(PAPER_FEATURES)}; the "
            "paper's processed Adult has none: pass df.dropna(subset=PAPER_FEATURES)"
        )
    generator = resolve_rng(rng)
    streams = spawn(generator, len(PAPER_COLUMNS))
    common: dict[str, Any] = {"runs": runs, "features": list(PAPER_FEATURES)}
    frames = [
        sweep(
            df,
            "age",
            PAPER_COLUMNS["age"],
            epsilons,
            bounds=ADULT_BOUNDS["age"],
            delta=PAPER_DELTA,
            gaussian_calibration="analytic",
            rng=streams[0],
            **common,
        ),
        sweep(
            df,
            "workclass",
            PAPER_COLUMNS["workclass"],
            epsilons,
            domain=ADULT_DOMAINS["workclass"],
            rng=streams[1],
            **common,
        ),
        sweep(
            df,
            "sex",
            PAPER_COLUMNS["sex"],
            epsilons,
            domain=ADULT_DOMAINS["sex"],
            rng=streams[2],
            **common,
        ),
    ]
    return pd.concat(frames, ignore_index=True)


def plot_sweep(summary: pd.DataFrame, path: str | os.PathLike[str]) -> Path:
    """Plot mean ± standard deviation against ε, one panel per column, as a PNG.

    Parameters
    ----------
    summary : pandas.DataFrame
        The result of :func:`summarize` (a tidy frame of :func:`sweep` is summarized
        first).
    path : str or os.PathLike
        The PNG to write (atomically: a crash leaves any previous file intact).

    Returns
    -------
    pathlib.Path
        The path written.
    """
    from matplotlib.figure import Figure

    if isinstance(summary, pd.DataFrame) and "value" in summary.columns:
        summary = summarize(summary)
    _check_summary(summary)
    columns = list(pd.unique(summary["column"]))
    figure = Figure(figsize=(5.0 * len(columns), 4.0), layout="constrained")
    axes = figure.subplots(1, len(columns), squeeze=False)[0]
    for ax, column in zip(axes, columns, strict=True):
        part = summary[summary["column"] == column]
        for mechanism in pd.unique(part["mechanism"]):
            line = part[part["mechanism"] == mechanism].sort_values("epsilon")
            ax.errorbar(
                line["epsilon"].to_numpy(),
                line["mean"].to_numpy(),
                yerr=line["std"].fillna(0.0).to_numpy(),
                marker="o",
                markersize=3,
                capsize=3,
                label=str(mechanism),
            )
        metrics = list(pd.unique(part["metric"]))
        ax.set_title(str(column))
        ax.set_xlabel("ε per record (as passed to the mechanism)")
        ax.set_ylabel(", ".join(_METRIC_LABELS.get(str(m), str(m)) for m in metrics))
        ax.grid(True, alpha=0.3)
        ax.legend()
    target = Path(path)
    # Measured on the records swept: the custodian's, like a report.
    write_atomic(target, lambda tmp: figure.savefig(tmp, format="png", dpi=120), confidential=True)
    return target


def _check_summary(summary: Any) -> None:
    if not isinstance(summary, pd.DataFrame):
        raise DataTypeError(f"summary: must be a pandas DataFrame, got {type(summary).__name__}")
    absent = [c for c in SUMMARY_COLUMNS if c not in summary.columns]
    if absent:
        raise ParameterError(
            f"summary: missing columns {absent}; expected the result of summarize()"
        )
    if summary.empty:
        raise ParameterError("summary: has no rows")


def write_sweep(
    frame: pd.DataFrame, out_dir: str | os.PathLike[str], *, name: str = "sweep"
) -> dict[str, Path]:
    """Write a sweep's runs, its summary and its plot into a folder, each atomically.

    They are measured on the records swept, so they are written as confidential files
    (``0o600``; the folder ``0o700`` when created here).

    Parameters
    ----------
    frame : pandas.DataFrame
        The tidy result of :func:`sweep` or :func:`paper_protocol`.
    out_dir : str or os.PathLike
        The folder; created if absent.
    name : str, default "sweep"
        File name stem: ``{name}_runs.csv``, ``{name}_summary.csv``, ``{name}.png``.

    Returns
    -------
    dict of str to pathlib.Path
        ``{"runs": ..., "summary": ..., "plot": ...}``, the files written.
    """
    _check_tidy(frame, "frame")
    if not name or os.sep in name or (os.altsep and os.altsep in name):
        raise ParameterError(f"name: must be a non-empty file name stem, got {name!r}")
    folder = Path(out_dir)
    folder.mkdir(parents=True, exist_ok=True)
    summary = summarize(frame)
    paths = {
        "runs": folder / f"{name}_runs.csv",
        "summary": folder / f"{name}_summary.csv",
        "plot": folder / f"{name}.png",
    }
    # Utility measured on the records swept (the private input, as a rule): the files
    # are confidential, 0o600, like the custodian's report.
    write_atomic(
        paths["runs"],
        lambda tmp: frame[list(FRAME_COLUMNS)].to_csv(tmp, index=False),
        confidential=True,
    )
    write_atomic(paths["summary"], lambda tmp: summary.to_csv(tmp, index=False), confidential=True)
    plot_sweep(summary, paths["plot"])
    return paths
