"""End-to-end release of a generated Parquet table with ``veil.release.run``: pandas and Dask.

The table (``--rows``, default 20M; age, region, sex, income and a latitude/longitude
pair) is generated once from a seeded generator and cached as a folder of Parquet files
under ``--data``. Two release plans are written next to it:

* ``rows``: row steps only. age Laplace on [16, 100], sex binary randomized response,
  region k-ary randomized response over its declared 50 regions, income Laplace on
  [0, 200 000], the location pair planar Laplace (0.01 per metre) in a projection fixed at
  a public centre; ε = 4 per record shared equally by the four local-DP columns. On
  Dask no step needs the whole table, so the runner streams the partitions into the
  release file.
* ``kanon``: k-anonymity (k = 10, no suppression) of age (5-, 10-, 20-year bands),
  region (10 macro-regions) and sex after the row steps; on Dask the runner counts the
  classes with a distributed group-by and streams the generalized partitions (older
  runners gathered the partitions into one pandas frame). age, region and sex are kept
  for the search (a plan refuses noise on a column it generalizes); income and the
  location are noised.

Each (engine, plan) runs in a fresh interpreter: ``veil.release.run(plan, out, engine=...)``
with ``rng=None`` (a secure generator, what a user gets), release written as Parquet,
no report. The table gives the runner's own timings (the manifest's ``timings_s``), the
run's wall time and the process's peak resident memory (``ru_maxrss`` of the child, from
``os.wait4``). For reference the script also times, in another fresh interpreter per
engine, the bare operations the issue quotes: the noise step alone (the same five
mechanisms called directly on the table already in memory; on Dask one task per
partition, as the runner does), split into the four local-DP columns and the planar
Laplace mask (in the AEQD projection the runner builds for a ``centre``, and in the UTM
zone of the same centre), and a 3-column group-by (region, sex, age: count and mean
income), with pandas beside Dask threads.

    python benchmarks/bench_release.py                 # 20M rows
    python benchmarks/bench_release.py --rows 1e6 --json out.json
    python benchmarks/bench_release.py --engines dask --plans rows

See benchmarks/README.md for what each figure means.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import platform
import resource
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

import generate

ENGINES = ("pandas", "dask", "dask-local")
PLANS = ("rows", "kanon")
DEFAULT_DATA = Path(tempfile.gettempdir()) / "veil-bench-release"

AGE_BOUNDS = (16, 100)
INCOME_BOUNDS = (0.0, 200_000.0)
REGIONS = [f"R{i:02d}" for i in range(1, 51)]
MACRO_REGIONS = 10
SEXES = ["Female", "Male"]
CENTRE = (40.4168, -3.7038)  # Puerta del Sol, Madrid: the public projection centre
SPREAD_DEG = 0.05  # standard deviation of the generated points, per axis
LDP_EPSILON = 4.0  # per record, over age, sex, region and income (1.0 each)
LDP_COLUMNS = 4
GEO_EPSILON = 0.01  # per metre
K = 10
MAX_SUPPRESSION = 0.0  # the oldest ages are rare: the search has to generalize
PHASE_ORDER = ["prepare", "read", "row steps", "anonymization", "write", "row steps + write"]


# ------------------------------------------------------------------------------ data


def _region_weights() -> np.ndarray:
    """Zipf-like region sizes: the largest region about 50 times the smallest."""
    weights = 1.0 / np.arange(1, len(REGIONS) + 1, dtype=np.float64)
    out: np.ndarray = weights / weights.sum()
    return out


def _age_weights() -> np.ndarray:
    """Adult-population-like ages 16..100: flat to 60, then thinning out."""
    ages = np.arange(AGE_BOUNDS[0], AGE_BOUNDS[1] + 1)
    weights = np.where(ages <= 60, 1.0, np.exp(-(ages - 60) / 10.0))
    out: np.ndarray = weights / weights.sum()
    return out


def generate_chunk(rows: int, seed: int) -> pd.DataFrame:
    """``rows`` records from ``Generator(PCG64(seed))`` (benchmark data, not privacy noise)."""
    gen = np.random.Generator(np.random.PCG64(seed))
    age = gen.choice(np.arange(AGE_BOUNDS[0], AGE_BOUNDS[1] + 1), size=rows, p=_age_weights())
    region = pd.Categorical.from_codes(
        gen.choice(len(REGIONS), size=rows, p=_region_weights()).astype(np.int8),
        categories=pd.Index(REGIONS),
    )
    sex = np.asarray(SEXES, dtype=object)[gen.integers(0, 2, size=rows)]
    # Log-normal incomes, median 30 000; about 0.9% above the public upper bound (clipped).
    income = np.round(gen.lognormal(np.log(30_000.0), 0.8, size=rows), 2)
    return pd.DataFrame(
        {
            "age": age.astype(np.int64),
            "region": region,
            "sex": pd.array(sex, dtype="str"),
            "income": income,
            "lat": CENTRE[0] + gen.normal(0.0, SPREAD_DEG, size=rows),
            "lon": CENTRE[1] + gen.normal(0.0, SPREAD_DEG, size=rows),
        }
    )


def dataset(root: Path, rows: int, files: int, seed: int) -> Path:
    """The folder of Parquet files for ``rows`` records, generated once and cached."""
    folder = root / f"rows-{rows}-files-{files}-seed-{seed}"
    data = folder / "data"
    marker = folder / "complete.json"
    if marker.exists():
        return folder
    if folder.exists():
        shutil.rmtree(folder)
    data.mkdir(parents=True)
    start = time.perf_counter()
    bounds = np.linspace(0, rows, files + 1).astype(np.int64)
    for i in range(files):
        chunk = generate_chunk(int(bounds[i + 1] - bounds[i]), seed * 1_000 + i)
        chunk.to_parquet(data / f"part-{i:03d}.parquet", index=False, row_group_size=1 << 20)
        del chunk
    size = sum(p.stat().st_size for p in data.iterdir())
    marker.write_text(
        json.dumps(
            {
                "rows": rows,
                "files": files,
                "seed": seed,
                "bytes": size,
                "seconds": round(time.perf_counter() - start, 1),
            }
        )
    )
    print(
        f"generated {rows:,} rows in {files} Parquet files ({size / 2**20:,.0f} MB) "
        f"in {time.perf_counter() - start:.0f} s under {data}",
        file=sys.stderr,
        flush=True,
    )
    return folder


def _write_hierarchies(folder: Path) -> dict[str, str]:
    """Age bands, macro-regions and sex -> ``*``, as hierarchy CSVs (ARX's format)."""
    folder.mkdir(parents=True, exist_ok=True)
    ages = range(AGE_BOUNDS[0], AGE_BOUNDS[1] + 1)

    def band(age: int, width: int) -> str:
        low = age // width * width
        return f"{low}-{low + width - 1}"

    lines = {
        "age": [f"{a};{band(a, 5)};{band(a, 10)};{band(a, 20)};*" for a in ages],
        "region": [
            f"{r};M{i * MACRO_REGIONS // len(REGIONS) + 1:02d};*" for i, r in enumerate(REGIONS)
        ],
        "sex": [f"{s};*" for s in SEXES],
    }
    paths = {}
    for column, rows in lines.items():
        path = folder / f"{column}.csv"
        path.write_text("\n".join(rows) + "\n", encoding="utf-8")
        paths[column] = os.fspath(path)
    return paths


def write_plan(folder: Path, kind: str) -> Path:
    """The release plan ``kind`` (``rows`` or ``kanon``) for the data in ``folder``."""
    import yaml

    laplace_age = {"method": "laplace", "bounds": list(AGE_BOUNDS)}
    columns: dict[str, Any] = {
        "age": {"role": "quasi_identifier", "treatment": laplace_age},
        "region": {
            "role": "quasi_identifier",
            "treatment": {"method": "randomized_response", "domain": REGIONS},
        },
        "sex": {
            "role": "quasi_identifier",
            "treatment": {"method": "randomized_response", "domain": SEXES},
        },
        "income": {
            "role": "sensitive",
            "treatment": {"method": "laplace", "bounds": list(INCOME_BOUNDS)},
        },
    }
    ldp_epsilon = LDP_EPSILON
    plan: dict[str, Any] = {
        "version": 1,
        "name": f"bench-release-{kind}",
        "input": {"path": os.fspath(folder / "data"), "format": "parquet"},
        "columns": columns,
        "locations": [
            {
                "lat": "lat",
                "lon": "lon",
                "role": "quasi_identifier",
                "mask": {"method": "planar_laplace", "epsilon": GEO_EPSILON},
                "centre": list(CENTRE),
            }
        ],
        "output": {"format": "parquet", "file": "release.parquet", "report": False},
    }
    if kind == "kanon":
        for column in ("age", "region", "sex"):
            columns[column] = {"role": "quasi_identifier", "treatment": "keep"}
        plan["anonymization"] = {
            "quasi_identifiers": _write_hierarchies(folder / "hierarchies"),
            "models": [{"k_anonymity": K}],
            "max_suppression": MAX_SUPPRESSION,
            "metric": "loss",
        }
        ldp_epsilon = LDP_EPSILON / LDP_COLUMNS  # income alone, at the same 1.0
    plan["budget"] = {
        "ldp": {"epsilon": ldp_epsilon},
        "metric": {"epsilon": GEO_EPSILON},
        "allocation": "equal",
    }
    path = folder / f"plan-{kind}.yaml"
    path.write_text(yaml.safe_dump(plan, sort_keys=False), encoding="utf-8")
    return path


# ---------------------------------------------------------------------------- workers


def max_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux


def release_worker(engine: str, plan: Path, out: Path) -> dict[str, Any]:
    """One ``veil.release.run`` in this process: its timings, rows and warnings."""
    import veil.release

    baseline = max_rss_mb()
    marks: list[tuple[str, float]] = []
    start = time.perf_counter()
    result = veil.release.run(
        plan,
        out,
        engine=engine,
        # a Progress event (its label), or the plain label of veil before d906d16
        progress=lambda event: marks.append((getattr(event, "label", event), time.perf_counter())),
    )
    wall = time.perf_counter() - start
    # Timings and the anonymization's metrics are the custodian's (confidential) record.
    record = result.custodian
    anonymization = record.get("anonymization") or {}
    return {
        "wall_s": wall,
        "run_s": result.seconds,
        "timings": dict(record.get("timings_s", {})),
        "progress": [(label, round(t - start, 3)) for label, t in marks],
        "rows_in": result.rows_in,
        "rows_out": result.rows_out,
        "anonymization": {
            k: anonymization[k] for k in ("levels", "suppressed") if k in anonymization
        }
        | ({"loss": anonymization["metrics"].get("loss")} if "metrics" in anonymization else {}),
        "totals": result.totals,
        "warnings": sorted(
            {f"{w['category']}: {w['message'].splitlines()[0][:160]}" for w in result.warnings}
        ),
        "release_mb": round(result.release_path.stat().st_size / 2**20, 1)
        if result.release_path is not None
        else None,
        "rss_after_imports_mb": round(baseline, 1),
        "max_rss_mb": round(max_rss_mb(), 1),
    }


def _ldp_columns(frame: pd.DataFrame, generators: list[np.random.Generator]) -> pd.DataFrame:
    """The four local-DP columns of the ``rows`` plan, one stream each."""
    from veil import ldp

    eps = LDP_EPSILON / LDP_COLUMNS
    age, sex, region, income = generators[:4]
    out = ldp.dp_clip_laplace(frame, "age", eps, *AGE_BOUNDS, rng=age)
    out = ldp.dp_randomized_response_binary(out, "sex", eps, domain=SEXES, rng=sex)
    out = ldp.dp_randomized_response_kary(out, "region", eps, domain=REGIONS, rng=region)
    released: pd.DataFrame = ldp.dp_clip_laplace(out, "income", eps, *INCOME_BOUNDS, rng=income)
    return released


def _planar(method: str) -> Any:
    def mask(frame: pd.DataFrame, generators: list[np.random.Generator]) -> pd.DataFrame:
        from veil import geo

        projection = geo.projection_at(*CENTRE, method=method)  # type: ignore[arg-type]
        return geo.planar_laplace(
            frame, "lat", "lon", GEO_EPSILON, projection=projection, rng=generators[4]
        )

    return mask


def _all_five(frame: pd.DataFrame, generators: list[np.random.Generator]) -> pd.DataFrame:
    """The five mechanisms of the ``rows`` plan, as the runner calls them (AEQD at the centre)."""
    released: pd.DataFrame = _planar("aeqd")(_ldp_columns(frame, generators), generators)
    return released


# The noise operations timed bare: (label, function of (partition, 5 generators)).
NOISE_OPERATIONS: list[tuple[str, Any]] = [
    ("noise: the plan's 5 mechanisms", _all_five),
    ("  4 local-DP columns", _ldp_columns),
    ("  planar Laplace, AEQD at the centre", _planar("aeqd")),
    ("  planar Laplace, UTM zone of the centre", _planar("utm")),
]
BARE_OPERATIONS = [label for label, _ in NOISE_OPERATIONS] + ["group-by (region, sex, age)"]


def _group_by(frame: Any) -> Any:
    return frame.groupby(["region", "sex", "age"], observed=True)["income"].agg(["count", "mean"])


def bare_worker(engine: str, data: Path, repeats: int) -> dict[str, Any]:
    """Load the table into memory, then time the noise operations and a 3-column group-by."""
    from veil.rng import resolve_rng, spawn

    timings: dict[str, list[float]] = {label: [] for label in BARE_OPERATIONS}
    info: dict[str, Any] = {}
    start = time.perf_counter()
    if engine == "pandas":
        frame = pd.read_parquet(data)
        info["load_s"] = time.perf_counter() - start
        info["partitions"] = 1
        for label, operation in NOISE_OPERATIONS:
            for _ in range(repeats):
                generators = spawn(resolve_rng(None), 5)
                tick = time.perf_counter()
                released = operation(frame, generators)
                timings[label].append(time.perf_counter() - tick)
                del released
        for _ in range(repeats):
            tick = time.perf_counter()
            groups = _group_by(frame)
            timings[BARE_OPERATIONS[-1]].append(time.perf_counter() - tick)
        info["groups"] = len(groups)
    else:
        import dask
        import dask.dataframe as dd
        from dask.base import compute
        from dask.delayed import delayed

        with dask.config.set(scheduler="threads"):
            table = dd.read_parquet(data).persist()
            info["load_s"] = time.perf_counter() - start
            parts = table.to_delayed()
            info["partitions"] = len(parts)
            for label, operation in NOISE_OPERATIONS:
                for _ in range(repeats):
                    # One task per partition, each with its own child streams, as the runner.
                    per_step = [spawn(g, len(parts)) for g in spawn(resolve_rng(None), 5)]
                    tasks = [
                        delayed(operation)(part, [children[p] for children in per_step])
                        for p, part in enumerate(parts)
                    ]
                    tick = time.perf_counter()
                    released = compute(*tasks)  # type: ignore[no-untyped-call]
                    timings[label].append(time.perf_counter() - tick)
                    del released
            for _ in range(repeats):
                tick = time.perf_counter()
                groups = _group_by(table).compute()
                timings[BARE_OPERATIONS[-1]].append(time.perf_counter() - tick)
            info["groups"] = len(groups)
    info["times"] = timings
    info["max_rss_mb"] = round(max_rss_mb(), 1)
    return info


# ----------------------------------------------------------------------------- parent


class _TreeMemory(threading.Thread):
    """Samples the summed resident memory of a process and all its descendants (a
    local Dask cluster's worker processes included) every 0.2 s; ``peak`` in bytes.

    ``ru_maxrss`` of the child covers the child alone (and only the descendants it
    waited for), not worker processes still running beside it.
    """

    def __init__(self, pid: int) -> None:
        super().__init__(daemon=True)
        self.pid = pid
        self.peak = 0
        self._done = threading.Event()

    def run(self) -> None:
        import psutil

        while not self._done.wait(0.2):
            try:
                root = psutil.Process(self.pid)
                processes = [root, *root.children(recursive=True)]
            except psutil.Error:
                continue
            total = 0
            for process in processes:
                with contextlib.suppress(psutil.Error):
                    total += process.memory_info().rss
            self.peak = max(self.peak, total)

    def stop(self) -> None:
        self._done.set()
        self.join()


def run_child(args: list[str], label: str) -> dict[str, Any]:
    """Run this script with ``args`` in a fresh interpreter; its report and peak RSS."""
    with tempfile.TemporaryDirectory(prefix="veil-bench-") as tmp:
        report_path = Path(tmp) / "report.json"
        command = [
            sys.executable,
            str(Path(__file__).resolve()),
            *args,
            "--worker-out",
            str(report_path),
        ]
        print(f"[{label}] starting", file=sys.stderr, flush=True)
        start = time.perf_counter()
        child = subprocess.Popen(command)
        sampler = _TreeMemory(child.pid)
        sampler.start()
        _, status, usage = os.wait4(child.pid, 0)
        sampler.stop()
        child.returncode = os.waitstatus_to_exitcode(status)
        elapsed = time.perf_counter() - start
        if child.returncode != 0 or not report_path.exists():
            reason = (
                f"killed by signal {-child.returncode} (out of memory?)"
                if child.returncode < 0
                else f"exit code {child.returncode}"
            )
            return {
                "status": f"failed ({reason})",
                "child_max_rss_mb": usage.ru_maxrss / 1024,
                "tree_peak_rss_mb": round(sampler.peak / 2**20, 1),
            }
        report: dict[str, Any] = json.loads(report_path.read_text())
        report["status"] = "ok"
        report["child_max_rss_mb"] = round(usage.ru_maxrss / 1024, 1)
        report["tree_peak_rss_mb"] = round(sampler.peak / 2**20, 1)
        report["process_s"] = round(elapsed, 2)
        print(f"[{label}] done in {elapsed:.0f} s", file=sys.stderr, flush=True)
        return report


def phase_seconds(timings: dict[str, float]) -> dict[str, float]:
    """The manifest's timings as phases comparable across engines.

    pandas times each row step (``"age: laplace"``) and the finish-and-write pass
    (``"finish and write"``); Dask times the row steps together (``"row steps (16
    partitions)"``), or together with the write when it streams the release (``"row steps
    and write, streamed (16 partitions)"``). Keys this function does not know are kept as
    they are.
    """
    out: dict[str, float] = {}
    steps = {k: v for k, v in timings.items() if ": " in k}
    together = [v for k, v in timings.items() if k.startswith("row steps (")]
    streamed = [v for k, v in timings.items() if k.startswith("row steps and write")]
    anonymization = [v for k, v in timings.items() if k.startswith("anonymization")]
    if "finish and write" in timings:
        timings = {**timings, "write": timings["finish and write"]}
        del timings["finish and write"]
    known = {"prepare", "read", "write"}
    for key in ("prepare", "read"):
        if key in timings:
            out[key] = timings[key]
    for key, seconds in steps.items():
        out[f"  {key}"] = seconds
    if steps or together:
        out["row steps"] = sum(steps.values()) + sum(together)
    if anonymization:
        out["anonymization"] = sum(anonymization)
    if "write" in timings:
        out["write"] = timings["write"]
    if streamed:
        out["row steps + write"] = sum(streamed)
    elif "row steps" in out and "write" in out:
        out["row steps + write"] = out["row steps"] + out["write"]
    for key, seconds in timings.items():
        if not (key in known or ": " in key or key.startswith(("row steps", "anonymization"))):
            out[key] = seconds
    return out


def _fmt(value: float | None, unit: str = "s") -> str:
    if value is None:
        return "-"
    if unit == "MB":
        return f"{value:,.0f}"
    return f"{value:.2f}"


def _ratio(a: float | None, b: float | None) -> str:
    return f"{a / b:.2f}x" if a is not None and b is not None and b > 0 else "-"


def _table(header: list[str], lines: list[list[str]]) -> str:
    widths = [max(len(h), *(len(line[i]) for line in lines)) for i, h in enumerate(header)]
    out = [
        " | ".join(
            h.ljust(w) if i == 0 else h.rjust(w)
            for i, (h, w) in enumerate(zip(header, widths, strict=True))
        )
    ]
    out.append("-+-".join("-" * w for w in widths))
    for line in lines:
        out.append(
            " | ".join(
                c.ljust(w) if i == 0 else c.rjust(w)
                for i, (c, w) in enumerate(zip(line, widths, strict=True))
            )
        )
    return "\n".join(out)


def release_table(kind: str, engines: list[str], reports: dict[str, dict[str, Any]]) -> str:
    """Phases as rows, engines as columns; the ratio is the first engine's over each other."""
    ok = {e: r for e, r in reports.items() if r["status"] == "ok"}
    phases = {e: phase_seconds(r["timings"]) for e, r in ok.items()}
    order: list[str] = []
    for engine in engines:
        order += [p for p in phases.get(engine, {}) if p not in order]
    order.sort(
        key=lambda p: (
            [*PHASE_ORDER, p].index(p.strip())
            if p.strip() in PHASE_ORDER
            else PHASE_ORDER.index("read") + 0.5
        )
    )
    base = engines[0]
    lines = []
    for phase in order:
        cells = [phases.get(e, {}).get(phase) for e in engines]
        lines.append([phase, *(_fmt(c) for c in cells), *(_ratio(cells[0], c) for c in cells[1:])])
    for label, key, unit in (
        ("total (run)", "run_s", "s"),
        ("process (start to exit)", "process_s", "s"),
        ("peak RSS MB", "child_max_rss_mb", "MB"),
        ("peak RSS MB, process tree (summed)", "tree_peak_rss_mb", "MB"),
        ("RSS after imports MB", "rss_after_imports_mb", "MB"),
    ):
        cells = [ok[e][key] if e in ok else None for e in engines]
        ratios = [_ratio(cells[0], c) for c in cells[1:]]
        lines.append([label, *(_fmt(c, unit) for c in cells), *ratios])
    for engine in engines:
        if engine not in ok:
            lines.append([f"{engine}: {reports[engine]['status']}", *[""] * (2 * len(engines) - 1)])
    header = [f"{kind}: phase", *(f"{e} s" for e in engines), *(f"{base}/{e}" for e in engines[1:])]
    return _table(header, lines)


def bare_table(engines: list[str], reports: dict[str, dict[str, Any]]) -> str:
    ok = {e: r for e, r in reports.items() if r["status"] == "ok"}
    base = engines[0]
    lines = []
    for op in BARE_OPERATIONS:
        cells = [min(ok[e]["times"][op]) if e in ok else None for e in engines]
        lines.append([op, *(_fmt(c) for c in cells), *(_ratio(cells[0], c) for c in cells[1:])])
    cells = [ok[e]["load_s"] if e in ok else None for e in engines]
    lines.append(
        [
            "load (read into memory)",
            *(_fmt(c) for c in cells),
            *(_ratio(cells[0], c) for c in cells[1:]),
        ]
    )
    cells = [ok[e]["child_max_rss_mb"] if e in ok else None for e in engines]
    lines.append(
        ["peak RSS MB", *(_fmt(c, "MB") for c in cells), *(_ratio(cells[0], c) for c in cells[1:])]
    )
    for engine in engines:
        if engine not in ok:
            lines.append([f"{engine}: {reports[engine]['status']}", *[""] * (2 * len(engines) - 1)])
    header = ["bare operation", *(f"{e} s" for e in engines), *(f"{base}/{e}" for e in engines[1:])]
    return _table(header, lines)


def environment() -> dict[str, Any]:
    from importlib.metadata import version

    import pyarrow

    import veil

    return {
        "veil_source": os.fspath(Path(veil.__file__).parent),
        "python": platform.python_version(),
        "cpus": os.cpu_count(),
        "loadavg_at_start": os.getloadavg(),
        "numpy": np.__version__,
        "pandas": pd.__version__,
        "dask": version("dask"),
        "pyarrow": pyarrow.__version__,
        "veil": veil.__version__,
        "started": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
    }


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        description="End-to-end release on pandas and Dask threads (see benchmarks/README.md)."
    )
    parser.add_argument("--rows", default="20e6", help="rows of the table (default 20e6)")
    parser.add_argument("--files", type=int, default=16, help="Parquet files (default 16)")
    parser.add_argument(
        "--data", type=Path, default=DEFAULT_DATA, help=f"cache folder (default {DEFAULT_DATA})"
    )
    parser.add_argument(
        "--engines",
        default="pandas,dask",
        help=f"comma-separated, first is the ratios' base; any of {', '.join(ENGINES)}",
    )
    parser.add_argument(
        "--plans", default=",".join(PLANS), help=f"comma-separated: {', '.join(PLANS)}"
    )
    parser.add_argument("--no-bare", action="store_true", help="skip the bare operations")
    parser.add_argument("--repeats", type=int, default=3, help="runs of each bare operation")
    parser.add_argument("--seed", type=int, default=0, help="seed of the generated data")
    parser.add_argument("--keep-output", action="store_true", help="keep the releases")
    parser.add_argument("--json", type=Path, help="also write every measurement as JSON")
    parser.add_argument("--worker", nargs=3, help=argparse.SUPPRESS)
    parser.add_argument("--worker-out", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    args.rows = generate.parse_count(args.rows)
    args.engines = [e.strip() for e in args.engines.split(",") if e.strip()]
    args.plans = [p.strip() for p in args.plans.split(",") if p.strip()]
    for name, values, allowed in (("engines", args.engines, ENGINES), ("plans", args.plans, PLANS)):
        bad = [v for v in values if v not in allowed]
        if bad or not values:
            parser.error(f"--{name}: {bad or 'none given'}; allowed: {', '.join(allowed)}")
    if args.repeats < 1:
        parser.error("--repeats must be >= 1")
    return args


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    if args.worker:
        kind, engine, path = args.worker
        warnings.simplefilter("ignore")  # the run records its warnings itself
        if kind == "bare":
            report = bare_worker(engine, Path(path), args.repeats)
        else:
            out = Path(path).parent / f"out-{kind}-{engine}"
            try:
                report = release_worker(engine, Path(path), out)
            finally:
                if not args.keep_output:
                    shutil.rmtree(out, ignore_errors=True)
        args.worker_out.write_text(json.dumps(report, default=str))
        return
    meta = environment()
    folder = dataset(args.data, args.rows, args.files, args.seed)
    meta["data"] = json.loads((folder / "complete.json").read_text())
    results: dict[str, Any] = {"meta": meta, "release": {}, "bare": {}}
    for kind in args.plans:
        plan = write_plan(folder, kind)
        results["release"][kind] = {
            engine: run_child(
                ["--worker", kind, engine, os.fspath(plan)]
                + (["--keep-output"] if args.keep_output else []),
                f"{kind} on {engine}",
            )
            for engine in args.engines
        }
    if not args.no_bare:
        results["bare"] = {
            engine: run_child(
                [
                    "--worker",
                    "bare",
                    engine,
                    os.fspath(folder / "data"),
                    "--repeats",
                    str(args.repeats),
                ],
                f"bare operations on {engine}",
            )
            for engine in args.engines
            if engine != "dask-local"
        }
    print()
    print(
        f"veil {meta['veil']}; pandas {meta['pandas']}, numpy {meta['numpy']}, dask "
        f"{meta['dask']}, pyarrow {meta['pyarrow']}, Python {meta['python']}, "
        f"{meta['cpus']} CPUs, load average at start {meta['loadavg_at_start'][0]:.2f}"
    )
    print(f"veil imported from {meta['veil_source']}")
    print(
        f"{args.rows:,} rows in {args.files} Parquet files "
        f"({meta['data']['bytes'] / 2**20:,.0f} MB)"
        f"; times in seconds; ratio = {args.engines[0]} / other (above 1: the other is faster)"
    )
    for kind, reports in results["release"].items():
        print()
        print(release_table(kind, args.engines, reports))
        for engine, report in reports.items():
            if report["status"] != "ok":
                continue
            notes = [
                f"rows {report['rows_in']:,} -> {report['rows_out']:,}",
                f"release {report['release_mb']} MB",
            ]
            if report["anonymization"]:
                notes.append(f"anonymization {report['anonymization']}")
            print(f"  {engine}: " + "; ".join(notes))
            for warning in report["warnings"]:
                print(f"    warning: {warning}")
    if results["bare"]:
        print()
        bare_engines = [e for e in args.engines if e in results["bare"]]
        print(f"bare operations, table in memory, best of {args.repeats}")
        print(bare_table(bare_engines, results["bare"]))
        for engine, report in results["bare"].items():
            if report["status"] == "ok":
                print(f"  {engine}: {report['partitions']} partitions, {report['groups']:,} groups")
    if args.json:
        args.json.write_text(json.dumps(results, indent=2, default=str))
        print(f"\nresults written to {args.json}")


if __name__ == "__main__":
    main()
