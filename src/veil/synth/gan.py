"""DP-WGAN: a conditional Wasserstein GAN whose critic learns under DP-SGD (JAX, optax).

The DP-WGAN of OptimShare (Xie, Lin, Wang, Wang and Zhou, "Differentially private
generative adversarial network", arXiv:1802.06739, 2018): a Wasserstein GAN (Arjovsky,
Chintala and Bottou, ICML 2017) whose critic keeps its Lipschitz bound by weight
clipping and is the only part that reads the records. Its gradients on the records are
privatized with DP-SGD (:mod:`veil.synth.dpsgd`): Poisson-sampled batches, per-example
clipping (``jax.vmap``) and Gaussian noise. Xie et al. bound the gradient through the
weight clipping and noise the batch gradient under the moments accountant; veil clips
each record's gradient explicitly, as Abadi et al. (2016) do, so that the bound does
not rest on an analysis of the network. The generator learns only through the critic,
so its updates are post-processing, and the generator kept is the moving average of
its iterates (also post-processing).

Columns: a numeric column is scaled to [-1, 1] by its public bounds (never by the data's
minimum and maximum) and generated through ``tanh``; a declared missing value adds a
present/missing pair; a categorical column is one-hot and generated through a softmax,
a category being drawn from the softmax when sampling.

Conditional generation (OptimShare keeps its attributes Q exact): with
``condition=Q``, the generator and the critic both read the encoded Q of each row. In a
critic step each sampled record brings a fake row generated for its own Q, and the
pair's gradient is clipped and noised as one, so the critic compares real and fake rows
of the same Q inside the mechanism. The generator's own steps draw Q from a noisy table
of Q's cells (discrete Gaussian counts, composed in the same account), never from the
records, so they stay post-processing. ``sample(given=q)`` keeps ``q`` exactly and
generates the other columns for each row's Q; without ``given``, Q comes from the table.

Unconditional, every critic step pairs each sampled record with one fake row in the
same way (Q is then empty).

Guarantee: the fitted model, and every sample drawn from it, is (ε, δ)-DP for adding or
removing one record, where (ε, δ) is :attr:`DPWGANModel.cost`: what ``dp-accounting``
reports for the Q table and the DP-SGD steps actually run, never above the budget
(:func:`veil.synth.dpsgd.calibrate_noise`). The number of records sets the sampling
rate and is treated as public, as in DP-SGD (listed in :attr:`DPWGANModel.leaks`).
"""

from __future__ import annotations

import dataclasses
import functools
import itertools
import math
import numbers
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from types import ModuleType
from typing import Any, Literal

import numpy as np
import numpy.typing as npt
import pandas as pd

from veil.errors import DataTypeError, ParameterError
from veil.mechanisms import PrivacyCost, sample_discrete_gaussian
from veil.rng import RngLike, resolve_rng
from veil.synth.accounting import rho_from_epsilon
from veil.synth.base import (
    Synthesizer,
    SynthModel,
    check_fit_input,
    check_sample_input,
    with_domain_costs,
)
from veil.synth.domain import CategoricalColumn, IntArray, NumericColumn, TableDomain
from veil.synth.dpsgd import (
    ACCOUNTANTS,
    Accountant,
    DPSGDAccounting,
    PoissonBatches,
    calibrate_noise,
    check_int,
    check_real,
    gaussian_noise,
    noisy_clipped_sum,
    per_example_gradients,
    require_gan,
)
from veil.synth.measure import contingency

__all__ = ["DPWGAN", "MAX_CONDITION_CELLS", "DPWGANModel"]

FloatArray = npt.NDArray[np.float64]
F32Array = npt.NDArray[np.float32]
Params = list[tuple[Any, Any]]

MAX_CONDITION_CELLS = 1_000_000
"""Largest table of Q cells a conditional DP-WGAN measures."""

# Training rounds (a generator step and its critic steps) per jitted chunk: bounds the
# noise and batch arrays drawn ahead of JAX (rounds x critic_steps x parameters).
_CHUNK_ROUNDS = 64
_LEAKY_SLOPE = 0.2


@dataclass(frozen=True)
class _Block:
    """Features ``start : start + width`` of one column: a value, categories, missing."""

    column: str
    kind: Literal["value", "category", "missing"]
    start: int
    width: int


