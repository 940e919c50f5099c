"""Tests for local DP on numerical columns and arrays (veil.ldp.numerical)."""

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
    ReproducibleNoiseWarning,
)
from veil.ldp.numerical import (
    dp_clip_gaussian,
    dp_clip_gaussian_array,
    dp_clip_laplace,
    dp_clip_laplace_array,
)
from veil.mechanisms import Gaussian, Laplace, PrivacyLedger


def _gen(seed: int) -> np.random.Generator:
    return np.random.Generator(np.random.PCG64(seed))


def _laplace(df: pd.DataFrame, column: str, **kw: Any) -> pd.DataFrame:
    return dp_clip_laplace(df, column, 1.0, 0, 100, **kw)


def _gaussian(df: pd.DataFrame, column: str, **kw: Any) -> pd.DataFrame:
    return dp_clip_gaussian(df, column, 1.0, 0, 100, **kw)


FRAME_FUNCTIONS = [_laplace, _gaussian]
FRAME_IDS = ["laplace", "gaussian"]


def _small_frame() -> pd.DataFrame:
    return pd.DataFrame(
        {
            "age": np.array([23, 35, 47, 59, 71], dtype=np.int64),
            "score": [0.5, 12.25, 50.0, 87.75, 99.5],
            "name": ["a", "b", "c", "d", "e"],
        },
        index=[10, 11, 12, 13, 14],
    )


# --- naming and shape ---------------------------------------------------------------


@pytest.mark.parametrize("func", FRAME_FUNCTIONS, ids=FRAME_IDS)
def test_new_column_is_named_dp_column_and_original_kept(func: Any) -> None:
    df = _small_frame()
    out = func(df, "age", new_column=True, rng=_gen(0))
    assert list(out.columns) == ["age", "score", "name", "dp_age"]
    pd.testing.assert_series_equal(out["age"], df["age"])
    assert out.index.equals(df.index)
    assert out.shape == (5, 4)


@pytest.mark.parametrize("func", FRAME_FUNCTIONS, ids=FRAME_IDS)
def test_default_replaces_the_column(func: Any) -> None:
    df = _small_frame()
    out = func(df, "age", rng=_gen(1))
    assert list(out.columns) == list(df.columns)
    assert out.index.equals(df.index)
    pd.testing.assert_series_equal(out["name"], df["name"])


# --- errors -------------------------------------------------------------------------


@pytest.mark.parametrize("func", FRAME_FUNCTIONS, ids=FRAME_IDS)
def test_missing_column_raises_column_error(func: Any) -> None:
    with pytest.raises(ColumnError, match="nope"):
        func(_small_frame(), "nope")
    assert issubclass(ColumnError, ValueError)


@pytest.mark.parametrize("func", FRAME_FUNCTIONS, ids=FRAME_IDS)
@pytest.mark.parametrize(
    "values",
    [
        ["a", "b", "c"],
        pd.array(["a", "b", "c"], dtype="string"),
        [True, False, True],
        pd.Categorical([1, 2, 3]),
    ],
    ids=["object-strings", "string-dtype", "bool", "categorical"],
)
def test_non_numeric_column_raises_data_type_error(func: Any, values: Any) -> None:
    df = pd.DataFrame({"c": values})
    with pytest.raises(DataTypeError, match="not allowed"):
        func(df, "c")
    with pytest.raises(ValueError):
        func(df, "c")


@pytest.mark.parametrize("array_func", [dp_clip_laplace_array, dp_clip_gaussian_array])
def test_array_of_strings_raises(array_func: Any) -> None:
    with pytest.raises(DataTypeError):
        array_func(["a", "b"], 1.0, 0, 10)


@pytest.mark.parametrize("call", [dp_clip_laplace, dp_clip_gaussian])
@pytest.mark.parametrize("epsilon", [0, 0.0, -1.0, math.inf, math.nan])
def test_epsilon_must_be_finite_and_positive(call: Any, epsilon: float) -> None:
    with pytest.raises(ParameterError, match="epsilon"):
        call(_small_frame(), "age", epsilon, 0, 100)


