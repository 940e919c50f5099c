"""Zero-concentrated DP accounting for the marginal synthesizers, and its conversion.

A synthesizer asked for (ε, δ)-DP turns it into a zCDP budget ρ, spends it, and records
the (ε, δ) of what it spent. Both directions use the conversion of Canonne, Kamath and
Steinke ("The discrete Gaussian for differential privacy", NeurIPS 2020, Proposition 12
and Corollary 13), the one the reference MST and AIM code, smartnoise and OpenDP use:
an algorithm that is (α, ε(α))-RDP for an order α > 1 is (ε, δ)-DP with

``ε = ε(α) + ln(1 - 1/α) - (ln δ + ln α) / (α - 1)``,

and ρ-zCDP is (α, ρα)-RDP for every α (Bun and Steinke, "Concentrated differential
privacy: simplifications, extensions, and lower bounds", TCC 2016, Definition 1.1).
Every order gives a valid bound; :func:`epsilon_from_rho` takes the best one, and
:func:`epsilon_from_rdp` the best of the orders it is given. At (ε, δ) = (1, 1e-6) it
allows ρ = 0.02436 where the older bound ``ε = ρ + 2 sqrt(ρ ln(1/δ))`` (Bun and Steinke
2016, Proposition 1.3) allows 0.01747: Gaussian noise with a σ 15 % smaller (a variance
28 % smaller) for the same guarantee.

Each measurement spends:

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

import numpy as np
from scipy import optimize

from veil.errors import ParameterError
from veil.mechanisms import PrivacyCost
from veil.mechanisms._validation import check_delta, check_epsilon

__all__ = [
    "CONVERSION",
    "ZCDPAccountant",
    "ZCDPEntry",
    "epsilon_from_rdp",
    "epsilon_from_rho",
    "rho_from_epsilon",
]

CONVERSION = "Canonne, Kamath and Steinke 2020, Prop. 12 / Cor. 13"
"""The (ε, δ) conversion of every ρ and RDP curve in veil, as cited in records."""

# Relative slack allowed when a spend meets the budget exactly (float rounding).
_SLACK = 1e-12
# The budget is kept this far (relative) below the conversion of the target, so that
# rounding in the sum of spends never puts the recorded ε above the one asked for.
_MARGIN = 1e-10


def _check_rho(rho: float) -> float:
    if isinstance(rho, bool) or not (isinstance(rho, (int, float)) and math.isfinite(rho)):
        raise ParameterError(f"rho: must be finite and >= 0, got {rho!r}")
    if rho < 0:
        raise ParameterError(f"rho: must be finite and >= 0, got {rho!r}")
    return float(rho)


def epsilon_from_rdp(orders: Any, rdp: Any, delta: float) -> float:
    """The best (ε, δ) bound of an RDP curve read at the given orders.

    Parameters
    ----------
    orders : array-like of float
        Rényi orders α > 1.
    rdp : array-like of float
        The RDP ε(α) at each order (same shape).
    delta : float
        Failure probability, in (0, 1).

    Returns
    -------
    float
        ``min over α of ε(α) + ln(1 - 1/α) - (ln δ + ln α) / (α - 1)``, at least 0
        (Canonne, Kamath and Steinke 2020, Proposition 12). Every order gives a valid
        bound, so a coarse grid only loosens it.
    """
    lam = np.asarray(orders, dtype=np.float64)
    curve = np.asarray(rdp, dtype=np.float64)
    if lam.shape != curve.shape or lam.size == 0 or not np.all(lam > 1.0):
        raise ParameterError(
            f"orders: need one or more orders > 1 matching rdp's shape, got {lam.shape} "
            f"orders for {curve.shape} values"
        )
    log_delta = math.log(check_delta(delta))
    eps = curve + np.log1p(-1.0 / lam) - (log_delta + np.log(lam)) / (lam - 1.0)
    return float(max(float(np.min(eps)), 0.0))


def _best_order(rho: float, log_delta: float) -> float:
    """The order minimising the conversion of the line ``ρα``.

    The bound's derivative in α is ``ρ + ln(αδ) / (α - 1)²``: it has the sign of
    ``g(α) = ρ (α - 1)² + ln α + ln δ``, which increases on α > 1 from ``ln δ < 0``, and
    is positive at ``α = 1 + sqrt(ln(1/δ) / ρ)``. Its one root is the minimum.
    """
    high = 1.0 + math.sqrt(-log_delta / rho)

    def g(alpha: float) -> float:
        return rho * (alpha - 1.0) ** 2 + math.log(alpha) + log_delta

    low = 1.0 + 1e-15 * high
    if g(low) >= 0:  # ρ so large that the optimum is at the smallest order we can read
        return low
    return float(optimize.brentq(g, low, high, xtol=1e-14, rtol=4 * np.finfo(float).eps))


def epsilon_from_rho(rho: float, delta: float) -> float:
    """The ε of ρ-zCDP at failure probability δ (the tight conversion).

    Parameters
    ----------
    rho : float
        zCDP parameter (>= 0).
    delta : float
        Failure probability, in (0, 1).

    Returns
    -------
    float
        ``min over α > 1 of ρα + ln(1 - 1/α) - (ln δ + ln α) / (α - 1)`` (Canonne,
        Kamath and Steinke 2020, Corollary 13), never above Bun and Steinke's
        ``ρ + 2 sqrt(ρ ln(1/δ))``. The order is found by a root search; an order a
        little off only loosens the bound, so the value returned is always valid.

    Examples
    --------
    >>> from veil.synth import epsilon_from_rho
    >>> round(epsilon_from_rho(0.0243559, 1e-6), 4)
    1.0
    """
    rho = _check_rho(rho)
    log_delta = math.log(check_delta(delta))
    if rho == 0:
        return 0.0
    loose = rho + 2.0 * math.sqrt(-rho * log_delta)
    alpha = _best_order(rho, log_delta)
    tight = epsilon_from_rdp([alpha], [rho * alpha], delta)
    return min(tight, loose)


def rho_from_epsilon(epsilon: float, delta: float) -> float:
    """Largest ρ whose zCDP guarantee converts to (ε, δ)-DP (the tight conversion).

    The inverse of :func:`epsilon_from_rho`, which increases with ρ: a bisection from
    Bun and Steinke's ρ ``(sqrt(ln(1/δ) + ε) - sqrt(ln(1/δ)))²`` (always allowed, as
    that conversion is looser). The ρ returned satisfies ``epsilon_from_rho(ρ, δ) <= ε``.

    Examples
    --------
    >>> from veil.synth import rho_from_epsilon
    >>> round(rho_from_epsilon(1.0, 1e-6), 4)  # Bun-Steinke: 0.0175
    0.0244
    """
    eps = check_epsilon(epsilon)
    log_term = -math.log(check_delta(delta))
    root = eps / (math.sqrt(log_term + eps) + math.sqrt(log_term))  # stable difference
    low = root * root
    high = 2.0 * low
    while epsilon_from_rho(high, delta) <= eps:
        low, high = high, 2.0 * high
    for _ in range(200):
        middle = 0.5 * (low + high)
        if not low < middle < high:
            break
        if epsilon_from_rho(middle, delta) <= eps:
            low = middle
        else:
            high = middle
    return low


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
            "notion": f"zCDP (add/remove one record), converted by {CONVERSION}",
            "target_epsilon": self.epsilon,
            "delta": self.delta,
            "rho_budget": self.budget,
            "rho_spent": self.spent,
            "epsilon_spent": epsilon_from_rho(self.spent, self.delta),
            "entries": [asdict(e) for e in self.entries],
        }
