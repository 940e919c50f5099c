"""What an OptimShare search may cost, from its public settings alone, before any fit.

A release plan's ledger is built before any record is read, so the search's cost must be
bounded from the plan: its (ε, δ) pairs, the selection rule and the search settings.
:func:`search_cost_bound` gives that bound. The cost a search records
(:attr:`veil.share.ShareResult.cost`) never exceeds it: every fit spends at most its
pair's budget, and both rules below are monotone in what the fits spend.

* ``selection="paper"`` (the argmax over every candidate): the composition of every
  fit, the smaller of basic composition (ε and δ add) and zCDP composition (ρ adds,
  converted at the summed δ), as :func:`veil.share.compose_fits` composes them. It
  covers the fitted models; the argmax's choice among them reads the raw records and
  no bound covers it (a listed leak).
* ``selection="private"``: Papernot and Steinke's random stopping over runs of one fit
  and its noisy scores (:func:`veil.share.random_stopping_epsilon`), as the search
  states it.

Pairs chosen by the fuzzy system from the data are bounded by their largest possible
values (ε up to ``T_ε`` in ``TN`` steps), and the choice itself is a listed leak.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Literal

from veil.errors import ParameterError
from veil.mechanisms import PrivacyCost
from veil.share.selection import random_stopping_epsilon
from veil.synth import epsilon_from_rho, rho_from_epsilon

__all__ = ["fuzzy_pair_bound", "search_cost_bound"]


def fuzzy_pair_bound(t_epsilon: float, tn: int, delta: float) -> list[tuple[float, float]]:
    """The largest pairs the fuzzy system can return: ``(T_ε i / TN, δ)``, i = 1..TN.

    Its pairs are ``(ε* i / TN, δ)`` with ``ε* <= T_ε`` (the system's ε axis ends at
    ``T_ε``), so these bound them pair by pair.
    """
    if not (math.isfinite(t_epsilon) and t_epsilon > 0):
        raise ParameterError(f"t_epsilon: must be finite and > 0, got {t_epsilon!r}")
    if isinstance(tn, bool) or not isinstance(tn, int) or tn < 1:
        raise ParameterError(f"tn: must be an integer >= 1, got {tn!r}")
    return [(t_epsilon * i / tn, delta) for i in range(1, tn + 1)]


def search_cost_bound(
    pairs: Sequence[tuple[float, float]],
    *,
    selection: Literal["paper", "private"],
    instances: int = 4,
    score_noise: float = 10.0,
    stop_probability: float | None = None,
    scope: str = "",
) -> PrivacyCost:
    """The most a search over ``pairs`` can cost under ``selection`` (notion dp-synthetic).

    Parameters
    ----------
    pairs : sequence of (epsilon, delta)
        The search's pairs (ε per dataset, δ in (0, 1)).
    selection : {"paper", "private"}
        The paper's argmax (every fit composed; its choice is not covered) or random
        stopping.
    instances, score_noise, stop_probability
        The search's ``t``, the noise σ on each score count and γ (default
        ``1 / len(pairs)``), for the private selection.
    scope : str
        What the cost covers (the synthesized columns).

    Returns
    -------
    PrivacyCost
        Central DP per dataset (unit ``dataset``).
    """
    if not pairs:
        raise ParameterError("pairs: need at least one (epsilon, delta) pair")
    for eps, delta in pairs:
        if not (math.isfinite(eps) and eps > 0 and 0.0 < delta < 1.0):
            raise ParameterError(
                f"pairs: each needs epsilon > 0 and delta in (0, 1), got ({eps!r}, {delta!r})"
            )
    if selection == "paper":
        eps_sum = math.fsum(e for e, _ in pairs)
        delta_sum = min(math.fsum(d for _, d in pairs), math.nextafter(1.0, 0.0))
        rho = math.fsum(rho_from_epsilon(e, d) for e, d in pairs)
        eps = min(eps_sum, epsilon_from_rho(rho, delta_sum))
        how = f"the composition of {len(pairs)} fits (the paper's argmax over every candidate)"
        return PrivacyCost(eps, delta_sum, "dp-synthetic", "dataset", scope, how)
    if selection != "private":
        raise ParameterError(f"selection: must be 'paper' or 'private', got {selection!r}")
    gamma = 1.0 / len(pairs) if stop_probability is None else stop_probability
    delta = max(d for _, d in pairs)
    rho_fit = max(rho_from_epsilon(e, d) for e, d in pairs)
    rho_run = 4.0 * rho_fit + instances / (score_noise * score_noise)
    eps = random_stopping_epsilon(rho_run, gamma, delta)
    how = f"Papernot-Steinke random stopping (mean {1 / gamma:g} runs) over fits and scores"
    return PrivacyCost(eps, delta, "dp-synthetic", "dataset", scope, how)
