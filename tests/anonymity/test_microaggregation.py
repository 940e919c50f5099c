"""Tests of MDAV and optimal univariate microaggregation."""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterator
from fractions import Fraction

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from veil.anonymity import k_anonymity
from veil.anonymity.microaggregation import microaggregate
from veil.errors import (
    ColumnError,
    DataTypeError,
    DomainError,
    MissingValueError,
    ParameterError,
)

from .._hang import within


def _partition(groups: pd.Series) -> set[frozenset[int]]:
    return {frozenset(np.flatnonzero(groups.to_numpy() == g).tolist()) for g in groups.unique()}


# ------------------------------------------------------------------ hand-computed cases


@pytest.fixture
def eight() -> pd.DataFrame:
    # x and y hold the same multiset of values, so scaling both to unit variance is one
    # common affine map and the distances below (on the raw values) rank as sdcMicro's.
    return pd.DataFrame(
        {
            "x": [0, 1, 3, 6, 10, 15, 21, 28],
            "y": [15, 0, 1, 10, 3, 21, 6, 28],
            "name": list("abcdefgh"),
        },
        index=[10, 11, 12, 13, 14, 15, 16, 17],
    )


def test_mdav_partition_derived_by_hand_as_sdcmicro_runs_it(eight: pd.DataFrame) -> None:
    # 8 records, k = 2 (8 >= 3k: two groups per pass).
    #   centroid (10.5, 10.5); squared distances 130.5, 200.5, 146.5, 20.5, 56.5, 130.5,
    #   130.5, 612.5 -> r = row 7. From row 7: 953, 1513, 1354, 808, 949, 218, 533, 0
    #   -> group {7, 5}; s = row 1 (1513). From row 1 among rows 0, 2, 3, 4, 6: 226, 5,
    #   125, 90, 436 -> group {1, 2}.
    # 4 left (2k <= 4 < 3k): centroid (9.25, 8.5); distances 127.8, 12.8, 30.8, 144.3
    #   -> r = row 6; from row 6: 522, 241, 130 -> group {6, 4}; the rest {0, 3}.
    result = microaggregate(eight, ["x", "y"], 2)
    assert result.groups.tolist() == [3, 1, 1, 3, 2, 0, 2, 0]
    assert result.data["x"].tolist() == [3.0, 2.0, 2.0, 3.0, 15.5, 21.5, 15.5, 21.5]
    assert result.data["y"].tolist() == [12.5, 0.5, 0.5, 12.5, 4.5, 24.5, 4.5, 24.5]
    assert result.sizes.tolist() == [2, 2, 2, 2]
    assert result.method == "mdav" and result.k == 2


def test_without_standardization_the_wide_column_decides() -> None:
    # On raw values b (range 1000) dominates; scaled, a (range 1) counts as much.
    df = pd.DataFrame({"a": [0.0, 1.0, 0.0, 1.0], "b": [0.0, 0.0, 1000.0, 1000.0]})
    raw = microaggregate(df, ["a", "b"], 2, standardize=False)
    assert _partition(raw.groups) == {frozenset({0, 1}), frozenset({2, 3})}


def test_median_aggregate_and_even_group() -> None:
    df = pd.DataFrame({"a": [1.0, 2.0, 9.0, 100.0, 101.0, 130.0, 140.0]})
    result = microaggregate(df, "a", 3, method="optimal", aggregate="median")
    # Optimal groups: {1, 2, 9} and {100, 101, 130, 140} (sizes 3 and 4 <= 2k - 1).
    assert result.groups.tolist() == [0, 0, 0, 1, 1, 1, 1]
    assert result.data["a"].tolist() == [2.0, 2.0, 2.0, 115.5, 115.5, 115.5, 115.5]
    mean = microaggregate(df, "a", 3, method="optimal")
    assert mean.data["a"].tolist()[:3] == [4.0, 4.0, 4.0]


