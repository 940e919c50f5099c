"""Accessibility of the core pages, checked in Chromium: labels and keyboard reach.

For each core page of each role: every form control has an accessible name (a label
that names it, ``aria-label`` or ``aria-labelledby``), every button and link has text,
the page has a language and a title, and pressing Tab from the top reaches every
control on the page (the core flows work from the keyboard). An axe-like check of
the rules that matter most for forms, not a full WCAG audit. A screenshot of each page
goes to ``$VEIL_TEST_ARTIFACTS`` (else the test's temporary folder).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from .conftest import Released, Site, _site, release_flow, serving, sign_in

_FOCUSABLE = "a[href], button, input:not([type=hidden]), select, textarea, summary, [tabindex]"

_AUDIT = """(selector) => {
  const problems = [];
  const name = (el) => {
    if (el.getAttribute('aria-label')) return el.getAttribute('aria-label').trim();
    const by = el.getAttribute('aria-labelledby');
    const text = (els) => els.map(e => (e && e.textContent) || '').join(' ').trim();
    if (by) return text(by.split(' ').map(id => document.getElementById(id)));
    if (el.labels && el.labels.length) return text(Array.from(el.labels));
    return '';
  };
  for (const el of document.querySelectorAll('input:not([type=hidden]), select, textarea')) {
    if (!name(el)) problems.push('no label: ' + el.outerHTML.slice(0, 120));
  }
  for (const el of document.querySelectorAll('button, a[href]')) {
    if (!(el.innerText || '').trim() && !el.getAttribute('aria-label')) {
      problems.push('no text: ' + el.outerHTML.slice(0, 120));
    }
  }
  if (!document.documentElement.lang) problems.push('no lang on html');
  if (!document.title.trim()) problems.push('no title');
  const controls = Array.from(document.querySelectorAll(selector)).filter(
    el => el.getClientRects().length && getComputedStyle(el).visibility !== 'hidden'
      && !el.disabled && el.tabIndex >= 0
  );
  controls.forEach((el, i) => el.setAttribute('data-a11y', String(i)));
  return {problems, count: controls.length};
}"""


@pytest.fixture
def site_with_objects(tmp_path: Path) -> Iterator[tuple[str, Site, Released, Released]]:
    site = _site(tmp_path, None)
    published = release_flow(site, publish=True)
    draft = release_flow(site, publish=False)
    assert site.login("carol").post(f"/api/releases/{draft.release}/request-approval").is_success
    with serving(site, worker=False) as url:
        yield url, site, published, draft
    site.platform.db.dispose()


def _pages(published: Released, draft: Released) -> dict[str, list[str]]:
    return {
        "carol": [
            "/",
            "/account",
            "/datasets",
            "/datasets/new",
            f"/datasets/{published.dataset}",
            f"/datasets/{published.dataset}/plans/new",
            f"/plans/{published.plan}",
            f"/jobs/{published.job}",
            f"/releases/{published.release}",
        ],
        "cedric": ["/", f"/releases/{draft.release}"],
        "oscar": ["/policy"],
        "admin": ["/admin/users", "/admin/audit"],
        "dana": ["/catalogue", f"/catalogue/{published.release}"],
    }


def _tab_through(page: Any, count: int) -> set[str]:
    """The controls that Tab reaches, pressed from the top of the page."""
    page.evaluate("() => { document.activeElement && document.activeElement.blur(); }")
    page.mouse.click(1, 1)
    reached: set[str] = set()
    for _ in range(count + 5):
        page.keyboard.press("Tab")
        mark = page.evaluate("() => document.activeElement?.getAttribute('data-a11y')")
        if mark is not None:
            reached.add(mark)
    return reached


def test_core_pages_label_every_control_and_reach_it_from_the_keyboard(
    browser: Any, site_with_objects: Any, artefacts: Path
) -> None:
    url, _, published, draft = site_with_objects
    failures: list[str] = []
    context = browser.new_context()
    page = context.new_page()
    page.goto(url + "/login")
    checked = [("anonymous", "/login", page.evaluate(_AUDIT, _FOCUSABLE))]
    context.close()
    for who, paths in _pages(published, draft).items():
        context = browser.new_context()
        page = context.new_page()
        sign_in(page, url, who)
        for path in paths:
            response = page.goto(url + path)
            assert response is not None and response.status == 200, (who, path)
            audit = page.evaluate(_AUDIT, _FOCUSABLE)
            reached = _tab_through(page, audit["count"])
            missing = sorted(set(map(str, range(audit["count"]))) - reached, key=int)
            if missing:
                names = page.evaluate(
                    "(ids) => ids.map(i => document.querySelector(`[data-a11y='${i}']`)"
                    ".outerHTML.slice(0, 100))",
                    missing,
                )
                failures.append(f"{who} {path}: Tab never reaches {names}")
            failures += [f"{who} {path}: {p}" for p in audit["problems"]]
            checked.append((who, path, audit))
            shot = path.strip("/").replace("/", "-") or "home"
            page.screenshot(path=str(artefacts / f"{who}-{shot}.png"), full_page=True)
        context.close()
    failures += [f"anonymous /login: {p}" for p in checked[0][2]["problems"]]
    assert not failures, "\n".join(failures)
    # The walk covered the pages with forms: dozens of controls in all.
    assert sum(a["count"] for _, _, a in checked) > 80
