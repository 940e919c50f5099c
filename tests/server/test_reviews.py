"""Four-eyes that two people keep: assigned reviewers, and flags on a doubtful approval.

Only the curators an admin assigned to a dataset see its pending releases (and their
confidential reports) and approve them. An approval is flagged when the approver
created the requester's account (or the reverse), when they signed in from one address,
or when the approver's account was made by someone who signs in from the requester's
address: the red team's admin who made a second curator to approve their own release.
The audit log says who created whom.
"""

from __future__ import annotations

import json

from veil.server.accounts import create_user

from .conftest import PLAN, Site, adult_csv, assign_reviewer, upload_profiled

_SOCK = "sock-puppet"
_SOCK_FIRST = "first-one-time-secret"
_SOCK_OWN = "puppets-own-choice-77"


def _draft(site: Site, carol_address: str) -> tuple[int, int]:
    """A draft release of Carol's (made from ``carol_address``): its dataset and id."""
    carol = site.login("carol", carol_address)
    dataset = upload_profiled(site, carol, adult_csv(300))
    plan = carol.post(f"/api/datasets/{dataset}/plans", json={"name": "p", "text": PLAN}).json()
    job = carol.post(f"/api/plans/{plan['plan']}/versions/1/jobs", json={"kind": "run"}).json()
    assert site.work() == ["done"]
    return dataset, int(carol.get(f"/api/jobs/{job['id']}").json()["release"])


def test_only_assigned_reviewers_see_and_approve_a_pending_release(sqlite_site: Site) -> None:
    site = sqlite_site
    with site.platform.db.session() as session:
        create_user(session, None, "cora", "curator", "another-curator-pw-3")
    dataset, release = _draft(site, "10.0.0.1")
    carol = site.login("carol", "10.0.0.1")
    refused = carol.post(f"/api/releases/{release}/request-approval")
    assert refused.status_code == 409 and "assign a reviewer" in refused.json()["error"]["message"]
    assign_reviewer(site, dataset, "cedric")
    assert carol.post(f"/api/releases/{release}/request-approval").status_code == 200
    cora = site.login("cora", "10.0.0.3", "another-curator-pw-3")
    assert cora.get(f"/api/releases/{release}").status_code == 404
    assert cora.get(f"/releases/{release}/report").status_code == 404
    assert cora.post(f"/api/releases/{release}/approve").status_code == 404
    assert cora.get("/api/").status_code in (200, 404)
    assert "reviews" not in cora.get("/").text or f"/releases/{release}" not in cora.get("/").text
    cedric = site.login("cedric", "10.0.0.2")
    assert f"/releases/{release}" in cedric.get("/").text
    assert cedric.get(f"/releases/{release}/report").status_code == 200
    approved = cedric.post(f"/api/releases/{release}/approve")
    assert approved.status_code == 200 and approved.json()["approval_flags"] == []


def test_an_approval_by_an_account_the_admin_made_from_the_requesters_machine_is_flagged(
    sqlite_site: Site,
) -> None:
    site = sqlite_site
    dataset, release = _draft(site, "10.0.0.1")
    # The admin signs in from Carol's machine and makes a second curator account.
    admin = site.login("admin", "10.0.0.1")
    made = admin.post(
        "/api/admin/users", json={"username": _SOCK, "role": "curator", "password": _SOCK_FIRST}
    )
    assert made.status_code == 201
    sock_id = made.json()["id"]
    assigned = admin.post(
        f"/api/admin/datasets/{dataset}/reviewers", json={"user_id": sock_id, "action": "assign"}
    )
    assert assigned.status_code == 200
    sock = site.login(_SOCK, "10.0.0.9", _SOCK_FIRST)
    assert sock.post(
        "/api/account/password",
        json={"current_password": _SOCK_FIRST, "new_password": _SOCK_OWN},
    ).is_success
    assert (
        site.login("carol", "10.0.0.1").post(f"/api/releases/{release}/request-approval").is_success
    )
    approved = sock.post(f"/api/releases/{release}/approve")
    assert approved.status_code == 200
    flags = approved.json()["approval_flags"]
    assert flags == [
        "the approver's account was created by admin, who signed in from the requester's "
        "address (10.0.0.1)"
    ]
    page = site.login("carol", "10.0.0.1").get(f"/releases/{release}")
    assert "created by admin" in page.text and 'id="approval-flags"' in page.text
    # The audit log says who created whom, and the approval event carries its flags.
    log = site.login("admin", "10.0.0.5").get("/api/admin/audit").json()["log"]
    created = next(e for e in log if e["action"] == "account.create" and _SOCK in e["detail"])
    assert created["actor"] == "admin" and json.loads(created["detail"])["created_by"] == "admin"
    approval = next(e for e in log if e["action"] == "release.approve")
    assert json.loads(approval["detail"])["flags"] == flags


def test_an_approver_sharing_the_requesters_sign_in_address_is_flagged(sqlite_site: Site) -> None:
    site = sqlite_site
    dataset, release = _draft(site, "10.0.0.1")
    assign_reviewer(site, dataset, "cedric")
    assert (
        site.login("carol", "10.0.0.1").post(f"/api/releases/{release}/request-approval").is_success
    )
    cedric = site.login("cedric", "10.0.0.1")
    flags = cedric.post(f"/api/releases/{release}/approve").json()["approval_flags"]
    assert flags == ["the requester and the approver signed in from the same address (10.0.0.1)"]
