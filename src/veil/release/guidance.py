"""Guided parameters: harm tiers with default budgets, and each column's expected error.

Two helps for a custodian who is choosing a plan's parameters, both computed before any
record is read and from public inputs only:

* :data:`HARM_TIERS` map the worst harm that learning one person's record could cause
  to a default local-DP budget per record (epsilon, and delta from the number of
  records) and a default geo-indistinguishability level; :func:`harm_tier` picks the
  tier from five yes/no questions (the highest tier answered yes).
* :func:`expected_errors` gives, per column of a plan, the error its treatment adds,
  from the mechanism's own calibration (:mod:`veil.mechanisms`) on the plan's public
  bounds and domains: the standard deviation of numerical noise (and of a mean over
  the table), the chance a category is changed and the largest total variation
  distance (TVD) it can cause, the displacement of a location.

The tiers are a starting point, not a guarantee: they encode how much a report of one
record may shift an observer's odds about that record (``e^epsilon``). Tier budgets are
per record under local DP, where each record is noised on its own; they are larger than
the budgets usual for central DP over a whole table.

==== ========== ================================================ ======== ========
tier name       worst harm if one record is learned              epsilon  radius
==== ========== ================================================ ======== ========
0    none       none: the values are public or harmless          8.0      50 m
1    minimal    inconvenience, nuisance contact                  4.0      100 m
2    moderate   embarrassment, shame, discrimination             2.0      200 m
3    high       financial loss, loss of employment, civil suits  1.0      500 m
4    serious    criminal liability, loss of insurance or benefit 0.5      1 km
5    severe     threat to life, health, liberty or safety        0.25     2 km
==== ========== ================================================ ======== ========

Delta (for Gaussian noise) defaults to ``1 / (100 n)`` for ``n`` records, at most
``1e-6``, so the chance of a record escaping the epsilon bound stays far below one
record per table (the choice of the OptimShare paper, section 4.2). The location level
is epsilon per metre ``ln(4) / radius``: two places within the radius are
indistinguishable up to a factor of 4 (Andrés et al. 2013).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from veil.errors import ParameterError
from veil.mechanisms import (
    BinaryRandomizedResponse,
    Exponential,
    Gaussian,
    Laplace,
    PlanarLaplace,
    RandomizedResponse,
    ordinal_scores,
)
from veil.release.allocate import allocate, needs_sample
from veil.release.errors import PlanError
from veil.release.plan import (
    ExponentialTreatment,
    GaussianTreatment,
    LaplaceTreatment,
    LocationSpec,
    Plan,
    PlanarLaplaceMask,
    RandomizedResponseTreatment,
    Treatment,
)

__all__ = [
    "HARM_QUESTIONS",
    "HARM_TIERS",
    "ExpectedError",
    "HarmTier",
    "default_delta",
    "epsilon_for_target",
    "expected_errors",
    "harm_tier",
]


@dataclass(frozen=True)
class HarmTier:
    """A harm tier and its default budgets.

    Attributes
    ----------
    level : int
        0 (no harm) to 5 (severe).
    name : str
    harm : str
        The worst harm if one record is learned.
    ldp_epsilon : float
        Default local-DP epsilon per record for the whole release.
    radius_m : float
        Radius in metres within which locations are indistinguishable up to a factor 4.
    """

    level: int
    name: str
    harm: str
    ldp_epsilon: float
    radius_m: float

    @property
    def metric_epsilon(self) -> float:
        """Default geo-indistinguishability level, epsilon per metre: ``ln 4 / radius``."""
        return math.log(4.0) / self.radius_m

    def defaults(self, rows: int | None = None) -> dict[str, float]:
        """The tier's budget: ``ldp_epsilon``, ``ldp_delta`` (for ``rows``), ``metric_epsilon``."""
        return {
            "ldp_epsilon": self.ldp_epsilon,
            "ldp_delta": default_delta(rows),
            "metric_epsilon": self.metric_epsilon,
        }


