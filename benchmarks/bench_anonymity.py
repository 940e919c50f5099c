"""Benchmark veil.anonymity.anonymize against ARX 3.9 (run in the same run) and anjana.

Three parts, in one run:

1. ARX's Adult benchmark (``--arx-data DIR``: ``adult.csv``, ``;`` separated, and its
   ``adult_hierarchy_<attr>.csv`` files), six configurations. With ``--arx-peer DIR``
   ARX itself runs beside veil: ``DIR/arx-peer`` is a program speaking the line protocol
   below (a Java harness around ARX's ``ARXAnonymizer``, built outside this repository:
   benchmarks/README.md says how). The JVM is first warmed with ``--arx-warmup`` runs of
   the first configuration (default 200), each further configuration with
   ``--arx-warmup-each`` runs of its own (default 20), veil with 3; then ``--rounds``
   rounds alternate one ARX run and one veil run; the table gives min / median / max of
   each, the ratio of the medians and the load average. veil's time is printed twice:
   the whole call (the released DataFrame included) and its search alone, up to the
   start of the release: the point where ARX's ``anonymize()`` ends (ARX builds its
   output on demand, ``getOutput()``, timed apart by the harness). Without
   ``--arx-peer`` only veil runs.
   ``--phases`` adds veil's CPU time per phase (encoding, set-up, base table,
   evaluations, rest of the search, release) from separate profiled runs.
2. anjana's Adult example (k = 10, six QIs, race as identifier, ``supp_level = 50``,
   its hierarchy CSVs): anjana 1.2.3 and veil on the same data, QIs, hierarchies and
   suppression limit, side by side (``--anjana-data DIR``: ``adult.csv`` and
   ``hierarchies/``; skipped without it). anjana must be importable: run this script in
   a venv holding both (``pip install -e '.[bench]' anjana==1.2.3``).
3. ``veil.risk.summary`` on raw (ARX) Adult with its eight QIs, for reference.

The ARX peer's protocol (one line in, one line out; the first line it prints is
``ready ROWS``)::

    run QIS K SUPPRESSION MODEL       ->  ok SECONDS OUTPUT_SECONDS LEVELS LOSS SUPPRESSED
    warm QIS K SUPPRESSION MODEL N    ->  ok SECONDS
    quit

``QIS`` comma-separated, ``MODEL`` one of ``none``, ``distinct:ATTR:L``,
``tclose-equal:ATTR:T``; ``SECONDS`` is ``Data.create`` from rows in memory plus
``ARXAnonymizer.anonymize`` (metric ``Metric.createLossMetric()``, the other columns
insensitive, the model's attribute sensitive).

Not a test (pytest does not collect it). Run::

    python benchmarks/bench_anonymity.py --arx-data DIR [--arx-peer DIR] [--anjana-data DIR]
        [--rounds N] [--arx-warmup N] [--phases] [--json PATH]

benchmarks/README.md ("Data and environments") shows how to lay out both folders from
the copies a clone holds.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import platform
import statistics
import subprocess
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

import veil
from veil.anonymity import (
    DistinctLDiversity,
    Hierarchy,
    KAnonymity,
    TCloseness,
    anonymize,
    evaluate,
    transformation,
)
from veil.anonymity import search as search_module
from veil.risk import summary

# The data folders, set in main() from --arx-data and --anjana-data.
ARX_DIR: Path
ANJANA_DIR: Path

QIS8 = [
    "sex",
    "age",
    "race",
    "marital-status",
    "education",
    "native-country",
    "workclass",
    "salary-class",
]
QIS9 = [*QIS8[:7], "occupation", "salary-class"]

# (name, QIs, veil's models, sensitive, suppression limit, the ARX peer's model, the
# optimum ARX published for it).
ARX_CASES: list[tuple[str, list[str], list[Any], str | None, float, str, str]] = [
    ("8 QI, k=5, 0%", QIS8, [KAnonymity(5)], None, 0.0, "none", "0,4,1,2,3,2,0,0"),
    ("8 QI, k=5, 5%", QIS8, [KAnonymity(5)], None, 0.05, "none", "0,3,0,0,2,1,1,0"),
    ("8 QI, k=10, 5%", QIS8, [KAnonymity(10)], None, 0.05, "none", "0,3,0,1,2,1,1,0"),
    ("9 QI, k=5, 5%", QIS9, [KAnonymity(5)], None, 0.05, "none", "0,3,0,0,2,1,1,2,0"),
    (
        "8 QI, k=5 + distinct 3-div(occ), 5%",
        QIS8,
        [KAnonymity(5), DistinctLDiversity("occupation", 3)],
        "occupation",
        0.05,
        "distinct:occupation:3",
        "0,3,0,0,2,1,1,0",
    ),
    (
        "8 QI, k=5 + 0.2-close(occ, equal), 5%",
        QIS8,
        [KAnonymity(5), TCloseness("occupation", 0.2, distance="equal")],
        "occupation",
        0.05,
        "tclose-equal:occupation:0.2",
        "1,4,1,1,3,1,2,1",
    ),
]

# anjana's README example on Adult.
ANJANA_QIS = ["age", "education", "marital-status", "occupation", "sex", "native-country"]
ANJANA_IDENT = ["race"]
ANJANA_K = 10
ANJANA_SUPP = 50  # percent
ANJANA_FILES = {
    "age": "age.csv",
    "education": "education.csv",
    "marital-status": "marital.csv",
    "occupation": "occupation.csv",
    "sex": "sex.csv",
    "native-country": "country.csv",
}


def _best(fn: Callable[[], Any], repeats: int) -> tuple[float, Any]:
    """Best wall time in seconds over ``repeats`` calls, and the last result."""
    best = float("inf")
    out = None
    for _ in range(repeats):
        t0 = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - t0)
    return best, out


def _levels(result_levels: dict[str, int], qis: list[str]) -> str:
    return ",".join(str(result_levels[q]) for q in qis)


def _table(headers: list[str], rows: list[list[str]]) -> str:
    widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(headers)]
    lines = [
        " | ".join(h.ljust(w) for h, w in zip(headers, widths, strict=True)),
        "-+-".join("-" * w for w in widths),
    ]
    lines += [" | ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)) for r in rows]
    return "\n".join(lines)


@contextlib.contextmanager
def _swap(owner: Any, name: str, value: Any) -> Iterator[None]:
    original = getattr(owner, name)
    setattr(owner, name, value)
    try:
        yield
    finally:
        setattr(owner, name, original)


@contextlib.contextmanager
def _timed(owner: Any, name: str, key: str, acc: dict[str, float]) -> Iterator[None]:
    """Add the CPU seconds spent in ``owner.name`` to ``acc[key]`` while the block runs."""
    original = getattr(owner, name)

    def timed(*args: Any, **kwargs: Any) -> Any:
        t0 = time.process_time()
        try:
            return original(*args, **kwargs)
        finally:
            acc[key] = acc.get(key, 0.0) + time.process_time() - t0

    setattr(owner, name, timed)
    try:
        yield
    finally:
        setattr(owner, name, original)


def _phases(run: Callable[[], Any], repeats: int) -> dict[str, float]:
    """CPU seconds per phase of one ``anonymize`` call (the run of least total kept).

    Wraps veil's internals (a profiling aid, separate from the timed runs): encoding
    the QIs, the rest of the problem set-up, the base class table, node evaluations
    during the search (roll-ups, models, metrics), the rest of the search (ordering,
    tagging, chains, the lattice table), the optimum's evaluation from the base table
    and the release.
    """
    best: dict[str, float] | None = None
    for _ in range(repeats):
        acc: dict[str, float] = {}
        with contextlib.ExitStack() as stack:
            for owner, name, key in (
                (Hierarchy, "encode", "encode"),
                (transformation.Problem, "__init__", "problem"),
                (transformation.Problem, "base", "base table"),
                (transformation.Problem, "evaluate", "evaluations"),
                (transformation.Problem, "release", "release"),
                (search_module, "_search_lattice", "search"),
            ):
                stack.enter_context(_timed(owner, name, key, acc))
            searched = search_module._search_lattice

            def search_only(
                *args: Any, acc: dict[str, float] = acc, searched: Any = searched
            ) -> Any:
                before = acc.get("evaluations", 0.0)
                try:
                    return searched(*args)
                finally:
                    acc["search evaluations"] = acc.get("evaluations", 0.0) - before

            stack.enter_context(_swap(search_module, "_search_lattice", search_only))
            t0 = time.process_time()
            run()
            acc["total"] = time.process_time() - t0
        if best is None or acc["total"] < best["total"]:
            best = acc
    assert best is not None
    phases = {
        "encode": best.get("encode", 0.0),
        "problem set-up": best.get("problem", 0.0) - best.get("encode", 0.0),
        "base table": best.get("base table", 0.0),
        "search evaluations": best.get("search evaluations", 0.0),
        "rest of search": best.get("search", 0.0) - best.get("search evaluations", 0.0),
        "optimum's evaluation": best.get("evaluations", 0.0) - best.get("search evaluations", 0.0),
        "release": best.get("release", 0.0),
    }
    phases["other"] = best["total"] - sum(phases.values())
    phases["total"] = best["total"]
    return phases


class ArxPeer:
    """ARX's anonymizer in a JVM, driven over its line protocol (module docstring)."""

    def __init__(self, peer_dir: Path, data_dir: Path) -> None:
        self.process = subprocess.Popen(
            [str(peer_dir / "arx-peer"), str(data_dir.resolve())],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        ready = self._read()
        if not ready.startswith("ready"):
            raise RuntimeError(f"the ARX peer did not start: {ready!r}")

    def _read(self) -> str:
        assert self.process.stdout is not None
        line = self.process.stdout.readline().strip()
        if not line:
            raise RuntimeError(f"the ARX peer exited ({self.process.poll()})")
        return line

    def ask(self, command: str) -> list[str]:
        assert self.process.stdin is not None
        self.process.stdin.write(command + "\n")
        self.process.stdin.flush()
        words = self._read().split()
        if words[0] != "ok":
            raise RuntimeError(f"the ARX peer answered {' '.join(words)!r} to {command!r}")
        return words[1:]

    def close(self) -> None:
        with contextlib.suppress(OSError):
            assert self.process.stdin is not None
            self.process.stdin.write("quit\n")
            self.process.stdin.close()
        self.process.wait(timeout=30)


def _spread(values: list[float]) -> str:
    """min / median / max in milliseconds."""
    ms = sorted(v * 1000 for v in values)
    return f"{ms[0]:.1f} / {statistics.median(ms):.1f} / {ms[-1]:.1f}"


def _load() -> str:
    return "{:.2f} {:.2f} {:.2f}".format(*os.getloadavg())


def _veil_run(run: Callable[[], Any]) -> tuple[float, float, Any]:
    """One call: its whole wall time, the time to the start of the release, the result."""
    marks: list[float] = []
    release = transformation.Problem.release

    def marked(self: Any, *args: Any, **kwargs: Any) -> Any:
        marks.append(time.perf_counter())
        return release(self, *args, **kwargs)

    with _swap(transformation.Problem, "release", marked):
        t0 = time.perf_counter()
        out = run()
        t1 = time.perf_counter()
    return t1 - t0, marks[0] - t0, out


def bench_arx(
    rounds: int,
    phases: bool,
    peer_dir: Path | None,
    warmup: int,
    match: str = "",
    warmup_each: int = 20,
) -> list[dict[str, Any]]:
    df = pd.read_csv(ARX_DIR / "adult.csv", sep=";", dtype=str, keep_default_na=False)
    hier = {
        q: Hierarchy.from_csv(ARX_DIR / f"adult_hierarchy_{q}.csv", sep=";")
        for q in dict.fromkeys(QIS9)
    }
    peer = ArxPeer(peer_dir, ARX_DIR) if peer_dir is not None else None
    out: list[dict[str, Any]] = []
    rows = []
    try:
        for name, qis, models, sensitive, supp, arx_model, published in ARX_CASES:
            if match not in name:
                continue
            h = {q: hier[q] for q in qis}

            def run(
                h: dict[str, Hierarchy] = h,
                models: list[Any] = models,
                supp: float = supp,
                sensitive: str | None = sensitive,
            ) -> Any:
                return anonymize(
                    df, h, models, max_suppression=supp, metric="loss", sensitive=sensitive
                )

            spec = f"{','.join(qis)} {models[0].k} {supp} {arx_model}"
            load_before = _load()
            # The JVM is warmed once with `warmup` runs (of the first configuration),
            # then each configuration with `warmup_each` runs of its own.
            runs = warmup if not out else warmup_each
            warm_s = float(peer.ask(f"warm {spec} {runs}")[0]) if peer else 0.0
            for _ in range(3):
                run()
            whole: list[float] = []
            search: list[float] = []
            arx: list[float] = []
            arx_output: list[float] = []
            arx_answer: list[str] = []
            for _ in range(rounds):
                if peer is not None:
                    arx_answer = peer.ask(f"run {spec}")
                    arx.append(float(arx_answer[0]))
                    arx_output.append(float(arx_answer[1]))
                w, s, res = _veil_run(run)
                whole.append(w)
                search.append(s)
            load_after = _load()
            levels = _levels(res.levels, qis)
            loss = float(res.metrics["loss"])
            record: dict[str, Any] = {
                "case": name,
                "qis": qis,
                "models": [repr(m) for m in models],
                "max_suppression": supp,
                "rounds": rounds,
                "load_average_before": load_before,
                "load_average_after": load_after,
                "veil_levels": levels,
                "veil_loss": loss,
                "veil_suppressed": int(res.suppressed),
                "veil_seconds": whole,
                "veil_search_seconds": search,
                "veil_nodes_evaluated": int(res.lattice["evaluated"].sum()),
                "lattice_nodes": len(res.lattice),
                "published_arx_levels": published,
                "veil_phases_cpu_s": _phases(run, 3) if phases else None,
            }
            if peer is not None:
                arx_levels, arx_loss, arx_suppressed = arx_answer[2], arx_answer[3], arx_answer[4]
                record |= {
                    "arx_warmup_runs": runs,
                    "arx_warmup_seconds": warm_s,
                    "arx_seconds": arx,
                    "arx_output_seconds": arx_output,
                    "arx_levels": arx_levels,
                    "arx_loss": float(arx_loss),
                    "arx_suppressed": int(arx_suppressed),
                    "same_optimum": levels == arx_levels
                    and abs(loss - float(arx_loss)) <= 1e-9
                    and int(arx_suppressed) == int(res.suppressed),
                    "ratio_search": statistics.median(arx) / statistics.median(search),
                    "ratio_whole": (statistics.median(arx) + statistics.median(arx_output))
                    / statistics.median(whole),
                }
            out.append(record)
            rows.append(
                [
                    name,
                    levels,
                    f"{loss:.4f}",
                    f"{res.suppressed} ({res.suppressed / len(df):.2%})",
                    f"{record['veil_nodes_evaluated']}/{record['lattice_nodes']}",
                    _spread(search),
                    _spread(whole),
                    *(
                        [
                            _spread(arx),
                            _spread(arx_output),
                            f"{record['ratio_search']:.2f}x",
                            f"{record['ratio_whole']:.2f}x",
                            "yes" if record["same_optimum"] else "NO",
                        ]
                        if peer is not None
                        else []
                    ),
                    f"{load_before} -> {load_after}",
                ]
            )
            print(f"   {name}: done (load {load_after})", flush=True)
    finally:
        if peer is not None:
            peer.close()
    print(
        f"1. ARX Adult ({len(df):,} rows), {rounds} rounds"
        + (
            f", ARX and veil alternating; the JVM warmed with {warmup} runs of the first "
            f"configuration, then {warmup_each} of each next one before its rounds"
            if peer
            else ", veil only"
        )
        + "; ms as min / median / max"
    )
    print(
        _table(
            [
                "configuration",
                "veil levels",
                "veil loss",
                "veil suppressed",
                "evaluated",
                "veil search ms",
                "veil whole ms",
                *(
                    [
                        "ARX anonymize() ms",
                        "ARX output ms",
                        "ARX/veil search",
                        "ARX+output/veil whole",
                        "same optimum",
                    ]
                    if peer is not None
                    else []
                ),
                "load average (1, 5, 15 min)",
            ],
            rows,
        )
    )
    print(
        "   veil search: to the start of the release (where ARX's anonymize() ends); "
        "ARX output: getOutput() and every cell read"
    )
    if phases:
        names = [k for k in out[0]["veil_phases_cpu_s"] if k != "total"]
        print("\n   veil's CPU ms per phase (one profiled run, best of 3):")
        print(
            _table(
                ["configuration", *names, "total", "total without the release"],
                [
                    [
                        o["case"],
                        *(f"{o['veil_phases_cpu_s'][k] * 1000:.1f}" for k in names),
                        f"{o['veil_phases_cpu_s']['total'] * 1000:.1f}",
                        f"{(ph['total'] - ph['release']) * 1000:.1f}",
                    ]
                    for o in out
                    for ph in [o["veil_phases_cpu_s"]]
                ],
            )
        )
    return out


def bench_anjana(repeats: int, anjana_repeats: int) -> dict[str, Any]:
    data = pd.read_csv(ANJANA_DIR / "adult.csv", skipinitialspace=True)
    data.columns = data.columns.str.strip()
    n = len(data)
    files = {q: ANJANA_DIR / "hierarchies" / f for q, f in ANJANA_FILES.items()}
    result: dict[str, Any] = {
        "rows": n,
        "qis": ANJANA_QIS,
        "ident": ANJANA_IDENT,
        "k": ANJANA_K,
        "supp_level_percent": ANJANA_SUPP,
    }

    # veil: the same hierarchy files (anjana's comma separated format).
    hier = {q: Hierarchy.from_csv(p) for q, p in files.items()}
    v_seconds, v_res = _best(
        lambda: anonymize(
            data, hier, KAnonymity(ANJANA_K), max_suppression=ANJANA_SUPP / 100, metric="loss"
        ),
        repeats,
    )
    result["veil"] = {
        "seconds": v_seconds,
        "levels": _levels(v_res.levels, ANJANA_QIS),
        "suppressed": int(v_res.suppressed),
        "suppressed_share": v_res.suppressed / n,
        "loss": float(v_res.metrics["loss"]),
    }
    # The same search with a 1% suppression limit: the best node suppressing under 1%.
    t_seconds, t_res = _best(
        lambda: anonymize(data, hier, KAnonymity(ANJANA_K), max_suppression=0.01, metric="loss"),
        repeats,
    )
    result["veil_limit_1pct"] = {
        "seconds": t_seconds,
        "levels": _levels(t_res.levels, ANJANA_QIS),
        "suppressed": int(t_res.suppressed),
        "suppressed_share": t_res.suppressed / n,
        "loss": float(t_res.metrics["loss"]),
    }

    try:
        import anjana
        from anjana.anonymity import k_anonymity
        from anjana.anonymity.utils import utils as anjana_utils
    except ImportError as exc:  # pragma: no cover - depends on the interpreter
        result["anjana"] = {"error": f"anjana not importable: {exc}"}
    else:

        def run_anjana() -> pd.DataFrame:
            hierarchies = {q: dict(pd.read_csv(p, header=None)) for q, p in files.items()}
            return k_anonymity(data, ANJANA_IDENT, ANJANA_QIS, ANJANA_K, ANJANA_SUPP, hierarchies)

        a_seconds, anon = _best(run_anjana, anjana_repeats)
        hierarchies = {q: dict(pd.read_csv(p, header=None)) for q, p in files.items()}
        a_levels = anjana_utils.get_transformation(anon, ANJANA_QIS, hierarchies)
        a_levels_map = dict(zip(ANJANA_QIS, a_levels, strict=True))
        a_supp = n - len(anon)
        # veil's measure of anjana's node (minimal suppression for k at those levels).
        a_eval = evaluate(
            data, hier, a_levels_map, KAnonymity(ANJANA_K), max_suppression=ANJANA_SUPP / 100
        )
        result["anjana"] = {
            "version": anjana.__version__,
            "seconds": a_seconds,
            "repeats": anjana_repeats,
            "levels": ",".join(str(x) for x in a_levels),
            "suppressed": int(a_supp),
            "suppressed_share": a_supp / n,
            "veil_loss_of_anjana_node": float(a_eval.metrics["loss"]),
            "veil_min_suppressed_at_anjana_node": int(a_eval.suppressed),
        }

    print()
    print(
        f"2. anjana's Adult example ({n:,} rows, k={ANJANA_K}, QIs {', '.join(ANJANA_QIS)}; "
        f"ident {ANJANA_IDENT[0]}; suppression limit {ANJANA_SUPP}%)"
    )
    rows = [
        [
            f"veil {veil.__version__}",
            f"{v_seconds:.3f} (best of {repeats})",
            f"{v_res.suppressed} ({v_res.suppressed / n:.2%})",
            result["veil"]["levels"],
            f"{result['veil']['loss']:.4f}",
        ]
    ]
    rows.append(
        [
            f"veil {veil.__version__}, 1% limit",
            f"{t_seconds:.3f} (best of {repeats})",
            f"{t_res.suppressed} ({t_res.suppressed / n:.2%})",
            result["veil_limit_1pct"]["levels"],
            f"{result['veil_limit_1pct']['loss']:.4f}",
        ]
    )
    a = result["anjana"]
    if "error" in a:
        rows.append(["anjana", a["error"], "", "", ""])
    else:
        rows.append(
            [
                f"anjana {a['version']}",
                f"{a['seconds']:.3f} (best of {a['repeats']})",
                f"{a['suppressed']} ({a['suppressed_share']:.2%})",
                a["levels"],
                f"{a['veil_loss_of_anjana_node']:.4f} (veil's evaluate; min. suppression "
                f"there {a['veil_min_suppressed_at_anjana_node']})",
            ]
        )
    print(_table(["tool", "time s", "suppressed", "levels", "loss"], rows))
    return result


def bench_risk(repeats: int) -> dict[str, Any]:
    df = pd.read_csv(ARX_DIR / "adult.csv", sep=";", dtype=str, keep_default_na=False)
    seconds, s = _best(lambda: summary(df, QIS8), max(repeats, 5))
    out = {
        "seconds": seconds,
        "n_records": s.n_records,
        "n_classes": s.n_classes,
        "sample_uniques": s.sample_uniques,
        "sample_uniqueness": s.sample_uniqueness,
        "prosecutor_highest": s.prosecutor_highest,
        "prosecutor_average": s.prosecutor_average,
        "records_above_threshold": s.records_above_threshold,
        "marketer": s.marketer,
    }
    print()
    print(f"3. veil.risk.summary on raw ARX Adult, 8 QIs: {seconds * 1000:.1f} ms")
    print(
        f"   records {s.n_records:,}, classes {s.n_classes:,}, sample uniques "
        f"{s.sample_uniques:,} ({s.sample_uniqueness:.2%}), prosecutor highest "
        f"{s.prosecutor_highest:.4f}, average {s.prosecutor_average:.4f}, records above "
        f"{s.threshold:g}: {s.records_above_threshold:.2%}, marketer {s.marketer:.4f}"
    )
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--rounds", type=int, default=5, help="alternating ARX / veil rounds (at least 3)"
    )
    parser.add_argument(
        "--arx-warmup", type=int, default=200, help="ARX runs warming the JVM (first configuration)"
    )
    parser.add_argument(
        "--arx-warmup-each",
        type=int,
        default=20,
        help="ARX runs of each further configuration before its rounds",
    )
    parser.add_argument(
        "--repeats", type=int, default=3, help="timed runs of veil in parts 2 and 3 (best kept)"
    )
    parser.add_argument(
        "--anjana-repeats", type=int, default=3, help="timed runs of anjana (best kept)"
    )
    parser.add_argument("--json", metavar="PATH", help="also write the results as JSON")
    parser.add_argument(
        "--phases",
        action="store_true",
        help="also profile veil's phases (CPU time per phase, separate runs)",
    )
    parser.add_argument(
        "--arx-data",
        type=Path,
        required=True,
        metavar="DIR",
        help="ARX's Adult: adult.csv (; separated) and adult_hierarchy_<attr>.csv",
    )
    parser.add_argument(
        "--arx-peer",
        type=Path,
        metavar="DIR",
        help="the ARX harness: DIR/arx-peer speaks the protocol of the module docstring",
    )
    parser.add_argument(
        "--anjana-data",
        type=Path,
        metavar="DIR",
        help="anjana's Adult example: adult.csv and hierarchies/<attr>.csv (part 2)",
    )
    parser.add_argument(
        "--match", default="", metavar="TEXT", help="part 1: only configurations naming TEXT"
    )
    parser.add_argument(
        "--parts", default="1,2,3", help="comma-separated parts to run (default 1,2,3)"
    )
    args = parser.parse_args()
    if args.rounds < 3:
        parser.error("--rounds must be at least 3")
    global ARX_DIR, ANJANA_DIR
    ARX_DIR = args.arx_data
    parts = {int(p) for p in args.parts.split(",")}

    print(
        f"veil {veil.__version__}, Python {platform.python_version()}, pandas "
        f"{pd.__version__}, NumPy {np.__version__}, {os.cpu_count()} CPUs, load average "
        f"{_load()}" + (f"; ARX peer {args.arx_peer}" if args.arx_peer else "; no ARX peer") + "\n"
    )
    results: dict[str, Any] = {
        "versions": {
            "python": platform.python_version(),
            "veil": veil.__version__,
            "pandas": pd.__version__,
            "numpy": np.__version__,
        },
    }
    if 1 in parts:
        results["arx"] = bench_arx(
            args.rounds,
            args.phases,
            args.arx_peer,
            args.arx_warmup,
            args.match,
            args.arx_warmup_each,
        )
    if 2 in parts and args.anjana_data is not None:
        ANJANA_DIR = args.anjana_data
        results["anjana_example"] = bench_anjana(args.repeats, args.anjana_repeats)
    if 3 in parts:
        results["risk_summary"] = bench_risk(args.repeats)
    results["load_average_end"] = _load()
    print(f"\nload average at the end: {_load()}")
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=2) + "\n")
        print(f"\nwrote {args.json}")


if __name__ == "__main__":
    main()
