"""Sign-in throttling that works for the users, one-time passwords, and password rules.

* Failures back off per account, but never from an address the account signs in from:
  an attacker's wrong passwords cannot keep the only admin out.
* Unknown, locked (backing off) and wrong answers are one and the same.
* ``X-Forwarded-For`` is believed only from a proxy named in the configuration.
* Once an address is throttled, accounts that signed in from it still sign in.
* The first admin's one-time password signs in once, into a session that must change
  it; passwords are refused when common, repeated or holding the user name.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from veil.masking import SecretKey
from veil.server import ServerConfig, create_app, ensure_user, open_platform
from veil.server.security import check_password_strength, common_passwords
from veil.server.web.proxy import client_address

from .conftest import PASSWORDS, Site, _site

_WRONG = "not-the-right-one-9"


def _try(site: Any, name: str, password: str, address: str, **headers: str) -> Any:
    return site.client(address).post(
        "/api/login", json={"username": name, "password": password}, headers=headers
    )


def test_an_attackers_failures_never_lock_the_admin_out_of_their_own_address(
    tmp_path: Path,
) -> None:
    site = _site(tmp_path, None, max_lockout_failures=3)
    assert _try(site, "admin", PASSWORDS["admin"], "10.0.0.1").status_code == 200
    for _ in range(8):
        assert _try(site, "admin", _WRONG, "203.0.113.7").status_code == 422
    # The attacker's address, and any new one, now waits: even the right password is
    # refused there, with the answer a wrong one gets.
    held = _try(site, "admin", PASSWORDS["admin"], "203.0.113.7")
    new = _try(site, "admin", PASSWORDS["admin"], "198.51.100.4")
    wrong = _try(site, "admin", _WRONG, "10.0.0.2")
    assert held.status_code == new.status_code == wrong.status_code == 422
    assert held.json() == new.json() == wrong.json()
    # From the admin's own address: signed in at once.
    assert _try(site, "admin", PASSWORDS["admin"], "10.0.0.1").status_code == 200
    users = site.login("admin", "10.0.0.1").get("/api/admin/users").json()["users"]
    admin = next(u for u in users if u["username"] == "admin")
    assert admin["locked"]  # still backing off for the addresses it does not know


def test_unknown_locked_and_wrong_get_the_same_answer(tmp_path: Path) -> None:
    site = _site(tmp_path, None, max_lockout_failures=2)
    for _ in range(4):
        _try(site, "carol", _WRONG, "10.0.0.8")
    locked = _try(site, "carol", PASSWORDS["carol"], "10.0.0.8")
    unknown = _try(site, "nobody-at-all", PASSWORDS["carol"], "10.0.0.9")
    wrong = _try(site, "cedric", _WRONG, "10.0.0.9")
    for answer in (locked, unknown, wrong):
        assert answer.status_code == 422
        assert answer.json() == locked.json()
        assert "locked" not in answer.text
    # The page says the same.
    page = site.client("10.0.0.9")
    form = page.get("/login")
    token = form.text.split('name="csrf_token" value="')[1].split('"')[0]
    shown = page.post(
        "/login", data={"username": "nobody-at-all", "password": "x" * 12, "csrf_token": token}
    )
    assert shown.status_code == 422 and locked.json()["error"]["message"] in shown.text


def test_forwarded_addresses_count_only_from_a_configured_proxy(tmp_path: Path) -> None:
    site = _site(tmp_path, None, max_attempts_per_client=5)
    # From a peer that is no proxy, a rotating X-Forwarded-For changes nothing.
    answers = [
        _try(site, f"user{i}", _WRONG, "10.0.0.66", **{"X-Forwarded-For": f"192.0.2.{i}"})
        for i in range(8)
    ]
    assert [a.status_code for a in answers][-2:] == [429, 429]
    # Behind a configured proxy, the forwarded address is the client's.
    proxied = _site(
        tmp_path / "proxied", None, max_attempts_per_client=5, trusted_proxies=["10.0.0.0/24"]
    )
    answers = [
        _try(proxied, f"user{i}", _WRONG, "10.0.0.1", **{"X-Forwarded-For": f"192.0.2.{i}"})
        for i in range(8)
    ]
    assert {a.status_code for a in answers} == {422}
    # A client cannot add hops in front of the proxy's: the rightmost untrusted one counts.
    behind: Any = _Request("10.0.0.1", "1.2.3.4, 192.0.2.50")
    assert client_address(behind, ("10.0.0.0/24",)) == "192.0.2.50"
    direct: Any = _Request("10.9.9.9", "192.0.2.50")
    assert client_address(direct, ("10.0.0.0/24",)) == "10.9.9.9"


class _Request:
    def __init__(self, peer: str, forwarded: str) -> None:
        self.client = type("Peer", (), {"host": peer})()
        self.headers = {"x-forwarded-for": forwarded}


def test_a_throttled_address_still_signs_in_the_accounts_that_use_it(tmp_path: Path) -> None:
    site = _site(tmp_path, None, max_attempts_per_client=4)
    office = "10.1.1.1"
    assert site.login("carol", office).get("/api/me").status_code == 200
    for i in range(6):
        _try(site, f"typo{i}", _WRONG, office)
    assert _try(site, "carol", PASSWORDS["carol"], office).status_code == 200
    # An account never seen there is held back while the address is throttled.
    refused = _try(site, "cedric", PASSWORDS["cedric"], office)
    assert refused.status_code == 429 and refused.json()["error"]["field"] == "username"
    assert _try(site, "cedric", PASSWORDS["cedric"], "10.2.2.2").status_code == 200


def test_the_first_admins_one_time_password_works_once_and_forces_a_new_one(
    tmp_path: Path,
) -> None:
    platform = open_platform(ServerConfig(tmp_path / "fresh"), key=SecretKey.generate())
    site = Site(platform, create_app(platform))
    once = ensure_user(platform, "root-admin", "admin")
    assert once is not None
    first = site.client("10.0.0.1")
    signed = first.post("/api/login", json={"username": "root-admin", "password": once})
    assert signed.status_code == 200 and signed.json()["must_change_password"]
    csrf = first.get("/api/me").json()["csrf_token"]
    first.headers["X-CSRF-Token"] = csrf
    # Nothing but the password change in that session.
    refused = first.get("/api/admin/users")
    assert refused.status_code == 403 and refused.json()["error"]["field"] == "password"
    page = first.get("/admin/users", follow_redirects=False)
    assert page.status_code == 303 and page.headers["location"] == "/account?must_change=1"
    assert "one-time password" in first.get("/account").text
    # The one-time password does not sign in a second time.
    again = site.client("10.0.0.1").post(
        "/api/login", json={"username": "root-admin", "password": once}
    )
    assert again.status_code == 422
    changed = first.post(
        "/api/account/password",
        json={"current_password": once, "new_password": "my-own-choice-of-words"},
    )
    assert changed.status_code == 200
    assert first.get("/api/admin/users").status_code == 200
    assert (
        site.login("root-admin", "10.0.0.1", "my-own-choice-of-words").get("/api/me").status_code
        == 200
    )


@pytest.mark.parametrize(
    ("password", "rule"),
    [
        ("aaaaaaaaaaaa", "repeats too few characters"),
        ("abababababab", "repeats too few characters"),
        ("password1234", "most common passwords"),
        ("iloveyou2024!", "most common passwords"),
        ("abcdefghijklm", "consecutive"),
        ("123456789012", "consecutive"),
        ("new-hire-paula-2026", "user name"),
        ("short", "at least 12"),
    ],
)
def test_weak_passwords_are_refused_naming_the_field(
    tmp_path: Path, password: str, rule: str
) -> None:
    site = _site(tmp_path, None)
    admin = site.login("admin")
    made = admin.post(
        "/api/admin/users", json={"username": "paula", "role": "curator", "password": password}
    )
    assert made.status_code == 422
    error = made.json()["error"]
    assert error["field"] == "password" and rule in error["message"]
    changed = admin.post(
        "/api/account/password",
        json={
            "current_password": PASSWORDS["admin"],
            "new_password": password.replace("paula", "admin"),
        },
    )
    assert changed.status_code == 422 and changed.json()["error"]["field"] == "new_password"


def test_the_common_password_list_ships_with_veil_and_works_offline() -> None:
    listed = common_passwords()
    assert len(listed) == 30_000 and {"password", "123456", "qwerty"} <= listed
    check_password_strength("a few unrelated words here")
