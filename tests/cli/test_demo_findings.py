"""The demo explains every finding its reports raise (issue 20, item 8).

The example plans show each treatment family at a setting a reader can compare, so
their reports flag what a custodian must read (values clipped by local DP, pickups a
nearest-location attacker still links). The demo pairs every finding with why the
example keeps it; a finding it does not expect would say so, and fails this test.
"""

from __future__ import annotations

import re
from pathlib import Path

from veil.release.report import findings_in

from .conftest import Veil


def test_every_finding_of_the_demo_is_explained(veil: Veil, tmp_path: Path) -> None:
    result = veil("demo", "--out", tmp_path / "demo", "--seed", "5")
    assert result.code == 0, result.err
    for name in ("adult", "location"):
        page = (tmp_path / "demo" / f"{name}.custodian" / "report.html").read_text()
        findings = findings_in(page)
        headline = re.search(r"<p><b>(\d+) findings? needs? attention", page)
        assert headline is not None and int(headline.group(1)) == len(findings)
        for finding in findings:
            line = f"  the report flags {finding.subject}: "
            assert line in result.out, (name, finding.subject)
    assert "not expected by the demo" not in result.out
