"""DP-SGD: Poisson-subsampled Gaussian gradient steps, their accounting and calibration.

One step of DP-SGD (Abadi et al., "Deep learning with differential privacy", CCS 2016,
Algorithm 1) takes a Poisson sample of the records (each one independently with
probability q), clips each sampled record's gradient to L2 norm at most C, sums them and
adds Gaussian noise of standard deviation σ·C to every coordinate. Adding or removing
one record changes the clipped sum by at most C in L2, so each step is the sampled
Gaussian mechanism with noise multiplier σ and sampling rate q; T steps compose.

The accounting is Google's ``dp-accounting``: Rényi DP (Mironov, "Rényi differential
privacy", CSF 2017; the sampled Gaussian of Mironov, Talwar and Zhang 2019) converted to
(ε, δ) with the conversion of Canonne, Kamath and Steinke (2020) that the library
applies, or privacy loss distributions (Koskela et al. 2020; Doroshenko et al. 2022).
Neighbouring tables differ by adding or removing one record. A noisy count table
released beside the steps (discrete Gaussian, L2 sensitivity 1) is composed in the same
account: ρ-zCDP with ρ = 1/(2σ²) under RDP (Canonne, Kamath and Steinke, NeurIPS 2020,
Theorem 4), its exact privacy loss distribution under PLD.

Everything the proof relies on is drawn here from a :mod:`veil.rng` generator (NumPy)
and handed to JAX as arrays: the batch of each step and the noise of each step. The
noise is continuous Gaussian in float32 on float gradients, as in every DP-SGD
implementation; it is open to the floating-point attack of Mironov (2012) in principle,
which no DP-SGD implementation defends against, and which the recorded cost does not
cover.
"""

from __future__ import annotations

import contextlib
import logging
import math
import numbers
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
import numpy.typing as npt
from scipy import optimize

from veil.errors import ParameterError
from veil.mechanisms._validation import check_delta, check_epsilon

__all__ = [
    "EXTRA_HINT",
    "Accountant",
    "DPSGDAccounting",
    "PoissonBatches",
    "calibrate_noise",
    "clip_rows",
    "gaussian_noise",
    "noisy_clipped_sum",
    "per_example_gradients",
    "require_gan",
]

EXTRA_HINT = "pip install 'veil[gan]'"

Accountant = Literal["rdp", "pld"]
ACCOUNTANTS: tuple[str, ...] = ("rdp", "pld")

# Tolerance of the calibration, in log σ (a relative 1e-6 in σ).
_CALIBRATION_TOL = 1e-6
MIN_NOISE_MULTIPLIER = 0.3
"""Smallest noise multiplier the calibration returns (below it accounting is slow and the
training useless)."""
MAX_NOISE_MULTIPLIER = 1e4
"""Largest noise multiplier the calibration tries."""


def require_gan() -> None:
    """Import JAX, optax and dp-accounting, or explain how to install them."""
    try:
        import dp_accounting  # noqa: F401
        import jax  # noqa: F401
        import optax  # noqa: F401
    except ImportError as exc:
        raise ImportError(
            f"veil.synth's DP-WGAN needs JAX, optax and dp-accounting: {EXTRA_HINT}",
            name=exc.name,
        ) from exc


