"""How an upload's profile grows with the table: time and memory by shape, and the
exponent in cells (issue 19 item 5, "keep profiling near linear in cells").

Each shape (rows x columns) is a seeded synthetic table of a hospital's kind, the same
in every round: per ten columns a patient number (unique), an age, a sex, a region code
(100 values), an admission date (2024), a diagnosis code (200 values), a lab value (one
decimal), a visit count, a smoker flag and a ward (12 values); wider tables repeat the
ten kinds with other draws. Every (round, shape) runs in a fresh Python process, so
that its peak memory is its own; the rounds go round-major (every shape in round 1,
then every shape in round 2, ...), so that a shape's rounds see the machine at
different moments. A process:

1. opens a platform in a temporary folder (SQLite, the default limits: 1000 columns,
   10,000 characters a cell, ``--profile-seconds``), and a curator uploads the CSV
   through the API (stored encrypted, the header checked, a profile job queued);
2. **platform**: runs the profile job as a worker does (``veil.server.jobs.claim`` and
   ``veil.server.worker.execute``): the decrypting stream through
   ``veil.release.intake.profile_csv`` (a 50,000-row sample kept), then
   ``risk_guidance`` (``veil.risk.suggest_roles`` and the risk summary), with the time
   left of ``--profile-seconds`` as its limit, written to the database. Timed, with the
   process's RSS before it and its peak RSS after it (``ru_maxrss``; the table's
   generation happens in the parent, so that peak is the platform's and the
   upload's);
3. **library**, the same file in memory: ``profile_csv`` alone (parse), then
   ``suggest_roles`` on its sample as the upload calls it (scan of quasi-identifier
   combinations of up to 3, time limit ``--profile-seconds``), then ``suggest_roles``
   with ``scan_size=1`` (each column's classification and its own risk, no
   combinations): the part of the work that is per cell.

The combination scan's cost follows the number of combinations (up to 3 of the suggested
quasi-identifiers), not the cells; past 100,000 combinations the scan is refused and the
risk summary is not made (the profile stands). A scan that runs into the profile's time
limit makes the platform's job fail (its check after the risk summary), so a shape may
print ``failed``.

Printed per shape: seconds as min / median / max over the rounds, seconds per million
cells (median), the suggested quasi-identifiers and the combinations scanned (or why
the risk summary was not made), the peak RSS, and the 1-minute load average before the
shape's first and after its last round. Then the exponent b of seconds ~ cells^b,
fitted by least squares on the log of the medians: over more rows at 10 columns, over
more columns at 1000 rows, and over every shape. b near 1 is linear in cells.

There is no peer: no other tool profiles an upload the platform's way.

    python benchmarks/bench_profile.py
    python benchmarks/bench_profile.py --shapes 1000x10,10000x10 --rounds 3
"""

from __future__ import annotations

import argparse
import io
import json
import math
import os
import platform as host
import resource
import statistics
import subprocess
import sys
import tempfile
import time
import warnings
from pathlib import Path
from typing import Any

import numpy as np

DEFAULT_SHAPES = "1000x10,10000x10,100000x10,100x100,1000x100,10000x100,1000x1000"
PARTS = ("platform", "profile_csv", "suggest_roles", "suggest_roles_scan1")
_LABELS = {
    "platform": "platform profile job",
    "profile_csv": "profile_csv (parse)",
    "suggest_roles": "suggest_roles (as the upload)",
    "suggest_roles_scan1": "suggest_roles scan_size=1",
}
_PASSWORD = "bench-profile-password-7"


# --------------------------------------------------------------------------- table


