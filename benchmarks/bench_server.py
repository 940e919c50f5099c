"""Load test of the veil platform on loopback, with a restart in the middle of a job.

Bounded in count and time, and only ever aimed at 127.0.0.1:

1. A platform is prepared in a temporary folder (SQLite): two curators, ``--users``
   data users (each its own account), Adult uploaded and profiled, one release
   published by four-eyes.
2. ``veil serve`` runs it (its own process, one worker process, ``--web-processes``
   web processes), as a person would.
3. Every data user signs in (argon2id; timed, reported as "sign-in"). Once all have,
   for ``--seconds`` seconds, on a new connection, each lists the catalogue
   (``GET /api/catalogue``) and download the published release
   (``GET /catalogue/{id}/download``), one request after the other (``--think``
   seconds apart on average, each wait uniform on [t/2, 3t/2] so that the users do not
   ask in lockstep, and each user's first request uniform on [0, t]; default none:
   every user as fast as the server answers), while one curator queues a release of
   Adult and polls its job to the end.
   Every request's latency is kept; any status other than 200, or a failed
   connection, is an error. Each kind of request stops after ``--max-requests``.
4. The peer: a bare FastAPI app (no accounts, no database, no audit log) serving the
   same catalogue JSON and the same file, under the same load for ``--peer-seconds``
   in the same run. The ratios say what the platform's checks cost.
5. A restart in the middle of a job: the curator queues another release; as soon as
   its job runs, the whole ``veil serve`` process group is killed (SIGKILL: no clean
   shutdown) and started again. The job must be marked interrupted, its folders gone
   (no partial output, no plain copy of the input), the published release and the
   dataset untouched (same SHA-256, still encrypted), the audit chain intact
   (``veil server verify-audit``), and the job must re-run to a release.

Prints p50, p95 and p99 of each kind of request beside the peer's, the ratios, the
request counts and errors, the release's time under load, peak memory (RSS) of the
server and worker processes, and the restart checks. The goal: catalogue p95 under
100 ms on SQLite, zero errors.

    python benchmarks/bench_server.py
    python benchmarks/bench_server.py --users 50 --seconds 60 --peer-seconds 20
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import functools
import hashlib
import io
import json
import os
import signal
import socket
import ssl
import subprocess
import sys
import tempfile
import time
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import numpy as np

_HOST = "127.0.0.1"
_GOAL_P95_MS = 100.0
_PLAN = """
columns:
  age: {role: quasi_identifier, treatment: {method: laplace, bounds: [16, 100]}}
  sex: {role: quasi_identifier, treatment: {method: randomized_response, domain: [Female, Male]}}
  race: {role: quasi_identifier, treatment: keep}
  hours-per-week: {role: sensitive, treatment: {method: laplace, bounds: [1, 99]}}
  salary-class: {role: sensitive, treatment: keep}
unlisted: drop
budget:
  ldp: {epsilon: 2.0}
  allocation: equal
evaluation: {metrics: [risk, distributions]}
"""
_PASSWORD = "bench-password-1"
_CLI = [sys.executable, "-c", "from veil.cli import main; main()"]


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind((_HOST, 0))
        return int(probe.getsockname()[1])


# --------------------------------------------------------------------------- setup


def _prepare(data: Path, users: int) -> dict[str, Any]:
    """The platform's accounts, Adult profiled and one release published (in process)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from fastapi.testclient import TestClient

    from veil.datasets import load_adult
    from veil.server import ServerConfig, create_app, open_platform
    from veil.server.accounts import create_user
    from veil.server.jobs import claim
    from veil.server.worker import execute

    config = ServerConfig(data)
    platform = open_platform(config)
    with platform.db.session() as session:
        create_user(session, None, "boss", "admin", _PASSWORD)
        for name in ("carol", "cedric"):
            create_user(session, None, name, "curator", _PASSWORD)
        for i in range(users):
            create_user(session, None, f"user{i:03d}", "data_user", _PASSWORD)
    app = create_app(platform)

    def client(name: str) -> Any:
        c = TestClient(app, base_url="https://testserver")
        assert c.post("/api/login", json={"username": name, "password": _PASSWORD}).is_success
        c.headers["X-CSRF-Token"] = c.get("/api/me").json()["csrf_token"]
        return c

    def work() -> None:
        while (job := claim(platform.db, "bench-setup")) is not None:
            assert execute(platform.db, config, platform.keyring, job) == "done"

    carol, cedric, boss = client("carol"), client("cedric"), client("boss")
    buffer = io.BytesIO()
    load_adult().to_csv(buffer, index=False)
    dataset = carol.post(
        "/api/datasets",
        data={"csrf_token": carol.headers["X-CSRF-Token"], "name": "adult"},
        files={"file": ("adult.csv", buffer.getvalue(), "text/csv")},
    ).json()["id"]
    work()
    reviewer = next(
        u["id"] for u in boss.get("/api/admin/users").json()["users"] if u["username"] == "cedric"
    )
    assert boss.post(
        f"/api/admin/datasets/{dataset}/reviewers", json={"user_id": reviewer, "action": "assign"}
    ).is_success
    plan = carol.post(f"/api/datasets/{dataset}/plans", json={"name": "p", "text": _PLAN})
    plan_id = plan.json()["plan"]
    job = carol.post(f"/api/plans/{plan_id}/versions/1/jobs", json={"kind": "run"}).json()
    work()
    release = carol.get(f"/api/jobs/{job['id']}").json()["release"]
    assert carol.post(f"/api/releases/{release}/request-approval").is_success
    assert cedric.post(f"/api/releases/{release}/approve").is_success
    assert carol.post(f"/api/releases/{release}/publish").is_success
    catalogue = carol.get("/api/catalogue").json()
    download = carol.get(f"/catalogue/{release}/download").content
    platform.db.dispose()
    return {
        "dataset": dataset,
        "plan": plan_id,
        "release": release,
        "catalogue": catalogue,
        "download": download,
        "rows": len(load_adult()),
    }


