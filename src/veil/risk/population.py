"""Population uniqueness estimated from a sample and its sampling fraction.

A record that is unique in the released sample is only certainly re-identifiable if it is
also unique in the population the sample was drawn from. These models estimate the share
of population records that are unique on the quasi-identifiers from the sample's
frequency of frequencies (how many classes have size 1, 2, ...) and the sampling
fraction ``pi = n / N``.

* Zayatz (1991), "Estimation of the number of unique population elements using a
  sample", as implemented in ARX (``ModelZayatz``).
* Pitman's model with the maximum-likelihood fit of Hoshino (2001), "Applying Pitman's
  sampling formula to microdata disclosure risk assessment", J. Off. Stat. 17(4).
* Dankar, El Emam, Neisa and Roffey (2012), "Estimating the re-identification risk of
  clinical data sets", BMC Med. Inform. Decis. Mak. 12:66: the decision rule that picks
  a model from the sampling fraction, as in ARX's ``RiskModelPopulationUniqueness``.

Dankar et al. use the slide-negative-binomial (SNB) model of Chen and Keller-McNulty
(1998) for ``pi > 0.1`` and keep the smaller of the SNB and Zayatz estimates. SNB is not
implemented here, so for ``pi > 0.1`` the rule returns Zayatz's estimate: it is the
rule's answer whenever SNB is not smaller or fails to converge, and otherwise an upper
bound of it (the conservative side for a risk estimate).
"""

from __future__ import annotations

import numbers
import warnings
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal

import numpy as np
import numpy.typing as npt
from scipy import optimize, special

from veil.errors import ParameterError

__all__ = [
    "PopulationUniqueness",
    "class_size_histogram",
    "pitman",
    "population_uniqueness",
    "zayatz",
]

Model = Literal["dankar", "pitman", "zayatz"]

# Dankar et al. (2012) switch from Pitman's model to Zayatz/SNB above this fraction.
_DANKAR_PITMAN_MAX_FRACTION = 0.1

_MAX_POPULATION = 2**53
"""Largest population ``n / sampling_fraction`` the estimates accept: sizes up to 2^53
are exact in float64, and no real population comes near it."""


@dataclass(frozen=True)
class PopulationUniqueness:
    """An estimate of the share of population records that are unique.

    Attributes
    ----------
    share : float
        Estimated number of population uniques divided by the population size, in
        ``[0, 1]``.
    model : str
        The model that produced the estimate (``"pitman"``, ``"zayatz"`` or ``"none"``
        when the sample has no uniques and the estimate is 0 by definition).
    sampling_fraction : float
        The sampling fraction ``n / N`` the estimate assumes.
    """

    share: float
    model: str
    sampling_fraction: float


def class_size_histogram(class_sizes: npt.ArrayLike) -> dict[int, int]:
    """Return the frequency of frequencies: class size -> number of classes of that size.

    Parameters
    ----------
    class_sizes : array-like of int
        The size of every equivalence class (each at least 1).

    Examples
    --------
    >>> class_size_histogram([1, 1, 2, 5])
    {1: 2, 2: 1, 5: 1}
    """
    sizes = np.asarray(class_sizes, dtype=np.int64).ravel()
    if sizes.size and sizes.min() < 1:
        raise ParameterError(f"class_sizes must all be >= 1; got minimum {int(sizes.min())}")
    values, counts = np.unique(sizes, return_counts=True)
    return {int(v): int(c) for v, c in zip(values, counts, strict=True)}


def check_fraction(name: str, value: object) -> float:
    """``value`` as a float in ``(0, 1]``; anything else (a string, NaN, 0) is refused."""
    if (
        isinstance(value, (bool, np.bool_))
        or not isinstance(value, numbers.Real)
        or not 0.0 < float(value) <= 1.0
    ):
        raise ParameterError(f"{name} must be a number in (0, 1]; got {value!r}")
    return float(value)


def _validate(
    histogram: Mapping[int, int], sampling_fraction: float
) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]]:
    sampling_fraction = check_fraction("sampling_fraction", sampling_fraction)
    if not histogram:
        raise ParameterError("histogram must hold at least one class size; got an empty one")
    sizes = np.fromiter(histogram.keys(), dtype=np.int64)
    counts = np.fromiter(histogram.values(), dtype=np.int64)
    if sizes.min() < 1 or counts.min() < 0:
        raise ParameterError(
            "histogram must map class sizes >= 1 to class counts >= 0; "
            f"got sizes down to {int(sizes.min())} and counts down to {int(counts.min())}"
        )
    keep = counts > 0
    if not keep.any():
        raise ParameterError("histogram must hold at least one class; all counts are 0")
    n = int((sizes * counts).sum())
    if n / sampling_fraction > _MAX_POPULATION:
        raise ParameterError(
            f"sampling_fraction {sampling_fraction!r} makes the population of this sample of "
            f"{n} records {n / sampling_fraction:.3g} records; at most 2^53 (about 9.0e15) "
            f"are supported, so sampling_fraction must be at least {n / _MAX_POPULATION:.3g}"
        )
    return sizes[keep], counts[keep]


