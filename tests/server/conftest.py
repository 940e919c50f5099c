"""A platform per test, on SQLite and on the session's throw-away PostgreSQL server.

The PostgreSQL server is the vault tests' fixture (tests/masking/conftest.py), reused
here; each test gets a fresh database on it. Clients speak HTTPS to the in-process app
(``https://testserver``), so Secure cookies are sent as a browser would send them.
"""

from __future__ import annotations

import io
import os
import re
import secrets
import socket
import threading
import time
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml

from ..masking.conftest import postgres_server  # noqa: F401 (the shared fixture)

with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    from fastapi.testclient import TestClient

from veil.datasets import load_nyc_taxi
from veil.masking import SecretKey
from veil.release import example_plan
from veil.server import Platform, ServerConfig, create_app, open_platform
from veil.server.accounts import create_user
from veil.server.jobs import claim
from veil.server.worker import execute

PASSWORDS = {
    "admin": "keeper-of-accounts-1",
    "oscar": "operator-password",
    "carol": "curator-password-1",
    "cedric": "curator-password-2",
    "dana": "data-user-password",
}
ROLES = {
    "admin": "admin",
    "oscar": "operator",
    "carol": "curator",
    "cedric": "curator",
    "dana": "data_user",
}


@dataclass
class Site:
    """A platform, its app, and signed-in clients by user name."""

    platform: Platform
    app: Any
    key: SecretKey | None = None

    def client(self, address: str = "testclient") -> TestClient:
        return TestClient(self.app, base_url="https://testserver", client=(address, 50000))

    def login(
        self, username: str, address: str = "testclient", password: str | None = None
    ) -> TestClient:
        client = self.client(address)
        response = client.post(
            "/api/login",
            json={"username": username, "password": password or PASSWORDS[username]},
        )
        assert response.status_code == 200, response.text
        client.headers["X-CSRF-Token"] = client.get("/api/me").json()["csrf_token"]
        return client

    def work(self) -> list[str]:
        """Run every queued job, as a worker would."""
        done = []
        while (job := claim(self.platform.db, "test-worker")) is not None:
            done.append(execute(self.platform.db, self.platform.config, self.platform.keyring, job))
        return done


def _site(tmp_path: Path, url: str | None, **options: Any) -> Site:
    config = ServerConfig(tmp_path / "data", database_url=url, **options)
    key = SecretKey.generate()
    platform = open_platform(config, key=key)
    with platform.db.session() as session:
        for name, role in ROLES.items():
            create_user(session, None, name, role, PASSWORDS[name])
    return Site(platform, create_app(platform), key)


def _postgres_database(server_url: str) -> str:
    import psycopg
    from sqlalchemy.engine import make_url

    url = make_url(server_url)
    name = f"veil_server_{secrets.token_hex(4)}"
    query = url.query
    with psycopg.connect(
        host=query["host"],
        port=int(query["port"]),
        user=url.username,
        dbname="postgres",
        autocommit=True,
    ) as conn:
        conn.execute(f"CREATE DATABASE {name}")
    return url.set(database=name).render_as_string(hide_password=False)


@pytest.fixture(params=["sqlite", "postgresql"])
def site(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Site]:
    """The platform on each database."""
    url = None
    if request.param == "postgresql":
        url = _postgres_database(request.getfixturevalue("postgres_server"))
    built = _site(tmp_path, url)
    yield built
    built.platform.db.dispose()


@pytest.fixture
def sqlite_site(tmp_path: Path) -> Iterator[Site]:
    """The platform on SQLite only (for tests of the HTTP layer, not the database)."""
    built = _site(tmp_path, None)
    yield built
    built.platform.db.dispose()


def adult_csv(rows: int = 2000) -> bytes:
    """The first ``rows`` records of the bundled Adult table, as CSV bytes."""
    from veil.datasets import load_adult

    buffer = io.BytesIO()
    load_adult().head(rows).to_csv(buffer, index=False)
    return buffer.getvalue()


