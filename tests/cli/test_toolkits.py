"""``veil risk``, ``anonymize``, ``ldp``, ``mask`` and ``geo`` end to end on small files."""

from __future__ import annotations

import gzip
import json
from importlib import resources
from pathlib import Path

import pandas as pd
import pytest

from veil.datasets import ADULT_DOMAINS

from .._data import DATA
from .conftest import Veil

HIERARCHIES = Path(str(resources.files("veil.release").joinpath("examples", "hierarchies")))


# ------------------------------------------------------------------------------- risk


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
    assert data["quasi_identifiers"] == ["gender", "age", "ever_married", "Residence_type"]
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
    qis = ["gender", "age", "ever_married", "Residence_type"]
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


# -------------------------------------------------------------------------- anonymize


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
        "--keep-other", "--out", out,
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


# ------------------------------------------------------------------------------- ldp


def test_ldp_laplace_reports_its_cost_and_stays_in_bounds(
    veil: Veil, adult_csv: Path, tmp_path: Path
) -> None:
    out = tmp_path / "age.csv"
    result = veil(
        "ldp", adult_csv, "--column", "age", "--mechanism", "laplace", "--epsilon", "1",
        "--bounds", "16,100", "--drop-other", "--out", out, "--json",
    )  # fmt: skip
    assert result.code == 0, result.err
    data = json.loads(result.out)
    assert data["total"]["epsilon"] == pytest.approx(1.0)
    assert data["costs"][0]["scope"] == "age" and data["costs"][0]["notion"] == "ldp"
    released = pd.read_csv(out)
    assert len(released) == 600
    assert released["age"].between(16, 100).all()


def test_ldp_categorical_with_a_declared_domain_and_a_seed(
    veil: Veil, adult_csv: Path, tmp_path: Path
) -> None:
    domain = ",".join(ADULT_DOMAINS["workclass"])
    args = ["ldp", adult_csv, "--column", "workclass", "--mechanism", "krr", "--epsilon", "2",
            "--domain", domain, "--missing", "keep", "--seed", "5", "--new-column",
            "--drop-other"]  # fmt: skip
    first = veil(*args, "--out", tmp_path / "a.csv")
    assert first.code == 0, first.err
    assert "ReproducibleNoiseWarning" in first.err
    assert "privacy per record: epsilon=2" in first.out
    second = veil(*args, "--out", tmp_path / "b.csv")
    a, b = pd.read_csv(tmp_path / "a.csv"), pd.read_csv(tmp_path / "b.csv")
    pd.testing.assert_frame_equal(a, b)
    assert set(a["dp_workclass"].dropna()) <= set(ADULT_DOMAINS["workclass"])
    assert second.code == 0


def test_ldp_gaussian_and_exponential(veil: Veil, adult_csv: Path, tmp_path: Path) -> None:
    gaussian = veil(
        "ldp", adult_csv, "--column", "hours-per-week", "--mechanism", "gaussian",
        "--epsilon", "2", "--bounds", "1,99", "--delta", "1e-6", "--calibration", "analytic",
        "--out", tmp_path / "g.csv", "--json", "--drop-other",
    )  # fmt: skip
    assert gaussian.code == 0, gaussian.err
    assert json.loads(gaussian.out)["total"]["delta"] == pytest.approx(1e-6)
    levels = ",".join(str(i) for i in range(1, 17))
    exponential = veil(
        "ldp", adult_csv, "--column", "education-num", "--mechanism", "exponential",
        "--epsilon", "2", "--domain", levels, "--ordinal", "--calibration", "full",
        "--out", tmp_path / "e.csv", "--keep-other",
    )  # fmt: skip
    assert exponential.code == 0, exponential.err
    assert pd.read_csv(tmp_path / "e.csv")["education-num"].between(1, 16).all()