def _population_size(n: int, sampling_fraction: float) -> int:
    return max(n, round(n / sampling_fraction))


def _p_exactly_one(
    population: int, sizes: npt.NDArray[np.int64], n: int
) -> npt.NDArray[np.float64]:
    """P(exactly one of a population class of each size is drawn into a sample of ``n``).

    The hypergeometric probability ``s C(N - s, n - 1) / C(N, n)``, written as
    ``(s n / N) prod_{j=1}^{s-1} (1 - (n - 1) / (N - j))`` and summed in logs: O(largest
    size) work and full precision whatever ``N`` (scipy's ``hypergeom.pmf`` takes time in
    proportion to ``N``, about a second at ``N = 1e9``, and loses digits there).
    """
    j = np.arange(1, int(sizes.max()), dtype=np.float64)
    ratio = (n - 1) / (population - j)
    with np.errstate(divide="ignore"):
        # ratio >= 1: more draws than non-class members, so no class is drawn only once.
        terms = np.where(ratio < 1.0, np.log1p(-np.minimum(ratio, 1.0)), -np.inf)
    prefix = np.concatenate([[0.0], np.cumsum(terms)])
    out: npt.NDArray[np.float64] = np.exp(np.log(sizes * (n / population)) + prefix[sizes - 1])
    return out


def zayatz(histogram: Mapping[int, int], sampling_fraction: float) -> float:
    """Zayatz's estimate of the share of population records that are unique.

    The probability that a sample unique is a population unique is estimated as the
    share of sample classes of size 1 weighted by the hypergeometric chance of drawing
    exactly one member, among all sample classes weighted the same way (Zayatz 1991, as
    in ARX's ``ModelZayatz``). The number of population uniques is then
    ``f1 * P(unique | sample unique) / pi``.

    Parameters
    ----------
    histogram : mapping of int to int
        Frequency of frequencies of the sample's class sizes (see
        :func:`class_size_histogram`).
    sampling_fraction : float
        ``pi = n / N`` in ``(0, 1]``.

    Returns
    -------
    float
        Estimated population uniques divided by the population size, in ``[0, 1]``. At
        ``pi = 1`` it equals the sample uniqueness.

    Examples
    --------
    >>> zayatz({1: 10, 2: 45}, 1.0)
    0.1
    """
    sizes, counts = _validate(histogram, sampling_fraction)
    n = int((sizes * counts).sum())
    f1 = int(counts[sizes == 1].sum())
    if f1 == 0:
        return 0.0
    population = _population_size(n, sampling_fraction)
    # P(exactly one of a population class of size s is drawn into a sample of n).
    p_one = _p_exactly_one(population, sizes, n)
    denominator = float((counts * p_one).sum())
    numerator = f1 * n / population
    conditional = numerator / denominator if denominator > 0 else 1.0
    uniques = f1 * conditional / sampling_fraction
    return float(min(max(uniques / population, 0.0), 1.0))


def _pitman_equations(
    params: npt.NDArray[np.float64],
    u: int,
    n: int,
    sizes: npt.NDArray[np.int64],
    counts: npt.NDArray[np.int64],
) -> npt.NDArray[np.float64]:
    # Score equations of the Pitman (Ewens-Pitman) sampling formula in closed form with
    # digamma functions (Hoshino 2001): d logL / d theta and d logL / d alpha.
    theta, alpha = float(params[0]), float(params[1])
    ratio = theta / alpha
    s1 = (special.digamma(ratio + u) - special.digamma(ratio + 1.0)) / alpha
    score_theta = s1 - (special.digamma(theta + n) - special.digamma(theta + 1.0))
    s2 = ((u - 1) - theta * s1) / alpha
    big = sizes > 1
    s3 = float(
        (counts[big] * (special.digamma(sizes[big] - alpha) - special.digamma(1.0 - alpha))).sum()
    )
    return np.array([score_theta, s2 - s3], dtype=np.float64)


