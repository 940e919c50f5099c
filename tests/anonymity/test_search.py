"""Tests of the optimal lattice search and its metrics."""

from __future__ import annotations

import itertools
import math
import os

import numpy as np
import pandas as pd
import pytest

from veil.anonymity.hierarchy import Hierarchy
from veil.anonymity.models import (
    DistinctLDiversity,
    EntropyLDiversity,
    KAnonymity,
    PrivacyModel,
    RecursiveCLDiversity,
    TCloseness,
)
from veil.anonymity.search import NoSolutionError, anonymize, evaluate
from veil.errors import ColumnError, ParameterError

ADULT = "/work/shared/data/arx_adult"
ADULT_QIS = [
    "sex", "age", "race", "marital-status", "education", "native-country", "workclass",
    "salary-class",
]  # fmt: skip


def _small(seed: int, n: int = 60) -> tuple[pd.DataFrame, dict[str, Hierarchy]]:
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


def _brute_force(
    df: pd.DataFrame,
    hierarchies: dict[str, Hierarchy],
    models: list[PrivacyModel],
    max_suppression: float,
    metric: str,
) -> float:
    best = math.inf
    ranges = [range(h.levels) for h in hierarchies.values()]
    for node in itertools.product(*ranges):
        levels = dict(zip(hierarchies, node, strict=True))
        result = evaluate(df, hierarchies, levels, models, max_suppression=max_suppression)
        if bool(result.lattice["feasible"].iloc[0]):
            best = min(best, result.metrics[metric])
    return best


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("max_suppression", [0.0, 0.1])
@pytest.mark.parametrize("metric", ["loss", "discernibility", "precision", "aecs"])
@pytest.mark.parametrize("kind", ["k", "l", "k+l"])
def test_anonymize_finds_the_brute_force_optimum(
    seed: int, max_suppression: float, metric: str, kind: str
) -> None:
    df, hierarchies = _small(seed)
    models: list[PrivacyModel] = []
    if "k" in kind:
        models.append(KAnonymity(4))
    if "l" in kind:
        models.append(DistinctLDiversity("disease", 2))
    expected = _brute_force(df, hierarchies, models, max_suppression, metric)
    result = anonymize(df, hierarchies, models, max_suppression=max_suppression, metric=metric)
    assert result.metrics[metric] == pytest.approx(expected, rel=1e-12)
    assert result.suppressed <= max_suppression * len(df)


@pytest.mark.parametrize(
    "model",
    [
        EntropyLDiversity("disease", 2),
        RecursiveCLDiversity("disease", 3, 2),
        TCloseness("disease", 0.3),
        TCloseness("age", 0.2, distance="ordered"),
    ],
)
def test_non_monotone_models_reach_the_brute_force_optimum(model: PrivacyModel) -> None:
    df, hierarchies = _small(3, n=80)
    if model.attribute == "age":
        df = df.assign(age2=df["age"])
        hierarchies = {"zip": hierarchies["zip"], "sex": hierarchies["sex"]}
    expected = _brute_force(df, hierarchies, [model], 0.1, "loss")
    if math.isinf(expected):
        with pytest.raises(NoSolutionError):
            anonymize(df, hierarchies, [model], max_suppression=0.1)
    else:
        result = anonymize(df, hierarchies, [model], max_suppression=0.1)
        assert result.metrics["loss"] == pytest.approx(expected, rel=1e-12)


def test_loss_of_a_hand_computed_node() -> None:
    df = pd.DataFrame({"zip": ["1301", "1302", "1311", "1312"]})
    h = Hierarchy.masking(["1301", "1302", "1311", "1312"], steps=2)
    result = evaluate(df, {"zip": h}, {"zip": 1}, [KAnonymity(2)], max_suppression=0)
    # Each record's value covers 2 of 4 leaves: (2 - 1) / (4 - 1).
    assert result.metrics["loss"] == pytest.approx(1 / 3)
    assert result.metrics["precision"] == pytest.approx(1 / (h.levels - 1))
    assert result.metrics["discernibility"] == 8
    assert result.metrics["aecs"] == 2


