"""``veil share`` end to end on a small table: release, report, errors, no partial output."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml

from .conftest import Veil

DOMAIN = {
    "sex": ["F", "M"],
    "region": ["=a", "b", "c"],
    "chol": {"bounds": [100, 340], "integer": True, "bins": 12},
    "age": {"bounds": [18, 90], "integer": True, "bins": 8},
    "income": {"bounds": [0, 100], "bins": 10},
    "y": ["hi", "lo"],
}


@pytest.fixture
def table() -> pd.DataFrame:
    """Q = sex, region (a value a spreadsheet would run) and the fine chol, which leaves Q."""
    rng = np.random.default_rng(0)
    n = 600
    frame = pd.DataFrame(
        {
            "sex": rng.choice(["F", "M"], n),
            "region": rng.choice(["=a", "b", "c"], n),
            "chol": rng.integers(120, 320, n),
            "age": rng.integers(18, 90, n),
        }
    )
    frame["income"] = (frame["age"] * 0.6 + rng.normal(0, 5, n)).clip(0, 100).round(2)
    frame["y"] = np.where(frame["income"] + rng.normal(0, 5, n) > 35, "hi", "lo")
    return frame


@pytest.fixture
def files(tmp_path: Path, table: pd.DataFrame) -> tuple[Path, Path]:
    data = tmp_path / "people.csv"
    table.to_csv(data, index=False)
    domain = tmp_path / "domain.yaml"
    domain.write_text(yaml.safe_dump(DOMAIN), encoding="utf-8")
    return data, domain


def _args(data: Path, domain: Path, out: Path, *extra: object) -> list[object]:
    return [
        "share",
        data,
        "--q",
        "sex,region,chol",
        "--s",
        "age,income,y",
        "--label",
        "y",
        "--domain",
        domain,
        "--out",
        out,
        "--synthesizer",
        "independent",
        "--tn",
        "3",
        "--instances",
        "2",
        "--seed",
        "5",
        *extra,
    ]


def test_share_writes_the_release_and_reports_pair_cost_and_leaks(
    veil: Veil, files: tuple[Path, Path], table: pd.DataFrame, tmp_path: Path
) -> None:
    data, domain = files
    out = tmp_path / "out.csv"
    shown = veil(*_args(data, domain, out))
    assert shown.code == 0, shown.err
    assert "chosen pair" in shown.out and "composed epsilon" in shown.out
    assert (
        "leak: PIF_thresh" in shown.err and "Q exact (not covered by DP): sex, region" in shown.err
    )
    released = pd.read_csv(out, keep_default_na=False)
    assert list(released.columns) == ["sex", "region", "age", "income", "y", "chol"]
    assert len(released) == len(table)
    # Q is released exactly, in a shuffled order, with formula-like cells escaped
    assert sorted(zip(released["sex"], released["region"], strict=True)) == sorted(
        zip(table["sex"], table["region"].replace("=a", "'=a"), strict=True)
    )
    assert not released["sex"].equals(table["sex"]) or not released["age"].equals(table["age"])
    assert "'=a" in set(released["region"])

    out2 = tmp_path / "out2.csv"
    result = veil(*_args(data, domain, out2, "--json"))
    assert result.code == 0, result.err
    report = json.loads(result.out)
    assert report["cost"]["notion"] == "dp-synthetic" and report["selection"] == "paper"
    assert report["q"] == ["sex", "region"] and "chol" in report["s"]
    assert "Theorem 3.2" in report["guarantee"]
    assert len(report["candidates"]) == 3 * 2
    assert report["csv_cells_escaped"] == {"region": int((table["region"] == "=a").sum())}


def test_no_candidate_passing_writes_nothing_and_exits_1(
    veil: Veil, files: tuple[Path, Path], tmp_path: Path
) -> None:
    data, domain = files
    out = tmp_path / "out.csv"
    shown = veil(*_args(data, domain, out, "--e-threshold", "0.999"))
    assert shown.code == 1
    assert "E^T = 0.999" in shown.err and "nothing is released" in shown.err
    assert not out.exists() and sorted(tmp_path.iterdir()) == sorted(files)


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"--label": "nope"}, "--label"),
        ({"--s": "sex,income,y"}, "q and s must not overlap"),
        ({"--selection": "best"}, "--selection: must be paper or private"),
    ],
)
def test_bad_options_exit_2_naming_them(
    veil: Veil, files: tuple[Path, Path], tmp_path: Path, change: dict[str, str], message: str
) -> None:
    data, domain = files
    args = _args(data, domain, tmp_path / "out.csv")
    for option, value in change.items():
        if option in args:
            args[args.index(option) + 1] = value
        else:
            args += [option, value]
    shown = veil(*args)
    assert shown.code == 2 and message in shown.err
    assert not (tmp_path / "out.csv").exists()


def test_a_domain_that_does_not_cover_the_data_is_refused(
    veil: Veil, files: tuple[Path, Path], tmp_path: Path
) -> None:
    data, domain = files
    domain.write_text(yaml.safe_dump({**DOMAIN, "age": {"bounds": [30, 90]}}), encoding="utf-8")
    shown = veil(*_args(data, domain, tmp_path / "out.csv"))
    assert shown.code == 2 and "age" in shown.err and "outside the public bounds" in shown.err
    domain.write_text("- not a mapping\n", encoding="utf-8")
    shown = veil(*_args(data, domain, tmp_path / "out.csv"))
    assert shown.code == 2 and "--domain" in shown.err
    assert not (tmp_path / "out.csv").exists()
