"""Tests for local DP on categorical columns and arrays (veil.ldp.categorical)."""

from __future__ import annotations

import math
import warnings
from typing import Any

import numpy as np
import pandas as pd
import pytest

from veil.errors import (
    ColumnError,
    DataTypeError,
    DomainError,
    MissingValueError,
    ParameterError,
    PrivacyLeakWarning,
    ReproducibleNoiseWarning,
)
from veil.ldp.categorical import (
    dp_exponential,
    dp_exponential_array,
    dp_randomized_response_binary,
    dp_randomized_response_binary_array,
    dp_randomized_response_kary,
    dp_randomized_response_kary_array,
)
from veil.mechanisms import PrivacyLedger

COLORS = ["red", "green", "blue", "white"]


def _gen(seed: int) -> np.random.Generator:
    return np.random.Generator(np.random.PCG64(seed))


def _frame() -> pd.DataFrame:
    return pd.DataFrame(
        {
            "color": ["red", "green", "blue", "red", "white", "green"],
            "sex": ["F", "M", "M", "F", "F", "M"],
            "n": [1, 2, 3, 1, 2, 3],
        },
        index=[7, 3, 5, 1, 0, 9],
    )


# Frame functions applied with a declared domain (no PrivacyLeakWarning) to "color"
# or "sex"; each takes (df, **keywords).
def _kary(df: pd.DataFrame, **kw: Any) -> pd.DataFrame:
    kw.setdefault("domain", COLORS)
    return dp_randomized_response_kary(df, "color", 1.0, **kw)


def _exp(df: pd.DataFrame, **kw: Any) -> pd.DataFrame:
    kw.setdefault("domain", COLORS)
    return dp_exponential(df, "color", 1.0, **kw)


def _binary(df: pd.DataFrame, **kw: Any) -> pd.DataFrame:
    kw.setdefault("domain", ["F", "M"])
    return dp_randomized_response_binary(df, "sex", 1.0, **kw)


FRAME_FUNCTIONS = [_kary, _exp, _binary]
FRAME_IDS = ["kary", "exponential", "binary"]
TARGET = {_kary: "color", _exp: "color", _binary: "sex"}


# --- naming -------------------------------------------------------------------------


@pytest.mark.parametrize("func", FRAME_FUNCTIONS, ids=FRAME_IDS)
def test_new_column_is_named_dp_column(func: Any) -> None:
    df = _frame()
    column = TARGET[func]
    out = func(df, new_column=True, rng=_gen(0))
    assert list(out.columns) == [*df.columns, f"dp_{column}"]
    pd.testing.assert_series_equal(out[column], df[column])
    assert out.index.equals(df.index)
    assert set(out[f"dp_{column}"]) <= {*COLORS, "F", "M"}


@pytest.mark.parametrize("func", FRAME_FUNCTIONS, ids=FRAME_IDS)
def test_default_replaces_the_column(func: Any) -> None:
    df = _frame()
    out = func(df, rng=_gen(1))
    assert list(out.columns) == list(df.columns)
    assert out.index.equals(df.index)
    pd.testing.assert_series_equal(out["n"], df["n"])


# --- errors -------------------------------------------------------------------------


@pytest.mark.parametrize("func", FRAME_FUNCTIONS, ids=FRAME_IDS)
def test_missing_column_raises(func: Any) -> None:
    df = _frame().drop(columns=[TARGET[func]])
    with pytest.raises(ColumnError, match=TARGET[func]):
        func(df)


@pytest.mark.parametrize(
    "call",
    [
        lambda df: dp_randomized_response_kary(df, "n", 1.0),
        lambda df: dp_randomized_response_binary(df, "b", 1.0),
        lambda df: dp_exponential(df, "n", 1.0),
        lambda df: dp_randomized_response_binary(df, "flag", 1.0),
    ],
    ids=["kary-int", "binary-int", "exponential-int", "binary-bool"],
)
def test_numeric_column_without_domain_raises(call: Any) -> None:
    df = pd.DataFrame({"n": [1, 2, 3, 1], "b": [0, 1, 0, 1], "flag": [True, False, True, True]})
    with pytest.raises(DataTypeError, match="domain="):
        call(df)