def pitman(histogram: Mapping[int, int], sampling_fraction: float) -> float:
    """Pitman-model estimate of the share of population records that are unique.

    Fits the two parameters ``theta`` and ``alpha`` of Pitman's sampling formula by
    maximum likelihood on the sample (Hoshino 2001) and estimates the number of
    population uniques as ``Gamma(theta + 1) / Gamma(theta + alpha) * N ** alpha``.

    Parameters
    ----------
    histogram : mapping of int to int
        Frequency of frequencies of the sample's class sizes.
    sampling_fraction : float
        ``pi = n / N`` in ``(0, 1]``.

    Returns
    -------
    float
        Estimated population uniques divided by the population size, or ``nan`` when
        the likelihood has no admissible maximum (``0 < alpha < 1``, ``theta > -alpha``)
        or the estimate exceeds the population; :func:`population_uniqueness` then falls
        back to Zayatz as ARX does.
    """
    sizes, counts = _validate(histogram, sampling_fraction)
    n = int((sizes * counts).sum())
    u = int(counts.sum())
    c1 = float(counts[sizes == 1].sum())
    if c1 == 0:
        return 0.0
    if u < 2 or u == n:
        # One class or all classes unique: the likelihood has no interior maximum.
        return float("nan")
    c2 = float(counts[sizes == 2].sum()) or 1.0
    # Moment-style starting point used by ARX for the Newton-Raphson solver.
    c = c1 * (c1 - 1.0) / c2
    denominator = 2.0 * c1 * u + c1 * c - n * c
    theta0 = (n * u * c - c1 * (n - 1.0) * (2.0 * u + c)) / denominator if denominator else 1.0
    alpha0 = (theta0 * (c1 - n) + (n - 1.0) * c1) / (n * u)
    if not (0.0 < alpha0 < 1.0) or not np.isfinite(theta0) or theta0 <= -alpha0:
        theta0, alpha0 = 1.0, 0.5
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        solution, _, status, _ = optimize.fsolve(
            _pitman_equations,
            np.array([theta0, alpha0]),
            args=(u, n, sizes, counts),
            full_output=True,
            xtol=1e-12,
        )
    theta, alpha = float(solution[0]), float(solution[1])
    if status != 1 or not (0.0 < alpha < 1.0) or theta <= -alpha:
        return float("nan")
    population = _population_size(n, sampling_fraction)
    log_uniques = (
        special.gammaln(theta + 1.0) - special.gammaln(theta + alpha) + alpha * np.log(population)
    )
    uniques = float(np.exp(log_uniques))
    if not np.isfinite(uniques) or uniques < 0 or uniques > population:
        return float("nan")
    return uniques / population


def population_uniqueness(
    histogram: Mapping[int, int], sampling_fraction: float, *, model: Model = "dankar"
) -> PopulationUniqueness:
    """Estimate the share of population uniques with one model or Dankar's rule.

    ``model="dankar"`` follows Dankar et al. (2012) as implemented in ARX: Pitman's
    model when ``pi <= 0.1`` (Zayatz if Pitman has no admissible fit), Zayatz otherwise
    (see the module notes on SNB).

    Parameters
    ----------
    histogram : mapping of int to int
        Frequency of frequencies of the sample's class sizes.
    sampling_fraction : float
        ``pi = n / N`` in ``(0, 1]``.
    model : {"dankar", "pitman", "zayatz"}
        The estimator.

    Returns
    -------
    PopulationUniqueness

    Examples
    --------
    >>> population_uniqueness({1: 10, 2: 45}, 1.0)
    PopulationUniqueness(share=0.1, model='zayatz', sampling_fraction=1.0)
    """
    sizes, counts = _validate(histogram, sampling_fraction)
    if model not in ("dankar", "pitman", "zayatz"):
        raise ParameterError(f"model must be 'dankar', 'pitman' or 'zayatz'; got {model!r}")
    if not counts[sizes == 1].sum():
        return PopulationUniqueness(0.0, "none", sampling_fraction)
    if model == "zayatz":
        return PopulationUniqueness(
            zayatz(histogram, sampling_fraction), "zayatz", sampling_fraction
        )
    if model == "pitman":
        return PopulationUniqueness(
            pitman(histogram, sampling_fraction), "pitman", sampling_fraction
        )
    if sampling_fraction <= _DANKAR_PITMAN_MAX_FRACTION:
        estimate = pitman(histogram, sampling_fraction)
        if np.isfinite(estimate) and estimate != 0.0:
            return PopulationUniqueness(estimate, "pitman", sampling_fraction)
    return PopulationUniqueness(zayatz(histogram, sampling_fraction), "zayatz", sampling_fraction)