HARM_TIERS: tuple[HarmTier, ...] = (
    HarmTier(0, "none", "none: the values are public or harmless", 8.0, 50.0),
    HarmTier(1, "minimal", "inconvenience, nuisance contact", 4.0, 100.0),
    HarmTier(2, "moderate", "embarrassment, shame, discrimination", 2.0, 200.0),
    HarmTier(3, "high", "financial loss, loss of employment, civil suits", 1.0, 500.0),
    HarmTier(4, "serious", "criminal liability, loss of insurance or benefits", 0.5, 1000.0),
    HarmTier(5, "severe", "threat to life, health, liberty or safety", 0.25, 2000.0),
)
"""The tiers of the module documentation, by level."""

HARM_QUESTIONS: tuple[tuple[str, str, int], ...] = (
    ("nuisance", "Could someone who learns a person's record bother or contact them?", 1),
    ("shame", "Could it embarrass them or expose them to discrimination?", 2),
    ("money", "Could it cost them money, their job, or a civil suit?", 3),
    ("legal", "Could it expose them to criminal charges or the loss of benefits?", 4),
    ("safety", "Could it threaten their life, health, liberty or safety?", 5),
)
"""The five harm questions: (key, question, the tier a yes leads to)."""


def harm_tier(answers: Mapping[str, bool] | Iterable[str]) -> HarmTier:
    """The tier of the highest harm question answered yes (tier 0 when none is).

    Parameters
    ----------
    answers : mapping of question key to bool, or iterable of the keys answered yes
        Keys of :data:`HARM_QUESTIONS`.

    Raises
    ------
    ParameterError
        An unknown question key (the message lists the keys).

    Examples
    --------
    >>> harm_tier({"shame": True, "money": False}).ldp_epsilon
    2.0
    >>> harm_tier([]).name
    'none'
    """
    yes = {k for k, v in answers.items() if v} if isinstance(answers, Mapping) else set(answers)
    keys = {key: level for key, _, level in HARM_QUESTIONS}
    unknown = sorted(yes - keys.keys())
    if unknown:
        raise ParameterError(f"answers: unknown harm questions {unknown}; known: {sorted(keys)}")
    level = max((keys[k] for k in yes), default=0)
    return HARM_TIERS[level]


def default_delta(rows: int | None) -> float:
    """``1 / (100 rows)``, at most ``1e-6`` (``1e-6`` when the size is unknown).

    Raises
    ------
    ParameterError
        ``rows`` is not an integer >= 1.
    """
    if rows is None:
        return 1e-6
    if isinstance(rows, bool) or not isinstance(rows, (int, np.integer)) or rows < 1:
        raise ParameterError(f"rows: must be an integer >= 1, got {rows!r}")
    return min(1e-6, 1.0 / (100.0 * int(rows)))


@dataclass(frozen=True)
class ExpectedError:
    """The error a column's treatment adds, from its mechanism's calibration.

    Attributes
    ----------
    column : str
        The column (or the location's name).
    method : str
        The treatment or mask.
    epsilon : float or None
        Its epsilon (per record; per metre for a location), None without noise.
    kind : {"numeric", "categorical", "location", "exact", "removed", "masked"}
    noise_std : float or None
        Numerical noise: standard deviation in the column's units (before clipping).
    relative_std : float or None
        ``noise_std`` over the width of the public bounds.
    mean_std : float or None
        Standard deviation of the mean over ``rows`` records (``noise_std / sqrt(rows)``).
    change_probability : float or None
        Categorical noise: the largest chance that a record's category is reported as
        another one.
    max_tvd : float or None
        Categorical noise: the largest TVD between the true and the reported
        distribution of the column, reached when every record has the most changed
        category (over many records; any table's TVD is at most this).
    mean_displacement_m, p95_displacement_m : float or None
        Location noise: mean and 95th percentile of the displacement, in metres.
    note : str
        A sentence for a person.
    """

    column: str
    method: str
    epsilon: float | None
    kind: str
    note: str
    noise_std: float | None = None
    relative_std: float | None = None
    mean_std: float | None = None
    change_probability: float | None = None
    max_tvd: float | None = None
    mean_displacement_m: float | None = None
    p95_displacement_m: float | None = None

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return dict(self.__dict__)


