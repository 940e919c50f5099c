"""OptimShare in a plan: keep Q exact, replace S by DP synthetic values chosen by a search.

The plan's ``share`` section names the columns released exactly (``quasi_identifiers``,
OptimShare's Q), the columns synthesized (``synthesized``, S), the label of the
application, the public domain of every column of Q and S, and the search's (ε, δ)
pairs: a public list, or ``fuzzy`` (the paper's fuzzy system, on a privacy need measured
on the records, which is a listed leak). The step needs the whole table: it runs
:func:`veil.share.optimshare_search` (after :func:`veil.share.derive_requirements` when
the pairs are fuzzy or Q is refined) and releases S drawn from the chosen DP model given
each row's exact Q.

Guarantee: S is (ε, δ)-DP synthetic (central DP per dataset) at the recorded cost under
the plan's selection; Q is exact and NOT covered by DP; every data-dependent choice is a
listed leak; the paper's Theorem 3.2 is not claimed. The ledger plans the most the search
can cost (:func:`veil.share.search_cost_bound`) before any record is read; the run
records what it spent, which never exceeds it.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Hashable
from typing import Annotated, Any, Literal

import numpy as np
import pandas as pd
from pydantic import Field, model_validator

from veil.errors import VeilError
from veil.frames import PRIVACY_ATTR, output_frame
from veil.release.errors import PlanError
from veil.release.progress import Cancelled, current_reporter
from veil.release.schema import SpecModel
from veil.release.steps.base import LedgerStep, Step

__all__ = ["STEP_FACTS", "FuzzyPairs", "ShareKind", "ShareSpec"]

STEP_FACTS = "veil.step_facts"
"""``attrs`` key where a whole-table step leaves its facts for the run's records."""

SCOPE = "table (share)"


class FuzzyPairs(SpecModel):
    """The paper's fuzzy (ε, δ) pairs: δ fixed, ε from the privacy need PIF_thresh.

    ``delta`` is public (the paper reads it as ``P_l / (100 n)``: write that figure);
    ``t_epsilon`` is the largest ε the system considers (T_ε) and ``tn`` the number of
    pairs (TN). The pairs depend on the records through PIF_thresh: a listed leak.
    """

    delta: Annotated[float, Field(gt=0, lt=1)]
    t_epsilon: Annotated[float, Field(gt=0, allow_inf_nan=False)] = 8.0
    tn: Annotated[int, Field(ge=1, le=100)] = 12