@dataclass(frozen=True)
class DPSGDAccounting:
    """The privacy account of T DP-SGD steps, and of an optional noisy count table.

    Parameters
    ----------
    sampling_rate : float
        Poisson sampling probability q of each record at each step, in (0, 1].
    noise_multiplier : float
        σ: the noise standard deviation over the clipping norm, > 0.
    steps : int
        Planned steps T.
    histogram_sigma : float, optional
        σ of the discrete Gaussian noise on a count table (L2 sensitivity 1) released
        with the steps; ``None`` when there is none.
    accountant : {"rdp", "pld"}
        ``dp-accounting``'s Rényi-DP accountant or privacy loss distributions.

    Examples
    --------
    Abadi et al. (2016, section 3.1), q = 0.01, σ = 4, T = 10 000, δ = 1e-5: 1.26 with
    their moments accountant, less with today's conversions.

    >>> from veil.synth import DPSGDAccounting
    >>> round(DPSGDAccounting(0.01, 4.0, 10_000).epsilon(1e-5), 2)
    1.04
    """

    sampling_rate: float
    noise_multiplier: float
    steps: int
    histogram_sigma: float | None = None
    accountant: Accountant = "rdp"

    def __post_init__(self) -> None:
        if self.sampling_rate != 1.0:
            check_real(self.sampling_rate, "sampling_rate", 0.0, 1.0)
        check_real(self.noise_multiplier, "noise_multiplier", 0.0)
        if self.histogram_sigma is not None:
            check_real(self.histogram_sigma, "histogram_sigma", 0.0)
        check_int(self.steps, "steps", 1)
        if self.accountant not in ACCOUNTANTS:
            raise ParameterError(
                f"accountant: must be one of {list(ACCOUNTANTS)}, got {self.accountant!r}"
            )

    def event(self, steps: int | None = None) -> Any:
        """The ``dp_accounting`` event of ``steps`` steps (default T) and the table.

        The count table is a ``ZCDpEvent`` (its RDP curve); the event is what the RDP
        accountant composes.
        """
        import dp_accounting

        count = self.steps if steps is None else check_int(steps, "steps", 0)
        gaussian = dp_accounting.GaussianDpEvent(self.noise_multiplier)
        sampled = dp_accounting.PoissonSampledDpEvent(self.sampling_rate, gaussian)
        events: list[Any] = [dp_accounting.SelfComposedDpEvent(sampled, count)]
        if self.histogram_sigma is not None:
            events.append(dp_accounting.ZCDpEvent(0.5 / self.histogram_sigma**2))
        return dp_accounting.ComposedDpEvent(events)

    def epsilon(self, delta: float, steps: int | None = None) -> float:
        """ε at ``delta`` after ``steps`` steps (default T) and the table, as accounted.

        The RDP accountant drops an order whose series does not converge (it logs a
        warning through absl, silenced here): the bound over the other orders holds.
        """
        dlt = check_delta(delta)
        with _quiet_absl():
            if self.accountant == "rdp":
                from dp_accounting.rdp import RdpAccountant

                return float(RdpAccountant().compose(self.event(steps)).get_epsilon(dlt))
            return float(self._pld(steps).get_epsilon_for_delta(dlt))

    def _pld(self, steps: int | None) -> Any:
        from dp_accounting.pld import privacy_loss_distribution as pld

        count = self.steps if steps is None else check_int(steps, "steps", 0)
        out = pld.from_gaussian_mechanism(
            self.noise_multiplier, sampling_prob=self.sampling_rate
        ).self_compose(count)
        if self.histogram_sigma is not None:
            out = out.compose(pld.from_discrete_gaussian_mechanism(self.histogram_sigma))
        return out

    def to_dict(self) -> dict[str, Any]:
        """Parameters and the accountant, for a manifest."""
        name = {
            "rdp": "dp-accounting RdpAccountant (Rényi DP, add/remove one record)",
            "pld": "dp-accounting privacy loss distributions (add/remove one record)",
        }[self.accountant]
        return {
            "accountant": name,
            "sampling": "Poisson",
            "sampling_rate": self.sampling_rate,
            "noise_multiplier": self.noise_multiplier,
            "steps": self.steps,
            "histogram_sigma": self.histogram_sigma,
        }


@contextlib.contextmanager
def _quiet_absl() -> Iterator[None]:
    logger = logging.getLogger("absl")
    level = logger.level
    logger.setLevel(logging.ERROR)
    try:
        yield
    finally:
        logger.setLevel(level)


