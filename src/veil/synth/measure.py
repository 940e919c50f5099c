"""The two randomized steps of the marginal synthesizers: noisy marginals and selection.

Both draw only from the generator they are given (:mod:`veil.rng`) and record their
zCDP cost in a :class:`~veil.synth.accounting.ZCDPAccountant` before returning.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from veil.mechanisms import sample_discrete_gaussian
from veil.synth.accounting import ZCDPAccountant

__all__ = ["Measurement", "contingency", "exponential_select", "measure"]

IntArray = npt.NDArray[np.int64]
FloatArray = npt.NDArray[np.float64]


@dataclass(frozen=True)
class Measurement:
    """A noisy marginal: counts of a clique's cells plus discrete Gaussian noise.

    Attributes
    ----------
    clique : tuple of str
        The columns of the marginal, in axis order.
    noisy : numpy.ndarray of float
        Noisy counts, shape = the columns' domain sizes.
    sigma : float
        Standard deviation σ of the discrete Gaussian noise (counts).
    weights : numpy.ndarray of float, optional
        Per-cell weights of a derived measurement whose cells carry unequal noise
        (cell ``i`` has standard deviation ``σ / weights[i]``); ``None``: all σ.
    """

    clique: tuple[str, ...]
    noisy: FloatArray
    sigma: float
    weights: FloatArray | None = None


def contingency(
    codes: Mapping[str, IntArray], clique: Sequence[str], sizes: Mapping[str, int]
) -> IntArray:
    """Exact cell counts of ``clique`` (shape = its domain sizes), from integer codes."""
    shape = tuple(int(sizes[c]) for c in clique)
    if not clique:
        n = len(next(iter(codes.values()))) if codes else 0
        return np.array(n, dtype=np.int64)
    flat = np.ravel_multi_index(tuple(codes[c] for c in clique), shape)
    return np.bincount(flat, minlength=math.prod(shape)).reshape(shape).astype(np.int64)


def measure(
    counts: IntArray,
    clique: Sequence[str],
    sigma: float,
    accountant: ZCDPAccountant,
    rng: np.random.Generator,
) -> Measurement:
    """Release ``counts`` with discrete Gaussian noise of scale σ: ``1/(2σ²)``-zCDP.

    Adding or removing one record changes one cell by 1, so the L2 sensitivity is 1.
    The integer noise leaves no floating-point trace of the counts (Mironov 2012).
    """
    accountant.gaussian(sigma, "marginal " + " x ".join(clique))
    noise = sample_discrete_gaussian(sigma, counts.size, rng).reshape(counts.shape)
    return Measurement(tuple(clique), (counts + noise).astype(np.float64), float(sigma))


def exponential_select(
    scores: FloatArray,
    epsilon: float,
    sensitivity: float,
    accountant: ZCDPAccountant,
    rng: np.random.Generator,
    what: str = "selection",
) -> int:
    """Index drawn with probability ``∝ exp(ε · score / (2Δ))``: ε-DP, ε²/8-zCDP.

    McSherry and Talwar (FOCS 2007). The probabilities are computed in double
    precision and drawn by inverse CDF from one uniform of ``rng``.
    """
    accountant.exponential(epsilon, what, sensitivity)
    logits = (epsilon / (2.0 * sensitivity)) * np.asarray(scores, dtype=np.float64)
    logits -= logits.max()
    weights = np.exp(logits)
    cdf = np.cumsum(weights / weights.sum())
    cdf[-1] = 1.0
    return int(np.searchsorted(cdf, rng.random(), side="right"))
