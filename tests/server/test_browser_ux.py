"""What people met in the browser, at 1400 and 800 pixels wide (Debian's chromium).

Saving a password, a policy or an account says so; a new account starts as a data user;
the plan form starts each column from the risk summary (not all dropped), offers
k-anonymity, l-diversity and hierarchies, and fits an 800-pixel window; a release page
reads in words (no internal keys, no JSON dump) under the plan's name; times read as
``2026-12-02 14:03 UTC``, never raw ISO with microseconds. Screenshots go to
``$VEIL_TEST_ARTIFACTS`` (else the test's temporary folder).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from .conftest import PASSWORDS, Released, Site, _site, release_flow, serving, sign_in

_RAW_ISO = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}")
_READABLE = re.compile(r"\d{4}-\d\d-\d\d \d\d:\d\d UTC")
_OVERFLOW = "() => document.documentElement.scrollWidth - window.innerWidth"


@pytest.fixture
def published(tmp_path: Path) -> Iterator[tuple[str, Site, Released]]:
    site = _site(tmp_path, None)
    flow = release_flow(site, publish=True)
    with serving(site, worker=False) as url:
        yield url, site, flow
    site.platform.db.dispose()


def _page(browser: Any, url: str, who: str, width: int) -> tuple[Any, Any]:
    context = browser.new_context(viewport={"width": width, "height": 900})
    page = context.new_page()
    sign_in(page, url, who)
    return context, page


def _fits(page: Any, where: str) -> None:
    assert page.evaluate(_OVERFLOW) <= 1, f"{where}: the page is wider than the window"


@pytest.mark.parametrize("width", [1400, 800])
def test_saving_says_so_and_a_new_account_starts_as_a_data_user(
    browser: Any, published: Any, artefacts: Path, width: int
) -> None:
    url, _, _ = published
    context, admin = _page(browser, url, "admin", width)
    admin.goto(f"{url}/admin/users")
    assert admin.get_by_label("Role").input_value() == "data_user"
    admin.get_by_label("User name").fill(f"newcomer{width}")
    admin.get_by_label("One-time password", exact=False).fill("welcome-aboard-friend")
    admin.get_by_role("button", name="Create").click()
    assert f"Account newcomer{width} created" in admin.inner_text("#saved")
    assert "data user" in admin.inner_text("tbody")
    _fits(admin, "accounts")
    admin.screenshot(path=str(artefacts / f"accounts-{width}.png"), full_page=True)
    context.close()

    context, oscar = _page(browser, url, "oscar", width)
    oscar.goto(f"{url}/policy")
    oscar.get_by_label("Largest local-DP epsilon per record").fill("4")
    oscar.get_by_role("button", name="Save the policy").click()
    assert "The policy is saved" in oscar.inner_text("#saved")
    _fits(oscar, "policy")
    context.close()

    context, dana = _page(browser, url, "dana", width)
    dana.goto(f"{url}/account")
    dana.get_by_label("Current password").fill(PASSWORDS["dana"])
    dana.get_by_label("New password", exact=False).fill("a-calmer-sentence-of-mine")
    dana.get_by_role("button", name="Change").click()
    assert "Your new password is saved" in dana.inner_text("#saved")
    _fits(dana, "account")
    dana.screenshot(path=str(artefacts / f"account-{width}.png"), full_page=True)
    context.close()


@pytest.mark.parametrize("width", [1400, 800])
def test_the_plan_form_starts_from_the_risk_summary_and_fits_the_window(
    browser: Any, published: Any, artefacts: Path, width: int
) -> None:
    url, _, flow = published
    context, carol = _page(browser, url, "carol", width)
    carol.goto(f"{url}/datasets/{flow.dataset}/plans/new")
    _fits(carol, "plan form")
    methods = carol.eval_on_selector_all("select[name^=method_]", "(els) => els.map(e => e.value)")
    assert len(set(methods)) > 1 and "generalize" in methods and "keep" in methods
    assert carol.get_by_label("k (k-anonymity", exact=False).input_value() == "5"
    assert carol.get_by_label("l (distinct l-diversity", exact=False).count() == 1
    options = carol.eval_on_selector_all("#hierarchy_0 option", "(els) => els.map(e => e.value)")
    assert {"intervals", "suppress"} <= set(options)
    assert any(o.startswith("hierarchies/") for o in options)
    carol.screenshot(path=str(artefacts / f"plan-form-{width}.png"), full_page=True)
    # The form as it starts (plus a name) is a plan the platform accepts.
    carol.get_by_label("Plan name").fill(f"guided {width}")
    carol.get_by_role("button", name="Save the plan").click()
    carol.wait_for_url(re.compile(r".*/plans/\d+$"))
    assert f"guided {width}" in carol.inner_text("h1")
    _fits(carol, "plan")
    context.close()


@pytest.mark.parametrize("width", [1400, 800])
def test_a_release_reads_in_words_under_its_plans_name_with_readable_times(
    browser: Any, published: Any, artefacts: Path, width: int
) -> None:
    url, _, flow = published
    context, carol = _page(browser, url, "carol", width)
    pages = {
        "release": f"/releases/{flow.release}",
        "catalogue": "/catalogue",
        "item": f"/catalogue/{flow.release}",
        "datasets": "/datasets",
        "plan": f"/plans/{flow.plan}",
    }
    for name, path in pages.items():
        carol.goto(url + path)
        text = carol.inner_text("main")
        assert not _RAW_ISO.search(text), f"{name}: a raw ISO time"
        assert "columns_kept_as_is" not in text and '"epsilon":' not in text, name
        _fits(carol, name)
        if name in ("release", "catalogue", "item", "datasets"):
            assert _READABLE.search(text), f"{name}: no readable time"
    carol.goto(f"{url}/releases/{flow.release}")
    assert carol.inner_text("h1").startswith("p v1: adult")
    assert "(job" not in carol.inner_text("h1")
    assert "Local differential privacy: epsilon = 2 per record" in carol.inner_text("#guarantees")
    assert "Released as is" in carol.inner_text("#unprotected")
    carol.screenshot(path=str(artefacts / f"release-{width}.png"), full_page=True)
    context.close()
    context, admin = _page(browser, url, "admin", width)
    admin.goto(f"{url}/admin/audit")
    assert not _RAW_ISO.search(admin.inner_text("main")) and _READABLE.search(
        admin.inner_text("main")
    )
    context.close()