def _profile_shapes(cells: int = 200_000) -> list[tuple[int, int, float]]:
    """Seconds of an upload's profile (profile and risk guidance) for tables of ``cells``
    cells, long and narrow to short and wide: near-linear in cells means the seconds
    stay close from one shape to the next."""
    from veil.release.intake import profile_csv, risk_guidance

    out = []
    for columns in (10, 100, 1000):
        rows = cells // columns
        header = ",".join(f"c{j}" for j in range(columns))
        line = ",".join(str(j % 10) for j in range(columns))
        text = (header + "\n" + "\n".join(line for _ in range(rows)) + "\n").encode()
        start = time.perf_counter()
        profile = profile_csv(lambda text=text: io.BytesIO(text), rng=None)
        risk_guidance(profile)
        out.append((rows, columns, time.perf_counter() - start))
    return out


# ------------------------------------------------------------------------ processes


def _serve(data: Path, port: int, env: dict[str, str], web: int) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [
            *_CLI,
            *("serve", "--data", str(data), "--port", str(port), "--insecure-cookies"),
            *("--web-processes", str(web)),
        ],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )


def _bare(folder: Path, port: int, info: dict[str, Any]) -> subprocess.Popen[bytes]:
    """The peer: a bare FastAPI app serving the same catalogue JSON and file."""
    (folder / "catalogue.json").write_text(json.dumps(info["catalogue"]))
    (folder / "release.csv").write_bytes(info["download"])
    code = f"""
import uvicorn
from fastapi import FastAPI
from fastapi.responses import FileResponse, Response
app = FastAPI()
body = open({str(folder / "catalogue.json")!r}, "rb").read()
@app.get("/api/catalogue")
def catalogue():
    return Response(body, media_type="application/json")
@app.get("/catalogue/{{release_id}}/download")
def download(release_id: int):
    return FileResponse({str(folder / "release.csv")!r}, media_type="text/csv")
uvicorn.run(app, host="{_HOST}", port={port}, log_level="warning")
"""
    return subprocess.Popen(
        [sys.executable, "-c", code], stdout=subprocess.DEVNULL, start_new_session=True
    )


def _wait_up(url: str, seconds: float = 90.0) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            if httpx.get(url + "/login", timeout=2).status_code in (200, 404):
                return
        except httpx.HTTPError:
            time.sleep(0.2)
    raise SystemExit(f"the server at {url} did not start within {seconds:.0f} s")


def _stop(process: subprocess.Popen[bytes]) -> None:
    """End a process group this script started (its own id), politely then firmly."""
    try:
        os.killpg(process.pid, signal.SIGTERM)
        process.wait(timeout=20)
    except (ProcessLookupError, subprocess.TimeoutExpired):
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)
        process.wait(timeout=10)


def _rss_mib(process: subprocess.Popen[bytes]) -> float:
    """Peak resident memory (VmHWM) of the process and its children, in MiB."""
    total = 0
    pids = [process.pid]
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except (FileNotFoundError, IndexError):
            continue
        if int(fields[1]) == process.pid:
            pids.append(int(stat.parent.name))
    for pid in pids:
        try:
            for line in Path(f"/proc/{pid}/status").read_text().splitlines():
                if line.startswith("VmHWM:"):
                    total += int(line.split()[1]) * 1024
        except FileNotFoundError:
            continue
    return total / 2**20


