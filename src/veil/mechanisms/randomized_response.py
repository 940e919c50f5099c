"""Randomized response over a declared categorical domain (binary and k-ary)."""

from __future__ import annotations

import math
import warnings

import numpy as np

from veil.errors import PrivacyWarning
from veil.mechanisms._validation import check_codes, check_domain_size, check_epsilon
from veil.mechanisms.cost import PrivacyCost

_BLOCK = 1 << 14

__all__ = [
    "BinaryRandomizedResponse",
    "RandomizedResponse",
    "channel_epsilon",
    "sample_keep_or_other",
    "warn_if_unrealizable",
]


def channel_epsilon(channel: np.ndarray) -> float:
    """Exact local-DP ε of a randomizer given by its row-stochastic matrix.

    ``channel[i, j] = P[output j | input i]``; the result is
    ``max_j max_{i,i'} ln(channel[i, j] / channel[i', j])`` (inf if some output is
    impossible from one input and possible from another).
    """
    p = np.asarray(channel, dtype=np.float64)
    top = p.max(axis=0)
    bottom = p.min(axis=0)
    if np.any((bottom == 0) & (top > 0)):
        return math.inf
    used = top > 0
    return float(np.max(np.log(top[used]) - np.log(bottom[used])))


# Below this probability a 53-bit uniform draw realizes it with a relative error above
# 2^-13, so the privacy actually given drifts from the recorded epsilon.
_SMALLEST_REALIZABLE = 2.0**-40


def warn_if_unrealizable(epsilon: float, smallest: float, stacklevel: int = 3) -> None:
    """Warn when a channel probability is too small to draw from 53-bit uniforms."""
    if smallest >= _SMALLEST_REALIZABLE:
        return
    warnings.warn(
        f"epsilon: {epsilon!r} gives output probabilities as small as {smallest:.3g}, "
        "below 2^-40, which 53-bit uniform draws cannot realize precisely: the privacy "
        "actually given is weaker than the recorded epsilon (if they round to 0 the "
        "input is released unchanged); use a smaller epsilon",
        PrivacyWarning,
        stacklevel=stacklevel,
    )


def sample_keep_or_other(
    codes: np.ndarray, k: int, keep: float, rng: np.random.Generator
) -> np.ndarray:
    """Keep each code with probability ``keep``, else replace it uniformly by another.

    One uniform draw per value decides both: ``u < keep`` keeps the code; otherwise
    the offset ``1 + floor((u - keep) / (1 - keep) · (k - 1))``, in ``[1, k - 1]``,
    moves it to ``(code + offset) mod k``, so every other category has probability
    ``(1 - keep) / (k - 1)`` (up to double rounding, of order 2^-53).
    """
    if keep >= 1.0:
        return np.array(codes, dtype=np.int64)
    flat = np.ascontiguousarray(codes).reshape(-1)
    if flat.dtype.kind != "i":  # uint64 + int64 would give floats
        flat = flat.astype(np.int64)
    out = np.empty(flat.shape, dtype=np.int64)
    scale = (k - 1) / (1.0 - keep)
    # The offset is at most k - 1: a draw rounded up to k would wrap to the original
    # category.
    top = math.nextafter(float(k), 0.0)
    # Work in blocks that stay in the CPU cache: several passes over each block cost
    # less than the same passes over arrays of millions of values.
    u = np.empty(min(_BLOCK, flat.size))
    offset = np.empty(u.shape, dtype=np.int64)
    for start in range(0, flat.size, _BLOCK):
        block = flat[start : start + _BLOCK]
        m = block.size
        draw, shift = u[:m], offset[:m]
        rng.random(out=draw)
        draw -= keep
        draw *= scale
        draw += 1.0
        # Below 1 (u < keep) the code is kept: offset 0. (Two ufuncs: np.clip's Python
        # wrapper costs more than its pass over a block this size.)
        np.maximum(draw, 0.0, out=draw)
        np.minimum(draw, top, out=draw)
        shift[...] = draw  # truncation: the offset is floor(draw)
        target = out[start : start + m]
        np.add(block, shift, out=target)
        target -= k * (target >= k)
    return out.reshape(np.shape(codes))


class RandomizedResponse:
    r"""k-ary (generalized) randomized response: ε-local-DP per record.

    The true category is reported with probability ``p = e^ε / (e^ε + k - 1)``;
    otherwise one of the other ``k - 1`` categories of the declared domain, uniformly.
    Equivalently (trasgoDP's formulation), with probability ``k / (e^ε + k - 1)`` the
    report is drawn uniformly from the whole domain (Warner 1965; Kairouz, Oh and
    Viswanath, "Extremal mechanisms for local differential privacy", 2014).

    Guarantee: ``P[M(x) = y] <= e^ε P[M(x') = y]`` for all categories ``x, x', y`` of
    the domain, with each probability realized to within ``2^-53`` (one uniform double
    per record). A probability below ``2^-40`` (ε above about 27) cannot be realized to
    that relative precision, and above about ε = 37 the input is returned unchanged:
    a :class:`~veil.errors.PrivacyWarning` says so. The domain must be public: a
    domain read from the data makes a category's presence in the output depend on
    whether one person holds it.

    Parameters
    ----------
    epsilon : float
        Privacy budget per record.
    k : int
        Size of the declared domain (>= 2).
    """

    def __init__(self, epsilon: float, k: int) -> None:
        self.epsilon = check_epsilon(epsilon)
        check_domain_size(int(k), 2)
        self.k = int(k)
        # Written with e^-ε so that a huge ε gives keep -> 1 instead of inf / inf.
        tail = math.exp(-self.epsilon)
        self.keep_probability = 1.0 / (1.0 + (self.k - 1) * tail)
        self.other_probability = tail / (1.0 + (self.k - 1) * tail)
        warn_if_unrealizable(self.epsilon, self.other_probability)

    @property
    def channel(self) -> np.ndarray:
        """The ``k x k`` matrix of ``P[output j | input i]``."""
        p = np.full((self.k, self.k), self.other_probability)
        np.fill_diagonal(p, self.keep_probability)
        return p

    def cost(self, scope: str = "") -> PrivacyCost:
        """Privacy spent on each record: ``(ε, 0)`` local DP."""
        return PrivacyCost(
            self.epsilon, 0.0, "ldp", "record", scope, f"randomized response (k={self.k})"
        )

    def randomise(self, codes: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """Randomize integer category codes in ``[0, k)``; returns int64 codes."""
        arr = check_codes(codes, self.k, widen=False)  # read only: int32 stays int32
        return sample_keep_or_other(arr, self.k, self.keep_probability, rng)


class BinaryRandomizedResponse(RandomizedResponse):
    r"""Binary randomized response (Warner 1965): ε-local-DP per record.

    A bit is kept with probability ``p(ε) = e^ε / (e^ε + 1)`` and flipped otherwise.

    Parameters
    ----------
    epsilon : float
        Privacy budget per record.
    """

    def __init__(self, epsilon: float) -> None:
        super().__init__(epsilon, 2)

    def randomise(self, codes: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """Randomize 0/1 codes (bool or integer); returns int64 codes."""
        raw = np.asarray(codes)
        arr = check_codes(raw.astype(np.int64) if raw.dtype == np.bool_ else raw, 2)
        flip = rng.random(arr.shape) >= self.keep_probability
        return np.bitwise_xor(arr, flip, dtype=np.int64)  # type: ignore[no-any-return]
