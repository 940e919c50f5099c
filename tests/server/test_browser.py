"""A curator's flow in a real browser (Debian's chromium through Playwright).

Carol signs in, uploads Adult, sees the risk summary arrive from the worker, saves a
plan, dry-runs it, runs it while the page shows its progress, and reads the report.
Screenshots go to ``$VEIL_TEST_ARTIFACTS`` (else the test's temporary folder).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from .conftest import PLAN, adult_csv, sign_in, upload_in_browser


def test_a_curator_uploads_runs_and_reads_the_report(
    browser: Any,
    served: Any,
    tmp_path: Path,
    artefacts: Path,
) -> None:
    url, _ = served
    data = tmp_path / "adult.csv"
    data.write_bytes(adult_csv(2000))
    context = browser.new_context()
    page = context.new_page()
    errors: list[str] = []
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    sign_in(page, url, "carol")
    assert "sex" in upload_in_browser(page, "Adult", data)
    page.screenshot(path=str(artefacts / "1-risk.png"), full_page=True)
    page.get_by_role("link", name="New plan").click()
    page.get_by_label("Plan name").fill("first")
    page.get_by_label("Plan (YAML, optional)").fill(PLAN)
    page.get_by_role("button", name="Show the expected error").click()
    page.wait_for_selector("#expected")
    assert "standard deviation" in page.inner_text("#expected")
    page.get_by_role("button", name="Save the plan").click()
    page.get_by_role("button", name="Dry run (ledger only)").click()
    page.wait_for_selector("#job-ledger", timeout=30_000)
    page.go_back()
    page.reload()
    page.get_by_role("button", name="Run the release").click()
    page.wait_for_selector("#report-link", timeout=90_000)
    page.screenshot(path=str(artefacts / "2-job.png"), full_page=True)
    page.click("#report-link")
    page.wait_for_load_state()
    assert "Release report" in page.title()
    page.screenshot(path=str(artefacts / "3-report.png"))
    assert not [e for e in errors if "Content Security Policy" in e]
    context.close()
