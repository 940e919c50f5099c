"""The one-table commands as the docs and the plans describe them (issue 20, item 7).

``veil ldp`` takes the defaults of a plan's steps (the analytic Gaussian, the exponential
mechanism spending its whole epsilon), ``veil anonymize`` takes a plan's inline hierarchy
recipes, errors name the command's flags rather than Python keywords, and a plan whose
share step spends over its budget names the field the user writes (budget.synthetic).
"""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from veil.release import BudgetError, run

from .conftest import Veil

_WORKCLASS = (
    "Private,Self-emp-not-inc,Self-emp-inc,Federal-gov,Local-gov,State-gov,Without-pay,Never-worked"
)


def test_ldp_gaussian_defaults_to_the_plans_analytic_calibration(
    veil: Veil, adult_csv: Path, tmp_path: Path
) -> None:
    """The classic calibration refuses epsilon > 1; a plan's Gaussian is analytic."""
    result = veil(
        "ldp", adult_csv, "--column", "hours-per-week", "--mechanism", "gaussian",
        "--epsilon", "2", "--delta", "1e-6", "--bounds", "1,99", "--drop-other",
        "--out", tmp_path / "out.csv", "--json",
    )  # fmt: skip
    assert result.code == 0, result.err
    assert json.loads(result.out)["total"]["epsilon"] == 2.0


def test_ldp_exponential_spends_the_epsilon_it_is_given(
    veil: Veil, adult_csv: Path, tmp_path: Path
) -> None:
    """With --epsilon 1 the exponential mechanism recorded 0.5 (trasgoDP's calibration);
    a plan's spends the whole epsilon, and so does the command now."""
    result = veil(
        "ldp", adult_csv, "--column", "workclass", "--mechanism", "exponential",
        "--epsilon", "1", "--domain", _WORKCLASS, "--missing", "keep", "--drop-other",
        "--out", tmp_path / "out.csv", "--json",
    )  # fmt: skip
    assert result.code == 0, result.err
    assert json.loads(result.out)["total"]["epsilon"] == 1.0
    standard = veil(
        "ldp", adult_csv, "--column", "workclass", "--mechanism", "exponential",
        "--epsilon", "1", "--domain", _WORKCLASS, "--missing", "keep", "--drop-other",
        "--calibration", "standard", "--out", tmp_path / "standard.csv", "--json",
    )  # fmt: skip
    assert json.loads(standard.out)["total"]["epsilon"] == pytest.approx(0.5)


def test_errors_name_the_flag_not_the_python_keyword(
    veil: Veil, adult_csv: Path, taxi_csv: Path, tmp_path: Path
) -> None:
    classic = veil(
        "ldp", adult_csv, "--column", "hours-per-week", "--mechanism", "gaussian",
        "--calibration", "classic", "--epsilon", "2", "--delta", "1e-6", "--bounds", "1,99",
        "--drop-other", "--out", tmp_path / "out.csv",
    )  # fmt: skip
    assert classic.code == 2
    assert "--calibration analytic" in classic.err and "calibration='" not in classic.err
    far = veil(
        "geo", taxi_csv, "--lat", "pickup_latitude", "--lon", "pickup_longitude",
        "--mask", "planar-laplace", "--epsilon", "0.01", "--centre", "40.758,73.9855",
        "--drop-other", "--out", tmp_path / "geo.csv",
    )  # fmt: skip
    assert far.code == 2
    assert "outside='" not in far.err and "--outside drop" in far.err  # the flag, not Python
    frame = pd.read_csv(adult_csv)
    frame.loc[frame.index[:3], "age"] = None
    holes = tmp_path / "holes.csv"
    frame.to_csv(holes, index=False)
    missing = veil(
        "ldp", holes, "--column", "age", "--mechanism", "laplace", "--epsilon", "1",
        "--bounds", "16,100", "--drop-other", "--out", tmp_path / "age.csv",
    )  # fmt: skip
    assert missing.code == 2
    assert "--missing keep" in missing.err and "missing='" not in missing.err


