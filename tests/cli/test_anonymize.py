"""``veil anonymize`` end to end on small files."""

from __future__ import annotations

import json
from importlib import resources
from pathlib import Path

import pandas as pd
import pytest

from .conftest import Veil

HIERARCHIES = Path(str(resources.files("veil.release").joinpath("examples", "hierarchies")))


def _hierarchy(column: str) -> str:
    return f"{column}={HIERARCHIES / f'adult_{column}.csv'}"


def test_anonymize_writes_a_k_anonymous_table(veil: Veil, adult_csv: Path, tmp_path: Path) -> None:
    out = tmp_path / "anon.csv"
    result = veil(
        "anonymize",
        adult_csv,
        "--hierarchy",
        _hierarchy("education"),
        "--hierarchy",
        _hierarchy("marital-status"),
        "--hierarchy",
        _hierarchy("race"),
        "--k",
        "5",
        "--l",
        "salary-class:2",
        "--max-suppression",
        "0.05",
        "--drop-other",
        "--out",
        out,
        "--json",
    )
    assert result.code == 0, result.err
    data = json.loads(result.out)
    assert set(data["levels"]) == {"education", "marital-status", "race"}
    assert data["released_columns"] == ["education", "marital-status", "race", "salary-class"]
    assert data["optimal"] is True
    released = pd.read_csv(out)
    assert len(released) == data["rows_out"] == 600 - data["suppressed"]
    assert data["suppressed"] <= 0.05 * 600
    sizes = released.groupby(["education", "marital-status", "race"]).size()
    assert sizes.min() >= 5
    diversity = released.groupby(["education", "marital-status", "race"])["salary-class"].nunique()
    assert diversity.min() >= 2


def test_anonymize_without_solution_is_a_failed_check(
    veil: Veil, adult_csv: Path, tmp_path: Path
) -> None:
    out = tmp_path / "anon.csv"
    result = veil(
        "anonymize", adult_csv, "--hierarchy", _hierarchy("race"), "--k", "1000",
        "--drop-other", "--out", out,
    )  # fmt: skip
    assert result.code == 1
    assert "no generalization satisfies" in result.err
    assert not out.exists()


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--hierarchy", "race", "--k", "5"], "--hierarchy: expected COLUMN=FILE.csv"),
        (["--hierarchy", "race=nope.csv", "--k", "5"], "--hierarchy: file 'nope.csv'"),
        (["--hierarchy", "RACE"], "give at least one privacy model"),
        (["--hierarchy", "RACE", "--l", "salary-class"], "--l: expected ATTRIBUTE:L"),
        (["--hierarchy", "RACE", "--k", "5", "--metric", "best", "--drop-other"], "metric must"),
        (["--hierarchy", "RACE", "--hierarchy", "RACE", "--k", "5"], "'race' named more than"),
    ],
)
def test_anonymize_usage_errors(
    veil: Veil, adult_csv: Path, tmp_path: Path, args: list[str], message: str
) -> None:
    args = [_hierarchy("race") if a == "RACE" else a for a in args]
    result = veil("anonymize", adult_csv, *args, "--out", tmp_path / "x.csv")
    assert result.code == 2
    assert message in result.err


def test_outputs_never_replace_the_input_or_go_to_a_missing_folder(
    veil: Veil, adult_csv: Path, tmp_path: Path
) -> None:
    before = adult_csv.read_bytes()
    base = ["anonymize", adult_csv, "--hierarchy", _hierarchy("race"), "--k", "2", "--out"]
    result = veil(*base, adult_csv)
    assert result.code == 2 and "is an input file" in result.err
    assert adult_csv.read_bytes() == before
    result = veil(*base, tmp_path / "absent" / "x.csv")
    assert result.code == 2 and "does not exist" in result.err
