"""Side-by-side benchmark of trasgoDP 2.1.0 and veil's local-DP functions.

Both libraries run in the same process on the same inputs. Every job (one frame size,
one location count, one map size) runs in a fresh subprocess so that its peak resident
memory is its own. For every case trasgoDP and each veil variant run in ``--repeats``
rounds, one call each per round in turn (``time.perf_counter``, no tracing); the table
gives min / median / max, the ratio of the medians and the 1-minute load average after
the case, and from one extra traced run the peak of the Python allocations made during
the call (``tracemalloc``, NumPy buffers included).

The categorical cases run on three frames of the same values: object strings, pandas
categoricals and, where pandas has it (2.3 with pyarrow, or 3), the Arrow-backed ``str``
dtype; each veil call runs with the public ``domain=`` and with the domain inferred
from the data. trasgoDP raises TypeError on ``str`` columns, so on that frame it is
timed on the object copy of the same values. tracemalloc does not see Arrow's own
buffers: for ``str`` frames the process max RSS is the fuller memory figure.

    python benchmarks/bench_ldp.py                        # Adult itself and 1M rows
    python benchmarks/bench_ldp.py --rows 1e6 --rows 10e6 --json out.json
    python benchmarks/bench_ldp.py --rows 2e6 --groups ldp --match laplace

See benchmarks/README.md for what each figure means.
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import json
import os
import platform
import resource
import signal
import statistics
import subprocess
import sys
import tempfile
import time
import tracemalloc
import warnings
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

import generate

GROUPS = ("ldp", "metrics", "geo", "map")
DEFAULT_ROWS = ("adult", "1e6")
DEFAULT_GEO_POINTS = ("1e4", "1e5", "1e6")
DEFAULT_MAP_POINTS = ("1e4", "1e5")

# Mechanism parameters (the same for both libraries).
AGE_BOUNDS = (16, 100)
EPSILON = 1.0
LARGE_GRID = 2**40  # the widest grid veil allows (steps across the bounds)
SMALL_EPSILON = 0.01
DELTA = 1e-3
GEO_EPSILON = 0.01  # per metre: mean displacement 200 m
CORRELATION_FEATURES = ["age", "hours-per-week", "workclass", "sex", "education"]
# The generated columns are independent, so their correlations are at noise level and
# both libraries refuse to compute a loss at the default confidence (1.96). A tiny
# confidence lets the full computation run; the real Adult table keeps the default.
GENERATED_CONFIDENCE = 1e-6

# trasgoDP's observed cost per point (2 cores): metric_privacy applies a Python function
# row by row (about 18 s at 1M points), the map builds four folium objects per point
# (22.9 s at 10k points). Calls expected above SLOW_SECONDS run once; with
# --skip-slow-peer calls expected above SKIP_SECONDS are not run.
PEER_SECONDS_PER_POINT = {"metric_privacy": 18.0 / 1e6, "map": 22.9 / 1e4}
SLOW_SECONDS = 10.0
SKIP_SECONDS = 60.0


# --------------------------------------------------------------------------- measuring


class CallTimeout(Exception):
    """Raised by SIGALRM when a call exceeds --timeout."""


def _on_alarm(signum: int, frame: Any) -> None:
    raise CallTimeout


@contextlib.contextmanager
def deadline(seconds: float | None) -> Iterator[None]:
    """Interrupt the block with :class:`CallTimeout` after ``seconds`` (None: never)."""
    if not seconds:
        yield
        return
    previous = signal.signal(signal.SIGALRM, _on_alarm)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


@dataclass
class Measurement:
    """Outcome of one library's call: times of the untraced runs and the traced peak."""

    status: str  # "ok", "fails", "timeout", "skipped"
    times: list[float] = field(default_factory=list)
    best_s: float | None = None
    median_s: float | None = None
    peak_mb: float | None = None
    error: str | None = None
    note: str | None = None
    info: dict[str, Any] = field(default_factory=dict)