_NO_NOISE = {
    "keep": ("exact", "released as is: no error, and no protection"),
    "drop": ("removed", "not released"),
    "redact": ("masked", "replaced by a redaction mark"),
    "hmac": ("masked", "replaced by a keyed pseudonym (joins kept, values gone)"),
    "token": ("masked", "replaced by a vault token"),
    "ff1": ("masked", "encrypted with format-preserving encryption"),
    "generalize": ("masked", "generalized to a hierarchy level (coarser, no noise)"),
}


def _numeric(
    name: str, t: LaplaceTreatment | GaussianTreatment, integer: bool, rows: int | None
) -> ExpectedError:
    assert t.epsilon is not None
    lo, hi = t.bounds
    mech: Laplace | Gaussian
    if isinstance(t, LaplaceTreatment):
        mech = Laplace(t.epsilon, lo, hi, integer=integer, resolution=t.resolution)
    else:
        mech = Gaussian(
            t.epsilon,
            t.delta,
            lo,
            hi,
            calibration=t.calibration,
            integer=integer,
            resolution=t.resolution,
        )
    std = math.sqrt(mech.variance())
    mean_std = None if rows is None else std / math.sqrt(rows)
    note = f"noise of standard deviation {std:.4g} on bounds [{lo:g}, {hi:g}]"
    if mean_std is not None:
        note += f"; a mean over {rows} records is off by about {mean_std:.3g}"
    return ExpectedError(
        name,
        t.method,
        t.epsilon,
        "numeric",
        note,
        noise_std=std,
        relative_std=std / (hi - lo),
        mean_std=mean_std,
    )


def _categorical(name: str, t: RandomizedResponseTreatment | ExponentialTreatment) -> ExpectedError:
    assert t.epsilon is not None
    k = len(t.domain)
    channel: np.ndarray
    if isinstance(t, RandomizedResponseTreatment):
        mech = BinaryRandomizedResponse(t.epsilon) if k == 2 else RandomizedResponse(t.epsilon, k)
        channel = mech.channel
    else:
        scores = ordinal_scores(k) if t.ordinal else None
        channel = (
            Exponential(t.epsilon, scores=scores, calibration=t.calibration).channel
            if scores is not None
            else Exponential(t.epsilon, k, calibration=t.calibration).channel
        )
    change = float(1.0 - np.diag(channel).min())
    # TVD is convex: the reported distribution p·P is farthest from p at a point mass,
    # where the distance is one minus the kept probability of that category.
    return ExpectedError(
        name,
        t.method,
        t.epsilon,
        "categorical",
        f"a record's category is changed with probability up to {change:.1%} among {k}; "
        f"the column's distribution moves by a TVD of at most {change:.3f}",
        change_probability=change,
        max_tvd=change,
    )


def _location(loc: LocationSpec) -> ExpectedError:
    mask = loc.mask
    if isinstance(mask, PlanarLaplaceMask):
        assert mask.epsilon is not None
        mech = PlanarLaplace(mask.epsilon)
        mean, p95 = mech.mean_radius, mech.radius_quantile(0.95)
        return ExpectedError(
            loc.name,
            mask.method,
            mask.epsilon,
            "location",
            f"each point moves {mean:.4g} m on average, less than {p95:.4g} m for 95% of them",
            mean_displacement_m=mean,
            p95_displacement_m=p95,
        )
    return ExpectedError(
        loc.name,
        mask.method,
        None,
        "location",
        f"{mask.method}: precision reduced without noise calibrated to a guarantee",
    )


def _column(name: str, t: Treatment, integer: bool, rows: int | None) -> ExpectedError:
    if isinstance(t, (LaplaceTreatment, GaussianTreatment)):
        return _numeric(name, t, integer, rows)
    if isinstance(t, (RandomizedResponseTreatment, ExponentialTreatment)):
        return _categorical(name, t)
    kind, note = _NO_NOISE.get(t.method, ("masked", t.method))
    return ExpectedError(name, t.method, None, kind, note)


