"""The other roles in a real browser: review and publication, download, policy, refusals.

The release is prepared through the API (the curator's own browser flow is
tests/server/test_browser.py); everything a person does here is done in Chromium.
Screenshots go to ``$VEIL_TEST_ARTIFACTS`` (else the test's temporary folder).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from .conftest import PLAN, Released, Site, _site, release_flow, serving, sign_in


@pytest.fixture
def drafted(tmp_path: Path) -> Iterator[tuple[str, Site, Released]]:
    """A draft release by Carol (made through the API), the site served without a worker."""
    site = _site(tmp_path, None)
    flow = release_flow(site, publish=False)
    with serving(site, worker=False) as url:
        yield url, site, flow
    site.platform.db.dispose()


def _as(browser: Any, url: str, who: str, errors: list[str]) -> tuple[Any, Any]:
    """A fresh browser context signed in as ``who``; console errors go to ``errors``."""
    context = browser.new_context(accept_downloads=True)
    page = context.new_page()
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    sign_in(page, url, who)
    return context, page


def test_a_second_curator_approves_then_the_owner_publishes_and_a_data_user_downloads(
    browser: Any, drafted: Any, artefacts: Path
) -> None:
    url, _, flow = drafted
    errors: list[str] = []
    context, carol = _as(browser, url, "carol", errors)
    carol.goto(f"{url}/releases/{flow.release}")
    assert carol.get_by_role("button", name="Publish").count() == 0
    carol.get_by_role("button", name="Ask a second curator for approval").click()
    assert carol.inner_text("#release-status") == "awaiting approval"
    context.close()

    context, cedric = _as(browser, url, "cedric", errors)
    review = cedric.locator("h2:has-text('awaiting your review') + ul a").first
    review.click()
    cedric.wait_for_selector("#approve")
    cedric.screenshot(path=str(artefacts / "1-review.png"), full_page=True)
    cedric.get_by_role("button", name="Approve").click()
    # Approved, the release leaves the reviewer's queue: they are back on their start page.
    assert "is now approved" in cedric.inner_text("#reviewed")
    assert cedric.locator("h2:has-text('awaiting your review') + p").inner_text() == "None."
    context.close()

    context, carol = _as(browser, url, "carol", errors)
    carol.goto(f"{url}/releases/{flow.release}")
    carol.get_by_role("button", name="Publish").click()
    assert carol.inner_text("#release-status") == "published"
    context.close()

    context, dana = _as(browser, url, "dana", errors)
    dana.get_by_role("link", name="Catalogue").click()
    dana.locator("tbody a").first.click()
    dana.screenshot(path=str(artefacts / "2-catalogue.png"), full_page=True)
    with dana.expect_download() as caught:
        dana.click("#download")
    saved = artefacts / "release.csv"
    caught.value.save_as(str(saved))
    lines = saved.read_text(encoding="utf-8").splitlines()
    assert lines[0] == "age,sex,salary-class" and len(lines) == 2001
    context.close()
    assert not [e for e in errors if "Content Security Policy" in e]


def test_an_operator_tightens_the_policy_and_an_over_policy_plan_is_refused(
    browser: Any, drafted: Any, artefacts: Path
) -> None:
    url, _, flow = drafted
    errors: list[str] = []
    context, oscar = _as(browser, url, "oscar", errors)
    oscar.get_by_role("link", name="Policy", exact=True).click()
    oscar.get_by_label("Largest local-DP epsilon per record").fill("1.0")
    oscar.get_by_role("button", name="Save the policy").click()
    assert oscar.get_by_label("Largest local-DP epsilon per record").input_value() == "1.0"
    oscar.screenshot(path=str(artefacts / "1-policy.png"), full_page=True)
    context.close()

    context, carol = _as(browser, url, "carol", errors)
    carol.goto(f"{url}/datasets/{flow.dataset}/plans/new")
    carol.get_by_label("Plan name").fill("too generous")
    carol.get_by_label("Plan (YAML, optional)").fill(PLAN)
    carol.get_by_role("button", name="Save the plan").click()
    carol.wait_for_selector("#plan-errors")
    refusal = carol.inner_text("#plan-errors")
    assert "policy.max_ldp_epsilon" in refusal
    carol.screenshot(path=str(artefacts / "2-refused.png"), full_page=True)
    # The plan from the guided form: the harm questions choose tier 3 (epsilon 1.0).
    carol.goto(f"{url}/datasets/{flow.dataset}/plans/new")
    carol.get_by_label("Plan name").fill("guided")
    carol.get_by_label("Could it cost them money, their job, or a civil suit? (tier 3)").check()
    carol.get_by_label("Treatment of age").select_option("laplace")
    carol.get_by_label("Bounds of age").fill("16, 100")
    carol.get_by_role("button", name="Show the expected error").click()
    carol.wait_for_selector("#expected")
    assert "standard deviation" in carol.inner_text("#expected")
    origin = carol.inner_text("#budget-origin")
    assert "harm tier 3 (high), from the harm questions (money)" in origin
    context.close()


def test_a_data_user_and_an_operator_never_reach_raw_data_or_unpublished_outputs(
    browser: Any, drafted: Any, artefacts: Path
) -> None:
    url, _, flow = drafted
    errors: list[str] = []
    private = [
        f"/datasets/{flow.dataset}",
        f"/datasets/{flow.dataset}/profile",
        f"/datasets/{flow.dataset}/plans/new",
        f"/plans/{flow.plan}",
        f"/jobs/{flow.job}",
        f"/releases/{flow.release}",
        f"/releases/{flow.release}/report",
        f"/catalogue/{flow.release}",
        f"/catalogue/{flow.release}/download",
    ]
    for who in ("dana", "oscar"):
        context, page = _as(browser, url, who, errors)
        for path in private:
            response = page.goto(url + path)
            assert response is not None and response.status in (403, 404), (who, path)
            assert "Request refused" in page.title() or "Refused" in page.title()
            assert "age,sex" not in page.content()
        page.screenshot(path=str(artefacts / f"refused-{who}.png"), full_page=True)
        context.close()
