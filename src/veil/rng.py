"""The one source of randomness in veil.

Every randomized function takes ``rng=``:

* ``None`` (the default): a fresh cryptographically secure generator, an AES-128
  counter-mode bit generator (``randomgen.AESCounter``, AES-NI accelerated) keyed
  with 128 bits of OS entropy, under a :class:`numpy.random.Generator`. Nobody, including the
  caller, can replay the noise.
* an ``int`` seed: a seeded AES-counter generator, reproducible for tests and
  demonstrations; a :class:`~veil.errors.ReproducibleNoiseWarning` says that anyone
  who knows the seed can subtract the noise.
* a :class:`numpy.random.Generator`: used as given (the caller owns its security).

No function in veil touches NumPy's global random state, and no default seed exists.
"""

from __future__ import annotations

import secrets
import warnings

import numpy as np

from veil.errors import ParameterError, ReproducibleNoiseWarning

__all__ = ["RngLike", "resolve_rng", "secure_generator", "spawn"]

RngLike = int | np.random.Generator | None

_KEY_BITS = 128


def _keyed_bit_generator(key: int) -> np.random.BitGenerator:
    """AES-128 in counter mode keyed directly with ``key`` (128 bits)."""
    from randomgen import AESCounter

    return AESCounter(key=key)  # type: ignore[no-any-return]


def _seeded_bit_generator(seed: int) -> np.random.BitGenerator:
    """AES-128 counter generator whose key is expanded from ``seed`` (reproducible)."""
    from randomgen import AESCounter

    return AESCounter(seed)  # type: ignore[no-any-return]


def secure_generator() -> np.random.Generator:
    """Return a new generator keyed from OS entropy (``secrets``).

    Returns
    -------
    numpy.random.Generator
        Backed by an AES-128 counter-mode bit generator whose key is drawn from the OS
        (``secrets``), so its output is computationally indistinguishable from random
        to anyone without the key.
    """
    return np.random.Generator(_keyed_bit_generator(secrets.randbits(_KEY_BITS)))


def resolve_rng(rng: RngLike, *, stacklevel: int = 3) -> np.random.Generator:
    """Turn the ``rng=`` argument of a public function into a generator.

    Parameters
    ----------
    rng : None, int or numpy.random.Generator
        ``None`` gives a secure generator; a non-negative ``int`` gives a seeded,
        reproducible one (with a :class:`~veil.errors.ReproducibleNoiseWarning`);
        a generator is returned unchanged.
    stacklevel : int
        Passed to :func:`warnings.warn` so the warning points at the caller.

    Raises
    ------
    veil.errors.ParameterError
        If ``rng`` is a negative integer or of another type.
    """
    if rng is None:
        return secure_generator()
    if isinstance(rng, np.random.Generator):
        return rng
    if isinstance(rng, (int, np.integer)) and not isinstance(rng, bool):
        if rng < 0:
            raise ParameterError(f"rng: seed must be a non-negative integer, got {rng}")
        warnings.warn(
            f"noise is seeded (rng={int(rng)}): anyone who knows the seed can reproduce "
            "and remove it; use rng=None for a release",
            ReproducibleNoiseWarning,
            stacklevel=stacklevel,
        )
        return np.random.Generator(_seeded_bit_generator(int(rng)))
    raise ParameterError(
        f"rng: expected None, a non-negative int seed or a numpy.random.Generator, "
        f"got {type(rng).__name__}"
    )


def spawn(rng: np.random.Generator, n: int) -> list[np.random.Generator]:
    """Derive ``n`` independent child generators (for partitions processed apart).

    Children of a secure generator are keyed from fresh draws of the parent, so they are
    as unpredictable as the parent.
    """
    if n < 0:
        raise ParameterError(f"n: must be >= 0, got {n}")
    keys = rng.integers(0, 2**64, size=(n, 2), dtype=np.uint64, endpoint=False)
    return [
        np.random.Generator(_keyed_bit_generator(int.from_bytes(k.tobytes(), "little")))
        for k in keys
    ]
