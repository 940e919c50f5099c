"""Marginal-based DP synthesizers: MST and AIM (McKenna et al.), on mbi 2.0.

Both measure noisy marginals of the table with the discrete Gaussian mechanism, choose
which marginals to measure with the exponential mechanism, account in zCDP, and let
mbi fit a graphical model to the noisy marginals (:mod:`veil.synth.estimation`). The
selection and measurement are veil's own (:mod:`veil.synth.measure`, randomness from
:mod:`veil.rng`); records are drawn from the fitted model by
:class:`veil.synth.GraphicalModel`, not by mbi.

Guarantee: the fitted model, and every sample drawn from it, is (ε, δ)-DP for adding
or removing one record, where (ε, δ) is :attr:`GraphicalModel.cost`: the conversion of
the zCDP ρ spent (Canonne, Kamath and Steinke 2020; :mod:`veil.synth.accounting`).
Numeric columns are counted in their public bins; the domain itself is public (leaks of
a data-derived domain are listed by the model).
"""

from __future__ import annotations

import itertools
import math
import numbers
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import numpy.typing as npt
import pandas as pd

from veil.errors import ParameterError
from veil.rng import RngLike, resolve_rng
from veil.synth.accounting import ZCDPAccountant
from veil.synth.base import FitInput, Synthesizer, check_fit_input, with_domain_costs
from veil.synth.domain import IntArray, TableDomain
from veil.synth.estimation import Estimate, estimate, require_mbi
from veil.synth.graphical import GraphicalModel, log_marginal
from veil.synth.measure import Measurement, contingency, exponential_select, measure

__all__ = ["AIM", "MST"]

FloatArray = npt.NDArray[np.float64]
Clique = tuple[str, ...]


def _check_count(value: Any, name: str, minimum: int) -> int:
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < minimum:
        raise ParameterError(f"{name}: must be an integer >= {minimum}, got {value!r}")
    return int(value)


def _measure_one_way(
    inp: FitInput, sigma: float, acc: ZCDPAccountant, rng: np.random.Generator
) -> list[Measurement]:
    sizes = inp.domain.sizes
    return [
        measure(contingency(inp.codes, (c,), sizes), (c,), sigma, acc, rng)
        for c in inp.domain.names
    ]


def _model(
    inp: FitInput,
    fitted: Estimate,
    acc: ZCDPAccountant,
    details: Mapping[str, Any],
    compression: Mapping[str, IntArray] | None = None,
) -> GraphicalModel:
    mechanism = f"{details['method']} (discrete Gaussian marginals, exponential selection, zCDP)"
    cost = with_domain_costs(acc.cost(", ".join(inp.domain.names), mechanism), inp.domain)
    info = {**details, "accounting": acc.to_dict(), "estimation": "mbi 2.0 mirror descent"}
    return GraphicalModel(
        inp.domain, fitted.potentials, fitted.total, cost, info, compression=compression
    )


def _compress(
    one_way: Sequence[Measurement], codes: Mapping[str, IntArray]
) -> tuple[dict[str, IntArray], list[Measurement], dict[str, IntArray], dict[str, int]]:
    """MST's domain compression: the codes whose noisy count is below 3σ become one.

    Post-processing of the 1-way measurements (McKenna et al. 2021, section 4): the
    merged cell's noisy count is the sum of its codes' (standard deviation σ·sqrt(k)
    for k codes, weighted accordingly). Returns the code maps of the columns that were
    compressed, the 1-way measurements in the compressed codes, the compressed codes
    of the records and the compressed sizes.
    """
    maps: dict[str, IntArray] = {}
    measured: list[Measurement] = []
    new_codes = dict(codes)
    sizes: dict[str, int] = {}
    for m in one_way:
        col = m.clique[0]
        kept = m.noisy >= 3.0 * m.sigma
        sizes[col] = m.noisy.size
        if kept.all() or (~kept).sum() == 1:
            measured.append(m)
            continue
        merged = np.full(m.noisy.size, int(kept.sum()), dtype=np.int64)
        merged[kept] = np.arange(int(kept.sum()))
        rare = int((~kept).sum())
        noisy = np.append(m.noisy[kept], m.noisy[~kept].sum())
        weights = np.ones(noisy.size)
        weights[-1] = 1.0 / math.sqrt(rare)
        measured.append(Measurement((col,), noisy, m.sigma, weights))
        maps[col] = merged
        new_codes[col] = merged[codes[col]]
        sizes[col] = noisy.size
    return maps, measured, new_codes, sizes


