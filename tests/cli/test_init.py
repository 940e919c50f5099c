"""veil init: a commented first plan that validates, dry-runs and releases."""

from __future__ import annotations

import gzip
import json
import re
import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml

from veil.datasets import load_nyc_taxi

from .._data import DATA
from .conftest import Veil


def test_init_writes_a_plan_that_runs_as_it_is(veil: Veil, tmp_path: Path) -> None:
    source = tmp_path / "crimes.csv"
    shutil.copy(DATA / "chicago_crime_sample.csv", source)
    result = veil("init", source)
    assert result.code == 0, result.err
    plan_file = tmp_path / "crimes.plan.yaml"
    text = plan_file.read_text(encoding="utf-8")
    plan = yaml.safe_load(text)
    # Identifiers and every carrier of the location are dropped; the pair is masked.
    for column in ("ID", "Case Number", "Block", "Location", "X Coordinate", "Y Coordinate"):
        assert plan["columns"][column]["treatment"] == "drop", column
    (location,) = plan["locations"]
    assert (location["lat"], location["lon"]) == ("Latitude", "Longitude")
    assert location["mask"]["method"] == "planar_laplace"
    assert "replace it with a public point" in text
    # Dates, the year, the district and the beat (codes with leading zeros, read as text)
    # are quasi-identifiers, generalized by the anonymization; the two yes/no flags are not.
    assert set(plan["anonymization"]["quasi_identifiers"]) == {
        "Date", "Year", "District", "Beat"
    }  # fmt: skip
    assert plan["input"]["text_columns"] == ["Beat", "District"]
    assert plan["anonymization"]["quasi_identifiers"]["Date"]["dates"] == {
        "format": "%m/%d/%Y %I:%M:%S %p"
    }
    assert "dry run: within budget" in result.out
    # Every column is listed with a comment saying why.
    assert text.count("\n  # ") >= len(pd.read_csv(source, nrows=1).columns) - 2
    released = veil("release", plan_file, "--out", tmp_path / "release", "--json")
    assert released.code == 0, released.err
    rows = pd.read_csv(tmp_path / "release" / "release.csv")
    assert "ID" not in rows.columns and "Location" not in rows.columns


def test_init_refuses_to_replace_a_plan_and_writes_nothing_on_error(
    veil: Veil, tmp_path: Path
) -> None:
    source = tmp_path / "taxi.csv"
    load_nyc_taxi().to_csv(source, index=False)
    assert veil("init", source, "--out", tmp_path / "plan.yaml").code == 0
    again = veil("init", source, "--out", tmp_path / "plan.yaml")
    assert again.code == 2 and "--force" in again.err
    bad = veil("init", source, "--out", tmp_path / "plan.txt")
    assert bad.code == 2 and "must end in .yaml" in bad.err
    missing = veil("init", tmp_path / "none.csv", "--out", tmp_path / "none.yaml")
    assert missing.code == 2 and not (tmp_path / "none.yaml").exists()
    replaced = veil("init", source, "--out", tmp_path / "plan.yaml", "--force", "--json")
    assert replaced.code == 0
    data = json.loads(replaced.out)
    assert {tuple(p) for p in data["locations"]} == {
        ("pickup_latitude", "pickup_longitude"),
        ("dropoff_latitude", "dropoff_longitude"),
    }
    assert data["ledger"]["totals"]["metric"]["epsilon"] > 0


def _wage(tmp_path: Path) -> Path:
    source = tmp_path / "wage.csv"
    source.write_bytes(gzip.decompress((DATA / "islr_wage" / "Wage.csv.gz").read_bytes()))
    return source


