"""A fitted graphical model in NumPy: exact marginals and (conditional) sampling.

The marginal synthesizers estimate log-potentials over a set of cliques (with mbi);
from there on everything is NumPy and :mod:`veil.rng`: marginals by variable
elimination in log space, and records drawn column by column in the reverse of an
elimination order that removes the sampled columns first. In that order each column's
conditional law given every column drawn before it (and every given column) depends
only on its neighbours at elimination time, so the draw is exact
(Koller and Friedman, "Probabilistic Graphical Models", 2009, section 9.3 and 12.1).
Given columns are eliminated last, so conditioning on them is exact too.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import numpy.typing as npt
import pandas as pd
from scipy import special

from veil.errors import ParameterError
from veil.mechanisms import PrivacyCost
from veil.rng import RngLike, resolve_rng
from veil.synth.base import SynthModel, assemble, check_sample_input
from veil.synth.domain import IntArray, TableDomain

__all__ = ["MAX_TABLE_CELLS", "GraphicalModel", "log_marginal"]

FloatArray = npt.NDArray[np.float64]
Factor = tuple[tuple[str, ...], FloatArray]

MAX_TABLE_CELLS = 20_000_000
"""Largest conditional table one sampling step may build (cells)."""


def _combine(factors: Sequence[Factor], sizes: Mapping[str, int]) -> Factor:
    """Sum of log-factors over the union of their columns."""
    attrs: list[str] = []
    for fa, _ in factors:
        attrs.extend(a for a in fa if a not in attrs)
    total = np.zeros(tuple(sizes[a] for a in attrs), dtype=np.float64)
    for fa, table in factors:
        order = sorted(range(len(fa)), key=lambda i: attrs.index(fa[i]))
        moved = np.transpose(table, order)
        shape = [sizes[a] if a in fa else 1 for a in attrs]
        total = total + moved.reshape(shape)
    return tuple(attrs), total


def _elimination_order(
    factors: Sequence[Factor], sizes: Mapping[str, int], eliminate: Sequence[str]
) -> list[tuple[str, tuple[str, ...]]]:
    """Greedy order (smallest resulting table first) and each column's neighbours then."""
    scopes = [set(fa) for fa, _ in factors]
    remaining = list(eliminate)
    order = []
    while remaining:
        best, best_cost, best_nb = "", math.inf, set()
        for z in remaining:
            nb = set().union(*[s for s in scopes if z in s]) - {z}
            cost = math.prod(sizes[a] for a in nb | {z})
            if cost < best_cost:
                best, best_cost, best_nb = z, cost, nb
        scopes = [s for s in scopes if best not in s] + [best_nb]
        remaining.remove(best)
        order.append((best, tuple(sorted(best_nb))))
    return order


def log_marginal(
    potentials: Mapping[tuple[str, ...], FloatArray],
    sizes: Mapping[str, int],
    attrs: Sequence[str],
) -> FloatArray:
    """Normalized log-probabilities of ``attrs`` (axes in that order) under the model."""
    factors: list[Factor] = [(tuple(c), np.asarray(t, np.float64)) for c, t in potentials.items()]
    present = {a for c in potentials for a in c}
    keep = list(attrs)
    # A column in no clique is uniform under the model.
    factors.extend(((a,), np.zeros(sizes[a])) for a in keep if a not in present)
    for z, _ in _elimination_order(factors, sizes, sorted(present - set(keep))):
        touching = [f for f in factors if z in f[0]]
        factors = [f for f in factors if z not in f[0]]
        fa, table = _combine(touching, sizes)
        axis = fa.index(z)
        factors.append((fa[:axis] + fa[axis + 1 :], special.logsumexp(table, axis=axis)))
    fa, table = _combine(factors, sizes)
    missing = [a for a in keep if a not in fa]
    if missing:  # pragma: no cover - every kept column has a factor by construction
        raise ParameterError(f"attrs: {missing} have no factor")
    table = np.transpose(table, [fa.index(a) for a in keep])
    return np.asarray(table - special.logsumexp(table), dtype=np.float64)


def _expand(merged: IntArray, codes: IntArray, rng: np.random.Generator) -> IntArray:
    """Each merged code drawn back as one of the codes it merged, uniformly."""
    order = np.argsort(merged, kind="stable")
    counts = np.bincount(merged)
    starts = np.concatenate([[0], np.cumsum(counts)[:-1]])
    pick = starts[codes] + np.floor(rng.random(codes.size) * counts[codes]).astype(np.int64)
    return np.asarray(order[np.minimum(pick, starts[codes] + counts[codes] - 1)], np.int64)


def _draw(cdf: FloatArray, rows: IntArray, rng: np.random.Generator) -> IntArray:
    """One category per record from row ``rows[i]`` of the cumulative table ``cdf``."""
    k = cdf.shape[1]
    flat = (cdf + np.arange(cdf.shape[0], dtype=np.float64)[:, None]).ravel()
    target = rows + rng.random(rows.size)
    position = np.searchsorted(flat, target, side="right") - rows * k
    return np.asarray(np.clip(position, 0, k - 1), dtype=np.int64)


