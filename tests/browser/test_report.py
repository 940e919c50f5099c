"""The custodian's release report in a real browser with the network cut off.

The report of a release with a location (the bundled NYC taxi example plan, attacked on
a shadow release before publishing) is opened in headless Chromium at 1,400 and 1,000
pixels: no table may run past the text column or
make the page scroll sideways, nothing may be requested from the network, nothing may
fail in the page. Screenshots go to ``$VEIL_TEST_ARTIFACTS/<test>`` (else the test's
temporary folder).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from veil.release import example_plan, run

from ._page import OfflinePage

WIDTHS = (1400, 1000)

# Tables (and the page) wider than the column that holds them, at the current width.
_OVERFLOW_JS = """
() => {
  const root = document.documentElement;
  const wide = [];
  for (const table of document.querySelectorAll("table")) {
    const box = table.getBoundingClientRect();
    const column = table.parentElement.getBoundingClientRect();
    const last = [...table.querySelectorAll("tr > *:last-child")]
      .map((cell) => cell.getBoundingClientRect().right);
    const right = Math.max(box.right, ...last);
    if (right > column.right + 0.5 || right > root.clientWidth) {
      const section = table.closest("section");
      wide.push({section: section ? section.id : "", right: right, column: column.right});
    }
  }
  return {tables: document.querySelectorAll("table").length, wide: wide,
          page: root.scrollWidth, viewport: root.clientWidth};
}
"""


def artefacts_folder(request: pytest.FixtureRequest, tmp_path: Path) -> Path:
    """``$VEIL_TEST_ARTIFACTS/<test>``, else the test's temporary folder."""
    root = os.environ.get("VEIL_TEST_ARTIFACTS")
    if not root:
        return tmp_path
    folder = Path(root) / request.node.name.replace("/", "_")
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def check_report_fits(page: Any, report: Path, folder: Path, name: str) -> dict[str, Any]:
    """Open ``report`` at each width; every table fits; a full-page screenshot each."""
    page.goto(report.as_uri())
    measured: dict[str, Any] = {}
    for width in WIDTHS:
        page.set_viewport_size({"width": width, "height": 900})
        layout: dict[str, Any] = page.evaluate(_OVERFLOW_JS)
        assert layout["tables"] > 5
        assert layout["wide"] == [], f"tables wider than the page at {width} px: {layout['wide']}"
        assert layout["page"] <= layout["viewport"], f"the page scrolls sideways at {width} px"
        shot = folder / f"{name}_{width}.png"
        page.screenshot(path=str(shot), full_page=True)
        assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
        measured[str(width)] = layout
    return measured


@pytest.fixture
def artefacts(request: pytest.FixtureRequest, tmp_path: Path) -> Path:
    return artefacts_folder(request, tmp_path)


def test_report_tables_fit_the_page_offline(
    offline_page: OfflinePage, tmp_path: Path, artefacts: Path
) -> None:
    result = run(example_plan("location"), tmp_path / "taxi", rng=5)
    assert result.report_path is not None
    check_report_fits(offline_page.page, result.report_path, artefacts, "taxi_report")
    page = offline_page.page
    # The verdict is the first thing on the page, the ledger's guarantee column is shown
    # whole, and the maps section draws its images from the page itself.
    assert page.locator("main section").first.get_attribute("id") == "verdict"
    guarantee = page.locator("#ledger th").last
    assert guarantee.inner_text() == "guarantee" and guarantee.is_visible()
    box = guarantee.bounding_box()
    assert box is not None and box["x"] + box["width"] <= 1000
    assert page.locator("#maps img").count() >= 1
    # The attacks the example plan makes on its shadow release: one row per result, each
    # finding in the attention list, the last column (the suggested edit) shown whole.
    battery = result.custodian["attacks"]
    rows = page.locator("#attacks tbody tr")
    assert rows.count() == len(battery["results"]) > 0
    edit = page.locator("#attacks th").last
    assert edit.inner_text() == "suggested edit" and edit.is_visible()
    box = edit.bounding_box()
    assert box is not None and box["x"] + box["width"] <= 1000
    flagged = page.locator("#attention li.flag b").all_inner_texts()
    assert sum(t.startswith("Location re-identification") for t in flagged) == sum(
        r["finding"] for r in battery["results"]
    )
    page.locator('#attacks a[href="#def-attack-advantage"]').first.click()
    assert page.evaluate("location.hash") == "#def-attack-advantage"
    assert page.locator("#def-attack-advantage").is_visible()
    # Links to definitions land on them; nothing was fetched, nothing failed.
    page.locator('#divergence a[href="#def-tvd"]').first.click()
    assert page.evaluate("location.hash") == "#def-tvd"
    assert page.locator("#def-tvd").is_visible()
    assert offline_page.network_requests() == []
    assert offline_page.routed == [] and offline_page.refused == []
    assert offline_page.console_errors == []