def test_roles_come_from_the_values_on_wage(veil: Veil, tmp_path: Path) -> None:
    """ISLR Wage (issue 20): the record number is an identifier; marital status, job class
    and the survey year (categories and years with few levels) are quasi-identifiers, not
    'sensitive by default'; l-diversity goes to a sensitive column, never to a QI."""
    source = _wage(tmp_path)
    result = veil("init", source, "--json")
    assert result.code == 0, result.err
    data = json.loads(result.out)
    roles = {r["column"]: r for r in data["roles"]}
    assert roles["rownames"]["role"] == "identifier"
    for column in ("maritl", "jobclass", "year", "age", "race", "education"):
        assert roles[column]["role"] == "quasi_identifier", column
    for column in ("wage", "logwage", "health", "health_ins"):
        assert roles[column]["role"] == "sensitive", column
    assert all("by default" not in r["reason"] for r in roles.values())
    plan = data["plan"]
    qis = set(plan["anonymization"]["quasi_identifiers"])
    assert {"maritl", "jobclass", "year"} <= qis
    diverse = [
        m["distinct_l_diversity"]["attribute"]
        for m in plan["anonymization"]["models"]
        if "distinct_l_diversity" in m
    ]
    assert diverse and all(roles[a]["role"] == "sensitive" for a in diverse)
    # The draft says why for each column, in its comment.
    text = (tmp_path / "wage.plan.yaml").read_text(encoding="utf-8")
    for column in roles:
        entry = text.index(f"\n  {column}: ")
        assert text[:entry].rstrip().splitlines()[-1].lstrip().startswith("#"), column


def test_the_plan_file_holds_no_figure_measured_on_the_records(veil: Veil, tmp_path: Path) -> None:
    """Issue 18 item 4: a plan's content and hash are published with the release, so the
    figures measured on the raw records (uniqueness, the riskiest combinations) are
    printed for the custodian and never written into the plan's comments."""
    source = _wage(tmp_path)
    result = veil("init", source)
    assert result.code == 0, result.err
    text = (tmp_path / "wage.plan.yaml").read_text(encoding="utf-8")
    assert "singles out" not in text and "distinct values" not in text
    assert not re.search(r"\d+(\.\d+)?% of the (values|rows)", text)
    # The custodian still reads them on the screen.
    assert "riskiest quasi-identifier combinations now:" in result.out
    assert "singles out" in result.out and "% of the values are distinct" in result.out
    as_json = veil("init", source, "--force", "--json")
    assert any("singles out" in note for note in json.loads(as_json.out)["measured"])


def test_zip_codes_keep_their_leading_zero(veil: Veil, tmp_path: Path) -> None:
    """'02139' read as a number becomes 2139: veil init lists such codes in
    input.text_columns, so the release keeps them as text."""
    codes = ["02139", "02140", "10001", "01002", "94105"] * 40
    frame = pd.DataFrame({"zip": codes, "income": range(len(codes))})
    source = tmp_path / "people.csv"
    frame.to_csv(source, index=False)
    result = veil("init", source, "--json")
    assert result.code == 0, result.err
    data = json.loads(result.out)
    assert data["plan"]["input"]["text_columns"] == ["zip"]
    roles = {r["column"]: r for r in data["roles"]}
    assert roles["zip"]["role"] == "quasi_identifier"
    assert "leading zeros" in roles["zip"]["reason"]
    released = veil("release", tmp_path / "people.plan.yaml", "--out", tmp_path / "out")
    assert released.code == 0, released.err
    rows = pd.read_csv(tmp_path / "out" / "release.csv", dtype=str)
    assert rows["zip"].str.startswith("0").any()
    assert rows["zip"].str.len().eq(5).all()


def test_a_column_name_with_a_line_break_is_a_one_line_error(veil: Veil, tmp_path: Path) -> None:
    """Issue 18 item 9: a column name with a newline gave a YAML traceback."""
    source = tmp_path / "odd.csv"
    source.write_text('"first\nname",age\nA,30\nB,40\n', encoding="utf-8")
    result = veil("init", source)
    assert result.code == 2
    assert "Traceback" not in result.err
    message = result.err.strip()
    assert "\n" not in message and "'first\\nname'" in message
    assert "line break" in message and "rename it" in message
    assert not (tmp_path / "odd.plan.yaml").exists()