def check_int(value: Any, name: str, minimum: int) -> int:
    """An integer of at least ``minimum`` (a ParameterError naming ``name`` otherwise)."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < minimum:
        raise ParameterError(f"{name}: must be an integer >= {minimum}, got {value!r}")
    return int(value)


def check_real(value: Any, name: str, low: float, high: float = math.inf) -> float:
    """A real number in the open interval (low, high)."""
    number = isinstance(value, numbers.Real) and not isinstance(value, bool)
    if not (number and math.isfinite(float(value)) and low < float(value) < high):
        allowed = f"> {low:g}" if high == math.inf else f"in ({low:g}, {high:g})"
        raise ParameterError(f"{name}: must be a real number {allowed}, got {value!r}")
    return float(value)


def calibrate_noise(
    epsilon: float,
    delta: float,
    sampling_rate: float,
    steps: int,
    *,
    histogram_sigma: float | None = None,
    accountant: Accountant = "rdp",
) -> DPSGDAccounting:
    """The smallest noise multiplier whose T steps (and table) stay within (ε, δ).

    ε falls as σ grows: σ is bracketed by doubling or halving from 1 (never below
    :data:`MIN_NOISE_MULTIPLIER`), Brent's method finds the root of ε(σ) = target in
    log σ to a relative 1e-6, and σ is then raised until its ε is at most the target:
    the returned account never exceeds it. When even the smallest σ stays under the
    target, that σ is returned (spending less).

    Raises
    ------
    veil.errors.ParameterError
        Bad arguments, or no σ up to 1e4 meets the target (the table alone may take
        it all).
    """
    eps = check_epsilon(epsilon)
    dlt = check_delta(delta)

    def account(sigma: float) -> DPSGDAccounting:
        return DPSGDAccounting(sampling_rate, sigma, steps, histogram_sigma, accountant)

    def gap(log_sigma: float) -> float:
        return account(math.exp(log_sigma)).epsilon(dlt) - eps

    lo = hi = 1.0
    if gap(0.0) > 0:
        while gap(math.log(hi)) > 0:
            lo, hi = hi, 2.0 * hi
            if hi > MAX_NOISE_MULTIPLIER:
                raise ParameterError(
                    f"epsilon: {eps:g} at delta {dlt:g} cannot be met by {steps} steps at "
                    f"sampling rate {sampling_rate:g} with a noise multiplier up to "
                    f"{MAX_NOISE_MULTIPLIER:g}"
                )
    else:
        while gap(math.log(lo)) <= 0:
            if lo <= MIN_NOISE_MULTIPLIER:
                return account(MIN_NOISE_MULTIPLIER)
            lo, hi = max(lo / 2.0, MIN_NOISE_MULTIPLIER), lo
    root = optimize.brentq(gap, math.log(lo), math.log(hi), xtol=_CALIBRATION_TOL)
    sigma = min(math.exp(root), hi)
    while gap(math.log(sigma)) > 0:
        sigma = min(sigma * (1.0 + _CALIBRATION_TOL), hi)
    return account(sigma)


class PoissonBatches:
    """The batch of every step, each record in it independently with probability q.

    Each step's size is drawn from Binomial(n, q) and its records as a uniform subset
    of that size: together exactly Poisson sampling. All sizes are drawn up front so
    that every step can be padded to the largest (``capacity``) with a 0/1 mask, which
    gives JAX one shape; the padding depends on the draws only.

    Parameters
    ----------
    n : int
        Records.
    sampling_rate : float
        q, in (0, 1].
    steps : int
        Steps T.
    rng : numpy.random.Generator
        The :mod:`veil.rng` generator the batches are drawn from.
    """

    def __init__(self, n: int, sampling_rate: float, steps: int, rng: np.random.Generator):
        self.n = int(n)
        self.rng = rng
        self.sizes = rng.binomial(self.n, sampling_rate, size=int(steps)).astype(np.int64)
        self.capacity = max(1, int(self.sizes.max()))

    def draw(self, start: int, stop: int) -> tuple[npt.NDArray[np.int32], npt.NDArray[np.float32]]:
        """Indices ``(stop - start, capacity)`` and mask of steps ``start`` to ``stop``."""
        idx = np.zeros((stop - start, self.capacity), dtype=np.int32)
        mask = np.zeros((stop - start, self.capacity), dtype=np.float32)
        for row, size in enumerate(self.sizes[start:stop]):
            idx[row, :size] = self.rng.choice(self.n, size=int(size), replace=False)
            mask[row, :size] = 1.0
        return idx, mask


def gaussian_noise(rng: np.random.Generator, shape: tuple[int, ...]) -> npt.NDArray[np.float32]:
    """Standard normal noise from a :mod:`veil.rng` generator, in float32 for JAX."""
    return rng.standard_normal(shape, dtype=np.float32)


def per_example_gradients(loss: Callable[[Any, Any], Any], params: Any, batch: Any) -> Any:
    """Each row's gradient of ``loss(params, row)``, flattened: shape ``(rows, P)``.

    ``jax.vmap`` of ``jax.grad`` over the rows of ``batch``; the parameters are
    flattened in ``jax.flatten_util.ravel_pytree`` order.
    """
    import jax
    from jax.flatten_util import ravel_pytree

    grads = jax.vmap(jax.grad(loss), in_axes=(None, 0))(params, batch)
    return jax.vmap(lambda g: ravel_pytree(g)[0])(grads)


def clip_rows(grads: Any, clip_norm: float) -> Any:
    """Each row scaled to L2 norm at most ``clip_norm`` (rows within it unchanged)."""
    import jax.numpy as jnp

    norms = jnp.sqrt(jnp.sum(grads * grads, axis=1, keepdims=True))
    return grads * jnp.minimum(1.0, clip_norm / jnp.maximum(norms, 1e-12))


def noisy_clipped_sum(
    grads: Any, mask: Any, clip_norm: float, noise: Any, noise_multiplier: float
) -> Any:
    """``sum_i mask_i clip(g_i) + σ C ξ``: one step of the sampled Gaussian mechanism.

    ``grads`` are per-example gradients ``(rows, P)``, ``mask`` marks the sampled rows
    (padding is 0), ``noise`` is ξ, standard normal of shape ``(P,)`` drawn by
    :func:`gaussian_noise`.
    """
    clipped = clip_rows(grads, clip_norm) * mask[:, None]
    return clipped.sum(axis=0) + (noise_multiplier * clip_norm) * noise
