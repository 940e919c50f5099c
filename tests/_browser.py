"""One headless Chromium for the whole test session, driven by Playwright.

The browser is Debian's ``chromium`` package (``apt-get install -y chromium``), found as
``$VEIL_CHROMIUM``, else ``chromium`` or ``chromium-browser`` on the ``PATH``, else the
Debian default location. Playwright's own browser download is never used. A missing
browser or a missing Playwright fails the tests that need it: they guard promises (a
map works offline, the platform's pages work) that a skipped test would silently drop.
One Playwright session serves every folder of tests (two sync sessions cannot run at
once in one process).
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from typing import Any

import pytest

# Where Debian's chromium package puts the browser.
_DEBIAN_CHROMIUM = os.path.join(os.sep, "usr", "bin", "chromium")
_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


def _chromium() -> str:
    candidates = [
        os.environ.get("VEIL_CHROMIUM"),
        shutil.which("chromium"),
        shutil.which("chromium-browser"),
        _DEBIAN_CHROMIUM,
    ]
    for candidate in candidates:
        if candidate and os.path.isfile(candidate) and os.access(candidate, os.X_OK):
            return candidate
    pytest.fail(
        "browser tests need a headless Chromium: install Debian's package "
        "(apt-get install -y chromium) or set VEIL_CHROMIUM to a Chromium executable; "
        "do not run 'playwright install'.",
        pytrace=False,
    )


@pytest.fixture(scope="session")
def browser() -> Iterator[Any]:
    """One headless Chromium for the session."""
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        pytest.fail(
            "browser tests need Playwright: pip install 'veil[test]' (or pip install "
            "playwright); the browser itself is Debian's chromium package.",
            pytrace=False,
        )
    executable = _chromium()
    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=executable, args=_ARGS)
        try:
            yield chromium
        finally:
            chromium.close()
