"""``veil pif`` end to end on small files: table, JSON, bins, the figure, errors."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from veil.risk import assess_pif

from .conftest import Veil


@pytest.fixture
def table() -> pd.DataFrame:
    rng = np.random.default_rng(11)
    n = 120
    return pd.DataFrame(
        {
            "sex": rng.choice(["F", "M"], n),
            "code": rng.integers(1, 4, n),
            "bmi": rng.normal(27.0, 4.0, n).round(1),
        }
    )


@pytest.fixture
def table_csv(tmp_path: Path, table: pd.DataFrame) -> Path:
    path = tmp_path / "people.csv"
    table.to_csv(path, index=False)
    return path


def test_pif_prints_the_measures_and_json_matches_the_library(
    veil: Veil, table_csv: Path, table: pd.DataFrame
) -> None:
    shown = veil("pif", table_csv, "--bins", "bmi:q4")
    assert shown.code == 0, shown.err
    assert "PIF_A (mean CSF)" in shown.out and "PIF_95" in shown.out
    assert "quantile bins of 'bmi' are computed from the records" in shown.err

    result = veil("pif", table_csv, "--bins", "bmi:15,25,30,60", "--percentile", "50", "--json")
    assert result.code == 0, result.err
    data = json.loads(result.out)
    expected = assess_pif(table, bins={"bmi": [15, 25, 30, 60]})
    assert data["pif_a"] == pytest.approx(expected.pif_a.to_dict())
    assert data["pif_n"] == {"percentile": 50.0, "bits": pytest.approx(expected.pif_n(50))}
    assert data["bins"][2] == {
        "column": "bmi",
        "kind": "public",
        "edges": [15.0, 25.0, 30.0, 60.0],
        "from_data": False,
        "n_categories": expected.bins[2].n_categories,
        "n_missing": 0,
    }
    assert data["plot"] is None


def test_columns_and_default_bins(veil: Veil, table_csv: Path, table: pd.DataFrame) -> None:
    result = veil("pif", table_csv, "--columns", "sex,bmi", "--default-bins", "exact", "--json")
    assert result.code == 0, result.err
    data = json.loads(result.out)
    assert data["columns"] == ["sex", "bmi"]
    expected = assess_pif(table, ["sex", "bmi"], default_bins="exact")
    assert data["max_csf"] == pytest.approx(expected.summary()["max_csf"].to_dict())


def test_plot_writes_the_figure_and_nothing_else(
    veil: Veil, table_csv: Path, tmp_path: Path
) -> None:
    target = tmp_path / "pif.png"
    result = veil("pif", table_csv, "--bins", "bmi:q3", "--plot", target, "--highlight", "sex,code")
    assert result.code == 0, result.err
    assert target.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["people.csv", "pif.png"]


def test_missing_values_are_assessed(veil: Veil, tmp_path: Path) -> None:
    path = tmp_path / "gaps.csv"
    path.write_text("a,b\n1,x\n,x\n1,y\n,y\n", encoding="utf-8")
    result = veil("pif", path, "--json")
    assert result.code == 0, result.err
    data = json.loads(result.out)
    assert data["pif_a"]["a"] == 0.0  # each b holds one 1 and one missing, as the marginal
    assert data["bins"][0]["n_missing"] == 2


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ([], "column 'bmi' holds non-integer numbers"),
        (["--bins", "bmi:0,20"], "values fall outside the edges"),
        (["--bins", "bmi:q1"], "--bins: 'q1': quantile bins are qN with N >= 2"),
        (["--bins", "bmi:1,x"], "--bins: 'x' is not a number"),
        (["--bins", "bmi"], "--bins: expected COLUMN:exact"),
        (["--bins", "bmi:exact", "--bins", "bmi:q3"], "binned twice"),
        (["--bins", "zz:q3"], "--bins: 'zz' not in people.csv"),
        (["--columns", "sex,zz"], "--columns: 'zz' not in people.csv"),
        (["--columns", "sex", "--bins", "bmi:q3"], "are not among the assessed columns"),
        (["--default-bins", "exact", "--percentile", "101"], "--percentile: must be a number"),
        (["--default-bins", "exact", "--plot", "out.jpg"], "--plot: must end in .png"),
        (["--default-bins", "exact", "--highlight", "sex"], "--highlight: only applies"),
        (["--default-bins", "q0"], "--default-bins: 'q0'"),
    ],
)
def test_errors_are_one_line_and_exit_2(
    veil: Veil, table_csv: Path, args: list[str], message: str
) -> None:
    result = veil("pif", table_csv, *args)
    assert result.code == 2
    assert message in result.err
    assert result.err.startswith("veil: error:") and result.err.count("\n") == 1
    assert result.out == ""


def test_the_plot_may_not_replace_the_input(veil: Veil, table_csv: Path) -> None:
    before = table_csv.read_bytes()
    result = veil(
        "pif", table_csv, "--default-bins", "exact", "--plot", table_csv.with_suffix(".png")
    )
    assert result.code == 0
    bad = veil(
        "pif", table_csv, "--default-bins", "exact", "--plot", table_csv.parent / "no" / "x.png"
    )
    assert bad.code == 2 and "does not exist" in bad.err
    assert table_csv.read_bytes() == before


def test_pif_is_listed_and_has_help(veil: Veil) -> None:
    assert "pif" in veil("--help").out
    result = veil("pif", "--help")
    assert result.code == 0 and result.err == ""
    text = " ".join(result.out.split())
    assert "Usage: veil pif" in text and "--bins" in text and "no privacy guarantee" in text
