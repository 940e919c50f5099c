"""Tests of the optimal lattice search and its metrics."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pandas as pd
import pytest

from veil.anonymity import search as search_module
from veil.anonymity.hierarchy import Hierarchy
from veil.anonymity.models import (
    AlphaKAnonymity,
    BasicBetaLikeness,
    DistinctLDiversity,
    EntropyLDiversity,
    KAnonymity,
    PrivacyModel,
    RecursiveCLDiversity,
    TCloseness,
)
from veil.anonymity.search import NoSolutionError, anonymize, evaluate
from veil.errors import ColumnError, ParameterError
from veil.frames import default_string_dtype

from .._brute import brute_force_optimum
from .._data import DATA

ADULT = DATA / "arx_adult"
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


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("max_suppression", [0.0, 0.1])
@pytest.mark.parametrize("metric", ["loss", "discernibility", "precision", "aecs", "entropy"])
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
    expected = brute_force_optimum(df, hierarchies, models, max_suppression, metric)
    result = anonymize(df, hierarchies, models, max_suppression=max_suppression, metric=metric)
    assert result.metrics[metric] == pytest.approx(expected, rel=1e-12)
    assert result.suppressed <= max_suppression * len(df)


@pytest.mark.parametrize("metric", ["loss", "precision", "entropy"])
def test_without_suppression_the_optimum_reports_every_metric_of_its_release(
    metric: str,
) -> None:
    # Nothing suppressed: the search ranks feasible nodes by their bound, unmeasured,
    # and measures the optimum alone, whose metrics are those of evaluate().
    df, hierarchies = _small(4)
    result = anonymize(df, hierarchies, [KAnonymity(3)], max_suppression=0.0, metric=metric)
    direct = evaluate(df, hierarchies, result.levels, [KAnonymity(3)], max_suppression=0.0)
    assert result.metrics.keys() == direct.metrics.keys()
    for name, value in direct.metrics.items():
        assert result.metrics[name] == pytest.approx(value, rel=1e-12), name
    lattice = result.lattice
    feasible = lattice.loc[lattice["feasible"].eq(True).fillna(False) & lattice["evaluated"]]
    assert len(feasible) > 0
    assert feasible[metric].notna().all()  # the objective: the node's bound
    assert feasible[metric].min() == pytest.approx(result.metrics[metric], rel=1e-12)


def _ints(text: str) -> list[int]:
    return [int(x) for x in text.split()]


def test_ties_at_large_metric_values_go_to_the_lowest_level_sum() -> None:
    # A weighted table whose entropy is some 25,000 bits: the bound of (2, 0) and the
    # value measured at (2, 1) are equal but for the last places of their sums, and the
    # search must still visit (2, 0), the tie of lower level sum (found by red-teaming).
    zips = "BAABABAAABBBABAABBBBBBABAAAAA"
    sick = "ccfcccafhcacccfhhachccacafach"
    df = pd.DataFrame(
        {
            "age": _ints("7 8 5 5 1 9 3 6 7 8 2 8 1 10 11 7 2 7 0 11 0 1 7 10 1 9 11 3 0"),
            "zip": [{"A": "102211", "B": "131310"}[z] for z in zips],
            "s1": [{"a": "asthma", "c": "cold", "f": "flu", "h": "hiv"}[v] for v in sick],
            "w": _ints(
                "55 527 734 741 718 571 533 883 249 833 603 460 624 174 71 531 539 730 705 997 "
                "45 753 757 297 227 120 256 152 706"
            ),
        }
    )
    hierarchies = {
        "age": Hierarchy.intervals(range(12), widths=(2, 4)),
        "zip": Hierarchy.masking(["102211", "131310"], steps=1),
    }
    sens = Hierarchy.from_frame(
        pd.DataFrame(
            {
                0: ["asthma", "cancer", "cold", "flu", "hiv", "zz_extra1", "zz_extra2"],
                1: ["L0_0", "L0_2", "L0_1", "L0_1", "L0_0", "L0_1", "L0_3"],
                2: ["L1_1", "L1_1", "L1_0", "L1_0", "L1_1", "L1_0", "L1_1"],
                3: ["*"] * 7,
            }
        )
    )
    model = TCloseness("s1", 0.2940244244839304, distance="hierarchical", hierarchy=sens)
    found = anonymize(df, hierarchies, [model], max_suppression=0.01, metric="entropy", weights="w")
    feasible = {}
    for node in itertools.product(range(4), range(3)):
        levels = dict(zip(hierarchies, node, strict=True))
        one = evaluate(df, hierarchies, levels, [model], max_suppression=0.01, weights="w")
        if bool(one.lattice["feasible"].iloc[0]):
            feasible[node] = one.metrics["entropy"]
    best = min(feasible.values())
    ties = sorted((sum(n), n) for n, v in feasible.items() if v <= best * (1 + 1e-12))
    assert len(ties) > 1
    assert tuple(found.levels.values()) == ties[0][1] == (2, 0)
    assert found.metrics["entropy"] == pytest.approx(best, rel=1e-12)


@pytest.mark.parametrize(("seed", "k"), [(0, 2), (1, 6)])
@pytest.mark.parametrize("metric", ["loss", "entropy", "discernibility"])
def test_chain_splits_and_climbs_keep_the_brute_force_optimum(
    seed: int, k: int, metric: str
) -> None:
    # A taller lattice (5 x 4 x 4 x 3 nodes) than _small's, so that the chain search
    # adapts its split and, without suppression, climbs to maximal infeasible nodes.
    rng = np.random.default_rng(seed)
    n = 300
    df = pd.DataFrame({f"q{j}": rng.integers(0, 16, n).astype(str) for j in range(4)})
    hierarchies = {
        "q0": Hierarchy.intervals(range(16), widths=(2, 4, 8)),
        "q1": Hierarchy.intervals(range(16), widths=(4, 8)),
        "q2": Hierarchy.intervals(range(16), widths=(2, 8)),
        "q3": Hierarchy.intervals(range(16), widths=(8,)),
    }
    for max_suppression in (0.0, 0.05):
        models: list[PrivacyModel] = [KAnonymity(k)]
        expected = brute_force_optimum(df, hierarchies, models, max_suppression, metric)
        result = anonymize(df, hierarchies, models, max_suppression=max_suppression, metric=metric)
        assert result.metrics[metric] == pytest.approx(expected, rel=1e-12)
        decided = result.lattice["feasible"].notna()
        assert result.lattice["evaluated"].sum() < decided.sum()  # tagging settled some


@pytest.mark.parametrize(
    "model",
    [
        EntropyLDiversity("disease", 2),
        RecursiveCLDiversity("disease", 3, 2),
        TCloseness("disease", 0.3),
        TCloseness("disease", 0.15),
        TCloseness("age", 0.2, distance="ordered"),
        BasicBetaLikeness("disease", 0.6),
        AlphaKAnonymity("disease", 0.5, 2),
    ],
    ids=repr,
)
def test_non_monotone_models_reach_the_brute_force_optimum(model: PrivacyModel) -> None:
    df, hierarchies = _small(3, n=80)
    if model.attribute == "age":
        df = df.assign(age2=df["age"])
        hierarchies = {"zip": hierarchies["zip"], "sex": hierarchies["sex"]}
    expected = brute_force_optimum(df, hierarchies, [model], 0.1, "loss")
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
    assert result.metrics["classes"] == 2
    # Non-uniform entropy: each record's original value is 1 of the 2 under its
    # released value: log2(2 / 1) = 1 bit per record.
    assert result.metrics["entropy"] == pytest.approx(4.0)
    # Suppressed records are released as the root: log2(4 / 1) = 2 bits each.
    df2 = pd.DataFrame({"zip": ["1301", "1302", "1311", "1312", "1312"]})
    suppressed = evaluate(df2, {"zip": h}, {"zip": 0}, [KAnonymity(2)], max_suppression=1)
    assert suppressed.suppressed == 3
    assert suppressed.metrics["entropy"] == pytest.approx(3 * math.log2(5 / 1))


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


def test_a_qi_released_at_level_0_keeps_its_values_and_the_input_is_untouched() -> None:
    # Nothing suppressed, a QI at level 0 shows each value as itself (its label), in
    # the dtype a release gives every QI (pandas 3 may then share the input's column);
    # a missing value shows its label, the text "nan". Editing the release, or the
    # input afterwards, leaves the other as it was.
    strings = default_string_dtype()
    df = pd.DataFrame(
        {
            "zip": pd.Series(["1301", "1302", "1311", "1312"] * 3, dtype=strings),
            "sex": pd.Series(["m", "f", "m"] * 4, dtype=strings),
            "code": pd.Series(["a", None, "b", "a"] * 3, dtype=strings),
            "n": np.arange(12),
        }
    )
    hierarchies = {
        "zip": Hierarchy.masking(["1301", "1302", "1311", "1312"], steps=2),
        "sex": Hierarchy.from_frame(pd.DataFrame({0: ["m", "f"], 1: ["*", "*"]})),
        "code": Hierarchy.from_frame(pd.DataFrame({0: ["a", "b", "nan"], 1: ["*"] * 3})),
    }
    original = df.copy()
    levels = {"zip": 0, "sex": 0, "code": 0}
    for suppression in ("remove", "mark"):
        out = evaluate(
            df, hierarchies, levels, [KAnonymity(1)], max_suppression=0, suppression=suppression
        ).data
        assert [out[q].dtype for q in hierarchies] == [strings] * 3
        assert out["zip"].tolist() == df["zip"].tolist()
        assert out["sex"].tolist() == df["sex"].tolist()
        assert out["code"].tolist() == ["a", "nan", "b", "a"] * 3
        out.loc[0, "zip"] = "1399"
        out.loc[1, "sex"] = "x"
        pd.testing.assert_frame_equal(df, original)
    out = evaluate(df, hierarchies, levels, [KAnonymity(1)], max_suppression=0).data
    df.loc[0, "zip"] = "1399"
    assert out.loc[0, "zip"] == "1301"


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
    df = pd.read_csv(f"{ADULT}/adult.csv.gz", sep=";", dtype=str)
    names = [*ADULT_QIS, "occupation"]
    hierarchies = {q: Hierarchy.from_csv(f"{ADULT}/adult_hierarchy_{q}.csv") for q in names}
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
    df, every = adult
    hierarchies = {q: every[q] for q in ADULT_QIS}
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


@pytest.mark.parametrize(
    ("case", "levels", "loss"),
    [
        ("9 QIs, k=5", [0, 3, 0, 0, 2, 1, 1, 2, 0], 0.2419),
        ("k=5 + distinct 3-diversity", [0, 3, 0, 0, 2, 1, 1, 0], 0.1717),
        ("k=5 + 0.2-closeness", [1, 4, 1, 1, 3, 1, 2, 1], 0.8150),
    ],
)
def test_arx_adult_optima_with_more_qis_and_sensitive_models(
    adult: tuple[pd.DataFrame, dict[str, Hierarchy]], case: str, levels: list[int], loss: float
) -> None:
    df, every = adult
    models: list[PrivacyModel] = [KAnonymity(5)]
    if case.startswith("9"):
        qis = [*ADULT_QIS[:7], "occupation", "salary-class"]
    else:
        qis = ADULT_QIS
        models.append(
            DistinctLDiversity("occupation", 3)
            if "diversity" in case
            else TCloseness("occupation", 0.2, distance="equal")
        )
    hierarchies = {q: every[q] for q in qis}
    at_arx = evaluate(
        df, hierarchies, dict(zip(qis, levels, strict=True)), models, max_suppression=0.05
    )
    assert round(at_arx.metrics["loss"], 4) == loss
    # ARX's semantics (reference="input") reproduce ARX's optimum; here the released
    # table also passes against its own distribution, so the default finds it too.
    for reference in ("input", "release"):
        found = anonymize(df, hierarchies, models, max_suppression=0.05, reference=reference)
        assert found.optimal
        assert found.reference == reference
        assert round(found.metrics["loss"], 4) <= loss
        assert found.suppressed <= 0.05 * len(df)


def test_tagging_settles_nodes_without_evaluating_them(
    adult: tuple[pd.DataFrame, dict[str, Hierarchy]],
) -> None:
    df, every = adult
    hierarchies = {q: every[q] for q in ADULT_QIS}
    result = anonymize(df, hierarchies, [KAnonymity(5)], max_suppression=0.0)
    lattice = result.lattice
    assert len(lattice) == np.prod([h.levels for h in hierarchies.values()])
    tagged = lattice.loc[~lattice["evaluated"] & lattice["feasible"].notna()]
    # Most of the lattice is decided by predictive tagging, and every tagged verdict
    # agrees with a direct evaluation (checked on a sample of both kinds).
    assert len(tagged) > 0.5 * len(lattice)
    sample = pd.concat(
        [
            tagged.loc[tagged["feasible"].astype(bool)].head(5),
            tagged.loc[~tagged["feasible"].astype(bool)].head(5),
        ]
    )
    assert len(sample) == 10
    for _, row in sample.iterrows():
        levels = {q: int(row[q]) for q in ADULT_QIS}
        direct = evaluate(df, hierarchies, levels, [KAnonymity(5)], max_suppression=0.0)
        assert bool(direct.lattice["feasible"].iloc[0]) == bool(row["feasible"])


@pytest.mark.parametrize("max_suppression", [0.0, 0.1])
@pytest.mark.parametrize("kind", ["k", "t"])
def test_lazy_best_first_search_matches_the_lattice_search(
    monkeypatch: pytest.MonkeyPatch, max_suppression: float, kind: str
) -> None:
    df, hierarchies = _small(4, n=90)
    models: list[PrivacyModel] = (
        [KAnonymity(4)] if kind == "k" else [KAnonymity(2), TCloseness("disease", 0.3)]
    )
    full = anonymize(df, hierarchies, models, max_suppression=max_suppression)
    monkeypatch.setattr(search_module, "MATERIALIZE_LIMIT", 0)
    lazy = anonymize(df, hierarchies, models, max_suppression=max_suppression)
    assert lazy.optimal
    assert lazy.metrics["loss"] == pytest.approx(full.metrics["loss"], rel=1e-12)
    assert lazy.lattice["evaluated"].all()
    assert len(lazy.lattice) < len(full.lattice) or max_suppression > 0


def test_time_limit_returns_a_feasible_node_and_says_it_is_not_optimal(
    adult: tuple[pd.DataFrame, dict[str, Hierarchy]],
) -> None:
    df, every = adult
    hierarchies = {q: every[q] for q in ADULT_QIS}
    with pytest.warns(search_module.SearchBudgetWarning, match="not proven optimal"):
        result = anonymize(df, hierarchies, [KAnonymity(5)], max_suppression=0.02, time_limit=1e-9)
    assert not result.optimal
    assert result.suppressed <= 0.02 * len(df)
    sizes = result.data.groupby(ADULT_QIS).size()
    assert (sizes >= 5).all()
    with pytest.raises(ParameterError, match="time_limit"):
        anonymize(df, hierarchies, [KAnonymity(5)], max_suppression=0.02, time_limit=0)


@pytest.mark.parametrize("max_suppression", [0.0, 0.1])
def test_an_aggregated_table_with_weights_gives_the_records_optimum(
    max_suppression: float,
) -> None:
    df, hierarchies = _small(5, n=120)
    models: list[PrivacyModel] = [KAnonymity(4), TCloseness("disease", 0.4)]
    raw = anonymize(df, hierarchies, models, max_suppression=max_suppression)
    counts = df.groupby([*hierarchies, "disease"]).size().rename("n").reset_index()
    counts = counts.sample(frac=1.0, random_state=0)  # row order must not matter
    grouped = anonymize(counts, hierarchies, models, max_suppression=max_suppression, weights="n")
    assert grouped.levels == raw.levels
    assert grouped.suppressed == raw.suppressed
    for name in ("loss", "discernibility", "entropy", "classes"):
        assert grouped.metrics[name] == pytest.approx(raw.metrics[name], rel=1e-12)
    assert int(grouped.data["n"].sum()) == len(raw.data)


def test_weights_errors() -> None:
    df, hierarchies = _small(0)
    df = df.assign(n=1)
    with pytest.raises(ColumnError, match="weights"):
        anonymize(df, hierarchies, [KAnonymity(2)], max_suppression=0, weights="nope")
    with pytest.raises(ParameterError, match="integer record counts"):
        anonymize(df.assign(n=-1), hierarchies, [KAnonymity(2)], max_suppression=0, weights="n")
    with pytest.raises(ParameterError, match="integer record counts"):
        anonymize(df.assign(n=0.5), hierarchies, [KAnonymity(2)], max_suppression=0, weights="n")
    with pytest.raises(ParameterError, match="quasi-identifier"):
        anonymize(df, hierarchies, [KAnonymity(2)], max_suppression=0, weights="age")