@dataclass
class Settings:
    repeats: int
    timeout: float | None
    trace: bool
    trace_limit: float


def _time_once(
    call: Callable[[], Any],
    settings: Settings,
    result: Measurement,
    inspect: Callable[[Any], dict[str, Any]] | None,
) -> None:
    """One timed run of ``call`` into ``result`` (its status set when the call fails)."""
    gc.collect()
    try:
        with deadline(settings.timeout):
            start = time.perf_counter()
            output = call()
            elapsed = time.perf_counter() - start
    except CallTimeout:
        result.status, result.error = "timeout", f"> {settings.timeout:g} s"
        return
    except Exception as exc:  # a library refusing the input is a result, not a crash
        result.status, result.error = "fails", type(exc).__name__
        message = str(exc).splitlines()[0] if str(exc) else ""
        result.note = message if len(message) <= 100 else message[:97] + "..."
        return
    result.times.append(elapsed)
    if inspect is not None and not result.info:
        result.info = inspect(output)
    del output


def _trace(call: Callable[[], Any], settings: Settings, result: Measurement) -> None:
    """The peak of Python allocations of one more run of ``call``, into ``result``."""
    result.best_s = min(result.times)
    result.median_s = statistics.median(result.times)
    if not settings.trace:
        return
    if result.best_s > settings.trace_limit:
        result.note = (
            f"not traced: one run takes more than --trace-limit {settings.trace_limit:g} s"
        )
        return
    gc.collect()
    tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        with deadline(settings.timeout):
            output = call()
        result.peak_mb = tracemalloc.get_traced_memory()[1] / 2**20
        del output
    except CallTimeout:
        result.note = "traced run timed out"
    except Exception as exc:  # e.g. MemoryError: the timed runs still stand
        result.note = f"traced run raised {type(exc).__name__}"
    finally:
        tracemalloc.stop()


def measure_alternating(
    calls: list[tuple[Callable[[], Any], int, Callable[[Any], dict[str, Any]] | None]],
    settings: Settings,
) -> list[Measurement]:
    """Time the calls in rounds, each round running every call once in turn (trasgoDP,
    then veil's variants), so that the machine's load weighs on all of them alike; a
    call runs in its first ``repeats`` rounds only. Each is then traced once."""
    results = [Measurement(status="ok") for _ in calls]
    for i in range(settings.repeats):
        for (call, repeats, inspect), result in zip(calls, results, strict=True):
            if result.status == "ok" and i < repeats:
                _time_once(call, settings, result, inspect)
    for (call, _, _), result in zip(calls, results, strict=True):
        if result.status == "ok":
            _trace(call, settings, result)
    return results


def skipped(reason: str) -> Measurement:
    return Measurement(status="skipped", note=reason)


def quiet(call: Callable[[], Any], *categories: type[Warning]) -> Callable[[], Any]:
    """Wrap ``call`` so that warnings of the given categories are silenced."""

    def run() -> Any:
        with warnings.catch_warnings():
            for category in categories:
                warnings.simplefilter("ignore", category)
            return call()

    return run


def column_dtype(column: str) -> Callable[[Any], dict[str, Any]]:
    def inspect(frame: Any) -> dict[str, Any]:
        return {"output_dtype": str(frame[column].dtype)}

    return inspect


def metric_value(value: Any) -> dict[str, Any]:
    if isinstance(value, dict):
        return {"value": {str(k): float(v) for k, v in value.items()}}
    return {"value": float(value)}


def max_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux


# ------------------------------------------------------------------------------- cases


@dataclass
class Case:
    """One comparison: a trasgoDP call and one or more veil variants of it."""

    case: str
    group: str
    rows: int
    peer: Callable[[], Any] | None
    variants: list[tuple[str, Callable[[], Any]]]
    peer_repeats: int | None = None
    peer_skip: str | None = None
    inspect: Callable[[Any], dict[str, Any]] | None = None
    variant_inspect: Callable[[Any], dict[str, Any]] | None = None  # default: inspect


