"""Confidence intervals for attack success rates and for the advantage over a baseline.

An attack is a series of Bernoulli trials (one per target or per predicate); its success
rate gets the 95 % Wilson score interval (Wilson 1927), which stays inside [0, 1] and
behaves at rates near 0 and 1, where privacy attacks often sit. The advantage over a
baseline is the share of the room above the baseline that the attack takes,
``(rate - baseline) / (1 - baseline)`` (Giomi et al., "A Unified Framework for Quantifying
Privacy Risk in Synthetic Data", PETS 2023, Section 4), and its interval propagates both
rates' errors to first order (the delta method).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from veil.errors import ParameterError

__all__ = ["Z95", "Rate", "advantage", "rate"]

# The two-sided 95 % quantile of the standard normal distribution.
Z95 = 1.959963984540054


@dataclass(frozen=True)
class Rate:
    """A success rate with its 95 % confidence interval.

    Attributes
    ----------
    value : float
        Successes divided by trials.
    low, high : float
        The interval's ends.
    n : int
        The number of trials; 0 for a rate known without sampling error (a chance rate).
    """

    value: float
    low: float
    high: float
    n: int

    @property
    def sigma(self) -> float:
        """The standard error implied by the interval (its half-width over z)."""
        return (self.high - self.low) / (2.0 * Z95)

    @classmethod
    def exact(cls, value: float) -> Rate:
        """A rate known without sampling error (the chance of a random guess)."""
        return cls(value, value, value, 0)


def rate(successes: float, trials: int) -> Rate:
    """The success rate of ``trials`` Bernoulli trials with its Wilson score interval.

    ``successes`` may be fractional: an attack that picks uniformly among ``m`` tied
    candidates counts ``1/m`` of a success (its expected value), which keeps the estimate
    unbiased without drawing the pick.

    Examples
    --------
    >>> r = rate(45, 50)
    >>> round(r.value, 2), round(r.low, 3), round(r.high, 3)
    (0.9, 0.786, 0.957)
    """
    if trials < 0 or not 0.0 <= successes <= trials:
        raise ParameterError(f"successes: must lie in [0, trials={trials}], got {successes!r}")
    if trials == 0:
        return Rate(0.0, 0.0, 1.0, 0)
    z2 = Z95 * Z95
    p = successes / trials
    denominator = 1.0 + z2 / trials
    centre = (p + z2 / (2.0 * trials)) / denominator
    half = Z95 * math.sqrt(p * (1.0 - p) / trials + z2 / (4.0 * trials * trials)) / denominator
    return Rate(p, max(0.0, centre - half), min(1.0, centre + half), trials)


def advantage(attack: Rate, baseline: Rate) -> tuple[float, float, float]:
    """The attack's advantage over the baseline and its 95 % confidence interval.

    ``(a - b) / (1 - b)``: 0 when the attack does no better than the baseline, 1 when it
    succeeds on every target the baseline misses, negative when it does worse. The interval
    is ``± z`` times the first-order propagated standard error of both rates, clipped to
    [-1, 1]; it is not clipped at 0, so an interval reaching below 0 says that the data
    cannot tell the attack from its baseline.

    Returns
    -------
    (value, low, high)

    Examples
    --------
    >>> value, low, high = advantage(rate(90, 100), Rate.exact(0.5))
    >>> round(value, 2), round(low, 2), round(high, 2)
    (0.8, 0.68, 0.92)
    """
    if baseline.value >= 1.0:
        return 0.0, -1.0, 1.0
    room = 1.0 - baseline.value
    value = (attack.value - baseline.value) / room
    d_attack = 1.0 / room
    d_baseline = (attack.value - 1.0) / (room * room)
    half = Z95 * math.hypot(attack.sigma * d_attack, baseline.sigma * d_baseline)
    return value, max(-1.0, value - half), min(1.0, value + half)