def test_ldp_domain_from_data_warns_of_the_leak(
    veil: Veil, adult_csv: Path, tmp_path: Path
) -> None:
    result = veil(
        "ldp", adult_csv, "--column", "sex", "--mechanism", "binary-rr", "--epsilon", "1",
        "--domain-from-data", "--out", tmp_path / "s.csv", "--drop-other",
    )  # fmt: skip
    assert result.code == 0
    assert "veil: warning: PrivacyLeakWarning" in result.err


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--mechanism", "laplace", "--epsilon", "1"], "--bounds: required by --mechanism laplace"),
        (["--mechanism", "laplace", "--epsilon", "-1", "--bounds", "16,100"], "epsilon"),
        (["--mechanism", "laplace", "--epsilon", "1", "--bounds", "16"], "expected 2"),
        (["--mechanism", "krr", "--epsilon", "1"], "--domain: --mechanism krr needs"),
        (["--mechanism", "gaussian", "--epsilon", "1", "--bounds", "1,2"], "--delta: required"),
        (["--mechanism", "krr", "--epsilon", "1", "--domain", "1,2", "--bounds", "1,2"], "not for"),
        (["--mechanism", "dp", "--epsilon", "1"], "--mechanism"),
        (["--mechanism", "krr", "--epsilon", "1", "--domain", "1,2", "--ordinal"], "--ordinal"),
    ],
)
def test_ldp_usage_errors(
    veil: Veil, adult_csv: Path, tmp_path: Path, args: list[str], message: str
) -> None:
    result = veil(
        "ldp", adult_csv, "--column", "age", *args, "--drop-other", "--out", tmp_path / "x.csv"
    )
    assert result.code == 2
    assert message in result.err
    assert not (tmp_path / "x.csv").exists()


def test_ldp_values_outside_the_domain_are_refused(
    veil: Veil, adult_csv: Path, tmp_path: Path
) -> None:
    result = veil(
        "ldp", adult_csv, "--column", "sex", "--mechanism", "krr", "--epsilon", "1",
        "--domain", "Female,Other", "--out", tmp_path / "x.csv", "--drop-other",
    )  # fmt: skip
    assert result.code == 2
    assert "not in the declared domain" in result.err


# ------------------------------------------------------------------------------ mask


@pytest.fixture
def people(tmp_path: Path) -> Path:
    path = tmp_path / "people.csv"
    path.write_text(
        "name,email,ssn\n"
        "Ann Lee,ann@example.com,000123456\n"
        "Bob Roe,bob@example.org,987654321\n"
        "Ann Lee,ann@example.com,000123456\n"
    )
    return path


def test_mask_hmac_never_prints_the_key(
    veil: Veil, people: Path, key_hex: tuple[Path, str], tmp_path: Path
) -> None:
    key_file, key = key_hex
    out = tmp_path / "masked.csv"
    result = veil(
        "mask", people, "--column", "email", "--column", "name", "--method", "hmac",
        "--key-file", key_file, "--length", "16", "--out", out, "--json", "--keep-other",
    )  # fmt: skip
    assert result.code == 0, result.err
    data = json.loads(result.out)
    assert len(data["key_id"]) == 16
    masked = pd.read_csv(out, dtype=str).sort_values("ssn", kind="stable")
    assert masked["email"].str.len().eq(16).all()
    ann, bob = masked[masked["ssn"] == "000123456"], masked[masked["ssn"] == "987654321"]
    assert ann["email"].nunique() == 1 and ann["email"].iloc[0] != bob["email"].iloc[0]
    assert "ann@example.com" not in out.read_text()
    # Columns passed through are written back exactly as read.
    assert list(masked["ssn"]) == ["000123456", "000123456", "987654321"]
    for text in (result.out, result.err, out.read_text()):
        assert key not in text and key.upper() not in text