def str_dtype() -> Any:
    """pandas' ``str`` dtype (Arrow storage, NaN as missing) if this pandas has it, else None.

    It is the default string dtype of pandas 3; pandas 2.3 can build it explicitly.
    """
    try:
        import pyarrow  # noqa: F401

        return pd.StringDtype("pyarrow", na_value=np.nan)
    except (ImportError, TypeError):
        return None


def as_str_frame(frame: pd.DataFrame) -> pd.DataFrame:
    """``frame`` with its object (string) columns as the ``str`` dtype."""
    dtype = str_dtype()
    return frame.astype({c: dtype for c in frame.columns if frame[c].dtype == object})


def ldp_cases(
    frame: pd.DataFrame,
    kind: str,
    rows: int,
    confidence: float,
    groups: set[str],
    peer_frame: pd.DataFrame | None = None,
) -> Iterator[Case]:
    """Mechanism and metric cases on one Adult-like frame (object, categorical or str).

    ``peer_frame`` is what trasgoDP is given when it cannot read ``frame`` itself (it
    raises TypeError on ``str`` columns): the same values as object strings, built
    before any timing.
    """
    import trasgodp.categorical as t_cat
    import trasgodp.metrics as t_met
    import trasgodp.numerical as t_num

    import veil.ldp.categorical as v_cat
    import veil.ldp.numerical as v_num
    import veil.metrics as v_met
    from veil.errors import PrivacyLeakWarning

    domains = generate.adult_domains()
    lo, hi = AGE_BOUNDS
    peer_data = frame if peer_frame is None else peer_frame
    if "ldp" in groups:
        if kind == "object":  # age is int64 in every frame: the numeric cases run once
            yield Case(
                "laplace age",
                "ldp",
                rows,
                lambda: t_num.dp_clip_laplace(frame, "age", EPSILON, lo, hi),
                [("", lambda: v_num.dp_clip_laplace(frame, "age", EPSILON, lo, hi))],
                inspect=column_dtype("age"),
            )
            yield Case(
                "gaussian age",
                "ldp",
                rows,
                lambda: t_num.dp_clip_gaussian(frame, "age", EPSILON, lo, hi, DELTA),
                [("", lambda: v_num.dp_clip_gaussian(frame, "age", EPSILON, lo, hi, DELTA))],
                inspect=column_dtype("age"),
            )
            # The largest grid veil allows at a small epsilon: noise of 1e14 steps and
            # more, drawn with an exact uniform low part (trasgoDP: float Laplace).
            big, small_eps = LARGE_GRID, SMALL_EPSILON
            yield Case(
                f"laplace age [0, 2^40] eps {small_eps:g}",
                "ldp",
                rows,
                lambda: t_num.dp_clip_laplace(frame, "age", small_eps, 0, big),
                [("", lambda: v_num.dp_clip_laplace(frame, "age", small_eps, 0, big))],
                inspect=column_dtype("age"),
            )
            yield Case(
                f"gaussian age [0, 2^40] eps {small_eps:g}",
                "ldp",
                rows,
                lambda: t_num.dp_clip_gaussian(frame, "age", small_eps, 0, big, DELTA),
                [("", lambda: v_num.dp_clip_gaussian(frame, "age", small_eps, 0, big, DELTA))],
                inspect=column_dtype("age"),
            )
        categorical = [
            ("exponential", "workclass", t_cat.dp_exponential, v_cat.dp_exponential),
            (
                "rr-kary",
                "native-country",
                t_cat.dp_randomized_response_kary,
                v_cat.dp_randomized_response_kary,
            ),
            (
                "rr-binary",
                "sex",
                t_cat.dp_randomized_response_binary,
                v_cat.dp_randomized_response_binary,
            ),
        ]
        for name, column, peer, ours in categorical:
            domain = domains[column]
            yield Case(
                f"{name} {column} [{kind}]",
                "ldp",
                rows,
                lambda peer=peer, column=column: peer(peer_data, column, EPSILON),
                [
                    (
                        "domain=",
                        lambda ours=ours, column=column, domain=domain: ours(
                            frame, column, EPSILON, domain=domain
                        ),
                    ),
                    (
                        "inferred",
                        quiet(
                            lambda ours=ours, column=column: ours(frame, column, EPSILON),
                            PrivacyLeakWarning,
                        ),
                    ),
                ],
                inspect=column_dtype(column),
            )
    if "metrics" in groups and kind != "str":
        released = privatize(frame, domains)
        yield Case(
            f"correlation_loss {len(CORRELATION_FEATURES)} cols [{kind}]",
            "metrics",
            rows,
            lambda: t_met.correlation_loss(
                frame, released, CORRELATION_FEATURES, "pearson", False, confidence
            ),
            [
                (
                    "",
                    lambda: v_met.correlation_loss(
                        frame, released, CORRELATION_FEATURES, "pearson", False, confidence
                    ),
                )
            ],
            inspect=metric_value,
        )
        for column in ("age", "native-country"):
            yield Case(
                f"divergence {column} [{kind}]",
                "metrics",
                rows,
                lambda column=column: t_met.divergence_distributions(frame, released, column),
                [
                    (
                        "",
                        lambda column=column: v_met.divergence_distributions(
                            frame, released, column
                        ),
                    )
                ],
                inspect=metric_value,
            )


