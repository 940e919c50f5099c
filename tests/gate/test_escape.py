"""Formula escaping of CSV cells and column names (OWASP's rule), in the release gate."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from veil.gate import FORMULA_PREFIXES, HEADER, escape_formulas


@pytest.mark.parametrize("prefix", FORMULA_PREFIXES)
def test_every_formula_prefix_is_escaped(prefix: str) -> None:
    frame = pd.DataFrame({"note": [f'{prefix}HYPERLINK("x")', "plain"]})
    out, counts = escape_formulas(frame)
    assert out["note"].iloc[0] == "'" + frame["note"].iloc[0]
    assert out["note"].iloc[1] == "plain"
    assert counts == {"note": 1}


def test_numbers_and_missing_cells_are_left_alone() -> None:
    frame = pd.DataFrame(
        {
            "n": [-5, 3],
            "f": [-1.5, np.nan],
            "mixed": pd.Series([-7, None], dtype=object),
            "s": pd.Series(["-3", None], dtype="string"),
        }
    )
    out, counts = escape_formulas(frame)
    assert out["n"].tolist() == [-5, 3]
    assert out["mixed"].iloc[0] == -7
    # Text that is only a signed number is a number to a spreadsheet, not a formula.
    assert out["s"].iloc[0] == "-3"
    assert counts == {}


def test_categorical_text_is_escaped_and_input_untouched() -> None:
    frame = pd.DataFrame({"c": pd.Categorical(["=cmd|' /C calc'!A0", "b", "b"])})
    before = frame.copy()
    out, counts = escape_formulas(frame)
    assert out["c"].iloc[0].startswith("'=")
    assert counts == {"c": 1}
    pd.testing.assert_frame_equal(frame, before)


def test_a_clean_frame_comes_back_as_is() -> None:
    frame = pd.DataFrame({"a": ["x", "y"]})
    out, counts = escape_formulas(frame)
    assert out is frame and counts == {}


def test_column_names_that_start_like_formulas_are_escaped() -> None:
    frame = pd.DataFrame({'=HYPERLINK("http://x","y")': [1], "-5": [2], "age": ["@x"]})
    out, counts = escape_formulas(frame)
    assert list(out.columns) == ['\'=HYPERLINK("http://x","y")', "-5", "age"]
    assert out["age"].tolist() == ["'@x"]
    assert counts == {"age": 1, HEADER: 1}
    assert str(frame.columns[0]).startswith("=")  # the caller's frame is not renamed
