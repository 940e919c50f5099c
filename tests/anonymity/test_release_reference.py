"""The released table itself satisfies the distribution-comparing models after suppression.

t-closeness, beta-likeness and delta-disclosure compare each class with a reference
distribution. ARX uses the input's; after heavy suppression the released table then
fails veil's own table checks. By default (``reference="release"``) the search checks
again against the released records' distribution; ``reference="input"`` keeps ARX's.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable

import numpy as np
import pandas as pd
import pytest

from veil.anonymity import (
    BasicBetaLikeness,
    DeltaDisclosure,
    EnhancedBetaLikeness,
    Hierarchy,
    KAnonymity,
    PrivacyModel,
    TCloseness,
    anonymize,
    anonymize_local,
    basic_beta_likeness,
    delta_disclosure,
    enhanced_beta_likeness,
    evaluate,
    t_closeness,
)
from veil.anonymity.search import NoSolutionError
from veil.errors import ParameterError

QIS = ["age", "zip", "sex"]
# The EMD of the model and of the check are summed in different orders.
EMD_TOLERANCE = 1e-12


def _small(seed: int, n: int = 80) -> tuple[pd.DataFrame, dict[str, Hierarchy]]:
    rng = np.random.default_rng(seed)
    df = pd.DataFrame(
        {
            "age": rng.integers(20, 40, n),
            "zip": rng.choice(["1301", "1302", "1311", "1312"], n),
            "sex": rng.choice(["m", "f"], n),
            "disease": rng.choice(["flu", "cold", "hiv", "cancer"], n),
        }
    )
    hierarchies = {
        "age": Hierarchy.intervals(range(20, 40), widths=(5, 10)),
        "zip": Hierarchy.masking(["1301", "1302", "1311", "1312"], steps=2),
        "sex": Hierarchy.from_frame(pd.DataFrame({0: ["m", "f"], 1: ["*", "*"]})),
    }
    return df, hierarchies


def _excess_t(t: float) -> Callable[[pd.DataFrame], float]:
    return lambda d: t_closeness(d, QIS, ["disease"]) - t - EMD_TOLERANCE


def _excess_basic(beta: float) -> Callable[[pd.DataFrame], float]:
    return lambda d: basic_beta_likeness(d, QIS, ["disease"]) - beta


def _excess_enhanced(beta: float) -> Callable[[pd.DataFrame], float]:
    return lambda d: enhanced_beta_likeness(d, QIS, ["disease"]) - beta


def _excess_delta(delta: float) -> Callable[[pd.DataFrame], float]:
    # The check reports delta in nats and satisfies any delta' above it (strict model).
    return lambda d: delta_disclosure(d, QIS, ["disease"]) / math.log(2) - delta + 1e-15


CASES: list[tuple[str, PrivacyModel, Callable[[pd.DataFrame], float]]] = [
    ("t", TCloseness("disease", 0.2), _excess_t(0.2)),
    ("t-ordered", TCloseness("disease", 0.25, distance="ordered"), _excess_t(0.25)),
    ("basic beta", BasicBetaLikeness("disease", 0.5), _excess_basic(0.5)),
    ("enhanced beta", EnhancedBetaLikeness("disease", 0.5), _excess_enhanced(0.5)),
    ("delta", DeltaDisclosure("disease", 0.6), _excess_delta(0.6)),
]


def _nodes(hierarchies: dict[str, Hierarchy]) -> list[dict[str, int]]:
    ranges = [range(h.levels) for h in hierarchies.values()]
    return [dict(zip(hierarchies, lv, strict=True)) for lv in itertools.product(*ranges)]


@pytest.mark.parametrize(("name", "model", "excess"), CASES, ids=[c[0] for c in CASES])
def test_every_returned_release_passes_the_table_check_after_heavy_suppression(
    name: str, model: PrivacyModel, excess: Callable[[pd.DataFrame], float]
) -> None:
    if name == "t-ordered":
        # The table check uses the ordered distance for numeric attributes.
        codes = {"cold": 0, "flu": 1, "hiv": 2, "cancer": 3}
        prepare: Callable[[pd.DataFrame], pd.DataFrame] = lambda d: d.assign(  # noqa: E731
            disease=d["disease"].map(codes)
        )
    else:
        prepare = lambda d: d  # noqa: E731
    returned = 0
    for seed in range(12):
        df, hierarchies = _small(seed)
        df = prepare(df)
        try:
            result = anonymize(df, hierarchies, [KAnonymity(2), model], max_suppression=0.5)
        except NoSolutionError:
            continue
        assert result.reference == "release"
        if len(result.data):
            returned += 1
            assert excess(result.data) <= 0, (seed, result.levels)
    assert returned >= 6


@pytest.mark.parametrize(("name", "model", "excess"), CASES, ids=[c[0] for c in CASES])
def test_every_feasible_node_releases_a_table_that_passes_the_check(
    name: str, model: PrivacyModel, excess: Callable[[pd.DataFrame], float]
) -> None:
    df, hierarchies = _small(4)
    if name == "t-ordered":
        df = df.assign(disease=df["disease"].map({"cold": 0, "flu": 1, "hiv": 2, "cancer": 3}))
    for levels in _nodes(hierarchies):
        result = evaluate(df, hierarchies, levels, [model], max_suppression=0.5)
        if bool(result.lattice["feasible"].iloc[0]) and len(result.data):
            assert excess(result.data) <= 0, levels


@pytest.mark.parametrize(("name", "model", "excess"), CASES, ids=[c[0] for c in CASES])
def test_the_search_finds_the_brute_force_optimum_among_released_feasible_nodes(
    name: str, model: PrivacyModel, excess: Callable[[pd.DataFrame], float]
) -> None:
    # Feasibility is not monotone: pruning must not lose the optimum.
    for seed in (4, 6, 11):
        df, hierarchies = _small(seed)
        if name == "t-ordered":
            df = df.assign(disease=df["disease"].map({"cold": 0, "flu": 1, "hiv": 2, "cancer": 3}))
        best = math.inf
        for levels in _nodes(hierarchies):
            r = evaluate(df, hierarchies, levels, [KAnonymity(2), model], max_suppression=0.3)
            if bool(r.lattice["feasible"].iloc[0]):
                best = min(best, r.metrics["loss"])
        if math.isinf(best):
            with pytest.raises(NoSolutionError):
                anonymize(df, hierarchies, [KAnonymity(2), model], max_suppression=0.3)
        else:
            found = anonymize(df, hierarchies, [KAnonymity(2), model], max_suppression=0.3)
            assert found.metrics["loss"] == pytest.approx(best, abs=1e-12)


def test_input_reference_keeps_arx_semantics_and_says_so() -> None:
    # Seed 4 with t = 0.2: ARX's semantics release a table whose t is 0.243.
    df, hierarchies = _small(4)
    arx = anonymize(df, hierarchies, [TCloseness("disease", 0.2)], max_suppression=0.5,
                    reference="input")  # fmt: skip
    assert arx.reference == "input"
    assert t_closeness(arx.data, QIS, ["disease"]) > 0.24
    released = anonymize(df, hierarchies, [TCloseness("disease", 0.2)], max_suppression=0.5)
    assert released.reference == "release"
    assert t_closeness(released.data, QIS, ["disease"]) <= 0.2 + EMD_TOLERANCE


def test_without_suppression_both_references_agree() -> None:
    df, hierarchies = _small(3)
    models = [KAnonymity(2), TCloseness("disease", 0.3)]
    a = anonymize(df, hierarchies, models, max_suppression=0.0, reference="input")
    b = anonymize(df, hierarchies, models, max_suppression=0.0)
    assert a.levels == b.levels and a.metrics == b.metrics


def test_local_recoding_release_passes_the_check() -> None:
    for seed in range(6):
        df, hierarchies = _small(seed)
        for model, excess in [(c[1], c[2]) for c in CASES if c[0] in ("t", "delta")]:
            try:
                result = anonymize_local(df, hierarchies, [KAnonymity(2), model],
                                         max_suppression=0.5)  # fmt: skip
            except NoSolutionError:
                continue
            assert result.reference == "release"
            if len(result.data):
                assert excess(result.data) <= 0


def test_unknown_reference_is_refused_with_the_allowed_values() -> None:
    df, hierarchies = _small(0)
    with pytest.raises(ParameterError, match=r"reference must be one of .*'release'.*'input'"):
        anonymize(df, hierarchies, [KAnonymity(2)], max_suppression=0.1, reference="arx")
    with pytest.raises(ParameterError, match="reference"):
        anonymize_local(df, hierarchies, [KAnonymity(2)], max_suppression=0.1, reference="x")