@pytest.mark.parametrize("array_func", [dp_clip_laplace_array, dp_clip_gaussian_array])
def test_array_epsilon_zero_raises(array_func: Any) -> None:
    with pytest.raises(ValueError, match="epsilon"):
        array_func([1, 2, 3], 0.0, 0, 10)


@pytest.mark.parametrize("delta", [0.0, 1.0, -0.1, 1.5])
def test_gaussian_delta_outside_open_unit_interval_raises(delta: float) -> None:
    with pytest.raises(ParameterError, match="delta"):
        dp_clip_gaussian(_small_frame(), "age", 0.5, 0, 100, delta)
    with pytest.raises(ParameterError, match="delta"):
        dp_clip_gaussian_array([1, 2], 0.5, 0, 100, delta)


def test_gaussian_classic_calibration_refuses_epsilon_above_one() -> None:
    df = _small_frame()
    with pytest.raises(ParameterError, match="epsilon"):
        dp_clip_gaussian(df, "age", 1.5, 0, 100)
    with pytest.raises(ParameterError, match="epsilon"):
        dp_clip_gaussian_array([1, 2], 1.5, 0, 100)
    # epsilon = 1 is the edge of the classic calibration, still allowed.
    out = dp_clip_gaussian(df, "age", 1.0, 0, 100, rng=_gen(2))
    assert out["age"].between(0, 100).all()


def test_gaussian_analytic_calibration_lifts_the_epsilon_limit() -> None:
    df = _small_frame()
    ledger = PrivacyLedger()
    out = dp_clip_gaussian(
        df, "age", 3.0, 0, 100, calibration="analytic", rng=_gen(3), ledger=ledger
    )
    assert out["age"].between(0, 100).all()
    assert ledger.entries[0].epsilon == pytest.approx(3.0)
    arr = dp_clip_gaussian_array([1.0, 2.0], 5.0, 0, 10, calibration="analytic", rng=_gen(4))
    assert arr.shape == (2,)


def test_gaussian_unknown_calibration_raises() -> None:
    with pytest.raises(ParameterError, match="calibration"):
        dp_clip_gaussian(_small_frame(), "age", 0.5, 0, 100, calibration="magic")


@pytest.mark.parametrize("call", [dp_clip_laplace, dp_clip_gaussian])
@pytest.mark.parametrize(("lower", "upper"), [(10, 10), (100, 0), (0, math.inf)])
def test_invalid_bounds_raise(call: Any, lower: float, upper: float) -> None:
    with pytest.raises(ParameterError, match="bound"):
        call(_small_frame(), "age", 0.5, lower, upper)


@pytest.mark.parametrize("func", FRAME_FUNCTIONS, ids=FRAME_IDS)
def test_unknown_missing_policy_raises(func: Any) -> None:
    with pytest.raises(ParameterError, match="missing"):
        func(_small_frame(), "age", missing="drop")


@pytest.mark.parametrize("func", FRAME_FUNCTIONS, ids=FRAME_IDS)
@pytest.mark.parametrize("rng", [-1, "seed", 1.5])
def test_invalid_rng_raises(func: Any, rng: Any) -> None:
    with pytest.raises(ParameterError, match="rng"):
        func(_small_frame(), "age", rng=rng)


# --- output dtype, bounds and grid --------------------------------------------------


def test_integer_column_gives_int64_within_bounds(adult: pd.DataFrame) -> None:
    out = dp_clip_laplace(adult, "age", 1.0, 16, 100, new_column=True, rng=_gen(5))
    assert out["dp_age"].dtype == np.int64
    assert out["dp_age"].between(16, 100).all()
    # The noise at epsilon = 1 over a width of 84 years is large: the column changed.
    assert (out["dp_age"] != adult["age"]).mean() > 0.9
    out_g = dp_clip_gaussian(adult, "age", 1.0, 16, 100, new_column=True, rng=_gen(6))
    assert out_g["dp_age"].dtype == np.int64
    assert out_g["dp_age"].between(16, 100).all()