def test_mask_ff1_from_an_environment_variable(
    veil: Veil,
    people: Path,
    key_hex: tuple[Path, str],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    _, key = key_hex
    monkeypatch.setenv("VEIL_TEST_KEY", key)
    out = tmp_path / "ff1.csv"
    result = veil(
        "mask", people, "--column", "ssn", "--method", "ff1", "--key-env", "VEIL_TEST_KEY",
        "--out", out, "--keep-other",
    )  # fmt: skip
    assert result.code == 0, result.err
    assert key not in result.out + result.err
    masked = pd.read_csv(out, dtype=str)
    assert masked["ssn"].str.fullmatch(r"\d{9}").all()
    ann = masked.loc[masked["name"] == "Ann Lee", "ssn"]
    assert ann.nunique() == 1 and ann.iloc[0] != "000123456"


def test_mask_unkeyed_methods(veil: Veil, people: Path, tmp_path: Path) -> None:
    out = tmp_path / "m.csv"
    args = ["--out", out, "--drop-other", "--keep-order"]
    assert veil("mask", people, "--column", "email", "--method", "mask-email", *args).code == 0
    assert pd.read_csv(out)["email"].tolist()[:2] == ["a***@example.com", "b***@example.org"]
    assert veil("mask", people, "--column", "name", "--method", "redact", *args).code == 0
    assert set(pd.read_csv(out)["name"]) == {"[REDACTED]"}
    assert list(pd.read_csv(out).columns) == ["name"]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--method", "hmac"], "--method hmac needs exactly one of them"),
        (["--method", "hmac", "--key-env", "VEIL_UNSET_VARIABLE"], "named by --key-env"),
        (["--method", "hmac", "--key-file", "missing.key"], "'missing.key' does not exist"),
        (["--method", "hmac", "--key-file", "KEY", "--key-id", "0000"], "key_id: expected"),
        (["--method", "redact", "--key-file", "KEY"], "not for --method redact"),
        (["--method", "ff1", "--key-file", "KEY"], "outside the alphabet"),
    ],
)
def test_mask_key_errors_never_show_the_key(
    veil: Veil,
    people: Path,
    key_hex: tuple[Path, str],
    tmp_path: Path,
    args: list[str],
    message: str,
) -> None:
    key_file, key = key_hex
    args = [str(key_file) if a == "KEY" else a for a in args]
    result = veil(
        "mask", people, "--column", "email", *args, "--drop-other", "--out", tmp_path / "x.csv"
    )
    assert result.code == 2
    assert message in result.err
    assert key not in result.out + result.err
    assert not (tmp_path / "x.csv").exists()


@pytest.mark.parametrize("weak", ["passwd", "passwordpassword", "the-data", "zeros"])
def test_mask_refuses_a_weak_key_file_and_points_at_key_new(
    veil: Veil, people: Path, tmp_path: Path, weak: str
) -> None:
    # Issue 14 A9: /etc/passwd, a file holding "passwordpassword" and the data CSV
    # itself used to be taken as HMAC keys. Each is refused, nothing is written, and no
    # line of the file is printed.
    if weak == "passwd":
        key_file = Path("/etc/passwd")
        if not key_file.is_file():
            pytest.skip("no /etc/passwd on this system")
    else:
        key_file = tmp_path / "weak.key"
        key_file.write_bytes(
            {
                "passwordpassword": b"passwordpassword",
                "the-data": people.read_bytes(),
                "zeros": bytes(32),
            }[weak]
        )
        key_file.chmod(0o600)  # private, so that the content check is what refuses it
    out = tmp_path / "x.csv"
    result = veil("mask", people, "--column", "email", "--method", "hmac", "--key-file",
                  key_file, "--drop-other", "--out", out)  # fmt: skip
    assert result.code == 2
    assert result.err.startswith("veil: error: --key-file: ")
    assert "veil key new" in result.err or "group or others" in result.err
    assert not out.exists()
    for line in key_file.read_bytes().splitlines():
        if len(line) >= 8:
            assert line.decode("latin-1") not in result.out + result.err


# ------------------------------------------------------------------------------- geo