class _Layout:
    """The feature encoding of some columns of a public domain."""

    def __init__(self, domain: TableDomain, names: Sequence[str]) -> None:
        blocks: list[_Block] = []
        start = 0
        for name in names:
            col = domain.columns[name]
            if isinstance(col, CategoricalColumn):
                blocks.append(_Block(name, "category", start, col.size))
                start += col.size
                continue
            blocks.append(_Block(name, "value", start, 1))
            start += 1
            if col.missing:
                blocks.append(_Block(name, "missing", start, 2))
                start += 2
        self.domain = domain
        self.names = tuple(names)
        self.blocks = tuple(blocks)
        self.width = start

    def features(
        self, codes: Mapping[str, IntArray], values: Mapping[str, FloatArray], n: int
    ) -> F32Array:
        """Rows of features: numeric values by the public bounds, categories one-hot."""
        out = np.zeros((n, self.width), dtype=np.float32)
        rows = np.arange(n)
        for b in self.blocks:
            col = self.domain.columns[b.column]
            if b.kind == "category":
                out[rows, b.start + codes[b.column]] = 1.0
            elif b.kind == "missing":
                assert isinstance(col, NumericColumn)
                out[rows, b.start + (codes[b.column] >= col.bins)] = 1.0
            else:
                assert isinstance(col, NumericColumn)
                x = np.clip(values[b.column], col.lower, col.upper)
                width = col.upper - col.lower
                scaled = 2.0 * (x - col.lower) / width - 1.0 if width > 0 else 0.0 * x
                out[:, b.start] = np.where(np.isnan(scaled), 0.0, scaled)
        return out

    def decode(self, out: FloatArray, rng: np.random.Generator) -> dict[str, Any]:
        """Column values of activated generator rows (categories drawn from the softmax)."""
        values: dict[str, Any] = {}
        missing: dict[str, npt.NDArray[np.bool_]] = {}
        for b in self.blocks:
            col = self.domain.columns[b.column]
            part = out[:, b.start : b.start + b.width]
            if b.kind == "value":
                assert isinstance(col, NumericColumn)
                x = col.lower + (np.clip(part[:, 0], -1.0, 1.0) + 1.0) / 2.0 * (
                    col.upper - col.lower
                )
                if col.integer:
                    lo, hi = math.ceil(col.lower), math.floor(col.upper)
                    x = np.clip(np.rint(x), lo, hi)
                values[b.column] = x
            elif b.kind == "missing":
                missing[b.column] = _draw_rows(part, rng) == 1
            else:
                codes = {b.column: _draw_rows(part, rng)}
                values[b.column] = self.domain.decode(codes, rng)[b.column]
        for name in self.names:
            col = self.domain.columns[name]
            if isinstance(col, NumericColumn):
                x = values[name]
                if name in missing and missing[name].any():
                    values[name] = np.where(missing[name], np.nan, x)
                elif col.integer:
                    values[name] = x.astype(np.int64)
        return values


def _draw_rows(probs: FloatArray, rng: np.random.Generator) -> IntArray:
    """One index per row, drawn from the row's probabilities (inverse CDF)."""
    cdf = np.cumsum(probs, axis=1)
    cdf /= cdf[:, -1:]
    u = rng.random((probs.shape[0], 1))
    return np.asarray(np.minimum((cdf < u).sum(axis=1), probs.shape[1] - 1), dtype=np.int64)


def _forward(xp: ModuleType, params: Params, x: Any) -> Any:
    """A leaky-ReLU perceptron (the same code runs on NumPy and on JAX arrays)."""
    for w, b in params[:-1]:
        x = x @ w + b
        x = xp.maximum(x, _LEAKY_SLOPE * x)
    w, b = params[-1]
    return x @ w + b


def _activate(xp: ModuleType, raw: Any, blocks: Sequence[_Block]) -> Any:
    """``tanh`` for a numeric value, a softmax over each categorical or missing block."""
    parts = []
    for b in blocks:
        seg = raw[:, b.start : b.start + b.width]
        if b.kind == "value":
            parts.append(xp.tanh(seg))
        else:
            e = xp.exp(seg - seg.max(axis=1, keepdims=True))
            parts.append(e / e.sum(axis=1, keepdims=True))
    return xp.concatenate(parts, axis=1)


