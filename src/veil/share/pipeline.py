"""OptimShare end to end: requirements from PIF, the fuzzy (ε, δ) pairs, then the search.

:func:`optimshare` runs the paper's Algorithm 1 on veil's pieces, in order:

1. :func:`veil.share.derive_requirements`: identifiers left out, Q refined by PIF when
   ``refine=True`` (attributes whose distribution S changes too much move to S; off by
   default, as in a plan and ``veil share``), ``PIF_thresh``, and the absolute guard on
   the released Q (refuses by default);
2. :func:`veil.share.budget_pairs`: ``TN`` (ε, δ) pairs for ``PIF_thresh``;
3. :func:`veil.share.optimshare_search` on the refined Q and S.

The PIF assessment bins numeric columns by their public domain's bins
(:func:`veil.share.public_bins`), as a plan does, unless ``pif_bins`` says otherwise. The
data-dependent steps of 1 and 2 (the refinement, ``PIF_thresh`` and so the pairs, any
quantile bins of the PIF assessment) are not covered by any privacy cost; they are added
to the result's leaks, and the requirements' and pairs' readings to its readings.

When the refinement moves every Q attribute, nothing can stay exact and the pipeline
refuses, naming each attribute's QPIF and QSPIF and the way out
(:func:`veil.share.refinement_notes`): with ``QPIF = 0`` the rule degenerates (it moves
the attribute whatever QSPIF and alpha are), otherwise a larger alpha would keep it;
``refine=False`` keeps Q as given.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence
from dataclasses import replace
from typing import Any, Literal

import pandas as pd

from veil.errors import ParameterError
from veil.risk.pif import BinSpec
from veil.share.fuzzy import budget_pairs
from veil.share.requirements import ShareRequirements, derive_requirements, refinement_notes
from veil.share.result import ShareResult
from veil.share.review import public_bins
from veil.share.search import optimshare_search
from veil.synth import TableDomain

__all__ = ["optimshare"]


def _pipeline_leaks(requirements: ShareRequirements, pif_thresh: float) -> list[str]:
    leaks = [
        f"PIF_thresh = {pif_thresh:.4f} was computed from the raw records and sets the "
        "(epsilon, delta) pairs",
    ]
    if requirements.refine:
        leaks.append(
            "the Q refinement (which attributes stay exact) was decided on the raw records"
            + (
                f"; moved to S: {[str(c) for c in requirements.moved]}"
                if requirements.moved
                else ""
            )
        )
    for assessment in (requirements.q_assessment, requirements.qs_assessment):
        leaks.extend(n for n in assessment.data_dependent if n.startswith("quantile"))
    if requirements.left_out:
        leaks.append(
            "identifiers found by uniqueness and left out: "
            f"{[str(c) for c in requirements.left_out]}"
        )
    return list(dict.fromkeys(leaks))


def optimshare(
    data: pd.DataFrame,
    *,
    q: Sequence[str],
    s: Sequence[str],
    label: str,
    domain: TableDomain | Mapping[str, Any],
    refine: bool = False,
    alpha: float = 1.0,
    pif_bins: Mapping[Hashable, BinSpec] | None = None,
    pif_default_bins: BinSpec | None = "exact",
    min_k: int = 2,
    on_violation: Literal["refuse", "warn"] = "refuse",
    t_epsilon: float = 8.0,
    p_l: float = 0.01,
    tn: int = 12,
    **search: Any,
) -> tuple[ShareResult, ShareRequirements]:
    """Refine Q, choose the (ε, δ) pairs from PIF and search; see the module notes.

    Guarantee: as :func:`veil.share.optimshare_search` (S from DP models at the stated
    composed cost; Q exact and not covered; the listed leaks, which now include the
    refinement and ``PIF_thresh``, not covered; Theorem 3.2 not claimed).

    Parameters
    ----------
    data : pandas.DataFrame
        The records (not modified).
    q, s : sequence of str
        The global Q the custodian would release exactly, and the rest to synthesize.
    label : str
        The class column of the application (GaussianNB).
    domain : TableDomain or plan-like mapping
        Public domain of every column of ``q`` and ``s``.
    refine : bool, default False
        Apply the paper's PIF refinement of Q (False, as in a plan: Q kept as given,
        PIF_thresh the largest QSPIF over it).
    alpha, pif_bins, pif_default_bins, min_k, on_violation
        Passed to :func:`veil.share.derive_requirements` (``bins``, ``default_bins``).
        ``pif_bins`` defaults to the public bins of the domain's numeric columns; other
        columns take ``pif_default_bins``, by default ``"exact"`` (every distinct value a
        category, as the paper).
    t_epsilon, p_l, tn
        Passed to :func:`veil.share.budget_pairs` (paper defaults 8, 0.01 %, 12).
    **search
        Options of :func:`veil.share.optimshare_search` (``synthesizer``,
        ``instances``, ``selection``, ``rng``, ``progress``, ``cancel``...).

    Returns
    -------
    result : ShareResult
        The search's result, with the pipeline's leaks and readings added.
    requirements : ShareRequirements
        Every step of the refinement (for the custodian).

    Raises
    ------
    veil.errors.ParameterError
        The refinement leaves no Q attribute (the message gives each attribute's QPIF
        and QSPIF and the way out), or as the three steps raise.
    veil.errors.DisclosureRiskError
        The released Q fails the guard and ``on_violation="refuse"``.
    """
    for key in ("q", "s", "pairs", "t_epsilon"):
        if key in search:
            raise ParameterError(f"{key}: is set by the pipeline, not a search option")
    table_domain = domain if isinstance(domain, TableDomain) else TableDomain.from_dict(domain)
    table_domain.encode(data, [*q, *s])  # every value within its public domain, or an error
    if pif_bins is None:
        released = {str(c) for c in (*q, *s)}
        pif_bins = {c: b for c, b in public_bins(table_domain).items() if c in released}
    requirements = derive_requirements(
        data,
        q,
        s,
        alpha=alpha,
        refine=refine,
        bins=pif_bins,
        default_bins=pif_default_bins,
        min_k=min_k,
        on_violation=on_violation,
    )
    if requirements.pif_thresh is None or not requirements.refined_q:
        notes = "; ".join(refinement_notes(requirements.table, requirements.alpha))
        raise ParameterError(
            f"q: the PIF refinement (alpha = {requirements.alpha:g}) moved every Q attribute "
            f"({list(q)!r}) to S, so nothing would stay exact: {notes}. Keep Q as given "
            "with refine=False (veil share --no-refine, a plan's refine: false), raise "
            "alpha where QPIF > 0, choose another Q, or release fully synthetic data with "
            "veil.synth"
        )
    pif_thresh = requirements.pif_thresh
    pairs = budget_pairs(
        min(pif_thresh, 1.0 - 1e-12), len(data), t_epsilon=t_epsilon, p_l=p_l, tn=tn
    )
    result = optimshare_search(
        data,
        q=[str(c) for c in requirements.refined_q],
        s=[str(c) for c in requirements.refined_s],
        label=label,
        domain=domain,
        pairs=pairs,
        **search,
    )
    readings = {
        **result.readings,
        "requirements": "; ".join(requirements.steps),
        **{f"pairs: {k}": v for k, v in pairs.readings.items()},
    }
    leaks = tuple(dict.fromkeys([*result.leaks, *_pipeline_leaks(requirements, pif_thresh)]))
    details = {**result.details, "pairs": pairs.to_dict(), "requirements": requirements.to_dict()}
    return replace(result, readings=readings, leaks=leaks, details=details), requirements