@pytest.mark.parametrize("dtype", ["int16", "int32", "uint16", "uint32", "int64", "uint64"])
@pytest.mark.parametrize("array_func", [dp_clip_laplace_array, dp_clip_gaussian_array])
def test_integer_arrays_of_any_width_give_int64(array_func: Any, dtype: str) -> None:
    data = np.array([0, 5, 17, 40, 90], dtype=dtype)
    out = array_func(data, 1.0, 0, 1000, rng=_gen(7))
    assert isinstance(out, np.ndarray)
    assert out.dtype == np.int64
    assert ((out >= 0) & (out <= 1000)).all()


@pytest.mark.parametrize(
    ("dtype", "lower", "upper"),
    [("int8", 0, 150), ("uint8", -10, 100)],
    ids=["int8-upper-beyond-dtype", "uint8-negative-lower"],
)
def test_narrow_integer_columns_accept_bounds_beyond_their_dtype(
    dtype: str, lower: int, upper: int
) -> None:
    # Ages stored as int8 with the public bound 150 (or counts stored as uint8 with a
    # negative lower bound) are valid inputs: the bounds are public domain knowledge,
    # independent of the storage width.
    data = np.array([3, 40, 90, 100], dtype=dtype)
    out = dp_clip_laplace(pd.DataFrame({"v": data}), "v", 1.0, lower, upper, rng=_gen(8))
    assert out["v"].dtype == np.int64
    assert out["v"].between(lower, upper).all()
    for array_func in (dp_clip_laplace_array, dp_clip_gaussian_array):
        arr = array_func(data, 1.0, lower, upper, rng=_gen(8))
        assert arr.dtype == np.int64
        assert ((arr >= lower) & (arr <= upper)).all()


def test_float_output_within_bounds_and_on_the_default_grid() -> None:
    rng = _gen(9)
    data = rng.uniform(-5.0, 15.0, 2000)  # some values outside the bounds: clipped first
    step = Laplace(1.0, 0.3, 10.1).grid.step
    assert step == 2.0**-7  # the largest power of two giving >= 1024 steps across 9.8
    for func in (dp_clip_laplace_array, dp_clip_gaussian_array):
        out = func(data, 1.0, 0.3, 10.1, rng=_gen(10))
        assert out.dtype == np.float64
        assert ((out >= 0.3) & (out <= 10.1)).all()
        np.testing.assert_array_equal(out / step, np.rint(out / step))


def test_float_output_on_an_explicit_resolution() -> None:
    data = np.linspace(0.0, 10.0, 500)
    for func in (dp_clip_laplace_array, dp_clip_gaussian_array):
        out = func(data, 0.8, 0.0, 10.0, resolution=0.25, rng=_gen(11))
        np.testing.assert_array_equal(out * 4, np.rint(out * 4))
        assert ((out >= 0.0) & (out <= 10.0)).all()


def test_integer_column_refuses_a_fractional_resolution() -> None:
    with pytest.raises(ParameterError, match="resolution"):
        dp_clip_laplace(_small_frame(), "age", 1.0, 0, 100, resolution=0.5)


def test_gaussian_noise_matches_the_calibrated_sigma() -> None:
    # Statistical: 40 000 values at the centre, unclipped; the sample standard deviation
    # is within 3% of the mechanism's sigma (its standard error is about 0.35%).
    sigma = Gaussian(0.5, 1e-3, 0, 100, integer=True).sigma
    data = np.full(40_000, 50, dtype=np.int64)
    out = dp_clip_gaussian_array(data, 0.5, 0, 100, clip_output=False, rng=_gen(12))
    assert np.std(out - 50) == pytest.approx(sigma, rel=0.03)


# --- clip_output=False --------------------------------------------------------------