def privatize(frame: pd.DataFrame, domains: dict[str, list[str]]) -> pd.DataFrame:
    """The released frame the metrics compare with: veil's mechanisms, declared domains."""
    import veil.ldp as v

    lo, hi = AGE_BOUNDS
    out = v.dp_clip_laplace(frame, "age", EPSILON, lo, hi)
    out = v.dp_exponential(out, "workclass", EPSILON, domain=domains["workclass"])
    out = v.dp_randomized_response_kary(
        out, "native-country", EPSILON, domain=domains["native-country"]
    )
    return v.dp_randomized_response_binary(out, "sex", EPSILON, domain=domains["sex"])


def peer_plan(kind: str, points: int, skip_slow: bool) -> tuple[int | None, str | None]:
    """Repeats (None: the default) and skip reason for a slow trasgoDP call."""
    expected = PEER_SECONDS_PER_POINT[kind] * points
    if skip_slow and expected > SKIP_SECONDS:
        return None, f"--skip-slow-peer (expected about {expected:.0f} s)"
    return (1 if expected > SLOW_SECONDS else None), None


def geo_cases(points: int, seed: int, skip_slow: bool) -> Iterator[Case]:
    import trasgodp.geoindis as t_geo

    import veil.ldp.geoindis as v_geo
    from veil.errors import PrivacyLeakWarning

    locations = generate.generate_locations(points, seed)
    repeats, skip = peer_plan("metric_privacy", points, skip_slow)
    # trasgoDP reseeds NumPy's global generator (seed=42) on every call: its behaviour.
    # veil runs with rng=None, its default: a fresh AES-CTR generator keyed from the OS.
    # Both return radius_m (trasgoDP's output); veil's warning about it is silenced.
    yield Case(
        "metric_privacy",
        "geo",
        points,
        lambda: t_geo.metric_privacy(locations, "lat", "lon", GEO_EPSILON, True),
        [
            (
                "",
                quiet(
                    lambda: v_geo.metric_privacy(locations, "lat", "lon", GEO_EPSILON, True),
                    PrivacyLeakWarning,
                ),
            )
        ],
        peer_repeats=repeats,
        peer_skip=skip,
    )


