"""``veil attack`` end to end: the shadow battery, a published release, the results' file."""

from __future__ import annotations

import json
import stat
from pathlib import Path

import pytest
import yaml

from veil.datasets import load_nyc_taxi

from .conftest import Veil

EXAMPLES = Path(__file__).resolve().parents[2] / "src" / "veil" / "release" / "examples"


@pytest.fixture
def taxi_plan(tmp_path: Path) -> tuple[Path, Path]:
    """The bundled taxi sample as CSV, and the location example reading it."""
    data = tmp_path / "taxi.csv"
    load_nyc_taxi().to_csv(data, index=False)
    plan = yaml.safe_load((EXAMPLES / "location.yaml").read_text(encoding="utf-8"))
    plan["input"] = {"path": "taxi.csv"}
    path = tmp_path / "location.yaml"
    path.write_text(yaml.safe_dump(plan), encoding="utf-8")
    return data, path


def test_the_shadow_battery_raises_the_taxi_location_finding(
    veil: Veil, taxi_plan: tuple[Path, Path], tmp_path: Path
) -> None:
    data, plan = taxi_plan
    out = tmp_path / "private" / "attacks.json"
    out.parent.mkdir()
    result = veil("attack", data, "--plan", plan, "--attacks", "location", "--seed", "3",
                  "--out", out, "--json")  # fmt: skip
    assert result.code == 0, result.err
    battery = json.loads(result.out)
    assert battery["shadow"] is True
    assert any(r["finding"] and r["attack"] == "location" for r in battery["results"])
    assert json.loads(out.read_text(encoding="utf-8")) == battery
    assert stat.S_IMODE(out.stat().st_mode) == 0o600  # measured on raw records


def test_a_published_release_is_attacked_as_it_is(
    veil: Veil, taxi_plan: tuple[Path, Path], tmp_path: Path
) -> None:
    data, plan = taxi_plan
    assert veil("release", plan, "--out", tmp_path / "rel").code == 0
    released = tmp_path / "rel" / "taxi_release.csv"
    result = veil("attack", data, released, "--plan", plan, "--attacks", "singling_out,location",
                  "--seed", "1")  # fmt: skip
    assert result.code == 0, result.err
    assert "singling_out" in result.out
    # Which record each released row came from is not in the file: location is skipped,
    # and says why.
    assert "skipped location" in result.out and "release.source" in result.out
    # The results never go beside the release.
    refused = veil("attack", data, released, "--plan", plan, "--out",
                   tmp_path / "rel" / "attacks.json")  # fmt: skip
    assert refused.code == 2 and "release folder" in refused.err
    assert not (tmp_path / "rel" / "attacks.json").exists()


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--attacks", "guessing"], "--attacks: unknown 'guessing'; allowed: singling_out"),
        ([], "--plan: required"),
        (["--other", "x.csv"], "--other: needs RELEASE"),
        (["--out", "a.txt"], "--out: must end in .json"),
    ],
)
def test_bad_options_are_one_line_errors(
    veil: Veil, taxi_plan: tuple[Path, Path], args: list[str], message: str
) -> None:
    data, plan = taxi_plan
    plan_args = [] if message.startswith("--plan") else ["--plan", plan]
    result = veil("attack", data, *plan_args, *args)
    assert result.code == 2
    assert message in result.err and len(result.err.strip().splitlines()) == 1