def test_geo_planar_laplace_with_a_map(veil: Veil, taxi_csv: Path, tmp_path: Path) -> None:
    out, map_file = tmp_path / "geo.csv", tmp_path / "map.html"
    result = veil(
        "geo", taxi_csv, "--lat", "pickup_latitude", "--lon", "pickup_longitude",
        "--mask", "planar-laplace", "--epsilon", "0.01", "--centre", "40.758,-73.9855",
        "--out", out, "--map", map_file, "--json", "--keep-other",
    )  # fmt: skip
    assert result.code == 0, result.err
    data = json.loads(result.out)
    assert data["costs"][0]["notion"] == "metric"
    assert data["costs"][0]["epsilon"] == pytest.approx(0.01)
    original, masked = pd.read_csv(taxi_csv), pd.read_csv(out)
    assert len(masked) == len(original)
    assert not masked["pickup_latitude"].isin(original["pickup_latitude"]).any()
    assert data["scale"]["metres"] == pytest.approx(167.83, abs=0.01)
    assert map_file.stat().st_size > 0


@pytest.mark.parametrize(
    "args",
    [
        ["--mask", "grid", "--cell-m", "250", "--min-count", "3"],
        ["--mask", "donut", "--r-min-m", "50", "--r-max-m", "200", "--seed", "1"],
        ["--mask", "jitter", "--radius-m", "100", "--kind", "gaussian", "--seed", "1"],
        ["--mask", "cloak", "--k", "5"],
        ["--mask", "cloak", "--k", "5", "--root-m=-30000,-30000,60000"],
    ],
)
def test_geo_masks_without_a_formal_guarantee(
    veil: Veil, taxi_csv: Path, tmp_path: Path, args: list[str]
) -> None:
    out = tmp_path / "geo.csv"
    result = veil(
        "geo", taxi_csv, "--lat", "dropoff_latitude", "--lon", "dropoff_longitude", *args,
        "--centre", "40.758,-73.9855", "--out", out, "--json", "--drop-other",
    )  # fmt: skip
    assert result.code == 0, result.err
    data = json.loads(result.out)
    assert data["costs"] == []
    assert sorted(data["released_columns"]) == ["dropoff_latitude", "dropoff_longitude"]
    assert data["guarantee"]
    assert len(pd.read_csv(out)) == data["rows"]
    if args[1] == "cloak":
        # A root square from the data shows in the release; a public one does not.
        leak = "PrivacyLeakWarning" in [w["category"] for w in data["warnings"]]
        assert leak == ("--root-m=-30000,-30000,60000" not in args)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--mask", "planar-laplace"], "--epsilon: required by --mask planar-laplace"),
        (["--mask", "grid", "--cell-m", "10", "--epsilon", "1"], "--epsilon: not for --mask grid"),
        (
            ["--mask", "donut", "--r-min-m", "500", "--r-max-m", "100", "--centre", "40.7,-74"],
            "r_min_m",
        ),
        (["--mask", "grid", "--cell-m", "100"], "give exactly one public projection"),
        (
            ["--mask", "grid", "--cell-m", "100", "--centre", "40.7,-74", "--crs", "EPSG:32618"],
            "give one of them, not both",
        ),
        (["--mask", "grid", "--cell-m", "100", "--crs", "32618"], "--crs: expected EPSG:CODE"),
        (
            ["--mask", "grid", "--cell-m", "100", "--projection", "data", "--crs", "EPSG:32618"],
            "not both",
        ),
        (["--mask", "grid", "--cell-m", "nan", "--centre", "40.7,-74"], "--cell-m: must be a"),
        (["--mask", "cloak", "--k", "5", "--map", "map.png"], "--map: must end in .html"),
    ],
)
def test_geo_usage_errors(
    veil: Veil, taxi_csv: Path, tmp_path: Path, args: list[str], message: str
) -> None:
    result = veil(
        "geo", taxi_csv, "--lat", "pickup_latitude", "--lon", "pickup_longitude", *args,
        "--out", tmp_path / "x.csv", "--drop-other",
    )  # fmt: skip
    assert result.code == 2
    assert message in result.err
    assert not (tmp_path / "x.csv").exists()
