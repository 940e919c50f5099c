"""Every route x every role x every object: only the object's owner (or role) gets it.

The matrix is generated from the application's own route table, so a new route is
covered without editing this file. Objects: curator Carol's dataset, plan, version,
job and draft release, and one published release. A caller who may not see an object
gets 401 (signed out), 403 (a role that never may) or 404 (a curator who is not the
owner: ids cannot be probed); a refused POST writes nothing (the audit chain does not
grow).
"""

from __future__ import annotations

import re
from typing import Any

import pytest
from sqlalchemy import func, select
from starlette.routing import Route

from veil.server.models import AuditEntry

from .conftest import Site, fill_path, release_flow

CALLERS = ["anonymous", "admin", "oscar", "cedric", "dana"]
# Routes open to every signed-in account (the published catalogue, one's own account).
_OPEN = re.compile(r"^/(api/)?(catalogue|account|me|guidance|logout)")
_PUBLIC = {"/", "/login", "/api/login", "/standalone", "/datasets/new", "/api/openapi.json"}


def _objects(site: Site) -> dict[str, Any]:
    draft = release_flow(site, publish=False)
    published = release_flow(site, publish=True)
    return {"draft": draft, "published": published}


def _fill(path: str, objects: dict[str, Any], target: str) -> str | None:
    try:
        return fill_path(path, objects[target], "approve")
    except KeyError:
        return None


def _routes(app: Any) -> list[tuple[str, str]]:
    out = []
    for route in app.routes:
        if not isinstance(route, Route) or route.path.startswith("/static"):
            continue
        for method in sorted(route.methods or ()):
            if method in ("GET", "POST") and route.path not in _PUBLIC:
                out.append((method, route.path))
    return sorted(set(out))


@pytest.fixture(scope="module")
def matrix(tmp_path_factory: pytest.TempPathFactory) -> Any:
    from .conftest import _site

    site = _site(tmp_path_factory.mktemp("idor"), None)
    objects = _objects(site)
    clients = {name: site.client() if name == "anonymous" else site.login(name) for name in CALLERS}
    yield site, objects, clients
    site.platform.db.dispose()


def _audit_count(site: Site) -> int:
    with site.platform.db.session() as session:
        return int(session.scalar(select(func.count()).select_from(AuditEntry)) or 0)


def test_the_matrix_covers_every_object_route(matrix: Any) -> None:
    site, _, _ = matrix
    paths = {p for _, p in _routes(site.app)}
    for expected in (
        "/api/datasets/{dataset_id:int}",
        "/jobs/{job_id:int}/progress",
        "/releases/{release_id:int}/report",
        "/catalogue/{release_id:int}/download",
    ):
        assert expected in paths
    assert len(_routes(site.app)) > 50


@pytest.mark.parametrize("caller", CALLERS)
@pytest.mark.parametrize("target", ["draft", "published"])
def test_no_caller_reaches_an_object_that_is_not_theirs(
    matrix: Any, caller: str, target: str
) -> None:
    site, objects, clients = matrix
    client = clients[caller]
    leaks: list[str] = []
    for method, template in _routes(site.app):
        path = _fill(template, objects, target)
        if path is None:
            continue
        is_open = bool(_OPEN.match(path))
        catalogue = "/catalogue" in path
        allowed = (
            caller != "anonymous"
            and is_open
            and (not catalogue or target == "published" or "{release_id" not in template)
        )
        if caller == "admin" and path.startswith(("/admin", "/api/admin")):
            allowed = True
        if caller == "oscar" and path.rstrip("/").endswith("policy"):
            allowed = True
        if caller == "cedric" and template in ("/datasets", "/api/datasets"):
            allowed = True  # his own (empty) list
        if allowed:
            continue
        before = _audit_count(site)
        response = client.request(
            method, path, headers={"accept": "application/json"}, follow_redirects=False
        )
        denied = response.status_code in (401, 403, 404) or (
            caller == "anonymous"
            and response.status_code == 303
            and response.headers.get("location") == "/login"
        )
        if not denied:
            leaks.append(f"{caller} {method} {path} -> {response.status_code}")
        if method == "POST" and _audit_count(site) != before:
            leaks.append(f"{caller} {method} {path} wrote to the audit log while refused")
    assert leaks == []


@pytest.mark.parametrize("caller", ["oscar", "dana", "admin", "cedric"])
def test_raw_data_and_unpublished_outputs_never_reach_other_roles(matrix: Any, caller: str) -> None:
    _, objects, clients = matrix
    client = clients[caller]
    draft = objects["draft"]
    for path in (
        f"/api/datasets/{draft.dataset}",
        f"/datasets/{draft.dataset}",
        f"/releases/{draft.release}/report",
        f"/api/releases/{draft.release}",
        f"/catalogue/{draft.release}/download",
        f"/api/jobs/{draft.job}",
    ):
        response = client.get(path)
        assert response.status_code in (403, 404), (caller, path, response.status_code)
        assert "Bachelors" not in response.text and "salary-class" not in response.text
