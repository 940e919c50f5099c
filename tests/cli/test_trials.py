"""A new user's trial on tables veil does not ship (issue 20, "Done when").

For ISLR Wage, R's quakes, the stroke registry and the NYC taxi sample: ``veil init``
then ``veil release`` with no edit give exit 0, and every statement of the report's
verdict agrees with the manifest, the custodian record, the release file and the tables
below it (:mod:`tests.cli._verdict`). Run on both pandas majors in CI.

Releases attacked before publishing (issue 22) are checked the same way: the shipped
examples (the taxi plan's location attack, Adult's singling out, linkability and
inference) and quakes with its exact depth, magnitude and station count beside masked
points, whose statements about the attacks must agree with the custodian record.
"""

from __future__ import annotations

import contextlib
import dataclasses
import gzip
import io
import re
import shutil
from pathlib import Path

import pytest
import yaml

from veil.datasets import load_adult, load_nyc_taxi
from veil.release import example_plan

from .._data import DATA
from ..release._quakes import QUAKES, exact_measures_plan
from ._verdict import Release, check_verdict

TABLES = ("wage", "quakes", "stroke", "taxi")


def _source(name: str, folder: Path) -> Path:
    target = folder / f"{name}.csv"
    if name == "wage":
        target.write_bytes(gzip.decompress((DATA / "islr_wage" / "Wage.csv.gz").read_bytes()))
    elif name == "quakes":
        shutil.copy(DATA / "quakes" / "quakes.csv", target)
    elif name == "stroke":
        target.write_bytes(gzip.decompress((DATA / "stroke" / "stroke.csv.gz").read_bytes()))
    else:
        load_nyc_taxi().to_csv(target, index=False)
    return target


def _veil(*args: object) -> tuple[int, str]:
    from veil.cli import main

    buffer = io.StringIO()
    with contextlib.redirect_stdout(buffer), contextlib.redirect_stderr(buffer):
        code = main([str(a) for a in args])
    return code, buffer.getvalue()


@pytest.fixture(scope="module")
def trials(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Release]:
    """``veil init`` then ``veil release`` on each table, with no edit in between."""
    runs = {}
    for name in TABLES:
        folder = tmp_path_factory.mktemp(name)
        source = _source(name, folder)
        code, said = _veil("init", source)
        assert code == 0, said
        out = folder / f"{name}-release"
        code, said = _veil("release", folder / f"{name}.plan.yaml", "--out", out)
        assert code == 0, said
        runs[name] = Release.read(out, source)
    return runs


@pytest.mark.parametrize("name", TABLES)
def test_init_then_release_gives_a_report_without_contradiction(
    trials: dict[str, Release], name: str
) -> None:
    check_verdict(trials[name])


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("2 findings need attention", "Nothing needs attention"),
        ("re-identifies ", "re-identifies 1"),
        ("15 records whose pickup_latitude", "14 records whose pickup_latitude"),
        ("the smallest class holds ", "the smallest class holds 1"),
        ("Protected by generalization only (a syntactic guarantee, no ε): passenger_count and ",
         "Protected by generalization only (a syntactic guarantee, no ε): "),
        ("ε = 0.02 per metre", "ε = 0.2 per metre"),
    ],
)  # fmt: skip
def test_the_check_catches_a_statement_that_disagrees(
    trials: dict[str, Release], old: str, new: str
) -> None:
    """The checker is not vacuous: one figure or name changed in the taxi verdict fails it."""
    taxi = trials["taxi"]
    head, verdict, tail = taxi.page.partition('<section id="attention">')
    start = head.index('<section id="verdict">')
    assert old in head[start:], old
    changed = head[:start] + head[start:].replace(old, new, 1) + verdict + tail
    with pytest.raises(AssertionError):
        check_verdict(dataclasses.replace(taxi, page=changed))


# ---------------------------------------------------------------- attacked releases

