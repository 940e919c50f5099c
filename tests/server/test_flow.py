"""The platform's flows through the API, on SQLite and on PostgreSQL."""

from __future__ import annotations

import csv
import io

from sqlalchemy import select

from veil.server.models import BudgetEntry

from .conftest import PLAN, Site, adult_csv, release_flow, upload, upload_profiled


def test_upload_profiles_the_table_and_shows_the_risk_summary(site: Site) -> None:
    carol = site.login("carol")
    response = upload(carol, adult_csv(3000))
    assert response.status_code == 201
    pending = carol.get(f"/api/datasets/{response.json()['id']}").json()["dataset"]
    # The request stored and checked the file; the profile comes from a worker.
    assert pending["profile_status"] == "pending" and pending["profile"]["rows"] is None
    assert [c["name"] for c in pending["profile"]["columns"]][:2] == ["age", "workclass"]
    refused = carol.get(f"/api/datasets/{response.json()['id']}/plans/new")
    assert refused.status_code == 409 and "profile is pending" in refused.text
    assert site.work() == ["done"]
    dataset = carol.get(f"/api/datasets/{response.json()['id']}").json()["dataset"]
    assert dataset["profile_status"] == "done"
    assert dataset["custody"] == "encrypted"
    assert dataset["profile"]["rows"] == 3000
    types = {c["name"]: c["type"] for c in dataset["profile"]["columns"]}
    assert types["age"] == "integer" and types["workclass"] == "text"
    assert {"sex", "race"} <= set(dataset["risk"]["quasi_identifiers"])
    assert dataset["risk"]["summary"]["n_records"] == 3000
    # The stored file is ciphertext: no record of the upload is readable in it.
    stored = list((site.platform.config.data_dir / "datasets").iterdir())
    assert len(stored) == 1 and b"Bachelors" not in stored[0].read_bytes()


def test_release_four_eyes_publication_and_download(site: Site) -> None:
    flow = release_flow(site, publish=False)
    carol, cedric, dana = site.login("carol"), site.login("cedric"), site.login("dana")
    # Not published yet: the data user sees nothing, the owner cannot publish alone.
    assert dana.get("/api/catalogue").json()["releases"] == []
    refused = carol.post(f"/api/releases/{flow.release}/publish")
    assert refused.status_code == 409 and "four-eyes" in refused.json()["error"]["message"]
    assert carol.post(f"/api/releases/{flow.release}/request-approval").status_code == 200
    assert carol.post(f"/api/releases/{flow.release}/approve").status_code == 403
    assert cedric.get(f"/releases/{flow.release}/report").status_code == 200
    assert cedric.post(f"/api/releases/{flow.release}/approve").status_code == 200
    assert carol.post(f"/api/releases/{flow.release}/publish").status_code == 200
    listing = dana.get("/api/catalogue").json()["releases"]
    assert [r["id"] for r in listing] == [flow.release]
    assert listing[0]["totals"]["ldp"]["epsilon"] == 2.0
    download = dana.get(f"/catalogue/{flow.release}/download")
    assert download.status_code == 200
    rows = list(csv.reader(io.StringIO(download.text)))
    assert rows[0] == ["age", "sex", "salary-class"] and len(rows) == 2001
    manifest = dana.get(f"/catalogue/{flow.release}/manifest.json").json()
    assert manifest["outputs"]["release"]["rows"] == 2000
    assert "custodian" not in download.text


def test_the_dataset_ledger_counts_every_release_and_refuses_what_it_cannot_pay(site: Site) -> None:
    oscar = site.login("oscar")
    assert (
        oscar.post("/api/policy", json={"dataset_ldp_epsilon": "3", "four_eyes": "on"}).status_code
        == 200
    )
    flow = release_flow(site, publish=False)
    carol = site.login("carol")
    ledger = carol.get(f"/api/datasets/{flow.dataset}").json()["ledger"]
    assert ledger["spent"]["ldp_epsilon"] == 2.0 and ledger["remaining"]["ldp_epsilon"] == 1.0
    # A second release of the same plan needs 2.0; only 1.0 remains.
    again = carol.post(f"/api/plans/{flow.plan}/versions/1/jobs", json={"kind": "run"})
    assert again.status_code == 422
    assert "dataset budget ldp_epsilon" in again.json()["error"]["message"]
    with site.platform.db.session() as session:
        states = session.scalars(select(BudgetEntry.state)).all()
    assert states == ["spent"]


