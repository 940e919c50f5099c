"""``veil release``, ``sweep``, ``report`` and ``demo`` end to end."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pandas as pd
import pytest

from veil.datasets import load_nyc_taxi
from veil.release import example_plan

from .conftest import Veil

PLAN = """\
version: 1
name: small
input: {{path: {data}}}
columns:
  age: {{role: quasi_identifier, treatment: {{method: laplace, bounds: [16, 100], epsilon: 1}}}}
  sex:
    role: quasi_identifier
    treatment: {{method: randomized_response, domain: [Female, Male], epsilon: 1}}
  education: {{role: quasi_identifier, treatment: keep}}
  salary-class: {{role: sensitive, treatment: keep}}
unlisted: drop
budget:
  ldp: {{epsilon: {budget}}}
evaluation:
  target: salary-class
"""


def _plan(tmp_path: Path, data: Path, budget: float = 2.0, name: str = "plan.yaml") -> Path:
    path = tmp_path / name
    path.write_text(PLAN.format(data=data.name, budget=budget))
    return path


# --------------------------------------------------------------------------- release


def test_release_writes_release_manifest_and_report(
    veil: Veil, adult_csv: Path, tmp_path: Path
) -> None:
    plan = _plan(tmp_path, adult_csv)
    out = tmp_path / "release"
    result = veil("release", plan, "--out", out, "--json")
    assert result.code == 0, result.err
    data = json.loads(result.out)
    # The release folder holds what may be published; the report and the custodian
    # record (both computed from the raw records) go to a folder beside it.
    assert {p.name for p in out.iterdir()} == {"release.csv", "manifest.json"}
    custodian = tmp_path / "release.custodian"
    assert {p.name for p in custodian.iterdir()} == {"custodian.json", "report.html"}
    assert data["rows_in"] == data["rows_out"] == 600
    assert data["totals"]["ldp"]["epsilon"] == pytest.approx(2.0)
    released = pd.read_csv(out / "release.csv")
    assert set(released.columns) == {"age", "sex", "education", "salary-class"}
    manifest = json.loads((out / "manifest.json").read_text())
    assert "input" not in manifest
    assert manifest["confidentiality"].startswith("public")
    record = json.loads((custodian / "custodian.json").read_text())
    assert record["input"]["rows"] == 600
    assert record["confidentiality"].startswith("CONFIDENTIAL")
    assert "<html" in (custodian / "report.html").read_text().lower()

    table = veil("release", plan, "--out", tmp_path / "again")
    assert table.code == 0
    assert "released 600 of 600 records" in table.out


def test_dry_run_prints_the_ledger_and_writes_nothing(
    veil: Veil, adult_csv: Path, tmp_path: Path
) -> None:
    plan = _plan(tmp_path, adult_csv)
    out = tmp_path / "release"
    before = sorted(p.name for p in tmp_path.iterdir())
    result = veil("release", plan, "--dry-run", "--out", out)
    assert result.code == 0, result.err
    assert "Privacy ledger of 'small'" in result.out
    assert "ldp, per record: epsilon=2" in result.out
    assert "nothing was read or written" in result.out
    assert sorted(p.name for p in tmp_path.iterdir()) == before
    data = json.loads(veil("release", plan, "--dry-run", "--json").out)
    assert data["dry_run"] is True and data["within_budget"] is True
    assert [s["scope"] for s in data["steps"]] == ["age", "sex", "education", "salary-class"]


def test_dry_run_of_the_example_plans(veil: Veil) -> None:
    for name in ("adult", "location"):
        result = veil("release", example_plan(name), "--dry-run")
        assert result.code == 0, result.err
        assert "Totals" in result.out


def test_a_plan_over_budget_is_refused_with_exit_1(
    veil: Veil, adult_csv: Path, tmp_path: Path
) -> None:
    plan = _plan(tmp_path, adult_csv, budget=1.5)
    out = tmp_path / "release"
    dry = veil("release", plan, "--dry-run")
    assert dry.code == 1
    assert "Privacy ledger" in dry.out  # the ledger shows where the budget goes
    assert "budget.ldp.epsilon: the steps spend 2 per record, over the budget of 1.5" in dry.err
    assert dry.err.startswith(f"veil: error: {plan}: plan refused")
    assert len(dry.err.strip().splitlines()) == 1
    dry_json = veil("release", plan, "--dry-run", "--json")
    assert dry_json.code == 1 and json.loads(dry_json.out)["within_budget"] is False
    run = veil("release", plan, "--out", out)
    assert run.code == 1
    assert not out.exists()


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("version: 1\ncolumns: {age: {role: qi}}\n", "columns.age.role"),
        ("a: [1\n", "is not valid YAML"),
        ("- 1\n- 2\n", "must be a mapping"),
    ],
)
def test_a_bad_plan_names_the_file_and_field(
    veil: Veil, tmp_path: Path, text: str, message: str
) -> None:
    plan = tmp_path / "bad.yaml"
    plan.write_text(text)
    for args in (["--dry-run"], ["--out", tmp_path / "out"]):
        result = veil("release", plan, *args)
        assert result.code == 2
        assert result.err.startswith(f"veil: error: {plan}: ")
        assert message in result.err
        assert len(result.err.strip().splitlines()) == 1
        assert "Traceback" not in result.err
    assert not (tmp_path / "out").exists()


def test_release_file_errors(veil: Veil, adult_csv: Path, tmp_path: Path) -> None:
    missing = veil("release", tmp_path / "nope.yaml", "--dry-run")
    assert missing.code == 2 and "does not exist" in missing.err
    plan = _plan(tmp_path, tmp_path / "absent.csv")
    absent_input = veil("release", plan, "--out", tmp_path / "out")
    assert absent_input.code == 2
    assert "input.path" in absent_input.err and "absent.csv" in absent_input.err
    no_out = veil("release", _plan(tmp_path, adult_csv))
    assert no_out.code == 2 and "--out: required unless --dry-run" in no_out.err


# ----------------------------------------------------------------------------- sweep


def test_sweep_paper_protocol_reduced(veil: Veil, tmp_path: Path) -> None:
    out = tmp_path / "sweep"
    result = veil(
        "sweep", "--paper", "--runs", "2", "--epsilons", "0.5,4", "--seed", "1", "--out", out,
        "--json",
    )  # fmt: skip
    assert result.code == 0, result.err
    data = json.loads(result.out)
    assert {Path(p).name for p in data["files"].values()} == {
        "paper_runs.csv",
        "paper_summary.csv",
        "paper.png",
    }
    summary = pd.read_csv(out / "paper_summary.csv")
    assert set(summary["column"]) == {"age", "workclass", "sex"}
    assert len(summary) == 3 * 2 * 2
    assert (summary["runs"] == 2).all()
    assert "ReproducibleNoiseWarning" in result.err


def test_sweep_of_a_plan_column(veil: Veil, adult_csv: Path, tmp_path: Path) -> None:
    plan = _plan(tmp_path, adult_csv)
    out = tmp_path / "sweep"
    result = veil(
        "sweep", plan, "--column", "age", "--epsilons", "0.5,1", "--runs", "2",
        "--mechanisms", "laplace,gaussian", "--delta", "1e-6", "--out", out,
        "--private-input",
    )  # fmt: skip
    assert result.code == 0, result.err
    assert "age laplace" in result.out and "age gaussian" in result.out
    summary = pd.read_csv(out / "age_summary.csv")
    assert set(summary["mechanism"]) == {"laplace", "gaussian"}
    assert (out / "age.png").stat().st_size > 0
    default = veil(
        "sweep", plan, "--column", "sex", "--epsilons", "1", "--runs", "2", "--metric", "tvd",
        "--out", out, "--json", "--sample", adult_csv,
    )  # fmt: skip
    assert default.code == 0, default.err
    assert json.loads(default.out)["summary"][0]["mechanism"] == "binary_rr"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ([], "give a plan (with --column) or --paper"),
        (["PLAN", "--paper"], "give a plan (with --column) or --paper"),
        (["PLAN", "--epsilons", "1"], "--column: required with a plan"),
        (["PLAN", "--column", "age"], "--epsilons: required with a plan"),
        (["PLAN", "--column", "education", "--epsilons", "1"], "has treatment 'keep'"),
        (["PLAN", "--column", "zip", "--epsilons", "1"], "'zip' is not a column of the plan"),
        (["PLAN", "--column", "age", "--epsilons", "1,x"], "'x' is not a number"),
    ],
)
def test_sweep_usage_errors(
    veil: Veil, adult_csv: Path, tmp_path: Path, args: list[str], message: str
) -> None:
    plan = _plan(tmp_path, adult_csv)
    args = [str(plan) if a == "PLAN" else a for a in args]
    result = veil("sweep", *args, "--out", tmp_path / "sweep")
    assert result.code == 2
    assert message in result.err


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--column", "age", "--mechanisms", "gaussian"], "--delta: required by the gaussian"),
        (["--column", "age", "--runs", "0"], "--runs: must be an integer >= 1, got 0"),
        (["--column", "age", "--epsilons", "0"], "--epsilons: each must be finite and > 0"),
        (["--column", "age", "--metric", "mse"], "--metric: must be one of"),
        (["--column", "age", "--mechanisms", "geo"], "--mechanisms: unknown mechanism 'geo'"),
        (
            ["--column", "age", "--mechanisms", "gaussian", "--delta", "1e-6", "--epsilons", "2"],
            "--epsilons: the classic Gaussian calibration needs epsilon <= 1, got 2.0; use "
            "--calibration analytic",
        ),
        (["--column", "age", "--calibration", "full"], "--calibration: the swept mechanisms"),
        (
            ["--column", "sex", "--mechanisms", "exponential", "--calibration", "analytic"],
            "--calibration: 'analytic' is not a calibration of the exponential mechanism",
        ),
    ],
)
def test_sweep_errors_name_the_command_option(
    veil: Veil, adult_csv: Path, tmp_path: Path, args: list[str], message: str
) -> None:
    plan = _plan(tmp_path, adult_csv)
    base = ["--epsilons", "1", "--runs", "2", "--sample", str(adult_csv)]
    result = veil("sweep", plan, *base, *args, "--out", tmp_path / "sweep")
    assert result.code == 2
    assert result.err.startswith("veil: error: ") and message in result.err


def test_sweep_calibration_is_an_option(veil: Veil, adult_csv: Path, tmp_path: Path) -> None:
    plan = _plan(tmp_path, adult_csv)
    result = veil(
        "sweep", plan, "--column", "age", "--mechanisms", "gaussian", "--delta", "1e-6",
        "--calibration", "analytic", "--epsilons", "2,4", "--runs", "2", "--sample", adult_csv,
        "--out", tmp_path / "sweep", "--json",
    )  # fmt: skip
    assert result.code == 0, result.err
    assert {row["epsilon"] for row in json.loads(result.out)["summary"]} == {2.0, 4.0}
    paper = veil("sweep", "--paper", "--calibration", "analytic", "--out", tmp_path / "p")
    assert paper.code == 2 and "--calibration: not with --paper" in paper.err


def test_release_says_each_location_masks_displacement_before_it_runs(
    veil: Veil, tmp_path: Path
) -> None:
    plan = tmp_path / "taxi.yaml"
    text = example_plan("location").read_text(encoding="utf-8")
    text = text.replace("epsilon: 0.01}", "epsilon: 0.0001}")
    plan.write_text(text, encoding="utf-8")
    result = veil("release", plan, "--dry-run")
    assert result.code == 0, result.err
    lines = result.err.splitlines()
    assert (
        "veil: release: pickup_latitude, pickup_longitude: planar_laplace: expected median "
        "displacement 16.8 km"
    ) in lines
    assert "veil: release: dropoff_latitude, dropoff_longitude: grid: cell side 250 m" in lines
    assert "over 10 km: little of the locations' use is left" in result.err
    # The notes come before the run's own output.
    assert result.out.startswith("Privacy ledger")


# ---------------------------------------------------------------------------- report


def test_report_without_out_is_one_line_in_veils_style(
    veil: Veil, adult_csv: Path, tmp_path: Path
) -> None:
    # Without --manifest the report compares the tables (tests/cli/test_command_defaults.py).
    no_out = veil("report", adult_csv, adult_csv, "--manifest", tmp_path / "m.json")
    assert no_out.code == 2 and no_out.err.startswith("veil: error: --out: required")


def test_report_from_a_release(veil: Veil, adult_csv: Path, tmp_path: Path) -> None:
    plan = _plan(tmp_path, adult_csv)
    out = tmp_path / "release"
    assert veil("release", plan, "--out", out).code == 0
    page = tmp_path / "page.html"
    result = veil(
        "report", adult_csv, out / "release.csv", "--manifest", out / "manifest.json",
        "--out", page, "--title", "Small release", "--seed", "2",
    )  # fmt: skip
    assert result.code == 0, result.err
    html = page.read_text()
    assert "Small release" in html and "Re-identification risk" in html
    bad = veil(
        "report", adult_csv, out / "release.csv", "--manifest", tmp_path / "none.json",
        "--out", page,
    )  # fmt: skip
    assert bad.code == 2 and "--manifest" in bad.err and "none.json" in bad.err
    (tmp_path / "broken.json").write_text("{")
    broken = veil(
        "report", adult_csv, out / "release.csv", "--manifest", tmp_path / "broken.json",
        "--out", page,
    )  # fmt: skip
    assert broken.code == 2 and "is not valid JSON" in broken.err
    wrong_qi = veil(
        "report", adult_csv, out / "release.csv", "--manifest", out / "manifest.json",
        "--out", page, "--qi", "zip",
    )  # fmt: skip
    assert wrong_qi.code == 2 and "--qi: 'zip' not in adult.csv" in wrong_qi.err


@pytest.fixture
def small_release(veil: Veil, adult_csv: Path, tmp_path: Path) -> Path:
    """The release folder of the small plan on the Adult sample."""
    out = tmp_path / "release"
    assert veil("release", _plan(tmp_path, adult_csv), "--out", out).code == 0
    return out


def test_report_refuses_a_released_table_that_is_not_the_manifests(
    veil: Veil, adult_csv: Path, tmp_path: Path, small_release: Path
) -> None:
    # Issue 14 C: `veil report` used to take any pair of tables: a report on the wrong
    # release (here the original given as the release) was written without a word.
    out = small_release
    page = tmp_path / "page.html"
    result = veil(
        "report", adult_csv, adult_csv, "--manifest", out / "manifest.json", "--out", page
    )
    assert result.code == 2
    assert "RELEASED: " in result.err and "is not the file --manifest records" in result.err
    assert not page.exists()


def test_report_checks_the_original_against_the_custodian_record(
    veil: Veil, adult_csv: Path, tmp_path: Path, small_release: Path
) -> None:
    out = small_release
    record = tmp_path / "release.custodian" / "custodian.json"
    other = tmp_path / "other.csv"
    changed = pd.read_csv(adult_csv)
    changed.loc[0, "age"] = 99
    changed.to_csv(other, index=False)
    page = tmp_path / "page.html"
    base = [out / "release.csv", "--manifest", out / "manifest.json", "--out", page]
    wrong = veil("report", other, *base, "--custodian", record)
    assert wrong.code == 2
    assert "ORIGINAL: " in wrong.err and "is not the file --custodian records" in wrong.err
    assert not page.exists()
    right = veil("report", adult_csv, *base, "--custodian", record, "--seed", "1")
    assert right.code == 0, right.err
    assert page.exists() and "without --custodian" not in right.err
    # The custodian's facts join the manifest's (here the input's hash, in the details).
    digest = json.loads(record.read_text())["input"]["sha256"]
    assert digest in page.read_text(encoding="utf-8")
    page.unlink()
    unchecked = veil("report", adult_csv, *base, "--seed", "1")
    assert unchecked.code == 0, unchecked.err
    assert "without --custodian, ORIGINAL is not checked" in unchecked.err
    assert digest not in page.read_text(encoding="utf-8")


def test_plan_encoding_errors_are_one_line_not_tracebacks(
    veil: Veil, adult_csv: Path, tmp_path: Path
) -> None:
    # Issue 14 C: `encoding: bogus` raised LookupError and a non-UTF-8 hierarchy a
    # UnicodeDecodeError, as tracebacks.
    bogus = tmp_path / "bogus.yaml"
    bogus.write_text(
        f"version: 1\ninput: {{path: {adult_csv.name}, encoding: bogus}}\n"
        "columns:\n  age: {role: quasi_identifier, treatment: keep}\nunlisted: drop\n"
    )
    result = veil("release", bogus, "--out", tmp_path / "o1")
    assert result.code == 2 and result.err.count("\n") == 1
    assert "unknown encoding: bogus" in result.err
    hierarchy = tmp_path / "race.csv"
    hierarchy.write_bytes("White,*\nBlack,*\nM\xe1laga,*\n".encode("latin-1"))
    latin = tmp_path / "latin.yaml"
    latin.write_text(
        f"version: 1\ninput: {{path: {adult_csv.name}}}\ncolumns:\n  race:\n"
        "    role: quasi_identifier\n"
        "    treatment: {method: generalize, hierarchy: race.csv, level: 1}\nunlisted: drop\n"
    )
    result = veil("release", latin, "--out", tmp_path / "o2")
    assert result.code == 2 and result.err.count("\n") == 1
    # The message names the plan field and the hierarchy file, not only the plan.
    assert "columns.race.treatment.hierarchy: 'race.csv' is not UTF-8 text" in result.err
    assert not (tmp_path / "o1").exists() and not (tmp_path / "o2").exists()


# ------------------------------------------------------------------------------ demo


def test_demo_releases_adult_and_taxis_with_a_map(veil: Veil, tmp_path: Path) -> None:
    out = tmp_path / "demo"
    result = veil("demo", "--out", out, "--json")
    assert result.code == 0, result.err
    assert result.err == ""  # no warning, and no progress bar outside a terminal
    data = json.loads(result.out)
    adult, location = out / "adult", out / "location"
    assert {p.name for p in adult.iterdir()} == {"adult_release.csv", "manifest.json"}
    assert {p.name for p in location.iterdir()} == {"taxi_release.csv", "manifest.json", "map.html"}
    for name in ("adult", "location"):
        custodian = out / f"{name}.custodian"
        assert {p.name for p in custodian.iterdir()} == {"custodian.json", "report.html"}
    assert data["adult"]["totals"]["ldp"]["epsilon"] == pytest.approx(6.0)
    assert data["location"]["totals"]["metric"]["epsilon"] == pytest.approx(0.01)
    manifest = json.loads((adult / "manifest.json").read_text())
    assert manifest["randomness"]["generator"].startswith("secure")
    # The map draws masked pickups only. A 6-decimal original latitude or longitude
    # shows up now and then by chance inside the many masked numbers (a few percent in
    # dense midtown); both coordinates of the same trip together almost never do.
    html = (location / "map.html").read_text()
    taxi = load_nyc_taxi()
    taxi = taxi.loc[taxi["pickup_latitude"] != 0]
    both = [
        f"{lat:.6f}" in html and f"{lon:.6f}" in html
        for lat, lon in zip(taxi["pickup_latitude"], taxi["pickup_longitude"], strict=True)
    ]
    assert sum(both) < 0.02 * len(both)


def test_release_on_dask_and_an_unknown_engine(veil: Veil, adult_csv: Path, tmp_path: Path) -> None:
    plan = _plan(tmp_path, adult_csv)
    result = veil("release", plan, "--out", tmp_path / "dask", "--engine", "dask", "--json")
    assert result.code == 0, result.err
    assert json.loads(result.out)["rows_out"] == 600
    unknown = veil("release", plan, "--out", tmp_path / "spark", "--engine", "spark")
    assert unknown.code == 2
    assert "engine: must be" in unknown.err and "'spark'" in unknown.err
    assert not (tmp_path / "spark").exists()


def test_release_on_a_running_dask_scheduler(veil: Veil, adult_csv: Path, tmp_path: Path) -> None:
    from distributed import LocalCluster

    plan = _plan(tmp_path, adult_csv)
    with LocalCluster(
        n_workers=1, processes=False, threads_per_worker=2, dashboard_address=None
    ) as cluster:
        address = cluster.scheduler_address
        result = veil(
            "release", plan, "--out", tmp_path / "out", "--engine", "dask",
            "--scheduler", address, "--json",
        )  # fmt: skip
    assert result.code == 0, result.err
    assert json.loads(result.out)["rows_out"] == 600
    manifest = json.loads((tmp_path / "out" / "manifest.json").read_text())
    assert manifest["engine"] == "dask"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--scheduler", "tcp://localhost:8786"], "scheduler: only with engine 'dask'"),
        (["--engine", "dask", "--scheduler", "somewhere"], "a scheduler address"),
    ],
)
def test_scheduler_usage_errors(
    veil: Veil, adult_csv: Path, tmp_path: Path, args: list[str], message: str
) -> None:
    result = veil("release", _plan(tmp_path, adult_csv), "--out", tmp_path / "out", *args)
    assert result.code == 2
    assert result.err.startswith("veil: error: --scheduler: ")
    assert message in result.err
    assert not (tmp_path / "out").exists()


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_release_shows_its_steps_on_a_terminal_only(
    veil: Veil, adult_csv: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    plan = _plan(tmp_path, adult_csv)
    quiet = veil("release", plan, "--out", tmp_path / "quiet", "--seed", "1")
    assert quiet.code == 0
    assert "releasing" not in quiet.err
    terminal = _Terminal()
    monkeypatch.setattr("sys.stderr", terminal)
    assert veil("release", plan, "--out", tmp_path / "shown").code == 0
    shown = terminal.getvalue()
    # The display refreshes a few times a second: it shows the phase being run (here at
    # least the last one).
    assert "releasing plan.yaml: manifest" in shown


def test_a_plan_with_a_target_allocation_has_a_dry_run(
    veil: Veil, adult_csv: Path, tmp_path: Path
) -> None:
    plan = tmp_path / "target.yaml"
    plan.write_text(
        PLAN.format(data=adult_csv.name, budget=8)
        .replace(
            "budget:\n  ldp: {epsilon: 8}",
            "budget:\n  ldp: {epsilon: 8}\n  allocation: target\n"
            "  target: {metric: tvd, value: 0.6, sample: " + adult_csv.name + ", runs: 1}",
        )
        .replace(", epsilon: 1}", "}")
    )
    result = veil("release", plan, "--dry-run", "--json")
    assert result.code == 0, result.err
    data = json.loads(result.out)
    assert data["within_budget"] is True
    assert {s["scope"] for s in data["steps"] if s["cost"]} == {"age", "sex"}
