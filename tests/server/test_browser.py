"""A curator's flow in a real browser (Debian's chromium through Playwright).

Carol signs in, uploads Adult, sees the risk summary, saves a plan, dry-runs it, runs it
while the page shows its progress, and reads the report. Screenshots go to the test's
temporary folder (kept by pytest as artefacts).
"""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from .conftest import PASSWORDS, PLAN, Site, _site, adult_csv


@pytest.fixture
def served(tmp_path: Path) -> Iterator[tuple[str, Site]]:
    import uvicorn

    from veil.server.worker import run_worker

    site = _site(tmp_path, None)
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    server = uvicorn.Server(
        uvicorn.Config(site.app, host="127.0.0.1", port=port, log_level="warning")
    )
    web = threading.Thread(target=server.run, daemon=True)
    web.start()
    stop = threading.Event()
    worker = threading.Thread(
        target=run_worker,
        args=(site.platform.config, site.platform.keyring),
        kwargs={"stop": stop},
        daemon=True,
    )
    worker.start()
    deadline = time.monotonic() + 30
    while not server.started and time.monotonic() < deadline:
        time.sleep(0.05)
    try:
        yield f"http://127.0.0.1:{port}", site
    finally:
        stop.set()
        server.should_exit = True
        web.join(timeout=10)
        worker.join(timeout=30)
        site.platform.db.dispose()


def test_a_curator_uploads_runs_and_reads_the_report(
    browser: Any,
    served: Any,
    tmp_path: Path,
) -> None:
    url, _ = served
    data = tmp_path / "adult.csv"
    data.write_bytes(adult_csv(2000))
    context = browser.new_context()
    page = context.new_page()
    errors: list[str] = []
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.goto(f"{url}/login")
    page.get_by_label("User name").fill("carol")
    page.get_by_label("Password").fill(PASSWORDS["carol"])
    page.get_by_role("button", name="Sign in").click()
    page.get_by_role("link", name="Upload a dataset").first.click()
    page.get_by_label("Name", exact=True).fill("Adult")
    page.get_by_label("CSV file").set_input_files(str(data))
    page.get_by_role("button", name="Upload").click()
    page.wait_for_selector("#suggested-qis")
    assert "sex" in page.inner_text("#suggested-qis")
    page.screenshot(path=str(tmp_path / "1-risk.png"), full_page=True)
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
    page.screenshot(path=str(tmp_path / "2-job.png"), full_page=True)
    page.click("#report-link")
    page.wait_for_load_state()
    assert "Release report" in page.title()
    page.screenshot(path=str(tmp_path / "3-report.png"))
    assert not [e for e in errors if "Content Security Policy" in e]
    context.close()