def map_cases(points: int, seed: int, skip_slow: bool, directory: Path) -> Iterator[Case]:
    import trasgodp.geoindis as t_geo

    import veil.ldp.geoindis as v_geo
    from veil.errors import PrivacyLeakWarning, PrivacyWarning

    locations = generate.generate_locations(points, seed)
    # One privatized frame (with the original columns and radius_m) drawn by both.
    released = quiet(
        lambda: v_geo.metric_privacy(locations, "lat", "lon", GEO_EPSILON, True),
        PrivacyLeakWarning,
    )()
    peer_file, ours_file = directory / "trasgodp_map.html", directory / "veil_map.html"
    repeats, skip = peer_plan("map", points, skip_slow)

    def size_of(path: Path) -> Callable[[Any], dict[str, Any]]:
        return lambda _map: {"html_mb": round(path.stat().st_size / 2**20, 2)}

    yield Case(
        "plot_metric_dp_map",
        "map",
        points,
        lambda: t_geo.plot_metric_dp_map(released, "lat", "lon", str(peer_file)),
        [
            (
                "default (privatized points)",
                lambda: v_geo.plot_metric_dp_map(released, "lat", "lon", ours_file),
            ),
            (
                "show_original=True",
                quiet(
                    lambda: v_geo.plot_metric_dp_map(
                        released, "lat", "lon", ours_file, show_original=True
                    ),
                    PrivacyWarning,
                ),
            ),
        ],
        peer_repeats=repeats,
        peer_skip=skip,
        inspect=size_of(peer_file),
        variant_inspect=size_of(ours_file),
    )


def run_case(case: Case, settings: Settings) -> list[dict[str, Any]]:
    label = case.case
    print(f"  {label} ({case.rows:,} rows): trasgoDP and veil ...", file=sys.stderr, flush=True)
    inspect = case.variant_inspect or case.inspect
    calls: list[tuple[Callable[[], Any], int, Callable[[Any], dict[str, Any]] | None]] = [
        (call, settings.repeats, inspect) for _, call in case.variants
    ]
    peer_runs = case.peer is not None and case.peer_skip is None
    if peer_runs:
        assert case.peer is not None
        calls.insert(0, (case.peer, case.peer_repeats or settings.repeats, case.inspect))
    measured = measure_alternating(calls, settings)
    no_peer = case.peer_skip or "no trasgoDP counterpart"
    peer = measured.pop(0) if peer_runs else skipped(no_peer)
    rows = []
    for (variant, _), ours in zip(case.variants, measured, strict=True):
        name = f"{label} {variant}".strip()
        ratio = (
            peer.median_s / ours.median_s
            if peer.median_s is not None and ours.median_s is not None and ours.median_s > 0
            else None
        )
        rows.append(
            {
                "case": name,
                "base_case": label,
                "group": case.group,
                "rows": case.rows,
                "trasgodp": asdict(peer),
                "veil": asdict(ours),
                "ratio": ratio,
                "load_average": os.getloadavg()[0],
            }
        )
    return rows


# ------------------------------------------------------------------------------- worker


