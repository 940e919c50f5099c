"""Four-eyes and who made whose account: the ``created_by`` flags on an approval (issue 19
item 12), through the HTTP API, on SQLite and on PostgreSQL.

Issue 19: "An admin can create a second curator account and approve their own release
[...] An account created by the approver, or one sharing the requester's sign-in
history, is flagged on the approval." A flag does not refuse the approval; it is stored
on the release, shown with it and written into the ``release.approve`` audit event.

An account has one role for life and only admins make accounts, while only curators own
datasets, ask for approval and approve. So an admin has no release of their own, and an
admin cannot approve: the red team's admin acts through curator accounts they made. What
links those accounts to the admin is who made them and where each signed in. Through
the HTTP API the requester's and the approver's accounts are always made by an admin
(or by the platform), never one by the other; the direct flags ("the approver created
the requester's account", and the reverse) are therefore reached here by recording that
link in the database, as an account whose role changed or a database restored from
elsewhere would hold it, while the approval itself goes through the API.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from sqlalchemy import select

from veil.server.models import User

from .conftest import PASSWORDS, PLAN, Site, adult_csv, upload_profiled

# Where each person signs in from.
_ADMIN_DESK = "10.0.0.5"
_LAPTOP = "10.0.0.7"
_OTHER_DESK = "10.0.0.8"
_FAR_DESK = "10.0.0.9"

# Admin-made accounts: one-time password, then their own.
_FIRST = "first-one-time-secret-19"
_OWN = "harbour-lamp-quiet-42"


def _admin(site: Site) -> Any:
    return site.login("admin", _ADMIN_DESK)


def _make_curator(site: Site, admin: Any, name: str, address: str) -> tuple[int, Any]:
    """The admin makes curator ``name``; its user signs in from ``address`` and sets a
    password of their own. Returns its id and signed-in client."""
    made = admin.post(
        "/api/admin/users", json={"username": name, "role": "curator", "password": _FIRST}
    )
    assert made.status_code == 201, made.text
    client = site.login(name, address, _FIRST)
    changed = client.post(
        "/api/account/password", json={"current_password": _FIRST, "new_password": _OWN}
    )
    assert changed.is_success, changed.text
    return int(made.json()["id"]), client


def _assign(admin: Any, dataset: int, user_id: int) -> None:
    done = admin.post(
        f"/api/admin/datasets/{dataset}/reviewers", json={"user_id": user_id, "action": "assign"}
    )
    assert done.status_code == 200, done.text


def _awaiting(site: Site, owner: Any) -> tuple[int, int]:
    """``owner`` uploads, plans and runs; their release's dataset and id (a draft)."""
    dataset = upload_profiled(site, owner, adult_csv(300))
    plan = owner.post(f"/api/datasets/{dataset}/plans", json={"name": "p", "text": PLAN})
    assert plan.status_code == 201, plan.text
    job = owner.post(f"/api/plans/{plan.json()['plan']}/versions/1/jobs", json={"kind": "run"})
    assert job.status_code == 201, job.text
    assert site.work() == ["done"]
    return dataset, int(owner.get(f"/api/jobs/{job.json()['id']}").json()["release"])


def _request(owner: Any, release: int) -> None:
    asked = owner.post(f"/api/releases/{release}/request-approval")
    assert asked.status_code == 200, asked.text


def _asked(site: Site, admin: Any, owner: Any, reviewer_id: int) -> tuple[int, int]:
    """``owner`` runs a release, the admin assigns the reviewer, the owner asks for
    approval; the dataset and the release."""
    dataset, release = _awaiting(site, owner)
    _assign(admin, dataset, reviewer_id)
    _request(owner, release)
    return dataset, release


def _user_id(admin: Any, name: str) -> int:
    users = admin.get("/api/admin/users").json()["users"]
    return int(next(u["id"] for u in users if u["username"] == name))


def _approve(approver: Any, release: int) -> list[str]:
    """``approver`` approves; the flags the answer carries (checked against the stored
    release and the audit event)."""
    approved = approver.post(f"/api/releases/{release}/approve")
    assert approved.status_code == 200, approved.text
    flags: list[str] = approved.json()["approval_flags"]
    return flags


def _recorded(site: Site, owner: Any, release: int, flags: list[str]) -> None:
    """The flags are on the release as its owner sees it and in the approval's audit event."""
    view = owner.get(f"/api/releases/{release}").json()["release"]
    assert view["status"] == "approved" and view["approval_flags"] == flags
    page = owner.get(f"/releases/{release}")
    assert page.status_code == 200
    assert ('id="approval-flags"' in page.text) == bool(flags)
    log = _admin(site).get("/api/admin/audit").json()["log"]
    approval = [e for e in log if e["action"] == "release.approve"]
    assert len(approval) == 1 and json.loads(approval[0]["detail"])["flags"] == flags