# ----------------------------------------------------------------------------- load


@dataclass
class Figures:
    """Latencies in seconds and errors, by kind of request."""

    latencies: dict[str, list[float]] = field(default_factory=dict)
    errors: dict[str, int] = field(default_factory=dict)
    examples: list[str] = field(default_factory=list)

    def add(self, kind: str, seconds: float, ok: bool, what: str = "") -> None:
        self.latencies.setdefault(kind, []).append(seconds)
        if not ok:
            self.errors[kind] = self.errors.get(kind, 0) + 1
            if len(self.examples) < 5:
                self.examples.append(f"{kind}: {what}")

    def quantiles(self, kind: str) -> tuple[float, float, float]:
        values = sorted(self.latencies.get(kind, []))
        if not values:
            return (float("nan"),) * 3

        def at(q: float) -> float:
            return values[min(len(values) - 1, int(q * len(values)))] * 1000

        return at(0.50), at(0.95), at(0.99)


@functools.cache
def _tls() -> ssl.SSLContext:
    return ssl.create_default_context()


def _client(url: str, cookies: httpx.Cookies | None = None) -> httpx.AsyncClient:
    """A load client. They share one TLS context (unused on plain HTTP): httpx would
    read the CA bundle for each new client, about 30 ms with the event loop held, and
    50 users opening theirs at once would stall every request in flight by a second."""
    return httpx.AsyncClient(base_url=url, timeout=30, cookies=cookies, verify=_tls())


async def _user(
    url: str,
    name: str | None,
    release: int,
    seconds: float,
    cap: int,
    figures: Figures,
    counts: dict[str, int],
    think: float,
    waits: np.random.Generator,
    signed_in: asyncio.Barrier,
) -> None:
    cookies = httpx.Cookies()
    if name is not None:
        async with _client(url) as web:
            start = time.perf_counter()
            signed = await web.post("/api/login", json={"username": name, "password": _PASSWORD})
            ok = signed.status_code == 200
            figures.add("login", time.perf_counter() - start, ok, f"{name}: {signed.status_code}")
            if not ok:
                await signed_in.abort()
                return
            cookies = web.cookies
    # The load starts once every user has signed in (argon2id, the slowest request,
    # timed as "login"), on a new connection: one left idle past the server's keep-alive
    # (5 s) while the others sign in would be closed under a first request. With think
    # time, users then arrive spread over the first think time, as Locust spawns them.
    await signed_in.wait()
    if think:
        await asyncio.sleep(think * waits.uniform(0.0, 1.0))
    async with _client(url, cookies) as web:
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            for kind, path in (
                ("catalogue", "/api/catalogue"),
                ("download", f"/catalogue/{release}/download"),
            ):
                if counts[kind] >= cap:
                    return
                counts[kind] += 1
                start = time.perf_counter()
                try:
                    response = await web.get(path)
                    ok, what = response.status_code == 200, str(response.status_code)
                except httpx.HTTPError as exc:
                    ok, what = False, type(exc).__name__
                figures.add(kind, time.perf_counter() - start, ok, what)
                if think:
                    # Uniform on [think / 2, 3 think / 2], as Locust's between(): users
                    # that waited the same time would all ask at once, in lockstep.
                    await asyncio.sleep(think * waits.uniform(0.5, 1.5))


async def _curator(url: str, plan: int, figures: Figures) -> float | None:
    """Queue a release and poll its job to the end; its seconds (None if it failed)."""
    async with _client(url) as web:
        await web.post("/api/login", json={"username": "carol", "password": _PASSWORD})
        csrf = (await web.get("/api/me")).json()["csrf_token"]
        start = time.perf_counter()
        queued = await web.post(
            f"/api/plans/{plan}/versions/1/jobs",
            json={"kind": "run"},
            headers={"X-CSRF-Token": csrf},
        )
        if queued.status_code != 201:
            figures.add("release", 0.0, False, queued.text[:200])
            return None
        job = queued.json()["id"]
        while True:
            await asyncio.sleep(0.5)
            status = (await web.get(f"/api/jobs/{job}/progress")).json()["job"]["status"]
            if status in ("done", "failed", "cancelled", "interrupted"):
                seconds = time.perf_counter() - start
                figures.add("release", seconds, status == "done", status)
                return seconds if status == "done" else None