ATTACKED = ("taxi-example", "adult-example", "quakes-exact")


def _quakes_plan(source: Path) -> Path:
    path = source.with_name("quakes.plan.yaml")
    path.write_text(yaml.safe_dump(exact_measures_plan(source.name)), encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def attacked(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Release]:
    """``veil release`` of plans with ``evaluation.attacks``, as shipped or as issue 22 ran."""
    runs = {}
    for name in ATTACKED:
        folder = tmp_path_factory.mktemp(name)
        source = folder / "source.csv"
        if name == "taxi-example":
            plan, frame = example_plan("location"), load_nyc_taxi()
            frame.to_csv(source, index=False)
        elif name == "adult-example":
            plan, frame = example_plan("adult"), load_adult()
            frame.to_csv(source, index=False)
        else:
            shutil.copy(QUAKES, source)
            plan = _quakes_plan(source)
        out = folder / "release"
        # Seeded: the tests below alter statements that a battery makes by chance in
        # some unseeded runs (Adult's finds nothing at its 5 % margin, but in one run of
        # six here an attack beat it, and the "no attack" statement was absent).
        code, said = _veil("release", plan, "--out", out, "--seed", 1)
        assert code == 0, said
        runs[name] = Release.read(out, source)
    return runs


@pytest.mark.parametrize("name", ATTACKED)
def test_an_attacked_release_gives_a_report_without_contradiction(
    attacked: dict[str, Release], name: str
) -> None:
    run = attacked[name]
    assert run.attacks is not None and run.attacks["shadow"] is True
    check_verdict(run)


def test_the_taxi_and_quakes_cases_are_findings(attacked: dict[str, Release]) -> None:
    """Issue 22: the nearest masked pickup (alone, and with the drop-off cell and the
    passenger count) and the exact quake measures beside masked points are findings."""
    for name, variants in (
        ("taxi-example", ("alone: pickup_latitude/pickup_longitude",
                          "with pickup_latitude/pickup_longitude, "
                          "dropoff_latitude/dropoff_longitude, passenger_count")),
        ("quakes-exact", ("with lat/long, depth, mag, stations",)),
    ):  # fmt: skip
        run = attacked[name]
        attention = run.page[run.page.index('<section id="attention">') :]
        for variant in variants:
            assert run.attack(f"Location re-identification ({variant})")["finding"], variant
            assert f"<b>Location re-identification ({variant})</b>" in attention


@pytest.mark.parametrize(
    ("name", "pattern", "replacement"),
    [
        ("taxi-example", r"succeeds for (\d)", r"succeeds for 1\1"),
        ("taxi-example", r"against 0\.", "against 1."),
        ("taxi-example", r"advantage 0\.(\d)", r"advantage 0.0\1"),
        ("taxi-example", r"above the 5 % margin", "above the 1 % margin"),
        ("taxi-example", r" and passenger_count \(", " ("),
        ("taxi-example", r"<li>Location re-identification \(alone: dropoff.*?</li>", ""),
        ("taxi-example", r"\((\d+) held out\)", r"(1\1 held out)"),
        ("taxi-example", r"in memory, on (\d)", r"in memory, on 1\1"),
        ("adult-example", r"No attack on the shadow release \((\d+) run", r"No attack on the "
                          r"shadow release (1\1 run"),
        ("quakes-exact", r"of (\d+) targets", r"of 1\1 targets"),
    ],
)  # fmt: skip
def test_the_check_catches_an_attack_statement_that_disagrees(
    attacked: dict[str, Release], name: str, pattern: str, replacement: str
) -> None:
    """The attack rules are not vacuous: one figure or name changed in a report fails."""
    run = attacked[name]
    changed, count = re.subn(pattern, replacement, run.page, count=1, flags=re.S)
    assert count == 1, pattern
    with pytest.raises(AssertionError):
        check_verdict(dataclasses.replace(run, page=changed))
