"""Choosing OptimShare's released candidate, and what the choice costs in privacy.

**Effectiveness.** The paper scores a candidate by its effectiveness loss
``E_l = C U_l + (1 - C) P_N`` and keeps those with ``e = 1 - E_l >= E^T``
(Section 3.3); :func:`effectiveness` computes both.

**The paper's selection is not private, and no stated bound covers it.** Its argmax
over every (pair, instance) reads the original records (U_l and P_N are measured on
them), so which candidate is released is a function of the raw records beyond the DP
models. :func:`compose_fits` states what publishing *every fitted model* would cost,
two ways, keeping the smaller (both valid):

* basic composition (Dwork and Roth 2014, Theorem 3.16): the ε and δ of the fits add;
* zCDP composition, when every fit reports the ρ it spent (MST, AIM and the baseline
  do): the ρ add (Bun and Steinke 2016, Lemma 2.3) and the sum converts at the summed
  δ (Canonne, Kamath and Steinke 2020, :func:`veil.synth.epsilon_from_rho`). A DP
  estimate of the shared domain is counted once.

That figure covers the models, not the argmax: the choice among them is
post-processing of the raw records, which no DP statement covers; the search lists it
as a leak.

**A private selection.** Papernot and Steinke ("Hyperparameter tuning with Renyi
differential privacy", ICLR 2022, Theorem 2) bound *random stopping*: run a private
base algorithm ``K`` times, ``K`` geometric with mean ``1/γ`` (their truncated negative
binomial with η = 1), and release the best output. If each run is ρ-zCDP, hence
``(λ, ρλ)``-RDP for every λ, the released best is ``(λ, ε'(λ))``-RDP with

``ε'(λ) = ρλ + min_{λ̂ >= 1} [2 (1 - 1/λ̂) ρ λ̂ + 2 ln(1/γ) / λ̂] + ln(1/γ) / (λ - 1)``.

The inner minimum is ``4 sqrt(ρ ln(1/γ)) - 2ρ`` at ``λ̂ = sqrt(ln(1/γ) / ρ)`` when that is
at least 1, else ``2 ln(1/γ)``; :func:`random_stopping_epsilon` converts the curve to
(ε, δ) with :func:`veil.synth.epsilon_from_rdp` (Canonne, Kamath and Steinke 2020,
Proposition 12) at the best of a fixed grid of orders. dp-accounting's
``RepeatAndSelectDpEvent`` (shape 1) on a Gaussian base gives the same figures to within
0.3 % (its grid of orders is coarser).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from veil.errors import ParameterError, VeilError
from veil.mechanisms import PrivacyCost
from veil.synth import CONVERSION, epsilon_from_rdp, epsilon_from_rho

__all__ = [
    "NoCandidateError",
    "compose_fits",
    "effectiveness",
    "geometric_runs",
    "random_stopping_epsilon",
]


class NoCandidateError(VeilError):
    """No candidate reached the effectiveness threshold E^T: nothing is released.

    ``table`` carries the search table (every candidate's scores) for the custodian.
    """

    def __init__(self, message: str, table: Any = None) -> None:
        super().__init__(message)
        self.table = table


def effectiveness(u_l: float, p_n: float, c: float) -> tuple[float, float]:
    """The paper's effectiveness loss ``E_l = C U_l + (1 - C) P_N`` and ``e = 1 - E_l``.

    Parameters
    ----------
    u_l : float
        Normalized utility loss in [0, 1].
    p_n : float
        Normalized residual linkage leak in [0, 1].
    c : float
        Effectiveness coefficient C in [0, 1] (the weight of the utility loss).

    Examples
    --------
    >>> from veil.share import effectiveness
    >>> effectiveness(0.5, 0.25, 0.5)
    (0.375, 0.625)
    """
    loss = c * u_l + (1.0 - c) * p_n
    return float(loss), float(1.0 - loss)


def _rho_of(details: Any) -> float | None:
    accounting = details.get("accounting") if isinstance(details, dict) else None
    if not isinstance(accounting, dict):
        return None
    rho = accounting.get("rho_spent")
    return float(rho) if isinstance(rho, (int, float)) and math.isfinite(rho) else None


def compose_fits(
    costs: Sequence[PrivacyCost],
    descriptions: Sequence[dict[str, Any]],
    domain_costs: Sequence[PrivacyCost] = (),
) -> tuple[PrivacyCost, dict[str, Any]]:
    """What publishing every fitted model costs: the composition of the fits.

    It does not cover a choice among the models made on the raw records (the paper's
    argmax): that choice is a leak no bound covers.

    Parameters
    ----------
    costs : sequence of PrivacyCost
        Each fit's recorded cost (which includes the shared domain's DP estimate, if
        any).
    descriptions : sequence of dict
        Each model's :meth:`~veil.synth.SynthModel.describe`; a zCDP ``accounting``
        with ``rho_spent`` allows the tighter composition.
    domain_costs : sequence of PrivacyCost
        What estimating the shared domain spent (counted once by the zCDP route).

    Returns
    -------
    cost : PrivacyCost
        The smaller of the two valid bounds (notion ``dp-synthetic``, per dataset).
    details : dict
        Both bounds and which one was kept.
    """
    if not costs:
        raise ParameterError("costs: need at least one fit to compose")
    basic = costs[0]
    for cost in costs[1:]:
        basic = basic + cost
    scope = costs[0].scope
    details: dict[str, Any] = {
        "fits": len(costs),
        "basic": {"epsilon": basic.epsilon, "delta": basic.delta},
        "rule": "basic composition: epsilons and deltas add (Dwork and Roth 2014, Thm 3.16)",
    }
    rhos = [_rho_of(d) for d in descriptions]
    chosen = PrivacyCost(
        basic.epsilon,
        basic.delta,
        "dp-synthetic",
        "dataset",
        scope,
        f"composition of {len(costs)} fits (basic)",
    )
    if rhos and all(r is not None for r in rhos):
        # The domain's DP estimate (ε_D, δ_D) is counted once; the fits' summed ρ is
        # converted at what is left of the basic composition's δ, so that both bounds
        # state the same total δ.
        domain_eps = math.fsum(c.epsilon for c in domain_costs)
        domain_delta = math.fsum(c.delta for c in domain_costs)
        rho = math.fsum(r for r in rhos if r is not None)
        eps = epsilon_from_rho(rho, basic.delta - domain_delta) + domain_eps
        details["zcdp"] = {"rho": rho, "epsilon": eps, "delta": basic.delta}
        if eps < basic.epsilon:
            chosen = PrivacyCost(
                eps,
                basic.delta,
                "dp-synthetic",
                "dataset",
                scope,
                f"composition of {len(costs)} fits (zCDP: rho adds, {CONVERSION})",
            )
            details["rule"] = (
                "zCDP composition: the fits' rho add (Bun and Steinke 2016, Lemma 2.3), "
                f"converted at the summed delta ({CONVERSION}); a DP estimate of the "
                "domain counted once"
            )
    details["epsilon"] = chosen.epsilon
    details["delta"] = chosen.delta
    return chosen, details


_ORDERS = 1.0 + np.logspace(-4.0, 5.0, 9001)  # Rényi orders λ at which the bound is read


def random_stopping_epsilon(rho: float, gamma: float, delta: float) -> float:
    """ε of Papernot-Steinke random stopping over ρ-zCDP runs, at failure probability δ.

    ``K`` runs, geometric on ``{1, 2, ...}`` with ``P[K = k] = γ (1 - γ)^(k-1)``; the best
    run is released. The RDP curve of the module notes is converted to (ε, δ) by
    :func:`veil.synth.epsilon_from_rdp` (Canonne, Kamath and Steinke, "The discrete
    Gaussian for differential privacy", NeurIPS 2020, Proposition 12) at the best of a
    fixed grid of orders λ (every order gives a valid bound).

    Parameters
    ----------
    rho : float
        zCDP parameter of one run (>= 0).
    gamma : float
        Stopping probability after each run, in (0, 1]; ``E[K] = 1 / γ``.
    delta : float
        Failure probability of the (ε, δ) statement, in (0, 1).

    Examples
    --------
    >>> from veil.share import random_stopping_epsilon
    >>> from veil.synth import epsilon_from_rho
    >>> one = random_stopping_epsilon(0.1, 1.0, 1e-6)  # one run: a single fit
    >>> one <= epsilon_from_rho(0.1, 1e-6) < random_stopping_epsilon(0.1, 1 / 12, 1e-6)
    True
    """
    if not (math.isfinite(rho) and rho >= 0):
        raise ParameterError(f"rho: must be finite and >= 0, got {rho!r}")
    if not (0.0 < gamma <= 1.0):
        raise ParameterError(f"stop_probability: must be in (0, 1], got {gamma!r}")
    if not (0.0 < delta < 1.0):
        raise ParameterError(f"delta: must be in (0, 1), got {delta!r}")
    if rho == 0:
        return 0.0
    if gamma == 1.0:  # K = 1: the one run is released, the curve is ρλ itself
        return epsilon_from_rho(rho, delta)
    log_gamma = math.log(1.0 / gamma)
    # min over λ̂ >= 1 of 2 (1 - 1/λ̂) ρ λ̂ + 2 ln(1/γ) / λ̂, in closed form
    inner = 4.0 * math.sqrt(rho * log_gamma) - 2.0 * rho if log_gamma >= rho else 2.0 * log_gamma
    rdp = rho * _ORDERS + inner + log_gamma / (_ORDERS - 1.0)
    return epsilon_from_rdp(_ORDERS, rdp, delta)


def geometric_runs(gamma: float, rng: np.random.Generator) -> int:
    """The number of runs K of random stopping: geometric on {1, 2, ...}, mean 1/γ."""
    if not (0.0 < gamma <= 1.0):
        raise ParameterError(f"stop_probability: must be in (0, 1], got {gamma!r}")
    return int(rng.geometric(gamma))
