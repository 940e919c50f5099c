"""Issue 22, item 5, in a real browser: the operator sets attack limits on the policy page,
a reviewer sees the attack results beside the guarantees, a data user never sees them.

Debian's Chromium through Playwright (``executable_path``). The jobs run in the test's
thread while uvicorn serves the pages. Screenshots go to ``$VEIL_TEST_ARTIFACTS`` (else
the test's temporary folder).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from .conftest import Site, sign_in, taxi_job

_WIDTHS = (1400, 800)


def _as(browser: Any, url: str, who: str, width: int, errors: list[str]) -> tuple[Any, Any]:
    context = browser.new_context(viewport={"width": width, "height": 900})
    page = context.new_page()
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    sign_in(page, url, who)
    return context, page


def _overflows(page: Any) -> bool:
    return bool(page.evaluate("document.documentElement.scrollWidth > window.innerWidth + 1"))


def test_a_reviewer_sees_the_attack_results_and_a_data_user_does_not(
    browser: Any, live: tuple[str, Site], artefacts: Path
) -> None:
    url, site = live
    errors: list[str] = []

    context, oscar = _as(browser, url, "oscar", 1400, errors)
    oscar.get_by_role("link", name="Policy", exact=True).click()
    oscar.get_by_label("Location re-identification").fill("0.9")
    oscar.get_by_label("Singling out").fill("0.9")
    oscar.get_by_role("button", name="Save the policy").click()
    oscar.wait_for_selector("#saved")
    assert oscar.get_by_label("Location re-identification").input_value() == "0.9"
    context.close()

    _, _, job = taxi_job(site)  # the worker's run, with the limits the page saved
    assert job["job"]["status"] == "done", job["job"]["error"]
    release = job["release"]
    carol = site.login("carol")
    assert carol.post(f"/api/releases/{release}/request-approval").status_code == 200

    for width in _WIDTHS:
        context, cedric = _as(browser, url, "cedric", width, errors)
        cedric.locator("h2:has-text('awaiting your review') + ul a").first.click()
        table = cedric.wait_for_selector("#attack-results")
        text = table.inner_text()
        assert "Location re-identification" in text and "90.0 %" in text
        assert "alone: pickup_latitude/pickup_longitude" in text
        guarantees = cedric.locator("#guarantees").bounding_box()
        results = cedric.locator("#attack-results").bounding_box()
        assert guarantees is not None and results is not None
        assert guarantees["y"] < results["y"]  # beside the guarantees, after them
        assert "Location re-identification" in cedric.inner_text("#attack-findings")
        assert not _overflows(cedric), width
        cedric.screenshot(path=str(artefacts / f"review-{width}.png"), full_page=True)
        if width == _WIDTHS[-1]:
            cedric.get_by_role("button", name="Approve").click()
            cedric.wait_for_selector("#reviewed")
        context.close()
    assert carol.post(f"/api/releases/{release}/publish").status_code == 200

    context, dana = _as(browser, url, "dana", 1400, errors)
    dana.get_by_role("link", name="Catalogue").click()
    dana.locator("tbody a").first.click()
    dana.wait_for_selector("#download")
    body = dana.inner_text("body")
    assert "Privacy" in body  # the guarantees are public
    assert "Attacks" not in body and "re-identification" not in body
    assert dana.locator("#attack-results").count() == 0
    dana.screenshot(path=str(artefacts / "catalogue.png"), full_page=True)
    response = dana.goto(f"{url}/releases/{release}")
    assert response is not None and response.status in (403, 404)
    assert dana.locator("#attack-results").count() == 0
    assert "re-identification" not in dana.inner_text("body")
    context.close()
    assert not [e for e in errors if "Content Security Policy" in e], errors