@pytest.mark.parametrize(
    ("array_func", "n"),
    [(dp_clip_laplace_array, 20_000), (dp_clip_gaussian_array, 40_000)],
    ids=["laplace", "gaussian"],
)
def test_unclipped_output_is_unbiased_and_clipped_is_not(array_func: Any, n: int) -> None:
    # Every value is 90 in [0, 100] at epsilon = 1. Unclipped, the noisy mean is 90 within
    # 5 standard errors (Laplace sd 141 -> se 1.0; Gaussian sd 378 -> se 1.9, n = 40 000).
    # Clipped, the mean is pulled toward the centre by about 25 (Laplace) / 36 (Gaussian).
    data = np.full(n, 90, dtype=np.int64)
    raw = array_func(data, 1.0, 0, 100, clip_output=False, rng=_gen(13))
    clipped = array_func(data, 1.0, 0, 100, rng=_gen(13))
    se = np.std(raw) / math.sqrt(n)
    assert abs(raw.mean() - 90) < 5 * se
    assert ((raw < 0) | (raw > 100)).mean() > 0.1
    assert clipped.min() >= 0 and clipped.max() <= 100
    assert 90 - clipped.mean() > 15


def test_unclipped_frame_output_leaves_the_bounds() -> None:
    df = pd.DataFrame({"x": np.full(2000, 50.0)})
    out = dp_clip_laplace(df, "x", 0.5, 0, 100, clip_output=False, rng=_gen(14))
    assert (~out["x"].between(0, 100)).any()


# --- nullable dtypes and missing values ---------------------------------------------


@pytest.mark.parametrize("func", FRAME_FUNCTIONS, ids=FRAME_IDS)
def test_nullable_int64_without_missing_stays_integer(func: Any) -> None:
    df = pd.DataFrame({"a": pd.array([1, 50, 99, 7], dtype="Int64")})
    out = func(df, "a", rng=_gen(15))
    assert pd.api.types.is_integer_dtype(out["a"].dtype)
    assert out["a"].notna().all()
    assert out["a"].between(0, 100).all()


@pytest.mark.parametrize("func", FRAME_FUNCTIONS, ids=FRAME_IDS)
def test_nullable_int64_with_missing_kept_gives_nullable_int64(func: Any) -> None:
    df = pd.DataFrame({"a": pd.array([1, None, 99, None, 40], dtype="Int64")}, index=list("vwxyz"))
    out = func(df, "a", missing="keep", rng=_gen(16))
    assert out["a"].dtype == pd.Int64Dtype()
    assert out["a"].isna().tolist() == [False, True, False, True, False]
    assert out["a"].dropna().between(0, 100).all()
    assert out.index.equals(df.index)


@pytest.mark.parametrize("func", FRAME_FUNCTIONS, ids=FRAME_IDS)
def test_nullable_float64_accepted_and_missing_kept_in_place(func: Any) -> None:
    df = pd.DataFrame({"a": pd.array([1.5, None, 99.0, 50.25], dtype="Float64")})
    out = func(df, "a", missing="keep", rng=_gen(17))
    assert pd.api.types.is_float_dtype(out["a"].dtype)
    assert out["a"].isna().tolist() == [False, True, False, False]
    assert out["a"].dropna().between(0, 100).all()
    full = pd.DataFrame({"a": pd.array([1.5, 2.0, 99.0], dtype="Float64")})
    assert func(full, "a", rng=_gen(18))["a"].notna().all()


@pytest.mark.parametrize("func", FRAME_FUNCTIONS, ids=FRAME_IDS)
@pytest.mark.parametrize(
    "values",
    [
        [1.0, np.nan, 3.0],
        pd.array([1, None, 3], dtype="Int64"),
        pd.array([1.0, None, 3.0], dtype="Float64"),
    ],
    ids=["float-nan", "Int64-NA", "Float64-NA"],
)
def test_missing_values_raise_by_default(func: Any, values: Any) -> None:
    df = pd.DataFrame({"a": values})
    with pytest.raises(MissingValueError, match="missing='keep'"):
        func(df, "a")