def _load(
    url: str, info: dict[str, Any], args: argparse.Namespace, seconds: float, curator: bool
) -> tuple[Figures, float | None]:
    figures = Figures()
    counts = {"catalogue": 0, "download": 0}

    async def everything() -> float | None:
        names = [f"user{i:03d}" if curator else None for i in range(args.users)]
        cap, think = args.max_requests, args.think
        waits = np.random.default_rng(args.seed).spawn(len(names))
        signed_in = asyncio.Barrier(len(names))
        tasks = [
            _user(url, name, info["release"], seconds, cap, figures, counts, think, w, signed_in)
            for name, w in zip(names, waits, strict=True)
        ]
        if curator:
            release = asyncio.ensure_future(_curator(url, info["plan"], figures))
            await asyncio.gather(*tasks)
            return await release
        await asyncio.gather(*tasks)
        return None

    return figures, asyncio.run(everything())


# -------------------------------------------------------------------------- restart


def _restart(
    data: Path, env: dict[str, str], port: int, info: dict[str, Any], server: Any, web: int
) -> tuple[dict[str, bool], Any]:
    """Kill ``veil serve`` during a job, start it again, check what the restart left."""
    url = f"http://{_HOST}:{port}"
    with httpx.Client(base_url=url, timeout=30) as client:
        client.post("/api/login", json={"username": "carol", "password": _PASSWORD})
        csrf = client.get("/api/me").json()["csrf_token"]
        before = client.get(f"/catalogue/{info['release']}/download").content
        job = client.post(
            f"/api/plans/{info['plan']}/versions/1/jobs",
            json={"kind": "run"},
            headers={"X-CSRF-Token": csrf},
        ).json()
        deadline = time.monotonic() + 60
        status = "queued"
        while status == "queued" and time.monotonic() < deadline:
            time.sleep(0.02)
            status = client.get(f"/api/jobs/{job['id']}/progress").json()["job"]["status"]
    os.killpg(server.pid, signal.SIGKILL)
    server.wait(timeout=10)
    killed_while = status
    server = _serve(data, port, env, web)
    _wait_up(url)
    checks: dict[str, bool] = {"killed while the job ran": killed_while == "running"}
    with httpx.Client(base_url=url, timeout=30) as client:
        client.post("/api/login", json={"username": "carol", "password": _PASSWORD})
        csrf = client.get("/api/me").json()["csrf_token"]
        marked = client.get(f"/api/jobs/{job['id']}").json()["job"]
        checks["job marked interrupted"] = marked["status"] == "interrupted"
        releases = data / "releases"
        checks["no partial output"] = not (releases / job_uid(data, job["id"])).exists()
        work = data / "work"
        checks["no plain copy of the input"] = not work.exists() or not any(work.iterdir())
        after = client.get(f"/catalogue/{info['release']}/download").content
        checks["published release unchanged"] = (
            hashlib.sha256(after).digest() == hashlib.sha256(before).digest()
        )
        dataset = client.get(f"/api/datasets/{info['dataset']}").json()["dataset"]
        checks["dataset still encrypted"] = dataset["custody"] == "encrypted"
        rerun = client.post(f"/api/jobs/{job['id']}/rerun", headers={"X-CSRF-Token": csrf}).json()
        deadline = time.monotonic() + 120
        status = "queued"
        while status not in ("done", "failed") and time.monotonic() < deadline:
            time.sleep(0.5)
            status = client.get(f"/api/jobs/{rerun['id']}/progress").json()["job"]["status"]
        checks["re-run makes the release"] = status == "done"
    audit = subprocess.run(
        [*_CLI, "server", "verify-audit", "--data", str(data)],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    checks["audit chain intact (verify-audit)"] = audit.returncode == 0
    return checks, server


def job_uid(data: Path, job_id: int) -> str:
    """A job's random folder name, read from the platform's database."""
    import sqlalchemy as sa

    engine = sa.create_engine(f"sqlite:///{data / 'veil.db'}")
    with engine.connect() as connection:
        uid = connection.execute(sa.text("SELECT uid FROM jobs WHERE id = :i"), {"i": job_id})
        found = str(uid.scalar_one())
    engine.dispose()
    return found


# ---------------------------------------------------------------------------- print


def _report(
    veil: Figures,
    peer: Figures,
    release_seconds: float | None,
    memory: float,
    restart: dict[str, bool],
    args: argparse.Namespace,
    shapes: list[tuple[int, int, float]],
) -> int:
    print(
        f"\n{args.users} data users, {args.seconds:.0f} s (peer {args.peer_seconds:.0f} s), "
        f"{args.think:g} s between a user's requests on average, "
        f"{args.web_processes} web process(es)"
    )
    print(
        f"{'request':<10} {'count':>7} {'errors':>6}   {'p50 ms':>8} {'p95 ms':>8} {'p99 ms':>8}"
        f"   {'peer p50':>8} {'peer p95':>8}   {'p50 x':>6} {'p95 x':>6}"
    )
    for kind in ("catalogue", "download"):
        v, p = veil.quantiles(kind), peer.quantiles(kind)
        count = len(veil.latencies.get(kind, []))
        print(
            f"{kind:<10} {count:>7} {veil.errors.get(kind, 0):>6}   "
            f"{v[0]:>8.1f} {v[1]:>8.1f} {v[2]:>8.1f}   {p[0]:>8.1f} {p[1]:>8.1f}   "
            f"{v[0] / p[0]:>6.1f} {v[1] / p[1]:>6.1f}"
        )
    for kind in ("catalogue", "download"):
        rate = len(veil.latencies.get(kind, [])) / args.seconds
        peer_rate = len(peer.latencies.get(kind, [])) / args.peer_seconds
        print(f"  {kind} throughput: {rate:.0f}/s (peer {peer_rate:.0f}/s)")
    if veil.latencies.get("login"):
        login = veil.quantiles("login")
        print(
            f"  sign-in of the {len(veil.latencies['login'])} users before the load "
            f"(argon2id): p50 {login[0]:.0f} ms, p95 {login[1]:.0f} ms, p99 {login[2]:.0f} ms"
        )
    print(f"release under load: {release_seconds:.1f} s" if release_seconds else "release FAILED")
    print(f"server + worker peak RSS: {memory:.0f} MiB")
    errors = sum(veil.errors.values())
    print(f"errors: {errors}" + (f" ({'; '.join(veil.examples)})" if errors else ""))
    p95 = veil.quantiles("catalogue")[1]
    print(
        f"goal catalogue p95 < {_GOAL_P95_MS:.0f} ms: {'met' if p95 < _GOAL_P95_MS else 'MISSED'}"
    )
    print("profile of an upload, 200,000 cells (the same work in every shape):")
    for rows, columns, seconds in shapes:
        print(f"  {rows:>7} rows x {columns:>4} columns: {seconds:6.2f} s")
    print("restart in the middle of a job:")
    for what, ok in restart.items():
        print(f"  {'ok  ' if ok else 'FAIL'} {what}")
    return 0 if errors == 0 and release_seconds and all(restart.values()) else 1


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--users", type=int, default=50)
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--peer-seconds", type=float, default=20.0)
    parser.add_argument("--max-requests", type=int, default=200_000, help="per kind")
    parser.add_argument("--seed", type=int, default=0, help="seed of the think times")
    parser.add_argument("--web-processes", type=int, default=1, help="veil serve's web processes")
    parser.add_argument(
        "--think",
        type=float,
        default=0.0,
        help="mean seconds a user waits between requests (uniform on [t/2, 3t/2])",
    )
    args = parser.parse_args()
    if not (1 <= args.users <= 200 and 0 < args.seconds <= 600 and 0 < args.peer_seconds <= 600):
        raise SystemExit("--users must be 1-200 and the durations at most 600 s")
    from veil.masking import SecretKey

    with tempfile.TemporaryDirectory(prefix="veil-bench-server-") as tmp:
        folder = Path(tmp)
        data = folder / "data"
        env = {**os.environ, "VEIL_SERVER_KEY": SecretKey.generate().reveal().hex()}
        os.environ["VEIL_SERVER_KEY"] = env["VEIL_SERVER_KEY"]
        print("preparing: accounts, Adult profiled, a release published ...", flush=True)
        info = _prepare(data, args.users)
        port = _free_port()
        server = _serve(data, port, env, args.web_processes)
        try:
            _wait_up(f"http://{_HOST}:{port}")
            print(f"load: {args.users} users for {args.seconds:.0f} s ...", flush=True)
            veil, release_seconds = _load(f"http://{_HOST}:{port}", info, args, args.seconds, True)
            memory = _rss_mib(server)
            print("restart in the middle of a job ...", flush=True)
            restart, server = _restart(data, env, port, info, server, args.web_processes)
        finally:
            _stop(server)
        peer_port = _free_port()
        bare = _bare(folder, peer_port, info)
        try:
            _wait_up(f"http://{_HOST}:{peer_port}")
            print(f"peer: bare FastAPI for {args.peer_seconds:.0f} s ...", flush=True)
            peer, _ = _load(f"http://{_HOST}:{peer_port}", info, args, args.peer_seconds, False)
        finally:
            _stop(bare)
    print("profile shapes ...", flush=True)
    shapes = _profile_shapes()
    return _report(veil, peer, release_seconds, memory, restart, args, shapes)


if __name__ == "__main__":
    raise SystemExit(main())
