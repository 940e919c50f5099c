"""Shuffling, data swapping and rank swapping: marginals kept, links broken, constraints held."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from veil.errors import ColumnError, DataTypeError, ParameterError, PrivacyWarning
from veil.masking.swapping import MASKING_ATTR, rank_swap, shuffle, swap


def _gen(seed: int) -> np.random.Generator:
    return np.random.Generator(np.random.PCG64(seed))


def _frame(n: int = 2000, seed: int = 0) -> pd.DataFrame:
    g = _gen(seed)
    return pd.DataFrame(
        {
            "region": g.choice(["north", "south", "east", "west"], size=n),
            "sex": pd.Categorical(g.choice(["f", "m"], size=n)),
            "income": g.lognormal(10, 1, size=n),  # continuous: every value distinct
            "age": pd.array(g.integers(18, 90, size=n), dtype="Int64"),
        }
    )


def _sorted(values: pd.Series) -> list[object]:
    return sorted(values.dropna().tolist())


def _moved_from_same_group(
    before: pd.DataFrame, after: pd.DataFrame, groups: list[str], column: str
) -> bool:
    """Each group holds the same multiset of ``column`` values before and after."""
    key = before[groups].astype(str).agg("|".join, axis=1)
    for _, part in before.groupby(key):
        if sorted(part[column]) != sorted(after.loc[part.index, column]):
            return False
    return True


# --- shuffle -------------------------------------------------------------------------------


def test_shuffle_keeps_marginals_and_joint_tuples_and_breaks_links() -> None:
    df = _frame()
    before = df.copy(deep=True)
    out = shuffle(df, ["income", "age"], rng=_gen(1))
    pd.testing.assert_frame_equal(df, before)
    assert _sorted(out["income"]) == _sorted(df["income"])
    assert _sorted(out["age"]) == _sorted(df["age"])
    assert out["age"].dtype == df["age"].dtype
    # The same permutation for both columns: every (income, age) tuple survives.
    assert sorted(zip(out["income"], out["age"], strict=True)) == sorted(
        zip(df["income"], df["age"], strict=True)
    )
    pd.testing.assert_series_equal(out["region"], df["region"])
    # A uniform permutation of 2000 rows leaves ~1 fixed point on average.
    assert (out["income"] != df["income"]).mean() > 0.99
    assert out.attrs[MASKING_ATTR][-1]["rows_permuted"] == len(df)


def test_shuffle_within_groups_keeps_each_groups_values() -> None:
    df = _frame()
    out = shuffle(df, "income", within=["region", "sex"], rng=_gen(2))
    pd.testing.assert_frame_equal(out[["region", "sex"]], df[["region", "sex"]])
    assert _moved_from_same_group(df, out, ["region", "sex"], "income")
    assert (out["income"] != df["income"]).mean() > 0.95


def test_shuffle_within_leaves_rows_with_a_missing_group_alone() -> None:
    df = pd.DataFrame({"g": ["a", None, "a", "a"], "v": [1, 2, 3, 4]})
    out = shuffle(df, "v", within="g", rng=_gen(3))
    assert out["v"].iloc[1] == 2
    assert sorted(out["v"].iloc[[0, 2, 3]]) == [1, 3, 4]


def test_shuffle_moves_missing_values_with_their_row_values() -> None:
    df = pd.DataFrame({"v": [1.0, np.nan, 3.0, np.nan, 5.0]})
    out = shuffle(df, "v", rng=_gen(4))
    assert int(out["v"].isna().sum()) == 2
    assert _sorted(out["v"]) == [1.0, 3.0, 5.0]


def test_shuffle_is_reproducible_with_a_seed() -> None:
    df = _frame(300)
    first = shuffle(df, "income", rng=_gen(5))
    pd.testing.assert_frame_equal(first, shuffle(df, "income", rng=_gen(5)))
    assert not first["income"].equals(shuffle(df, "income", rng=_gen(6))["income"])


# --- swap ----------------------------------------------------------------------------------


@pytest.mark.parametrize(("n", "fraction"), [(2000, 0.1), (2000, 0.5), (2001, 0.3), (10, 1.0)])
def test_swap_honours_the_fraction_exactly_in_pairs(n: int, fraction: float) -> None:
    df = _frame(n)
    before = df.copy(deep=True)
    out = swap(df, ["income", "age"], fraction=fraction, rng=_gen(7))
    pd.testing.assert_frame_equal(df, before)
    entry = out.attrs[MASKING_ATTR][-1]
    assert entry["pairs_requested"] == round(fraction * n / 2)
    pairs = entry["pairs_swapped"]
    assert pairs == entry["pairs_requested"]
    changed = out["income"] != df["income"]
    # Incomes are distinct, so each swapped row changes: exactly 2 * pairs rows, which
    # is fraction * n up to the rounding of pairs (tolerance 1 row).
    assert int(changed.sum()) == 2 * pairs
    assert abs(int(changed.sum()) - fraction * n) <= 1
    assert _sorted(out["income"]) == _sorted(df["income"])
    assert _sorted(out["age"]) == _sorted(df["age"])
    # The listed columns move together and the others stay.
    assert sorted(zip(out["income"], out["age"], strict=True)) == sorted(
        zip(df["income"], df["age"], strict=True)
    )
    pd.testing.assert_frame_equal(out[["region", "sex"]], df[["region", "sex"]])


def test_swap_exchanges_values_within_disjoint_pairs() -> None:
    df = pd.DataFrame({"v": np.arange(1000)})
    out = swap(df, "v", fraction=0.4, rng=_gen(8))
    moved = np.flatnonzero(out["v"].to_numpy() != df["v"].to_numpy())
    source = out["v"].to_numpy()[moved]  # row moved[i] now holds row source[i]'s value
    # Each moved row received the value of a row that received its value back.
    np.testing.assert_array_equal(out["v"].to_numpy()[source], moved)
    assert moved.size == 400


def test_swap_with_keys_only_pairs_records_that_agree_on_them() -> None:
    df = _frame()
    out = swap(df, "income", fraction=0.6, keys=["region", "sex"], rng=_gen(9))
    pd.testing.assert_frame_equal(out[["region", "sex", "age"]], df[["region", "sex", "age"]])
    assert _moved_from_same_group(df, out, ["region", "sex"], "income")
    # Each swapped value came from a row with the same keys.
    origin = pd.Series(df.index, index=df["income"])
    source = origin.loc[out["income"]].to_numpy()
    for key in ("region", "sex"):
        np.testing.assert_array_equal(df[key].to_numpy()[source], df[key].to_numpy())
    pairs = out.attrs[MASKING_ATTR][-1]["pairs_swapped"]
    assert pairs == 600
    assert int((out["income"] != df["income"]).sum()) == 2 * pairs


def test_swap_with_small_key_groups_swaps_what_it_can_and_warns() -> None:
    df = pd.DataFrame({"k": ["a", "a", "a", "b", "c", None, None], "v": np.arange(7.0)})
    with pytest.warns(PrivacyWarning, match="only 1 disjoint pairs"):
        out = swap(df, "v", fraction=1.0, keys="k", rng=_gen(10))
    entry = out.attrs[MASKING_ATTR][-1]
    assert (entry["pairs_requested"], entry["pairs_swapped"]) == (4, 1)
    # Only two of the three "a" rows swap; singletons and missing keys never do.
    assert out["v"].iloc[3:].tolist() == [3.0, 4.0, 5.0, 6.0]
    assert sorted(out["v"].iloc[:3]) == [0.0, 1.0, 2.0]
    assert int((out["v"] != df["v"]).sum()) == 2


def test_swap_with_fraction_zero_returns_the_data_unchanged() -> None:
    df = _frame(100)
    out = swap(df, "income", fraction=0, rng=_gen(11))
    pd.testing.assert_frame_equal(out, df)
    assert out.attrs[MASKING_ATTR][-1]["pairs_swapped"] == 0


def test_swap_moves_missing_values_with_the_pair() -> None:
    df = pd.DataFrame({"v": [np.nan, 1.0]})
    out = swap(df, "v", fraction=1.0, rng=_gen(12))
    assert out["v"].iloc[0] == 1.0
    assert np.isnan(out["v"].iloc[1])


def test_swap_is_reproducible_and_keeps_earlier_history() -> None:
    df = _frame(500)
    df.attrs[MASKING_ATTR] = [{"method": "earlier"}]
    first = swap(df, "income", fraction=0.5, rng=_gen(13))
    pd.testing.assert_frame_equal(first, swap(df, "income", fraction=0.5, rng=_gen(13)))
    assert [e["method"] for e in first.attrs[MASKING_ATTR]] == ["earlier", "swap"]
    assert df.attrs[MASKING_ATTR] == [{"method": "earlier"}]


# --- rank_swap -----------------------------------------------------------------------------


def _rank_distance(before: np.ndarray, after: np.ndarray) -> np.ndarray:
    """Smallest rank distance between each original value and the value now in its row.

    With ties a value occupies a range of ranks; the distance is between the ranges.
    """
    ordered = np.sort(before)
    lo_old = np.searchsorted(ordered, before, side="left")
    hi_old = np.searchsorted(ordered, before, side="right") - 1
    lo_new = np.searchsorted(ordered, after, side="left")
    hi_new = np.searchsorted(ordered, after, side="right") - 1
    distance: np.ndarray = np.maximum(0, np.maximum(lo_new - hi_old, lo_old - hi_new))
    return distance


@pytest.mark.parametrize(("n", "p"), [(1000, 5.0), (2001, 1.0), (997, 2.5), (50, 100.0), (40, 3)])
def test_rank_swap_keeps_every_value_within_p_percent_of_ranks(n: int, p: float) -> None:
    df = _frame(n)
    before = df.copy(deep=True)
    out = rank_swap(df, "income", p, rng=_gen(14))
    pd.testing.assert_frame_equal(df, before)
    assert _sorted(out["income"]) == _sorted(df["income"])
    window = int(np.floor(p * n / 100))
    assert out.attrs[MASKING_ATTR][-1]["max_rank_distance"] == window
    distance = _rank_distance(df["income"].to_numpy(), out["income"].to_numpy())
    assert distance.max() <= window
    # All but at most two values (the ends of the two partial blocks) move.
    assert int((distance > 0).sum()) >= n - 2
    pd.testing.assert_frame_equal(out.drop(columns="income"), df.drop(columns="income"))


def test_rank_swap_moves_most_values_by_about_half_the_window() -> None:
    df = _frame(5000)
    out = rank_swap(df, "income", 5, rng=_gen(15))
    distance = _rank_distance(df["income"].to_numpy(), out["income"].to_numpy())
    assert (distance > 0).mean() > 0.99
    # Pair distances are triangular on 1..B-1 with mean B/2 = 125 (w = 250); the mean of
    # 5000 draws (sd about 51 / sqrt(2500)) lies within 5 ranks of it.
    assert abs(distance.mean() - 125) < 5
    assert out.attrs[MASKING_ATTR][-1]["pairs_swapped"] >= 2499


def test_rank_swap_with_ties_and_a_nullable_integer_column() -> None:
    df = _frame(3000)
    df.loc[df.index[::7], "age"] = pd.NA
    out = rank_swap(df, "age", 2, rng=_gen(16))
    assert out["age"].dtype == df["age"].dtype
    # Missing values stay in their rows.
    pd.testing.assert_series_equal(out["age"].isna(), df["age"].isna())
    assert _sorted(out["age"]) == _sorted(df["age"])
    present = df["age"].notna().to_numpy()
    before = df["age"].to_numpy(dtype=np.int64, na_value=-1)[present]
    after = out["age"].to_numpy(dtype=np.int64, na_value=-1)[present]
    window = int(np.floor(2 * present.sum() / 100))
    assert _rank_distance(before, after).max() <= window
    assert (after != before).mean() > 0.5


def test_rank_swap_leaves_missing_floats_in_place() -> None:
    df = pd.DataFrame({"v": [np.nan, 3.0, 1.0, np.nan, 2.0, 4.0]})
    out = rank_swap(df, "v", 50, rng=_gen(17))
    assert out["v"].isna().tolist() == df["v"].isna().tolist()
    assert _sorted(out["v"]) == [1.0, 2.0, 3.0, 4.0]


def test_rank_swap_with_a_window_below_one_rank_warns_and_changes_nothing() -> None:
    df = pd.DataFrame({"v": np.arange(10.0)})
    with pytest.warns(PrivacyWarning, match="less than one rank"):
        out = rank_swap(df, "v", 5, rng=_gen(18))
    pd.testing.assert_frame_equal(out, df)
    assert out.attrs[MASKING_ATTR][-1]["pairs_swapped"] == 0


def test_rank_swap_is_reproducible_with_a_seed() -> None:
    df = _frame(500)
    first = rank_swap(df, "income", 10, rng=_gen(19))
    pd.testing.assert_frame_equal(first, rank_swap(df, "income", 10, rng=_gen(19)))
    assert not first["income"].equals(rank_swap(df, "income", 10, rng=_gen(20))["income"])


# --- errors --------------------------------------------------------------------------------


def test_unknown_columns_raise_column_error() -> None:
    df = _frame(20)
    with pytest.raises(ColumnError, match="salary"):
        shuffle(df, "salary", rng=_gen(0))
    with pytest.raises(ColumnError, match="within"):
        shuffle(df, "income", within="town", rng=_gen(0))
    with pytest.raises(ColumnError, match="salary"):
        swap(df, ["income", "salary"], fraction=0.5, rng=_gen(0))
    with pytest.raises(ColumnError, match="keys"):
        swap(df, "income", fraction=0.5, keys=["town"], rng=_gen(0))
    with pytest.raises(ColumnError, match="salary"):
        rank_swap(df, "salary", 5, rng=_gen(0))


@pytest.mark.parametrize("fraction", [-0.1, 1.5, float("nan"), "0.5", True])
def test_swap_rejects_a_fraction_outside_zero_one(fraction: object) -> None:
    with pytest.raises(ParameterError, match="fraction"):
        swap(_frame(20), "income", fraction=fraction, rng=_gen(0))  # type: ignore[arg-type]


@pytest.mark.parametrize("p", [0, -1, 100.5, float("nan"), None])
def test_rank_swap_rejects_p_outside_zero_hundred(p: object) -> None:
    with pytest.raises(ParameterError, match="p:"):
        rank_swap(_frame(20), "income", p, rng=_gen(0))  # type: ignore[arg-type]


@pytest.mark.parametrize("column", ["region", "sex"])
def test_rank_swap_rejects_non_numeric_columns(column: str) -> None:
    with pytest.raises(DataTypeError, match=column):
        rank_swap(_frame(20), column, 5, rng=_gen(0))


def test_rank_swap_rejects_boolean_columns() -> None:
    with pytest.raises(DataTypeError, match="bool"):
        rank_swap(pd.DataFrame({"flag": [True, False]}), "flag", 50, rng=_gen(0))


def test_bad_column_lists_raise_parameter_error() -> None:
    df = _frame(20)
    with pytest.raises(ParameterError, match="at least one"):
        shuffle(df, [], rng=_gen(0))
    with pytest.raises(ParameterError, match="distinct"):
        swap(df, ["income", "income"], fraction=0.5, rng=_gen(0))
    with pytest.raises(ParameterError, match="within"):
        shuffle(df, ["income", "region"], within="region", rng=_gen(0))
    with pytest.raises(ParameterError, match="keys"):
        swap(df, "income", fraction=0.5, keys="income", rng=_gen(0))
