"""veil init: a commented first plan that validates, dry-runs and releases."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pandas as pd
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
    # Dates and the district are quasi-identifiers, generalized by the anonymization.
    assert set(plan["anonymization"]["quasi_identifiers"]) == {"Date", "District"}
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
