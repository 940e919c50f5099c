"""Zero-concentrated DP accounting for the marginal synthesizers, and its conversion.

A synthesizer asked for (ε, δ)-DP turns it into a zCDP budget ρ with the standard
conversion of Bun and Steinke ("Concentrated differential privacy: simplifications,
extensions, and lower bounds", TCC 2016, Proposition 1.3): ρ-zCDP implies
``(ρ + 2 sqrt(ρ ln(1/δ)), δ)``-DP, so the largest ρ for (ε, δ) is
``(sqrt(ln(1/δ) + ε) - sqrt(ln(1/δ)))²``. Each measurement then spends:

* Gaussian noise of standard deviation σ on a query of L2 sensitivity Δ:
  ``Δ² / (2σ²)`` (Bun and Steinke 2016, Proposition 1.6; for the discrete Gaussian,
  Canonne, Kamath and Steinke, NeurIPS 2020, Theorem 4);
* one ε₀-DP exponential-mechanism selection: ``ε₀² / 8`` (Cesar and Rogers,
  "Bounding, concentrating, and truncating: unifying privacy loss composition for data
  analytics", ALT 2021, Lemma 3.2: the exponential mechanism is ε₀-bounded range).

zCDP composes by adding ρ; the recorded (ε, δ) is the conversion of the ρ actually
spent. Neighbouring tables differ by adding or removing one record.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import Any, Literal

from veil.errors import ParameterError
from veil.mechanisms import PrivacyCost
from veil.mechanisms._validation import check_delta, check_epsilon

__all__ = ["ZCDPAccountant", "ZCDPEntry", "epsilon_from_rho", "rho_from_epsilon"]

# Relative slack allowed when a spend meets the budget exactly (float rounding).
_SLACK = 1e-12
# The budget is kept this far (relative) below the conversion of the target, so that
# rounding in the sum of spends never puts the recorded ε above the one asked for.
_MARGIN = 1e-10


def rho_from_epsilon(epsilon: float, delta: float) -> float:
    """Largest ρ whose zCDP guarantee converts to (ε, δ)-DP (Bun and Steinke 2016)."""
    eps = check_epsilon(epsilon)
    log_term = math.log(1.0 / check_delta(delta))
    root = eps / (math.sqrt(log_term + eps) + math.sqrt(log_term))  # stable difference
    return root * root


def epsilon_from_rho(rho: float, delta: float) -> float:
    """The ε of ρ-zCDP at failure probability δ: ``ρ + 2 sqrt(ρ ln(1/δ))``."""
    if not (math.isfinite(rho) and rho >= 0):
        raise ParameterError(f"rho: must be finite and >= 0, got {rho!r}")
    return rho + 2.0 * math.sqrt(rho * math.log(1.0 / check_delta(delta)))


@dataclass(frozen=True)
class ZCDPEntry:
    """One randomized step and its zCDP cost.

    Attributes
    ----------
    kind : {"gaussian", "exponential"}
    what : str
        What was measured or selected (for example a clique).
    parameter : float
        σ of the Gaussian noise, or ε₀ of the exponential mechanism.
    sensitivity : float
        L2 sensitivity of the measured query, or the score sensitivity.
    rho : float
        zCDP cost.
    """

    kind: Literal["gaussian", "exponential"]
    what: str
    parameter: float
    sensitivity: float
    rho: float


class ZCDPAccountant:
    """Running zCDP account against a budget set from (ε, δ).

    Parameters
    ----------
    epsilon : float
        Target ε of the whole fit (central DP, per dataset), > 0.
    delta : float
        Target δ, in (0, 1).

    Notes
    -----
    The budget :attr:`budget` is ``rho_from_epsilon(ε, δ)`` less a relative 1e-10, so
    that float rounding in the sum of the spends never records an ε above the target.
    """

    def __init__(self, epsilon: float, delta: float) -> None:
        self.epsilon = check_epsilon(epsilon)
        self.delta = check_delta(delta)
        self.budget = rho_from_epsilon(self.epsilon, self.delta) * (1.0 - _MARGIN)
        self.entries: list[ZCDPEntry] = []
        self._spent = 0.0

    @property
    def spent(self) -> float:
        """ρ spent so far (the sum of the entries, in the order they were made)."""
        return self._spent

    @property
    def remaining(self) -> float:
        """ρ left (never below 0)."""
        return max(self.budget - self.spent, 0.0)

    def _spend(self, entry: ZCDPEntry) -> None:
        if self.spent + entry.rho > self.budget * (1.0 + _SLACK):
            raise ParameterError(
                f"budget: spending rho={entry.rho:.6g} on {entry.what} would exceed the zCDP "
                f"budget rho={self.budget:.6g} (epsilon={self.epsilon}, delta={self.delta}); "
                f"{self.remaining:.6g} is left"
            )
        self.entries.append(entry)
        self._spent += entry.rho

    def gaussian(self, sigma: float, what: str, sensitivity: float = 1.0) -> float:
        """Record Gaussian noise of scale σ on a query of L2 sensitivity Δ; returns ρ."""
        if not (math.isfinite(sigma) and sigma > 0):
            raise ParameterError(f"sigma: must be finite and > 0, got {sigma!r}")
        rho = sensitivity * sensitivity / (2.0 * sigma * sigma)
        self._spend(ZCDPEntry("gaussian", what, float(sigma), float(sensitivity), rho))
        return rho

    def exponential(self, epsilon: float, what: str, sensitivity: float = 1.0) -> float:
        """Record one ε₀-DP exponential-mechanism selection; returns ρ = ε₀²/8."""
        eps = check_epsilon(epsilon, "epsilon")
        rho = eps * eps / 8.0
        self._spend(ZCDPEntry("exponential", what, eps, float(sensitivity), rho))
        return rho

    def cost(self, scope: str, mechanism: str) -> PrivacyCost:
        """The (ε, δ) actually spent: the conversion of the ρ of every entry."""
        return PrivacyCost(
            epsilon_from_rho(self.spent, self.delta),
            self.delta,
            "dp-synthetic",
            "dataset",
            scope,
            mechanism,
        )

    def to_dict(self) -> dict[str, Any]:
        """Budget, spend and every entry, for a manifest."""
        return {
            "notion": "zCDP (add/remove one record), converted by Bun-Steinke 2016 Prop. 1.3",
            "target_epsilon": self.epsilon,
            "delta": self.delta,
            "rho_budget": self.budget,
            "rho_spent": self.spent,
            "epsilon_spent": epsilon_from_rho(self.spent, self.delta),
            "entries": [asdict(e) for e in self.entries],
        }
