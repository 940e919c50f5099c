"""Tests for veil.metrics.divergence_distributions."""

from __future__ import annotations

import math
from collections import Counter
from typing import Any

import numpy as np
import pandas as pd
import pandas.testing as pdt
import pytest

from veil.errors import ColumnError, DataTypeError, ParameterError
from veil.metrics import divergence_distributions

from .._data import UCI_ADULT_CSV as ADULT_CSV


@pytest.fixture(scope="module")
def adult() -> pd.DataFrame:
    return pd.read_csv(ADULT_CSV, skipinitialspace=True)


@pytest.fixture(scope="module")
def adult_dp(adult: pd.DataFrame) -> pd.DataFrame:
    """Adult with a quarter of workclass redrawn uniformly and age shifted by 3 years."""
    rng = np.random.default_rng(99)
    dp: pd.DataFrame = adult.copy()
    rows = rng.choice(len(adult), size=len(adult) // 4, replace=False)
    domain = np.sort(adult["workclass"].unique())
    workclass = dp["workclass"].to_numpy(copy=True)
    workclass[rows] = rng.choice(domain, size=rows.size)
    dp["workclass"] = workclass
    dp["age"] = dp["age"] + 3
    return dp


def _expected(original: list[Any], dp: list[Any]) -> dict[str, float]:
    """TVD, JS and KL written out from their definitions on plain Python lists."""
    count_p, count_q = Counter(original), Counter(dp)
    values = list(count_p.keys() | count_q.keys())
    p = [count_p[v] / len(original) for v in values]
    q = [count_q[v] / len(dp) for v in values]
    m = [(pi + qi) / 2 for pi, qi in zip(p, q, strict=True)]

    def kl(a: list[float], b: list[float]) -> float:
        return sum(
            ai * math.log(ai / bi) if bi > 0 else math.inf
            for ai, bi in zip(a, b, strict=True)
            if ai > 0
        )

    return {
        "tvd": 0.5 * sum(abs(pi - qi) for pi, qi in zip(p, q, strict=True)),
        "js": 0.5 * kl(p, m) + 0.5 * kl(q, m),
        "kl": kl(p, q),
    }


# --- values -----------------------------------------------------------------------------


def test_identical_numeric_columns_have_zero_divergence() -> None:
    df = pd.DataFrame({"age": [30, 41, 41, 57, 30, 22]})
    assert divergence_distributions(df, df.copy(), "age") == {
        "tvd": 0.0,
        "js": 0.0,
        "kl": 0.0,
        "wasserstein": 0.0,
    }


def test_identical_categorical_columns_have_zero_divergence() -> None:
    df = pd.DataFrame({"sex": ["F", "M", "M", "F", "M"]})
    assert divergence_distributions(df, df.copy(), "sex") == {"tvd": 0.0, "js": 0.0, "kl": 0.0}


def test_same_distribution_in_another_order_has_zero_divergence() -> None:
    df = pd.DataFrame({"sex": ["F", "M", "M", "F", "M"]})
    dp = pd.DataFrame({"sex": ["M", "M", "F", "M", "F"]})
    assert divergence_distributions(df, dp, "sex") == {"tvd": 0.0, "js": 0.0, "kl": 0.0}


@pytest.mark.parametrize(
    ("original", "dp"),
    [([1, 1, 2], [3, 4, 4, 4]), (["a", "b"], ["c", "c", "d"])],
)
def test_disjoint_support_is_maximally_divergent(original: list[Any], dp: list[Any]) -> None:
    result = divergence_distributions(pd.DataFrame({"c": original}), pd.DataFrame({"c": dp}), "c")
    assert result["tvd"] == pytest.approx(1.0, abs=1e-12)
    assert result["js"] == pytest.approx(math.log(2), abs=1e-12)
    assert result["kl"] == math.inf


def test_hand_computed_example() -> None:
    original = pd.DataFrame({"x": [0, 0, 1, 1]})
    dp = pd.DataFrame({"x": [0, 1, 1, 1]})
    # p = (1/2, 1/2), q = (1/4, 3/4), m = (3/8, 5/8).
    kl_pm = 0.5 * math.log(0.5 / 0.375) + 0.5 * math.log(0.5 / 0.625)
    kl_qm = 0.25 * math.log(0.25 / 0.375) + 0.75 * math.log(0.75 / 0.625)
    result = divergence_distributions(original, dp, "x")
    assert result["tvd"] == pytest.approx(0.25, abs=1e-12)
    assert result["js"] == pytest.approx(0.5 * kl_pm + 0.5 * kl_qm, abs=1e-12)
    assert result["kl"] == pytest.approx(0.5 * math.log(2) + 0.5 * math.log(2 / 3), abs=1e-12)
    # One unit of mass in four moved by a distance of 1.
    assert result["wasserstein"] == pytest.approx(0.25, abs=1e-12)


def test_kl_is_infinite_only_when_dp_misses_an_original_value() -> None:
    narrow = pd.DataFrame({"c": ["a", "a", "b", "b"]})
    wide = pd.DataFrame({"c": ["a", "b", "c", "c"]})
    assert divergence_distributions(wide, narrow, "c")["kl"] == math.inf
    assert math.isfinite(divergence_distributions(narrow, wide, "c")["kl"])


def test_values_are_python_floats() -> None:
    df = pd.DataFrame({"x": [1.0, 2.0, 2.0]})
    result = divergence_distributions(df, df.assign(x=[1.0, 1.0, 3.0]), "x")
    assert all(type(value) is float for value in result.values())


def test_matches_the_definitions_on_perturbed_adult(
    adult: pd.DataFrame, adult_dp: pd.DataFrame
) -> None:
    for column in ("workclass", "age", "education"):
        expected = _expected(adult[column].tolist(), adult_dp[column].tolist())
        result = divergence_distributions(adult, adult_dp, column)
        for key, value in expected.items():
            assert result[key] == pytest.approx(value, abs=1e-9), (column, key)
    assert divergence_distributions(adult, adult_dp, "workclass")["tvd"] > 0.01


def test_wasserstein_of_a_shift_is_the_shift(adult: pd.DataFrame, adult_dp: pd.DataFrame) -> None:
    assert divergence_distributions(adult, adult_dp, "age")["wasserstein"] == pytest.approx(
        3.0, abs=1e-9
    )


def test_row_counts_may_differ() -> None:
    original = pd.DataFrame({"c": ["a", "b"]})
    dp = pd.DataFrame({"c": ["a", "a", "b", "b", "a", "b"]})
    assert divergence_distributions(original, dp, "c") == {"tvd": 0.0, "js": 0.0, "kl": 0.0}


def test_new_column_reads_the_dp_prefixed_column() -> None:
    original = pd.DataFrame({"c": ["a", "a", "b", "b"]})
    dp = original.assign(dp_c=["a", "b", "b", "b"])
    assert divergence_distributions(original, dp, "c", new_column=True)["tvd"] == 0.25
    assert divergence_distributions(original, dp, "c", new_column=False)["tvd"] == 0.0


def test_missing_values_count_as_a_value_of_their_own() -> None:
    original = pd.DataFrame({"c": ["a", None, "b", "b"]})
    dp = pd.DataFrame({"c": ["a", "a", "b", "b"]})
    result = divergence_distributions(original, dp, "c")
    assert result["tvd"] == pytest.approx(0.25, abs=1e-12)
    assert result["kl"] == math.inf
    assert divergence_distributions(original, original.copy(), "c")["kl"] == 0.0


def test_wasserstein_uses_present_values_only() -> None:
    original = pd.DataFrame({"x": [1.0, np.nan, 2.0]})
    dp = pd.DataFrame({"x": [2.0, 3.0, np.nan]})
    assert divergence_distributions(original, dp, "x")["wasserstein"] == pytest.approx(1.0)
    all_missing = pd.DataFrame({"x": [np.nan, np.nan]})
    assert math.isnan(divergence_distributions(original, all_missing, "x")["wasserstein"])


def test_integer_and_float_values_match_by_equality() -> None:
    original = pd.DataFrame({"x": [1, 2, 2]})
    dp = pd.DataFrame({"x": [1.0, 2.0, 2.0]})
    assert divergence_distributions(original, dp, "x")["tvd"] == 0.0


@pytest.mark.parametrize("dtype", ["string", "category"])
def test_string_and_category_dtypes_behave_like_object(
    adult: pd.DataFrame, adult_dp: pd.DataFrame, dtype: str
) -> None:
    expected = divergence_distributions(adult, adult_dp, "workclass")
    original = adult[["workclass"]].astype(dtype)
    dp = adult_dp[["workclass"]].astype(dtype)
    assert divergence_distributions(original, dp, "workclass") == pytest.approx(expected)
    assert divergence_distributions(original, adult_dp, "workclass") == pytest.approx(expected)


def test_unobserved_categories_do_not_matter() -> None:
    dtype = pd.CategoricalDtype(["a", "b", "never"])
    original = pd.DataFrame({"c": pd.Series(["a", "a", "b"], dtype=dtype)})
    dp = pd.DataFrame({"c": pd.Series(["a", "b", "b"], dtype=dtype)})
    plain = divergence_distributions(original.astype(object), dp.astype(object), "c")
    assert divergence_distributions(original, dp, "c") == plain
    assert "wasserstein" not in plain


def test_inputs_are_not_modified(adult: pd.DataFrame, adult_dp: pd.DataFrame) -> None:
    original = adult.astype({"education": "category"})
    dp = adult_dp.assign(dp_education=adult_dp["education"].astype("category"))
    original_copy, dp_copy = original.copy(deep=True), dp.copy(deep=True)
    for column in ("age", "workclass"):
        divergence_distributions(original, dp, column)
    divergence_distributions(original, dp, "education", new_column=True)
    pdt.assert_frame_equal(original, original_copy)
    pdt.assert_frame_equal(dp, dp_copy)


# --- errors -----------------------------------------------------------------------------


def test_column_missing_from_original() -> None:
    df = pd.DataFrame({"c": ["a"]})
    with pytest.raises(ColumnError, match=r"column: 'z' is not in df_original"):
        divergence_distributions(df, df.assign(z=1), "z")


def test_column_missing_from_dp() -> None:
    df = pd.DataFrame({"c": ["a"]})
    with pytest.raises(ColumnError, match=r"column: 'c' is not in df_dp"):
        divergence_distributions(df, pd.DataFrame({"d": ["a"]}), "c")


def test_dp_prefixed_column_missing() -> None:
    df = pd.DataFrame({"c": ["a"]})
    with pytest.raises(ColumnError, match=r"column: 'dp_c' is not in df_dp"):
        divergence_distributions(df, df, "c", new_column=True)


def test_empty_column_is_refused() -> None:
    df = pd.DataFrame({"c": ["a"]})
    with pytest.raises(ParameterError, match=r"df_dp: column 'c' must have at least 1 row, got 0"):
        divergence_distributions(df, df.iloc[:0], "c")


def test_frames_must_be_data_frames() -> None:
    df = pd.DataFrame({"c": ["a"]})
    series: Any = df["c"]
    with pytest.raises(DataTypeError, match=r"df_original: must be a pandas DataFrame, got Series"):
        divergence_distributions(series, df, "c")
