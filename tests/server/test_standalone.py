"""The stand-alone mode (``veil ui``) in a real browser: one local user on 127.0.0.1.

The command runs as it would for a person (its own process, with its worker process);
the test opens the one-time link it prints, uploads a table and sees its profile, and
finds that the link does not sign anyone in a second time.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from .conftest import upload_in_browser

_LINK = re.compile(r"veil stand-alone on (http://127\.0\.0\.1:\d+/standalone\?token=\S+)")


def _start(data: Path) -> tuple[subprocess.Popen[str], str]:
    env = {k: v for k, v in os.environ.items() if k != "VEIL_SERVER_KEY"}
    # The key it makes goes outside the data folder: into this test's own folder.
    env["XDG_CONFIG_HOME"] = str(data.parent / "config")
    command = [sys.executable, "-c", "from veil.cli import main; main()", "ui"]
    process = subprocess.Popen(
        [*command, "--no-browser", "--data", str(data)],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env=env,
    )
    assert process.stdout is not None
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        line = process.stdout.readline()
        if not line and process.poll() is not None:
            break
        found = _LINK.search(line)
        if found:
            return process, found.group(1)
    process.kill()
    raise AssertionError("veil ui printed no sign-in link within 60 s")


def test_veil_ui_signs_the_local_user_in_once_and_runs_its_jobs(
    browser: Any, tmp_path: Path, artefacts: Path
) -> None:
    process, link = _start(tmp_path / "ui")
    try:
        base = link.split("/standalone")[0]
        table = tmp_path / "small.csv"
        table.write_text(
            "age,sex,score\n"
            + "".join(f"{20 + i % 40},{'FM'[i % 2]},{i % 7}\n" for i in range(300))
        )
        context = browser.new_context()
        page = context.new_page()
        page.goto(link)
        assert page.url == base + "/"
        assert "local (curator)" in page.inner_text("nav")
        assert "sex" in upload_in_browser(page, "small", table)
        page.screenshot(path=str(artefacts / "standalone.png"), full_page=True)
        context.close()
        # The link works once: a second browser is not signed in by it.
        other = browser.new_context()
        again = other.new_page()
        response = again.goto(link)
        assert response is not None and response.status == 404
        other.close()
        # Bound to loopback only: the address in the link is 127.0.0.1.
        assert base.startswith("http://127.0.0.1:")
    finally:
        process.terminate()
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=10)
