"""End-to-end: the ``veil demo`` command a newcomer runs first."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from veil.cli import main
from veil.datasets import load_nyc_taxi
from veil.errors import ReproducibleNoiseWarning


def test_demo_writes_release_utility_privacy_and_map(tmp_path: Path) -> None:
    out = tmp_path / "demo"
    result = subprocess.run(
        [sys.executable, "-m", "veil", "demo", "--out", str(out)],
        capture_output=True,
        text=True,
        check=True,
        timeout=300,
    )
    assert "privacy per record" in result.stdout
    released = pd.read_csv(out / "adult_ldp.csv")
    for column in ("age", "hours-per-week", "education", "workclass", "native-country", "sex"):
        assert f"dp_{column}" in released.columns
    assert released["dp_age"].between(16, 100).all()
    utility = pd.read_csv(out / "utility.csv", index_col="column")
    assert {"tvd", "js", "kl"} <= set(utility.columns)
    assert utility["tvd"].between(0, 1).all()
    privacy = json.loads((out / "privacy.json").read_text())
    steps = [s for s in privacy["steps"] if s["notion"] == "ldp"]
    # Six columns; the exponential on workclass uses trasgoDP's calibration and spends
    # half its budget, so the composed total is 5.5 at epsilon 1.
    assert len(steps) == 6
    assert privacy["total_ldp_per_record"]["epsilon"] == pytest.approx(5.5)
    assert privacy["total_ldp_per_record"]["delta"] == pytest.approx(1e-6)
    assert privacy["total_metric_per_metre"]["epsilon"] == pytest.approx(0.01)


def test_demo_map_does_not_publish_original_pickups(tmp_path: Path) -> None:
    with pytest.warns(ReproducibleNoiseWarning):
        assert main(["demo", "--out", str(tmp_path), "--seed", "3"]) == 0
    html = (tmp_path / "taxi_map.html").read_text()
    taxi = load_nyc_taxi()
    originals = [f"{lat:.6f}" for lat in taxi["pickup_latitude"]]
    # A drawn original layer would contain every one of them; a privatized latitude
    # equals some original one at 6 decimals now and then by chance (about 1 in 300
    # for 998 points within 0.3 degrees), so allow a few coincidences.
    found = sum(value in html for value in originals)
    assert found < 0.02 * len(originals)


def test_demo_seed_makes_the_release_reproducible(tmp_path: Path) -> None:
    with pytest.warns(ReproducibleNoiseWarning):
        main(["demo", "--out", str(tmp_path / "a"), "--seed", "11"])
        main(["demo", "--out", str(tmp_path / "b"), "--seed", "11"])
    first = pd.read_csv(tmp_path / "a" / "adult_ldp.csv")
    second = pd.read_csv(tmp_path / "b" / "adult_ldp.csv")
    pd.testing.assert_frame_equal(first, second)


def test_bad_epsilon_is_a_clear_error_and_nothing_is_written(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "demo"
    assert main(["demo", "--out", str(out), "--epsilon", "-1"]) == 2
    assert "epsilon" in capsys.readouterr().err
    assert not (out / "adult_ldp.csv").exists()