@pytest.mark.parametrize(
    "call",
    [
        lambda data: dp_randomized_response_kary_array(data, 1.0),
        lambda data: dp_randomized_response_binary_array(data, 1.0),
        lambda data: dp_exponential_array(data, 1.0),
    ],
    ids=["kary", "binary", "exponential"],
)
@pytest.mark.parametrize("as_list", [False, True], ids=["ndarray", "list"])
def test_numeric_array_or_list_without_domain_raises(call: Any, as_list: bool) -> None:
    # A list of numbers is the same data as its array: both need a declared domain.
    data = np.array([0, 1, 0, 1, 0])
    with pytest.raises(DataTypeError, match="domain="):
        call(data.tolist() if as_list else data)


def test_numeric_column_with_domain_is_accepted() -> None:
    df = pd.DataFrame({"code": [1, 2, 3, 1, 4]})
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        out = dp_randomized_response_kary(df, "code", 1.0, domain=[1, 2, 3, 4, 5], rng=_gen(2))
    assert set(out["code"]) <= {1, 2, 3, 4, 5}
    binary = dp_randomized_response_binary_array(
        np.array([0, 1, 1]), 1.0, domain=[0, 1], rng=_gen(3)
    )
    assert set(binary.tolist()) <= {0, 1}


@pytest.mark.parametrize("func", FRAME_FUNCTIONS, ids=FRAME_IDS)
@pytest.mark.parametrize("epsilon", [0, -0.5, math.inf, math.nan])
def test_epsilon_must_be_finite_and_positive(func: Any, epsilon: float) -> None:
    call = {
        _kary: dp_randomized_response_kary,
        _exp: dp_exponential,
        _binary: dp_randomized_response_binary,
    }[func]
    with pytest.raises(ParameterError, match="epsilon"):
        call(_frame(), TARGET[func], epsilon)


@pytest.mark.parametrize("values", [["a", "a", "a"], ["a", "b", "c"]], ids=["one", "three"])
def test_binary_needs_exactly_two_values(values: list[str]) -> None:
    df = pd.DataFrame({"s": values})
    with pytest.warns(PrivacyLeakWarning), pytest.raises(ParameterError, match="exactly 2"):
        dp_randomized_response_binary(df, "s", 1.0)
    with pytest.warns(PrivacyLeakWarning), pytest.raises(ParameterError, match="exactly 2"):
        dp_randomized_response_binary_array(values, 1.0)
    with pytest.raises(ParameterError, match="exactly 2"):
        dp_randomized_response_binary(df, "s", 1.0, domain=["a", "b", "c"])


def test_binary_with_one_value_in_the_data_and_two_declared_works() -> None:
    df = pd.DataFrame({"s": ["yes"] * 500})
    out = dp_randomized_response_binary(df, "s", 1.0, domain=["no", "yes"], rng=_gen(4))
    assert set(out["s"]) == {"no", "yes"}


@pytest.mark.parametrize("values", [["a", "b", "a"], ["a", "a"]], ids=["two", "one"])
def test_kary_needs_three_or_more_categories(values: list[str]) -> None:
    df = pd.DataFrame({"s": values})
    with pytest.warns(PrivacyLeakWarning), pytest.raises(ParameterError, match="3 or more"):
        dp_randomized_response_kary(df, "s", 1.0)
    with pytest.warns(PrivacyLeakWarning), pytest.raises(ParameterError, match="3 or more"):
        dp_randomized_response_kary_array(values, 1.0)
    with pytest.raises(ParameterError, match="3 or more"):
        dp_randomized_response_kary(df, "s", 1.0, domain=["a", "b"])


def test_exponential_needs_two_or_more_categories() -> None:
    with pytest.warns(PrivacyLeakWarning), pytest.raises(ParameterError, match="at least 2"):
        dp_exponential(pd.DataFrame({"s": ["a", "a"]}), "s", 1.0)