def worker(job: str, args: argparse.Namespace) -> dict[str, Any]:
    """Run one job (``ldp:N``, ``ldp:adult``, ``geo:N`` or ``map:N``) in this process."""
    import trasgodp  # noqa: F401  (imported up front so its import is not timed)

    import veil.ldp  # noqa: F401

    kind, _, size = job.partition(":")
    settings = Settings(
        repeats=args.repeats,
        timeout=args.timeout or None,
        trace=not args.no_trace,
        trace_limit=args.trace_limit,
    )
    groups = set(args.groups)
    results: list[dict[str, Any]] = []
    info: dict[str, Any] = {"job": job}
    start = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="veil-bench-") as tmp:
        if kind == "ldp":
            real = size == "adult"
            rows = len(generate.adult_frame()) if real else generate.parse_count(size)
            confidence = 1.96 if real else GENERATED_CONFIDENCE
            kinds = ["object", "category"] + (["str"] if str_dtype() is not None else [])
            for dtype in kinds:
                categorical = dtype == "category"
                frame = (
                    generate.adult_frame(categorical=categorical)
                    if real
                    else generate.generate_adult(rows, args.seed, categorical=categorical)
                )
                peer_frame = None
                if dtype == "str":  # trasgoDP raises on str columns: it gets the object frame
                    peer_frame, frame = frame, as_str_frame(frame)
                info[f"frame_mb_{dtype}"] = round(frame.memory_usage(deep=False).sum() / 2**20, 1)
                info.setdefault("rss_after_data_mb", round(max_rss_mb(), 1))
                for case in ldp_cases(frame, dtype, rows, confidence, groups, peer_frame):
                    if args.match and args.match not in case.case:
                        continue
                    results.extend(run_case(case, settings))
                del frame, peer_frame
                gc.collect()
            info["rows"] = rows
            info["source"] = "Adult (bundled copy)" if real else f"generated, seed {args.seed}"
        else:
            points = generate.parse_count(size)
            info["rows"] = points
            cases = (
                geo_cases(points, args.seed, args.skip_slow_peer)
                if kind == "geo"
                else map_cases(points, args.seed, args.skip_slow_peer, Path(tmp))
            )
            for case in cases:
                info.setdefault("rss_after_data_mb", round(max_rss_mb(), 1))
                if args.match and args.match not in case.case:
                    continue
                results.extend(run_case(case, settings))
    info["max_rss_mb"] = round(max_rss_mb(), 1)
    info["wall_s"] = round(time.perf_counter() - start, 1)
    info["results"] = results
    return info


# ------------------------------------------------------------------------------- parent


def jobs_for(args: argparse.Namespace) -> list[str]:
    groups = set(args.groups)
    jobs = []
    if groups & {"ldp", "metrics"}:
        for size in args.rows or DEFAULT_ROWS:
            jobs.append("ldp:adult" if size == "adult" else f"ldp:{generate.parse_count(size)}")
    if "geo" in groups:
        jobs += [f"geo:{generate.parse_count(p)}" for p in args.geo_points or DEFAULT_GEO_POINTS]
    if "map" in groups:
        jobs += [f"map:{generate.parse_count(p)}" for p in args.map_points or DEFAULT_MAP_POINTS]
    return jobs


def run_job(job: str, args: argparse.Namespace) -> dict[str, Any]:
    """Run ``job`` in a fresh interpreter and return what it reported."""
    with tempfile.TemporaryDirectory(prefix="veil-bench-") as tmp:
        out = Path(tmp) / "result.json"
        command = [
            sys.executable,
            str(Path(__file__).resolve()),
            "--worker",
            job,
            "--worker-out",
            str(out),
            "--repeats",
            str(args.repeats),
            "--timeout",
            str(args.timeout),
            "--trace-limit",
            str(args.trace_limit),
            "--seed",
            str(args.seed),
            "--groups",
            *args.groups,
        ]
        if args.skip_slow_peer:
            command.append("--skip-slow-peer")
        if args.no_trace:
            command.append("--no-trace")
        if args.copy_on_write:
            command.append("--copy-on-write")
        if args.match:
            command += ["--match", args.match]
        print(f"[{job}] starting", file=sys.stderr, flush=True)
        completed = subprocess.run(command, check=False)
        if completed.returncode != 0 or not out.exists():
            return {"job": job, "status": f"crashed (exit code {completed.returncode})"}
        report: dict[str, Any] = json.loads(out.read_text())
        report["status"] = "ok"
        return report


def _seconds(m: dict[str, Any]) -> str:
    if m["status"] == "ok":
        times = m["times"]
        digits = 4 if max(times) < 10 else 2
        if len(times) == 1:
            return f"{times[0]:.{digits}f}"
        low, mid, high = min(times), statistics.median(times), max(times)
        return f"{low:.{digits}f} / {mid:.{digits}f} / {high:.{digits}f}"
    if m["status"] == "fails":
        return f"fails ({m['error']})"
    if m["status"] == "timeout":
        return f"timeout ({m['error']})"
    return "skipped"