class ShareSpec(SpecModel):
    """The partially perturbed release (OptimShare): Q exact, S DP synthetic.

    Parameters
    ----------
    quasi_identifiers : list of str
        Q: released exactly (not covered by DP). Their column treatment is ``keep``.
    synthesized : list of str
        S: replaced by synthetic values. Their column treatment is ``keep``.
    label : str
        The class column of the application (GaussianNB utility), in Q or S.
    domain : mapping
        The public domain of every column of Q and S (:class:`veil.synth.TableDomain`'s
        plan form: a list of categories, or ``{bounds: [lo, hi], bins: n}``).
    pairs : list of [epsilon, delta], or ``{fuzzy: {delta, t_epsilon, tn}}``
        The search's pairs (ε per dataset).
    synthesizer, synthesizer_settings
        A name of :data:`veil.synth.SYNTHESIZERS` and its settings.
    selection : {"private", "paper"}
        Random stopping over noisy scores (default), or the paper's argmax, whose
        choice made on the raw records is a listed leak.
    refine : bool
        Move Q attributes to S by PIF (the paper's refinement; a listed leak).
    alpha, min_k
        The refinement's threshold and the least class size of the exact Q (refused
        below it).
    instances, c, e_threshold, merge, score_noise, stop_probability
        The search's t, C, E^T, how S meets Q, and the private selection's settings.
    """

    quasi_identifiers: Annotated[list[str], Field(min_length=1)]
    synthesized: Annotated[list[str], Field(min_length=1)]
    label: str
    domain: dict[str, Any]
    pairs: list[tuple[float, float]] | dict[Literal["fuzzy"], FuzzyPairs]
    synthesizer: str = "mst"
    synthesizer_settings: dict[str, Any] = Field(default_factory=dict)
    selection: Literal["private", "paper"] = "private"
    refine: bool = False
    alpha: Annotated[float, Field(gt=0)] = 1.0
    min_k: Annotated[int, Field(ge=1)] = 2
    instances: Annotated[int, Field(ge=1, le=50)] = 4
    c: Annotated[float, Field(ge=0, le=1)] = 0.5
    e_threshold: Annotated[float, Field(ge=0, le=1)] = 0.5
    merge: Literal["conditional", "paper"] = "conditional"
    score_noise: Annotated[float, Field(gt=0)] = 10.0
    stop_probability: Annotated[float, Field(gt=0, le=1)] | None = None

    @model_validator(mode="after")
    def _columns(self) -> ShareSpec:
        overlap = sorted(set(self.quasi_identifiers) & set(self.synthesized))
        if overlap:
            raise ValueError(f"quasi_identifiers and synthesized overlap: {overlap}")
        if self.label not in (*self.quasi_identifiers, *self.synthesized):
            raise ValueError(f"label {self.label!r} must be in quasi_identifiers or synthesized")
        absent = [c for c in (*self.quasi_identifiers, *self.synthesized) if c not in self.domain]
        if absent:
            raise ValueError(f"domain: no public domain for {absent}")
        if isinstance(self.pairs, list):
            if not self.pairs:
                raise ValueError("pairs: give at least one [epsilon, delta]")
            for eps, delta in self.pairs:
                if not (eps > 0 and 0 < delta < 1):
                    raise ValueError(
                        f"pairs: each needs epsilon > 0 and delta in (0, 1), got [{eps}, {delta}]"
                    )
        return self

    @property
    def fuzzy(self) -> FuzzyPairs | None:
        """The fuzzy reading, when the pairs are chosen by the paper's system."""
        return self.pairs.get("fuzzy") if isinstance(self.pairs, dict) else None

    def bound_pairs(self) -> list[tuple[float, float]]:
        """The pairs the ledger plans with: the plan's, or the largest fuzzy ones."""
        from veil.share import fuzzy_pair_bound

        fuzzy = self.fuzzy
        if fuzzy is None:
            assert isinstance(self.pairs, list)
            return [(float(e), float(d)) for e, d in self.pairs]
        return fuzzy_pair_bound(fuzzy.t_epsilon, fuzzy.tn, fuzzy.delta)


def _planned_cost(spec: ShareSpec) -> Any:
    from veil.share import search_cost_bound

    return search_cost_bound(
        spec.bound_pairs(),
        selection=spec.selection,
        instances=spec.instances,
        score_noise=spec.score_noise,
        stop_probability=spec.stop_probability,
        scope=SCOPE,
    )


def _guarantee(spec: ShareSpec) -> str:
    return (
        f"{', '.join(spec.synthesized)}: (epsilon, delta)-DP synthetic (central DP per "
        f"dataset, {spec.selection} selection); {', '.join(spec.quasi_identifiers)}: released "
        "exactly, NOT covered by DP; OptimShare's Theorem 3.2 is not claimed"
    )


def _public_bins(spec: ShareSpec) -> dict[Hashable, Any]:
    """PIF's bins of the numeric columns: the public bins of their domain."""
    from veil.share import public_bins
    from veil.synth import TableDomain

    return dict(public_bins(TableDomain.from_dict(spec.domain)))


def _pairs(spec: ShareSpec, data: pd.DataFrame, q: list[str], s: list[str]) -> Any:
    """The search's pairs and Q and S: refined and measured on the records when asked."""
    from veil.share import budget_pairs, derive_requirements

    fuzzy = spec.fuzzy
    # Always: the min_k guard checks the Q this release publishes (the refined one with
    # refine, else the plan's), whether or not the pairs are derived from the records.
    requirements = derive_requirements(
        data,
        q,
        s,
        alpha=spec.alpha,
        bins=_public_bins(spec),
        default_bins="exact",
        min_k=spec.min_k,
        refine=spec.refine,
    )
    pif_thresh = requirements.pif_thresh
    leaks: list[str] = []
    if spec.refine:
        q = [str(c) for c in requirements.refined_q]
        s = [str(c) for c in requirements.refined_s]
        moved = [str(c) for c in requirements.moved]
        leaks.append(f"the Q refinement was decided on the raw records (moved to S: {moved})")
    if fuzzy is None:
        return spec.pairs, leaks, q, s
    if pif_thresh is None:
        raise PlanError("share.pairs.fuzzy: no quasi-identifier is left to measure a need on")
    leaks.append(
        f"PIF_thresh = {pif_thresh:.4f} was measured on the raw records and sets the "
        "(epsilon, delta) pairs"
    )
    n = len(data)
    pairs = budget_pairs(
        pif_thresh, n, t_epsilon=fuzzy.t_epsilon, p_l=fuzzy.delta * 100 * n, tn=fuzzy.tn
    )
    return pairs, leaks, q, s