def test_positive_label_must_be_a_category() -> None:
    df = _frame()
    with pytest.raises(ParameterError, match="positive_label"):
        dp_randomized_response_binary(df, "sex", 1.0, False, "X", domain=["F", "M"])
    with pytest.warns(PrivacyLeakWarning), pytest.raises(ParameterError, match="positive_label"):
        dp_randomized_response_binary_array(["F", "M"], 1.0, "X")
    out = dp_randomized_response_binary(df, "sex", 1.0, True, "M", domain=["F", "M"], rng=_gen(5))
    assert set(out["dp_sex"]) <= {"F", "M"}


@pytest.mark.parametrize("func", FRAME_FUNCTIONS, ids=FRAME_IDS)
def test_values_outside_the_declared_domain_raise_and_are_listed(func: Any) -> None:
    df = _frame()
    df.loc[3, TARGET[func]] = "purple"
    df.loc[5, TARGET[func]] = "X"
    domain = COLORS if func is not _binary else ["F", "M"]
    with pytest.raises(DomainError, match="2 values") as info:
        func(df, domain=[d for d in domain if d not in ("purple", "X")])
    assert "'purple'" in str(info.value) and "'X'" in str(info.value)


def test_domain_with_repeats_raises() -> None:
    with pytest.raises(ParameterError, match="domain"):
        dp_randomized_response_kary(_frame(), "color", 1.0, domain=["red", "red", "blue"])


def test_unknown_missing_policy_raises() -> None:
    with pytest.raises(ParameterError, match="missing"):
        _kary(_frame(), missing="drop")


def test_unknown_exponential_calibration_raises() -> None:
    with pytest.raises(ParameterError, match="calibration"):
        _exp(_frame(), calibration="half")


# --- domains ------------------------------------------------------------------------


@pytest.mark.parametrize(
    "call",
    [
        lambda df: dp_randomized_response_kary(df, "color", 1.0, rng=_gen(6)),
        lambda df: dp_exponential(df, "color", 1.0, rng=_gen(6)),
        lambda df: dp_randomized_response_binary(df, "sex", 1.0, rng=_gen(6)),
        lambda df: dp_randomized_response_kary_array(df["color"].to_numpy(), 1.0, rng=_gen(6)),
        lambda df: dp_exponential_array(df["color"].tolist(), 1.0, rng=_gen(6)),
        lambda df: dp_randomized_response_binary_array(list(df["sex"]), 1.0, rng=_gen(6)),
    ],
    ids=["kary", "exponential", "binary", "kary-array", "exponential-list", "binary-list"],
)
def test_domain_inferred_from_data_warns(call: Any) -> None:
    with pytest.warns(PrivacyLeakWarning, match="domain="):
        call(_frame())


@pytest.mark.parametrize("func", FRAME_FUNCTIONS, ids=FRAME_IDS)
def test_declared_domain_does_not_warn(func: Any) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        func(_frame(), rng=_gen(7))
        func(_frame(), new_column=True, rng=None)


@pytest.mark.parametrize(
    "call",
    [
        lambda df, d: dp_randomized_response_kary(df, "c", 1.0, domain=d, rng=_gen(8)),
        lambda df, d: dp_exponential(df, "c", 1.0, domain=d, rng=_gen(8)),
    ],
    ids=["kary", "exponential"],
)
def test_declared_category_absent_from_data_appears_in_output(call: Any) -> None:
    # "rare" is part of the public domain but nobody in the data holds it; it still
    # appears in the output (probability >= 1/(e + 3) ~ 0.18 per record at epsilon 1,
    # so absent from 2000 records with probability < 1e-170).
    df = pd.DataFrame({"c": ["a"] * 1000 + ["b"] * 1000})
    out = call(df, ["a", "b", "c", "rare"])
    counts = out["c"].value_counts()
    assert counts["rare"] > 200
    assert set(counts.index) == {"a", "b", "c", "rare"}