def test_an_over_policy_plan_is_refused_and_nothing_is_stored(site: Site) -> None:
    oscar, carol = site.login("oscar"), site.login("carol")
    dataset = upload_profiled(site, carol, adult_csv(500))
    assert (
        oscar.post("/api/policy", json={"max_ldp_epsilon": "1.0", "four_eyes": "on"}).status_code
        == 200
    )
    refused = carol.post(f"/api/datasets/{dataset}/plans", json={"name": "p", "text": PLAN})
    assert refused.status_code == 422
    assert "policy.max_ldp_epsilon" in refused.text
    page = carol.get(f"/api/datasets/{dataset}").json()
    assert page["plans"] == []


def test_policy_changed_after_queueing_is_checked_again_when_the_job_runs(site: Site) -> None:
    carol, oscar = site.login("carol"), site.login("oscar")
    dataset = upload_profiled(site, carol, adult_csv(500))
    plan = carol.post(f"/api/datasets/{dataset}/plans", json={"name": "p", "text": PLAN}).json()
    job = carol.post(f"/api/plans/{plan['plan']}/versions/1/jobs", json={"kind": "run"}).json()
    assert oscar.post("/api/policy", json={"allowed_methods": "keep, drop"}).status_code == 200
    assert site.work() == ["failed"]
    failed = carol.get(f"/api/jobs/{job['id']}").json()["job"]
    assert "policy.allowed_methods" in failed["error"]
    assert not (site.platform.config.data_dir / "releases" / "x").exists()


def test_dry_run_gives_the_ledger_and_versions_diff(site: Site) -> None:
    carol = site.login("carol")
    dataset = upload_profiled(site, carol, adult_csv(500))
    plan = carol.post(f"/api/datasets/{dataset}/plans", json={"name": "p", "text": PLAN}).json()[
        "plan"
    ]
    edited = PLAN.replace("epsilon: 2.0", "epsilon: 1.0")
    assert (
        carol.post(f"/api/plans/{plan}/versions", json={"text": edited, "note": "less"}).status_code
        == 201
    )
    detail = carol.get(f"/api/plans/{plan}").json()
    assert [v["number"] for v in detail["versions"]] == [1, 2]
    assert detail["latest"]["expected"][0]["column"] == "age"
    compare = carol.get(f"/api/plans/{plan}/compare?a=1&b=2").json()
    assert (
        "-  ldp: {epsilon: 2.0}" in compare["diff"] and "+  ldp: {epsilon: 1.0}" in compare["diff"]
    )
    job = carol.post(f"/api/plans/{plan}/versions/2/jobs", json={"kind": "dry_run"}).json()
    assert site.work() == ["done"]
    done = carol.get(f"/api/jobs/{job['id']}").json()["job"]
    assert done["result"]["dry_run"] and "epsilon=1" in done["result"]["ledger_text"]


def test_delete_after_publish_destroys_the_key_and_the_audit_log_proves_it(site: Site) -> None:
    flow = release_flow(site, publish=False)
    carol = site.login("carol")
    assert (
        carol.post(
            f"/api/datasets/{flow.dataset}/retention", json={"delete_after_publish": "on"}
        ).status_code
        == 200
    )
    assert carol.post(f"/api/releases/{flow.release}/request-approval").status_code == 200
    assert site.login("cedric").post(f"/api/releases/{flow.release}/approve").status_code == 200
    assert carol.post(f"/api/releases/{flow.release}/publish").status_code == 200
    dataset = carol.get(f"/api/datasets/{flow.dataset}").json()["dataset"]
    assert dataset["custody"] == "deleted" and "publishing" in dataset["deletion_reason"]
    assert list((site.platform.config.data_dir / "datasets").iterdir()) == []
    log = site.login("admin").get("/api/admin/audit").json()
    assert log["ok"]
    deletion = [e for e in log["log"] if e["action"] == "dataset.delete"]
    assert len(deletion) == 1 and dataset["cipher_sha256"] in deletion[0]["detail"]
    # Nothing can run on a deleted dataset.
    refused = carol.post(f"/api/plans/{flow.plan}/versions/1/jobs", json={"kind": "run"})
    assert refused.status_code == 409