def test_information_loss_by_hand() -> None:
    df = pd.DataFrame({"a": [0, 2, 10, 12]})
    result = microaggregate(df, "a", 2, standardize=False)
    loss = result.information_loss
    # Groups {0, 2} -> 1 and {10, 12} -> 11: SSE = 4; SST = 36 + 16 + 16 + 36 = 104.
    assert loss["sse"] == pytest.approx(4.0)
    assert loss["sst"] == pytest.approx(104.0)
    assert loss["sse_sst"] == pytest.approx(4 / 104)
    sd = math.sqrt(104 / 3)  # sample standard deviation
    assert loss["il1s"] == pytest.approx(1 / (math.sqrt(2) * sd))
    assert loss["il1s_sdcmicro"] == pytest.approx(2 * loss["il1s"])
    scaled = microaggregate(df, "a", 2).information_loss
    assert scaled["sse_sst"] == pytest.approx(4 / 104)


def test_constant_columns_lose_nothing() -> None:
    df = pd.DataFrame({"a": [5.0] * 6, "b": [1.0] * 6})
    loss = microaggregate(df, ["a", "b"], 3).information_loss
    assert loss == {"sse": 0.0, "sst": 0.0, "sse_sst": 0.0, "il1s": 0.0, "il1s_sdcmicro": 0.0}


def test_k_one_releases_the_values_and_fewer_than_2k_records_are_one_group() -> None:
    df = pd.DataFrame({"a": [3, 1, 2]})
    assert microaggregate(df, "a", 1).data["a"].tolist() == [3.0, 1.0, 2.0]
    assert microaggregate(df, "a", 2).groups.tolist() == [0, 0, 0]
    assert microaggregate(df, "a", 3, method="optimal").sizes.tolist() == [3]


def test_input_untouched_and_other_columns_unchanged(eight: pd.DataFrame) -> None:
    before = eight.copy()
    result = microaggregate(eight, ["x", "y"], 3)
    pd.testing.assert_frame_equal(eight, before)
    pd.testing.assert_series_equal(result.data["name"], eight["name"])
    assert result.data.index.equals(eight.index)
    assert result.groups.index.equals(eight.index)
    assert list(result.data.columns) == list(eight.columns)


def test_missing_values_imputed_with_a_public_value() -> None:
    df = pd.DataFrame({"a": pd.array([1, None, 3, 50, 52, 51], dtype="Int64")})
    result = microaggregate(df, "a", 3, method="optimal", missing=2)
    assert result.data["a"].tolist() == [2.0, 2.0, 2.0, 51.0, 51.0, 51.0]
    per_column = microaggregate(df, ["a"], 3, missing={"a": 2.0})
    assert per_column.data["a"].tolist() == result.data["a"].tolist()


def test_strata_are_microaggregated_separately(eight: pd.DataFrame) -> None:
    df = pd.concat([eight.assign(region="n"), eight.assign(region="s", x=eight["x"] * 3)])
    result = microaggregate(df, ["x", "y"], 2, strata="region")
    north = microaggregate(eight, ["x", "y"], 2)
    # Each stratum is scaled and grouped on its own: the north half is the table alone.
    assert result.groups.iloc[:8].tolist() == north.groups.tolist()
    assert result.groups.iloc[8:].min() == 4  # south groups follow the north ones
    pd.testing.assert_frame_equal(result.data.iloc[:8], north.data.assign(region="n"))
    assert k_anonymity(result.data, ["x", "y", "region"]) >= 2
    for g, members in result.data.groupby(result.groups.to_numpy()):
        assert members["region"].nunique() == 1, g


def test_strata_errors() -> None:
    df = pd.DataFrame({"a": [1.0, 2.0, 3.0, 4.0, 5.0], "r": ["u", "u", "u", "v", "v"]})
    with pytest.raises(ParameterError, match=r"k=3 is above the size of the stratum \{'r': 'v'\}"):
        microaggregate(df, "a", 3, strata="r")
    with pytest.raises(ColumnError, match=r"strata \['zz'\] are absent from df"):
        microaggregate(df, "a", 2, strata=["zz"])
    with pytest.raises(ParameterError, match=r"strata \['a'\] are also microaggregated"):
        microaggregate(df, "a", 2, strata=["a"])


# ---------------------------------------------------------------------------- properties