class MST(Synthesizer):
    """MST: a maximum spanning tree of noisy 2-way marginals (McKenna, Miklau, Sheldon,
    "Winning the NIST contest: a scalable and general approach to differentially private
    synthetic data", Journal of Privacy and Confidentiality 11(3), 2021).

    The zCDP budget ρ is split in thirds: every 1-way marginal (σ² = d / (2ρ/3)); d - 1
    exponential-mechanism picks of the tree's edges, each scoring a pair by the L1 gap
    between its true 2-way counts and what the noisy 1-way marginals predict
    (sensitivity 1, ε₀ = sqrt(8 (ρ/3) / (d - 1)), Kruskal order); the d - 1 chosen
    2-way marginals (σ² = (d - 1) / (2ρ/3)). With two columns the only pair needs no
    selection and the budget is halved between 1-way and 2-way marginals; with one
    column it all goes to its 1-way marginal.

    With ``compress`` (the published MST), the codes of a column whose noisy 1-way
    count is below 3σ are merged into one before the selection (post-processing), and a
    sampled merged code is drawn back as one of its codes uniformly.

    Parameters
    ----------
    iters : int, default 1000
        Mirror-descent steps of mbi's estimation.
    compress : bool, default True
        Merge the rare codes of each column as above.

    Examples
    --------
    >>> import pandas as pd
    >>> from veil.synth import MST
    >>> df = pd.DataFrame({"a": ["x", "y"] * 50, "b": ["u", "u", "v", "v"] * 25,
    ...                    "c": [0, 1, 2, 3] * 25})
    >>> domain = {"a": ["x", "y"], "b": ["u", "v"], "c": {"bounds": [0, 3], "integer": True}}
    >>> model = MST(iters=50).fit(df, domain, 1.0, 1e-5, rng=None)
    >>> model.cost.notion, round(model.cost.epsilon, 9)
    ('dp-synthetic', 1.0)
    >>> model.sample(10).shape
    (10, 3)
    """

    name = "mst"

    def __init__(self, *, iters: int = 1000, compress: bool = True) -> None:
        self.iters: int = _check_count(iters, "iters", 1)
        if not isinstance(compress, bool):
            raise ParameterError(f"compress: must be True or False, got {compress!r}")
        self.compress = compress

    def fit(
        self,
        data: pd.DataFrame,
        domain: TableDomain | Mapping[str, Any],
        epsilon: float,
        delta: float,
        *,
        rng: RngLike = None,
    ) -> GraphicalModel:
        """Fit MST; see :meth:`veil.synth.Synthesizer.fit`.

        Raises
        ------
        ImportError
            mbi or JAX is not installed (the message gives the pip command).
        veil.errors.ParameterError, veil.errors.ColumnError, veil.errors.DomainError,
        veil.errors.MissingValueError
            Bad ε or δ, or data the domain does not cover.
        """
        require_mbi()
        inp = check_fit_input(data, domain, epsilon, delta)
        gen = resolve_rng(rng)
        acc = ZCDPAccountant(inp.epsilon, inp.delta)
        names = inp.domain.names
        d = len(names)
        rho = acc.budget
        shares = {1: (1.0, 0.0, 0.0), 2: (0.5, 0.0, 0.5)}.get(d, (1 / 3, 1 / 3, 1 / 3))
        one_way = _measure_one_way(inp, math.sqrt(d / (2 * shares[0] * rho)), acc, gen)
        maps: dict[str, IntArray] = {}
        codes, sizes, measured = inp.codes, inp.domain.sizes, list(one_way)
        if self.compress:
            maps, measured, codes, sizes = _compress(one_way, inp.codes)
        edges: list[Clique] = []
        if d == 2:
            edges = [(names[0], names[1])]
        elif d > 2:
            eps0 = math.sqrt(8 * shares[1] * rho / (d - 1))
            edges = self._select(names, codes, sizes, measured, eps0, acc, gen)
        if edges:
            sigma = math.sqrt(len(edges) / (2 * shares[2] * rho))
            measured += [measure(contingency(codes, e, sizes), e, sigma, acc, gen) for e in edges]
        fitted = estimate(sizes, measured, iters=self.iters)
        details = {
            "method": "MST",
            "iters": self.iters,
            "tree": [list(e) for e in edges],
            "compressed": {c: int(np.sum(m == m.max())) for c, m in maps.items()},
        }
        return _model(inp, fitted, acc, details, maps)

    @staticmethod
    def _select(
        names: Sequence[str],
        codes: Mapping[str, IntArray],
        sizes: Mapping[str, int],
        one_way: Sequence[Measurement],
        eps: float,
        acc: ZCDPAccountant,
        rng: np.random.Generator,
    ) -> list[Clique]:
        """Kruskal's tree, each edge picked by the exponential mechanism."""
        total = max(float(np.mean([m.noisy.sum() for m in one_way])), 1.0)
        probs = {}
        for m in one_way:
            clipped = np.clip(m.noisy, 0.0, None)
            mass = clipped.sum()
            probs[m.clique[0]] = (
                clipped / mass if mass > 0 else np.full(m.noisy.size, 1 / m.noisy.size)
            )
        pairs = list(itertools.combinations(names, 2))
        gaps = np.array(
            [
                np.abs(
                    contingency(codes, (a, b), sizes) - total * np.outer(probs[a], probs[b])
                ).sum()
                for a, b in pairs
            ]
        )
        component = {c: i for i, c in enumerate(names)}
        chosen: list[Clique] = []
        for _ in range(len(names) - 1):
            open_idx = [i for i, (a, b) in enumerate(pairs) if component[a] != component[b]]
            pick = open_idx[exponential_select(gaps[open_idx], eps, 1.0, acc, rng, "MST edge")]
            a, b = pairs[pick]
            old, new = component[b], component[a]
            component = {c: (new if k == old else k) for c, k in component.items()}
            chosen.append((a, b))
        return chosen


