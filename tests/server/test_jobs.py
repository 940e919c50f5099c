"""Jobs: cancel, and a restart in the middle of a run (a worker killed by SIGKILL)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from sqlalchemy import select

from veil.masking import SecretKey
from veil.server import ServerConfig, create_app, open_platform
from veil.server.accounts import create_user
from veil.server.models import BudgetEntry, Job

from .conftest import PASSWORDS, PLAN, ROLES, Site, adult_csv, upload_profiled

_WORKER = """
import sys
from veil.server import ServerConfig, open_platform
from veil.server.jobs import claim
from veil.server.worker import execute
config = ServerConfig(sys.argv[1])
platform = open_platform(config)
job = claim(platform.db, "doomed-worker")
execute(platform.db, config, platform.keyring, job)
"""


def _queued_run(site: Site, rows: int) -> tuple[int, int]:
    carol = site.login("carol")
    dataset = upload_profiled(site, carol, adult_csv(rows))
    plan = carol.post(f"/api/datasets/{dataset}/plans", json={"name": "p", "text": PLAN}).json()
    job = carol.post(f"/api/plans/{plan['plan']}/versions/1/jobs", json={"kind": "run"}).json()
    return plan["plan"], job["id"]


def test_a_queued_job_cancelled_frees_its_reservation(sqlite_site: Site) -> None:
    _, job = _queued_run(sqlite_site, 200)
    carol = sqlite_site.login("carol")
    assert carol.post(f"/api/jobs/{job}/cancel").json()["status"] == "cancelled"
    assert sqlite_site.work() == []
    with sqlite_site.platform.db.session() as session:
        assert session.scalars(select(BudgetEntry)).all() == []


def test_a_running_job_stops_at_its_next_check_and_commits_nothing(sqlite_site: Site) -> None:
    _, job = _queued_run(sqlite_site, 200)
    from veil.server.jobs import claim
    from veil.server.worker import execute

    platform = sqlite_site.platform
    claimed = claim(platform.db, "w")
    with platform.db.session() as session:
        row = session.get(Job, claimed)
        row.cancel_requested = True
    assert execute(platform.db, platform.config, platform.keyring, claimed) == "cancelled"
    assert not any((platform.config.data_dir / "releases").rglob("manifest.json"))
    assert list((platform.config.data_dir / "work").iterdir()) == []
    view = sqlite_site.login("carol").get(f"/api/jobs/{job}").json()["job"]
    assert view["status"] == "cancelled" and "nothing was committed" in view["error"]


def test_a_restart_mid_job_marks_it_interrupted_with_no_partial_output(tmp_path: Path) -> None:
    key = SecretKey.generate()
    config = ServerConfig(tmp_path / "data")
    platform = open_platform(config, key=key)
    with platform.db.session() as session:
        for name, role in ROLES.items():
            create_user(session, None, name, role, PASSWORDS[name])
    site = Site(platform, create_app(platform))
    _, job = _queued_run(site, 32561)
    env = {**os.environ, "VEIL_SERVER_KEY": key.reveal().hex()}
    worker = subprocess.Popen([sys.executable, "-c", _WORKER, str(config.data_dir)], env=env)
    try:
        deadline = time.monotonic() + 120
        phase = None
        while time.monotonic() < deadline:
            with platform.db.session() as session:
                phase = (session.get(Job, job).progress or {}).get("phase")
            if phase in ("protect", "write", "evaluate"):
                break
            time.sleep(0.05)
        assert phase in ("protect", "write", "evaluate"), phase
        os.kill(worker.pid, signal.SIGKILL)
    finally:
        worker.wait(timeout=30)
    # The platform restarts: the job is marked, its plain input and its staging are gone.
    restarted = create_app(open_platform(config, key=key))
    carol = Site(platform, restarted).login("carol")
    view = carol.get(f"/api/jobs/{job}").json()["job"]
    assert view["status"] == "interrupted" and "nothing was released" in view["error"]
    assert list((config.data_dir / "work").iterdir()) == []
    assert not (config.data_dir / "releases").exists() or not any(
        (config.data_dir / "releases").iterdir()
    )
    with platform.db.session() as session:
        assert session.scalars(select(BudgetEntry)).all() == []
    again = carol.post(f"/api/jobs/{job}/rerun")
    assert again.status_code == 201 and again.json()["rerun_of"] == job
    assert Site(platform, restarted).work() == ["done"]
    assert carol.get(f"/api/jobs/{again.json()['id']}").json()["release"] is not None
