"""Every form of every page, sent with an empty, a too long and a wrong-typed value.

The forms are read from the pages themselves (each role's pages, with a dataset, a
plan, a job and a release to show), so a new form or field is walked without editing
this file. One field is changed at a time (hidden ones too); the others keep the page's
own values, or a valid value where the page leaves a field empty. Each
answer must be a page, never a 500 or a traceback; a refusal names the field at fault
(its own name, or the plan field its text became); a refused request writes nothing
(the audit chain does not grow, apart from the failed-login record that rate limiting
needs). The JSON API gets the same fields as lists, objects and numbers.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from html.parser import HTMLParser
from typing import Any

import pytest

from veil.server import verify

from .conftest import PASSWORDS, Released, Site, release_flow

_TOO_LONG = "x" * 70_000
# Forms whose success ends the session or changes who may sign in: walked on refusals only.
_SKIP = {"/logout"}
_NUMERIC = ("numeric", "decimal")
# A refusal may name the field the value became: the plan's text is checked as a plan.
_ALIASES = {"text": ("plan", "columns", "budget", "input", "output", "policy", "unlisted")}


@dataclass
class Form:
    """A form as the page has it: where it posts and its fields with their values."""

    action: str
    multipart: bool
    fields: dict[str, str] = field(default_factory=dict)
    kinds: dict[str, str] = field(default_factory=dict)
    options: dict[str, list[str]] = field(default_factory=dict)


class _Forms(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.forms: list[Form] = []
        self.extra: list[tuple[Form, str]] = []
        self._select: str | None = None
        self._area: str | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = {k: v or "" for k, v in attrs}
        if tag == "form" and a.get("method", "get").lower() == "post":
            self.forms.append(Form(a["action"], "multipart" in a.get("enctype", "")))
            return
        if tag == "button" and self.forms and a.get("formaction"):
            self.extra.append((self.forms[-1], a["formaction"]))
            return
        if tag == "option" and self.forms and self._select is not None:
            form = self.forms[-1]
            form.options[self._select].append(a.get("value", ""))
            if "selected" in a or not form.fields[self._select]:
                form.fields[self._select] = a.get("value", "")
            return
        if not self.forms or "name" not in a:
            return
        form = self.forms[-1]
        name = a["name"]
        if tag == "input":
            kind = a.get("type", "text")
            if kind == "checkbox":
                form.kinds[name] = "checkbox"
                if "checked" in a:
                    form.fields[name] = a.get("value", "on")
                return
            form.kinds[name] = (
                "number" if a.get("inputmode") in _NUMERIC else kind if kind != "text" else "text"
            )
            form.fields[name] = a.get("value", "")
        elif tag == "select":
            self._select = name
            form.kinds[name] = "select"
            form.options[name] = []
            form.fields.setdefault(name, "")
        elif tag == "textarea":
            self._area = name
            form.kinds[name] = "textarea"
            form.fields[name] = ""

    def handle_data(self, data: str) -> None:
        if self._area is not None:
            self.forms[-1].fields[self._area] += data

    def handle_endtag(self, tag: str) -> None:
        if tag == "select":
            self._select = None
        elif tag == "textarea":
            self._area = None


def _forms(html: str, who: str) -> list[Form]:
    """The page's forms (a button's formaction is one more form), filled validly."""
    parser = _Forms()
    parser.feed(html)
    forms = parser.forms + [
        Form(action, form.multipart, dict(form.fields), form.kinds, form.options)
        for form, action in parser.extra
    ]
    for form in forms:
        for name, value in _valid(who).items():
            if name in form.kinds and not form.fields.get(name):
                form.fields[name] = value
    return forms


def _valid(who: str) -> dict[str, str]:
    """Valid values for the fields a page leaves empty, so one bad field is the only fault."""
    return {
        "name": "walked",
        "username": "walker",
        "password": "a-long-password-1",
        "current_password": PASSWORDS[who],
        "new_password": "another-password-2",
        "reason": "not ready",
        "confirm": "not the dataset's name",
        "harm_tier": "2",
        # Column 0 of the table is age: a numeric treatment on public bounds.
        "method_0": "laplace",
        "bounds_0": "16, 100",
    }


def _bad_values(form: Form, name: str) -> list[tuple[str, str]]:
    kind = form.kinds.get(name, "text")
    wrong = {
        "number": "twelve",
        "select": "no-such-option",
        "checkbox": "maybe",
        "file": "",
        "textarea": "{[: not yaml",
        "hidden": "no-such-value",
        "password": "\x00",
    }.get(kind, "\x01\x02")
    return [("empty", ""), ("too long", _TOO_LONG), ("wrong type", wrong)]


def _pages(site: Site, flow: Released) -> dict[str, list[str]]:
    return {
        "carol": [
            "/",
            "/account",
            "/datasets/new",
            f"/datasets/{flow.dataset}",
            f"/datasets/{flow.dataset}/plans/new",
            f"/plans/{flow.plan}",
            f"/jobs/{flow.job}",
            f"/releases/{flow.release}",
        ],
        "cedric": [f"/releases/{flow.release}"],
        "oscar": ["/policy", "/account"],
        "admin": ["/admin/users", "/account"],
    }


def _refusal_field(text: str) -> str | None:
    found = re.search(
        r'role="alert"[^>]*>(?:<p>[^<]*</p><ul[^>]*>)?\s*(?:<li>)?<strong>([^<]+)</strong>', text
    )
    return None if found is None else found.group(1)


def _send(client: Any, form: Form, fields: dict[str, str]) -> Any:
    if form.multipart:
        data = {k: v for k, v in fields.items() if form.kinds.get(k) != "file"}
        files = {"file": ("t.csv", b"a,b\n1,2\n3,4\n", "text/csv")}
        return client.post(form.action, data=data, files=files)
    return client.post(form.action, data=fields)


def _check(
    site: Site, client: Any, form: Form, name: str, how: str, fields: dict[str, str]
) -> None:
    before = verify(site.platform).entries
    response = _send(client, form, fields)
    where = f"{form.action} {name} {how}: {response.status_code}"
    assert response.status_code < 500, where
    assert "Traceback" not in response.text, where
    if response.status_code >= 400:
        named = _refusal_field(response.text)
        assert named, f"{where}: the refusal names no field"
        allowed = (name, *_ALIASES.get(name, ()))
        assert named.split(".")[0] in allowed or named.startswith(allowed), (
            f"{where}: names {named!r}, not the field at fault"
        )
        grown = verify(site.platform).entries - before
        assert grown <= (1 if form.action == "/login" else 0), f"{where}: wrote {grown} entries"


@pytest.fixture
def walked(sqlite_site: Site) -> tuple[Site, Released]:
    flow = release_flow(sqlite_site, publish=False)
    carol = sqlite_site.login("carol")
    assert carol.post(f"/api/releases/{flow.release}/request-approval").status_code == 200
    return sqlite_site, flow


def test_every_form_answers_bad_values_with_a_message_naming_the_field(walked: Any) -> None:
    site, flow = walked
    seen = 0
    for who, paths in _pages(site, flow).items():
        client = site.client()
        page = client.get("/login")
        token = re.search(r'name="csrf_token" value="([^"]+)"', page.text)
        assert token is not None
        signed = client.post(
            "/login",
            data={"csrf_token": token.group(1), "username": who, "password": PASSWORDS[who]},
            follow_redirects=False,
        )
        assert signed.status_code == 303
        for path in paths:
            html = client.get(path).text
            for form in _forms(html, who):
                if form.action in _SKIP:
                    continue
                for name in form.fields.keys() | form.kinds.keys():
                    if name == "csrf_token" or form.kinds.get(name) == "file":
                        continue
                    for how, value in _bad_values(form, name):
                        fields = {**form.fields, name: value}
                        _check(site, client, form, name, how, fields)
                        seen += 1
    # Every core form was walked: login aside, dozens of fields in all.
    assert seen > 150


@pytest.mark.parametrize("value", [[1, 2], {"a": 1}, 12, None, True, "\x00"])
def test_the_api_answers_wrong_json_types_naming_the_field(walked: Any, value: Any) -> None:
    site, flow = walked
    cases = {
        "carol": [
            (
                f"/api/datasets/{flow.dataset}/plans/preview",
                [
                    "text",
                    "name",
                    "ldp_epsilon",
                    "harm_tier",
                    "method_0",
                    "bounds_0",
                    "domain_0",
                    "epsilon_0",
                ],
            ),
            (f"/api/datasets/{flow.dataset}/plans", ["text", "name"]),
            (f"/api/plans/{flow.plan}/versions", ["text", "note"]),
            (f"/api/plans/{flow.plan}/versions/1/jobs", ["kind"]),
            (f"/api/datasets/{flow.dataset}/retention", ["retention_days"]),
            (f"/api/datasets/{flow.dataset}/delete", ["confirm"]),
            ("/api/account/tokens", ["name"]),
            ("/api/account/password", ["current_password", "new_password"]),
        ],
        "oscar": [("/api/policy", ["max_ldp_epsilon", "min_k", "allowed_methods", "four_eyes"])],
        "admin": [("/api/admin/users", ["username", "role", "password"])],
    }
    for who, routes in cases.items():
        client = site.login(who)
        for path, names in routes:
            for name in names:
                before = verify(site.platform).entries
                response = client.post(path, json={name: value})
                where = f"{path} {name}={value!r}: {response.status_code}"
                assert response.status_code < 500, where
                if response.status_code >= 400:
                    assert "error" in response.json(), (where, response.text)
                    error = response.json()["error"]
                    assert error["field"], where
                    assert error["field"] in error["message"], where
                    assert verify(site.platform).entries == before, where