def test_result_fields_and_suppression_modes() -> None:
    df, hierarchies = _small(0)
    original = df.copy()
    removed = anonymize(df, hierarchies, [KAnonymity(5)], max_suppression=0.2)
    marked = anonymize(df, hierarchies, [KAnonymity(5)], max_suppression=0.2, suppression="mark")
    pd.testing.assert_frame_equal(df, original)
    assert set(removed.levels) == set(hierarchies)
    assert len(removed.data) == len(df) - removed.suppressed
    assert len(marked.data) == len(df)
    starred = (marked.data[list(hierarchies)] == "*").all(axis=1)
    assert starred.sum() >= marked.suppressed
    counts = removed.data.groupby(list(hierarchies)).size()
    assert (counts >= 5).all()
    lattice = removed.lattice
    for column in [*hierarchies, "feasible", "suppressed", "evaluated", "loss"]:
        assert column in lattice.columns
    chosen = lattice.loc[(lattice[list(hierarchies)] == pd.Series(removed.levels)).all(axis=1)]
    assert bool(chosen["feasible"].iloc[0])


def test_errors() -> None:
    df, hierarchies = _small(0)
    with pytest.raises(ColumnError):
        anonymize(df, {"nope": hierarchies["age"]}, [KAnonymity(2)], max_suppression=0)
    for bad in (-0.1, 1.5):
        with pytest.raises(ParameterError, match="max_suppression"):
            anonymize(df, hierarchies, [KAnonymity(2)], max_suppression=bad)
    with pytest.raises(ParameterError, match="metric"):
        anonymize(df, hierarchies, [KAnonymity(2)], max_suppression=0, metric="gain")
    with pytest.raises(ParameterError, match="levels"):
        evaluate(df, hierarchies, {"age": 0}, [KAnonymity(2)], max_suppression=0)
    with pytest.raises(ParameterError, match="k must"):
        KAnonymity(0)
    with pytest.raises(ColumnError):
        anonymize(df, hierarchies, [DistinctLDiversity("x", 2)], max_suppression=0)
    with pytest.raises(NoSolutionError):
        anonymize(df, hierarchies, [DistinctLDiversity("disease", 5)], max_suppression=0)


@pytest.fixture(scope="module")
def adult() -> tuple[pd.DataFrame, dict[str, Hierarchy]]:
    if not os.path.exists(f"{ADULT}/adult.csv"):
        pytest.skip("ARX Adult benchmark data not available")
    df = pd.read_csv(f"{ADULT}/adult.csv", sep=";", dtype=str)
    hierarchies = {q: Hierarchy.from_csv(f"{ADULT}/adult_hierarchy_{q}.csv") for q in ADULT_QIS}
    return df, hierarchies


@pytest.mark.parametrize(
    ("k", "max_suppression", "levels", "loss"),
    [
        (5, 0.0, [0, 4, 1, 2, 3, 2, 0, 0], 0.5422),
        (5, 0.05, [0, 3, 0, 0, 2, 1, 1, 0], 0.1701),
        (10, 0.05, [0, 3, 0, 1, 2, 1, 1, 0], 0.2225),
    ],
)
def test_arx_adult_optima(
    adult: tuple[pd.DataFrame, dict[str, Hierarchy]],
    k: int,
    max_suppression: float,
    levels: list[int],
    loss: float,
) -> None:
    df, hierarchies = adult
    at_arx = evaluate(
        df,
        hierarchies,
        dict(zip(ADULT_QIS, levels, strict=True)),
        [KAnonymity(k)],
        max_suppression=max_suppression,
    )
    assert round(at_arx.metrics["loss"], 4) == loss
    assert bool(at_arx.lattice["feasible"].iloc[0])
    found = anonymize(df, hierarchies, [KAnonymity(k)], max_suppression=max_suppression)
    assert round(found.metrics["loss"], 4) <= loss
