"""Numbers beyond what the tables hold are refused naming the field, never a 500.

Every route with an id in its path is called with ids past 64 bits and past the
database's integer (PostgreSQL's INTEGER is 32-bit), on SQLite and PostgreSQL; number
fields of the forms and the JSON API get the same; each answer is a 4xx that names the
field.
"""

from __future__ import annotations

import re
from typing import Any

import pytest
from starlette.routing import Route

from .conftest import Site, release_flow

_HUGE = [2**31, 2**63, 2**64, 10**30]


def _int_routes(app: Any) -> list[tuple[str, str]]:
    found = []
    for route in app.routes:
        if isinstance(route, Route) and ":int}" in route.path:
            for method in sorted(route.methods or ()):
                if method in ("GET", "POST"):
                    found.append((method, route.path))
    return sorted(set(found))


def test_ids_beyond_the_tables_are_refused_naming_the_field(site: Site) -> None:
    flow = release_flow(site, publish=True)
    clients = {"carol": site.login("carol"), "admin": site.login("admin")}
    routes = _int_routes(site.app)
    assert len(routes) > 30
    failures = []
    for method, template in routes:
        names = re.findall(r"\{(\w+):int\}", template)
        for name in names:
            for huge in _HUGE:
                values = {n: 1 for n in names} | {name: huge}
                path = re.sub(r"\{(\w+):int\}", lambda m, v=values: str(v[m.group(1)]), template)
                path = path.replace("{action}", "approve")
                client = clients["admin" if "/admin/" in path else "carol"]
                response = client.request(method, path, follow_redirects=False)
                if response.status_code >= 500 or response.status_code < 400:
                    failures.append(f"{method} {path}: {response.status_code}")
                elif path.startswith("/api/") and response.json()["error"]["field"] != name:
                    failures.append(f"{method} {path}: names {response.json()['error']['field']}")
    assert failures == []
    del flow


_WHOLE = {
    "oscar": [("/api/policy", ["min_k"])],
    "carol": [
        ("/api/datasets/{dataset}/retention", ["retention_days"]),
        ("/api/datasets/{dataset}/plans/preview", ["harm_tier", "k", "l"]),
    ],
}
_REAL = {
    "oscar": [("/api/policy", ["max_ldp_epsilon", "min_k", "dataset_ldp_epsilon"])],
    "carol": [
        ("/api/datasets/{dataset}/plans/preview", ["ldp_epsilon", "ldp_delta", "epsilon_0"]),
    ],
}


@pytest.mark.parametrize(
    ("huge", "cases"),
    [(2**64, _WHOLE), ("9" * 30, _WHOLE), (10**400, _REAL), ("1e400", _REAL), ("-1e400", _REAL)],
)
def test_number_fields_beyond_range_are_refused_naming_the_field(
    sqlite_site: Site, huge: Any, cases: dict[str, list[tuple[str, list[str]]]]
) -> None:
    site = sqlite_site
    flow = release_flow(site, publish=False)
    failures = []
    for who, routes in cases.items():
        client = site.login(who)
        for template, names in routes:
            path = template.format(dataset=flow.dataset)
            for name in names:
                body = {name: huge, "harm_tier": "2", "method_0": "laplace", "bounds_0": "16, 100"}
                if name in ("k", "l"):
                    body["method_1"] = "generalize"
                body[name] = huge
                response = client.post(path, json=body)
                if not 400 <= response.status_code < 500:
                    failures.append(f"{path} {name}: {response.status_code}")
                elif response.json()["error"]["field"] != name:
                    failures.append(f"{path} {name}: names {response.json()['error']['field']}")
    compare = site.login("carol").get(f"/api/plans/{flow.plan}/compare?a={2**64}&b=1")
    if compare.status_code != 422 or compare.json()["error"]["field"] != "a":
        failures.append(f"compare a: {compare.status_code}")
    assert failures == []