def test_category_held_once_with_inferred_domain_works(adult: pd.DataFrame) -> None:
    # "Holand-Netherlands" is held by one person in Adult: with the domain read from the
    # data it is a category of its own, which is exactly what PrivacyLeakWarning flags.
    data = adult.dropna(subset=["native-country"])
    assert (data["native-country"] == "Holand-Netherlands").sum() == 1
    with pytest.warns(PrivacyLeakWarning):
        out = dp_randomized_response_kary(data, "native-country", 1.0, True, rng=_gen(9))
    assert set(out["dp_native-country"]) <= set(data["native-country"])
    assert out.shape == (len(data), adult.shape[1] + 1)


# --- dtypes -------------------------------------------------------------------------


def test_categorical_dtype_in_gives_categorical_out() -> None:
    df = pd.DataFrame({"c": pd.Categorical(["x", "y", "z", "x"], categories=["x", "y", "z"])})
    with pytest.warns(PrivacyLeakWarning, match="categorical dtype"):
        out = dp_randomized_response_kary(df, "c", 1.0, rng=_gen(10))
    assert isinstance(out["c"].dtype, pd.CategoricalDtype)
    assert list(out["c"].cat.categories) == ["x", "y", "z"]


def test_categorical_dtype_keeps_its_order_and_category_type() -> None:
    # An ordered categorical (age bands, education levels) stays ordered with the same
    # dtype, so comparisons such as out["band"] > "low" keep working on the release.
    dtype = pd.CategoricalDtype([1, 2, 3], ordered=True)
    df = pd.DataFrame({"band": pd.Series([1, 2, 3, 1, 2], dtype=dtype)})
    with pytest.warns(PrivacyLeakWarning):
        out = dp_randomized_response_kary(df, "band", 1.0, rng=_gen(11))
    assert out["band"].dtype == dtype


def test_categorical_dtype_with_declared_domain_is_recoded() -> None:
    # The input's category order differs from the domain's: codes must follow values.
    df = pd.DataFrame({"c": pd.Categorical(["x", "y", "z", "x"], categories=["z", "x", "y"])})
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        out = dp_randomized_response_kary(df, "c", 25.0, domain=["w", "x", "y", "z"], rng=_gen(12))
    assert isinstance(out["c"].dtype, pd.CategoricalDtype)
    assert list(out["c"].cat.categories) == ["w", "x", "y", "z"]
    assert out["c"].tolist() == ["x", "y", "z", "x"]  # e^25: kept with prob 1 - 4e-11


def test_string_dtype_accepted_and_kept() -> None:
    df = pd.DataFrame({"c": pd.array(["x", "y", "z", None], dtype="string")})
    out = dp_randomized_response_kary(
        df, "c", 1.0, domain=["x", "y", "z"], missing="keep", rng=_gen(13)
    )
    assert isinstance(out["c"].dtype, pd.StringDtype)
    assert out["c"].isna().tolist() == [False, False, False, True]
    assert set(out["c"].dropna()) <= {"x", "y", "z"}


def test_numpy_string_array_in_gives_string_array_out() -> None:
    data = np.array(["a", "b", "c", "a"])
    out = dp_randomized_response_kary_array(data, 1.0, domain=["a", "b", "c"], rng=_gen(14))
    assert isinstance(out, np.ndarray)
    assert out.dtype.kind == "U"
    assert out.shape == (4,)


@pytest.mark.parametrize(
    "call",
    [
        lambda d: dp_randomized_response_kary_array(d, 1.0, domain=["a", "b", "c"], rng=_gen(15)),
        lambda d: dp_exponential_array(d, 1.0, domain=["a", "b", "c"], rng=_gen(15)),
        lambda d: dp_randomized_response_binary_array(d[:2], 1.0, domain=["a", "b"], rng=_gen(15)),
    ],
    ids=["kary", "exponential", "binary"],
)
def test_list_inputs_give_ndarrays(call: Any) -> None:
    out = call(["a", "b", "c", "a", "b"])
    assert isinstance(out, np.ndarray)
    assert set(out.tolist()) <= {"a", "b", "c"}