def _init(rng: np.random.Generator, sizes: Sequence[int]) -> Params:
    """Glorot-uniform float32 weights and zero biases (no privacy role)."""
    params: Params = []
    for fan_in, fan_out in itertools.pairwise(sizes):
        limit = math.sqrt(6.0 / (fan_in + fan_out))
        w = rng.uniform(-limit, limit, (fan_in, fan_out)).astype(np.float32)
        params.append((w, np.zeros(fan_out, np.float32)))
    return params


@dataclass(frozen=True)
class _ConditionTable:
    """Noisy counts of Q's cells (discrete Gaussian, σ), normalized: where fake Q come from."""

    columns: tuple[str, ...]
    shape: tuple[int, ...]
    probs: FloatArray
    total: float
    sigma: float

    @classmethod
    def measure(
        cls,
        codes: Mapping[str, IntArray],
        columns: Sequence[str],
        sizes: Mapping[str, int],
        sigma: float,
        rng: np.random.Generator,
    ) -> _ConditionTable:
        counts = contingency(codes, columns, sizes).ravel()
        noisy = (counts + sample_discrete_gaussian(sigma, counts.size, rng)).astype(np.float64)
        clipped = np.clip(noisy, 0.0, None)
        mass = clipped.sum()
        probs = clipped / mass if mass > 0 else np.full(clipped.size, 1.0 / clipped.size)
        shape = tuple(int(sizes[c]) for c in columns)
        return cls(tuple(columns), shape, probs, float(noisy.sum()), float(sigma))

    def draw(self, count: int, rng: np.random.Generator) -> dict[str, IntArray]:
        """Codes of ``count`` cells drawn from the noisy table."""
        cdf = np.cumsum(self.probs)
        cdf[-1] = 1.0
        flat = np.searchsorted(cdf, rng.random(count), side="right")
        cells = np.unravel_index(np.minimum(flat, self.probs.size - 1), self.shape)
        return {c: np.asarray(v, dtype=np.int64) for c, v in zip(self.columns, cells, strict=True)}


@dataclass(frozen=True)
class _Plan:
    """What one fit trains with: layouts, data features, the account and the Q table."""

    s_layout: _Layout
    c_layout: _Layout
    real: F32Array
    accounting: DPSGDAccounting
    table: _ConditionTable | None
    batch: int


@dataclass(frozen=True)
class _Config:
    """Everything the jitted training reads as a constant (hashable: JAX reuses its
    compilation across fits of the same settings and shapes, as a search over (ε, δ)
    does; the noise multiplier is an argument, not a constant)."""

    blocks: tuple[_Block, ...]
    s_width: int
    latent_dim: int
    batch: int
    clip_norm: float
    weight_clip: float
    learning_rate: float
    average: float


def _optimizer(cfg: _Config) -> Any:
    import optax

    return optax.rmsprop(cfg.learning_rate)


def _initial(cfg: _Config, critic: Params, gen: Params, seed: Any) -> Any:
    import jax

    opt = _optimizer(cfg)
    return (critic, opt.init(critic), gen, opt.init(gen), jax.random.key(seed), gen)


def _fake(cfg: _Config, gen: Params, z: Any, cond: Any) -> Any:
    """Generated rows (activated) next to their Q features."""
    import jax.numpy as jnp

    raw = _forward(jnp, gen, jnp.concatenate([z, cond], axis=1))
    return jnp.concatenate([_activate(jnp, raw, cfg.blocks), cond], axis=1)


