"""``veil risk`` end to end on small files."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pandas as pd
import pytest

from .._data import DATA
from .conftest import Veil


def test_risk_prints_a_table_and_reads_parquet_as_json(
    veil: Veil, adult_csv: Path, adult_frame: pd.DataFrame, tmp_path: Path
) -> None:
    table = veil("risk", adult_csv, "--qi", "age,sex,race")
    assert table.code == 0
    assert "prosecutor_highest" in table.out and "sample_uniques" in table.out

    parquet = tmp_path / "adult.parquet"
    adult_frame.to_parquet(parquet)
    result = veil("risk", parquet, "--qi", "age,sex", "--sampling-fraction", "0.01", "--json")
    assert result.code == 0
    data = json.loads(result.out)
    assert data["quasi_identifiers"] == ["age", "sex"]
    assert data["n_records"] == 600
    assert 0 <= data["population_uniqueness"] <= 1
    assert data["journalist_highest"] is not None


def test_risk_fail_above_is_a_failed_check(veil: Veil, adult_csv: Path) -> None:
    result = veil("risk", adult_csv, "--qi", "age,sex,race", "--fail-above", "0.5", "--json")
    assert result.code == 1
    assert json.loads(result.out)["passed"] is False
    assert "exceeds 0.5" in result.err
    assert veil("risk", adult_csv, "--qi", "sex", "--fail-above", "0.5").code == 0


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["missing.csv", "--qi", "age"], "DATA: 'missing.csv' does not exist"),
        (["table.xlsx", "--qi", "age"], "cannot tell the format of 'table.xlsx'"),
        (["ADULT", "--qi", "age,zip"], "--qi: 'zip' not in adult.csv"),
        (["ADULT", "--qi", "age,,sex"], "--qi: expected comma-separated names"),
        (["ADULT", "--qi", "age", "--threshold", "2"], "threshold"),
    ],
)
def test_risk_errors_are_one_line_and_exit_2(
    veil: Veil, adult_csv: Path, args: list[str], message: str
) -> None:
    result = veil("risk", *[str(adult_csv) if a == "ADULT" else a for a in args])
    assert result.code == 2
    assert result.err.startswith("veil: error: ")
    assert message in result.err
    assert len(result.err.strip().splitlines()) == 1


@pytest.fixture
def stroke_csv(tmp_path: Path) -> Path:
    """The stroke registry as a custodian has it: a plain CSV file."""
    path = tmp_path / "stroke.csv"
    path.write_bytes(gzip.decompress((DATA / "stroke" / "stroke.csv.gz").read_bytes()))
    return path


def test_risk_without_qi_suggests_them_and_says_so(veil: Veil, stroke_csv: Path) -> None:
    result = veil("risk", stroke_csv, "--json")
    assert result.code == 0, result.err
    data = json.loads(result.out)
    assert data["suggested"] is True
    assert data["quasi_identifiers"] == [
        "gender", "age", "ever_married", "work_type", "Residence_type"
    ]  # fmt: skip
    assert "no --qi given: using the suggested quasi-identifiers gender, age" in result.err
    given = veil("risk", stroke_csv, "--qi", "gender,age", "--json")
    assert json.loads(given.out)["suggested"] is False and "suggested" not in given.err


def test_risk_without_qi_and_nothing_to_suggest_names_the_option(
    veil: Veil, tmp_path: Path
) -> None:
    table = tmp_path / "readings.csv"
    pd.DataFrame({"reading": [1.5, 2.5, 3.5] * 10, "flag": [0, 1, 1] * 10}).to_csv(table)
    result = veil("risk", table)
    assert result.code == 2
    assert "--qi: not given, and no column of readings.csv looks like a quasi-identifier" in (
        result.err
    )


def test_risk_scan_shows_combinations_the_records_behind_them_and_identifiers(
    veil: Veil, stroke_csv: Path
) -> None:
    from veil.risk import qi_scan, record_risk

    stroke = pd.read_csv(stroke_csv)
    qis = ["gender", "age", "ever_married", "work_type", "Residence_type"]
    table = veil("risk", stroke_csv, "--scan")
    assert table.code == 0, table.err
    assert "Riskiest quasi-identifier combinations of stroke.csv" in table.out
    assert "Direct identifiers and free text with personal data" in table.out
    assert "written nowhere" in table.out
    data = json.loads(veil("risk", stroke_csv, "--scan", "--json").out)["scan"]
    expected = qi_scan(stroke, qis, max_size=3)
    top = data["combinations"][0]
    assert top["unique_rate"] == pytest.approx(expected["unique_rate"].max())
    assert len(data["combinations"]) == len(expected) and data["complete"] is True
    # The records that drive the risk: every class of 1 or 2 of the riskiest combination.
    combo = data["drivers"]["combination"]
    assert " + ".join(combo) == top["combination"]
    sizes = 1 / record_risk(stroke, combo)
    assert data["drivers"]["alone"] == int((sizes == 1).sum())
    assert data["drivers"]["in_pairs"] == int((sizes == 2).sum())
    assert sum(c["records"] for c in data["drivers"]["classes"]) == int((sizes <= 2).sum())
    # The id column is a direct identifier.
    assert [f["column"] for f in data["flagged"]] == ["id"]
    assert data["flagged"][0]["kind"] == "identifier"


def test_risk_scan_flags_free_text_with_personal_data(veil: Veil, tmp_path: Path) -> None:
    notes = [f"call 212-555-01{i % 10:02d} or write to p{i % 10}@example.org" for i in range(60)]
    table = tmp_path / "students.csv"
    frame = pd.DataFrame(
        {"Student": [f"S{i:04d}" for i in range(60)], "age": [17, 18, 19] * 20, "note": notes}
    )
    frame.to_csv(table, index=False)
    data = json.loads(veil("risk", table, "--qi", "age", "--scan", "--json").out)
    flagged = {f["column"]: f["kind"] for f in data["scan"]["flagged"]}
    assert flagged == {"Student": "identifier", "note": "free-text"}


def test_risk_scan_options_are_checked(veil: Veil, stroke_csv: Path) -> None:
    result = veil("risk", stroke_csv, "--scan", "--scan-size", "0")
    assert result.code == 2 and "--scan-size: must be an integer >= 1, got 0" in result.err
    result = veil("risk", stroke_csv, "--scan", "--time-limit", "0")
    assert result.code == 2 and "--time-limit: must be a positive number" in result.err


def test_a_bad_csv_is_named(veil: Veil, tmp_path: Path) -> None:
    bad = tmp_path / "bad.csv"
    bad.write_bytes(b"a,b\n1,2\n\xff\xfe,3,4,5\n")
    result = veil("risk", bad, "--qi", "a")
    assert result.code == 2
    # A malformed row of invalid UTF-8: pandas 3's parser stops on the row, pandas 2's
    # on the bytes; either way the error names DATA and the file, in one line.
    assert result.err.count("\n") == 1
    assert f"DATA: '{bad}' is not a readable CSV file" in result.err or (
        f"DATA: '{bad}' is not valid utf-8 text" in result.err and "--encoding" in result.err
    )
