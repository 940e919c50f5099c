"""Tests for veil.metrics.correlation_loss."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import numpy.typing as npt
import pandas as pd
import pandas.testing as pdt
import pytest
from scipy.stats import kendalltau, rankdata

from veil.errors import ColumnError, DataTypeError, ParameterError
from veil.metrics import correlation_loss

from .._data import UCI_ADULT_CSV as ADULT_CSV

ADULT_FEATURES = [
    "workclass",
    "education",
    "marital-status",
    "occupation",
    "sex",
    "native-country",
    "age",
    "salary-class",
]

METHODS = ["pearson", "spearman", "kendall"]


@pytest.fixture(scope="module")
def adult() -> pd.DataFrame:
    return pd.read_csv(ADULT_CSV, skipinitialspace=True)


@pytest.fixture(scope="module")
def adult_dp(adult: pd.DataFrame) -> pd.DataFrame:
    """Adult with 20 % of workclass, sex and age shuffled among those rows, age shifted."""
    rng = np.random.default_rng(20240607)
    dp: pd.DataFrame = adult.copy()
    rows = rng.choice(len(adult), size=len(adult) // 5, replace=False)
    for col in ("workclass", "sex", "age"):
        values = dp[col].to_numpy(copy=True)
        values[rows] = values[rng.permutation(rows)]
        dp[col] = values
    dp["age"] = dp["age"] + 3
    return dp


def _small() -> pd.DataFrame:
    df: pd.DataFrame = pd.DataFrame(
        {
            "x": [1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0],
            "y": [1.0, 3.0, 2.0, 5.0, 4.0, 6.0, 8.0, 7.0],
        }
    )
    return df


def _first_appearance_codes(
    original: pd.Series[Any], dp: pd.Series[Any]
) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64]]:
    if pd.api.types.is_numeric_dtype(original.dtype):
        return original.to_numpy(dtype=np.float64), dp.to_numpy(dtype=np.float64)
    order = {value: i for i, value in enumerate(dict.fromkeys([*original, *dp]))}
    return (
        np.array([order[v] for v in original], dtype=np.float64),
        np.array([order[v] for v in dp], dtype=np.float64),
    )


def _expected_loss(x: npt.NDArray[np.float64], x_dp: npt.NDArray[np.float64], method: str) -> float:
    """The trasgoDP formula, written out with NumPy/SciPy on complete data."""

    def corr(m: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
        if method == "pearson":
            return np.corrcoef(m, rowvar=False)
        if method == "spearman":
            return np.corrcoef(rankdata(m, axis=0), rowvar=False)
        k = m.shape[1]
        out = np.eye(k)
        for i in range(k):
            for j in range(i + 1, k):
                out[i, j] = out[j, i] = kendalltau(m[:, i], m[:, j]).statistic
        return out

    off = ~np.eye(x.shape[1], dtype=bool)
    rho, rho_dp = corr(x)[off], corr(x_dp)[off]
    return float(100 * np.mean(np.abs(rho - rho_dp)) / np.mean(np.abs(rho)))


# --- values -----------------------------------------------------------------------------


@pytest.mark.parametrize("method", METHODS)
def test_identical_frames_lose_nothing(method: str) -> None:
    df = _small()
    assert correlation_loss(df, df.copy(), method=method) == 0.0  # type: ignore[arg-type]


@pytest.mark.parametrize("method", METHODS)
def test_negating_one_of_two_features_flips_the_correlation_to_200_percent(method: str) -> None:
    df = _small()
    loss = correlation_loss(df, df.assign(y=-df["y"]), method=method)  # type: ignore[arg-type]
    assert loss == pytest.approx(200.0, abs=1e-9)


def test_negating_one_of_three_perfectly_correlated_features() -> None:
    x = np.arange(10, dtype=float)
    df = pd.DataFrame({"a": x, "b": 2 * x, "c": 3 * x + 1})
    # rho_ab stays 1, rho_ac and rho_bc go from 1 to -1: mean |diff| = 4/3, mean |rho| = 1.
    assert correlation_loss(df, df.assign(c=-df["c"])) == pytest.approx(400 / 3, abs=1e-9)


def test_pearson_ignores_affine_changes() -> None:
    df = _small()
    dp = df.assign(x=2.5 * df["x"] + 7.0)
    assert correlation_loss(df, dp) == pytest.approx(0.0, abs=1e-9)


@pytest.mark.parametrize("method", ["spearman", "kendall"])
def test_rank_methods_ignore_monotone_changes(method: str) -> None:
    df = _small()
    assert correlation_loss(df, df.assign(x=np.exp(df["x"])), method=method) == 0.0  # type: ignore[arg-type]


def test_result_is_a_python_float() -> None:
    df = _small()
    assert type(correlation_loss(df, df)) is float


@pytest.mark.parametrize("method", METHODS)
def test_matches_the_formula_on_perturbed_adult(
    adult: pd.DataFrame, adult_dp: pd.DataFrame, method: str
) -> None:
    columns = [_first_appearance_codes(adult[c], adult_dp[c]) for c in ADULT_FEATURES]
    x = np.column_stack([orig for orig, _ in columns])
    x_dp = np.column_stack([dp for _, dp in columns])
    expected = _expected_loss(x, x_dp, method)
    loss = correlation_loss(adult, adult_dp, ADULT_FEATURES, method=method)  # type: ignore[arg-type]
    assert expected > 1.0  # the perturbation is visible
    assert loss == pytest.approx(expected, abs=1e-9)


def test_new_column_layout_gives_the_same_loss_as_replacement(
    adult: pd.DataFrame, adult_dp: pd.DataFrame
) -> None:
    added = adult.assign(**{f"dp_{c}": adult_dp[c] for c in ("workclass", "sex", "age")})
    replaced = correlation_loss(adult, adult_dp, ADULT_FEATURES)
    assert correlation_loss(adult, added, ADULT_FEATURES, new_column=True) == replaced
    assert correlation_loss(adult, added, ADULT_FEATURES, new_column=False) == 0.0


# --- features and columns ---------------------------------------------------------------


def test_features_none_uses_every_column_of_the_original() -> None:
    df = _small().assign(z=[0.0, 1.0, 0.0, 2.0, 1.0, 3.0, 2.0, 4.0])
    dp = df.assign(y=-df["y"], extra=1.0)
    # A low confidence lets the weakly correlated z through on 8 rows.
    loss = correlation_loss(df, dp, confidence=0.5)
    assert loss > 0.0
    assert loss == correlation_loss(df, dp, ["x", "y", "z"], confidence=0.5)


def test_new_column_reads_dp_prefixed_column_where_present() -> None:
    df = _small()
    dp = df.assign(dp_y=-df["y"])
    assert correlation_loss(df, dp, new_column=True) == pytest.approx(200.0, abs=1e-9)
    assert correlation_loss(df, dp, ["x", "y"], new_column=False) == 0.0


def test_new_column_does_not_need_the_plain_column_in_df_dp() -> None:
    df = _small()
    dp = pd.DataFrame({"x": df["x"], "dp_y": -df["y"]})
    assert correlation_loss(df, dp, new_column=True) == pytest.approx(200.0, abs=1e-9)


def test_unused_columns_of_any_dtype_are_ignored() -> None:
    df = _small().assign(when=pd.date_range("2020-01-01", periods=8))
    assert correlation_loss(df, df, ["x", "y"]) == 0.0


def test_missing_values_are_excluded_pairwise() -> None:
    rng = np.random.default_rng(7)
    x = rng.normal(size=40)
    df = pd.DataFrame({"a": x, "b": x + rng.normal(size=40), "c": x - rng.normal(size=40)})
    df.loc[[0, 5, 9], "c"] = np.nan
    dp = df.assign(b=df["b"] + rng.normal(size=40))
    dp.loc[[1, 2], "a"] = np.nan

    def pairwise(frame: pd.DataFrame) -> npt.NDArray[np.float64]:
        out = []
        for i, j in [("a", "b"), ("a", "c"), ("b", "c")]:
            both = frame[[i, j]].dropna().to_numpy()
            out.append(np.corrcoef(both[:, 0], both[:, 1])[0, 1])
        return np.array(out)

    rho, rho_dp = pairwise(df), pairwise(dp)
    expected = 100 * np.mean(np.abs(rho - rho_dp)) / np.mean(np.abs(rho))
    assert correlation_loss(df, dp) == pytest.approx(expected, abs=1e-9)


def test_constant_feature_gives_nan() -> None:
    df = _small()
    assert math.isnan(correlation_loss(df, df.assign(y=1.0)))


# --- categorical features ---------------------------------------------------------------


def test_categories_seen_only_in_dp_get_their_own_code() -> None:
    n = np.arange(16.0)
    df = pd.DataFrame({"n": n, "cat": ["a"] * 6 + ["b"] + ["a"] + ["b"] * 8})
    dp = df.assign(cat=["a"] * 6 + ["b"] + ["a"] + ["b"] * 4 + ["c"] * 4)
    # Codes in order of first appearance over original then dp: a=0, b=1, c=2.
    rho = np.corrcoef(n, [0] * 6 + [1, 0] + [1] * 8)[0, 1]
    rho_dp = np.corrcoef(n, [0] * 6 + [1, 0] + [1] * 4 + [2] * 4)[0, 1]
    expected = 100 * abs(rho - rho_dp) / abs(rho)
    assert expected > 1.0
    assert correlation_loss(df, dp) == pytest.approx(expected, abs=1e-9)


@pytest.mark.parametrize("dtype", ["string", "category"])
def test_string_and_category_dtypes_behave_like_object(
    adult: pd.DataFrame, adult_dp: pd.DataFrame, dtype: str
) -> None:
    text = [c for c in ADULT_FEATURES if adult[c].dtype == object]
    expected = correlation_loss(adult, adult_dp, ADULT_FEATURES)
    converted = adult.astype(dict.fromkeys(text, dtype))
    converted_dp = adult_dp.astype(dict.fromkeys(text, dtype))
    assert correlation_loss(converted, converted_dp, ADULT_FEATURES) == expected
    assert correlation_loss(converted, adult_dp, ADULT_FEATURES) == expected


def test_category_order_of_the_dtype_does_not_matter() -> None:
    df = pd.DataFrame({"n": np.arange(16.0), "cat": list("aaaaabababbcbccc")})
    dp = df.assign(cat=pd.Categorical(df["cat"], categories=["c", "b", "a"]))
    assert correlation_loss(df, dp) == 0.0
    assert correlation_loss(df, dp.assign(n=-dp["n"])) == pytest.approx(200.0, abs=1e-9)


def test_categorical_missing_values_are_missing_not_a_category() -> None:
    df = pd.DataFrame({"n": np.arange(16.0), "cat": ["a", None, *"aaabababbcbccc"]})
    complete = df.drop(index=1)
    dp = df.assign(cat=list("aaaaabababbcbccc"))
    # Row 1 only enters the dp correlation: the original one skips the missing value.
    rho = complete["n"].corr(complete["cat"].map({"a": 0, "b": 1, "c": 2}))
    rho_dp = df["n"].corr(dp["cat"].map({"a": 0, "b": 1, "c": 2}))
    expected = 100 * abs(rho - rho_dp) / abs(rho)
    assert expected > 0.0
    assert correlation_loss(df, dp) == pytest.approx(expected, abs=1e-9)


# --- inputs are left alone --------------------------------------------------------------


@pytest.mark.parametrize("new_column", [False, True])
def test_inputs_are_not_modified(
    adult: pd.DataFrame, adult_dp: pd.DataFrame, new_column: bool
) -> None:
    original = adult.astype({"education": "category", "sex": "string"})
    dp = adult_dp.astype({"education": "category"})
    if new_column:
        dp = dp.rename(columns={"age": "dp_age"})
    original_copy, dp_copy = original.copy(deep=True), dp.copy(deep=True)
    correlation_loss(original, dp, ADULT_FEATURES, "spearman", new_column)
    pdt.assert_frame_equal(original, original_copy)
    pdt.assert_frame_equal(dp, dp_copy)


# --- errors -----------------------------------------------------------------------------


def test_every_error_is_a_value_error() -> None:
    assert issubclass(ColumnError, ValueError)
    assert issubclass(ParameterError, ValueError)


def test_feature_missing_from_original() -> None:
    df = _small()
    with pytest.raises(ColumnError, match=r"\['z'\] are not in df_original"):
        correlation_loss(df, df.assign(z=1.0), ["x", "z"])


def test_feature_missing_from_dp() -> None:
    df = _small()
    with pytest.raises(ColumnError, match=r"'y' is not in df_dp"):
        correlation_loss(df, df[["x"]], ["x", "y"])


def test_feature_missing_from_dp_under_both_names() -> None:
    df = _small()
    with pytest.raises(ColumnError, match=r"'dp_y' or 'y' is not in df_dp"):
        correlation_loss(df, df[["x"]], ["x", "y"], new_column=True)


def test_unknown_method() -> None:
    df = _small()
    method: Any = "cosine"
    with pytest.raises(ParameterError, match=r"method: must be one of .*'kendall'.*'cosine'"):
        correlation_loss(df, df, method=method)


@pytest.mark.parametrize("confidence", [0, -1.96, float("nan")])
def test_confidence_must_be_positive(confidence: float) -> None:
    df = _small()
    with pytest.raises(ParameterError, match=r"confidence: must be > 0, got"):
        correlation_loss(df, df, confidence=confidence)


def test_confidence_must_be_a_number() -> None:
    df = _small()
    confidence: Any = "1.96"
    with pytest.raises(ParameterError, match=r"confidence: must be a real number"):
        correlation_loss(df, df, confidence=confidence)


@pytest.mark.parametrize("method", ["pearson", "spearman"])
def test_pearson_and_spearman_need_four_rows(method: str) -> None:
    df = _small().head(3)
    with pytest.raises(ParameterError, match=rf"{method} correlation needs at least 4 rows, got 3"):
        correlation_loss(df, df, method=method)  # type: ignore[arg-type]


def test_kendall_needs_two_rows() -> None:
    df = _small().head(1)
    with pytest.raises(ParameterError, match=r"kendall correlation needs at least 2 rows, got 1"):
        correlation_loss(df, df, method="kendall")


@pytest.mark.parametrize("method", METHODS)
def test_too_weak_correlation_is_refused(method: str) -> None:
    rng = np.random.default_rng(3)
    df = pd.DataFrame(rng.normal(size=(2000, 3)), columns=["a", "b", "c"])
    with pytest.raises(ParameterError, match=r"is below min\(confidence \* se, 1\)"):
        correlation_loss(df, df, method=method)  # type: ignore[arg-type]


def test_weak_correlation_passes_with_lower_confidence() -> None:
    rng = np.random.default_rng(3)
    df = pd.DataFrame(rng.normal(size=(2000, 3)), columns=["a", "b", "c"])
    assert correlation_loss(df, df, confidence=1e-6) == 0.0


def test_small_samples_need_near_perfect_correlation() -> None:
    # n = 5: 1.96 / sqrt(2) > 1, so the threshold is capped at 1.
    df = pd.DataFrame({"x": [1.0, 2.0, 3.0, 4.0, 5.0], "y": [1.0, 2.0, 3.0, 5.0, 4.0]})
    with pytest.raises(ParameterError, match=r"= 1 \(confidence=1.96, n=5\)"):
        correlation_loss(df, df)


def test_row_counts_must_match() -> None:
    df = _small()
    with pytest.raises(
        ParameterError, match=r"df_dp: must have as many rows as df_original \(8\), got 7"
    ):
        correlation_loss(df, df.head(7))


@pytest.mark.parametrize(
    ("features", "match"),
    [
        ("x", r"features: must be a sequence of column labels, got the string 'x'"),
        (["x"], r"features: need at least 2 columns"),
        (["x", "y", "x"], r"features: columns must be distinct"),
    ],
)
def test_bad_features(features: Any, match: str) -> None:
    df = _small()
    with pytest.raises(ParameterError, match=match):
        correlation_loss(df, df, features)


def test_unsupported_dtype_is_refused() -> None:
    df = _small().assign(when=pd.date_range("2020-01-01", periods=8))
    with pytest.raises(DataTypeError, match=r"column 'when' of df_original has dtype datetime64"):
        correlation_loss(df, df, ["x", "when"])


def test_frames_must_be_data_frames() -> None:
    df = _small()
    not_a_frame: Any = df.to_numpy()
    with pytest.raises(DataTypeError, match=r"df_dp: must be a pandas DataFrame, got ndarray"):
        correlation_loss(df, not_a_frame)
