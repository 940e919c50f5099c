"""Pages of a headless Chromium that may not reach the network (see tests/_browser.py)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from ._page import LOCAL_SCHEMES, OfflinePage


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
