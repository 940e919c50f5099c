"""Integer-valued noise samplers: discrete Laplace and discrete Gaussian.

Noise on integers cannot be attacked through the floating-point representation of
its output (Mironov, "On significance of the least significant bits for differential
privacy", CCS 2012): the released value is an integer, or an integer times a public
grid step. Both samplers are vectorized over NumPy arrays and draw only from the
generator they are given.
"""

from __future__ import annotations

import math

import numpy as np

from veil.mechanisms._validation import check_positive

__all__ = ["sample_discrete_gaussian", "sample_discrete_laplace"]


def sample_discrete_laplace(scale: float, size: int, rng: np.random.Generator) -> np.ndarray:
    """Draw two-sided geometric noise, ``P[Y = y] ∝ exp(-|y| / scale)`` on the integers.

    Parameters
    ----------
    scale : float
        Scale ``t > 0``; for integer sensitivity ``Δ`` the choice ``t = Δ / ε`` gives
        ε-DP (Ghosh, Roughgarden and Sundararajan, "Universally utility-maximizing
        privacy mechanisms", STOC 2009).
    size : int
        Number of draws.
    rng : numpy.random.Generator
        Source of randomness.

    Returns
    -------
    numpy.ndarray of int64

    Notes
    -----
    One exponential draw and one random bit per value: with ``a = exp(-1/t)``,
    ``|Y| = max(0, ceil(t (E - b)))`` with ``b = ln((1 + a) / (2a))`` has
    ``P[|Y| >= k] = 2 a^k / (1 + a)`` for ``k >= 1``, which is the magnitude law of the
    two-sided geometric distribution; the sign is a fair coin. The exponential draws use
    NumPy's ziggurat, so the law holds up to double-precision rounding (probabilities
    of order 2^-53); the output is an integer, which is what removes the floating-point
    attack.
    """
    t = check_positive(scale, "scale")
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
    negative = np.unpackbits(
        rng.integers(0, 256, size=(size + 7) // 8, dtype=np.uint8), count=size
    ).view(np.bool_)
    np.negative(noise, out=noise, where=negative)
    return noise


def sample_discrete_gaussian(sigma: float, size: int, rng: np.random.Generator) -> np.ndarray:
    """Draw discrete Gaussian noise, ``P[Y = y] ∝ exp(-y² / (2 σ²))`` on the integers.

    Parameters
    ----------
    sigma : float
        Scale parameter ``σ > 0`` (the variance is at most ``σ²``).
    size : int
        Number of draws.
    rng : numpy.random.Generator
        Source of randomness.

    Returns
    -------
    numpy.ndarray of int64

    Notes
    -----
    Rejection sampling from a discrete Laplace proposal with scale
    ``t = floor(σ) + 1``, accepting ``y`` with probability
    ``exp(-(|y| - σ²/t)² / (2σ²))`` (Canonne, Kamath and Steinke, "The discrete
    Gaussian for differential privacy", NeurIPS 2020, Algorithm 3). Rejection runs in
    vectorized rounds over the whole batch; the acceptance rate is above 0.5 for every
    ``σ`` (about 0.76 for ``σ >= 3``), so a handful of rounds suffice.
    """
    s = check_positive(sigma, "sigma")
    t = math.floor(s) + 1
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