def _megabytes(m: dict[str, Any]) -> str:
    return f"{m['peak_mb']:.1f}" if m.get("peak_mb") is not None else "-"


def print_table(reports: list[dict[str, Any]]) -> None:
    header = (
        "case",
        "rows",
        "trasgoDP s (min / median / max)",
        "veil s (min / median / max)",
        "ratio of medians",
        "trasgoDP MB",
        "veil MB",
        "load",
    )
    blank = ("",) * (len(header) - 1)
    lines: list[tuple[str, ...]] = []
    for report in reports:
        if report.get("status") != "ok":
            lines.append((f"[{report['job']}] {report.get('status')}", *blank))
            continue
        for r in report["results"]:
            ratio = f"{r['ratio']:.1f}x" if r["ratio"] is not None else "-"
            lines.append(
                (
                    r["case"],
                    f"{r['rows']:,}",
                    _seconds(r["trasgodp"]),
                    _seconds(r["veil"]),
                    ratio,
                    _megabytes(r["trasgodp"]),
                    _megabytes(r["veil"]),
                    f"{r['load_average']:.1f}",
                )
            )
        lines.append(
            (
                f"  [{report['job']}] process max RSS {report['max_rss_mb']:,.0f} MB "
                f"(after building the data {report.get('rss_after_data_mb', 0):,.0f} MB), "
                f"wall {report['wall_s']:.0f} s",
                *blank,
            )
        )
    widths = [
        max([len(h), *(len(line[i]) for line in lines if line[1])]) for i, h in enumerate(header)
    ]
    print(_join(header, widths))
    print("-+-".join("-" * w for w in widths))
    for line in lines:
        print(_join(line, widths) if line[1] else line[0])
    for note in table_notes(reports):
        print(note)


def _differs(a: Any, b: Any) -> bool:
    if isinstance(a, dict) and isinstance(b, dict):
        return any(_differs(a[k], b[k]) for k in a.keys() & b.keys())
    return not np.isclose(a, b, rtol=1e-9, atol=1e-12, equal_nan=True)


def table_notes(reports: list[dict[str, Any]]) -> list[str]:
    """Failures, dtype changes and disagreeing metric values, once per trasgoDP call."""
    notes: dict[str, None] = {}
    for report in reports:
        for r in report.get("results", []):
            where = f"{r['base_case']} ({r['rows']:,})"
            peer, ours = r["trasgodp"], r["veil"]
            if peer["status"] == "fails":
                notes[f"{where}: trasgoDP raises {peer['error']}: {peer['note']}"] = None
            elif peer["note"]:
                notes[f"{where}: trasgoDP {peer['note']}"] = None
            if ours["status"] == "fails":
                notes[
                    f"{r['case']} ({r['rows']:,}): veil raises {ours['error']}: {ours['note']}"
                ] = None
            elif ours["note"]:
                notes[f"{r['case']} ({r['rows']:,}): veil {ours['note']}"] = None
            if "[str]" in r["case"]:
                notes[
                    f"{where}: trasgoDP raises TypeError on str columns; its time is on the "
                    "same values as object strings"
                ] = None
            out = peer["info"].get("output_dtype")
            if "[category]" in r["case"] and out not in (None, "category"):
                notes[f"{where}: trasgoDP returns the column as {out}, not category"] = None
            a, b = peer["info"].get("value"), ours["info"].get("value")
            if a is not None and b is not None and _differs(a, b):
                notes[f"{where}: values differ: trasgoDP {a}, veil {b}"] = None
    return (["", "notes:"] + [f"  {n}" for n in notes]) if notes else []


def _join(cells: tuple[str, ...], widths: list[int]) -> str:
    return " | ".join(
        c.ljust(w) if i == 0 else c.rjust(w)
        for i, (c, w) in enumerate(zip(cells, widths, strict=True))
    )