# --- missing values -----------------------------------------------------------------


@pytest.mark.parametrize("func", FRAME_FUNCTIONS, ids=FRAME_IDS)
@pytest.mark.parametrize("na", [None, np.nan, pd.NA], ids=["None", "nan", "NA"])
def test_missing_values_raise_by_default(func: Any, na: Any) -> None:
    df = _frame().astype({"color": object, "sex": object})
    df.loc[5, TARGET[func]] = na
    with pytest.raises(MissingValueError, match="missing='keep'"):
        func(df)


@pytest.mark.parametrize("func", FRAME_FUNCTIONS, ids=FRAME_IDS)
def test_missing_kept_at_the_same_positions(func: Any) -> None:
    n = 600
    column = TARGET[func]
    base = ["red", "green", "blue"] if column == "color" else ["F", "M", "F"]
    values: list[Any] = [base[i % 3] if i % 4 else None for i in range(n)]
    df = pd.DataFrame({column: values}, index=np.arange(n)[::-1])
    out = func(df, missing="keep", rng=_gen(16))
    np.testing.assert_array_equal(out[column].isna().to_numpy(), df[column].isna().to_numpy())
    present = out[column].dropna()
    assert len(present) == n - n // 4
    assert (present != df[column].dropna()).any()  # the rest was randomized


def test_missing_in_adult_workclass(adult: pd.DataFrame) -> None:
    domain = sorted(adult["workclass"].dropna().unique())
    with pytest.raises(MissingValueError, match="1836 missing"):
        dp_randomized_response_kary(adult, "workclass", 2.0, domain=domain)
    out = dp_randomized_response_kary(
        adult, "workclass", 2.0, True, domain=domain, missing="keep", rng=_gen(17)
    )
    pd.testing.assert_series_equal(
        out["dp_workclass"].isna(), adult["workclass"].isna(), check_names=False
    )
    assert set(out["dp_workclass"].dropna()) == set(domain)


def test_missing_in_arrays() -> None:
    data = ["a", None, "b", "c"]
    with pytest.raises(MissingValueError):
        dp_randomized_response_kary_array(data, 1.0, domain=["a", "b", "c"])
    out = dp_randomized_response_kary_array(
        data, 1.0, domain=["a", "b", "c"], missing="keep", rng=_gen(18)
    )
    assert pd.isna(out).tolist() == [False, True, False, False]


# --- distributions ------------------------------------------------------------------


def _keep_rate(out: Any, data: Any) -> float:
    return float(np.mean(np.asarray(out, dtype=object) == np.asarray(data, dtype=object)))


def test_kary_keeps_each_value_with_the_stated_probability() -> None:
    # n = 60 000 over a declared domain of k = 5 at epsilon = 1:
    # keep = e / (e + 4) = 0.4046; standard error 0.002, tolerance 0.01 (5 se).
    # Each other category gets (1 - keep) / 4 = 0.1489 of the records of one value.
    domain = ["a", "b", "c", "d", "e"]
    data = np.array(["a", "b", "c"] * 20_000)
    out = dp_randomized_response_kary_array(data, 1.0, domain=domain, rng=_gen(19))
    keep = math.e / (math.e + 4)
    assert _keep_rate(out, data) == pytest.approx(keep, abs=0.01)
    from_a = pd.Series(out[data == "a"]).value_counts(normalize=True)
    for other in ("b", "c", "d", "e"):
        assert from_a[other] == pytest.approx((1 - keep) / 4, abs=0.01)


def test_binary_keeps_each_value_with_the_stated_probability() -> None:
    # n = 60 000, epsilon = 0.5: keep = e^0.5 / (e^0.5 + 1) = 0.6225; se 0.002, tol 0.01.
    data = np.array(["no", "yes", "yes"] * 20_000)
    out = dp_randomized_response_binary_array(data, 0.5, "yes", domain=["no", "yes"], rng=_gen(20))
    keep = math.exp(0.5) / (math.exp(0.5) + 1)
    assert _keep_rate(out, data) == pytest.approx(keep, abs=0.01)
    assert _keep_rate(out[data == "no"], data[data == "no"]) == pytest.approx(keep, abs=0.015)


