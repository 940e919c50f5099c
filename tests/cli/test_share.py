"""``veil share`` end to end: release, report, the refinement and its way out, errors.

ISLR's Wage table (tests/data/islr_wage, see its SOURCE.md) is the ordinary data the
refinement failed on: the command keeps its Q exact by default (``--no-refine``).
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml

from .._data import DATA
from .conftest import Veil

WAGE = DATA / "islr_wage" / "Wage.csv.gz"
WAGE_DOMAIN = {
    "race": ["1. White", "2. Black", "3. Asian", "4. Other"],
    "education": [
        "1. < HS Grad", "2. HS Grad", "3. Some College", "4. College Grad",
        "5. Advanced Degree",
    ],
    "age": {"bounds": [18, 80], "integer": True, "bins": 8},
    "maritl": ["1. Never Married", "2. Married", "3. Widowed", "4. Divorced", "5. Separated"],
    "wage": {"bounds": [0, 350], "bins": 10},
    "health": ["1. <=Good", "2. >=Very Good"],
}  # fmt: skip

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


# The paper's refinement with an alpha that keeps sex and region (they stay above alpha
# 4.1 and 5.3 on this table) and moves the fine chol (it would stay above 11.7).
REFINE = ("--refine", "--alpha", "6")


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
    shown = veil(*_args(data, domain, out, *REFINE, "--selection", "paper"))
    assert shown.code == 0, shown.err
    assert "chosen pair" in shown.out and "composed epsilon" in shown.out
    assert (
        "leak: PIF_thresh" in shown.err and "Q exact (not covered by DP): sex, region" in shown.err
    )
    assert "refinement moved 'chol': QPIF" in shown.err and "stays with alpha above" in shown.err
    assert "no stated bound covers that choice" in shown.err
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
    result = veil(*_args(data, domain, out2, "--json", *REFINE, "--selection", "paper"))
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
    shown = veil(*_args(data, domain, out, "--e-threshold", "0.999", *REFINE))
    assert shown.code == 1
    assert "E^T = 0.999" in shown.err and "nothing is released" in shown.err
    assert not out.exists() and sorted(tmp_path.iterdir()) == sorted(files)


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"--label": "nope"}, "--label"),
        ({"--s": "sex,income,y"}, "q and s must not overlap"),
        ({"--selection": "best"}, "--selection: must be paper or private"),
        ({"--alpha": "0"}, "alpha must be a finite number > 0; got 0.0"),
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


def test_the_defaults_are_a_plans() -> None:
    import inspect

    from veil.cli.share import share
    from veil.release.steps.share import ShareSpec

    given = inspect.signature(share).parameters
    fields = ShareSpec.model_fields
    for name in ("refine", "alpha", "selection", "min_k", "instances", "e_threshold"):
        assert given[name].default == fields[name].default, name
    assert given["refine"].default is False and given["selection"].default == "private"


@pytest.fixture
def wage_domain(tmp_path: Path) -> Path:
    path = tmp_path / "wage.yaml"
    path.write_text(yaml.safe_dump(WAGE_DOMAIN), encoding="utf-8")
    return path


def _wage(domain: Path, out: Path, *extra: object) -> list[object]:
    return [
        "share", WAGE, "--q", "race,education", "--s", "age,maritl,wage,health",
        "--label", "health", "--domain", domain, "--out", out,
        "--synthesizer", "independent", "--tn", "3", "--instances", "2", "--seed", "3", *extra,
    ]  # fmt: skip


def test_wage_keeps_q_exact_by_default(veil: Veil, wage_domain: Path, tmp_path: Path) -> None:
    out = tmp_path / "wage_out.csv"
    shown = veil(*_wage(wage_domain, out))
    assert shown.code == 0, shown.err
    original = pd.read_csv(WAGE)
    released = pd.read_csv(out)
    assert list(released.columns) == ["race", "education", "age", "maritl", "wage", "health"]
    # Q exact: the released (race, education) pairs are the records', row for row up to
    # the shuffle; S is synthetic
    key = ["race", "education"]
    assert sorted(map(tuple, released[key].to_numpy())) == sorted(
        map(tuple, original[key].to_numpy())
    )
    assert "Q exact (not covered by DP): race, education" in shown.err
    assert "the paper's refinement would move ['race', 'education']" in shown.err
    assert "Papernot-Steinke" in shown.out  # the private selection, a plan's default
    assert "Q refinement" not in shown.err  # nothing was refined, so no such leak


def test_wage_with_refine_says_why_every_attribute_moves_and_the_way_out(
    veil: Veil, wage_domain: Path, tmp_path: Path
) -> None:
    out = tmp_path / "wage_out.csv"
    shown = veil(*_wage(wage_domain, out, "--refine"))
    assert shown.code == 2
    message = " ".join(shown.err.split())
    assert "moved every Q attribute (['race', 'education']) to S" in message
    assert "'race': QPIF 0.0216, QSPIF 0.1308" in message
    assert "it stays with alpha above 5.051" in message and "above 8.606" in message
    assert "--no-refine" in message
    assert not out.exists()
    # a larger alpha keeps what it covers: 6 keeps race (5.05), not education (8.61)
    shown = veil(*_wage(wage_domain, out, "--refine", "--alpha", "6"))
    assert shown.code == 0, shown.err
    assert "Q exact (not covered by DP): race" in shown.err
    assert "refinement moved 'education': QPIF 0.0199" in shown.err
    assert list(pd.read_csv(out).columns) == [
        "race",
        "age",
        "maritl",
        "wage",
        "health",
        "education",
    ]


def test_a_degenerate_refinement_says_qpif_is_zero(
    veil: Veil, wage_domain: Path, tmp_path: Path
) -> None:
    # one Q attribute: its cohort is the whole table, QPIF = 0, and the rule moves it
    # whatever QSPIF and alpha are
    args = _wage(wage_domain, tmp_path / "out.csv", "--refine", "--alpha", "1000")
    args[args.index("--q") + 1] = "race"
    args[args.index("--s") + 1] = "education,age,maritl,wage,health"
    shown = veil(*args)
    assert shown.code == 2
    message = " ".join(shown.err.split())
    assert "'race': QPIF 0.0000" in message and "QPIF = 0" in message
    assert "the rule degenerates and moves it whatever QSPIF is" in message
    assert "--no-refine" in message