def _critic_step(cfg: _Config, data: Any, sigma: Any, carry: Any, xs: Any) -> Any:
    """One DP-SGD step of the critic on ``mean D(fake) - mean D(real)``.

    Each sampled record i brings its own term ``D(q_i, G(z_i, q_i)) - D(q_i, s_i)``: a
    fake row generated for the record's Q next to the record. The term's gradient is
    clipped as one and the sum noised (the sampled Gaussian mechanism), so the fake
    rows, which read q_i, stay inside the mechanism, and the critic compares real and
    fake rows of the same Q.
    """
    import jax
    import jax.numpy as jnp
    import optax
    from jax.flatten_util import ravel_pytree

    critic, state, gen, key = carry
    idx, mask, noise = xs
    key, sub = jax.random.split(key)
    real = data[idx]
    z = jax.random.normal(sub, (idx.shape[0], cfg.latent_dim))
    fake = _fake(cfg, gen, z, real[:, cfg.s_width :])

    def loss(p: Params, pair: Any) -> Any:
        return jnp.sum(_forward(jnp, p, pair) * jnp.array([[1.0], [-1.0]]))

    grads = per_example_gradients(loss, critic, jnp.stack([fake, real], axis=1))
    private = noisy_clipped_sum(grads, mask, cfg.clip_norm, noise, sigma)
    total = ravel_pytree(critic)[1](private / cfg.batch)
    updates, state = _optimizer(cfg).update(total, state, critic)
    critic = optax.apply_updates(critic, updates)
    bound = cfg.weight_clip
    critic = jax.tree_util.tree_map(lambda w: jnp.clip(w, -bound, bound), critic)
    return (critic, state, gen, key), None


def _round(cfg: _Config, data: Any, sigma: Any, carry: Any, xs: Any) -> Any:
    """The critic steps of one round, then one generator step (post-processing)."""
    import jax
    import jax.numpy as jnp
    import optax

    active, idx, mask, noise, cond_gen = xs
    critic, c_state, gen, g_state, key, average = carry
    (critic, c_state, _, key), _ = jax.lax.scan(
        functools.partial(_critic_step, cfg, data, sigma),
        (critic, c_state, gen, key),
        (idx, mask, noise),
    )
    key, sub = jax.random.split(key)
    z = jax.random.normal(sub, (cfg.batch, cfg.latent_dim))

    def gen_loss(g: Params) -> Any:
        return -jnp.mean(_forward(jnp, critic, _fake(cfg, g, z, cond_gen)))

    updates, g_state = _optimizer(cfg).update(jax.grad(gen_loss)(gen), g_state, gen)
    gen = optax.apply_updates(gen, updates)
    # The generator that is kept is an exponential moving average of its iterates.
    d = cfg.average
    average = jax.tree_util.tree_map(lambda a, g: d * a + (1 - d) * g, average, gen)
    new = (critic, c_state, gen, g_state, key, average)
    # A padding round of the last chunk changes nothing (and is not counted).
    return jax.tree_util.tree_map(lambda a, b: jnp.where(active, a, b), new, carry), None


def _rounds(cfg: _Config, carry: Any, data: Any, sigma: Any, xs: Any) -> Any:
    import jax

    return jax.lax.scan(functools.partial(_round, cfg, data, sigma), carry, xs)[0]


@functools.cache
def _jitted() -> tuple[Any, Any]:
    """The jitted start and chunk of training (built once, on first use of JAX)."""
    import jax

    return jax.jit(_initial, static_argnums=0), jax.jit(_rounds, static_argnums=0)


# Batch capacities are rounded up to a multiple of this, so that fits of the same
# settings on the same data (a search over (ε, δ)) share one compilation.
_CAPACITY_STEP = 32


