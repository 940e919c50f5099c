"""Table-level privacy checks against hand-computed tables and anonymized data sets."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from veil.anonymity.checks import (
    alpha_k_anonymity,
    basic_beta_likeness,
    delta_disclosure,
    enhanced_beta_likeness,
    entropy_l_diversity,
    equivalence_classes,
    k_anonymity,
    l_diversity,
    recursive_c_l_diversity,
    t_closeness,
)
from veil.errors import ColumnError, MissingValueError, ParameterError

from .._data import DATA

ADULT_QI = ["age", "education", "occupation", "relationship", "sex", "native-country"]
STUDENT_QI = ["Teacher", "Gender", "Ethnic", "Freeredu"]


def _read(relative: str) -> pd.DataFrame:
    path = DATA / relative
    assert path.is_file(), f"vendored data file missing: {path}"
    return pd.read_csv(path)


@pytest.fixture
def table() -> pd.DataFrame:
    # Class A (zip 1): disease x, x, y           -> counts {x: 2, y: 1}, size 3
    # Class B (zip 2): disease x, y, z, z, z, z  -> counts {x: 1, y: 1, z: 4}, size 6
    # Table (9 records): P(x) = 3/9, P(y) = 2/9, P(z) = 4/9
    return pd.DataFrame(
        {
            "zip": [1, 1, 1, 2, 2, 2, 2, 2, 2],
            "disease": ["x", "x", "y", "x", "y", "z", "z", "z", "z"],
            "age": [30, 30, 40, 30, 40, 50, 50, 50, 50],
        }
    )


# ---------------------------------------------------------------- hand-computed values


def test_k_anonymity_is_smallest_class(table: pd.DataFrame) -> None:
    # classes of sizes 3 and 6
    assert k_anonymity(table, ["zip"]) == 3
    # (zip, age): (1,30)x2, (1,40)x1, ... -> smallest class 1
    assert k_anonymity(table, ["zip", "age"]) == 1
    assert isinstance(k_anonymity(table, ["zip"]), int)


def test_l_diversity_counts_distinct_values(table: pd.DataFrame) -> None:
    # A has {x, y} = 2 values, B has {x, y, z} = 3 -> l = 2
    assert l_diversity(table, ["zip"], ["disease"]) == 2


def test_entropy_l_diversity_is_not_rounded(table: pd.DataFrame) -> None:
    # H(A) = -(2/3 ln 2/3 + 1/3 ln 1/3) = 0.636514; exp -> 1.889882
    # H(B) = -(2 * 1/6 ln 1/6 + 4/6 ln 4/6) = 0.867563; exp -> 2.381102
    h_a = -(2 / 3 * math.log(2 / 3) + 1 / 3 * math.log(1 / 3))
    result = entropy_l_diversity(table, ["zip"], ["disease"])
    assert result == pytest.approx(math.exp(h_a))
    assert result == pytest.approx(1.889882, abs=1e-6)
    assert result != int(result)  # pyCANON would return 1


def test_recursive_c_l_sorts_counts_descending(table: pd.DataFrame) -> None:
    # l = 2 (distinct). Descending counts: A (2, 1): r1 / (r2) = 2 -> c = floor(2) + 1 = 3
    # B (4, 1, 1): r1 / (r2 + r3) = 4 / 2 = 2 -> c = 3. Table c = 3.
    # An ascending sort (pyCANON) gives A: 1 / 2 -> 1, B: 1 / 5 -> 1, i.e. c = 1.
    assert recursive_c_l_diversity(table, ["zip"], ["disease"]) == (3.0, 2)


def test_recursive_c_l_for_a_given_l(table: pd.DataFrame) -> None:
    # l = 3: A has only 2 distinct values -> no c works
    assert recursive_c_l_diversity(table, ["zip"], ["disease"], l=3) == (math.inf, 3)
    only_b = table[table["zip"] == 2]
    # B (4, 1, 1), l = 3: r1 / r3 = 4 -> c = 5
    assert recursive_c_l_diversity(only_b, ["zip"], ["disease"], l=3) == (5.0, 3)
    with pytest.raises(ParameterError, match="l must be"):
        recursive_c_l_diversity(table, ["zip"], ["disease"], l=1)


def test_recursive_c_l_undefined_when_l_is_one() -> None:
    df = pd.DataFrame({"zip": [1, 1, 2], "disease": ["x", "y", "x"]})
    c, l_div = recursive_c_l_diversity(df, ["zip"], ["disease"])
    assert math.isnan(c)
    assert l_div == 1
    with pytest.warns(UserWarning, match="cannot be computed"):
        recursive_c_l_diversity(df, ["zip"], ["disease"], imp=True)


def test_alpha_k_anonymity(table: pd.DataFrame) -> None:
    # alpha: A max share 2/3, B max share 4/6 = 2/3 -> alpha = 2/3; k = 3
    alpha, k = alpha_k_anonymity(table, ["zip"], ["disease"])
    assert alpha == pytest.approx(2 / 3)
    assert k == 3


def test_t_closeness_equal_distance(table: pd.DataFrame) -> None:
    # A: Q = (2/3, 1/3, 0), P = (3/9, 2/9, 4/9)
    #    0.5 * (|6/9 - 3/9| + |3/9 - 2/9| + |0 - 4/9|) = 0.5 * 8/9 = 4/9
    # B: Q = (1/6, 1/6, 4/6) = (1.5/9, 1.5/9, 6/9)
    #    0.5 * (1.5/9 + 0.5/9 + 2/9) = 2/9
    assert t_closeness(table, ["zip"], ["disease"]) == pytest.approx(4 / 9)


def test_t_closeness_ordered_distance(table: pd.DataFrame) -> None:
    # Sensitive "age" (numeric), values 30 < 40 < 50, m = 3, P = (3/9, 2/9, 4/9)
    # A: Q = (2/3, 1/3, 0); cumulative Q - P: 6/9 - 3/9 = 3/9, 9/9 - 5/9 = 4/9, 0
    #    EMD = (3/9 + 4/9) / 2 = 7/18
    # B: Q = (1/6, 1/6, 4/6); cumulative: 1.5/9 - 3/9 = -1.5/9, 3/9 - 5/9 = -2/9, 0
    #    EMD = (1.5/9 + 2/9) / 2 = 3.5/18
    assert t_closeness(table, ["zip"], ["age"]) == pytest.approx(7 / 18)


def test_t_closeness_single_value_is_zero() -> None:
    df = pd.DataFrame({"zip": [1, 2], "age": [5, 5]})
    assert t_closeness(df, ["zip"], ["age"]) == 0.0


def test_delta_disclosure(table: pd.DataFrame) -> None:
    # A: ln((2/3)/(3/9)) = ln 2, ln((1/3)/(2/9)) = ln 1.5 (z absent: skipped, as in ARX)
    # B: ln((1/6)/(3/9)) = ln 0.5, ln((1/6)/(2/9)) = ln 0.75, ln((4/6)/(4/9)) = ln 1.5
    # max |.| = ln 2
    assert delta_disclosure(table, ["zip"], ["disease"]) == pytest.approx(math.log(2))


def test_basic_beta_likeness(table: pd.DataFrame) -> None:
    # Gains (Q - P) / P where Q > P:
    # A: x (6/9 - 3/9) / (3/9) = 1, y (3/9 - 2/9) / (2/9) = 0.5; B: z (6/9 - 4/9)/(4/9) = 0.5
    assert basic_beta_likeness(table, ["zip"], ["disease"]) == pytest.approx(1.0)


def test_enhanced_beta_likeness(table: pd.DataFrame) -> None:
    # A: gain of x is 1 <= -ln(3/9) = 1.0986;
    #    y: 0.5 <= -ln(2/9) = 1.504; B: z: 0.5 <= -ln(4/9) = 0.811 -> beta = basic = 1
    assert enhanced_beta_likeness(table, ["zip"], ["disease"]) == pytest.approx(1.0)
    # A class holding only the frequent value v (P(v) = 3/4): gain 1/3 > -ln(3/4) = 0.288,
    # so no beta satisfies enhanced beta-likeness.
    df = pd.DataFrame({"zip": [1, 1, 2, 2], "s": ["v", "v", "v", "w"]})
    assert basic_beta_likeness(df, ["zip"], ["s"]) == pytest.approx(1.0)  # w: (1/2 - 1/4)/(1/4)
    assert enhanced_beta_likeness(df, ["zip"], ["s"]) == math.inf


def test_uniform_classes_reach_the_strongest_levels() -> None:
    # Every class has the table's distribution: t = delta = beta = 0, alpha = 1/2
    df = pd.DataFrame({"zip": [1, 1, 2, 2], "s": ["a", "b", "a", "b"]})
    assert t_closeness(df, ["zip"], ["s"]) == 0.0
    assert delta_disclosure(df, ["zip"], ["s"]) == 0.0
    assert basic_beta_likeness(df, ["zip"], ["s"]) == 0.0
    assert enhanced_beta_likeness(df, ["zip"], ["s"]) == 0.0
    assert alpha_k_anonymity(df, ["zip"], ["s"]) == (0.5, 2)
    assert entropy_l_diversity(df, ["zip"], ["s"]) == pytest.approx(2.0)


# ----------------------------------------------------------- several sensitive attributes


def test_several_sensitive_attributes_give_the_weakest_level(table: pd.DataFrame) -> None:
    table = table.assign(flag=["a", "b", "c", "a", "a", "a", "a", "a", "a"])
    # flag: A has 3 distinct values, B has 1 -> l = min(2, 1) = 1
    assert l_diversity(table, ["zip"], ["disease", "flag"]) == 1
    # flag in B: share 1 -> alpha = max(2/3, 1) = 1
    assert alpha_k_anonymity(table, ["zip"], ["disease", "flag"])[0] == 1.0
    assert t_closeness(table, ["zip"], ["disease", "flag"]) >= t_closeness(
        table, ["zip"], ["disease"]
    )


def test_gen_false_adds_the_other_sensitive_attributes_to_the_qis() -> None:
    df = pd.DataFrame({"zip": [1, 1, 1, 1], "s1": ["a", "a", "b", "b"], "s2": ["x", "y", "x", "y"]})
    # gen=True: one class with 2 values of each -> l = 2
    assert l_diversity(df, ["zip"], ["s1", "s2"]) == 2
    # gen=False: s1 against classes (zip, s2): {a, b} each -> 2; symmetric for s2 -> 2
    assert l_diversity(df, ["zip"], ["s1", "s2"], gen=False) == 2
    df2 = df.assign(s2=["x", "x", "y", "y"])
    # s1 against (zip, s2): class x holds {a}, class y {b} -> l = 1
    assert l_diversity(df2, ["zip"], ["s1", "s2"], gen=False) == 1
    assert l_diversity(df2, ["zip"], ["s1", "s2"], gen=True) == 2


# ------------------------------------------------------------- index and missing values


def _all_levels(df: pd.DataFrame) -> list[float]:
    qi, sa = ["zip"], ["disease"]
    return [
        k_anonymity(df, qi),
        l_diversity(df, qi, sa),
        entropy_l_diversity(df, qi, sa),
        *recursive_c_l_diversity(df, qi, sa),
        *alpha_k_anonymity(df, qi, sa),
        t_closeness(df, qi, sa),
        t_closeness(df, qi, ["age"]),
        delta_disclosure(df, qi, sa),
        basic_beta_likeness(df, qi, sa),
        enhanced_beta_likeness(df, qi, sa),
    ]


@pytest.mark.parametrize(
    "index",
    [
        pd.RangeIndex(100, 109),  # non-default
        pd.Index([8, 3, 5, 0, 7, 1, 6, 2, 4]),  # permuted positions
        pd.Index([0, 0, 1, 1, 1, 2, 2, 2, 2]),  # duplicated labels
        pd.Index(list("abcdefghi")),  # string labels
    ],
)
def test_results_do_not_depend_on_the_index(table: pd.DataFrame, index: pd.Index) -> None:
    expected = _all_levels(table)
    assert _all_levels(table.set_axis(index)) == pytest.approx(expected)


def test_results_do_not_depend_on_row_order(table: pd.DataFrame) -> None:
    shuffled = table.sample(frac=1.0, random_state=3)
    assert _all_levels(shuffled) == pytest.approx(_all_levels(table))


def test_missing_qi_values_form_their_own_class() -> None:
    df = pd.DataFrame({"zip": [1.0, 1.0, np.nan], "city": ["a", "a", None], "s": ["x", "y", "x"]})
    # Records with a missing QI are kept and grouped together: classes {0, 1} and {2}
    assert k_anonymity(df, ["zip"]) == 1
    assert k_anonymity(df, ["zip", "city"]) == 1
    assert equivalence_classes(df, ["zip", "city"]).tolist() == [0, 0, 1]
    assert l_diversity(df, ["zip"], ["s"]) == 1  # the missing class has one value
    two_missing = pd.DataFrame({"zip": [np.nan, np.nan, 1.0, 1.0], "s": ["x", "y", "x", "y"]})
    assert k_anonymity(two_missing, ["zip"]) == 2
    assert l_diversity(two_missing, ["zip"], ["s"]) == 2


def test_equivalence_classes_are_positional() -> None:
    df = pd.DataFrame({"a": [1, 2, 1, 2], "b": ["x", "x", "x", "y"]}, index=[9, 9, 9, 9])
    codes = equivalence_classes(df, ["a", "b"])
    assert codes.tolist() == [0, 1, 0, 2]
    assert equivalence_classes(df, "a").tolist() == [0, 1, 0, 1]


def test_input_is_not_modified(table: pd.DataFrame) -> None:
    before = table.copy(deep=True)
    _all_levels(table)
    pd.testing.assert_frame_equal(table, before)


# ------------------------------------------------------------------------ error paths


def test_unknown_column_raises_column_error(table: pd.DataFrame) -> None:
    with pytest.raises(ColumnError, match="nope"):
        k_anonymity(table, ["zip", "nope"])
    with pytest.raises(ColumnError, match="nope"):
        l_diversity(table, ["zip"], ["nope"])


def test_empty_frame_raises_parameter_error(table: pd.DataFrame) -> None:
    with pytest.raises(ParameterError, match="empty"):
        k_anonymity(table.iloc[:0], ["zip"])
    with pytest.raises(ParameterError, match="empty"):
        t_closeness(table.iloc[:0], ["zip"], ["disease"])


def test_empty_column_lists_raise_parameter_error(table: pd.DataFrame) -> None:
    with pytest.raises(ParameterError, match="quasi_ident"):
        k_anonymity(table, [])
    with pytest.raises(ParameterError, match="sens_att"):
        l_diversity(table, ["zip"], [])


@pytest.mark.parametrize(
    "check",
    [
        l_diversity,
        entropy_l_diversity,
        recursive_c_l_diversity,
        alpha_k_anonymity,
        t_closeness,
        delta_disclosure,
        basic_beta_likeness,
        enhanced_beta_likeness,
    ],
)
def test_sensitive_attribute_among_qis_raises(table: pd.DataFrame, check: object) -> None:
    assert callable(check)
    with pytest.raises(ParameterError, match="disease"):
        check(table, ["zip", "disease"], ["disease"])


def test_numeric_sensitive_attribute_with_missing_values_raises(table: pd.DataFrame) -> None:
    table.loc[0, "age"] = np.nan
    with pytest.raises(MissingValueError, match="age"):
        t_closeness(table, ["zip"], ["age"])


# ------------------------------------------------------------------ anonymized data sets


@pytest.mark.parametrize("k", [3, 10, 20])
def test_adult_anonymized_k(k: int) -> None:
    df = _read(f"anonymized/adult_anonymized_{k}.csv.gz")
    assert k_anonymity(df, ADULT_QI) == k


def test_adult_k10_l2() -> None:
    df = _read("anonymized/adult_k10_anonymized_l2.csv.gz")
    sa = ["salary-class"]
    assert k_anonymity(df, ADULT_QI) >= 10
    assert l_diversity(df, ADULT_QI, sa) == 2
    # Two salary classes: entropy l lies in [1, 2]; alpha < 1 as every class holds both
    assert 1.0 < entropy_l_diversity(df, ADULT_QI, sa) < 2.0
    alpha, k = alpha_k_anonymity(df, ADULT_QI, sa)
    assert 0.5 <= alpha < 1.0
    assert k == k_anonymity(df, ADULT_QI)
    # With 2 values, r1 / r2 = alpha / (1 - alpha) in the worst class
    c, l_div = recursive_c_l_diversity(df, ADULT_QI, sa)
    assert l_div == 2
    assert c == math.floor(alpha / (1 - alpha) + 1e-9) + 1


def test_students_k5() -> None:
    df = _read("students/StudentsMath_Score_k5.csv")
    assert k_anonymity(df, STUDENT_QI) == 5
    # Reference values computed with pyCANON 1.3.6 on the same table and QIs, where it
    # agrees with the definitions (default index, no missing values).
    assert l_diversity(df, STUDENT_QI, ["Score"]) == 4
    assert alpha_k_anonymity(df, STUDENT_QI, ["Score"]) == (0.5, 5)
    assert t_closeness(df, STUDENT_QI, ["Score"]) == pytest.approx(0.31023287057769827)
    assert delta_disclosure(df, STUDENT_QI, ["Score"]) == pytest.approx(3.427514689979529)
    assert basic_beta_likeness(df, STUDENT_QI, ["Score"]) == pytest.approx(29.8)
    # pyCANON truncates this to 3
    assert entropy_l_diversity(df, STUDENT_QI, ["Score"]) == pytest.approx(3.464101615137754)