def test_float_missing_kept_and_the_rest_noised() -> None:
    values = np.array([10.0, np.nan, 20.0, np.nan] * 250)
    df = pd.DataFrame({"a": values})
    out = dp_clip_laplace(df, "a", 1.0, 0, 100, missing="keep", rng=_gen(19))
    np.testing.assert_array_equal(out["a"].isna().to_numpy(), np.isnan(values))
    present = out["a"].dropna()
    assert len(present) == 500
    assert (present != df["a"].dropna()).mean() > 0.9


@pytest.mark.parametrize("missing", ["error", "keep"])
@pytest.mark.parametrize("bad", [math.inf, -math.inf])
def test_infinite_values_raise(missing: str, bad: float) -> None:
    df = pd.DataFrame({"a": [1.0, bad, 2.0]})
    with pytest.raises(DomainError, match="infinite"):
        dp_clip_laplace(df, "a", 1.0, 0, 10, missing=missing)
    with pytest.raises(DomainError, match="infinite"):
        dp_clip_gaussian_array(np.array([1.0, bad]), 1.0, 0, 10, missing=missing)


# --- randomness ---------------------------------------------------------------------


@pytest.mark.parametrize("func", FRAME_FUNCTIONS, ids=FRAME_IDS)
def test_default_noise_is_not_reproducible(func: Any) -> None:
    df = pd.DataFrame({"x": np.linspace(0.0, 100.0, 200)})
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the secure default warns nothing
        first = func(df, "x")
        second = func(df, "x")
    assert not first["x"].equals(second["x"])


@pytest.mark.parametrize("func", FRAME_FUNCTIONS, ids=FRAME_IDS)
def test_integer_seed_is_reproducible_and_warns(func: Any) -> None:
    df = pd.DataFrame({"x": np.linspace(0.0, 100.0, 200)})
    with pytest.warns(ReproducibleNoiseWarning):
        first = func(df, "x", rng=7)
    with pytest.warns(ReproducibleNoiseWarning):
        second = func(df, "x", rng=7)
    with pytest.warns(ReproducibleNoiseWarning):
        other = func(df, "x", rng=8)
    pd.testing.assert_frame_equal(first, second)
    assert not first["x"].equals(other["x"])


def test_generator_is_used_as_given() -> None:
    data = np.linspace(0.0, 100.0, 200)
    a = dp_clip_laplace_array(data, 1.0, 0, 100, rng=_gen(20))
    b = dp_clip_laplace_array(data, 1.0, 0, 100, rng=_gen(20))
    np.testing.assert_array_equal(a, b)


# --- privacy accounting -------------------------------------------------------------


def test_ledger_and_attrs_record_every_call() -> None:
    ledger = PrivacyLedger()
    df = _small_frame()
    step1 = dp_clip_laplace(df, "age", 0.7, 0, 100, new_column=True, rng=_gen(21), ledger=ledger)
    step2 = dp_clip_gaussian(
        step1, "score", 0.5, 0, 100, 1e-4, new_column=True, rng=_gen(22), ledger=ledger
    )
    dp_clip_laplace_array([1, 2, 3], 0.25, 0, 10, rng=_gen(23), ledger=ledger)
    dp_clip_gaussian_array([1.0, 2.0], 0.1, 0, 10, rng=_gen(24), ledger=ledger)
    assert len(ledger) == 4
    total = ledger.total()
    assert total.epsilon == pytest.approx(0.7 + 0.5 + 0.25 + 0.1)
    assert total.delta == pytest.approx(1e-4 + 1e-3)
    assert [e.delta for e in ledger.entries] == [0.0, 1e-4, 0.0, 1e-3]
    assert all(e.notion == "ldp" and e.unit == "record" for e in ledger.entries)
    history = step2.attrs["veil.privacy"]
    assert [h["epsilon"] for h in history] == [pytest.approx(0.7), pytest.approx(0.5)]
    assert history[1]["delta"] == pytest.approx(1e-4)
    assert [h["scope"] for h in history] == ["age", "score"]
    assert "veil.privacy" not in df.attrs
    assert len(step1.attrs["veil.privacy"]) == 1