def test_anonymize_takes_a_plans_inline_hierarchy_recipes(
    veil: Veil, adult_csv: Path, tmp_path: Path
) -> None:
    """No command writes hierarchy CSVs: the plan's recipes work on the command line."""
    out = tmp_path / "anonymized.csv"
    result = veil(
        "anonymize", adult_csv, "--hierarchy", "age={intervals: {widths: [5, 10, 20]}}",
        "--hierarchy", "sex=*", "--k", "5", "--max-suppression", "0.05", "--drop-other",
        "--out", out,
    )  # fmt: skip
    assert result.code == 0, result.err
    released = pd.read_csv(out, dtype=str)
    assert released["age"].str.match(r"^(\[\d+, \d+\)|\*)$").all()
    assert released.groupby(["age", "sex"]).size().min() >= 5
    bad = veil(
        "anonymize", adult_csv, "--hierarchy", "age={intervals: {width: [5]}}", "--k", "5",
        "--drop-other", "--out", tmp_path / "bad.csv",
    )  # fmt: skip
    assert bad.code == 2 and "--hierarchy age" in bad.err and "width" in bad.err
    assert not (tmp_path / "bad.csv").exists()


def test_a_share_budget_error_names_budget_synthetic(tmp_path: Path) -> None:
    frame = pd.DataFrame({"q": ["a", "b"] * 50, "s": ["x", "y", "z", "x"] * 25})
    source = tmp_path / "t.csv"
    frame.to_csv(source, index=False)
    plan = {
        "version": 1,
        "input": {"path": str(source)},
        "columns": {c: {"role": "quasi_identifier", "treatment": "keep"} for c in frame},
        "share": {
            "quasi_identifiers": ["q"],
            "synthesized": ["s"],
            "label": "s",
            "domain": {"q": ["a", "b"], "s": ["x", "y", "z"]},
            "pairs": [[4.0, 1.0e-7]],
            "synthesizer": "independent",
        },
        "budget": {"synthetic": {"epsilon": 1.0, "delta": 1.0e-5}},
    }
    with pytest.raises(BudgetError, match=r"budget\.synthetic\.epsilon") as info:
        run(plan, tmp_path / "out")
    assert "dp-synthetic." not in str(info.value)


def test_report_of_a_one_table_command_needs_no_manifest(
    veil: Veil, adult_csv: Path, tmp_path: Path
) -> None:
    """The one-table commands write no manifest: veil report compares the two tables on
    the roles given, says it knows no treatment, and claims no guarantee."""
    out = tmp_path / "age.csv"
    noised = veil(
        "ldp", adult_csv, "--column", "age", "--mechanism", "laplace", "--epsilon", "1",
        "--bounds", "16,100", "--keep-other", "--acknowledge", "fnlwgt", "--out", out,
    )  # fmt: skip
    assert noised.code == 0, noised.err
    page = tmp_path / "custodian" / "report.html"
    page.parent.mkdir()
    result = veil("report", adult_csv, out, "--qi", "age,sex,race", "--out", page)
    assert result.code == 0, result.err
    assert "without --manifest" in result.err
    html = page.read_text(encoding="utf-8")
    verdict = html[html.index('<section id="verdict">') : html.index('<section id="attention">')]
    assert "no manifest was given" in verdict.lower()
    assert "Every released column is covered" not in verdict
    assert "Nothing is randomized" not in verdict


def test_risk_records_are_written_for_the_custodian_only(
    veil: Veil, adult_csv: Path, tmp_path: Path
) -> None:
    """Issue 20's sdcMicro anchor: each record's class size and prosecutor risk, riskiest
    first, in a file only its owner reads; never beside a public manifest."""
    from veil.risk import record_risk

    target = tmp_path / "custodian" / "records.csv"
    target.parent.mkdir()
    result = veil("risk", adult_csv, "--qi", "age,sex,race", "--risk-records", target)
    assert result.code == 0, result.err
    assert (target.stat().st_mode & 0o777) == 0o600
    rows = pd.read_csv(target)
    frame = pd.read_csv(adult_csv)
    expected = record_risk(frame, ["age", "sex", "race"])
    assert len(rows) == len(frame)
    assert rows["prosecutor_risk"].is_monotonic_decreasing
    by_row = rows.set_index("row").sort_index()
    assert by_row["prosecutor_risk"].tolist() == pytest.approx(expected.tolist())
    assert (by_row["class_size"] * by_row["prosecutor_risk"]).round(9).eq(1.0).all()
    public = tmp_path / "release"
    public.mkdir()
    (public / "manifest.json").write_text(
        '{"confidentiality": "public"}', encoding="utf-8"
    )  # a public manifest, as veil release writes one
    beside = veil("risk", adult_csv, "--qi", "age", "--risk-records", public / "r.csv")
    assert beside.code == 2 and "--risk-records" in beside.err
    assert not (public / "r.csv").exists()
