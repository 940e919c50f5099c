"""A new user's trial on tables veil does not ship (issue 20, "Done when").

For ISLR Wage, R's quakes, the stroke registry and the NYC taxi sample: ``veil init``
then ``veil release`` with no edit give exit 0, and every statement of the report's
verdict agrees with the manifest, the custodian record, the release file and the tables
below it (:mod:`tests.cli._verdict`). Run on both pandas majors in CI.
"""

from __future__ import annotations

import contextlib
import dataclasses
import gzip
import io
import shutil
from pathlib import Path

import pytest

from veil.datasets import load_nyc_taxi

from .._data import DATA
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