def test_gaussian_cost_has_delta() -> None:
    ledger = PrivacyLedger()
    out = dp_clip_gaussian(_small_frame(), "age", 0.9, 0, 100, rng=_gen(25), ledger=ledger)
    (cost,) = ledger.entries
    assert cost.epsilon == pytest.approx(0.9)
    assert cost.delta == pytest.approx(1e-3)  # trasgoDP's default delta
    assert out.attrs["veil.privacy"][0]["delta"] == pytest.approx(1e-3)


# --- input is never mutated ---------------------------------------------------------


def _mutation_cases() -> list[tuple[str, Any]]:
    return [
        ("laplace", lambda df: dp_clip_laplace(df, "a", 1.0, 0, 100, rng=_gen(0))),
        ("laplace-new", lambda df: dp_clip_laplace(df, "a", 1.0, 0, 100, True, rng=_gen(0))),
        ("laplace-int", lambda df: dp_clip_laplace(df, "i", 1.0, 0, 100, rng=_gen(0))),
        ("gaussian", lambda df: dp_clip_gaussian(df, "a", 1.0, 0, 100, rng=_gen(0))),
        ("gaussian-int", lambda df: dp_clip_gaussian(df, "i", 0.5, 0, 100, rng=_gen(0))),
        (
            "laplace-keep",
            lambda df: dp_clip_laplace(df, "m", 1.0, 0, 100, missing="keep", rng=_gen(0)),
        ),
        (
            "gaussian-keep-Int64",
            lambda df: dp_clip_gaussian(df, "n", 1.0, 0, 100, missing="keep", rng=_gen(0)),
        ),
        (
            "laplace-Int64-new",
            lambda df: dp_clip_laplace(df, "n", 1.0, 0, 100, True, missing="keep", rng=_gen(0)),
        ),
    ]


@pytest.mark.parametrize(("case", "call"), _mutation_cases(), ids=[c for c, _ in _mutation_cases()])
def test_input_frame_is_never_mutated(case: str, call: Any) -> None:
    df = pd.DataFrame(
        {
            "a": [1.5, 20.0, 55.5, 99.0],
            "i": np.array([1, 20, 55, 99], dtype=np.int64),
            "m": [1.0, np.nan, 3.0, np.nan],
            "n": pd.array([1, None, 3, 4], dtype="Int64"),
        },
        index=[3, 1, 2, 0],
    )
    df.attrs["note"] = "kept"
    before = df.copy(deep=True)
    out = call(df)
    pd.testing.assert_frame_equal(df, before)
    assert df.attrs == {"note": "kept"}
    assert out is not df


@pytest.mark.parametrize(
    "call",
    [
        lambda df: dp_clip_laplace(df, "i", 1.0, 0, 100, rng=_gen(0)),
        lambda df: dp_clip_gaussian(df, "i", 0.5, 0, 100, new_column=True, rng=_gen(0)),
    ],
    ids=["laplace", "gaussian-new-column"],
)
def test_editing_the_output_does_not_reach_the_input(call: Any) -> None:
    # The released frame is a separate object: a user who edits it in place (fills a
    # cell, corrects a value) must not be editing the private original at the same time.
    df = pd.DataFrame({"a": [1.5, 20.0, 55.5], "i": np.array([1, 20, 55], dtype=np.int64)})
    before = df.copy(deep=True)
    out = call(df)
    out.loc[0, "a"] = -1.0
    pd.testing.assert_frame_equal(df, before)


@pytest.mark.parametrize("array_func", [dp_clip_laplace_array, dp_clip_gaussian_array])
def test_input_array_is_never_mutated(array_func: Any) -> None:
    for data in (
        np.array([1, 50, 99], dtype=np.int64),
        np.array([1.0, 50.0, np.nan]),
        pd.array([1, None, 99], dtype="Int64"),
    ):
        before = data.copy()
        out = array_func(data, 1.0, 0, 100, missing="keep", rng=_gen(26))
        pd.testing.assert_series_equal(pd.Series(data), pd.Series(before))
        assert out is not data


