"""Every command the README and docs/ show runs as written (issue 20, item 7).

The ``sh`` blocks of ``README.md`` and ``docs/*.md`` are read, each ``veil ...`` command
(with its continuation lines) is run in order, in one workspace per document, on input
files named as the document names them: ``data.csv`` (the stroke registry), ``adult.csv``
(UCI Adult), ``people.csv`` (e-mails and a count), ``taxi.csv`` (the NYC taxi sample),
``wage.csv`` with ``domain.yaml`` (ISLR Wage), ``clinic.csv`` (a made-up clinic table for
the share example of docs/plans.md). The YAML blocks of docs/plans.md that are whole
plans are dry-run.

What is not run, each for its stated reason, is listed in ``NOT_RUN`` and ``SUBSTITUTED``;
the test fails when a document gains a command that is neither run nor listed.
"""

from __future__ import annotations

import contextlib
import gzip
import io
import re
import secrets
import shlex
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml

from veil.datasets import load_adult, load_nyc_taxi

from .._data import DATA

ROOT = Path(__file__).resolve().parents[2]
DOCUMENTS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]

# Commands that need what a test machine does not have, each with the reason.
NOT_RUN = {
    "veil serve": "starts the web platform (tests/server runs it)",
    "veil server verify-audit": "reads a platform's data folder (tests/server checks it)",
    "veil sweep --paper": "the trasgoDP paper's full sweep on 32,561 records (minutes)",
}
# A placeholder a reader replaces, and what the test runs instead.
SUBSTITUTED = {
    "--scheduler tcp://host:8786": "--scheduler synchronous",  # no Dask cluster here
}
# The README's `veil release plan.yaml` lines run the plan `veil init data.csv` drafts,
# with two edits a reader makes (as in cli/test_first_hour.py): the glucose and the age
# under Laplace noise on public bounds (age leaves the anonymization), so that `veil sweep
# plan.yaml --column age` has a noised column to sweep.
_NOISED = {"avg_glucose_level": [50, 300], "age": [0, 100]}


def _commands(document: Path) -> list[str]:
    text = document.read_text(encoding="utf-8")
    found = []
    for block in re.findall(r"```(?:sh|bash|console)\n(.*?)```", text, re.S):
        joined = re.sub(r"\\\n\s*", " ", block)
        for line in joined.splitlines():
            command = line.split(" #", 1)[0].strip()
            if command.startswith("veil "):
                found.append(command)
    return found


def _veil(command: str, folder: Path) -> tuple[int, str]:
    from veil.cli import main

    for placeholder, instead in SUBSTITUTED.items():
        command = command.replace(placeholder, instead)
    redirect = None
    if " > " in command:
        command, redirect = (part.strip() for part in command.split(" > ", 1))
    args = shlex.split(command)[1:]
    buffer = io.StringIO()
    with contextlib.chdir(folder):
        with contextlib.redirect_stdout(buffer), contextlib.redirect_stderr(io.StringIO()) as err:
            code = main(args)
        if redirect is not None:
            Path(redirect).write_text(buffer.getvalue(), encoding="utf-8")
    return code, err.getvalue() + buffer.getvalue()[-2000:]


def _inputs(folder: Path) -> None:
    (folder / "data.csv").write_bytes(
        gzip.decompress((DATA / "stroke" / "stroke.csv.gz").read_bytes())
    )
    (folder / "original.csv").write_bytes((folder / "data.csv").read_bytes())
    load_adult().head(4000).to_csv(folder / "adult.csv", index=False)
    n = 200
    pd.DataFrame(
        {
            "email": [f"p{i}@example.org" for i in range(n)],
            "visits": np.arange(n) % 7,
        }
    ).to_csv(folder / "people.csv", index=False)
    load_nyc_taxi().to_csv(folder / "taxi.csv", index=False)
    # 1,500 of the 3,000 records: the share search's MST fits take a minute on all of them.
    # (and none alone on its exact Q, which the command refuses, as on the whole table).
    wage = pd.read_csv(DATA / "islr_wage" / "Wage.csv.gz").iloc[::2]
    wage = wage[wage.groupby(["race", "education"])["age"].transform("size") >= 2]
    wage.to_csv(folder / "wage.csv", index=False)
    domain = {c: sorted(wage[c].unique().tolist()) for c in ("race", "education", "maritl")}
    domain["health"] = sorted(wage["health"].unique().tolist())
    domain["age"] = {"bounds": [18, 80], "integer": True, "bins": 8}
    domain["wage"] = {"bounds": [0, 350], "bins": 14}
    (folder / "domain.yaml").write_text(yaml.safe_dump(domain), encoding="utf-8")


def _after(command: str, folder: Path) -> None:
    """What a reader does between two commands: the init's draft becomes plan.yaml."""
    if command.startswith("veil init data.csv"):
        plan = yaml.safe_load((folder / "data.plan.yaml").read_text(encoding="utf-8"))
        for column, bounds in _NOISED.items():
            plan["columns"][column]["treatment"] = {"method": "laplace", "bounds": bounds}
            plan["anonymization"]["quasi_identifiers"].pop(column, None)
        plan["budget"]["allocation"] = "equal"
        (folder / "plan.yaml").write_text(yaml.safe_dump(plan), encoding="utf-8")


@pytest.mark.parametrize("document", DOCUMENTS, ids=lambda p: p.name)
def test_every_command_shown_runs(
    document: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    commands = _commands(document)
    if document.name == "README.md":
        assert len(commands) >= 15  # the README's command tour is found
    monkeypatch.setenv("VEIL_KEY", secrets.token_hex(32))
    _inputs(tmp_path)
    for command in commands:
        if any(command.startswith(prefix) for prefix in NOT_RUN):
            continue
        started = time.perf_counter()
        code, said = _veil(command, tmp_path)
        print(f"{time.perf_counter() - started:6.1f} s  {command}")  # with -s: where time goes
        assert code == 0, f"{document.name}: {command}\n{said}"
        _after(command, tmp_path)


def _clinic(folder: Path) -> None:
    gen = np.random.Generator(np.random.PCG64(0))
    n = 400
    pd.DataFrame(
        {
            "sex": gen.choice(["F", "M"], n),
            "region": gen.choice(["north", "south"], n),
            "age": gen.integers(18, 91, n),
            "income": gen.uniform(0, 200_000, n).round(),
            "diagnosis": gen.choice(["none", "mild", "severe"], n),
            "patient_id": np.arange(n),
        }
    ).to_csv(folder / "clinic.csv", index=False)


def test_every_whole_plan_in_the_docs_dry_runs(tmp_path: Path) -> None:
    """A YAML block of docs/plans.md that is a whole plan (it has ``version``) loads and
    passes its dry run: its columns cover its input and its steps fit its budget."""
    from veil.release import load_plan, run

    _clinic(tmp_path)
    text = (ROOT / "docs" / "plans.md").read_text(encoding="utf-8")
    plans = [
        block
        for block in re.findall(r"```yaml\n(.*?)```", text, re.S)
        if re.search(r"^version:", block, re.M)
    ]
    assert plans, "docs/plans.md shows no whole plan"
    for block in plans:
        plan = load_plan(yaml.safe_load(block), base_dir=tmp_path)
        result = run(plan, dry_run=True)
        assert result.dry_run
        run(plan, tmp_path / "out", rng=0)  # the example releases as written