def test_the_admins_puppet_approving_the_admins_own_release_is_flagged(site: Site) -> None:
    """The red team's case: the admin makes a curator account for their own work and a
    second to approve it. The admin cannot approve, nor can the requester; the puppet
    can, and its approval is flagged naming the admin."""
    admin = _admin(site)
    own_id, own = _make_curator(site, admin, "ada-works", _ADMIN_DESK)
    puppet_id, puppet = _make_curator(site, admin, "ada-checks", _FAR_DESK)
    dataset, release = _asked(site, admin, own, puppet_id)
    # Neither the admin nor the requester approves.
    assert admin.post(f"/api/releases/{release}/approve").status_code in (403, 404)
    refused = own.post(f"/api/releases/{release}/approve")
    assert refused.status_code == 403 and "four-eyes" in refused.json()["error"]["message"]
    # The admin cannot be assigned to review either: a reviewer is a curator.
    admin_id = _user_id(admin, "admin")
    assert (
        admin.post(
            f"/api/admin/datasets/{dataset}/reviewers",
            json={"user_id": admin_id, "action": "assign"},
        ).status_code
        == 422
    )
    flags = _approve(puppet, release)
    assert flags == [
        "the approver's account was created by admin, who signed in from the requester's "
        f"address ({_ADMIN_DESK})"
    ]
    _recorded(site, own, release, flags)
    log = admin.get("/api/admin/audit").json()["log"]
    made = {
        json.loads(e["detail"])["username"]: json.loads(e["detail"])["created_by"]
        for e in log
        if e["action"] == "account.create"
    }
    assert made["ada-works"] == "admin" and made["ada-checks"] == "admin"
    assert own_id != puppet_id


def test_the_admins_puppet_requesting_and_the_admins_desk_approving_is_flagged(
    site: Site,
) -> None:
    """The reverse: the admin's account for their own work asks from a laptop, and the
    approval comes from the admin's own desk, through a second account the admin made."""
    admin = _admin(site)
    _, own = _make_curator(site, admin, "ada-works", _LAPTOP)
    puppet_id, puppet = _make_curator(site, admin, "ada-checks", _ADMIN_DESK)
    _, release = _asked(site, admin, own, puppet_id)
    flags = _approve(puppet, release)
    assert flags == [
        "the requester's account was created by admin, who signed in from the approver's "
        f"address ({_ADMIN_DESK})"
    ]
    _recorded(site, own, release, flags)


def _set_created_by(site: Site, name: str, creator: str) -> None:
    """Record that ``creator`` made ``name``'s account (the API never links two curators)."""
    with site.platform.db.session() as session:
        users = {u.username: u for u in session.scalars(select(User))}
        users[name].created_by = users[creator].id
        session.commit()


@pytest.mark.parametrize(
    ("made", "maker", "flag"),
    [
        ("carol", "cedric", "the approver cedric created the requester's account"),
        ("cedric", "carol", "the requester carol created the approver's account"),
    ],
    ids=["approver-made-the-requester", "requester-made-the-approver"],
)
def test_a_direct_created_by_link_is_flagged_whichever_way_it_runs(
    site: Site, made: str, maker: str, flag: str
) -> None:
    """The approver made the requester's account, or the requester the approver's: one
    flag naming who made whom, with no shared address to add another."""
    _set_created_by(site, made, maker)
    carol = site.login("carol", _LAPTOP)
    admin = _admin(site)
    _, release = _asked(site, admin, carol, _user_id(admin, "cedric"))
    cedric = site.login("cedric", _FAR_DESK, PASSWORDS["cedric"])
    flags = _approve(cedric, release)
    assert flags == [flag]
    _recorded(site, carol, release, flags)


def test_an_unrelated_reviewer_is_not_flagged_though_the_same_admin_made_both(
    site: Site,
) -> None:
    """Two curators the admin made, each signing in from their own desk and the admin
    from a third: an approval with no flag. One admin making every account is the
    ordinary case and links nobody; so the red team's admin who signs in to each of the
    three accounts from a different machine is not flagged either, and only the audit
    log's ``account.create`` entries (who made whom) show it to a review."""
    admin = _admin(site)
    _, rhea = _make_curator(site, admin, "rhea", _OTHER_DESK)
    vik_id, vik = _make_curator(site, admin, "vik", _FAR_DESK)
    _, release = _asked(site, admin, rhea, vik_id)
    flags = _approve(vik, release)
    assert flags == []
    _recorded(site, rhea, release, flags)
