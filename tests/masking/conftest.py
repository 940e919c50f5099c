"""A throw-away PostgreSQL server for the vault tests, started once per session.

The server runs from a fresh ``initdb`` in a temporary directory, listens only on a Unix
socket in that directory (no TCP) and is stopped and deleted at the end. The binaries
come from ``PATH`` or ``/usr/lib/postgresql/*/bin`` (Debian's ``postgresql-15``). A
missing PostgreSQL fails the tests that need it: it is never a reason to skip them.
"""

from __future__ import annotations

import glob
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

_DATABASE = "veil_test"
_SERVER_USER = "postgres"


def _pg_binary(name: str) -> str:
    found = shutil.which(name)
    if found:
        return found
    candidates = sorted(glob.glob(f"/usr/lib/postgresql/*/bin/{name}"))
    if candidates:
        return candidates[-1]
    pytest.fail(
        f"PostgreSQL server binary {name!r} not found on PATH or in /usr/lib/postgresql/*/bin: "
        f"install the server (apt-get install -y postgresql-15) to run the vault tests"
    )


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _run(command: list[str], as_user: str | None, cwd: Path) -> None:
    if as_user is not None:
        command = ["runuser", "-u", as_user, "--", *command]
    result = subprocess.run(
        command,
        cwd=cwd,
        capture_output=True,
        text=True,
        env={**os.environ, "LC_ALL": "C", "LANG": "C"},
        check=False,
    )
    if result.returncode != 0:
        pytest.fail(
            f"PostgreSQL test server: {' '.join(command)} failed ({result.returncode}):\n"
            f"{result.stdout}\n{result.stderr}"
        )


def postgres_url(socket_dir: Path | str, port: int, database: str = _DATABASE) -> str:
    """The SQLAlchemy URL of a database on a server listening on a Unix socket."""
    return f"postgresql+psycopg://{_SERVER_USER}@/{database}?host={socket_dir}&port={port}"


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[str]:
    """URL of a fresh database on a PostgreSQL server private to this test session."""
    initdb, pg_ctl = _pg_binary("initdb"), _pg_binary("pg_ctl")
    as_user: str | None = None
    # The server refuses to run as root: run it as the (Debian) postgres user.
    root = Path(tempfile.mkdtemp(prefix="veil-pg-"))
    if os.geteuid() == 0:
        try:
            entry = pwd.getpwnam(_SERVER_USER)
        except KeyError:
            shutil.rmtree(root, ignore_errors=True)
            pytest.fail(
                f"PostgreSQL test server: running as root and there is no {_SERVER_USER!r} "
                f"user to run the server as (apt-get install postgresql-15 creates it)"
            )
        as_user = _SERVER_USER
        os.chown(root, entry.pw_uid, entry.pw_gid)
    data, log = root / "data", root / "server.log"
    port = _free_port()
    try:
        _run(
            [
                initdb,
                "-D",
                str(data),
                "-U",
                _SERVER_USER,
                "--auth=trust",
                "--no-sync",
                "--locale=C",
                "--encoding=UTF8",
            ],
            as_user,
            root,
        )
        options = f"-p {port} -k {root} -c listen_addresses='' -c fsync=off"
        _run([pg_ctl, "-D", str(data), "-l", str(log), "-w", "-o", options, "start"], as_user, root)
    except BaseException:
        shutil.rmtree(root, ignore_errors=True)
        raise
    try:
        import psycopg

        with psycopg.connect(
            host=str(root), port=port, user=_SERVER_USER, dbname="postgres", autocommit=True
        ) as conn:
            conn.execute(f"CREATE DATABASE {_DATABASE}")
        yield postgres_url(root, port)
    finally:
        subprocess.run(
            ["runuser", "-u", as_user, "--", pg_ctl, "-D", str(data), "-m", "fast", "stop"]
            if as_user
            else [pg_ctl, "-D", str(data), "-m", "fast", "stop"],
            cwd=root,
            capture_output=True,
            check=False,
        )
        shutil.rmtree(root, ignore_errors=True)