@st.composite
def _tables(draw: st.DrawFn) -> tuple[pd.DataFrame, int]:
    n = draw(st.integers(1, 60))
    p = draw(st.integers(1, 3))
    k = draw(st.integers(1, n))
    # Few distinct values, so that ties and duplicate records are common.
    cells = draw(st.lists(st.integers(-5, 5), min_size=n * p, max_size=n * p))
    data = np.array(cells, dtype=float).reshape(n, p)
    return pd.DataFrame(data, columns=[f"c{j}" for j in range(p)]).assign(tag="t"), k


@settings(max_examples=60, deadline=None)
@given(_tables(), st.sampled_from(["mean", "median"]))
def test_groups_hold_k_to_2k_minus_1_records_and_release_is_k_anonymous(
    case: tuple[pd.DataFrame, int], aggregate: str
) -> None:
    df, k = case
    columns = [c for c in df.columns if c != "tag"]
    before = df.copy()
    result = microaggregate(df, columns, k, aggregate=aggregate)
    sizes = result.sizes.to_numpy()
    assert sizes.sum() == len(df)
    assert sizes.min() >= k
    assert sizes.max() <= max(2 * k - 1, len(df) if len(df) < 2 * k else 0)
    assert (sizes[:-1] == k).all()  # MDAV: all but the last group have exactly k
    assert k_anonymity(result.data, columns) >= k
    grouped = df[columns].groupby(result.groups.to_numpy())
    expected = grouped.transform("mean" if aggregate == "mean" else "median")
    np.testing.assert_allclose(result.data[columns].to_numpy(), expected.to_numpy())
    pd.testing.assert_frame_equal(df, before)
    assert (result.data["tag"] == "t").all()


@settings(max_examples=40, deadline=None)
@given(_tables(), st.floats(0.01, 100.0))
def test_standardized_partition_ignores_the_units(
    case: tuple[pd.DataFrame, int], factor: float
) -> None:
    df, k = case
    columns = [c for c in df.columns if c != "tag"]
    first = microaggregate(df, columns, k)
    # Powers of two keep the scaled values bit-identical, so ties stay ties.
    scale = 2.0 ** round(math.log2(factor))
    rescaled = df.assign(**{columns[0]: df[columns[0]] * scale})
    assert microaggregate(rescaled, columns, k).groups.tolist() == first.groups.tolist()


def _set_partitions(items: list[int]) -> Iterator[list[list[int]]]:
    if not items:
        yield []
        return
    first, rest = items[0], items[1:]
    for partition in _set_partitions(rest):
        for i in range(len(partition)):
            yield [*partition[:i], [first, *partition[i]], *partition[i + 1 :]]
        yield [[first], *partition]


def _sse(values: np.ndarray, blocks: list[list[int]]) -> float:
    return float(sum(((values[b] - values[b].mean()) ** 2).sum() for b in blocks))


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("k", [2, 3])
def test_optimal_matches_the_brute_force_minimum_over_all_partitions(seed: int, k: int) -> None:
    values = np.random.default_rng(seed).normal(size=8).round(2)
    best = min(
        _sse(values, p)
        for p in _set_partitions(list(range(len(values))))
        if all(len(b) >= k for b in p)
    )
    result = microaggregate(
        pd.DataFrame({"v": values}), "v", k, method="optimal", standardize=False
    )
    assert result.information_loss["sse"] == pytest.approx(best, abs=1e-9)
    assert result.sizes.between(k, 2 * k - 1).all()
    assert k_anonymity(result.data, ["v"]) >= k


def _exact_optimum(values: list[int], k: int) -> Fraction:
    """Minimum SSE over contiguous groups of k .. 2k - 1 sorted values, in exact arithmetic."""
    v = sorted(values)
    s1, s2 = [0], [0]
    for x in v:
        s1.append(s1[-1] + x)
        s2.append(s2[-1] + x * x)
    best: list[Fraction | None] = [Fraction(0)] + [None] * len(v)
    for end in range(1, len(v) + 1):
        for size in range(k, 2 * k):
            previous = best[end - size] if end - size >= 0 else None
            if previous is None:
                continue
            total = s1[end] - s1[end - size]
            cost = previous + s2[end] - s2[end - size] - Fraction(total * total, size)
            current = best[end]
            best[end] = cost if current is None or cost < current else current
    result = best[-1]
    assert result is not None
    return result


