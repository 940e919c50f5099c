"""Local differential privacy on one column: Laplace, Gaussian, exponential, randomized response.

Each treatment's planned cost is what its mechanism (:mod:`veil.mechanisms`, the classes
the data functions use) reports for the plan's parameters; the step runs the matching
function of :mod:`veil.ldp` with the step's random stream. All are row steps.
"""

from __future__ import annotations

import math
from collections import Counter
from typing import Annotated, Any, Literal

from pydantic import Field, field_validator

from veil import ldp
from veil.errors import ParameterError
from veil.mechanisms import (
    BinaryRandomizedResponse,
    Exponential,
    Gaussian,
    Laplace,
    PrivacyCost,
    RandomizedResponse,
    ordinal_scores,
)
from veil.release.errors import PlanError
from veil.release.schema import Missing, Scalar, SpecModel
from veil.release.steps.base import LedgerStep, Step, public_parameters

__all__ = [
    "LDP_METHODS",
    "ExponentialTreatment",
    "GaussianTreatment",
    "LaplaceTreatment",
    "LdpKind",
    "LdpTreatment",
    "RandomizedResponseTreatment",
]

LDP_METHODS = ("laplace", "gaussian", "exponential", "randomized_response")
"""Treatments that spend local-DP budget (epsilon per record)."""


class _Ldp(SpecModel):
    """Shared fields of the local-DP treatments."""

    epsilon: Annotated[float, Field(gt=0, allow_inf_nan=False)] | None = None
    weight: Annotated[float, Field(gt=0, allow_inf_nan=False)] = 1.0
    missing: Missing = "error"


class _Bounded(_Ldp):
    bounds: tuple[float, float]
    resolution: Annotated[float, Field(gt=0)] | None = None
    clip_output: bool = True

    @field_validator("bounds")
    @classmethod
    def _ordered(cls, value: tuple[float, float]) -> tuple[float, float]:
        lo, hi = value
        if not (math.isfinite(lo) and math.isfinite(hi) and lo < hi):
            raise ValueError(
                f"must be two finite numbers [lower, upper] with lower < upper, got {list(value)}"
            )
        return value


class LaplaceTreatment(_Bounded):
    """Laplace mechanism on public bounds: epsilon-LDP per record.

    Runs :func:`veil.ldp.dp_clip_laplace`; integer columns get integer noise.
    """

    method: Literal["laplace"] = "laplace"


class GaussianTreatment(_Bounded):
    """Gaussian mechanism: (epsilon, delta)-LDP per record (:func:`veil.ldp.dp_clip_gaussian`)."""

    method: Literal["gaussian"] = "gaussian"
    delta: Annotated[float, Field(gt=0, lt=1)]
    calibration: Literal["classic", "analytic"] = "analytic"


class _Categorical(_Ldp):
    domain: Annotated[list[Scalar], Field(min_length=2)]

    @field_validator("domain")
    @classmethod
    def _unique(cls, value: list[Scalar]) -> list[Scalar]:
        repeated = [v for v, n in Counter(value).items() if n > 1]
        if repeated:
            raise ValueError(f"categories must be unique, repeated: {repeated[:10]}")
        return value


class ExponentialTreatment(_Categorical):
    """Exponential mechanism over a public domain (:func:`veil.ldp.dp_exponential`).

    ``ordinal: true`` scores reports by their distance in the domain's order
    (:func:`veil.mechanisms.ordinal_scores`).
    """

    method: Literal["exponential"] = "exponential"
    calibration: Literal["standard", "full"] = "full"
    ordinal: bool = False


class RandomizedResponseTreatment(_Categorical):
    """Randomized response over a public domain: binary for 2 categories, else k-ary."""

    method: Literal["randomized_response"] = "randomized_response"


LdpTreatment = (
    LaplaceTreatment | GaussianTreatment | ExponentialTreatment | RandomizedResponseTreatment
)

_GUARANTEES = {
    "laplace": "epsilon-local DP per record (Laplace on public bounds)",
    "gaussian": "(epsilon, delta)-local DP per record (Gaussian on public bounds)",
    "exponential": "epsilon-local DP per record (exponential mechanism, exact channel epsilon)",
    "randomized_response": "epsilon-local DP per record (randomized response)",
}


def _epsilon(name: str, spec: LdpTreatment) -> float:
    if spec.epsilon is None:
        raise PlanError(f"columns.{name}.treatment.epsilon: not set (allocate the budget first)")
    return spec.epsilon


def _mechanism(name: str, spec: LdpTreatment) -> Any:
    """The mechanism object the treatment runs, with the plan's parameters."""
    eps = _epsilon(name, spec)
    if isinstance(spec, LaplaceTreatment):
        return Laplace(eps, *spec.bounds, resolution=spec.resolution)
    if isinstance(spec, GaussianTreatment):
        return Gaussian(
            eps,
            spec.delta,
            *spec.bounds,
            calibration=spec.calibration,
            resolution=spec.resolution,
        )
    k = len(spec.domain)
    if isinstance(spec, ExponentialTreatment):
        if spec.ordinal:
            return Exponential(eps, scores=ordinal_scores(k), calibration=spec.calibration)
        return Exponential(eps, k, calibration=spec.calibration)
    return BinaryRandomizedResponse(eps) if k == 2 else RandomizedResponse(eps, k)


def _run(name: str, spec: LdpTreatment) -> Any:
    """``fn(frame, generator)``: the :mod:`veil.ldp` call of the treatment."""
    eps = _epsilon(name, spec)
    if isinstance(spec, LaplaceTreatment):
        laplace = spec
        return lambda df, g: ldp.dp_clip_laplace(
            df,
            name,
            eps,
            *laplace.bounds,
            resolution=laplace.resolution,
            clip_output=laplace.clip_output,
            missing=laplace.missing,
            rng=g,
        )
    if isinstance(spec, GaussianTreatment):
        gaussian = spec
        return lambda df, g: ldp.dp_clip_gaussian(
            df,
            name,
            eps,
            *gaussian.bounds,
            gaussian.delta,
            calibration=gaussian.calibration,
            resolution=gaussian.resolution,
            clip_output=gaussian.clip_output,
            missing=gaussian.missing,
            rng=g,
        )
    if isinstance(spec, ExponentialTreatment):
        scores = ordinal_scores(len(spec.domain)) if spec.ordinal else None
        return lambda df, g: ldp.dp_exponential(
            df,
            name,
            eps,
            domain=spec.domain,
            scores=scores,
            calibration=spec.calibration,
            missing=spec.missing,
            rng=g,
        )
    randomize = (
        ldp.dp_randomized_response_binary
        if len(spec.domain) == 2
        else ldp.dp_randomized_response_kary
    )
    return lambda df, g: randomize(df, name, eps, domain=spec.domain, missing=spec.missing, rng=g)


class LdpKind:
    """The local-DP treatments: a row step with the cost its mechanism reports."""

    def planned(self, name: str, spec: LdpTreatment) -> LedgerStep:
        """The mechanism's own cost for the plan's parameters."""
        try:
            cost: PrivacyCost = _mechanism(name, spec).cost(name)
        except ParameterError as exc:
            raise PlanError(f"columns.{name}.treatment: {exc}") from None
        return LedgerStep(
            name, spec.method, public_parameters(spec), cost, _GUARANTEES[spec.method]
        )

    def build(self, name: str, spec: LdpTreatment) -> Step:
        """A row step drawing the noise from its stream."""
        return Step(f"{name}: {spec.method}", name, "row", _run(name, spec), (name,))