def table_csv(rows: int, columns: int, seed: int = 0) -> bytes:
    """A synthetic table of ``rows`` x ``columns``, as CSV bytes (see the module text)."""
    rng = np.random.default_rng([seed, rows, columns])
    names: list[str] = []
    values: list[np.ndarray[Any, Any]] = []
    wards = np.array([f"ward{i}" for i in range(12)])
    letters = np.array(list("ABCDEFGHIJ"))
    for j in range(columns):
        kind = j % 10
        if kind == 0:
            name, v = "patient", np.char.add("P", np.char.zfill(np.arange(rows).astype(str), 7))
        elif kind == 1:
            name, v = "age", rng.integers(18, 91, rows).astype(str)
        elif kind == 2:
            name, v = "sex", rng.choice(np.array(["F", "M"]), rows)
        elif kind == 3:
            name, v = "region", np.char.zfill(rng.integers(0, 100, rows).astype(str), 3)
        elif kind == 4:
            days = rng.integers(0, 366, rows).astype("timedelta64[D]")
            name, v = "admitted", (np.datetime64("2024-01-01") + days).astype(str)
        elif kind == 5:
            codes = np.char.zfill(rng.integers(0, 20, rows).astype(str), 2)
            name, v = "diagnosis", np.char.add(rng.choice(letters, rows), codes)
        elif kind == 6:
            name, v = "lab", np.round(rng.normal(5.0, 1.5, rows), 1).astype(str)
        elif kind == 7:
            name, v = "visits", rng.poisson(3, rows).astype(str)
        elif kind == 8:
            name, v = "smoker", rng.choice(np.array(["yes", "no"]), rows, p=[0.2, 0.8])
        else:
            name, v = "ward", rng.choice(wards, rows)
        names.append(f"{name}_{j}")
        values.append(v)
    out = io.StringIO()
    out.write(",".join(names) + "\n")
    for record in np.stack(values, axis=1).tolist():
        out.write(",".join(record))
        out.write("\n")
    return out.getvalue().encode()


# -------------------------------------------------------------------------- child


def _rss_mib() -> float:
    """The process's resident memory now (MiB)."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def _peak_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux


def _platform(path: Path, folder: Path, profile_seconds: int) -> dict[str, Any]:
    """Upload ``path`` to a fresh platform and time its profile job."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from fastapi.testclient import TestClient

    from veil.masking import SecretKey
    from veil.server import ServerConfig, create_app, open_platform
    from veil.server.accounts import create_user
    from veil.server.jobs import claim
    from veil.server.models import Dataset
    from veil.server.worker import execute

    config = ServerConfig(folder / "data", profile_seconds=profile_seconds)
    platform = open_platform(config, key=SecretKey.generate())
    try:
        with platform.db.session() as session:
            create_user(session, None, "curator", "curator", _PASSWORD)
        client = TestClient(create_app(platform), base_url="https://testserver")
        signed = client.post("/api/login", json={"username": "curator", "password": _PASSWORD})
        assert signed.is_success, signed.text
        token = client.get("/api/me").json()["csrf_token"]
        client.headers["X-CSRF-Token"] = token
        with open(path, "rb") as handle:
            answer = client.post(
                "/api/datasets",
                data={"csrf_token": token, "name": "bench"},
                files={"file": (path.name, handle, "text/csv")},
            )
        assert answer.status_code == 201, answer.text
        dataset_id = int(answer.json()["id"])
        job = claim(platform.db, "bench-worker")
        assert job is not None
        before = _rss_mib()
        start = time.perf_counter()
        status = execute(platform.db, config, platform.keyring, job)
        seconds = time.perf_counter() - start
        peak = _peak_mib()
        with platform.db.session() as session:
            dataset = session.get(Dataset, dataset_id)
            assert dataset is not None
            risk = dict(dataset.risk or {})
            profile_status = dataset.profile_status
    finally:
        platform.db.dispose()
    return {
        "platform": seconds,
        "job": status,
        "profile_status": profile_status,
        "risk_error": risk.get("error"),
        "qis": len(risk.get("quasi_identifiers") or []),
        "rss_before_mib": before,
        "peak_rss_mib": peak,
    }