class GraphicalModel(SynthModel):
    """A synthesizer's fitted model: log-potentials over cliques of a public domain.

    The guarantee is the one of the fit that produced it (:attr:`cost`); sampling,
    conditional or not, is post-processing.

    Parameters
    ----------
    domain : TableDomain
    potentials : mapping of clique (tuple of column names) to log-potential table
    total : float
        The fit's noisy estimate of the number of records (the default ``n``).
    cost : PrivacyCost
    details : dict
        Method, settings and accounting, for :meth:`describe`.
    compression : mapping of column to int array, optional
        For a column whose rare codes the fit merged (MST), ``compression[c][code]``
        is the merged code the potentials use; a merged code is drawn back as one of
        its codes, uniformly.
    """

    def __init__(
        self,
        domain: TableDomain,
        potentials: Mapping[tuple[str, ...], FloatArray],
        total: float,
        cost: PrivacyCost,
        details: Mapping[str, Any],
        *,
        compression: Mapping[str, IntArray] | None = None,
    ) -> None:
        self._domain = domain
        self.potentials = {tuple(c): np.asarray(t, np.float64) for c, t in potentials.items()}
        self.total = float(total)
        self._cost = cost
        self.details = dict(details)
        self.compression = {c: np.asarray(m, np.int64) for c, m in (compression or {}).items()}
        self._sizes = {
            c: int(self.compression[c].max()) + 1 if c in self.compression else k
            for c, k in domain.sizes.items()
        }

    @property
    def cost(self) -> PrivacyCost:
        return self._cost

    @property
    def domain(self) -> TableDomain:
        return self._domain

    @property
    def model_sizes(self) -> dict[str, int]:
        """Codes per column in the potentials (fewer than the domain's where merged)."""
        return dict(self._sizes)

    @property
    def cliques(self) -> list[tuple[str, ...]]:
        """The cliques the model's potentials are defined on."""
        return list(self.potentials)

    def marginal(self, attrs: Sequence[str]) -> FloatArray:
        """Probabilities of the cells of ``attrs`` under the model (sum 1).

        A merged code's probability is spread evenly over its codes.
        """
        self.domain.check_names(list(attrs), "attrs")
        table = np.exp(log_marginal(self.potentials, self._sizes, list(attrs)))
        for axis, a in enumerate(attrs):
            if a in self.compression:
                merged = self.compression[a]
                share = 1.0 / np.bincount(merged)[merged]
                shape = [1] * table.ndim
                shape[axis] = share.size
                table = np.take(table, merged, axis=axis) * share.reshape(shape)
        return np.asarray(table, dtype=np.float64)

    def sample(
        self,
        n: int | None = None,
        *,
        given: pd.DataFrame | None = None,
        rng: RngLike = None,
    ) -> pd.DataFrame:
        """Draw records; with ``given``, each row's other columns conditionally on it.

        See :meth:`veil.synth.SynthModel.sample`. Numeric columns are drawn uniformly
        within their sampled bin.

        Raises
        ------
        veil.errors.ColumnError
            ``given`` has a column outside the domain.
        veil.errors.DomainError, veil.errors.MissingValueError
            A given value lies outside its column's domain.
        veil.errors.ParameterError
            ``n`` is not a positive integer or differs from ``len(given)``, or a
            conditional table would exceed :data:`MAX_TABLE_CELLS`.
        """
        count, given_codes, index = check_sample_input(self.domain, n, given, self.total)
        gen = resolve_rng(rng)
        codes = self._sample_codes(count, given_codes, gen)
        return assemble(self.domain, codes, given, index, gen)

    def _sample_codes(
        self, n: int, given: dict[str, IntArray], rng: np.random.Generator
    ) -> dict[str, IntArray]:
        merged = {
            c: self.compression[c][v] if c in self.compression else v for c, v in given.items()
        }
        drawn = self._sample_model_codes(n, merged, rng)
        for c in drawn:
            if c in self.compression and c not in given:
                drawn[c] = _expand(self.compression[c], drawn[c], rng)
        return {**drawn, **given}

    def _sample_model_codes(
        self, n: int, given: dict[str, IntArray], rng: np.random.Generator
    ) -> dict[str, IntArray]:
        sizes = self._sizes
        factors: list[Factor] = list(self.potentials.items())
        present = {a for c in self.potentials for a in c}
        free = [a for a in self.domain.names if a not in given]
        factors.extend(((a,), np.zeros(sizes[a])) for a in free if a not in present)
        order = _elimination_order(factors, sizes, free)
        codes = dict(given)
        for z, parents in reversed(order):
            cells = math.prod(sizes[a] for a in (*parents, z))
            if cells > MAX_TABLE_CELLS:
                raise ParameterError(
                    f"given: drawing {z!r} needs a table over {[*parents, z]} of {cells} "
                    f"cells, above {MAX_TABLE_CELLS}; condition on fewer columns or use "
                    "coarser bins"
                )
            table = np.exp(log_marginal(self.potentials, sizes, [*parents, z]))
            table = table.reshape(-1, sizes[z])
            mass = table.sum(axis=1, keepdims=True)
            # A parent cell of probability 0 under the model: draw uniformly.
            cond = np.where(mass > 0, table / np.where(mass > 0, mass, 1.0), 1.0 / sizes[z])
            cdf = np.cumsum(cond, axis=1)
            cdf[:, -1] = 1.0
            if parents:
                rows = np.ravel_multi_index(
                    tuple(codes[p] for p in parents), tuple(sizes[p] for p in parents)
                ).astype(np.int64)
            else:
                rows = np.zeros(n, dtype=np.int64)
            codes[z] = _draw(cdf, rows, rng)
        return codes

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
            "merged_codes": {c: int(np.bincount(m).max()) for c, m in self.compression.items()},
            "cliques": [list(c) for c in self.potentials],
            "domain": self.domain.to_dict(),
            "leaks": list(self.leaks),
            "sampling": "post-processing with veil.rng: exact draws from the fitted model in "
            "reverse elimination order (given columns eliminated last, so conditioning on "
            "them is exact); numeric values uniform within their bin; a merged code drawn "
            "back as one of its codes, uniformly",
        }
