"""A killed worker: its job is interrupted, its budget freed, no plain data left, and a new
worker runs the next job, with no restart of the server.

``veil serve`` runs as a person runs it (its own process, one supervised worker). While
a release of Adult (with a column of names that the plan drops) runs, only the worker
process is killed with SIGKILL. Within 30 s the job must be marked interrupted and its
reservation released; no file under the data folder or the temporary folder holds a
name from the table (the records were decrypted into the dead worker's memory only);
a new worker process runs; and a release queued next runs to its end.
"""

from __future__ import annotations

import io
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx

from veil.datasets import load_adult
from veil.masking import SecretKey
from veil.server import ServerConfig, create_app, open_platform
from veil.server.accounts import create_user

from .conftest import PASSWORDS, PLAN, ROLES, Site, upload_profiled
from .test_serve import _alive, _children, _free_port

_MARKER = b"Zyxwvut-Name-"


def _table() -> bytes:
    frame = load_adult()
    frame["name"] = [f"{_MARKER.decode()}{i:06d}" for i in range(len(frame))]
    buffer = io.BytesIO()
    frame.to_csv(buffer, index=False)
    return buffer.getvalue()


def _workers(pid: int) -> list[int]:
    """The supervised workers among ``pid``'s children (spawned, not the resource tracker)."""
    found = []
    for child in _children(pid):
        try:
            command = Path(f"/proc/{child}/cmdline").read_bytes()
        except OSError:
            continue
        spawned = b"multiprocessing.spawn" in command and b"resource_tracker" not in command
        if spawned and _alive(child):
            found.append(child)
    return found


def _holding(folder: Path, since: float) -> list[str]:
    """Files under ``folder`` changed since ``since`` that hold a name of the table."""
    hits = []
    for path in folder.rglob("*"):
        try:
            if not path.is_file() or path.stat().st_mtime < since - 1:
                continue
            if path.stat().st_size < 512 << 20 and _MARKER in path.read_bytes():
                hits.append(str(path))
        except OSError:
            continue
    return hits


def _prepared(tmp_path: Path, key: SecretKey) -> tuple[ServerConfig, int]:
    config = ServerConfig(tmp_path / "data")
    platform = open_platform(config, key=key)
    with platform.db.session() as session:
        for name, role in ROLES.items():
            create_user(session, None, name, role, PASSWORDS[name])
    site = Site(platform, create_app(platform), key)
    carol = site.login("carol")
    dataset = upload_profiled(site, carol, _table(), name="adult with names")
    plan = carol.post(f"/api/datasets/{dataset}/plans", json={"name": "p", "text": PLAN})
    assert plan.status_code == 201, plan.text
    platform.db.dispose()
    return config, int(plan.json()["plan"])


def _status(web: httpx.Client, job: int) -> dict[str, Any]:
    return dict(web.get(f"/api/jobs/{job}/progress").json()["job"])


def test_a_killed_worker_is_replaced_and_its_job_interrupted_with_no_restart(
    tmp_path: Path,
) -> None:
    key = SecretKey.generate()
    config, plan = _prepared(tmp_path, key)
    port = _free_port()
    env = {
        **os.environ,
        "VEIL_SERVER_KEY": key.reveal().hex(),
        "XDG_CONFIG_HOME": str(tmp_path / "config"),
    }
    command = [sys.executable, "-c", "from veil.cli import main; main()", "serve"]
    log = tmp_path / "serve.log"
    server = subprocess.Popen(
        [*command, "--data", str(config.data_dir), "--port", str(port), "--insecure-cookies"],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=log.open("wb"),
    )
    url = f"http://127.0.0.1:{port}"
    try:
        web = httpx.Client(base_url=url, timeout=30)
        deadline = time.monotonic() + 90
        while True:
            try:
                if web.get("/login").status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            assert server.poll() is None, log.read_text()
            assert time.monotonic() < deadline, "veil serve did not answer within 90 s"
            time.sleep(0.2)
        signed = web.post("/api/login", json={"username": "carol", "password": PASSWORDS["carol"]})
        assert signed.status_code == 200
        web.headers["X-CSRF-Token"] = web.get("/api/me").json()["csrf_token"]
        deadline = time.monotonic() + 60
        while not _workers(server.pid):
            assert time.monotonic() < deadline, "no worker process started"
            time.sleep(0.2)
        (first,) = _workers(server.pid)
        job = web.post(f"/api/plans/{plan}/versions/1/jobs", json={"kind": "run"}).json()["id"]
        started = time.time()
        deadline = time.monotonic() + 120
        while (_status(web, job).get("progress") or {}).get("phase") not in (
            "protect",
            "write",
            "evaluate",
        ):
            assert time.monotonic() < deadline, _status(web, job)
            time.sleep(0.05)
        # The worker that started is the one running the job (none died on its own).
        assert _workers(server.pid) == [first], log.read_text()
        os.kill(first, signal.SIGKILL)
        killed = time.monotonic()
        while (view := _status(web, job))["status"] == "running":
            assert time.monotonic() - killed < 30, "the job stayed running 30 s after the kill"
            time.sleep(0.2)
        assert view["status"] == "interrupted" and "nothing was released" in view["error"]
        dataset = web.get(f"/api/plans/{plan}").json()["plan"]["dataset_id"]
        ledger = web.get(f"/api/datasets/{dataset}").json()["ledger"]
        assert ledger["reserved"]["ldp_epsilon"] == 0.0 and ledger["spent"]["ldp_epsilon"] == 0.0
        # No plain record on disk: not in the data folder, not in the temporary folder.
        assert _holding(config.data_dir, started) == []
        assert _holding(Path(tempfile.gettempdir()), started) == []
        # A new worker took the dead one's place, and the next job runs on it.
        deadline = time.monotonic() + 60
        while not (replaced := [p for p in _workers(server.pid) if p != first]):
            assert time.monotonic() < deadline, "the worker was not restarted"
            time.sleep(0.2)
        assert not _alive(first) and len(replaced) == 1
        again = web.post(f"/api/jobs/{job}/rerun")
        assert again.status_code == 201
        deadline = time.monotonic() + 180
        while (status := _status(web, again.json()["id"])["status"]) in ("queued", "running"):
            assert time.monotonic() < deadline, "the next job did not finish"
            time.sleep(0.5)
        assert status == "done"
        assert server.poll() is None  # the same server all along
        web.close()
    finally:
        children = _children(server.pid)
        server.send_signal(signal.SIGTERM)
        server.wait(timeout=30)
        deadline = time.monotonic() + 20
        while any(_alive(c) for c in children) and time.monotonic() < deadline:
            time.sleep(0.2)
