"""Graphical-model estimation from noisy marginals, with mbi 2.0 (Private-PGM).

mbi (McKenna, Sheldon and Miklau, "Graphical-model based estimation and inference for
differential privacy", ICML 2019) only post-processes measurements that veil has already
made and paid for: it finds the potentials whose marginals best fit the noisy counts
(mirror descent on the L2 loss weighted by 1/σ). It sees no record and draws nothing at
random. It runs in JAX's 64-bit mode, inside a scoped ``jax.enable_x64`` context, as mbi
recommends for precision; JAX's global setting is left as it was.

Measurements of the same clique are merged by inverse-variance weighting before they
reach mbi (a sufficient statistic for Gaussian noise: the loss differs by a constant),
so re-measuring a clique does not change the structure JAX compiles for.
"""

from __future__ import annotations

import contextlib
import warnings
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from veil.synth.measure import Measurement

__all__ = ["EXTRA_HINT", "Estimate", "estimate", "merge", "require_mbi"]

FloatArray = npt.NDArray[np.float64]

EXTRA_HINT = "pip install 'veil[synth]'"


def require_mbi() -> Any:
    """Import mbi (and JAX), or explain how to install them."""
    try:
        with warnings.catch_warnings():
            # mbi warns at import when JAX is in float32 mode; veil runs it in x64.
            warnings.filterwarnings("ignore", message="JAX is running in float32", module="mbi")
            # The persistent cache is JAX's setting to make; mbi only advises on it.
            warnings.filterwarnings(
                "ignore", message="JAX persistent compilation cache", module="mbi"
            )
            import mbi
    except ImportError as exc:
        raise ImportError(
            f"veil.synth's MST and AIM need mbi 2.0 and JAX: {EXTRA_HINT}", name="mbi"
        ) from exc
    return mbi


@contextlib.contextmanager
def _x64() -> Iterator[None]:
    import jax

    with jax.enable_x64(True):
        yield


def merge(measurements: Sequence[Measurement]) -> list[Measurement]:
    """One measurement per clique: inverse-variance weighted mean of its repeats."""
    by_clique: dict[tuple[str, ...], list[Measurement]] = {}
    for m in measurements:
        by_clique.setdefault(m.clique, []).append(m)
    merged = []
    for clique, group in by_clique.items():
        if len(group) == 1:
            merged.append(group[0])
            continue
        if any(m.weights is not None for m in group):
            raise ValueError(f"merge: a weighted measurement of {clique} cannot be merged")
        weights = np.array([1.0 / (m.sigma * m.sigma) for m in group])
        noisy = sum(w * m.noisy for w, m in zip(weights, group, strict=True))
        merged.append(
            Measurement(clique, np.asarray(noisy / weights.sum()), float(weights.sum() ** -0.5))
        )
    return merged


@dataclass(frozen=True)
class _WeightedQuery:
    """``datavector * weights``, hashed by value so that JAX reuses its compilations."""

    weights: tuple[float, ...]

    def __call__(self, factor: Any) -> Any:
        import jax.numpy as jnp

        return factor.datavector() * jnp.asarray(self.weights)

    def op_norm_sq(self) -> float:
        return max(w * w for w in self.weights)


def _linear(mbi: Any, m: Measurement) -> Any:
    noisy = np.asarray(m.noisy, np.float64).ravel()
    if m.weights is None:
        return mbi.LinearMeasurement(noisy, m.clique, stddev=m.sigma)
    weights = np.asarray(m.weights, np.float64).ravel()
    query = _WeightedQuery(tuple(float(w) for w in weights))
    return mbi.LinearMeasurement(noisy * weights, m.clique, stddev=m.sigma, query=query)


@dataclass
class Estimate:
    """Potentials fitted by mbi, as NumPy tables, and the handle for a warm start."""

    potentials: dict[tuple[str, ...], FloatArray]
    total: float
    handle: Any


def estimate(
    sizes: Mapping[str, int],
    measurements: Sequence[Measurement],
    *,
    iters: int,
    warm_start: Estimate | None = None,
) -> Estimate:
    """Fit potentials to the measurements (mbi's mirror descent, ``iters`` steps)."""
    mbi = require_mbi()
    from mbi import estimation

    names = list(sizes)
    domain = mbi.Domain(names, [int(sizes[c]) for c in names])
    linear = [_linear(mbi, m) for m in merge(measurements)]
    with _x64():
        model = estimation.MirrorDescent().estimate(
            domain,
            linear,
            iters=iters,
            warm_start=None if warm_start is None else warm_start.handle,
        )
        potentials = {}
        for clique in model.potentials.cliques:
            factor = model.potentials[clique]
            axes = tuple(factor.domain.attributes)
            table = np.asarray(factor.values, dtype=np.float64)
            potentials[tuple(clique)] = np.transpose(table, [axes.index(a) for a in clique])
        total = float(model.total)
    return Estimate(potentials, total, model)
