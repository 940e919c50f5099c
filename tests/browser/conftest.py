"""A headless Chromium, driven by Playwright, that may not reach the network.

The browser is Debian's ``chromium`` package (``apt-get install -y chromium``), found as
``$VEIL_CHROMIUM``, else ``chromium`` or ``chromium-browser`` on the ``PATH``, else the
Debian default location. Playwright's own browser download is never used. A missing
browser or a missing Playwright fails these tests: they guard the promise that a map
works offline, which a skipped test would silently drop.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from typing import Any

import pytest

from ._page import LOCAL_SCHEMES, OfflinePage

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


@pytest.fixture
def offline_page(browser: Any) -> Iterator[OfflinePage]:
    """A fresh page: network requests are aborted and counted, console errors kept."""
    context = browser.new_context(viewport={"width": 1000, "height": 700})
    page = context.new_page()
    recorder = OfflinePage(page)

    def route(route: Any) -> None:
        if route.request.url.startswith(LOCAL_SCHEMES):
            route.continue_()
        else:
            recorder.routed.append(route.request.url)
            route.abort()

    def failed(request: Any) -> None:
        if request.failure == "csp":
            recorder.refused.append(request.url)

    # Chromium reports a request its CSP refuses as made and then failed ("csp"); the
    # router only sees those that would reach the network.
    page.on("request", lambda request: recorder.requests.append(request.url))
    page.on("requestfailed", failed)
    page.on(
        "console",
        lambda message: (
            recorder.console_errors.append(message.text) if message.type == "error" else None
        ),
    )
    page.on("pageerror", lambda error: recorder.console_errors.append(str(error)))
    context.route("**/*", route)
    try:
        yield recorder
    finally:
        context.close()
