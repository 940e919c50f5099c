"""t-closeness's floor on what every finer node suppresses, and the search it prunes.

The search tags a node's whole down-set infeasible, unevaluated, when the floor it
computes there exceeds the suppression limit (:meth:`TCloseness._verdicts`). These
tests check the floor against every finer node of small lattices, the convexity it
rests on, and that the pruned search still finds the brute-force optimum.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pandas as pd
import pytest

from veil.anonymity.hierarchy import Hierarchy
from veil.anonymity.models import (
    EntropyLDiversity,
    KAnonymity,
    PrivacyModel,
    TCloseness,
    _Classes,
    _PairCounts,
    _Pairs,
)
from veil.anonymity.search import anonymize
from veil.anonymity.transformation import Problem

from .._brute import brute_force_optimum

_DISEASES = ["flu", "cold", "hiv", "cancer", "asthma"]


def _table(seed: int, n: int = 240) -> tuple[pd.DataFrame, dict[str, Hierarchy]]:
    """A table of three QIs whose diseases lean by age, so that many classes fail t."""
    rng = np.random.default_rng(seed)
    age = rng.integers(0, 16, n)
    lean = np.where(age < 8, 0, 3)
    disease = np.where(rng.random(n) < 0.5, lean + rng.integers(0, 2, n), rng.integers(0, 5, n))
    df = pd.DataFrame(
        {
            "age": age.astype(str),
            "zip": rng.integers(0, 8, n).astype(str),
            "sex": rng.choice(["m", "f"], n),
            "disease": np.asarray(_DISEASES)[disease],
        }
    )
    hierarchies = {
        "age": Hierarchy.intervals(range(16), widths=(2, 4, 8)),
        "zip": Hierarchy.intervals(range(8), widths=(2, 4)),
        "sex": Hierarchy.from_frame(pd.DataFrame({0: ["m", "f"], 1: ["*", "*"]})),
    }
    return df, hierarchies


def _disease_hierarchy() -> Hierarchy:
    return Hierarchy.from_mapping(
        _DISEASES,
        [
            {
                "flu": "viral",
                "cold": "viral",
                "hiv": "viral",
                "cancer": "chronic",
                "asthma": "chronic",
            }
        ],
    )


def _t(distance: str, t: float) -> PrivacyModel:
    """t-closeness on the disease (ordered: as text, asthma < cancer < cold < ...), or
    with ``distance="entropy"`` entropy l-diversity of l = 1 / t."""
    if distance == "entropy":
        return EntropyLDiversity("disease", 1 / t)
    hierarchy = _disease_hierarchy() if distance == "hierarchical" else None
    return TCloseness("disease", t, distance=distance, hierarchy=hierarchy)


@pytest.mark.parametrize("seed", [0, 1])
@pytest.mark.parametrize("distance", ["equal", "ordered", "hierarchical", "entropy"])
@pytest.mark.parametrize("with_k", [False, True])
@pytest.mark.parametrize("reference", ["release", "input"])
def test_no_finer_node_suppresses_fewer_records_than_a_nodes_floor(
    seed: int, distance: str, with_k: bool, reference: str
) -> None:
    df, hierarchies = _table(seed)
    models: list[PrivacyModel] = [_t(distance, 0.3 if distance == "entropy" else 0.15)]
    if with_k:
        models.insert(0, KAnonymity(3))
    problem = Problem(df, hierarchies, models, 0.1, "loss", None, None, reference)
    nodes = list(itertools.product(*(range(h + 1) for h in problem.heights)))
    outcomes = {node: problem.evaluate(problem.base(), None, node) for node in nodes}
    beyond_monotone = 0
    for coarse, outcome in outcomes.items():
        floor = outcome.least_suppressed
        for fine in nodes:
            if all(a <= b for a, b in zip(fine, coarse, strict=True)):
                assert outcomes[fine].suppressed >= floor, (fine, coarse)
        sizes = outcome.table.size
        whole = int(sizes[sizes < problem.min_size].sum())  # k's and t's least size
        beyond_monotone += floor > whole
    # The floor says more than the classes too small for any model, on some nodes.
    assert beyond_monotone > 0


def _classes(cls: np.ndarray, value: np.ndarray, n_classes: int, n_values: int) -> _Classes:
    """The classes of records (class, value code), each record counted once."""
    sizes = np.bincount(cls, minlength=n_classes)
    counts = np.bincount(value * n_classes + cls, minlength=n_values * n_classes)
    prior = np.bincount(value, minlength=n_values) / len(value)
    dense = counts.reshape(n_values, n_classes).astype(np.float64)
    pairs = _Pairs(_PairCounts(dense=dense), n_values, prior)
    return _Classes(n_classes, sizes.astype(np.int64), {"disease": pairs})


@pytest.mark.parametrize("distance", ["equal", "ordered", "hierarchical"])
def test_a_merged_class_is_no_farther_than_its_parts_on_average(distance: str) -> None:
    # The floor rests on this: the EMD of a merged class is at most the size-weighted
    # mean of its parts' EMDs (a transport problem's optimum is convex), and each is
    # at most 1.
    model = TCloseness(
        "disease", 0.2, distance, _disease_hierarchy() if distance == "hierarchical" else None
    )
    model._prepare(pd.Index(sorted(_DISEASES)))
    rng = np.random.default_rng(7)
    for _ in range(200):
        n, parts = int(rng.integers(12, 60)), int(rng.integers(2, 12))
        value = rng.choice(5, n, p=rng.dirichlet(np.ones(5) * 0.5))
        part = rng.permutation(np.arange(n) % parts)  # no part is empty
        merged = min(parts, 3)
        merged_into = rng.permutation(np.arange(parts) % merged)  # none is empty
        fine = _classes(part, value, parts, 5)
        coarse = _classes(merged_into[part], value, merged, 5)
        fine.pairs["disease"] = _Pairs(
            fine.pairs["disease"].counts, 5, coarse.pairs["disease"].prior
        )
        e_fine, e_coarse = model._emd(fine), model._emd(coarse)
        assert (e_fine <= 1 + 1e-12).all()
        mean = np.bincount(merged_into, weights=fine.sizes * e_fine) / coarse.sizes
        assert (e_coarse <= mean + 1e-12).all()


def test_a_merged_class_has_at_least_its_parts_mean_entropy() -> None:
    # Entropy l-diversity's floor rests on this: entropy is concave in the distribution.
    model = EntropyLDiversity("disease", 2)
    rng = np.random.default_rng(8)
    for _ in range(200):
        n, parts = int(rng.integers(12, 60)), int(rng.integers(2, 12))
        value = rng.choice(5, n, p=rng.dirichlet(np.ones(5) * 0.5))
        part = rng.permutation(np.arange(n) % parts)
        merged = min(parts, 3)
        merged_into = rng.permutation(np.arange(parts) % merged)
        fine = _classes(part, value, parts, 5)
        coarse = _classes(merged_into[part], value, merged, 5)
        h_fine, h_coarse = model._entropy(fine), model._entropy(coarse)
        mean = np.bincount(merged_into, weights=fine.sizes * h_fine) / coarse.sizes
        assert (h_coarse >= mean - 1e-12).all()


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("distance", ["equal", "hierarchical", "entropy"])
@pytest.mark.parametrize("reference", ["release", "input"])
def test_the_pruned_search_finds_the_brute_force_optimum(
    seed: int, distance: str, reference: str
) -> None:
    df, hierarchies = _table(seed, n=400)
    models: list[PrivacyModel] = [
        KAnonymity(2),
        _t(distance, 0.4 if distance == "entropy" else 0.12),
    ]
    expected = brute_force_optimum(df, hierarchies, models, 0.1, reference=reference)
    assert math.isfinite(expected)
    result = anonymize(df, hierarchies, models, max_suppression=0.1, reference=reference)
    assert result.metrics["loss"] == pytest.approx(expected, rel=1e-12)
    lattice = result.lattice
    infeasible = lattice["feasible"].eq(False).fillna(False)
    # Some nodes are settled infeasible by a floor, without a pass over their classes.
    assert (infeasible & ~lattice["evaluated"]).any()
