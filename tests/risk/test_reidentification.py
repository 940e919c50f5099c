"""Tests of veil.risk.reidentification: equivalence-class risk measures."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from veil.errors import ColumnError, ParameterError, PrivacyWarning
from veil.risk.reidentification import (
    RiskSummary,
    attribute_disclosure,
    qi_scan,
    record_risk,
    summary,
)

from .._hang import within


@pytest.fixture
def small() -> pd.DataFrame:
    # classes: (1,F) x3, (1,M) x2, (2,F) x1, (2,M) x1 -> sizes 3, 2, 1, 1
    return pd.DataFrame(
        {
            "zip": ["1", "1", "1", "1", "1", "2", "2"],
            "sex": ["F", "F", "F", "M", "M", "F", "M"],
            "dx": ["a", "a", "a", "a", "b", "c", "c"],
        }
    )


def _seed_registry() -> pd.DataFrame:
    # A synthetic registry (zip, age, birth day, sex, diagnosis) with published risk
    # figures, generated exactly as the reference computation generates it.
    rng = np.random.default_rng(1201)
    n = 6000
    zip_codes = np.array([f"65{1 + (z >= 12)}{z:02d}" for z in range(40)])
    zip_weights = rng.dirichlet(np.full(40, 2.0))
    age = np.clip(rng.normal(45, 17, n), 18, 95).astype(int)
    birth_day = rng.integers(1, 366, n)
    sex = rng.choice(["F", "M"], n)
    zips = rng.choice(zip_codes, n, p=zip_weights)
    return pd.DataFrame({"zip": zips, "age": age, "birth_day": birth_day, "sex": sex})


def test_summary_hand_computed(small: pd.DataFrame) -> None:
    s = summary(small, ["zip", "sex"], threshold=0.4)
    assert isinstance(s, RiskSummary)
    assert (s.n_records, s.n_classes, s.sample_uniques) == (7, 4, 2)
    assert s.sample_uniqueness == pytest.approx(2 / 7)
    assert s.prosecutor_highest == 1.0
    assert s.prosecutor_average == pytest.approx(4 / 7)
    # risks 1/3, 1/2, 1, 1: records above 0.4 are the 2 + 1 + 1
    assert s.records_above_threshold == pytest.approx(4 / 7)
    assert s.marketer == pytest.approx(4 / 7)
    assert s.journalist_highest is None and s.population_uniqueness is None


def test_prosecutor_average_is_mean_record_risk(small: pd.DataFrame) -> None:
    s = summary(small, ["zip", "sex"])
    assert s.prosecutor_average == pytest.approx(record_risk(small, ["zip", "sex"]).mean())


def test_record_risk_values_and_index_independence(small: pd.DataFrame) -> None:
    risk = record_risk(small, ["zip", "sex"])
    assert risk.tolist() == pytest.approx([1 / 3] * 3 + [1 / 2] * 2 + [1.0, 1.0])
    shuffled = small.set_axis([5, 5, "x", 0, -1, 3, 3])
    other = record_risk(shuffled, ["zip", "sex"])
    assert other.index.equals(shuffled.index)
    np.testing.assert_allclose(other.to_numpy(), risk.to_numpy())
    assert summary(shuffled, ["zip", "sex"]) == summary(small, ["zip", "sex"])


def test_missing_values_are_a_class() -> None:
    df = pd.DataFrame({"a": [1.0, np.nan, np.nan, 2.0], "b": ["x", None, None, "x"]})
    assert record_risk(df, ["a", "b"]).tolist() == [1.0, 0.5, 0.5, 1.0]
    assert summary(df, ["a", "b"]).n_classes == 3


def test_categorical_and_numeric_columns() -> None:
    df = pd.DataFrame({"c": pd.Categorical(["u", "v", "u", None]), "n": [1, 1, 1, 1]})
    assert record_risk(df, ["c", "n"]).tolist() == [0.5, 1.0, 0.5, 1.0]


def test_does_not_mutate_input(small: pd.DataFrame) -> None:
    before = small.copy()
    summary(small, ["zip", "sex"], sampling_fraction=0.5)
    attribute_disclosure(small, ["zip"], "dx")
    pd.testing.assert_frame_equal(small, before)


def test_journalist_with_population_table(small: pd.DataFrame) -> None:
    extra = pd.DataFrame({"zip": ["2", "2", "1"], "sex": ["F", "F", "M"], "dx": "z"})
    population = pd.concat([small, extra], ignore_index=True)
    s = summary(small, ["zip", "sex"], population=population)
    # population sizes of the sample's classes: (1,F) 3, (1,M) 3, (2,F) 3, (2,M) 1
    assert s.journalist_highest == 1.0
    assert s.marketer == pytest.approx((3 / 3 + 2 / 3 + 1 / 3 + 1 / 1) / 7)


def test_journalist_with_class_sizes(small: pd.DataFrame) -> None:
    s = summary(small, ["zip", "sex"], population=[30, 30, 30, 20, 20, 10, 5])
    assert s.journalist_highest == pytest.approx(1 / 5)
    assert s.marketer == pytest.approx((3 / 30 + 2 / 20 + 1 / 10 + 1 / 5) / 7)


def test_population_must_contain_sample(small: pd.DataFrame) -> None:
    with pytest.raises(ParameterError, match="at least the sample"):
        summary(small, ["zip", "sex"], population=small.iloc[:3])
    with pytest.raises(ParameterError, match="one size per record"):
        summary(small, ["zip", "sex"], population=[1, 2])
    with pytest.raises(ColumnError):
        summary(small, ["zip", "sex"], population=small[["zip"]])


def test_sampling_fraction_adds_population_estimates(small: pd.DataFrame) -> None:
    s = summary(small, ["zip", "sex"], sampling_fraction=0.5)
    assert s.journalist_highest == pytest.approx(0.5)  # smallest class 1 -> F = 2
    assert s.population_model in {"pitman", "zayatz"}
    assert s.population_uniqueness is not None
    assert 0.0 <= s.population_uniqueness <= s.sample_uniqueness
    full = summary(small, ["zip", "sex"], sampling_fraction=1.0)
    assert full.population_uniqueness == pytest.approx(full.sample_uniqueness)
    assert full.journalist_highest == full.prosecutor_highest


def test_to_dict_and_frame(small: pd.DataFrame) -> None:
    s = summary(small, ["zip", "sex"])
    d = s.to_dict()
    assert d["n_classes"] == 4
    frame = s.to_frame()
    assert list(frame.columns) == ["value"]
    assert frame.loc["n_records", "value"] == 7


def test_qi_scan_reproduces_seed_table() -> None:
    registry = _seed_registry()
    scenarios = {
        "sex": ["sex"],
        "zip": ["zip"],
        "zip + sex": ["zip", "sex"],
        "zip + age + sex": ["zip", "age", "sex"],
        "zip + age + birthday + sex": ["zip", "age", "birth_day", "sex"],
    }
    table = qi_scan(registry, scenarios).round(3)
    # Seed section 83.3 prints: classes, unique_rate, mean_risk, max_risk.
    expected = {
        "sex": (2, 0.000, 0.000, 0.000),
        "zip": (40, 0.000, 0.007, 0.045),
        "zip + sex": (80, 0.000, 0.013, 0.100),
        "zip + age + sex": (3001, 0.247, 0.500, 1.000),
        "zip + age + birthday + sex": (5975, 0.992, 0.996, 1.000),
    }
    for label, (classes, unique, mean, top) in expected.items():
        row = table.loc[label]
        assert row["n_classes"] == classes
        assert (row["unique_rate"], row["mean_risk"], row["max_risk"]) == pytest.approx(
            (unique, mean, top), abs=1e-9
        )


def test_qi_scan_all_subsets(small: pd.DataFrame) -> None:
    table = qi_scan(small, ["zip", "sex", "dx"], max_size=2)
    assert list(table.index) == ["zip", "sex", "dx", "zip + sex", "zip + dx", "sex + dx"]
    assert table.loc["zip + sex", "n_classes"] == 4
    assert table.loc["zip + sex", "unique_rate"] == pytest.approx(2 / 7)
    assert table.loc["zip", "max_risk"] == pytest.approx(1 / 2)
    with pytest.raises(ParameterError, match="max_size"):
        qi_scan(small, ["zip"], max_size=0)


def test_attribute_disclosure_hand_computed(small: pd.DataFrame) -> None:
    out = attribute_disclosure(small, ["zip"], "dx", threshold=0.8)
    # zip 1: a 4 of 5 = 0.8 (reported); zip 2: c 2 of 2 = 1.0 (reported)
    assert out["zip"].tolist() == ["2", "1"]
    assert out["size"].tolist() == [2, 5]
    assert out["sensitive_value"].tolist() == ["c", "a"]
    assert out["share"].tolist() == pytest.approx([1.0, 0.8])
    assert attribute_disclosure(small, ["zip"], "dx", threshold=0.81)["zip"].tolist() == ["2"]


def test_attribute_disclosure_matches_groupby() -> None:
    rng = np.random.default_rng(7)
    df = pd.DataFrame(
        {"q": rng.integers(0, 50, 2000), "s": rng.choice(["x", "y", "z"], 2000, p=[0.8, 0.1, 0.1])}
    )
    out = attribute_disclosure(df, ["q"], "s", threshold=0.8)
    share = df.groupby("q")["s"].agg(lambda s: s.value_counts(normalize=True).iloc[0])
    assert set(out["q"]) == set(share[share >= 0.8].index)


@pytest.mark.parametrize("bad", [0.0, -0.1, 1.5])
def test_threshold_outside_unit_interval(small: pd.DataFrame, bad: float) -> None:
    with pytest.raises(ParameterError, match="threshold"):
        summary(small, ["zip"], threshold=bad)
    with pytest.raises(ParameterError, match="threshold"):
        attribute_disclosure(small, ["zip"], "dx", threshold=bad)
    with pytest.raises(ParameterError, match="sampling_fraction"):
        summary(small, ["zip"], sampling_fraction=bad)


def test_error_paths(small: pd.DataFrame) -> None:
    with pytest.raises(ColumnError, match="nope"):
        summary(small, ["zip", "nope"])
    with pytest.raises(ColumnError):
        record_risk(small, ["nope"])
    with pytest.raises(ColumnError):
        attribute_disclosure(small, ["zip"], "nope")
    with pytest.raises(ColumnError):
        qi_scan(small, {"x": ["nope"]})
    with pytest.raises(ParameterError, match="empty"):
        summary(small.iloc[:0], ["zip"])
    with pytest.raises(ParameterError, match="at least one column"):
        summary(small, [])
    with pytest.raises(ParameterError, match="repeat"):
        summary(small, ["zip", "zip"])
    with pytest.raises(ParameterError, match="sensitive"):
        attribute_disclosure(small, ["zip"], "zip")


def test_adult_summary() -> None:
    from veil.datasets import load_adult

    adult = load_adult()
    qis = ["age", "sex", "race", "marital-status", "education", "native-country", "workclass"]
    s = summary(adult, qis)
    expected = adult.groupby(qis, dropna=False).size()
    assert s.n_classes == len(expected)
    assert s.sample_uniques == int((expected == 1).sum())
    assert s.prosecutor_average == pytest.approx(len(expected) / len(adult))


def test_summary_of_an_aggregated_table_with_weights_equals_the_records_summary() -> None:
    rng = np.random.default_rng(11)
    df = pd.DataFrame(
        {"zip": rng.choice(["1", "2", "3", "4"], 500), "age": rng.integers(20, 30, 500)}
    )
    counts = df.groupby(["zip", "age"]).size().rename("n").reset_index()
    counts = pd.concat([counts, counts.head(2).assign(n=0)])  # empty rows are ignored
    for fraction in (None, 0.1):
        raw = summary(df, ["zip", "age"], sampling_fraction=fraction)
        grouped = summary(counts, ["zip", "age"], sampling_fraction=fraction, weights="n")
        assert grouped == raw
    with pytest.raises(ColumnError, match="weights"):
        summary(counts, ["zip", "age"], weights="zip")
    with pytest.raises(ParameterError, match="integer counts"):
        summary(counts.assign(n=-1), ["zip", "age"], weights="n")
    with pytest.raises(ParameterError, match="population"):
        summary(counts, ["zip", "age"], weights="n", population=np.ones(len(counts)))


# ------------------------------------------------- issue 14 C: bad inputs and hangs


@pytest.mark.parametrize(
    ("option", "value"),
    [
        ("threshold", "0.2"),
        ("threshold", float("nan")),
        ("threshold", True),
        ("threshold", 0.0),
        ("sampling_fraction", "0.5"),
        ("sampling_fraction", float("nan")),
    ],
)
def test_thresholds_that_are_not_numbers_in_0_1_are_refused_naming_them(
    small: pd.DataFrame, option: str, value: object
) -> None:
    # A string threshold used to reach `0.0 < value` and raise a raw TypeError.
    with pytest.raises(ParameterError, match=rf"{option} must be a number in \(0, 1\]; got"):
        summary(small, ["zip", "sex"], **{option: value})  # type: ignore[arg-type]


@pytest.mark.parametrize("weight", [1e308, float("inf"), 2.0**53])
def test_weights_that_overflow_the_record_count_are_refused(
    small: pd.DataFrame, weight: float
) -> None:
    # Weights of 1e308 used to give n_records = -9223372036854775805 (int64 overflow).
    weighted = small.assign(n=[weight, weight, 1, 1, 1, 1, 1])
    with pytest.raises(ParameterError, match=r"weights column 'n' (must hold finite|sums to)"):
        summary(weighted, ["zip", "sex"], weights="n")
    exact = small.assign(n=[2**40, 2**40, 1, 1, 1, 1, 1])
    assert summary(exact, ["zip", "sex"], weights="n").n_records == 2**41 + 5


@pytest.mark.parametrize("bad", [float("nan"), float("inf"), 0.5, 0.0])
def test_population_class_sizes_must_be_whole_numbers_of_at_least_one(
    small: pd.DataFrame, bad: float
) -> None:
    # population=[nan, ...] used to be taken: the journalist risk came out as nan.
    sizes = [30.0, 30.0, 30.0, 20.0, 20.0, 10.0, bad]
    with pytest.raises(ParameterError, match=r"population class sizes must be whole numbers"):
        summary(small, ["zip", "sex"], population=sizes)
    with pytest.raises(ParameterError, match="must hold numbers"):
        summary(small, ["zip", "sex"], population=["a"] * 7)


def _wide(n_columns: int) -> pd.DataFrame:
    return pd.DataFrame({f"c{i}": np.arange(60) % (i + 2) for i in range(n_columns)})


def test_qi_scan_over_30_columns_is_refused_at_once_naming_the_max_size_that_fits() -> None:
    # 30 columns: 2^30 - 1 combinations, which used to be built eagerly (over 5 minutes).
    wide = _wide(30)
    with pytest.raises(ParameterError) as info:
        within(30, "qi_scan over 30 columns", qi_scan, wide, list(wide.columns))
    message = str(info.value)
    assert "1,073,741,823 combinations" in message and "max_combinations=100,000" in message
    assert "max_size=4 scans 31,930" in message
    table = qi_scan(wide, list(wide.columns), max_size=2)
    assert len(table) == 30 + 435
    assert table.attrs["veil.qi_scan"] == {"complete": True, "scanned": 465, "total": 465}


def test_qi_scan_time_limit_returns_the_smaller_sizes_and_says_what_was_left_out() -> None:
    wide = _wide(12)
    with pytest.warns(PrivacyWarning, match=r"time_limit=1e-09 s reached after 1 of 4,095"):
        table = qi_scan(wide, list(wide.columns), time_limit=1e-9)
    assert list(table.index) == ["c0"]
    assert table.attrs["veil.qi_scan"] == {"complete": False, "scanned": 1, "total": 4095}
    full = qi_scan(wide, list(wide.columns), max_size=1, time_limit=60.0)
    assert full.attrs["veil.qi_scan"]["complete"] and len(full) == 12


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"max_combinations": 0}, "max_combinations must be an integer >= 1"),
        ({"max_combinations": 2.5}, "max_combinations must be an integer >= 1"),
        ({"time_limit": 0}, "time_limit must be a positive number of seconds"),
        ({"time_limit": float("nan")}, "time_limit must be a positive number of seconds"),
        ({"time_limit": "1"}, "time_limit must be a positive number of seconds"),
        ({"max_combinations": 1}, "2 named combinations, more than max_combinations=1"),
    ],
)
def test_qi_scan_bounds_are_checked(
    small: pd.DataFrame, kwargs: dict[str, object], match: str
) -> None:
    with pytest.raises(ParameterError, match=match):
        qi_scan(small, {"a": ["zip"], "b": ["sex"]}, **kwargs)  # type: ignore[arg-type]


@pytest.mark.parametrize("seed", range(6))
def test_a_scan_counts_the_classes_that_numbering_them_gives(seed: int) -> None:
    """The scan codes each column once and counts the combined codes; the classes must be
    those of :func:`veil.classes.class_ids` (missing values a value, wide keys hashed)."""
    from itertools import combinations

    from veil.classes import class_ids

    gen = np.random.Generator(np.random.PCG64(seed))
    n = int(gen.integers(1, 400))
    df = pd.DataFrame(
        {
            "few": gen.integers(0, 3, n).astype(str),
            "missing": np.where(gen.random(n) < 0.3, None, gen.integers(0, 4, n).astype(str)),
            "wide": gen.integers(0, 10**12, n),  # a combined key beyond 8 n values
            "float": np.where(gen.random(n) < 0.2, np.nan, gen.integers(0, 5, n) / 2),
        }
    )
    scanned = qi_scan(df, list(df.columns))
    for size in range(1, 5):
        for combo in combinations(df.columns, size):
            ids, k = class_ids((df[c] for c in combo), n)
            sizes = np.bincount(ids, minlength=k)
            row = scanned.loc[" + ".join(combo)]
            assert row["n_classes"] == k
            assert row["unique_rate"] == (sizes == 1).sum() / n
            assert row["max_risk"] == 1.0 / sizes.min()
