"""The exponential mechanism over a declared categorical domain."""

from __future__ import annotations

import math
import sys
from typing import Literal

import numpy as np

from veil.errors import ParameterError
from veil.mechanisms._validation import check_codes, check_domain_size, check_epsilon
from veil.mechanisms.cost import PrivacyCost
from veil.mechanisms.randomized_response import (
    channel_epsilon,
    sample_keep_or_other,
    warn_if_unrealizable,
)

__all__ = ["Exponential", "ExponentialCalibration", "ordinal_scores"]

ExponentialCalibration = Literal["standard", "full"]


def ordinal_scores(k: int) -> np.ndarray:
    """Score matrix ``-|i - j|`` for an ordered domain of ``k`` categories.

    Neighbouring categories score higher than distant ones, so an ordered attribute
    (education level, age band) is perturbed mostly to nearby values. Sensitivity of a
    row is ``k - 1``.
    """
    check_domain_size(int(k), 2)
    idx = np.arange(int(k))
    return np.asarray(-np.abs(idx[:, None] - idx[None, :]), dtype=np.float64)


# exp(-750) is below the smallest float: a weight that far below its row's largest is 0.
_UNDERFLOW = 750.0


def _channel(scores: np.ndarray, beta: float) -> np.ndarray:
    logits = beta * scores
    logits -= logits.max(axis=1, keepdims=True)
    weights = np.exp(logits)
    return np.asarray(weights / weights.sum(axis=1, keepdims=True))