@pytest.mark.parametrize(
    ("calibration", "spent"), [("standard", 0.5), ("full", 1.0)], ids=["standard", "full"]
)
def test_exponential_keep_probability_follows_the_calibration(
    calibration: str, spent: float
) -> None:
    # k = 4, epsilon = 1: trasgoDP's calibration keeps with e^(1/2) / (e^(1/2) + 3) = 0.355,
    # "full" with e / (e + 3) = 0.475. n = 40 000, tolerance 0.01 (4 se).
    data = np.array(COLORS * 10_000)
    out = dp_exponential_array(data, 1.0, domain=COLORS, calibration=calibration, rng=_gen(21))
    keep = math.exp(spent) / (math.exp(spent) + 3)
    assert _keep_rate(out, data) == pytest.approx(keep, abs=0.01)


@pytest.mark.parametrize(
    "call",
    [
        lambda d: dp_randomized_response_kary_array(d, 50.0, domain=COLORS, rng=_gen(22)),
        lambda d: dp_randomized_response_binary_array(d, 40.0, domain=COLORS[:2], rng=_gen(22)),
        lambda d: dp_exponential_array(d, 40.0, domain=COLORS, calibration="full", rng=_gen(22)),
        lambda d: dp_exponential_array(d, 100.0, domain=COLORS, rng=_gen(22)),
    ],
    ids=["kary-50", "binary-40", "exponential-full-40", "exponential-100"],
)
def test_very_large_epsilon_returns_the_input(call: Any) -> None:
    # A huge budget is valid (epsilon > 0, finite): the report is the true value.
    data = np.array(["red", "green", "red", "green"])
    out = call(data)
    assert out.tolist() == data.tolist()


# --- randomness ---------------------------------------------------------------------


@pytest.mark.parametrize("func", FRAME_FUNCTIONS, ids=FRAME_IDS)
def test_default_noise_is_not_reproducible(func: Any) -> None:
    df = pd.concat([_frame()] * 50, ignore_index=True)
    first = func(df)
    second = func(df)
    assert not first.equals(second)


@pytest.mark.parametrize("func", FRAME_FUNCTIONS, ids=FRAME_IDS)
def test_integer_seed_is_reproducible_and_warns(func: Any) -> None:
    df = pd.concat([_frame()] * 50, ignore_index=True)
    with pytest.warns(ReproducibleNoiseWarning):
        first = func(df, rng=11)
    with pytest.warns(ReproducibleNoiseWarning):
        second = func(df, rng=11)
    pd.testing.assert_frame_equal(first, second)


# --- privacy accounting -------------------------------------------------------------


def test_exponential_default_spends_half_epsilon() -> None:
    ledger = PrivacyLedger()
    out = dp_exponential(_frame(), "color", 1.6, domain=COLORS, rng=_gen(23), ledger=ledger)
    assert ledger.entries[0].epsilon == pytest.approx(0.8)
    assert out.attrs["veil.privacy"][-1]["epsilon"] == pytest.approx(0.8)
    full = dp_exponential(
        _frame(), "color", 1.6, domain=COLORS, calibration="full", rng=_gen(23), ledger=ledger
    )
    assert ledger.entries[1].epsilon == pytest.approx(1.6)
    assert full.attrs["veil.privacy"][-1]["epsilon"] == pytest.approx(1.6)