class _Trainer:
    """Draws every step's batch, noise and fake Q from veil.rng and runs the chunks."""

    def __init__(self, synth: DPWGAN, plan: _Plan, rng: np.random.Generator) -> None:
        self.synth, self.plan = synth, plan
        s_width, c_width = plan.s_layout.width, plan.c_layout.width
        hidden = list(synth.hidden)
        self.critic = _init(rng, [s_width + c_width, *hidden, 1])
        self.generator = _init(rng, [synth.latent_dim + c_width, *hidden, s_width])
        # JAX's PRNG draws only the generator's latent noise (no privacy role).
        self.seed = np.uint32(rng.integers(2**32))
        self.n_params = sum(w.size + b.size for w, b in self.critic)
        self.config = _Config(
            plan.s_layout.blocks,
            plan.s_layout.width,
            synth.latent_dim,
            plan.batch,
            synth.clip_norm,
            synth.weight_clip,
            synth.learning_rate,
            synth.average,
        )

    def run(self, batches: PoissonBatches, rng: np.random.Generator) -> int:
        """Train every round; returns the DP-SGD steps run."""
        start_fn, chunk_fn = _jitted()
        rounds, k = self.synth.steps, self.synth.critic_steps
        size = min(rounds, _CHUNK_ROUNDS)
        sigma = np.float32(self.plan.accounting.noise_multiplier)
        capacity = -(-batches.capacity // _CAPACITY_STEP) * _CAPACITY_STEP
        carry = start_fn(self.config, self.critic, self.generator, self.seed)
        steps_run = 0
        for start in range(0, rounds, size):
            live = min(size, rounds - start)
            idx, mask = batches.draw(start * k, (start + live) * k)
            pad = ((0, (size - live) * k), (0, capacity - batches.capacity))
            idx = np.pad(idx, pad).reshape(size, k, capacity)
            mask = np.pad(mask, pad).reshape(size, k, capacity)
            noise = np.zeros((size, k, self.n_params), dtype=np.float32)
            noise[:live] = gaussian_noise(rng, (live, k, self.n_params))
            cond = self._conditions(size, rng).reshape(size, self.plan.batch, -1)
            active = np.arange(size) < live
            xs = (active, idx, mask, noise, cond)
            carry = chunk_fn(self.config, carry, self.plan.real, sigma, xs)
            steps_run += live * k
        self.generator = carry[5]
        return steps_run

    def _conditions(self, groups: int, rng: np.random.Generator) -> F32Array:
        """Encoded Q of ``groups`` generator batches, drawn from the noisy Q table."""
        count = groups * self.plan.batch
        layout, table = self.plan.c_layout, self.plan.table
        if table is None:
            return np.zeros((count, 0), dtype=np.float32)
        codes = table.draw(count, rng)
        values = layout.domain.project(layout.names).decode(codes, rng)
        return layout.features(codes, values, count)


class DPWGAN(Synthesizer):
    """DP-WGAN (Xie et al. 2018) with DP-SGD on the critic, optionally conditional on Q.

    The training runs ``steps`` rounds; each round takes ``critic_steps`` DP-SGD steps
    of the critic (Poisson batches of expected size ``batch_size``, per-example
    gradients clipped to ``clip_norm``, Gaussian noise of σ·clip_norm, the noise
    multiplier σ calibrated before training so that the whole fit meets (ε, δ)), then
    one generator step. Both networks use RMSProp and leaky-ReLU layers ``hidden``; the
    critic's weights are clipped to ``[-weight_clip, weight_clip]`` after each step.

    Parameters
    ----------
    condition : sequence of str, default ()
        Columns Q that :meth:`DPWGANModel.sample` takes as ``given`` (kept exact) and
        that the networks condition on. Their joint cells are measured once with
        discrete Gaussian noise, spending about ``condition_share`` of ε.
    steps : int, default 300
        Generator steps (rounds); the DP-SGD steps are ``steps * critic_steps``.
    critic_steps : int, default 5
        Critic steps per generator step.
    batch_size : int, default 64
        Expected batch size B; the sampling rate is ``q = B / n``.
    clip_norm : float, default 1.0
        L2 bound C of each record's critic gradient.
    weight_clip : float, default 0.1
        Bound of every critic weight (the WGAN's Lipschitz constraint).
    learning_rate : float, default 1e-3
        RMSProp step size of both networks.
    hidden : sequence of int, default (64, 64)
        Hidden layer widths of both networks.
    latent_dim : int, default 16
        Dimension of the generator's Gaussian input.
    condition_share : float, default 0.1
        Share of ε the Q table would cost on its own, in (0, 1) (its σ is set from it;
        the noise multiplier is then calibrated on the composition).
    accountant : {"rdp", "pld"}, default "rdp"
        ``dp-accounting``'s RDP accountant, or privacy loss distributions (tighter,
        several seconds per evaluation, so the calibration is slower).

    Notes
    -----
    A fit compiles the training with JAX once per settings and table shape (seconds
    to tens of seconds); fits that share both, as a search over (ε, δ) does, reuse it.
    Typical use, with Q kept exact::

        model = DPWGAN(condition=["sex", "race"]).fit(data, domain, 1.0, 1e-6)
        release = model.sample(given=data[["sex", "race"]])

    Examples
    --------
    >>> from veil.synth import DPWGAN, make_synthesizer
    >>> synth = make_synthesizer("dpwgan", condition=["sex"], steps=200)
    >>> synth.settings() == DPWGAN(condition=["sex"], steps=200).settings()
    True
    """

    name = "dpwgan"

    def __init__(
        self,
        *,
        condition: Sequence[str] = (),
        steps: int = 300,
        critic_steps: int = 5,
        batch_size: int = 64,
        clip_norm: float = 1.0,
        weight_clip: float = 0.1,
        learning_rate: float = 1e-3,
        average: float = 0.99,
        hidden: Sequence[int] = (64, 64),
        latent_dim: int = 16,
        condition_share: float = 0.1,
        accountant: Accountant = "rdp",
    ) -> None:
        if isinstance(condition, (str, bytes)) or not all(isinstance(c, str) for c in condition):
            raise ParameterError(f"condition: must be a list of column names, got {condition!r}")
        if len(set(condition)) != len(condition):
            raise ParameterError(f"condition: column names must be unique, got {condition!r}")
        self.condition: tuple[str, ...] = tuple(condition)
        self.steps: int = check_int(steps, "steps", 1)
        self.critic_steps: int = check_int(critic_steps, "critic_steps", 1)
        self.batch_size: int = check_int(batch_size, "batch_size", 1)
        self.clip_norm: float = check_real(clip_norm, "clip_norm", 0.0)
        self.weight_clip: float = check_real(weight_clip, "weight_clip", 0.0)
        self.learning_rate: float = check_real(learning_rate, "learning_rate", 0.0)
        if not (isinstance(average, numbers.Real) and 0.0 <= average < 1.0):
            raise ParameterError(f"average: must be a real number in [0, 1), got {average!r}")
        self.average: float = float(average)
        if isinstance(hidden, (str, bytes)) or len(hidden) == 0:
            raise ParameterError(f"hidden: must be a non-empty list of widths, got {hidden!r}")
        self.hidden: tuple[int, ...] = tuple(check_int(h, "hidden", 1) for h in hidden)
        self.latent_dim: int = check_int(latent_dim, "latent_dim", 1)
        self.condition_share: float = check_real(condition_share, "condition_share", 0.0, 1.0)
        if accountant not in ACCOUNTANTS:
            raise ParameterError(
                f"accountant: must be one of {list(ACCOUNTANTS)}, got {accountant!r}"
            )
        self.accountant: Accountant = accountant

    def for_given(self, columns: Sequence[str]) -> DPWGAN:
        """A copy conditioned on ``columns`` when no condition was chosen, else ``self``.

        The networks read the encoded given columns, so a model sampled given Q must
        be fitted conditional on Q; a condition chosen by the caller is kept (sampling
        then checks it matches what is given).
        """
        if self.condition:
            return self
        return DPWGAN(**{**self.settings(), "condition": list(columns)})

    def settings(self) -> dict[str, Any]:
        """The constructor's settings (plain Python, for a manifest)."""
        return {
            "condition": list(self.condition),
            "steps": self.steps,
            "critic_steps": self.critic_steps,
            "batch_size": self.batch_size,
            "clip_norm": self.clip_norm,
            "weight_clip": self.weight_clip,
            "learning_rate": self.learning_rate,
            "average": self.average,
            "hidden": list(self.hidden),
            "latent_dim": self.latent_dim,
            "condition_share": self.condition_share,
            "accountant": self.accountant,
        }

    def fit(
        self,
        data: pd.DataFrame,
        domain: TableDomain | Mapping[str, Any],
        epsilon: float,
        delta: float,
        *,
        rng: RngLike = None,
    ) -> DPWGANModel:
        """Train the DP-WGAN; see :meth:`veil.synth.Synthesizer.fit`.

        Raises
        ------
        ImportError
            JAX, optax or dp-accounting is not installed (the message gives the pip
            command).
        veil.errors.ParameterError, veil.errors.ColumnError, veil.errors.DomainError,
        veil.errors.MissingValueError
            Bad ε or δ, a ``condition`` outside the domain or covering every column,
            too many Q cells, a ``batch_size`` above the number of records, or data the
            domain does not cover.
        """
        require_gan()
        inp = check_fit_input(data, domain, epsilon, delta)
        inp.domain.check_names(list(self.condition), "condition")
        synth_cols = [c for c in inp.domain.names if c not in self.condition]
        if not synth_cols:
            raise ParameterError(
                f"condition: {list(self.condition)} covers every column of the domain; "
                "leave at least one to generate"
            )
        if self.batch_size > inp.n:
            raise ParameterError(
                f"batch_size: {self.batch_size} is above the {inp.n} records of data"
            )
        gen = resolve_rng(rng)
        plan = self._plan(data, inp.domain, inp.codes, synth_cols, inp.epsilon, inp.delta, gen)
        trainer = _Trainer(self, plan, gen)
        total_steps = self.steps * self.critic_steps
        batches = PoissonBatches(inp.n, plan.accounting.sampling_rate, total_steps, gen)
        steps_run = trainer.run(batches, gen)
        spent = plan.accounting.epsilon(inp.delta, steps_run)
        scope = ", ".join(inp.domain.names)
        mechanism = "DP-WGAN (DP-SGD on the critic, Poisson sampling, Gaussian noise)"
        cost = with_domain_costs(
            PrivacyCost(spent, inp.delta, "dp-synthetic", "dataset", scope, mechanism), inp.domain
        )
        details = {
            "method": "DP-WGAN",
            "settings": self.settings(),
            "accounting": {
                **plan.accounting.to_dict(),
                "steps_run": steps_run,
                "target_epsilon": inp.epsilon,
                "delta": inp.delta,
                "epsilon_spent": spent,
            },
        }
        params = [
            (np.asarray(w, np.float64), np.asarray(b, np.float64)) for w, b in trainer.generator
        ]
        return DPWGANModel(inp.domain, plan, params, inp.n, cost, details, self.latent_dim)

    def _plan(
        self,
        data: pd.DataFrame,
        domain: TableDomain,
        codes: Mapping[str, IntArray],
        synth_cols: Sequence[str],
        epsilon: float,
        delta: float,
        rng: np.random.Generator,
    ) -> _Plan:
        """Features of the records, the Q table (measured now) and the calibrated σ."""
        n = len(data)
        values = {
            c: data[c].to_numpy(dtype=np.float64, na_value=np.nan)
            for c in domain.names
            if isinstance(domain.columns[c], NumericColumn)
        }
        s_layout, c_layout = _Layout(domain, synth_cols), _Layout(domain, self.condition)
        real = np.concatenate(
            [s_layout.features(codes, values, n), c_layout.features(codes, values, n)], axis=1
        )
        table = None
        hist_sigma = None
        if self.condition:
            cells = math.prod(domain.sizes[c] for c in self.condition)
            if cells > MAX_CONDITION_CELLS:
                raise ParameterError(
                    f"condition: {list(self.condition)} has {cells} joint cells, above "
                    f"{MAX_CONDITION_CELLS}; condition on fewer columns or coarser bins"
                )
            hist_sigma = math.sqrt(0.5 / rho_from_epsilon(self.condition_share * epsilon, delta))
            table = _ConditionTable.measure(codes, self.condition, domain.sizes, hist_sigma, rng)
        accounting = calibrate_noise(
            epsilon,
            delta,
            self.batch_size / n,
            self.steps * self.critic_steps,
            histogram_sigma=hist_sigma,
            accountant=self.accountant,
        )
        return _Plan(s_layout, c_layout, real, accounting, table, self.batch_size)


class DPWGANModel(SynthModel):
    """A fitted DP-WGAN: the generator's weights, the Q table and what the fit spent.

    Sampling runs the generator in NumPy with latent noise and category draws from
    :mod:`veil.rng` (post-processing: no further cost, no JAX needed).
    """

    def __init__(
        self,
        domain: TableDomain,
        plan: _Plan,
        generator: Params,
        n: int,
        cost: PrivacyCost,
        details: Mapping[str, Any],
        latent_dim: int,
    ) -> None:
        self._domain = domain
        self._cost = cost
        self.generator = generator
        self.condition = plan.c_layout.names
        self.details = dict(details)
        self._s_layout, self._c_layout = plan.s_layout, plan.c_layout
        self._table = plan.table
        self._n = n
        self._latent = latent_dim

    @property
    def cost(self) -> PrivacyCost:
        return self._cost

    @property
    def domain(self) -> TableDomain:
        return self._domain

    @property
    def leaks(self) -> tuple[str, ...]:
        return (
            *self.domain.leaks,
            f"the number of records ({self._n}): it sets the DP-SGD sampling rate q = "
            "batch_size / n (and an unconditional model's default sample size) and is "
            "treated as public, as DP-SGD does",
        )

    def sample(
        self,
        n: int | None = None,
        *,
        given: pd.DataFrame | None = None,
        rng: RngLike = None,
    ) -> pd.DataFrame:
        """Draw records; with ``given`` (exactly the ``condition`` columns), for each row's Q.

        See :meth:`veil.synth.SynthModel.sample`. Without ``given``, a conditional model
        draws Q from its noisy Q table. Numeric values lie within the public bounds
        (integers rounded).

        Raises
        ------
        veil.errors.ParameterError
            ``given`` is not exactly the model's ``condition`` columns, or ``n`` is not
            a positive integer or differs from ``len(given)``.
        veil.errors.ColumnError, veil.errors.DomainError, veil.errors.MissingValueError
            A given column or value outside the domain.
        """
        if given is not None:
            if not isinstance(given, pd.DataFrame):
                raise DataTypeError(
                    f"given: must be a pandas DataFrame or None, got {type(given).__name__}"
                )
            if sorted(map(str, given.columns)) != sorted(self.condition):
                raise ParameterError(
                    f"given: columns {list(given.columns)} must be exactly the columns the "
                    f"model was fitted to condition on, {list(self.condition)} (set "
                    "DPWGAN(condition=...))"
                )
        default_n = self._n if self._table is None else max(self._table.total, 1.0)
        count, given_codes, index = check_sample_input(self.domain, n, given, default_n)
        gen = resolve_rng(rng)
        codes, values = self._q_values(count, given, given_codes, gen)
        cond = self._c_layout.features(codes, values, count).astype(np.float64)
        z = gen.standard_normal((count, self._latent))
        raw = _forward(np, self.generator, np.concatenate([z, cond], axis=1))
        columns = self._s_layout.decode(_activate(np, raw, self._s_layout.blocks), gen)
        if given is not None:
            columns.update({c: given[c].to_numpy(copy=True) for c in given.columns})
        else:
            columns.update(values)  # Q drawn from the table: labels and numeric values
        out = pd.DataFrame({c: columns[c] for c in self.domain.names}, index=index.copy())
        if given is not None:
            for name in given.columns:
                out[name] = out[name].astype(given[name].dtype)
        return out

    def _q_values(
        self,
        count: int,
        given: pd.DataFrame | None,
        given_codes: dict[str, IntArray],
        rng: np.random.Generator,
    ) -> tuple[dict[str, IntArray], dict[str, Any]]:
        """Each row's Q: its codes and values, given or drawn from the noisy Q table.

        Given Q yields the numeric values only (the given frame is copied as it is);
        drawn Q yields every Q column's values.
        """
        if given is not None:
            values = {
                c: given[c].to_numpy(dtype=np.float64, na_value=np.nan)
                for c in given_codes
                if isinstance(self.domain.columns[c], NumericColumn)
            }
            return given_codes, values
        if self._table is None:
            return {}, {}
        codes = self._table.draw(count, rng)
        return codes, self.domain.project(self.condition).decode(codes, rng)

    def describe(self) -> dict[str, Any]:
        return {
            **self.details,
            "cost": {
                "epsilon": self.cost.epsilon,
                "delta": self.cost.delta,
                "notion": self.cost.notion,
                "unit": self.cost.unit,
            },
            "domain_costs": [dataclasses.asdict(c) for c in self.domain.costs],
            "condition": list(self.condition),
            "domain": self.domain.to_dict(),
            "leaks": list(self.leaks),
            "sampling": "post-processing with veil.rng: the generator run in NumPy on "
            "standard normal latent noise and the given (or, without given, noisily "
            "tabled) Q; numeric values from tanh by the public bounds, integers rounded; "
            "categories and missing values drawn from the generator's softmax",
        }