def _counts(fitted: Estimate, sizes: Mapping[str, int], clique: Clique) -> FloatArray:
    """The model's expected counts of a clique's cells."""
    return fitted.total * np.exp(log_marginal(fitted.potentials, sizes, clique))


def _downward_closure(workload: Sequence[Clique]) -> list[Clique]:
    seen: dict[Clique, None] = {}
    for clique in workload:
        for size in range(1, len(clique) + 1):
            for sub in itertools.combinations(clique, size):
                seen.setdefault(sub, None)
    return sorted(seen, key=lambda c: (len(c), c))


def _model_cells(cliques: Sequence[Clique], sizes: Mapping[str, int]) -> int:
    """Cells of the junction tree a model over ``cliques`` needs (greedy triangulation)."""
    scopes = [set(c) for c in cliques]
    remaining = sorted({a for c in cliques for a in c})
    cells = 0
    while remaining:
        best, best_cost, best_scope = "", math.inf, set()
        for z in remaining:
            scope = set().union(*[s for s in scopes if z in s])
            cost = math.prod(sizes[a] for a in scope)
            if cost < best_cost:
                best, best_cost, best_scope = z, cost, scope
        cells += int(best_cost)
        scopes = [s for s in scopes if best not in s] + [best_scope - {best}]
        remaining.remove(best)
    return cells


