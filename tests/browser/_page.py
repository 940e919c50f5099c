"""The page the browser tests drive, with what it requested and what it logged."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

# Requests a page may make without touching the network.
LOCAL_SCHEMES = ("file:", "data:", "about:", "blob:")


@dataclass
class OfflinePage:
    """A browser page whose every non-local request is aborted and recorded."""

    page: Any
    # Every request the page made, including those its CSP refused before sending.
    requests: list[str] = field(default_factory=list)
    # Requests that got past the page's CSP to the (aborting) router: the network.
    routed: list[str] = field(default_factory=list)
    # Requests the page's CSP refused.
    refused: list[str] = field(default_factory=list)
    console_errors: list[str] = field(default_factory=list)

    def open(self, path: Path) -> None:
        """Load ``path`` and wait until the map script has run."""
        self.page.goto(path.as_uri())
        self.page.wait_for_function("() => window.veilMap !== undefined", timeout=10_000)

    def network_requests(self) -> list[str]:
        return [url for url in self.requests if not url.startswith(LOCAL_SCHEMES)]
