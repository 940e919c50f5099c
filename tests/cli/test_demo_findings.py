"""The demo explains every finding its reports raise (issue 20, item 8), and its reports
show the attack battery (issue 22).

The example plans show each treatment family at a setting a reader can compare, so
their reports flag what a custodian must read (values clipped by local DP, pickups a
nearest-location attacker still links). The demo pairs every finding with why the
example keeps it; a finding it does not expect would say so, and fails this test.
"""

from __future__ import annotations

import contextlib
import io
import json
import re
from pathlib import Path

import pytest

from veil.release.report import findings_in


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, Path]:
    """``veil demo --seed 5``: what it printed, and its folder."""
    from veil.cli import main

    out = tmp_path_factory.mktemp("demo") / "demo"
    said = io.StringIO()
    with contextlib.redirect_stdout(said), contextlib.redirect_stderr(said):
        code = main(["demo", "--out", str(out), "--seed", "5"])
    assert code == 0, said.getvalue()
    return said.getvalue(), out


def test_every_finding_of_the_demo_is_explained(demo: tuple[str, Path]) -> None:
    said, out = demo
    for name in ("adult", "location"):
        page = (out / f"{name}.custodian" / "report.html").read_text()
        findings = findings_in(page)
        headline = re.search(r"<p><b>(\d+) findings? needs? attention", page)
        assert headline is not None and int(headline.group(1)) == len(findings)
        for finding in findings:
            line = f"  the report flags {finding.subject}: "
            assert line in said, (name, finding.subject)
    assert "not expected by the demo" not in said


def test_the_demo_reports_show_the_attack_battery(demo: tuple[str, Path]) -> None:
    """Issue 22: the shipped examples attack their releases; the taxi case is a finding."""
    _, out = demo
    for name, attacks in (("adult", {"singling_out", "linkability", "inference"}),
                          ("location", {"location"})):  # fmt: skip
        folder = out / f"{name}.custodian"
        battery = json.loads((folder / "custodian.json").read_text())["attacks"]
        assert {r["attack"] for r in battery["results"]} == attacks
        page = (folder / "report.html").read_text()
        assert '<section id="attacks">' in page and "Measured on a shadow release" in page
    subjects = {f.subject for f in findings_in(page)}
    assert "Location re-identification (alone: pickup_latitude/pickup_longitude)" in subjects
    assert any(s.startswith("Location re-identification (with ") for s in subjects)