class AIM(Synthesizer):
    """AIM: an adaptive and iterative mechanism (McKenna, Mullins, Sheldon, Miklau,
    "AIM: an adaptive and iterative mechanism for differentially private synthetic
    data", PVLDB 15(11), 2022).

    The candidates are the workload's cliques and all their subsets, each weighted by
    how many workload columns it shares. With ``T`` rounds planned, every 1-way marginal
    is measured first (σ = sqrt(T / (2 · 0.9 ρ))); then each round picks the candidate
    whose model marginal is worst (L1 gap minus the expected noise, ``sqrt(2/π) σ``
    per cell, times its weight) with the exponential mechanism (ε₀ = sqrt(8 · 0.1 ρ /
    T), sensitivity the largest weight), among those that keep the model under
    ``max_model_size`` scaled by the share of ρ spent; measures it; refits the model
    (warm start); and halves σ (doubling ε₀) when the refit moved that marginal by less
    than the noise. The last round spends exactly what is left.

    Parameters
    ----------
    workload : sequence of column tuples, optional
        Marginals the synthetic data should answer well; default every pair.
    rounds : int, optional
        Planned rounds T; default ``16 d``.
    max_model_size : float, default 80
        Largest junction tree allowed, in MB of float64 cells.
    iters : int, default 1000
        Mirror-descent steps of the final estimation.
    round_iters : int, default 100
        Mirror-descent steps of each round's (warm-started) estimation.
    """

    name = "aim"

    def __init__(
        self,
        *,
        workload: Sequence[Sequence[str]] | None = None,
        rounds: int | None = None,
        max_model_size: float = 80.0,
        iters: int = 1000,
        round_iters: int = 100,
    ) -> None:
        if workload is not None and (
            isinstance(workload, (str, bytes))
            or any(isinstance(w, (str, bytes)) or len(w) == 0 for w in workload)
        ):
            raise ParameterError(
                f"workload: must be a sequence of non-empty column tuples, got {workload!r}"
            )
        self.workload: list[Clique] | None = (
            None if workload is None else [tuple(str(c) for c in w) for w in workload]
        )
        self.rounds: int | None = None if rounds is None else _check_count(rounds, "rounds", 1)
        if not (isinstance(max_model_size, numbers.Real) and max_model_size > 0):
            raise ParameterError(f"max_model_size: must be > 0 (MB), got {max_model_size!r}")
        self.max_model_size: float = float(max_model_size)
        self.iters: int = _check_count(iters, "iters", 1)
        self.round_iters: int = _check_count(round_iters, "round_iters", 1)

    def fit(
        self,
        data: pd.DataFrame,
        domain: TableDomain | Mapping[str, Any],
        epsilon: float,
        delta: float,
        *,
        rng: RngLike = None,
    ) -> GraphicalModel:
        """Fit AIM; see :meth:`veil.synth.Synthesizer.fit` (errors as :meth:`MST.fit`)."""
        require_mbi()
        inp = check_fit_input(data, domain, epsilon, delta)
        names = inp.domain.names
        workload = self.workload or list(itertools.combinations(names, 2)) or [(names[0],)]
        for w in workload:
            inp.domain.check_names(list(w), "workload")
        gen = resolve_rng(rng)
        acc = ZCDPAccountant(inp.epsilon, inp.delta)
        candidates = _downward_closure(workload)
        weights = {r: float(sum(len(set(r) & set(s)) for s in workload)) for r in candidates}
        answers = {r: contingency(inp.codes, r, inp.domain.sizes) for r in candidates}
        rounds = self.rounds or 16 * len(names)
        sigma = math.sqrt(rounds / (2 * 0.9 * acc.budget))
        eps0 = math.sqrt(8 * 0.1 * acc.budget / rounds)
        measured = _measure_one_way(inp, sigma, acc, gen)
        fitted = estimate(inp.domain.sizes, measured, iters=self.round_iters)
        picks: list[list[str]] = []
        final = False
        while not final:
            if acc.remaining < 2 * (0.5 / sigma**2 + eps0**2 / 8):
                sigma = math.sqrt(1 / (2 * 0.9 * acc.remaining))
                eps0 = math.sqrt(8 * 0.1 * acc.remaining)
                final = True
            share = (acc.spent + 0.5 / sigma**2 + eps0**2 / 8) / acc.budget
            pick = self._worst(
                inp, fitted, candidates, weights, answers, (sigma, eps0, share), acc, gen
            )
            picks.append(list(pick))
            before = _counts(fitted, inp.domain.sizes, pick)
            measured.append(measure(answers[pick], pick, sigma, acc, gen))
            fitted = estimate(inp.domain.sizes, measured, iters=self.round_iters, warm_start=fitted)
            moved = np.abs(_counts(fitted, inp.domain.sizes, pick) - before).sum()
            if moved <= math.sqrt(2 / math.pi) * sigma * answers[pick].size:
                sigma /= 2
                eps0 *= 2
        fitted = estimate(inp.domain.sizes, measured, iters=self.iters, warm_start=fitted)
        details = {
            "method": "AIM",
            "rounds_planned": rounds,
            "rounds_run": len(picks),
            "selected": picks,
            "workload": [list(w) for w in workload],
            "max_model_size_mb": self.max_model_size,
            "iters": self.iters,
            "round_iters": self.round_iters,
        }
        return _model(inp, fitted, acc, details)

    def _worst(
        self,
        inp: FitInput,
        fitted: Estimate,
        candidates: Sequence[Clique],
        weights: Mapping[Clique, float],
        answers: Mapping[Clique, IntArray],
        noise: tuple[float, float, float],
        acc: ZCDPAccountant,
        rng: np.random.Generator,
    ) -> Clique:
        """The exponential mechanism's pick of the worst-approximated small candidate.

        ``noise`` is this round's (σ, ε₀, share of ρ spent after it).
        """
        sigma, eps0, share = noise
        sizes = inp.domain.sizes
        cliques = list(fitted.potentials)
        limit = self.max_model_size * share * 2**20 / 8
        allowed = [
            r
            for r in candidates
            if any(set(r) <= set(c) for c in cliques) or _model_cells([*cliques, r], sizes) <= limit
        ]
        scores = []
        for r in allowed:
            gap = np.abs(answers[r] - _counts(fitted, sizes, r)).sum()
            scores.append(weights[r] * (gap - math.sqrt(2 / math.pi) * sigma * answers[r].size))
        sensitivity = max(weights[r] for r in allowed)
        index = exponential_select(np.array(scores), eps0, sensitivity, acc, rng, "AIM round")
        return allowed[index]