def environment() -> dict[str, Any]:
    import folium
    import trasgodp

    import veil

    return {
        "python": platform.python_version(),
        "platform": platform.platform(),
        "cpus": os.cpu_count(),
        "loadavg_at_start": os.getloadavg(),
        "numpy": np.__version__,
        "pandas": pd.__version__,
        "folium": folium.__version__,
        "trasgodp": trasgodp.__version__,
        "veil": veil.__version__,
        "started": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
    }


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        description="Time trasgoDP 2.1.0 and veil side by side (see benchmarks/README.md).",
    )
    parser.add_argument(
        "--rows",
        action="append",
        metavar="N",
        help="frame size for the mechanisms and metrics: 'adult' (the real table) or a count "
        "such as 1e6; repeat or comma-separate for several (default: adult,1e6)",
    )
    parser.add_argument(
        "--geo-points",
        action="append",
        metavar="N",
        help="points for metric_privacy (default: 1e4,1e5,1e6)",
    )
    parser.add_argument(
        "--map-points",
        action="append",
        metavar="N",
        help="points for plot_metric_dp_map (default: 1e4,1e5)",
    )
    parser.add_argument(
        "--groups",
        nargs="+",
        choices=GROUPS,
        default=list(GROUPS),
        help="which groups of cases to run (default: all)",
    )
    parser.add_argument("--match", help="only cases whose name contains this text")
    parser.add_argument(
        "--repeats",
        type=int,
        default=3,
        help="rounds: each runs trasgoDP then every veil variant once (default 3)",
    )
    parser.add_argument(
        "--timeout",
        type=float,
        default=900.0,
        help="seconds before one call is abandoned (0: no limit)",
    )
    parser.add_argument(
        "--skip-slow-peer",
        action="store_true",
        help=f"skip trasgoDP calls expected to take over {SKIP_SECONDS:g} s",
    )
    parser.add_argument(
        "--trace-limit",
        type=float,
        default=120.0,
        help="skip the tracemalloc run of calls slower than this (s)",
    )
    parser.add_argument("--no-trace", action="store_true", help="no tracemalloc runs")
    parser.add_argument(
        "--copy-on-write",
        action="store_true",
        help="turn on pandas' copy-on-write mode (the default of pandas 3) in the workers",
    )
    parser.add_argument("--seed", type=int, default=0, help="seed of the generated data")
    parser.add_argument("--json", type=Path, help="write all results to this JSON file")
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    parser.add_argument("--worker-out", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    for name in ("rows", "geo_points", "map_points"):
        values = getattr(args, name)
        if values:
            setattr(
                args, name, [v.strip() for item in values for v in item.split(",") if v.strip()]
            )
    if args.repeats < 1:
        parser.error("--repeats must be >= 1")
    return args


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    warnings.filterwarnings("ignore", category=FutureWarning)  # pandas notes on trasgoDP code
    if args.worker:
        if args.copy_on_write:
            pd.set_option("mode.copy_on_write", True)
        report = worker(args.worker, args)
        args.worker_out.write_text(json.dumps(report))
        return
    meta = environment()
    meta["settings"] = {k: (str(v) if isinstance(v, Path) else v) for k, v in vars(args).items()}
    reports = [run_job(job, args) for job in jobs_for(args)]
    print()
    print(
        f"trasgoDP {meta['trasgodp']} vs veil {meta['veil']}; numpy {meta['numpy']}, "
        f"pandas {meta['pandas']}, Python {meta['python']}, {meta['cpus']} CPUs, "
        f"load average at start {meta['loadavg_at_start'][0]:.2f}"
        + ("; pandas copy-on-write on" if args.copy_on_write else "")
    )
    print(
        f"{args.repeats} alternating rounds (1 for slow trasgoDP calls); ratio = trasgoDP "
        "median / veil median\n"
    )
    print_table(reports)
    if args.json:
        args.json.write_text(json.dumps({"meta": meta, "jobs": reports}, indent=2))
        print(f"\nresults written to {args.json}")


if __name__ == "__main__":
    main()
