"""Analyst-side estimators for data released by local-DP randomizers.

A local randomizer turns each record into a noisy report before anyone sees it; the
estimators here recover population statistics from the reports alone, with standard
errors and confidence intervals that account for the noise:

* :func:`estimate_frequencies`: category proportions from randomized response or the
  exponential mechanism (or any invertible channel), by inverting the channel.
* :func:`estimate_mean`: the mean of bounded numerical values released with Laplace or
  Gaussian noise, with or without the outputs clipped back to the bounds.

Estimation is post-processing of the released data: it spends no privacy budget.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Sequence
from dataclasses import dataclass
from statistics import NormalDist
from typing import Any, Literal, Protocol, runtime_checkable

import numpy as np
import numpy.typing as npt
import pandas as pd

from veil.errors import DataTypeError, DomainError, ParameterError
from veil.mechanisms import Exponential, Gaussian, Laplace, RandomizedResponse

__all__ = [
    "FrequencyMechanism",
    "MeanEstimate",
    "MeanMechanism",
    "estimate_frequencies",
    "estimate_mean",
    "project_to_simplex",
]

FrequencyMechanism = Literal["rr", "exponential"]
MeanMechanism = Literal["laplace", "gaussian"]

FloatArray = npt.NDArray[np.float64]

# A channel whose condition number exceeds this cannot be inverted meaningfully in
# float64: the estimate would be dominated by rounding error. For randomized response
# the condition number is 1 / (p - o), so this also bounds the keep-minus-other gap.
_MAX_CONDITION = 1e12
# Tolerance on the row sums of a channel given as a matrix (rows are distributions).
_ROW_SUM_TOLERANCE = 1e-9
# How many offending values a DomainError lists.
_MAX_LISTED = 10
# Points evaluated per round of the search that inverts the clipped-mean map.
_SEARCH_POINTS = 1025


@runtime_checkable
class _HasChannel(Protocol):
    """A veil mechanism that exposes its ``k x k`` matrix of ``P[output j | input i]``."""

    @property
    def channel(self) -> Any: ...


# ---------------------------------------------------------------------------
# Frequencies
# ---------------------------------------------------------------------------


def _check_confidence(confidence: Any) -> float:
    if isinstance(confidence, bool) or not isinstance(
        confidence, (int, float, np.integer, np.floating)
    ):
        raise ParameterError(
            f"confidence: must be a real number in the open interval (0, 1), got {confidence!r}"
        )
    value = float(confidence)
    if not 0.0 < value < 1.0:
        raise ParameterError(f"confidence: must be in the open interval (0, 1), got {confidence!r}")
    return value


def _z_value(confidence: float) -> float:
    """Two-sided standard normal quantile for a ``confidence`` interval."""
    return NormalDist().inv_cdf(0.5 + 0.5 * confidence)


def _domain_index(domain: Sequence[Hashable] | npt.ArrayLike) -> pd.Index[Any]:
    if isinstance(domain, (str, bytes)):
        raise ParameterError(f"domain: must be a sequence of categories, got the string {domain!r}")
    try:
        index = pd.Index(domain) if isinstance(domain, pd.Index) else pd.Index(list(domain))  # type: ignore[arg-type]
    except TypeError as exc:
        raise ParameterError(f"domain: must be a sequence of categories ({exc})") from exc
    if index.size < 2:
        raise ParameterError(f"domain: needs at least 2 categories, got {index.size}")
    if index.hasnans:
        raise ParameterError("domain: categories must not be missing (NaN/None)")
    if not index.is_unique:
        repeated = index[index.duplicated()].unique().tolist()[:_MAX_LISTED]
        raise ParameterError(f"domain: categories must be unique, got repeats {repeated}")
    return index


def _report_codes(reports: Any, domain: pd.Index[Any]) -> npt.NDArray[np.int64]:
    """Map reports to int64 codes into ``domain``; NaN and unknown values are errors."""
    if isinstance(reports, (str, bytes)):
        raise ParameterError("reports: must be an array of reports, got a single string")
    if isinstance(reports, pd.DataFrame):
        raise ParameterError("reports: must be one column (1-D), got a DataFrame")
    if isinstance(reports, (pd.Series, pd.Index, pd.Categorical)) and isinstance(
        reports.dtype, pd.CategoricalDtype
    ):
        cat = pd.Categorical(reports)
        # Recode through the categories: one lookup per category, not per report.
        category_codes = domain.get_indexer(cat.categories)
        raw = np.asarray(cat.codes, dtype=np.int64)
        missing = raw < 0
        codes = np.where(missing, -1, category_codes[np.maximum(raw, 0)])
        values: np.ndarray[Any, Any] = np.asarray(cat.categories)[np.maximum(raw, 0)]
    else:
        if isinstance(reports, (pd.Series, pd.Index)):
            values = reports.to_numpy()
        else:
            values = np.asarray(reports)
        if values.ndim != 1:
            raise ParameterError(f"reports: must be 1-D, got an array of shape {values.shape}")
        missing = np.asarray(pd.isna(values), dtype=bool)
        codes = np.asarray(domain.get_indexer(pd.Index(values)), dtype=np.int64)
    if codes.size == 0:
        raise ParameterError("reports: must hold at least one report, got none")
    if missing.any():
        raise ParameterError(
            f"reports: {int(missing.sum())} reports are missing (NaN/None); a randomizer "
            "only releases categories of the domain, so drop or explain them first"
        )
    unknown = codes < 0
    if unknown.any():
        listed = pd.unique(pd.Series(values[unknown], dtype=object))[:_MAX_LISTED].tolist()
        raise DomainError(
            f"reports: {int(unknown.sum())} reports are outside the declared domain "
            f"{domain.tolist()!r}, e.g. {listed!r}"
        )
    return np.asarray(codes, dtype=np.int64)


def _channel_matrix(
    channel: npt.ArrayLike | _HasChannel | None,
    epsilon: float | None,
    mechanism: str,
    k: int,
) -> FloatArray:
    if mechanism not in ("rr", "exponential"):
        raise ParameterError(f"mechanism: must be 'rr' or 'exponential', got {mechanism!r}")
    if (channel is None) == (epsilon is None):
        raise ParameterError(
            "channel, epsilon: give exactly one (the channel matrix or mechanism, or the "
            f"epsilon of mechanism={mechanism!r}), got "
            + ("neither" if channel is None else "both")
        )
    if epsilon is not None:
        if mechanism == "rr":
            return RandomizedResponse(epsilon, k).channel
        return np.asarray(Exponential(epsilon, k).channel, dtype=np.float64)
    source = channel.channel if isinstance(channel, _HasChannel) else channel
    try:
        matrix = np.array(source, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise ParameterError(f"channel: must be a k x k matrix of probabilities ({exc})") from exc
    if matrix.shape != (k, k):
        raise ParameterError(
            f"channel: must be {k} x {k} (one row and column per domain category), got "
            f"shape {matrix.shape}"
        )
    if not np.all(np.isfinite(matrix)) or np.any(matrix < 0):
        raise ParameterError("channel: entries must be finite probabilities >= 0")
    sums = matrix.sum(axis=1)
    if np.any(np.abs(sums - 1.0) > _ROW_SUM_TOLERANCE):
        raise ParameterError(
            f"channel: each row P[output | input] must sum to 1, got row sums "
            f"{np.round(sums, 12).tolist()}"
        )
    return matrix


def _keep_other(matrix: FloatArray) -> tuple[float, float] | None:
    """``(p, o)`` if the channel keeps with ``p`` and moves to each other with ``o``."""
    k = matrix.shape[0]
    diagonal = np.diag(matrix)
    off = matrix[~np.eye(k, dtype=bool)]
    p, o = float(diagonal.mean()), float(off.mean())
    if np.allclose(diagonal, p, rtol=1e-12, atol=0.0) and np.allclose(off, o, rtol=1e-12, atol=0.0):
        return p, o
    return None


def project_to_simplex(values: npt.ArrayLike) -> FloatArray:
    """Euclidean projection of a vector onto the probability simplex.

    Returns the ``w`` with ``w >= 0`` and ``sum(w) = 1`` closest to ``v`` in Euclidean
    distance: ``w = max(v - θ, 0)``, with ``θ`` found from the sorted values
    ``u_1 >= ... >= u_k`` as ``θ = (Σ_{j<=ρ} u_j - 1) / ρ``, ``ρ`` the largest ``j`` with
    ``u_j > (Σ_{i<=j} u_i - 1) / j`` (Duchi, Shalev-Shwartz, Singer and Chandra,
    "Efficient projections onto the l1-ball for learning in high dimensions", ICML
    2008). For frequency estimates this is the "Norm-Sub" post-processing of Wang,
    Lopuhaä-Zwakenberg, Li, Skoric and Li, "Locally differentially private frequency
    estimation with consistency", NDSS 2020. O(k log k).

    Parameters
    ----------
    values : array-like of shape (k,)
        Finite real numbers.

    Returns
    -------
    numpy.ndarray of float64, shape (k,)
    """
    v = np.asarray(values, dtype=np.float64)
    if v.ndim != 1 or v.size == 0 or not np.all(np.isfinite(v)):
        raise ParameterError(
            f"values: must be a non-empty 1-D array of finite numbers, got shape {v.shape}"
        )
    u = np.sort(v)[::-1]
    excess = np.cumsum(u) - 1.0
    ranks = np.arange(1, v.size + 1, dtype=np.float64)
    rho = int(np.flatnonzero(u - excess / ranks > 0)[-1])
    theta = excess[rho] / (rho + 1)
    projected: FloatArray = np.maximum(v - theta, 0.0)
    return projected


def estimate_frequencies(
    reports: Any,
    domain: Sequence[Hashable] | npt.ArrayLike,
    *,
    epsilon: float | None = None,
    mechanism: FrequencyMechanism = "rr",
    channel: npt.ArrayLike | _HasChannel | None = None,
    confidence: float = 0.95,
    project: bool = False,
) -> pd.DataFrame:
    r"""Unbiased estimate of the true category proportions behind randomized reports.

    Each of the ``n`` reports was produced from one true category ``i`` by a local
    randomizer with channel ``P[j | i] = P_{ij}``, so the expected report proportions
    are ``q = P^T π``. With the observed proportions ``q̂``, the estimator
    ``π̂ = P^{-T} q̂`` is unbiased, with covariance
    ``Cov(π̂) = P^{-T} (diag(q) - q q^T) P^{-1} / n``, estimated by plugging in ``q̂``
    (Kairouz, Bonawitz and Ramage, "Discrete distribution estimation under local
    privacy", ICML 2016). For randomized response (keep with ``p``, each other
    category with ``o``) both are closed form and O(k):
    ``π̂ = (q̂ - o) / (p - o)`` and ``Var(π̂_i) = q_i (1 - q_i) / (n (p - o)²)``
    (Warner 1965; Wang, Blocki, Li and Jha, "Locally differentially private protocols
    for frequency estimation", USENIX Security 2017). Intervals are normal
    (Wald) intervals ``π̂ ± z σ̂``.

    The estimate is post-processing of the reports and spends no privacy budget. It
    can be negative or exceed 1 for rare or common categories; ``project=True`` adds
    a consistent version.

    Parameters
    ----------
    reports : array-like, pandas.Series or pandas.Categorical
        The released categories, one per record.
    domain : sequence
        The declared public domain the randomizer used, in the order of the output
        rows (and of the channel's rows and columns).
    epsilon : float, optional
        Privacy budget per record of ``mechanism``; give either ``epsilon`` or
        ``channel``.
    mechanism : {"rr", "exponential"}, default "rr"
        Randomizer run at ``epsilon``: ``"rr"`` is k-ary randomized response
        (binary for two categories), keeping with ``e^ε / (e^ε + k - 1)``;
        ``"exponential"`` is trasgoDP's exponential mechanism, keeping with
        ``e^(ε/2) / (e^(ε/2) + k - 1)`` (:class:`veil.mechanisms.Exponential` with
        the standard calibration). Ignored when ``channel`` is given.
    channel : array of shape (k, k) or mechanism, optional
        ``channel[i, j] = P[report j | true i]`` in domain order, or a veil mechanism
        exposing ``.channel`` (``RandomizedResponse``, ``Exponential``).
    confidence : float, default 0.95
        Coverage of the confidence intervals, in (0, 1).
    project : bool, default False
        Also return the estimate projected onto the probability simplex (column
        ``projected``): non-negative, summing to 1, and closer to the truth in
        Euclidean distance, but biased (it pulls rare categories up from their
        unbiased, possibly negative, estimates); see :func:`project_to_simplex`.

    Returns
    -------
    pandas.DataFrame
        Indexed by the domain, with columns ``count`` (observed reports),
        ``estimate`` (proportion), ``std_error``, ``ci_low``, ``ci_high``,
        ``estimated_count`` (``estimate * n``) and, with ``project=True``,
        ``projected``.

    Raises
    ------
    veil.errors.ParameterError
        Bad parameters, neither or both of ``epsilon`` and ``channel``, a channel that
        is not a stochastic matrix or is singular, empty or missing reports.
    veil.errors.DomainError
        Reports outside the declared domain.

    Examples
    --------
    >>> import numpy as np
    >>> reports = np.array(["a"] * 60 + ["b"] * 25 + ["c"] * 15)
    >>> est = estimate_frequencies(reports, ["a", "b", "c"], epsilon=2.0)
    >>> est["estimate"].round(3).tolist()
    [0.725, 0.211, 0.064]
    >>> float(est["estimate"].sum())
    1.0
    """
    level = _check_confidence(confidence)
    index = _domain_index(domain)
    k = int(index.size)
    matrix = _channel_matrix(channel, epsilon, mechanism, k)
    codes = _report_codes(reports, index)
    n = int(codes.size)
    counts = np.bincount(codes, minlength=k)
    q_hat = counts / n

    keep_other = _keep_other(matrix)
    if keep_other is not None:
        p, o = keep_other
        gap = p - o
        if not gap * _MAX_CONDITION > 1.0:
            raise ParameterError(
                f"channel: singular or nearly so (keep probability {p!r} minus other "
                f"probability {o!r} = {gap!r}); the reports carry no usable information "
                "about the true proportions"
            )
        estimate = (q_hat - o) / gap
        variance = q_hat * (1.0 - q_hat) / (n * gap * gap)
    else:
        condition = float(np.linalg.cond(matrix))
        if not condition < _MAX_CONDITION:
            raise ParameterError(
                f"channel: singular or nearly so (condition number {condition:.3g}, at most "
                f"{_MAX_CONDITION:.0e} allowed); the true proportions are not identifiable"
            )
        inverse_t = np.linalg.inv(matrix.T)
        estimate = inverse_t @ q_hat
        # diag(A (diag(q) - q q^T) A^T) / n with A = P^{-T}, and A q = π̂.
        variance = ((inverse_t * inverse_t) @ q_hat - estimate * estimate) / n
        np.maximum(variance, 0.0, out=variance)

    std_error = np.sqrt(variance)
    half_width = _z_value(level) * std_error
    out_index = index.copy()
    out_index.name = getattr(reports, "name", None)
    columns: dict[str, FloatArray | npt.NDArray[np.int64]] = {
        "count": counts.astype(np.int64),
        "estimate": estimate,
        "std_error": std_error,
        "ci_low": estimate - half_width,
        "ci_high": estimate + half_width,
        "estimated_count": estimate * n,
    }
    if project:
        columns["projected"] = project_to_simplex(estimate)
    frame: pd.DataFrame = pd.DataFrame(columns, index=out_index)
    return frame


# ---------------------------------------------------------------------------
# Means
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class MeanEstimate:
    """Estimate of a mean from noisy values, with its uncertainty.

    Attributes
    ----------
    mean : float
        Point estimate.
    std_error : float
        Estimated standard error of ``mean``.
    ci_low, ci_high : float
        Confidence interval at the requested level.
    bias_note : str
        What ``mean`` estimates and how it can be biased.
    n : int
        Number of noisy values used.
    """

    mean: float
    std_error: float
    ci_low: float
    ci_high: float
    bias_note: str
    n: int


def _noisy_array(noisy_values: Any) -> FloatArray:
    if isinstance(noisy_values, pd.DataFrame):
        raise ParameterError("noisy_values: must be one column (1-D), got a DataFrame")
    raw = (
        noisy_values.to_numpy()
        if isinstance(noisy_values, (pd.Series, pd.Index))
        else np.asarray(noisy_values)
    )
    if raw.ndim != 1:
        raise ParameterError(f"noisy_values: must be 1-D, got an array of shape {raw.shape}")
    if raw.dtype.kind not in "biuf":
        raise DataTypeError(f"noisy_values: must be numeric, got dtype {raw.dtype}")
    values = raw.astype(np.float64)
    if values.size < 2:
        raise ParameterError(
            f"noisy_values: need at least 2 values to estimate a standard error, got {values.size}"
        )
    if not np.all(np.isfinite(values)):
        raise ParameterError(
            f"noisy_values: {int((~np.isfinite(values)).sum())} values are NaN or infinite; "
            "a mechanism only releases finite values"
        )
    return values


def _expected_clipped(mech: Laplace | Gaussian, indices: npt.NDArray[np.int64]) -> FloatArray:
    """``m(x) = E[clip(x + noise)]`` at the grid points ``indices`` (grid steps)."""
    values = indices.astype(np.float64) * mech.grid.step
    return values + np.asarray(mech.bias(values, clip=True), dtype=np.float64)


def _invert_clipped_mean(mech: Laplace | Gaussian, target: float) -> tuple[float, float]:
    """Solve ``m(x) = target`` for ``x`` in the bounds; return ``x`` and ``m'(x)``.

    ``m`` is increasing on the grid. Each round evaluates it at up to
    ``_SEARCH_POINTS`` grid points of the current bracket at once and keeps the one
    interval holding ``target`` (a vectorized multi-section search; four rounds cover
    the 2^40 points a grid may have). Between the final two neighbouring grid points
    ``m`` is interpolated linearly. Outside ``[m(lower), m(upper)]`` the bound is
    returned.
    """
    grid = mech.grid
    lo, hi = grid.lo, grid.hi
    ends = _expected_clipped(mech, np.array([lo, hi], dtype=np.int64))
    overall_slope = float(ends[1] - ends[0]) / ((hi - lo) * grid.step)
    if target <= ends[0]:
        return grid.lower, overall_slope
    if target >= ends[1]:
        return grid.upper, overall_slope
    while hi - lo > 1:
        points = np.unique(np.linspace(lo, hi, min(_SEARCH_POINTS, hi - lo + 1)).round()).astype(
            np.int64
        )
        expected = _expected_clipped(mech, points)
        # Largest point whose m is <= target; m(lo) <= target < m(hi) holds throughout.
        at = int(np.searchsorted(expected, target, side="right")) - 1
        at = min(max(at, 0), points.size - 2)
        lo, hi = int(points[at]), int(points[at + 1])
    m_lo, m_hi = _expected_clipped(mech, np.array([lo, hi], dtype=np.int64))
    slope = float(m_hi - m_lo) / grid.step
    fraction = (target - float(m_lo)) / float(m_hi - m_lo) if m_hi > m_lo else 0.0
    return (lo + fraction) * grid.step, slope


def estimate_mean(
    noisy_values: Any,
    *,
    lower: float,
    upper: float,
    epsilon: float,
    mechanism: MeanMechanism = "laplace",
    delta: float | None = None,
    calibration: Literal["classic", "analytic"] = "classic",
    clipped: bool = True,
    debias: bool = False,
    integer: bool = False,
    resolution: float | None = None,
    confidence: float = 0.95,
) -> MeanEstimate:
    r"""Estimate the mean of bounded values from their Laplace or Gaussian releases.

    The releaser clipped each true value to ``[lower, upper]``, snapped it to the
    mechanism's grid, added noise (:class:`veil.mechanisms.Laplace` or
    :class:`veil.mechanisms.Gaussian` built from the same parameters) and, if
    ``clipped``, clipped the output back to the bounds. Estimation is post-processing
    and spends no privacy budget.

    * Unclipped outputs (``clipped=False``, ``clip_output=False`` at release): the
      noise has mean zero, so the sample mean ``ȳ`` is unbiased for the mean of the
      clipped, snapped true values. Its standard error is ``√(s²/n)``, ``s²`` the
      sample variance of the outputs (which already contains the noise variance);
      the interval is normal.
    * Clipped outputs (``clipped=True``, trasgoDP's default): clipping the noise
      pulls every output towards the middle of the bounds, by
      ``E[clip(x + N)] - x`` (the mechanism's ``bias(x, clip=True)``), so ``ȳ`` is
      biased. Without ``debias`` the plain mean, its standard error and interval are
      returned for what they estimate, the mean of ``m(x_i) = E[clip(x_i + N)]``,
      and ``bias_note`` says so. With ``debias=True`` the equation ``m(x̂) = ȳ`` is
      solved for ``x̂`` (``m`` is increasing, so a vectorized search over the grid
      between the bounds finds it), a method-of-moments estimate; the interval maps
      the plain interval's ends through the same inverse, and the standard error is
      the delta-method ``SE(ȳ) / m'(x̂)``. It is exact only when every true value is equal; otherwise
      ``m`` is not linear, ``mean(m(x_i)) != m(mean(x_i))`` and the estimate is
      approximate (good when the values are far from the bounds relative to the
      noise scale, or spread over the middle of the bounds).

    Parameters
    ----------
    noisy_values : array-like or pandas.Series
        The released values, one per record.
    lower, upper : float
        The public bounds used at release.
    epsilon : float
        Privacy budget per record used at release.
    mechanism : {"laplace", "gaussian"}, default "laplace"
        Noise distribution used at release.
    delta : float, optional
        δ of the Gaussian mechanism; required for ``"gaussian"``, not allowed for
        ``"laplace"``.
    calibration : {"classic", "analytic"}, default "classic"
        Calibration of the Gaussian mechanism (not used by Laplace).
    clipped : bool, default True
        Whether the outputs were clipped back to ``[lower, upper]``.
    debias : bool, default False
        Correct the clipping bias by inverting the expected-clipped-output map (only
        with ``clipped=True``).
    integer, resolution
        The grid of the release, as for the mechanism.
    confidence : float, default 0.95
        Coverage of the confidence interval, in (0, 1).

    Returns
    -------
    MeanEstimate

    Raises
    ------
    veil.errors.ParameterError
        Bad parameters, fewer than two values, NaN or infinite values.
    veil.errors.DataTypeError
        Non-numeric values.
    veil.errors.DomainError
        With ``clipped=True``, values outside ``[lower, upper]``.

    Examples
    --------
    >>> est = estimate_mean([1.0, 3.0, 2.0, 6.0], lower=0, upper=10, epsilon=1.0,
    ...                     clipped=False)
    >>> est.mean, est.n
    (3.0, 4)
    """
    level = _check_confidence(confidence)
    if mechanism not in ("laplace", "gaussian"):
        raise ParameterError(f"mechanism: must be 'laplace' or 'gaussian', got {mechanism!r}")
    mech: Laplace | Gaussian
    if mechanism == "laplace":
        if delta is not None:
            raise ParameterError(
                f"delta: the Laplace mechanism is pure ε-DP and takes no delta, got {delta!r}"
            )
        mech = Laplace(epsilon, lower, upper, integer=integer, resolution=resolution)
    else:
        if delta is None:
            raise ParameterError("delta: the Gaussian mechanism needs delta in (0, 1), got None")
        mech = Gaussian(
            epsilon,
            delta,
            lower,
            upper,
            calibration=calibration,
            integer=integer,
            resolution=resolution,
        )
    if debias and not clipped:
        raise ParameterError(
            "debias: only clipped outputs are biased; unclipped outputs (clipped=False) "
            "need no correction"
        )
    values = _noisy_array(noisy_values)
    n = int(values.size)
    if clipped:
        outside = (values < float(lower)) | (values > float(upper))
        if outside.any():
            raise DomainError(
                f"noisy_values: {int(outside.sum())} values are outside [{lower}, {upper}], "
                f"e.g. {np.unique(values[outside])[:_MAX_LISTED].tolist()}; they cannot be "
                "clipped outputs (pass clipped=False for unclipped releases)"
            )

    mean = float(values.mean())
    std_error = math.sqrt(float(values.var(ddof=1)) / n)
    half_width = _z_value(level) * std_error
    target = f"the mean of the true values clipped to [{lower}, {upper}] and snapped to the grid"
    if not clipped:
        note = (
            f"Unbiased for {target} (step {mech.grid.step:g}); values outside the bounds "
            "were clipped at release, so it differs from the raw mean if any were."
        )
        return MeanEstimate(mean, std_error, mean - half_width, mean + half_width, note, n)
    if not debias:
        note = (
            f"Biased for {target}: the outputs were clipped back to the bounds, which pulls "
            "the mean towards the middle of the bounds, most for values within a few noise "
            f"standard deviations ({math.sqrt(mech.variance()):.4g}) of a bound. "
            "The standard error and interval are for the mean of the expected clipped "
            "outputs, not the true mean; use debias=True for a method-of-moments "
            "correction, or release with clip_output=False."
        )
        return MeanEstimate(mean, std_error, mean - half_width, mean + half_width, note, n)

    corrected, slope = _invert_clipped_mean(mech, mean)
    ci_low, _ = _invert_clipped_mean(mech, mean - half_width)
    ci_high, _ = _invert_clipped_mean(mech, mean + half_width)
    note = (
        f"Clipping bias corrected by inverting m(x) = E[clip(x + noise)] at the observed "
        f"mean (method of moments): exact for {target} only when every true value is "
        "equal, approximate otherwise because m is not linear; the standard error is the "
        "delta-method one and the interval is the plain interval mapped through the "
        "inverse."
    )
    return MeanEstimate(corrected, std_error / slope, ci_low, ci_high, note, n)
