"""The one gate: every state-changing route refuses a request from another origin.

The routes are read from the application's own table, so a new POST route is covered
without editing this file. Each is sent, signed in and with the session's valid CSRF
token, from a page of another origin (an ``Origin`` header, then ``Sec-Fetch-Site:
cross-site`` alone, then a foreign ``Referer`` alone): each must be refused with a 403
naming ``origin``, and nothing written (the audit chain does not grow). Login CSRF
through ``/api/login`` and ``/login`` signs nobody in. The same requests from this
site's own origin pass the gate, and an API token (no cookie) is exempt.
"""

from __future__ import annotations

import re
from typing import Any

import pytest
from starlette.routing import Route

from veil.server import verify

from .conftest import PASSWORDS, Site, adult_csv, fill_path, release_flow

_EVIL = "https://evil.example"
_FOREIGN = [
    {"Origin": _EVIL},
    {"Origin": "null"},
    {"Sec-Fetch-Site": "cross-site"},
    {"Sec-Fetch-Site": "same-site"},
    {"Referer": _EVIL + "/attack.html"},
]


def _post_routes(app: Any) -> list[str]:
    paths = []
    for route in app.routes:
        if isinstance(route, Route) and "POST" in (route.methods or ()):
            paths.append(route.path)
    return sorted(set(paths))


def _send(client: Any, path: str, headers: dict[str, str]) -> Any:
    if path in ("/datasets", "/api/datasets"):
        return client.post(
            path,
            data={"csrf_token": client.headers["X-CSRF-Token"], "name": "forged"},
            files={"file": ("a.csv", adult_csv(20), "text/csv")},
            headers=headers,
            follow_redirects=False,
        )
    body = {
        "csrf_token": client.headers["X-CSRF-Token"],
        "username": "carol",
        "password": PASSWORDS["carol"],
        "name": "forged",
        "kind": "run",
        "text": "x",
    }
    return client.post(path, json=body, headers=headers, follow_redirects=False)


@pytest.fixture(scope="module")
def gated(tmp_path_factory: pytest.TempPathFactory) -> Any:
    from .conftest import _site

    site = _site(tmp_path_factory.mktemp("gate"), None)
    flow = release_flow(site, publish=False)
    yield site, flow
    site.platform.db.dispose()


def test_every_state_changing_route_refuses_another_origin_and_writes_nothing(
    gated: Any,
) -> None:
    site, flow = gated
    routes = _post_routes(site.app)
    assert {"/api/login", "/login", "/api/datasets", "/datasets", "/logout"} <= set(routes)
    assert len(routes) >= 30
    users = {"carol": site.login("carol"), "admin": site.login("admin")}
    leaks = []
    for path in routes:
        who = "admin" if "/admin/" in path else "carol"
        client = users[who]
        url = fill_path(path, flow, "request-approval")
        for headers in _FOREIGN:
            before = verify(site.platform).entries
            response = _send(client, url, headers)
            refused = response.status_code == 403 and (
                not url.startswith("/api/") or response.json()["error"]["field"] == "origin"
            )
            if not refused:
                leaks.append(f"{url} {headers}: {response.status_code}")
            if "veil_session" in response.headers.get("set-cookie", ""):
                leaks.append(f"{url} {headers}: set a session cookie")
            if verify(site.platform).entries != before:
                leaks.append(f"{url} {headers}: wrote to the audit log")
    assert leaks == []
    # Still signed in: no forged logout went through.
    assert users["carol"].get("/api/me").status_code == 200


def test_login_csrf_through_the_api_signs_nobody_in(sqlite_site: Site) -> None:
    victim = sqlite_site.client()
    forged = victim.post(
        "/api/login",
        data={"username": "carol", "password": PASSWORDS["carol"]},
        headers={"Origin": _EVIL, "Sec-Fetch-Site": "cross-site"},
    )
    assert forged.status_code == 403 and forged.json()["error"]["field"] == "origin"
    assert "veil_session" not in victim.cookies
    assert victim.get("/api/me").status_code == 401
    # The page's form, with its own pre-session token, from another origin: refused too.
    form = victim.get("/login")
    token = re.search(r'name="csrf_token" value="([^"]+)"', form.text).group(1)
    page = victim.post(
        "/login",
        data={"username": "carol", "password": PASSWORDS["carol"], "csrf_token": token},
        headers={"Origin": _EVIL},
        follow_redirects=False,
    )
    assert page.status_code == 403 and "veil_session" not in victim.cookies


def test_the_own_origin_passes_and_a_token_still_needs_its_csrf(sqlite_site: Site) -> None:
    carol = sqlite_site.login("carol")
    same = {"Origin": "https://testserver", "Sec-Fetch-Site": "same-origin"}
    made = carol.post("/api/account/tokens", json={"name": "script"}, headers=same)
    assert made.status_code == 201
    token = carol.headers.pop("X-CSRF-Token")
    refused = carol.post("/api/account/tokens", json={"name": "again"}, headers=same)
    assert refused.status_code == 403 and refused.json()["error"]["field"] == "csrf_token"
    carol.headers["X-CSRF-Token"] = token
    # A script's API token carries no cookie: exempt from the origin and the CSRF token.
    script = sqlite_site.client()
    script.headers["Authorization"] = f"Bearer {made.json()['new_token']}"
    upload = script.post(
        "/api/datasets",
        data={"name": "by script"},
        files={"file": ("a.csv", adult_csv(20), "text/csv")},
        headers={"Origin": _EVIL},
    )
    assert upload.status_code == 201, upload.text
    # A cookie on an API call without a bearer token is checked as any session is.
    forged = carol.post("/api/account/tokens", json={"name": "x"}, headers={"Origin": _EVIL})
    assert forged.status_code == 403


def test_an_upload_token_must_come_before_the_file(sqlite_site: Site) -> None:
    carol = sqlite_site.login("carol")
    token = carol.headers.pop("X-CSRF-Token")
    boundary = "b0undary"
    body = (
        f'--{boundary}\r\nContent-Disposition: form-data; name="name"\r\n\r\nlate\r\n'
        f'--{boundary}\r\nContent-Disposition: form-data; name="file"; filename="a.csv"\r\n'
        "Content-Type: text/csv\r\n\r\n"
    ).encode() + adult_csv(20)
    body += (
        f'\r\n--{boundary}\r\nContent-Disposition: form-data; name="csrf_token"\r\n\r\n'
        f"{token}\r\n--{boundary}--\r\n"
    ).encode()
    response = carol.post(
        "/api/datasets",
        content=body,
        headers={"content-type": f"multipart/form-data; boundary={boundary}"},
    )
    assert response.status_code == 403 and response.json()["error"]["field"] == "csrf_token"
    assert not any((sqlite_site.platform.config.data_dir / "datasets").glob("*.veil"))