PLAN = """
columns:
  age: {role: quasi_identifier, treatment: {method: laplace, bounds: [16, 100]}}
  sex: {role: quasi_identifier, treatment: {method: randomized_response, domain: [Female, Male]}}
  salary-class: {role: sensitive, treatment: keep}
unlisted: drop
budget:
  ldp: {epsilon: 2.0}
  allocation: equal
evaluation: {metrics: [risk, distributions]}
"""


def upload(
    client: TestClient, data: bytes, name: str = "adult", filename: str = "adult.csv"
) -> Any:
    """POST an upload (the CSRF token first, as the page's form sends it)."""
    return client.post(
        "/api/datasets",
        data={"csrf_token": client.headers.get("X-CSRF-Token", ""), "name": name},
        files={"file": (filename, data, "text/csv")},
    )


def upload_profiled(site: Site, client: TestClient, data: bytes, name: str = "adult") -> int:
    """Upload ``data`` and run its profile job, as a worker would; the dataset's id."""
    response = upload(client, data, name=name)
    assert response.status_code == 201, response.text
    assert response.json()["profile_status"] == "pending"
    assert site.work() == ["done"]
    return int(response.json()["id"])


@dataclass
class Released:
    """A dataset with a plan, a committed release, and the release's state."""

    dataset: int
    plan: int
    job: int
    release: int


def assign_reviewer(site: Site, dataset: int, name: str = "cedric") -> None:
    """The admin assigns ``name`` to review ``dataset``'s releases."""
    admin = site.login("admin")
    users = admin.get("/api/admin/users").json()["users"]
    user = next(u["id"] for u in users if u["username"] == name)
    done = admin.post(
        f"/api/admin/datasets/{dataset}/reviewers", json={"user_id": user, "action": "assign"}
    )
    assert done.status_code == 200, done.text


def release_flow(site: Site, *, publish: bool) -> Released:
    """Carol uploads, plans and runs (Cedric reviews her dataset); with ``publish``, Cedric
    approves and Carol publishes."""
    carol = site.login("carol")
    dataset = upload_profiled(site, carol, adult_csv())
    assign_reviewer(site, dataset)
    plan = carol.post(f"/api/datasets/{dataset}/plans", json={"name": "p", "text": PLAN})
    assert plan.status_code == 201, plan.text
    job = carol.post(f"/api/plans/{plan.json()['plan']}/versions/1/jobs", json={"kind": "run"})
    assert job.status_code == 201, job.text
    assert site.work() == ["done"]
    release = carol.get(f"/api/jobs/{job.json()['id']}").json()["release"]
    if publish:
        assert carol.post(f"/api/releases/{release}/request-approval").status_code == 200
        assert site.login("cedric").post(f"/api/releases/{release}/approve").status_code == 200
        assert carol.post(f"/api/releases/{release}/publish").status_code == 200
    return Released(dataset, plan.json()["plan"], job.json()["id"], release)


def taxi_csv() -> bytes:
    """The bundled NYC taxi sample (998 trips), as CSV bytes."""
    buffer = io.BytesIO()
    load_nyc_taxi().to_csv(buffer, index=False)
    return buffer.getvalue()


def taxi_plan(**changes: Any) -> str:
    """The shipped location example as a platform plan (the platform sets the input)."""
    plan = yaml.safe_load(example_plan("location").read_text(encoding="utf-8"))
    del plan["input"]
    plan["output"]["report"] = False
    plan["evaluation"] = {"metrics": ["distributions"], "attack_seed": 22}
    plan.update(changes)
    return yaml.safe_dump(plan, sort_keys=False)


def set_limits(site: Site, **limits: float | str) -> Any:
    """The operator sets the attack limits (four-eyes on, nothing else limited)."""
    fields = {f"max_attack_success.{a}": str(v) for a, v in limits.items()}
    return site.login("oscar").post("/api/policy", json={**fields, "four_eyes": "on"})