def _library(data: bytes, profile_seconds: int) -> dict[str, Any]:
    """``profile_csv``, then ``suggest_roles`` as the upload calls it and with scan 1."""
    from veil.errors import VeilError
    from veil.release.intake import profile_csv
    from veil.risk import suggest_roles

    out: dict[str, Any] = {}
    start = time.perf_counter()
    profile = profile_csv(lambda: io.BytesIO(data), rng=None)
    out["profile_csv"] = time.perf_counter() - start
    out["sample_rows"] = len(profile.sample)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        start = time.perf_counter()
        try:
            roles = suggest_roles(profile.sample, time_limit=float(profile_seconds))
            scan = roles.combinations.attrs.get("veil.qi_scan", {})
            out["scan"] = {
                "qis": len(roles.quasi_identifiers),
                "scanned": scan.get("scanned", len(roles.combinations)),
                "total": scan.get("total", len(roles.combinations)),
                "complete": scan.get("complete", True),
            }
        except VeilError as exc:
            out["scan"] = {"refused": str(exc).split(";")[0]}
        out["suggest_roles"] = time.perf_counter() - start
        start = time.perf_counter()
        suggest_roles(profile.sample, scan_size=1, time_limit=float(profile_seconds))
        out["suggest_roles_scan1"] = time.perf_counter() - start
    return out


def child(path: Path, profile_seconds: int) -> dict[str, Any]:
    """One round of one shape (run in its own process)."""
    with tempfile.TemporaryDirectory(prefix="veil-bench-profile-") as tmp:
        measured = _platform(path, Path(tmp), profile_seconds)
    measured.update(_library(path.read_bytes(), profile_seconds))
    return measured


# ------------------------------------------------------------------------- parent


def _shape(text: str) -> tuple[int, int]:
    rows, _, columns = text.strip().lower().partition("x")
    try:
        shape = int(rows), int(columns)
    except ValueError:
        raise argparse.ArgumentTypeError(f"a shape is ROWSxCOLUMNS, got {text!r}") from None
    if shape[0] < 1 or not 1 <= shape[1] <= 1000:
        raise argparse.ArgumentTypeError(f"rows >= 1 and 1-1000 columns, got {text!r}")
    return shape


def _spread(values: list[float]) -> str:
    """min / median / max seconds."""
    return f"{min(values):.3f} / {statistics.median(values):.3f} / {max(values):.3f}"


def fit_exponent(cells: list[int], seconds: list[float]) -> float | None:
    """b of seconds ~ a * cells^b, by least squares on the logs (None under two sizes)."""
    pairs = [(math.log(c), math.log(s)) for c, s in zip(cells, seconds, strict=True) if s > 0]
    xs = [x for x, _ in pairs]
    if len(set(xs)) < 2:
        return None
    mx, my = statistics.fmean(xs), statistics.fmean(y for _, y in pairs)
    num = sum((x - mx) * (y - my) for x, y in pairs)
    return num / sum((x - mx) ** 2 for x in xs)