def _exact_sse(values: list[int], groups: np.ndarray) -> Fraction:
    sse = Fraction(0)
    for g in np.unique(groups):
        members = [values[i] for i in np.flatnonzero(groups == g)]
        total = sum(members)
        sse += sum(x * x for x in members) - Fraction(total * total, len(members))
    return sse


@pytest.mark.parametrize("k", [2, 3, 5])
def test_optimal_keeps_its_precision_when_close_values_sit_far_apart(k: int) -> None:
    # Runs of k .. 4k values a few units apart, the runs 10^9 apart: sums over the
    # whole column would swamp the within-group squares (~1) by rounding (~1e18 * 1e-16).
    rng = np.random.default_rng(k)
    runs = [rng.integers(0, 3, int(rng.integers(k, 4 * k + 1))) for _ in range(40)]
    gaps = np.concatenate([np.r_[10**9, run[1:]] for run in runs])
    values = np.cumsum(gaps).astype(np.int64).tolist()
    result = microaggregate(pd.DataFrame({"v": values}), "v", k, method="optimal")
    assert _exact_sse(values, result.groups.to_numpy()) == _exact_optimum(values, k)


@settings(max_examples=40, deadline=None)
@given(st.lists(st.integers(-50, 50), min_size=1, max_size=80), st.integers(1, 6))
def test_optimal_is_never_worse_than_mdav(values: list[int], k: int) -> None:
    df = pd.DataFrame({"v": values})
    k = min(k, len(values))
    optimal = microaggregate(df, "v", k, method="optimal")
    mdav = microaggregate(df, "v", k)
    assert optimal.information_loss["sse"] <= mdav.information_loss["sse"] + 1e-9
    assert optimal.sizes.between(k, 2 * k - 1).all() or len(values) < 2 * k
    assert k_anonymity(optimal.data, ["v"]) >= k


def test_a_larger_table_runs_in_vectorized_passes() -> None:
    rng = np.random.default_rng(7)
    df = pd.DataFrame(rng.normal(size=(6000, 3)), columns=["a", "b", "c"])
    result = microaggregate(df, ["a", "b", "c"], 5)
    assert result.sizes.min() == 5 and result.sizes.max() <= 9
    assert k_anonymity(result.data, ["a", "b", "c"]) >= 5
    assert 0 < result.information_loss["sse_sst"] < 0.1


# ---------------------------------------------------------------------------- error paths


@pytest.mark.parametrize("k", [0, -1, 2.5, True, "3", None])
def test_bad_k(k: object) -> None:
    df = pd.DataFrame({"a": [1.0, 2.0, 3.0]})
    with pytest.raises(ParameterError, match=r"k must be an integer >= 1, got"):
        microaggregate(df, "a", k)  # type: ignore[arg-type]


def test_k_above_the_number_of_records() -> None:
    df = pd.DataFrame({"a": [1.0, 2.0, 3.0]})
    with pytest.raises(
        ParameterError, match=r"k must be at most the number of records \(3\), got k=4"
    ):
        microaggregate(df, "a", 4)


def test_non_numeric_and_boolean_columns() -> None:
    df = pd.DataFrame({"a": ["1", "2"], "b": [True, False], "c": [1.0, 2.0]})
    with pytest.raises(DataTypeError, match=r"column 'a' has dtype \w+; .* numeric"):
        microaggregate(df, ["c", "a"], 2)
    with pytest.raises(DataTypeError, match=r"column 'b' has dtype bool"):
        microaggregate(df, "b", 2)


def test_absent_column_and_empty_list() -> None:
    df = pd.DataFrame({"a": [1.0, 2.0]})
    with pytest.raises(ColumnError, match=r"columns \['zz'\] are absent from df"):
        microaggregate(df, ["a", "zz"], 2)
    with pytest.raises(ParameterError, match="columns must name at least one"):
        microaggregate(df, [], 2)


