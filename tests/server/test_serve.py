"""``veil serve`` as a person runs it: one socket, several web processes, a clean stop."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx

from veil.masking import SecretKey


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _children(pid: int) -> list[int]:
    """Process ids whose parent is ``pid`` (read from /proc)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        # pid (comm) state ppid ...: comm may hold spaces, so split after its ')'.
        if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
            found.append(int(entry.name))
    return found


def _alive(pid: int) -> bool:
    """Whether ``pid`` runs (a zombie waiting to be reaped has ended)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


def _spawned(pid: int) -> int:
    """Children of ``pid`` started by multiprocessing's spawn (workers and web processes)."""
    count = 0
    for child in _children(pid):
        try:
            command = Path(f"/proc/{child}/cmdline").read_bytes()
        except OSError:
            continue
        count += b"multiprocessing.spawn" in command and b"resource_tracker" not in command
    return count


def test_several_web_processes_answer_on_one_port_and_stop_together(tmp_path: Path) -> None:
    port = _free_port()
    env = {**os.environ, "VEIL_SERVER_KEY": SecretKey.generate().reveal().hex()}
    command = [sys.executable, "-c", "from veil.cli import main; main()", "serve"]
    server = subprocess.Popen(
        [
            *command,
            *("--data", str(tmp_path / "data"), "--port", str(port)),
            *("--insecure-cookies", "--web-processes", "3"),
        ],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 90
        while True:
            try:
                if httpx.get(url + "/login", timeout=2).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            assert server.poll() is None, server.stderr.read() if server.stderr else ""
            assert time.monotonic() < deadline, "veil serve did not answer within 90 s"
            time.sleep(0.2)
        # One job worker and two more web processes beside this one.
        deadline = time.monotonic() + 60
        while _spawned(server.pid) < 3 and time.monotonic() < deadline:
            time.sleep(0.2)
        assert _spawned(server.pid) == 3
        with httpx.Client(base_url=url, timeout=10) as client:
            answers = [client.get("/login") for _ in range(30)]
        assert {a.status_code for a in answers} == {200}
        assert all("content-security-policy" in a.headers for a in answers)
        children = _children(server.pid)
    finally:
        server.send_signal(signal.SIGTERM)
        server.wait(timeout=30)
    # A stop ends every process it started.
    deadline = time.monotonic() + 20
    while any(_alive(c) for c in children) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert [c for c in children if _alive(c)] == []