def taxi_job(site: Site, text: str | None = None) -> tuple[int, int, dict[str, Any]]:
    """Carol uploads the taxi sample (Cedric reviews it) and runs the plan.

    Returns the dataset, the plan and the finished job.
    """
    carol = site.login("carol")
    dataset = upload_profiled(site, carol, taxi_csv(), name="taxi")
    assign_reviewer(site, dataset)
    made = carol.post(
        f"/api/datasets/{dataset}/plans", json={"name": "taxi", "text": text or taxi_plan()}
    )
    assert made.status_code == 201, made.text
    plan = made.json()["plan"]
    queued = carol.post(f"/api/plans/{plan}/versions/1/jobs", json={"kind": "run"})
    assert queued.status_code == 201, queued.text
    site.work()
    return dataset, plan, carol.get(f"/api/jobs/{queued.json()['id']}").json()


def fill_path(template: str, flow: Released, action: str) -> str:
    """A route's path with the ids of ``flow`` (and ``action`` for a release action)."""
    values = {
        "dataset_id": flow.dataset,
        "plan_id": flow.plan,
        "number": 1,
        "job_id": flow.job,
        "release_id": flow.release,
        "token_id": 1,
        "user_id": 2,
        "action": action,
    }
    return re.sub(r"\{(\w+)(:\w+)?\}", lambda m: str(values[m.group(1)]), template)


@pytest.fixture
def artefacts(request: pytest.FixtureRequest, tmp_path: Path) -> Path:
    """Where a browser test keeps its screenshots: ``$VEIL_TEST_ARTIFACTS/<test>``, else
    the test's temporary folder (which pytest keeps for the last runs)."""
    root = os.environ.get("VEIL_TEST_ARTIFACTS")
    if not root:
        return tmp_path
    folder = Path(root) / request.node.name.replace("/", "_")
    folder.mkdir(parents=True, exist_ok=True)
    return folder


@contextmanager
def serving(site: Site, *, worker: bool) -> Iterator[str]:
    """``site`` served by uvicorn on a free loopback port (with a worker thread if asked)."""
    import uvicorn

    from veil.server.worker import run_worker

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    server = uvicorn.Server(
        uvicorn.Config(
            site.app, host="127.0.0.1", port=port, log_level="warning", proxy_headers=False
        )
    )
    web = threading.Thread(target=server.run, daemon=True)
    web.start()
    stop = threading.Event()
    runner = threading.Thread(
        target=run_worker,
        args=(site.platform.config, site.platform.keyring),
        kwargs={"stop": stop},
        daemon=True,
    )
    if worker:
        runner.start()
    deadline = time.monotonic() + 30
    while not server.started and time.monotonic() < deadline:
        time.sleep(0.05)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        stop.set()
        server.should_exit = True
        web.join(timeout=10)
        if worker:
            runner.join(timeout=30)


def _served(tmp_path: Path, *, worker: bool) -> Iterator[tuple[str, Site]]:
    site = _site(tmp_path, None)
    with serving(site, worker=worker) as url:
        yield url, site
    site.platform.db.dispose()


@pytest.fixture
def served(tmp_path: Path) -> Iterator[tuple[str, Site]]:
    """A platform on SQLite served on loopback, with a worker thread running its jobs."""
    yield from _served(tmp_path, worker=True)


@pytest.fixture
def live(tmp_path: Path) -> Iterator[tuple[str, Site]]:
    """A platform on SQLite served on loopback; the test runs its jobs (``Site.work``)."""
    yield from _served(tmp_path, worker=False)


def sign_in(page: Any, url: str, username: str) -> None:
    """Sign ``username`` in through the login form."""
    page.goto(f"{url}/login")
    page.get_by_label("User name").fill(username)
    page.get_by_label("Password").fill(PASSWORDS[username])
    page.get_by_role("button", name="Sign in").click()
    page.wait_for_selector("h1:has-text('Welcome')")


def upload_in_browser(page: Any, name: str, path: Path) -> str:
    """Upload ``path`` from the start page's link; wait for the profile (from the worker).

    Returns the suggested quasi-identifiers as the risk summary shows them.
    """
    page.get_by_role("link", name="Upload a dataset").first.click()
    page.get_by_label("Name", exact=True).fill(name)
    page.get_by_label("CSV file").set_input_files(str(path))
    page.get_by_role("button", name="Upload").click()
    # The upload returns at once; the profile and risk summary arrive from the worker.
    page.wait_for_selector("#suggested-qis", timeout=90_000)
    return str(page.inner_text("#suggested-qis"))
