"""The budget reservation is atomic: concurrent run requests never reserve past the budget.

Eight run requests for a plan costing epsilon 2 are sent at once, over HTTP to the
served platform, against a dataset budget of 5: exactly two are accepted (4 reserved),
six are refused naming the budget, on SQLite and on PostgreSQL. The worker's run-time
check is the same function: a budget lowered after queueing fails the run with the
queue's message.
"""

from __future__ import annotations

import threading

import httpx
from sqlalchemy import select

from veil.server.models import BudgetEntry

from .conftest import PLAN, Site, adult_csv, serving, upload_profiled

_REQUESTS = 8


def _plan(site: Site, budget: str) -> int:
    oscar, carol = site.login("oscar"), site.login("carol")
    assert oscar.post("/api/policy", json={"dataset_ldp_epsilon": budget}).status_code == 200
    dataset = upload_profiled(site, carol, adult_csv(300))
    plan = carol.post(f"/api/datasets/{dataset}/plans", json={"name": "p", "text": PLAN})
    assert plan.status_code == 201, plan.text
    return int(plan.json()["plan"])


def test_concurrent_run_requests_reserve_no_more_than_the_dataset_budget(site: Site) -> None:
    plan = _plan(site, "5")
    carol = site.login("carol")
    headers = {
        "Cookie": f"veil_session={carol.cookies.get('veil_session')}",
        "X-CSRF-Token": carol.headers["X-CSRF-Token"],
    }
    answers: list[httpx.Response] = []
    start = threading.Barrier(_REQUESTS)

    def ask(url: str) -> None:
        with httpx.Client(base_url=url, timeout=120) as web:
            start.wait()
            answers.append(
                web.post(
                    f"/api/plans/{plan}/versions/1/jobs", json={"kind": "run"}, headers=headers
                )
            )

    with serving(site, worker=False) as url:
        threads = [threading.Thread(target=ask, args=(url,)) for _ in range(_REQUESTS)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(timeout=180)
    codes = sorted(a.status_code for a in answers)
    assert codes == [201, 201] + [422] * (_REQUESTS - 2), [a.text[:200] for a in answers]
    for refused in (a for a in answers if a.status_code == 422):
        error = refused.json()["error"]
        assert error["field"] == "budget" and "dataset budget ldp_epsilon" in error["message"]
    with site.platform.db.session() as session:
        entries = session.scalars(select(BudgetEntry)).all()
    assert [e.state for e in entries] == ["reserved", "reserved"]
    assert sum(e.ldp_epsilon for e in entries) == 4.0
    # The run-time check holds both: they run and spend what was reserved.
    assert site.work() == ["done", "done"]
    ledger = carol.get(f"/api/datasets/{_dataset_of(site, plan)}").json()["ledger"]
    assert ledger["spent"]["ldp_epsilon"] == 4.0 and ledger["reserved"]["ldp_epsilon"] == 0.0


def _dataset_of(site: Site, plan: int) -> int:
    return int(site.login("carol").get(f"/api/plans/{plan}").json()["plan"]["dataset_id"])


def test_the_run_checks_the_budget_with_the_queues_own_check(site: Site) -> None:
    plan = _plan(site, "5")
    carol, oscar = site.login("carol"), site.login("oscar")
    queued = carol.post(f"/api/plans/{plan}/versions/1/jobs", json={"kind": "run"})
    assert queued.status_code == 201
    # The budget is lowered after queueing: the same check, at run time, refuses it.
    assert oscar.post("/api/policy", json={"dataset_ldp_epsilon": "1"}).status_code == 200
    refused_now = carol.post(f"/api/plans/{plan}/versions/1/jobs", json={"kind": "run"})
    assert refused_now.status_code == 422
    assert site.work() == ["failed"]
    failed = carol.get(f"/api/jobs/{queued.json()['id']}").json()["job"]
    same = "dataset budget ldp_epsilon: the plan needs 2 per record"
    assert same in refused_now.json()["error"]["message"] and same in failed["error"]
    assert refused_now.json()["error"]["field"] == "budget"
    with site.platform.db.session() as session:
        assert session.scalars(select(BudgetEntry)).all() == []