class Exponential:
    r"""Exponential mechanism for one categorical value: local DP per record.

    Input category ``i`` is reported as ``j`` with probability
    ``∝ exp(β · u(i, j))`` (McSherry and Talwar, "Mechanism design via differential
    privacy", FOCS 2007). ``u`` is a ``k x k`` score matrix; the default is trasgoDP's
    score, 1 when the output equals the input and 0 otherwise (sensitivity 1).

    Calibration:

    * ``"standard"``: ``β = ε / (2Δu)``, the textbook choice, ε-DP for any score. With
      trasgoDP's score the true category is kept with probability
      ``e^(ε/2) / (e^(ε/2) + k - 1)``, which is only (ε/2)-LDP: the ledger records the
      privacy actually spent, computed from the channel.
    * ``"full"``: the largest β whose channel is ε-LDP, found by bisection on the
      channel's ε (computed in double precision). With trasgoDP's score this is
      k-ary randomized response at ε.

    The recorded cost is the ε of the channel as computed in double precision,
    ``max_j max_{i,i'} ln(P[j|i] / P[j|i'])``, not the budget asked for (the two
    differ with ``"standard"``). Sampling realizes each channel probability to within
    ``2^-53``; when a probability is that small (ε above about 30) the realized ε is
    larger than the recorded one.

    Parameters
    ----------
    epsilon : float
        Privacy budget per record.
    k : int, optional
        Domain size, for the default score; give either ``k`` or ``scores``.
    scores : array of shape (k, k), optional
        ``scores[i, j]`` is the utility of reporting ``j`` for true ``i``.
    sensitivity : float, optional
        Sensitivity of the score; default ``max_j (max_i u(i,j) - min_i u(i,j))``.
    calibration : {"standard", "full"}, default "standard"
    """

    def __init__(
        self,
        epsilon: float,
        k: int | None = None,
        *,
        scores: np.ndarray | None = None,
        sensitivity: float | None = None,
        calibration: ExponentialCalibration = "standard",
    ) -> None:
        self.epsilon = check_epsilon(epsilon)
        if calibration not in ("standard", "full"):
            raise ParameterError(f"calibration: must be 'standard' or 'full', got {calibration!r}")
        self.calibration: ExponentialCalibration = calibration
        if scores is None:
            if k is None:
                raise ParameterError("k, scores: give the domain size k or a score matrix")
            check_domain_size(int(k), 2)
            self.k = int(k)
            self._identity = True
            score_matrix = np.eye(self.k)
        else:
            score_matrix = np.asarray(scores, dtype=np.float64)
            if score_matrix.ndim != 2 or score_matrix.shape[0] != score_matrix.shape[1]:
                raise ParameterError(
                    f"scores: must be a square k x k matrix, got shape {score_matrix.shape}"
                )
            if k is not None and int(k) != score_matrix.shape[0]:
                raise ParameterError(
                    f"k: {k} does not match scores of size {score_matrix.shape[0]}"
                )
            if not np.all(np.isfinite(score_matrix)):
                raise ParameterError("scores: every score must be finite")
            self.k = score_matrix.shape[0]
            check_domain_size(self.k, 2, "scores")
            self._identity = bool(np.array_equal(score_matrix, np.eye(self.k)))
        self.scores = score_matrix
        spread = float(np.max(score_matrix.max(axis=0) - score_matrix.min(axis=0)))
        if sensitivity is None:
            sensitivity = spread
        if math.isfinite(sensitivity) and 0 < sensitivity < spread:
            raise ParameterError(
                f"sensitivity: {sensitivity!r} is below the score spread {spread!r} "
                "(the largest change of one output's score between two inputs)"
            )
        if not (math.isfinite(sensitivity) and sensitivity > 0):
            raise ParameterError(
                f"sensitivity: must be finite and > 0, got {sensitivity!r} (a score matrix "
                "whose columns are constant carries no information)"
            )
        self.sensitivity = float(sensitivity)
        if calibration == "standard":
            self.beta = self.epsilon / (2.0 * self.sensitivity)
        else:
            self.beta = self._full_beta()
        self.channel = _channel(self.scores, self.beta)
        warn_if_unrealizable(self.epsilon, float(self.channel.min()))
        exact = channel_epsilon(self.channel)
        # The channel's ε equals the budget up to rounding when the calibration is tight
        # (trasgoDP's score with "full"); report the budget then, never less than exact.
        self.spent_epsilon = (
            self.epsilon if abs(exact - self.epsilon) <= 1e-9 * self.epsilon else exact
        )

    def _full_beta(self) -> float:
        lo, hi = 0.0, self.epsilon / self.sensitivity
        # beta * spread >= channel epsilon / 2 always, so 2 eps / spread bounds the root
        # (capped at the largest float: an epsilon near 1e308 doubled to inf, and inf * 0
        # scores gave nan). Past beta * range = 750 a row's smallest weight
        # exp(-beta * range) underflows to 0 and the channel's epsilon is infinite, so
        # the root lies below that as well: without this bound, an epsilon above 1e33
        # left the 100 halvings above it and the search returned beta = 0.
        hi = min(2.0 * hi, sys.float_info.max)
        widest = float(np.max(self.scores.max(axis=1) - self.scores.min(axis=1)))
        if widest > 0:
            hi = min(hi, _UNDERFLOW / widest)
        for _ in range(100):
            mid = 0.5 * (lo + hi)
            if channel_epsilon(_channel(self.scores, mid)) > self.epsilon:
                hi = mid
            else:
                lo = mid
        return lo

    @property
    def keep_probability(self) -> np.ndarray:
        """Probability of reporting the true category, per category."""
        return np.asarray(np.diag(self.channel))

    def cost(self, scope: str = "") -> PrivacyCost:
        """Privacy spent on each record: the channel's ε (double precision)."""
        return PrivacyCost(
            self.spent_epsilon,
            0.0,
            "ldp",
            "record",
            scope,
            f"exponential ({self.calibration}, k={self.k})",
        )

    def randomise(self, codes: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """Randomize integer category codes in ``[0, k)``; returns int64 codes."""
        arr = check_codes(codes, self.k)
        if self._identity:
            return sample_keep_or_other(arr, self.k, float(self.channel[0, 0]), rng)
        # Row i of the cumulative channel, shifted by i, gives one sorted array: a
        # single searchsorted samples every record from the row of its own category.
        cumulative = np.cumsum(self.channel, axis=1)
        cumulative[:, -1] = 1.0
        offsets = np.arange(self.k, dtype=np.float64)[:, None]
        flat = (cumulative + offsets).ravel()
        target = arr + rng.random(arr.shape)
        position = np.searchsorted(flat, target, side="right") - arr * self.k
        return np.asarray(np.clip(position, 0, self.k - 1), dtype=np.int64)