def test_bad_options() -> None:
    df = pd.DataFrame({"a": [1.0, 2.0], "b": [3.0, 4.0]})
    with pytest.raises(
        ParameterError, match=r"method must be one of \('mdav', 'optimal'\), got 'x'"
    ):
        microaggregate(df, "a", 2, method="x")
    with pytest.raises(ParameterError, match=r'method="optimal" microaggregates one column; got 2'):
        microaggregate(df, ["a", "b"], 2, method="optimal")
    with pytest.raises(ParameterError, match=r"aggregate must be one of \('mean', 'median'\)"):
        microaggregate(df, "a", 2, aggregate="mode")
    with pytest.raises(ParameterError, match="standardize must be True or False, got 1"):
        microaggregate(df, "a", 2, standardize=1)  # type: ignore[arg-type]
    with pytest.raises(ParameterError, match=r'missing must be "error", a number'):
        microaggregate(df, "a", 2, missing="drop")
    with pytest.raises(ParameterError, match=r"missing\['a'\] must be finite, got nan"):
        microaggregate(df, "a", 2, missing=float("nan"))
    with pytest.raises(DataTypeError, match="df must be a pandas DataFrame, got dict"):
        microaggregate({"a": [1]}, "a", 1)  # type: ignore[arg-type]
    with pytest.raises(ParameterError, match="df must hold at least one record"):
        microaggregate(df.iloc[:0], "a", 1)


def test_missing_and_infinite_values() -> None:
    df = pd.DataFrame({"a": [1.0, np.nan, 3.0, np.nan]})
    with pytest.raises(MissingValueError, match=r"column 'a' holds 2 missing value\(s\)"):
        microaggregate(df, "a", 2)
    with pytest.raises(MissingValueError, match=r"column 'a' holds 2 missing"):
        microaggregate(df.assign(b=1.0), ["a", "b"], 2, missing={"b": 0.0})
    with pytest.raises(DomainError, match=r"column 'a' holds 1 infinite value"):
        microaggregate(pd.DataFrame({"a": [1.0, np.inf]}), "a", 1)


@pytest.mark.parametrize("method", ["mdav", "optimal"])
@pytest.mark.parametrize("standardize", [True, False])
def test_values_near_the_float_limit_are_refused_not_hung(method: str, standardize: bool) -> None:
    # Values of +-1e308 used to make MDAV's distances NaN (it never finished) and the
    # released means infinite: now they are refused, naming the column and the bound.
    rng = np.random.default_rng(4)
    df = pd.DataFrame({"x": rng.choice([1e308, -1e308, 1.0, 2.0], 50), "y": rng.normal(size=50)})
    before = df.copy()
    columns = "x" if method == "optimal" else ["x", "y"]
    with pytest.raises(DomainError, match=r"column 'x' holds \d+ value\(s\) beyond \+-1e\+100"):
        within(30, f"microaggregate {method}", microaggregate, df, columns, 3, method=method,
               standardize=standardize)  # fmt: skip
    pd.testing.assert_frame_equal(df, before)


def test_values_up_to_the_bound_give_finite_groups() -> None:
    x = np.tile([1e100, -1e100, 1.0, 2.0, 3.0], 8)
    result = microaggregate(pd.DataFrame({"x": x, "y": np.arange(40.0)}), ["x", "y"], 3)
    assert np.isfinite(result.data[["x", "y"]].to_numpy()).all()
    assert result.sizes.min() >= 3


def test_every_group_size_bound_on_all_small_tables() -> None:
    # Exhaustive over n and k for a fixed random layout: sizes always in k .. 2k - 1.
    rng = np.random.default_rng(3)
    for n, k in itertools.product(range(1, 25), range(1, 9)):
        if k > n:
            continue
        df = pd.DataFrame(rng.integers(0, 4, size=(n, 2)), columns=["a", "b"])
        for method, cols in (("mdav", ["a", "b"]), ("optimal", ["a"])):
            sizes = microaggregate(df, cols, k, method=method).sizes
            assert sizes.min() >= k, (n, k, method)
            assert sizes.max() <= max(2 * k - 1, n if n < 2 * k else 0), (n, k, method)