# --- empty input, lists -------------------------------------------------------------


@pytest.mark.parametrize("func", FRAME_FUNCTIONS, ids=FRAME_IDS)
@pytest.mark.parametrize("dtype", ["int64", "float64"])
def test_empty_frame_gives_an_empty_frame(func: Any, dtype: str) -> None:
    df = pd.DataFrame({"a": pd.Series([], dtype=dtype)})
    ledger = PrivacyLedger()
    out = func(df, "a", new_column=True, rng=_gen(27), ledger=ledger)
    assert out.shape == (0, 2)
    assert out["dp_a"].dtype == np.dtype(dtype)
    assert len(ledger) == 1


@pytest.mark.parametrize("array_func", [dp_clip_laplace_array, dp_clip_gaussian_array])
def test_list_inputs(array_func: Any) -> None:
    ints = array_func([16, 30, 45, 60, 99], 1.0, 16, 100, rng=_gen(28))
    assert isinstance(ints, np.ndarray)
    assert ints.dtype == np.int64 and ints.shape == (5,)
    assert ((ints >= 16) & (ints <= 100)).all()
    floats = array_func([0.5, 2.5, 7.25], 1.0, 0, 10, rng=_gen(29))
    assert isinstance(floats, np.ndarray)
    assert floats.dtype == np.float64 and floats.shape == (3,)
    kept = array_func([0.5, math.nan, 7.25], 1.0, 0, 10, missing="keep", rng=_gen(30))
    assert np.isnan(kept).tolist() == [False, True, False]
    with pytest.raises(MissingValueError):
        array_func([0.5, math.nan], 1.0, 0, 10)
    assert array_func([], 1.0, 0, 10, rng=_gen(31)).shape == (0,)


def test_integer_array_with_missing_kept_gives_nullable_integers() -> None:
    out = dp_clip_laplace_array(
        pd.array([1, None, 9], dtype="Int64"), 1.0, 0, 10, missing="keep", rng=_gen(32)
    )
    assert out.dtype == pd.Int64Dtype()
    assert pd.isna(out).tolist() == [False, True, False]


# ------------------------------------------------------------------- issue 14 B15, B19


@pytest.mark.parametrize(
    "call",
    [
        lambda df, rng: dp_clip_laplace(df, "age", 1e-30, 0, 100, rng=rng),
        lambda df, rng: dp_clip_laplace_array(df["age"].to_numpy(), 1e-30, 0, 100, rng=rng),
        lambda df, rng: dp_clip_gaussian(df, "age", 1e-30, 0, 100, 1e-5, rng=rng),
    ],
    ids=["laplace", "laplace-array", "gaussian"],
)
def test_an_epsilon_whose_noise_overflows_is_refused(call: Any) -> None:
    # epsilon = 1e-30 used to return the lower bound for every record (int64 overflow
    # in the sampler), with only a RuntimeWarning.
    df = pd.DataFrame({"age": [20, 40, 60, 80]})
    before = df.copy()
    with pytest.raises(ParameterError, match=r"epsilon: 1e-30 .*smallest epsilon allowed here"):
        call(df, _gen(1))
    pd.testing.assert_frame_equal(df, before)


def test_dp_clip_gaussian_says_which_gaussian_it_draws() -> None:
    # The docstring said "discrete Gaussian noise" while the default drew the rounded one.
    doc = " ".join((dp_clip_gaussian.__doc__ or "").split())
    assert 'sampler="rounded"`` the noise is the rounded Gaussian ``rint(σZ)``' in doc
    assert "receive discrete Gaussian noise" not in doc
    out = dp_clip_gaussian(pd.DataFrame({"age": [30, 50]}), "age", 0.5, 0, 100, 1e-5, rng=_gen(2))
    assert "rounded" in out.attrs["veil.privacy"][-1]["mechanism"]
