"""Integer-valued noise samplers: discrete Laplace, discrete Gaussian, rounded Gaussian.

Noise on integers cannot be attacked through the floating-point representation of
its output (Mironov, "On significance of the least significant bits for differential
privacy", CCS 2012): the released value is an integer, or an integer times a public
grid step. The samplers are vectorized over NumPy arrays and draw only from the
generator they are given.

How close the samplers come to their laws
-----------------------------------------
A double carries 53 bits. A sampler that turns one floating-point draw into an integer
of scale ``t`` (``ceil(t·E)`` for an exponential ``E``, ``rint(σZ)`` for a normal
``Z``) resolves the output only to about ``t · 2^-50``: at ``t = 10^14`` neighbouring
outputs receive about 10 % more or fewer of the generator's values, and beyond
``t ≈ 10^15`` some integers cannot be drawn at all, which voids the guarantee.

So the single-draw path is used only for scales up to ``2^16`` steps (relative
unevenness below ``2^-34``). Above, the noise is split into a high part, an integer
``V`` of scale 1 to 2 drawn from one float, and a low part, an exact uniform integer
``U`` on a block of ``m`` steps (a power of two, ``t/2 < m <= t``, taken from the low
bits of one 64-bit draw of :meth:`numpy.random.Generator.integers`) that is accepted
with a probability computed in double precision. Each output probability is then
right to a relative error of about ``2^-50`` whatever the scale.

Why not ``floor(log(U) / log(q))`` or ``t · E`` directly: at ``t = 10^14`` one double
holds too few values per output integer (see above), so these are not used above
``2^16``; the split keeps every integer's probability resolved by exact integers.
The vectorized rounds work on blocks of :data:`_CHUNK` values that stay in the CPU
cache; the law does not depend on the block size.

The acceptance tests compare a uniform double with ``exp(...)`` computed in double
precision; they are not the exact Bernoulli samplers of Canonne, Kamath and Steinke
(2020), which use only rational arithmetic. The error they leave is the ``2^-50``
relative error above, not an exact law.

Scales above :data:`MAX_NOISE_SCALE` (``2^50`` steps) are refused: the noise, up to
about 50 scales, must fit in int64 with room for the value it is added to.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

from veil.errors import ParameterError
from veil.mechanisms._validation import check_positive

__all__ = [
    "MAX_NOISE_SCALE",
    "sample_discrete_gaussian",
    "sample_discrete_laplace",
    "sample_rounded_gaussian",
    "smallest_epsilon",
]

MAX_NOISE_SCALE = 2.0**50
"""Largest noise scale (Laplace ``t`` or Gaussian ``σ``), in integer steps, accepted."""

# Up to this scale one float draw resolves every output to 2^16 · 2^-50 = 2^-34.
_SINGLE_DRAW_SCALE = 2.0**16
# Values drawn per vectorized round: the round's arrays stay in the CPU cache, where
# a dozen passes over a block cost less than the same passes over millions of values.
_CHUNK = 1 << 14
# Block of the rounded Gaussian's low part: between σ/2^11 and σ/2^10 steps, so the
# density varies by less than 4 % across a block even 40 σ out.
_GAUSSIAN_BLOCK_BITS = 10


def _check_scale(value: float, name: str) -> float:
    scale = check_positive(value, name)
    if scale > MAX_NOISE_SCALE:
        raise ParameterError(
            f"{name}: {scale:.6g} integer steps is above the largest supported noise scale "
            f"2^50 = {MAX_NOISE_SCALE:.6g} (the noise must fit in int64 arithmetic)"
        )
    return scale


def smallest_epsilon(scale_at: Callable[[float], float]) -> float:
    """Smallest ε (three significant digits, rounded up) with ``scale_at(ε) <= 2^50``.

    ``scale_at`` maps ε to the noise scale in integer steps and must decrease as ε
    grows (``Δ / ε`` for Laplace, σ for the Gaussian). The value returned is accepted:
    ``scale_at`` of it is within the limit.
    """
    lo, hi = 1e-300, 1.0
    while scale_at(hi) > MAX_NOISE_SCALE:
        lo, hi = hi, hi * 2.0
    for _ in range(200):  # bisection in log space
        mid = math.sqrt(lo * hi)
        if scale_at(mid) > MAX_NOISE_SCALE:
            lo = mid
        else:
            hi = mid
        if hi - lo <= 1e-6 * hi:
            break
    exponent = math.floor(math.log10(hi)) - 2
    digits = math.ceil(hi / 10.0**exponent)
    while scale_at(float(f"{digits}e{exponent}")) > MAX_NOISE_SCALE:
        digits += 1
    return float(f"{digits}e{exponent}")


def _random_signs(size: int, rng: np.random.Generator) -> np.ndarray:
    """``size`` fair booleans from ``size / 8`` random bytes."""
    return np.unpackbits(
        rng.integers(0, 256, size=(size + 7) // 8, dtype=np.uint8), count=size
    ).view(np.bool_)


def sample_discrete_laplace(scale: float, size: int, rng: np.random.Generator) -> np.ndarray:
    """Draw two-sided geometric noise, ``P[Y = y] ∝ exp(-|y| / scale)`` on the integers.

    Parameters
    ----------
    scale : float
        Scale ``t`` with ``0 < t <= 2^50``; for integer sensitivity ``Δ`` the choice
        ``t = Δ / ε`` gives ε-DP (Ghosh, Roughgarden and Sundararajan, "Universally
        utility-maximizing privacy mechanisms", STOC 2009).
    size : int
        Number of draws.
    rng : numpy.random.Generator
        Source of randomness.

    Returns
    -------
    numpy.ndarray of int64

    Raises
    ------
    veil.errors.ParameterError
        If ``scale`` is not in ``(0, 2^50]``.

    Notes
    -----
    Up to ``t = 2^16``: one exponential draw and one random bit per value. With
    ``a = exp(-1/t)``, ``|Y| = max(0, ceil(t (E - b)))`` with ``b = ln((1 + a) / (2a))``
    has ``P[|Y| >= k] = 2 a^k / (1 + a)`` for ``k >= 1``, the magnitude law of the
    two-sided geometric distribution; the sign is a fair coin. Each output probability
    is right to a relative error below ``t · 2^-50 <= 2^-34``.

    Above ``2^16``: with ``m`` the largest power of two ``<= t``, ``|Y| = U + m V``
    where ``U`` is a uniform integer in ``[0, m)`` kept with probability ``exp(-U / t)``
    (a truncated geometric law; 63 to 79 % are kept), ``V = floor(E t / m)`` is
    geometric with ratio ``exp(-m / t)``, the sign is a fair coin and the pair
    (negative, 0) is redrawn (the magnitude-and-sign method of Canonne, Kamath and
    Steinke, "The discrete Gaussian for differential privacy", NeurIPS 2020, Algorithm
    2, with double-precision acceptance tests). ``U`` and the sign are the low bits and
    the top bit of one uniform 64-bit word, which are independent; the acceptance
    draws one uniform double and ``V`` one exponential. Each output probability is
    right to a relative error of about ``2^-50`` at every scale.
    """
    t = _check_scale(scale, "scale")
    if t <= _SINGLE_DRAW_SCALE:
        return _laplace_single_draw(t, size, rng)
    return _laplace_split(t, size, rng)


def _laplace_single_draw(t: float, size: int, rng: np.random.Generator) -> np.ndarray:
    a = math.exp(-1.0 / t)
    # ln((1 + a) / (2a)) written without dividing by a, which underflows to 0 when the
    # scale is tiny (huge epsilon); the noise is then 0 up to double precision.
    shift = 1.0 / t + math.log1p(a) - math.log(2.0)
    magnitude = rng.standard_exponential(size)
    magnitude -= shift
    magnitude *= t
    np.ceil(magnitude, out=magnitude)
    np.maximum(magnitude, 0.0, out=magnitude)
    noise = magnitude.astype(np.int64)
    np.negative(noise, out=noise, where=_random_signs(size, rng))
    return noise


def _laplace_split(t: float, size: int, rng: np.random.Generator) -> np.ndarray:
    """``size`` two-sided geometric draws of scale ``t`` by the split ``|Y| = U + m V``.

    Exact in real arithmetic for every ``t > 0`` (the tests check the law on the
    integers at small ``t``); used above :data:`_SINGLE_DRAW_SCALE`.
    """
    bits = max(math.frexp(t)[1] - 1, 0)  # m = 2^bits, the largest power of two <= t
    stretch = t / (1 << bits)  # in [1, 2): V has a scale between 1 and 2
    low_mask = np.uint64((1 << bits) - 1)
    words = _kept_low_parts(size, t, low_mask, stretch * -math.expm1(-1.0 / stretch), rng)
    # V stays below about 90 (the largest exponential draw is about 45); the cap only
    # guards the int64 shift.
    top = float((1 << max(62 - bits, 1)) - 1)
    out = np.empty(size, dtype=np.int64)
    high = np.empty(min(size, _CHUNK))
    for start in range(0, size, _CHUNK):
        chunk = out[start : start + _CHUNK]
        word = words[start : start + _CHUNK]
        part = high[: chunk.size]
        rng.standard_exponential(out=part)
        part *= stretch
        np.minimum(part, top, out=part)
        chunk[...] = part  # truncation is floor: part >= 0
        chunk <<= bits
        chunk |= (word & low_mask).view(np.int64)
        # The sign is the word's top bit, independent of its low bits: -1 where it is
        # set, else 0; (x ^ -1) - (-1) = -x in two's complement.
        negative = word.view(np.int64) >> 63
        chunk ^= negative
        chunk -= negative
        if not chunk.all():
            # (negative, 0) is redrawn, else 0 would come twice as often as it should.
            redraw = np.flatnonzero((chunk == 0) & (negative < 0))
            chunk[redraw] = _laplace_split(t, redraw.size, rng)
    return out


def _kept_low_parts(
    size: int, t: float, low_mask: np.uint64, rate: float, rng: np.random.Generator
) -> np.ndarray:
    """``size`` 64-bit words whose low bits ``U`` were kept with probability ``exp(-U/t)``.

    Each word is one exact uniform draw: its ``low_mask`` bits give ``U``, uniform on a
    block of a power of two steps, and its top bit the sign. A word is kept when an
    independent uniform double is below ``exp(-U/t)``, so the kept ``U`` follow the
    truncated geometric law and the top bit stays a fair coin independent of them.
    ``rate`` is the expected share of words kept.
    """
    kept = np.empty(size, dtype=np.uint64)
    filled = 0
    while filled < size:
        # One call for all the words (many small calls cost more per word).
        batch = int((size - filled) / rate * 1.02) + 64
        raw = rng.integers(0, 1 << 64, size=batch, dtype=np.uint64)
        uniform, chance = np.empty(min(batch, _CHUNK)), np.empty(min(batch, _CHUNK))
        for start in range(0, raw.size, _CHUNK):
            word = raw[start : start + _CHUNK]
            u, p = uniform[: word.size], chance[: word.size]
            p[...] = (word & low_mask).view(np.int64)
            p /= -t
            np.exp(p, out=p)
            rng.random(out=u)
            accepted = word[u < p][: size - filled]
            kept[filled : filled + accepted.size] = accepted
            filled += accepted.size
            if filled == size:
                break
    return kept


def sample_rounded_gaussian(sigma: float, size: int, rng: np.random.Generator) -> np.ndarray:
    """Draw ``rint(σ Z)`` for a standard normal ``Z``: the Gaussian rounded to the integers.

    Parameters
    ----------
    sigma : float
        Scale ``σ`` with ``0 < σ <= 2^50``.
    size : int
        Number of draws.
    rng : numpy.random.Generator
        Source of randomness.

    Returns
    -------
    numpy.ndarray of int64
        ``P[Y = k] = P[k - 1/2 <= σZ < k + 1/2]``.

    Raises
    ------
    veil.errors.ParameterError
        If ``sigma`` is not in ``(0, 2^50]``.

    Notes
    -----
    Up to ``σ = 2^16``, ``rint(σ Z)`` from one normal draw (relative error of each
    output probability below ``2^-34``). Above, the normal draw only picks a block of
    ``m`` integers (``σ/2^11 < m <= σ/2^10``, a power of two) holding ``σZ + 1/2``;
    the integer inside the block is an exact uniform draw kept with probability
    ``exp(-(k² - k₀²) / (2σ²))`` (``k₀`` the point of the block nearest 0), redrawn
    inside the same block until kept. The within-block law uses the density at ``k``
    for ``P[Y = k]`` (relative error below ``1/σ² < 2^-32``); the acceptance is
    computed in double precision.
    """
    s = _check_scale(sigma, "sigma")
    if s <= _SINGLE_DRAW_SCALE:
        drawn = rng.standard_normal(size)
        drawn *= s
        np.rint(drawn, out=drawn)
        return drawn.astype(np.int64)
    return _rounded_gaussian_split(s, size, rng, math.frexp(s)[1] - 1 - _GAUSSIAN_BLOCK_BITS)


def _rounded_gaussian_split(s: float, size: int, rng: np.random.Generator, bits: int) -> np.ndarray:
    """``size`` draws of the rounded Gaussian: a block of ``2^bits`` steps, then a point in it.

    The normal draw picks the block holding ``σZ + 1/2``; the point is ``start + O``
    with ``O`` an exact uniform offset, kept with probability
    ``exp(-(k² - k₀²) / (2σ²))`` and redrawn inside the same block otherwise.
    """
    block = 1 << bits
    offsets = rng.integers(0, block, size=size, dtype=np.int64)  # one call: cheaper
    scale = 2.0**-bits  # exact: dividing by the block is a power-of-two scaling
    factor = -0.5 / (s * s)
    out = np.empty(size, dtype=np.int64)
    drawn, chance = np.empty(min(size, _CHUNK)), np.empty(min(size, _CHUNK))
    for start in range(0, size, _CHUNK):
        chunk = out[start : start + _CHUNK]
        z, p = drawn[: chunk.size], chance[: chunk.size]
        rng.standard_normal(out=z)
        z *= s
        z += 0.5
        z *= scale
        np.floor(z, out=z)
        first = z.astype(np.int64)
        first <<= bits
        # The point of the block nearest 0: its first one, or its last one below 0.
        nearest = (first >> 63) & (block - 1)
        nearest += first
        np.add(first, offsets[start : start + _CHUNK], out=chunk)
        p[...] = chunk - nearest
        # (k - k0)(k + k0) = k² - k0² without squaring numbers near 2^57.
        p *= chunk + nearest
        p *= factor
        np.exp(p, out=p)
        rejected = np.flatnonzero(rng.random(out=drawn[: chunk.size]) >= p)
        if rejected.size:
            chunk[rejected] = _redraw_in_block(
                first[rejected], nearest[rejected], block, factor, rng
            )
    return out


def _redraw_in_block(
    first: np.ndarray, nearest: np.ndarray, block: int, factor: float, rng: np.random.Generator
) -> np.ndarray:
    """Points of the blocks starting at ``first``, each kept with its acceptance chance."""
    out = np.empty(first.size, dtype=np.int64)
    pending = np.arange(first.size)
    while pending.size:
        k = first[pending] + rng.integers(0, block, size=pending.size, dtype=np.int64)
        k0 = nearest[pending]
        exponent = (k - k0).astype(np.float64) * (k + k0).astype(np.float64) * factor
        kept = rng.random(pending.size) < np.exp(exponent)
        out[pending[kept]] = k[kept]
        pending = pending[~kept]
    return out


def sample_discrete_gaussian(sigma: float, size: int, rng: np.random.Generator) -> np.ndarray:
    """Draw discrete Gaussian noise, ``P[Y = y] ∝ exp(-y² / (2 σ²))`` on the integers.

    Parameters
    ----------
    sigma : float
        Scale parameter ``σ`` with ``0 < σ < 2^50`` (the variance is at most ``σ²``).
    size : int
        Number of draws.
    rng : numpy.random.Generator
        Source of randomness.

    Returns
    -------
    numpy.ndarray of int64

    Raises
    ------
    veil.errors.ParameterError
        If ``sigma`` is not in ``(0, 2^50)``.

    Notes
    -----
    Rejection sampling from a discrete Laplace proposal with scale
    ``t = floor(σ) + 1`` (:func:`sample_discrete_laplace`), accepting ``y`` with
    probability ``exp(-(|y| - σ²/t)² / (2σ²))`` (Canonne, Kamath and Steinke, "The
    discrete Gaussian for differential privacy", NeurIPS 2020, Algorithm 3). The
    acceptance test compares a uniform double with that probability computed in double
    precision, where the paper uses exact Bernoulli samplers: each output probability
    is right to a relative error of about ``2^-50``, not exactly. Rejection runs in
    vectorized rounds over the whole batch; the acceptance rate is above 0.5 for every
    ``σ`` (about 0.76 for ``σ >= 3``), so a handful of rounds suffice.
    """
    s = _check_scale(sigma, "sigma")
    t = math.floor(s) + 1
    if t > MAX_NOISE_SCALE:
        raise ParameterError(
            f"sigma: {s:.6g} integer steps needs a proposal of scale {t}, above the largest "
            f"supported noise scale 2^50 = {MAX_NOISE_SCALE:.6g}"
        )
    out = np.empty(size, dtype=np.int64)
    filled = 0
    while filled < size:
        need = size - filled
        batch = int(need * 1.4) + 64
        proposal = sample_discrete_laplace(t, batch, rng)
        shifted = np.abs(proposal) - s * s / t
        accept = rng.random(batch) < np.exp(-(shifted * shifted) / (2.0 * s * s))
        kept = proposal[accept][:need]
        out[filled : filled + kept.size] = kept
        filled += kept.size
    return out