def test_ledger_totals_after_several_calls() -> None:
    ledger = PrivacyLedger()
    df = _frame()
    step = dp_randomized_response_kary(
        df, "color", 1.0, True, domain=COLORS, rng=_gen(24), ledger=ledger
    )
    step = dp_randomized_response_binary(
        step, "sex", 0.5, True, domain=["F", "M"], rng=_gen(25), ledger=ledger
    )
    step = dp_exponential(step, "color", 2.0, domain=COLORS, rng=_gen(26), ledger=ledger)
    dp_randomized_response_kary_array(["red"], 0.3, domain=COLORS, rng=_gen(27), ledger=ledger)
    dp_randomized_response_binary_array(["F"], 0.2, domain=["F", "M"], rng=_gen(28), ledger=ledger)
    dp_exponential_array(["red"], 0.4, domain=COLORS, rng=_gen(29), ledger=ledger)
    assert len(ledger) == 6
    total = ledger.total()
    assert total.epsilon == pytest.approx(1.0 + 0.5 + 1.0 + 0.3 + 0.2 + 0.2)
    assert total.delta == 0.0
    assert [h["epsilon"] for h in step.attrs["veil.privacy"]] == [
        pytest.approx(1.0),
        pytest.approx(0.5),
        pytest.approx(1.0),
    ]


# --- input is never mutated ---------------------------------------------------------


def _mutation_cases() -> list[tuple[str, Any]]:
    return [
        ("kary", lambda df: dp_randomized_response_kary(df, "c", 1.0, domain=COLORS, rng=_gen(0))),
        (
            "kary-new",
            lambda df: dp_randomized_response_kary(df, "c", 1.0, True, domain=COLORS, rng=_gen(0)),
        ),
        ("exp", lambda df: dp_exponential(df, "c", 1.0, domain=COLORS, rng=_gen(0))),
        ("binary", lambda df: dp_randomized_response_binary(df, "s", 1.0, rng=_gen(0))),
        ("binary-cat", lambda df: dp_randomized_response_binary(df, "k", 1.0, rng=_gen(0))),
        (
            "kary-keep",
            lambda df: dp_randomized_response_kary(
                df, "m", 1.0, domain=COLORS, missing="keep", rng=_gen(0)
            ),
        ),
        (
            "exp-keep-string",
            lambda df: dp_exponential(df, "t", 1.0, domain=COLORS, missing="keep", rng=_gen(0)),
        ),
        (
            "binary-keep-cat",
            lambda df: dp_randomized_response_binary(
                df, "q", 1.0, True, missing="keep", rng=_gen(0)
            ),
        ),
    ]


@pytest.mark.parametrize(("case", "call"), _mutation_cases(), ids=[c for c, _ in _mutation_cases()])
def test_input_frame_is_never_mutated(case: str, call: Any) -> None:
    df = pd.DataFrame(
        {
            "c": ["red", "green", "blue", "white"],
            "s": ["F", "M", "M", "F"],
            "k": pd.Categorical(["F", "M", "M", "F"]),
            "m": ["red", None, "blue", np.nan],
            "t": pd.array(["red", pd.NA, "blue", "white"], dtype="string"),
            "q": pd.Categorical(["F", None, "M", "F"]),
        },
        index=[4, 2, 9, 0],
    )
    before = df.copy(deep=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PrivacyLeakWarning)
        out = call(df)
    pd.testing.assert_frame_equal(df, before)
    assert df.attrs == {}
    assert out is not df


@pytest.mark.parametrize(
    ("column", "call"),
    [
        ("c", lambda df: dp_randomized_response_kary(df, "c", 1.0, domain=COLORS, rng=_gen(0))),
        ("c", lambda df: dp_exponential(df, "c", 1.0, domain=COLORS, rng=_gen(0))),
        ("s", lambda df: dp_randomized_response_binary(df, "s", 1.0, rng=_gen(0))),
        (
            "dp_c",
            lambda df: dp_randomized_response_kary(
                df, "c", 1.0, True, overwrite=True, domain=COLORS, rng=_gen(0)
            ),
        ),
    ],
    ids=["kary", "exponential", "binary", "kary-overwrite"],
)
def test_editing_the_output_does_not_reach_the_input(column: str, call: Any) -> None:
    # The released column is written into the output's own copy where pandas made one
    # (pandas 2 without copy-on-write: the object columns share one block); editing any
    # column of the output in place, the released one included, must leave the input.
    df = pd.DataFrame(
        {
            "c": np.array(["red", "green", "blue", "white"], dtype=object),
            "s": np.array(["F", "M", "M", "F"], dtype=object),
            "dp_c": np.array(["x", "x", "x", "x"], dtype=object),
            "n": np.arange(4),
        },
        index=[4, 2, 9, 0],
    )
    before = df.copy(deep=True)
    out = call(df)
    assert list(out.columns) == list(df.columns)
    assert out[column].dtype == df[column].dtype
    assert set(out[column]) <= set(COLORS) | {"F", "M"}
    for name in out.columns:
        out.loc[4, name] = -1 if pd.api.types.is_numeric_dtype(out[name]) else "edited"
    pd.testing.assert_frame_equal(df, before)


