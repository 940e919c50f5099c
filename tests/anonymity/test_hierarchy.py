"""Generalization hierarchies: loading both Adult formats, validation, builders, encoding."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from veil.anonymity.hierarchy import Hierarchy
from veil.errors import DataTypeError, DomainError, ParameterError

from .._data import DATA

ANJANA = DATA / "adult" / "hierarchies"
ARX = DATA / "arx_adult"
ANJANA_FILES = sorted(ANJANA.glob("*.csv"))
ARX_FILES = sorted(ARX.glob("adult_hierarchy_*.csv"))


def test_vendored_data_is_present() -> None:
    # tests/data is part of the repository: a missing file is a failure, not a skip.
    assert len(ANJANA_FILES) == 9, ANJANA
    assert len(ARX_FILES) == 9, ARX


@pytest.mark.parametrize(
    "path", ANJANA_FILES + ARX_FILES, ids=lambda p: f"{p.parent.name}/{p.name}"
)
def test_every_adult_hierarchy_loads_and_validates(path: Path) -> None:
    h = Hierarchy.from_csv(path)
    h.validate()
    sep = ";" if path.parent == ARX else ","
    raw = pd.read_csv(path, sep=sep, header=None, dtype=str, keep_default_na=False)
    assert h.levels == raw.shape[1] >= 2
    assert h.values.tolist() == raw[0].str.strip().tolist()
    assert h.labels(h.levels - 1).tolist() == ["*"]
    # Same result with the separator given explicitly.
    assert h.table.equals(Hierarchy.from_csv(path, sep=sep).table)


def test_arx_age_hierarchy_has_expected_height() -> None:
    h = Hierarchy.from_csv(ARX / "adult_hierarchy_age.csv")
    assert h.levels == 5
    assert [len(h.labels(level)) for level in range(h.levels)] == [100, 20, 10, 5, 1]
    assert h.table.iloc[0].tolist() == ["1", "0-4", "0-9", "0-19", "*"]


def test_anjana_age_hierarchy_keeps_quoted_commas() -> None:
    h = Hierarchy.from_csv(ANJANA / "age.csv")
    assert h.levels == 7
    assert h.table.iloc[0].tolist()[:3] == ["17", "[15, 20[", "[10, 20["]


def test_sniffing_both_separators_and_whitespace(tmp_path: Path) -> None:
    comma = tmp_path / "comma.csv"
    comma.write_text('a , "x; y" ,*\nb, "x; y",*\n\nc,z ,*\n')
    semi = tmp_path / "semi.csv"
    semi.write_text("a;x,y;*\nb;x,y;*\nc;z;*\n")
    h_comma = Hierarchy.from_csv(comma)
    h_semi = Hierarchy.from_csv(semi)
    assert h_comma.labels(1).tolist() == ["x; y", "z"]
    assert h_semi.labels(1).tolist() == ["x,y", "z"]
    assert h_comma.values.tolist() == h_semi.values.tolist() == ["a", "b", "c"]
    assert Hierarchy.from_csv(str(semi), sep=";").levels == 3


def test_from_csv_errors(tmp_path: Path) -> None:
    empty = tmp_path / "empty.csv"
    empty.write_text("\n\n")
    with pytest.raises(ParameterError, match="empty"):
        Hierarchy.from_csv(empty)
    ragged = tmp_path / "ragged.csv"
    ragged.write_text("a,x,*\nb,*\n")
    with pytest.raises(ParameterError, match="line 2"):
        Hierarchy.from_csv(ragged, sep=",")
    with pytest.raises(ParameterError, match="sep"):
        Hierarchy.from_csv(ragged, sep=",;")


@pytest.mark.parametrize("level", [0, 1, 3, 6])
def test_generalize_adult_age(adult: pd.DataFrame, level: int) -> None:
    h = Hierarchy.from_csv(ANJANA / "age.csv")
    before = adult["age"].copy()
    out = h.generalize(adult["age"], level)
    pd.testing.assert_series_equal(adult["age"], before)
    assert out.index.equals(adult.index)
    assert out.name == "age"
    lookup = dict(zip(h.table[0], h.table[level], strict=True))
    expected = adult["age"].map(lambda v: lookup[str(v)]).to_numpy(dtype=object)
    np.testing.assert_array_equal(out.to_numpy(dtype=object), expected)


def test_generalize_adult_age_known_values(adult: pd.DataFrame) -> None:
    h = Hierarchy.from_csv(ANJANA / "age.csv")
    ages = adult["age"].iloc[:3]  # 39, 50, 38
    assert h.generalize(ages, 0).tolist() == ["39", "50", "38"]
    assert h.generalize(ages, 1).tolist() == ["[35, 40[", "[50, 55[", "[35, 40["]
    assert set(h.generalize(adult["age"], h.levels - 1)) == {"*"}


def test_arx_hierarchies_cover_the_arx_adult_data() -> None:
    data = pd.read_csv(ARX / "adult.csv.gz", sep=";", dtype=str)
    for path in ARX_FILES:
        column = path.stem.removeprefix("adult_hierarchy_")
        Hierarchy.from_csv(path).validate(data[column].str.strip())


def test_codes_and_labels_agree_with_generalize(adult: pd.DataFrame) -> None:
    h = Hierarchy.from_csv(ARX / "adult_hierarchy_education.csv")
    column = adult["education"]
    level0 = h.encode(column)
    for level in range(h.levels):
        codes = h.codes(level)
        out = h.generalize(column, level)
        np.testing.assert_array_equal(h.labels(level)[codes][level0], out.to_numpy(dtype=object))
        np.testing.assert_array_equal(out.cat.codes.to_numpy(), codes[level0])
    np.testing.assert_array_equal(h.codes(0), np.arange(len(h.values)))


def test_uncovered_values_are_listed() -> None:
    h = Hierarchy.from_csv(ANJANA / "sex.csv")
    series = pd.Series(["Male", "Other", "Female", "Unknown", "Other"], name="sex")
    with pytest.raises(DomainError, match="'Other', 'Unknown'") as info:
        h.generalize(series, 1)
    assert "2 value(s)" in str(info.value)
    assert "'sex'" in str(info.value)
    with pytest.raises(DomainError, match="Unknown"):
        h.validate(series)


def test_uncovered_list_is_capped_at_twenty() -> None:
    h = Hierarchy.intervals(range(10), widths=(5,))
    with pytest.raises(DomainError, match=r"\(30 in all\)") as info:
        h.encode(pd.Series(range(100, 130)))
    assert "'129'" not in str(info.value)


def test_values_are_compared_as_strings() -> None:
    h = Hierarchy.from_mapping(["1", "2"], [{"1": "low", "2": "low"}])
    assert h.generalize(pd.Series([1, 2, 1]), 1).tolist() == ["low"] * 3
    with pytest.raises(DomainError, match="nan"):
        h.encode(pd.Series(["1", None]))


def test_encoding_is_the_same_whatever_the_dtype() -> None:
    # Object, Arrow and Python strings, categoricals and mixed objects read the same
    # labels: the codes of one column do not depend on how pandas stores it.
    h = Hierarchy.from_mapping(["1", "2", "x"], [{"1": "low", "2": "low", "x": "high"}])
    values = ["x", "1", "2", "1", "x"]
    expected = h.encode(pd.Series(values, dtype=object)).tolist()
    assert expected == [2, 0, 1, 0, 2]
    for dtype in ("string[pyarrow]", "string[python]", "category", "str"):
        assert h.encode(pd.Series(values, dtype=dtype)).tolist() == expected
    assert h.encode(pd.Series(["x", 1, 2, "1", "x"], dtype=object)).tolist() == expected
    for dtype in (object, "string[pyarrow]"):
        with pytest.raises(DomainError, match="'3'"):
            h.encode(pd.Series(["1", "3"], dtype=dtype))
        with pytest.raises(DomainError, match="1 value"):
            h.encode(pd.Series(["1", None], dtype=dtype))


def test_non_coarsening_hierarchy_is_refused_naming_the_level() -> None:
    table = pd.DataFrame(
        [
            ["a", "g1", "G1", "*"],
            ["b", "g1", "G2", "*"],
            ["c", "g2", "G2", "*"],
        ]
    )
    with pytest.raises(ParameterError, match=r"level 2 is not a coarsening of level 1.*'g1'"):
        Hierarchy.from_frame(table)


def test_other_structural_errors() -> None:
    with pytest.raises(ParameterError, match="last level"):
        Hierarchy.from_frame(pd.DataFrame([["a", "x"], ["b", "y"]]))
    with pytest.raises(ParameterError, match="duplicated: 'a'"):
        Hierarchy.from_frame(pd.DataFrame([["a", "*"], ["a", "*"]]))
    with pytest.raises(ParameterError, match="missing"):
        Hierarchy.from_frame(pd.DataFrame([["a", None], ["b", "*"]]))
    with pytest.raises(ParameterError, match="at least one row"):
        Hierarchy.from_frame(pd.DataFrame())
    with pytest.raises(DataTypeError):
        Hierarchy.from_frame([["a", "*"]])  # type: ignore[arg-type]


def test_level_out_of_range() -> None:
    h = Hierarchy.from_csv(ANJANA / "sex.csv")
    for bad in (2, -1):
        with pytest.raises(ParameterError, match=r"level must be in \[0, 1\]"):
            h.codes(bad)
    with pytest.raises(ParameterError, match="integer"):
        h.labels(1.0)  # type: ignore[arg-type]


def test_hierarchy_is_immutable_and_input_frame_untouched() -> None:
    frame = pd.DataFrame([["a", "x", "*"], ["b", "x", "*"]])
    before = frame.copy()
    h = Hierarchy.from_frame(frame)
    pd.testing.assert_frame_equal(frame, before)
    with pytest.raises(AttributeError):
        h._table = frame  # type: ignore[misc]
    with pytest.raises(ValueError, match="read-only"):
        h.codes(1)[0] = 5
    with pytest.raises(ValueError, match="read-only"):
        h.values[0] = "z"
    copy = h.table
    copy.iloc[0, 0] = "changed"
    assert h.values.tolist() == ["a", "b"]


def test_masking_zip_example() -> None:
    h = Hierarchy.masking(["65213", "65219", "65301"], steps=2)
    h.validate()
    assert h.table.iloc[0].tolist() == ["65213", "6521*", "652**", "*"]
    assert h.labels(2).tolist() == ["652**", "653**"]


def test_masking_default_masks_down_to_first_character() -> None:
    h = Hierarchy.masking([65213, 65301], mask_char="#")
    assert h.table.iloc[0].tolist() == ["65213", "6521#", "652##", "65###", "6####", "*"]
    with pytest.raises(ParameterError, match="steps"):
        Hierarchy.masking(["123"], steps=4)
    with pytest.raises(ParameterError, match="mask_char"):
        Hierarchy.masking(["123"], mask_char="**")


def test_intervals_labels_and_structure() -> None:
    h = Hierarchy.intervals(range(17, 91))
    h.validate(pd.Series(range(17, 91)))
    assert h.levels == 5
    row = h.table.set_index(0).loc["39"].tolist()
    assert row == ["[35, 40)", "[30, 40)", "[20, 40)", "*"]
    arx = Hierarchy.intervals(range(1, 101), widths=(5, 10, 20), labels="a-b")
    assert arx.table.iloc[0].tolist() == ["1", "0-4", "0-9", "0-19", "*"]
    anjana = Hierarchy.intervals(range(17, 91), widths=(5,), labels="[a, b[")
    assert anjana.labels(1)[0] == "[15, 20["


def test_intervals_with_bottom_and_top_coding() -> None:
    h = Hierarchy.intervals(range(17, 91), widths=(5, 10, 20), lower=20, upper=85)
    out = {level: h.generalize(pd.Series([17, 20, 39, 84, 90]), level).tolist() for level in (1, 3)}
    assert out[1] == ["<20", "[20, 25)", "[35, 40)", "[80, 85)", ">=85"]
    assert out[3] == ["<20", "[20, 40)", "[20, 40)", "[80, 85)", ">=85"]


def test_intervals_float_domain() -> None:
    h = Hierarchy.intervals([0.5, 1.25, 2.5], widths=(0.5, 1.0))
    assert h.labels(1).tolist() == ["[0.5, 1)", "[1, 1.5)", "[2.5, 3)"]
    assert h.values.tolist() == ["0.5", "1.25", "2.5"]


def test_intervals_parameter_errors() -> None:
    with pytest.raises(ParameterError, match="whole multiple"):
        Hierarchy.intervals(range(10), widths=(5, 7))
    with pytest.raises(ParameterError, match="positive"):
        Hierarchy.intervals(range(10), widths=(0, 5))
    with pytest.raises(ParameterError, match="lower must be below upper"):
        Hierarchy.intervals(range(10), lower=5, upper=5)
    with pytest.raises(ParameterError, match="labels"):
        Hierarchy.intervals(range(10), labels="{a}..{b}")
    with pytest.raises(ParameterError, match="integer"):
        Hierarchy.intervals([0.5], widths=(1,), labels="a-b")
    with pytest.raises(ParameterError, match="finite"):
        Hierarchy.intervals([1.0, float("nan")])
    with pytest.raises(DataTypeError):
        Hierarchy.intervals(["a", "b"])  # type: ignore[list-item]


def test_dates() -> None:
    h = Hierarchy.dates(["2024-03-15", "2024-03-16", "2024-04-01", "2023-12-31"])
    h.validate()
    assert h.table.iloc[0].tolist() == ["2024-03-15", "2024-03", "2024", "*"]
    assert h.labels(2).tolist() == ["2024", "2023"]
    with pytest.raises(ParameterError, match="ISO 8601"):
        Hierarchy.dates(["15/03/2024"])


def test_from_mapping() -> None:
    values = ["Married-civ-spouse", "Divorced", "Never-married", "Widowed"]
    level1 = {
        "Married-civ-spouse": "Spouse present",
        "Divorced": "Spouse not present",
        "Never-married": "Spouse not present",
        "Widowed": "Spouse not present",
    }
    h = Hierarchy.from_mapping(values, [level1])
    assert h.levels == 3
    assert h.labels(1).tolist() == ["Spouse present", "Spouse not present"]
    assert h.labels(2).tolist() == ["*"]
    two = Hierarchy.from_mapping(values, [level1, dict.fromkeys(level1.values(), "Any")])
    assert two.levels == 3
    assert two.labels(2).tolist() == ["Any"]
    with pytest.raises(ParameterError, match="'Widowed'"):
        Hierarchy.from_mapping(values, [{k: v for k, v in level1.items() if k != "Widowed"}])


def test_top_bottom_coding() -> None:
    h = Hierarchy.top_bottom_coding(range(15, 95), lower=18, upper=80)
    h.validate()
    assert h.generalize(pd.Series([16, 18, 79, 80, 94]), 1).tolist() == [
        "<18",
        "18",
        "79",
        ">=80",
        ">=80",
    ]
    assert Hierarchy.top_bottom_coding(range(10), None, 5).labels(1).tolist()[-1] == ">=5"
    with pytest.raises(ParameterError, match="neither"):
        Hierarchy.top_bottom_coding(range(10), None, None)


def test_builder_inputs_are_not_mutated() -> None:
    values = [17, 18, 19]
    mapping = [{"17": "young", "18": "young", "19": "young"}]
    Hierarchy.intervals(values, widths=(5,))
    Hierarchy.top_bottom_coding(values, 18, None)
    Hierarchy.from_mapping(values, mapping)
    assert values == [17, 18, 19]
    assert mapping == [{"17": "young", "18": "young", "19": "young"}]


def test_numbers_are_matched_as_numbers() -> None:
    # A column read with missing values is float; its hierarchy was written with integers.
    h = Hierarchy.from_mapping(["1", "2", "10"], [{"1": "low", "2": "low", "10": "high"}])
    released = h.generalize(pd.Series([1.0, 2.0, 10.0, 1.0], name="n"), 1)
    assert released.tolist() == ["low", "low", "high", "low"]
    # And the other way: labels written as 1.0 cover the integer 1.
    h = Hierarchy.from_mapping(["1.0", "2.5"], [{"1.0": "a", "2.5": "b"}])
    assert h.generalize(pd.Series([1, 1], name="n"), 1).tolist() == ["a", "a"]
    assert h.generalize(pd.Series([2.5], name="n"), 1).tolist() == ["b"]
    # A value that is not among the numbers is still refused, named as it is.
    with pytest.raises(DomainError, match=r"column 'n' holds 1 value\(s\).*'1.5'"):
        h.generalize(pd.Series([1.5], name="n"), 1)
    # Text is never read as a number: the code "01" is not the label "1".
    codes = Hierarchy.from_mapping(["1"], [{"1": "x"}])
    with pytest.raises(DomainError):
        codes.generalize(pd.Series(["01"], name="code"), 1)