def expected_errors(
    plan: Plan, *, rows: int | None = None, integer: Iterable[str] = ()
) -> list[ExpectedError]:
    """Each column's expected error under ``plan``, before any record is read.

    Computed from the mechanisms' calibration on the plan's public bounds and domains
    after the budget is allocated (:func:`~veil.release.allocate.allocate`): nothing
    here looks at the records, so the figures may be shown to anyone who may see the
    plan.

    Parameters
    ----------
    plan : Plan
        A validated plan.
    rows : int, optional
        Number of records, for the error of a mean (omitted when None).
    integer : iterable of str
        Columns holding integers (their noise is in whole units).

    Returns
    -------
    list of ExpectedError
        The plan's columns in order, then its locations.

    Raises
    ------
    PlanError
        The plan's parameters are refused by a mechanism, or ``allocation: target``
        (whose epsilons are chosen from a sample at run time): the message says so.
    """
    if rows is not None and (isinstance(rows, bool) or not isinstance(rows, int) or rows < 1):
        raise PlanError(f"rows: must be an integer >= 1, got {rows!r}")
    if needs_sample(plan):
        raise PlanError(
            "budget.allocation: 'target' chooses each epsilon from a sample at run time; "
            "the expected error is known only after a dry run"
        )
    allocated = allocate(plan)
    ints = set(integer)
    anonymized = (
        set(allocated.anonymization.quasi_identifiers) if allocated.anonymization else set()
    )
    out: list[ExpectedError] = []
    for name, spec in allocated.columns.items():
        if name in anonymized:
            out.append(
                ExpectedError(
                    name,
                    "anonymization",
                    None,
                    "masked",
                    "generalized with the table until its anonymity models hold (no noise)",
                )
            )
            continue
        try:
            out.append(_column(name, spec.treatment, name in ints, rows))
        except ParameterError as exc:
            raise PlanError(f"columns.{name}.treatment: {exc}") from None
    for i, loc in enumerate(allocated.locations):
        try:
            out.append(_location(loc))
        except ParameterError as exc:
            raise PlanError(f"locations.{i}.mask: {exc}") from None
    return out


def epsilon_for_target(relative_error: float, rows: int, *, confidence: float = 0.95) -> float:
    """The local-DP epsilon per record at which Laplace noise meets a target error.

    The target is the half-width of the ``confidence`` interval of a column's mean over
    ``rows`` records, as a share of the width of its public bounds (0.02: within 2 % of
    the range). The noise of the mean has the standard deviation of one record's noise
    over ``sqrt(rows)``; one record's comes from :class:`veil.mechanisms.Laplace`'s own
    calibration, which scales as ``1 / epsilon``. DP Wizard chooses epsilon the same way,
    from a target accuracy (OpenDP, 2024). Clipping is not counted: values piled on a
    bound bias the mean towards the middle, so keep the bounds tight.

    Parameters
    ----------
    relative_error : float
        The target half-width, a share of the bounds' width, in (0, 1].
    rows : int
        The records the mean is taken over (at least 1).
    confidence : float, default 0.95
        The interval's confidence, in (0, 1).

    Returns
    -------
    float
        Epsilon per record.

    Raises
    ------
    veil.errors.ParameterError
        A target, row count or confidence out of range.

    Examples
    --------
    >>> round(epsilon_for_target(0.02, 10_000), 3)
    1.386
    """
    from scipy.stats import norm

    if isinstance(relative_error, bool) or not (
        isinstance(relative_error, (int, float)) and 0.0 < relative_error <= 1.0
    ):
        raise ParameterError(f"relative_error: must be in (0, 1], got {relative_error!r}")
    if isinstance(rows, bool) or not isinstance(rows, int) or rows < 1:
        raise ParameterError(f"rows: must be an integer >= 1, got {rows!r}")
    if not (isinstance(confidence, float) and 0.0 < confidence < 1.0):
        raise ParameterError(f"confidence: must be in (0, 1), got {confidence!r}")
    z = float(norm.ppf(0.5 + confidence / 2.0))
    # Noise on bounds of width 1 at epsilon 1; its standard deviation scales as 1 / eps.
    unit_sd = math.sqrt(float(Laplace(1.0, 0.0, 1.0).variance()))
    return z * unit_sd / (relative_error * math.sqrt(rows))