def _run_child(path: Path, profile_seconds: int) -> dict[str, Any]:
    done = subprocess.run(
        [sys.executable, __file__, "--child", str(path), "--profile-seconds", str(profile_seconds)],
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        raise SystemExit(f"round on {path.name} failed:\n{done.stderr[-3000:]}")
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def _describe(last: dict[str, Any]) -> str:
    scan = last.get("scan", {})
    if "refused" in scan:
        return f"scan refused ({scan['refused']})"
    state = "complete" if scan.get("complete") else "cut at the time limit"
    return f"{scan.get('qis')} QIs, {scan.get('scanned'):,}/{scan.get('total'):,} combos {state}"


def _versions() -> str:
    import pandas as pd

    try:
        commit = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"],
            cwd=Path(__file__).parent,
            capture_output=True,
            text=True,
            check=False,
        ).stdout.strip()
    except OSError:
        commit = "?"
    return (
        f"veil {commit or '?'}, python {host.python_version()}, pandas {pd.__version__}, "
        f"numpy {np.__version__}, {os.cpu_count()} CPUs"
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument(
        "--shapes",
        default=DEFAULT_SHAPES,
        help=f"comma-separated ROWSxCOLUMNS (default {DEFAULT_SHAPES})",
    )
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--profile-seconds", type=int, default=300, help="the platform's profile time limit"
    )
    parser.add_argument("--json", help="write the figures to this file")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(child(Path(args.child), args.profile_seconds)))
        return 0
    shapes = [_shape(s) for s in args.shapes.split(",") if s.strip()]
    if not shapes or args.rounds < 1:
        raise SystemExit("--shapes: at least one; --rounds: at least 1")
    print(f"# {_versions()}; load average at start {os.getloadavg()[0]:.2f}", flush=True)
    if args.rounds < 3:
        print("# fewer than 3 rounds: a check that the script runs, not a figure", flush=True)
    results: dict[tuple[int, int], list[dict[str, Any]]] = {s: [] for s in shapes}
    loads: dict[tuple[int, int], list[float]] = {s: [] for s in shapes}
    with tempfile.TemporaryDirectory(prefix="veil-bench-profile-tables-") as tmp:
        files = {}
        for rows, columns in shapes:
            files[rows, columns] = Path(tmp) / f"t{rows}x{columns}.csv"
            files[rows, columns].write_bytes(table_csv(rows, columns, args.seed))
        for round_ in range(args.rounds):
            for shape in shapes:
                loads[shape].append(os.getloadavg()[0])
                print(f"round {round_ + 1}: {shape[0]} x {shape[1]} ...", flush=True)
                results[shape].append(_run_child(files[shape], args.profile_seconds))
                loads[shape].append(os.getloadavg()[0])
        sizes = {s: files[s].stat().st_size for s in shapes}
    print()
    print(
        "seconds as min / median / max over the rounds; s/Mcell: median seconds per million cells"
    )
    header = f"{'shape':>13} {'cells':>9} {'MB':>6}  " + "  ".join(
        f"{_LABELS[p]:>29} {'s/Mcell':>7}" for p in PARTS
    )
    print(header)
    medians: dict[str, dict[tuple[int, int], float]] = {p: {} for p in PARTS}
    for shape in shapes:
        rows, columns = shape
        cells = rows * columns
        cols = []
        for part in PARTS:
            values = [float(r[part]) for r in results[shape]]
            medians[part][shape] = statistics.median(values)
            cols.append(f"{_spread(values):>29} {medians[part][shape] / cells * 1e6:>7.2f}")
        print(
            f"{rows:>6} x {columns:>4} {cells:>9,} {sizes[shape] / 1e6:>6.2f}  " + "  ".join(cols)
        )
    print()
    print(
        f"{'shape':>13}  {'platform profile':<22} {'peak RSS MiB':>12} {'RSS before':>10} "
        f"{'load before -> after':>20}  risk summary (the upload's)"
    )
    for shape in shapes:
        rows, columns = shape
        last = results[shape][-1]
        status = f"{last['job']}, {last['profile_status']}"
        risk = _describe(last)
        if last["risk_error"]:
            refused = "refused" in last.get("scan", {})
            risk = last["risk_error"] + ("" if refused else f"; in process: {risk}")
        peak = max(r["peak_rss_mib"] for r in results[shape])
        before = max(r["rss_before_mib"] for r in results[shape])
        print(
            f"{rows:>6} x {columns:>4}  {status:<22} {peak:>12.0f} {before:>10.0f} "
            f"{loads[shape][0]:>9.2f} -> {loads[shape][-1]:<8.2f}  {risk}"
        )
    print()
    print("exponent b of seconds ~ cells^b (least squares on the log of the medians):")
    families = {
        "more rows, 10 columns": [s for s in shapes if s[1] == 10],
        "more columns, 1000 rows": [s for s in shapes if s[0] == 1000],
        "every shape": shapes,
    }
    exponents: dict[str, dict[str, float | None]] = {}
    for label, members in families.items():
        if len({r * c for r, c in members}) < 2:
            continue
        exponents[label] = {
            part: fit_exponent([r * c for r, c in members], [medians[part][s] for s in members])
            for part in PARTS
        }
        shown = ", ".join(
            f"{_LABELS[p]} {'-' if b is None else f'{b:.2f}'}" for p, b in exponents[label].items()
        )
        print(f"  {label} ({len(members)} shapes): {shown}")
    print(f"# load average at end {os.getloadavg()[0]:.2f}")
    if args.json:
        Path(args.json).write_text(
            json.dumps(
                {
                    "versions": _versions(),
                    "rounds": args.rounds,
                    "profile_seconds": args.profile_seconds,
                    "shapes": [
                        {
                            "rows": s[0],
                            "columns": s[1],
                            "bytes": sizes[s],
                            "rounds": results[s],
                            "load": loads[s],
                        }
                        for s in shapes
                    ],
                    "exponents": exponents,
                },
                indent=2,
            )
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