@pytest.mark.parametrize(
    "call",
    [
        lambda d: dp_randomized_response_kary_array(d, 1.0, domain=COLORS, rng=_gen(0)),
        lambda d: dp_exponential_array(d, 1.0, domain=COLORS, rng=_gen(0)),
        lambda d: dp_randomized_response_binary_array(d[:2], 1.0, rng=_gen(0)),
    ],
    ids=["kary", "exponential", "binary"],
)
def test_input_array_is_never_mutated(call: Any) -> None:
    data = np.array(["red", "green", "blue"], dtype=object)
    before = data.copy()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PrivacyLeakWarning)
        call(data)
    np.testing.assert_array_equal(data, before)


# --- empty input --------------------------------------------------------------------


@pytest.mark.parametrize(
    "call",
    [
        lambda df: dp_randomized_response_kary(df, "c", 1.0, True, domain=COLORS, rng=_gen(0)),
        lambda df: dp_randomized_response_binary(
            df, "c", 1.0, True, domain=["F", "M"], rng=_gen(0)
        ),
        lambda df: dp_exponential(df, "c", 1.0, True, domain=COLORS, rng=_gen(0)),
    ],
    ids=["kary", "binary", "exponential"],
)
def test_empty_frame_with_declared_domain_gives_an_empty_frame(call: Any) -> None:
    df = pd.DataFrame({"c": pd.Series([], dtype=object)})
    out = call(df)
    assert out.shape == (0, 2)
    assert list(out.columns) == ["c", "dp_c"]


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda df: dp_randomized_response_kary(df, "c", 1.0), "got 0"),
        (lambda df: dp_randomized_response_binary(df, "c", 1.0), "got 0"),
        (lambda df: dp_exponential(df, "c", 1.0), "got 0"),
    ],
    ids=["kary", "binary", "exponential"],
)
def test_empty_frame_without_domain_raises_a_clear_error(call: Any, message: str) -> None:
    # With no rows and no declared domain there are no categories to randomize over.
    df = pd.DataFrame({"c": pd.Series([], dtype=object)})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PrivacyLeakWarning)
        with pytest.raises(ParameterError, match=message):
            call(df)


def test_arrow_string_columns_come_back_as_the_same_dtype_with_missing_kept() -> None:
    # pandas' Arrow-backed strings are decoded from the codes as a dictionary array.
    strings = pd.Series(["a", "b", None, "c", "a"] * 200, dtype="string[pyarrow]")
    df = pd.DataFrame({"x": strings})
    out = dp_randomized_response_kary(
        df, "x", 2.0, domain=["a", "b", "c"], missing="keep", rng=_gen(5)
    )
    assert out["x"].dtype == strings.dtype
    assert out["x"].isna().tolist() == strings.isna().tolist()
    assert set(out["x"].dropna()) <= {"a", "b", "c"}
    assert (out["x"] != strings).sum() > 0


def test_arrow_string_columns_outside_the_domain_are_refused_by_value() -> None:
    strings = pd.Series(["a", "b", "zz", None], dtype="string[pyarrow]")
    with pytest.raises(DomainError, match="'zz'"):
        dp_randomized_response_kary(
            pd.DataFrame({"x": strings}), "x", 1.0, domain=["a", "b"], missing="keep", rng=_gen(1)
        )