def _review(
    spec: ShareSpec,
    frame: pd.DataFrame,
    result: Any,
    q: list[str],
    s: list[str],
    generator: np.random.Generator,
) -> dict[str, Any]:
    """The custodian's review of the release (PIF, Table 2), or why it was not measured."""
    from veil.share import review_share
    from veil.synth import TableDomain

    try:
        return review_share(
            frame[[*q, *s]],
            result.data,
            q=q,
            s=s,
            label=spec.label,
            domain=TableDomain.from_dict(spec.domain),
            model=result.model,
            epsilon=float(result.chosen["epsilon"]),
            t_epsilon=float(result.settings["t_epsilon"]),
            rng=generator,
        )
    except VeilError as exc:
        return {"error": str(exc)}


def _run(spec: ShareSpec, frame: pd.DataFrame, generator: np.random.Generator) -> pd.DataFrame:
    from veil.share import optimshare_search

    reporter = current_reporter()
    q, s = list(spec.quasi_identifiers), list(spec.synthesized)
    pairs, leaks, q, s = _pairs(spec, frame, q, s)

    def progress(label: str, done: int, total: int) -> None:
        reporter.partitions("protect", f"share: {label}", done, total, len(frame))

    try:
        result = optimshare_search(
            frame[[*q, *s]],
            q=q,
            s=s,
            label=spec.label,
            domain=spec.domain,
            pairs=pairs,
            synthesizer=spec.synthesizer,
            synthesizer_settings=spec.synthesizer_settings or None,
            instances=spec.instances,
            c=spec.c,
            e_threshold=spec.e_threshold,
            merge=spec.merge,
            selection=spec.selection,
            stop_probability=spec.stop_probability,
            score_noise=spec.score_noise,
            rng=generator,
            progress=progress,
            cancel=reporter,
        )
    except Cancelled:
        raise
    except VeilError as exc:
        raise PlanError(f"share: {exc}") from None
    out = output_frame(frame)
    for column in s:
        out[column] = result.data[column].to_numpy()
    cost = {**dataclasses.asdict(result.cost), "scope": SCOPE}
    out.attrs[PRIVACY_ATTR] = [*frame.attrs.get(PRIVACY_ATTR, []), cost]
    facts = result.to_dict()
    facts["review"] = _review(spec, frame, result, q, s, generator)
    facts["leaks"] = [*leaks, *facts["leaks"]]
    facts["released"] = {"quasi_identifiers": q, "synthesized": s}
    out.attrs[STEP_FACTS] = {**frame.attrs.get(STEP_FACTS, {}), "share": facts}
    return out


class ShareKind:
    """The share step: a whole-table step with a planned bound on its DP cost."""

    def planned(self, spec: ShareSpec) -> LedgerStep:
        """The most the search can cost (dp-synthetic, per dataset)."""
        try:
            cost = _planned_cost(spec)
        except VeilError as exc:
            raise PlanError(f"share: {exc}") from None
        params = spec.model_dump(mode="json", exclude={"domain"})
        return LedgerStep(SCOPE, "share", params, cost, _guarantee(spec))

    def build(self, spec: ShareSpec) -> Step:
        """A whole-table step running the search on the gathered records."""
        columns = (*spec.quasi_identifiers, *spec.synthesized)
        return Step("share (OptimShare)", SCOPE, "table", lambda df, g: _run(spec, df, g), columns)
