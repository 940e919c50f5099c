"""Benchmark of the token vault (:class:`veil.masking.vault.Vault`): SQLite and PostgreSQL.

Three figures per backend, each on a fresh vault:

* tokenize ``--rows`` new distinct values (prototype 2.6 s, target <= 3 s for 100,000);
* detokenize those ``--rows`` tokens (target <= 1 s);
* re-tokenize ``--known`` values already in the vault (look-up only, nothing written).

The backends: a temporary SQLite file, and a PostgreSQL server this script starts for
the run from Debian's binaries (``initdb --auth=trust --encoding=UTF8`` in a temporary
folder, listening only on a Unix socket there, default settings otherwise, run as the
``postgres`` user when root; stopped and deleted at the end, as
``tests/masking/conftest.py`` does for the tests),
plus any ``--url``. They alternate for ``--rounds`` rounds (one vault each per round);
each figure is printed as min / median / max beside its target, with the load average.
There is no peer tool: SQLite in the same run is the reference.

    python benchmarks/bench_vault.py                          # SQLite and PostgreSQL
    python benchmarks/bench_vault.py --rounds 5 --no-postgres
    python benchmarks/bench_vault.py --url 'postgresql+psycopg://USER@/DB?host=DIR&port=P'
"""

from __future__ import annotations

import argparse
import contextlib
import glob
import os
import pwd
import shutil
import socket
import statistics
import subprocess
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import sqlalchemy as sa

from veil.masking.keys import SecretKey
from veil.masking.vault import Vault

_TARGETS = {"tokenize new": 3.0, "detokenize": 1.0}
_PROTOTYPE = {"tokenize new": 2.6}
_SERVER_USER = "postgres"


def _pg_binary(name: str) -> str:
    found = shutil.which(name) or next(
        iter(sorted(glob.glob(f"/usr/lib/postgresql/*/bin/{name}"), reverse=True)), None
    )
    if found is None:
        raise SystemExit(
            f"PostgreSQL's {name} is not on PATH nor in /usr/lib/postgresql/*/bin: install "
            "postgresql-15, or run with --no-postgres"
        )
    return found


@contextlib.contextmanager
def throwaway_postgres() -> Iterator[str]:
    """URL of a database on a PostgreSQL server private to this run (default settings)."""
    initdb, pg_ctl = _pg_binary("initdb"), _pg_binary("pg_ctl")
    root = Path(tempfile.mkdtemp(prefix="veil-bench-pg-"))
    prefix: list[str] = []
    if os.geteuid() == 0:  # the server refuses to run as root
        entry = pwd.getpwnam(_SERVER_USER)
        os.chown(root, entry.pw_uid, entry.pw_gid)
        prefix = ["runuser", "-u", _SERVER_USER, "--"]
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = int(probe.getsockname()[1])
    data = root / "data"
    env = {**os.environ, "LC_ALL": "C", "LANG": "C"}
    try:
        subprocess.run(
            [
                *prefix,
                initdb,
                "-D",
                str(data),
                "-U",
                _SERVER_USER,
                "--auth=trust",
                "--locale=C",
                "--encoding=UTF8",
            ],
            cwd=root,
            env=env,
            check=True,
            capture_output=True,
        )
        options = f"-p {port} -k {root} -c listen_addresses=''"
        subprocess.run(
            [
                *prefix,
                pg_ctl,
                "-D",
                str(data),
                "-l",
                str(root / "log"),
                "-w",
                "-o",
                options,
                "start",
            ],
            cwd=root,
            env=env,
            check=True,
            capture_output=True,
        )
        try:
            yield f"postgresql+psycopg://{_SERVER_USER}@/postgres?host={root}&port={port}"
        finally:
            subprocess.run(
                [*prefix, pg_ctl, "-D", str(data), "-m", "fast", "stop"],
                cwd=root,
                env=env,
                check=False,
                capture_output=True,
            )
    finally:
        shutil.rmtree(root, ignore_errors=True)


def _fresh(url: str) -> None:
    engine = sa.create_engine(url)
    with engine.begin() as conn:
        conn.execute(sa.text("DROP TABLE IF EXISTS veil_tokens"))
        conn.execute(sa.text("DROP TABLE IF EXISTS veil_vault_meta"))
    engine.dispose()


def run(url: str, rows: int, known: int) -> dict[str, float]:
    """Seconds for each of the three operations on a vault at ``url`` (emptied first)."""
    _fresh(url)
    key = SecretKey.generate()
    values = [f"person-{i:09d}@example.com" for i in range(rows)]
    figures: dict[str, float] = {}
    with Vault(url, key) as vault:
        start = time.perf_counter()
        tokens = vault.tokenize(values, "email")
        figures["tokenize new"] = time.perf_counter() - start
        start = time.perf_counter()
        back = vault.detokenize(tokens, "email")
        figures["detokenize"] = time.perf_counter() - start
        start = time.perf_counter()
        again = vault.tokenize(values[:known], "email")
        figures[f"re-tokenize {known:,} known"] = time.perf_counter() - start
    if list(back) != values or list(again) != list(tokens[:known]):
        raise SystemExit("round trip failed")
    return figures


def _spread(values: list[float]) -> str:
    return f"{min(values):.3f} / {statistics.median(values):.3f} / {max(values):.3f}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=100_000, help="new values to tokenize")
    parser.add_argument("--known", type=int, default=1_000, help="known values to re-tokenize")
    parser.add_argument("--rounds", type=int, default=3, help="rounds, backends alternating")
    parser.add_argument("--url", action="append", default=[], help="another database URL")
    parser.add_argument(
        "--no-postgres", action="store_true", help="do not start a PostgreSQL server"
    )
    args = parser.parse_args()
    loads = [os.getloadavg()[0]]
    with contextlib.ExitStack() as stack, tempfile.TemporaryDirectory() as tmp:
        urls = {"sqlite": f"sqlite:///{Path(tmp) / 'vault.db'}"}
        if not args.no_postgres:
            urls["postgresql (own server)"] = stack.enter_context(throwaway_postgres())
        for i, url in enumerate(args.url):
            urls[f"{sa.make_url(url).get_backend_name()} (--url {i + 1})"] = url
        results: dict[str, dict[str, list[float]]] = {name: {} for name in urls}
        for _ in range(args.rounds):
            for name, url in urls.items():
                for op, seconds in run(url, args.rows, args.known).items():
                    results[name].setdefault(op, []).append(seconds)
                loads.append(os.getloadavg()[0])
    print(
        f"vault, {args.rows:,} values, {args.rounds} rounds (backends alternating), "
        f"1-minute load average {min(loads):.2f}-{max(loads):.2f}"
    )
    print(f"{'backend':<26}{'operation':<24}{'s (min / median / max)':>26}{'target':>8}")
    for name, figures in results.items():
        for op, runs in figures.items():
            target = _TARGETS.get(op)
            print(f"{name:<26}{op:<24}{_spread(runs):>26}{(f'{target:.1f}' if target else '-'):>8}")
    base = results.get("sqlite", {}).get("tokenize new")
    for name, figures in results.items():
        if name != "sqlite" and base:
            ratio = statistics.median(figures["tokenize new"]) / statistics.median(base)
            print(f"tokenize new, {name} / sqlite (medians): {ratio:.2f}")


if __name__ == "__main__":
    main()