def test_quakes_longitudes_in_0_360_are_a_location(veil: Veil, tmp_path: Path) -> None:
    """R's quakes (issue 20): 'long' runs from 165 to 188 (the 0-360 convention). It was
    kept exact while 'lat' was generalized. Now both are the location pair; spread over
    thousands of km (wider than a local projection), both are generalized together."""
    source = tmp_path / "quakes.csv"
    shutil.copy(DATA / "quakes" / "quakes.csv", source)
    result = veil("init", source, "--json")
    assert result.code == 0, result.err
    data = json.loads(result.out)
    roles = {r["column"]: r for r in data["roles"]}
    assert roles["long"]["kind"] == "longitude" and "0-360" in roles["long"]["reason"]
    assert data["locations"] == [["lat", "long"]]
    assert set(data["plan"]["anonymization"]["quasi_identifiers"]) == {"lat", "long"}
    assert "locations" not in data["plan"]
    text = (tmp_path / "quakes.plan.yaml").read_text(encoding="utf-8")
    assert "wider than a local projection" in text
    released = veil("release", tmp_path / "quakes.plan.yaml", "--out", tmp_path / "out")
    assert released.code == 0, released.err


def test_points_across_the_antimeridian_are_masked_about_their_centre(
    veil: Veil, tmp_path: Path
) -> None:
    """A cluster at 178 E to 178 W (given in 0-360) is centred among its points, not on
    the far side of the Earth, and the masked longitudes come back in -180..180."""
    n = 400
    step = np.linspace(0.0, 1.0, n)
    frame = pd.DataFrame(
        {"lat": -17.8 + 0.2 * step, "lon": 179.6 + 0.8 * step, "kind": ["a", "b"] * (n // 2)}
    )
    source = tmp_path / "fiji.csv"
    frame.to_csv(source, index=False)
    result = veil("init", source, "--json")
    assert result.code == 0, result.err
    (location,) = json.loads(result.out)["plan"]["locations"]
    assert location["centre"] == [-17.7, -180.0]
    released = veil("release", tmp_path / "fiji.plan.yaml", "--out", tmp_path / "out")
    assert released.code == 0, released.err
    rows = pd.read_csv(tmp_path / "out" / "release.csv")
    assert len(rows) == n
    assert rows["lon"].between(-180.0, 180.0).all()
    # Every masked point stays near the cluster (within a few km), on either side of 180.
    offset = np.abs(np.remainder(rows["lon"].to_numpy() - 180.0 + 180.0, 360.0) - 180.0)
    assert float(offset.max()) < 0.6


def test_target_error_suggests_an_epsilon_per_numeric_column(veil: Veil, tmp_path: Path) -> None:
    """DP Wizard's anchor: epsilon from a target error, before any release. Printed for
    the custodian (it reads the number of records), never written into the plan."""
    from veil.release.guidance import epsilon_for_target

    source = _wage(tmp_path)
    result = veil("init", source, "--target-error", "0.02", "--json")
    assert result.code == 0, result.err
    targets = json.loads(result.out)["target_error"]
    assert set(targets) == {"wage", "logwage"}
    assert targets["wage"]["epsilon"] == pytest.approx(epsilon_for_target(0.02, 3000))
    # Half the error needs twice the epsilon (the noise scales as 1 / epsilon).
    assert epsilon_for_target(0.01, 3000) == pytest.approx(2 * targets["wage"]["epsilon"])
    text = veil("init", source, "--target-error", "0.02", "--force")
    assert "wage: Laplace on public bounds [LOW, HIGH]" in text.out
    plan_text = (tmp_path / "wage.plan.yaml").read_text(encoding="utf-8")
    suggested = f"{targets['wage']['epsilon']:.3g}"
    assert f"epsilon: {suggested}" in text.out and suggested not in plan_text
    bad = veil("init", source, "--target-error", "0", "--force")
    assert bad.code == 2 and "--target-error: must be a share in (0, 1]" in bad.err


def test_epsilon_for_target_matches_the_noise_it_promises() -> None:
    """Seeded check of the promise: at the suggested epsilon, Laplace noise on [0, 1]
    keeps the mean of 10,000 values within 0.02 in about 95 % of 400 draws."""
    from veil.mechanisms import Laplace
    from veil.release.guidance import epsilon_for_target

    epsilon = epsilon_for_target(0.02, 10_000)
    mechanism = Laplace(epsilon, 0.0, 1.0)
    rng = np.random.Generator(np.random.PCG64(12))
    values = np.full(10_000, 0.5)
    errors = [abs(float(mechanism.randomise(values, rng=rng).mean()) - 0.5) for _ in range(400)]
    inside = float(np.mean(np.array(errors) <= 0.02))
    assert 0.92 <= inside <= 0.98  # 95 % within 3 binomial standard deviations


def test_a_semicolon_table_is_drafted_with_its_separator_and_releases(
    veil: Veil, tmp_path: Path
) -> None:
    """A spreadsheet's CSV from much of Europe (``;`` between fields, ``,`` as the decimal
    mark, quoted names): the draft reads its columns, names ``sep: ;`` and releases."""
    rng = np.random.default_rng(3)
    table = pd.DataFrame(
        {
            "fixed acidity": rng.normal(7, 1, 400).round(1),
            "residual sugar": rng.gamma(2, 3, 400).round(2),
            "quality": rng.integers(3, 9, 400),
        }
    )
    source = tmp_path / "wine.csv"
    table.to_csv(source, sep=";", decimal=",", index=False, quoting=1)
    result = veil("init", source)
    assert result.code == 0, result.err
    plan = yaml.safe_load((tmp_path / "wine.plan.yaml").read_text(encoding="utf-8"))
    assert plan["input"]["sep"] == ";"
    assert list(plan["columns"]) == list(table.columns)
    released = veil("release", tmp_path / "wine.plan.yaml", "--out", tmp_path / "out")
    assert released.code == 0, released.err
    assert list(pd.read_csv(tmp_path / "out" / "release.csv").columns) == list(table.columns)


def test_any_column_name_is_written_so_the_draft_loads(veil: Veil, tmp_path: Path) -> None:
    """Names YAML would misread (a colon, a hash, quotes, words YAML types, names past
    PyYAML's 128-character simple keys and past the 1,024 of any implicit key) come back
    from the draft exactly, and the draft runs."""
    names = [
        'a;"b";"c"' * 20, "a: b", "#hash", "it's", "x" * 1200, "- dash", "? q", "true",
        "1.5", "null",
    ]  # fmt: skip
    source = tmp_path / "odd.csv"
    pd.DataFrame({n: np.arange(60) % 6 for n in names}).to_csv(source, index=False)
    result = veil("init", source)
    assert result.code == 0, result.err
    plan = yaml.safe_load((tmp_path / "odd.plan.yaml").read_text(encoding="utf-8"))
    assert list(plan["columns"]) == names


def test_a_txt_table_the_command_line_reads_is_one_its_plan_reads(
    veil: Veil, tmp_path: Path
) -> None:
    """One table of file endings (veil.formats): ``.txt`` is CSV for ``veil init`` and
    for the plan it drafts alike (the plan used to refuse the name it was drafted from)."""
    source = tmp_path / "blocks.txt"
    rng = np.random.default_rng(5)
    pd.DataFrame(
        {"height": rng.integers(1, 50, 300), "kind": rng.choice(["a", "b", "c"], 300)}
    ).to_csv(source, sep="\t", index=False)
    assert veil("init", source).code == 0
    plan = yaml.safe_load((tmp_path / "blocks.plan.yaml").read_text(encoding="utf-8"))
    assert plan["input"]["sep"] == "\t"
    released = veil("release", tmp_path / "blocks.plan.yaml", "--out", tmp_path / "out")
    assert released.code == 0, released.err
    assert list(pd.read_csv(tmp_path / "out" / "release.csv").columns) == ["height", "kind"]
