"""How a release scales with its rows: pandas, Dask threads and a local Dask cluster.

The table and the two plans (``rows`` and ``kanon``) are ``bench_release.py``'s, generated
once per size with ``--files`` chosen so that every Parquet file (one Dask partition)
holds about ``--rows-per-file`` records. For each size, ``--rounds`` rounds each run
every (plan, engine) once in turn, every run a fresh interpreter
(``veil.release.run(plan, out, engine=...)``, ``rng=None``, Parquet out, no report);
above ``--rounds-max`` rows one round is run. pandas runs only up to ``--pandas-max``
rows (it holds the table in memory). Printed per (plan, engine): the run's seconds
(``RunResult.seconds``) as min / median / max, the process's peak resident memory
(``ru_maxrss`` of the child, the largest over the rounds), the optimum the
``kanon`` plan found, and the 1-minute load average after the run; then the exponent
``b`` of ``seconds = a * rows^b`` fitted by least squares on the logs of the medians
(over every size, and over the sizes from ``--fit-from`` rows, where the fixed start-up
cost no longer weighs).

    python benchmarks/bench_scale.py --rows 1e6,5e6,20e6,100e6 --data DIR
    python benchmarks/bench_scale.py --rows 2e5,1e6 --rounds 3 --engines pandas,dask

Not a test. 100M rows take 2.4 GB of Parquet under ``--data``.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import statistics
import sys
from pathlib import Path
from typing import Any

import numpy as np

import bench_release
import generate


def _fit(points: list[tuple[int, float]]) -> float | None:
    """Slope of log(seconds) on log(rows), or None with fewer than two sizes."""
    if len(points) < 2:
        return None
    x = np.log([p[0] for p in points])
    y = np.log([p[1] for p in points])
    slope, _ = np.polyfit(x, y, 1)
    return float(slope)


def run(args: argparse.Namespace) -> dict[str, Any]:
    results: dict[str, Any] = {"meta": bench_release.environment(), "runs": []}
    for rows in args.rows:
        files = max(1, math.ceil(rows / args.rows_per_file))
        folder = bench_release.dataset(args.data, rows, files, args.seed)
        plans = {kind: bench_release.write_plan(folder, kind) for kind in args.plans}
        engines = [e for e in args.engines if e != "pandas" or rows <= args.pandas_max]
        rounds = args.rounds if rows <= args.rounds_max else 1
        for i in range(rounds):
            for kind, plan in plans.items():
                for engine in engines:
                    label = f"{rows:,} rows, {kind} on {engine}, round {i + 1}/{rounds}"
                    report = bench_release.run_child(
                        ["--worker", kind, engine, os.fspath(plan)], label
                    )
                    entry = {
                        "rows": rows,
                        "files": files,
                        "plan": kind,
                        "engine": engine,
                        "round": i + 1,
                        "status": report["status"],
                        "run_s": report.get("run_s"),
                        "max_rss_mb": report.get("child_max_rss_mb"),
                        "tree_peak_rss_mb": report.get("tree_peak_rss_mb"),
                        "rows_out": report.get("rows_out"),
                        "anonymization": report.get("anonymization"),
                        "load_average": os.getloadavg()[0],
                    }
                    results["runs"].append(entry)
                    if args.json:
                        args.json.write_text(json.dumps(results, indent=2, default=str))
    return results


def summarize(results: dict[str, Any], fit_from: int) -> list[str]:
    lines = []
    groups: dict[tuple[str, str], dict[int, list[dict[str, Any]]]] = {}
    for entry in results["runs"]:
        if entry["status"] == "ok":
            key = (entry["plan"], entry["engine"])
            groups.setdefault(key, {}).setdefault(entry["rows"], []).append(entry)
    header = (
        f"{'plan':<6} {'engine':<11} {'rows':>12} {'runs':>4} {'s (min / median / max)':>26} "
        f"{'peak RSS MB':>12} {'tree MB':>8} {'s per 1M rows':>14} {'load':>10}  optimum"
    )
    lines.append(header)
    lines.append("-" * len(header))
    for (plan, engine), by_rows in groups.items():
        medians: list[tuple[int, float]] = []
        for rows, entries in sorted(by_rows.items()):
            times = [e["run_s"] for e in entries]
            median = statistics.median(times)
            medians.append((rows, median))
            loads = [e["load_average"] for e in entries]
            optimum = entries[-1]["anonymization"] or {}
            lines.append(
                f"{plan:<6} {engine:<11} {rows:>12,} {len(entries):>4} "
                f"{f'{min(times):.1f} / {median:.1f} / {max(times):.1f}':>26} "
                f"{max(e['max_rss_mb'] for e in entries):>12,.0f} "
                f"{max(e['tree_peak_rss_mb'] or 0 for e in entries):>8,.0f} "
                f"{median / (rows / 1e6):>14.3f} "
                f"{f'{min(loads):.1f}-{max(loads):.1f}':>10}  "
                + (
                    f"levels {optimum.get('levels')}, loss {optimum.get('loss')}"
                    if optimum
                    else "-"
                )
            )
        every = _fit(medians)
        late = _fit([m for m in medians if m[0] >= fit_from])
        lines.append(
            f"{'':<6} {'':<11} exponent b (seconds ~ rows^b): "
            + ("-" if every is None else f"{every:.2f} over every size")
            + ("" if late is None else f", {late:.2f} from {fit_from:,} rows")
        )
    optima: dict[int, set[str]] = {}
    for entry in results["runs"]:
        if entry["status"] == "ok" and entry["plan"] == "kanon" and entry["anonymization"]:
            a = entry["anonymization"]
            optima.setdefault(entry["rows"], set()).add(f"{a.get('levels')} loss {a.get('loss')}")
    for rows, found in sorted(optima.items()):
        verdict = "the same optimum on every engine" if len(found) == 1 else "DIFFERENT optima"
        lines.append(f"kanon at {rows:,} rows: {verdict}: {'; '.join(sorted(found))}")
    failed = [e for e in results["runs"] if e["status"] != "ok"]
    for entry in failed:
        lines.append(
            f"FAILED: {entry['plan']} on {entry['engine']} at {entry['rows']:,} rows: "
            f"{entry['status']} (peak RSS {entry['max_rss_mb']} MB)"
        )
    return lines


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", default="1e6,5e6,20e6,100e6", help="comma-separated sizes")
    parser.add_argument("--rows-per-file", type=float, default=1.25e6, help="rows per file")
    parser.add_argument("--engines", default="pandas,dask,dask-local")
    parser.add_argument("--plans", default="rows,kanon")
    parser.add_argument("--rounds", type=int, default=3, help="rounds per size (at least 3)")
    parser.add_argument("--rounds-max", type=float, default=20e6, help="one round above this")
    parser.add_argument("--pandas-max", type=float, default=20e6, help="no pandas above this")
    parser.add_argument("--fit-from", type=float, default=5e6, help="second fit's first size")
    parser.add_argument("--data", type=Path, default=bench_release.DEFAULT_DATA)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--json", type=Path, help="also write every run as JSON (as it goes)")
    args = parser.parse_args(argv)
    args.rows = [generate.parse_count(r) for r in args.rows.split(",") if r.strip()]
    args.engines = [e.strip() for e in args.engines.split(",") if e.strip()]
    args.plans = [p.strip() for p in args.plans.split(",") if p.strip()]
    bad = [e for e in args.engines if e not in bench_release.ENGINES]
    bad += [p for p in args.plans if p not in bench_release.PLANS]
    if bad:
        parser.error(f"unknown engines or plans: {bad}")
    if args.rounds < 3:
        parser.error("--rounds must be at least 3")
    return args


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    results = run(args)
    meta = results["meta"]
    print(
        f"\nveil {meta['veil']}; pandas {meta['pandas']}, dask {meta['dask']}, "
        f"{meta['cpus']} CPUs; rows per Parquet file about {args.rows_per_file:,.0f}"
    )
    for line in summarize(results, int(args.fit_from)):
        print(line)
    sys.stdout.flush()


if __name__ == "__main__":
    main()
