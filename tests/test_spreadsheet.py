"""Formula escaping of CSV cells (OWASP's rule)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from veil.spreadsheet import FORMULA_PREFIXES, escape_formulas


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
    assert out["s"].iloc[0] == "'-3"
    assert counts == {"s": 1}


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
