"""The trasgoDP paper's epsilon sweep, timed: veil's protocol and the same loop in trasgoDP.

Three measurements, in one process, on Adult without the rows that miss one of the
paper's eight columns (30 162 rows):

1. veil's full protocol (:func:`veil.release.sweep.paper_protocol`): age (Laplace,
   Gaussian), workclass (exponential, k-ary RR), sex (exponential, binary RR), the
   paper's 24 budgets, ``--runs`` runs each (10: 1 440 releases and losses).
2. A subset run three ways, ``--peer-runs`` runs per budget over the 24 budgets:
   age with the Laplace mechanism and sex with binary randomized response
   (trasgoDP 2.1.0 refuses the Gaussian mechanism above ε = 1, so it cannot run the
   paper's Gaussian curve any more):

   * ``veil sweep``: :func:`veil.release.sweep.sweep` (one vectorized mechanism call
     per run, the loss of all runs of a budget in one matrix product);
   * ``veil loop``: the paper's loop written with veil's data-frame functions, a frame
     release and :func:`veil.metrics.correlation_loss` per run;
   * ``trasgoDP loop``: the same loop with ``trasgodp.numerical.dp_clip_laplace`` /
     ``trasgodp.categorical.dp_randomized_response_binary`` and
     ``trasgodp.metrics.correlation_loss``.

   The mean losses of the three agree within run-to-run noise (printed at a few ε).

Times are wall times (``time.perf_counter``) of one untraced run; peaks are the largest
Python allocation (``tracemalloc``, NumPy buffers included) during a second, traced run.
Ratios are trasgoDP time / veil time.

trasgoDP lives in the benchmark virtual environment (numpy 2.0, pandas 2.3). veil is
importable there when installed editable (``pip install -e '.[bench]'``); otherwise put
its sources on the path::

    python benchmarks/bench_sweep.py
    PYTHONPATH=src python benchmarks/bench_sweep.py --runs 10 --peer-runs 3 --json out.json
    python benchmarks/bench_sweep.py --no-peer          # veil only (no trasgoDP needed)
"""

from __future__ import annotations

import argparse
import gc
import importlib.util
import json
import os
import platform
import sys
import time
import tracemalloc
import warnings
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np
import pandas as pd

from veil.datasets import ADULT_BOUNDS, ADULT_DOMAINS, load_adult
from veil.errors import ReproducibleNoiseWarning
from veil.ldp import dp_clip_laplace, dp_randomized_response_binary
from veil.metrics import correlation_loss
from veil.rng import resolve_rng, spawn


def _import_sweep() -> ModuleType:
    """``veil.release.sweep``, also where the release package cannot be imported.

    The package's ``__init__`` loads the plan machinery, which needs pydantic and pyyaml;
    a benchmark environment made for trasgoDP may lack them. The sweep module needs
    neither, so it is then loaded from its file.
    """
    try:
        from veil.release import sweep as module

        return module
    except ModuleNotFoundError as error:
        import veil

        path = Path(veil.__file__).parent / "release" / "sweep.py"
        spec = importlib.util.spec_from_file_location("veil.release.sweep", path)
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules[spec.name] = module
        spec.loader.exec_module(module)
        print(f"note: veil.release cannot be imported ({error}); loaded {path} alone")
        return module


_sweep = _import_sweep()
PAPER_EPSILONS: tuple[float, ...] = _sweep.PAPER_EPSILONS
PAPER_FEATURES: tuple[str, ...] = _sweep.PAPER_FEATURES
paper_protocol = _sweep.paper_protocol
summarize = _sweep.summarize
sweep = _sweep.sweep

FEATURES = list(PAPER_FEATURES)
LOWER, UPPER = ADULT_BOUNDS["age"]
SHOWN_EPSILONS = (0.1, 1.0, 4.0, 8.0, 12.0)


def timed(call: Callable[[], Any], *, trace: bool) -> tuple[Any, float, float | None]:
    """Result, wall seconds of an untraced run, and the traced peak in MB (or None)."""
    gc.collect()
    start = time.perf_counter()
    result = call()
    seconds = time.perf_counter() - start
    peak = None
    if trace:
        gc.collect()
        tracemalloc.start()
        call()
        peak = tracemalloc.get_traced_memory()[1] / 2**20
        tracemalloc.stop()
    return result, seconds, peak


# --------------------------------------------------------------------------- the loops


def veil_sweep(df: pd.DataFrame, case: str, runs: int, seed: int) -> pd.Series[float]:
    if case == "age/laplace":
        frame = sweep(
            df,
            "age",
            "laplace",
            PAPER_EPSILONS,
            runs=runs,
            features=FEATURES,
            bounds=(LOWER, UPPER),
            rng=seed,
        )
    else:
        frame = sweep(
            df,
            "sex",
            "binary_rr",
            PAPER_EPSILONS,
            runs=runs,
            features=FEATURES,
            domain=ADULT_DOMAINS["sex"],
            rng=seed,
        )
    return summarize(frame).set_index("epsilon")["mean"]


def veil_loop(df: pd.DataFrame, case: str, runs: int, seed: int) -> pd.Series[float]:
    streams = spawn(resolve_rng(seed), len(PAPER_EPSILONS) * runs)
    means = {}
    for i, eps in enumerate(PAPER_EPSILONS):
        losses = []
        for run in range(runs):
            rng = streams[i * runs + run]
            if case == "age/laplace":
                dp = dp_clip_laplace(df, "age", eps, LOWER, UPPER, rng=rng)
            else:
                dp = dp_randomized_response_binary(
                    df, "sex", eps, domain=ADULT_DOMAINS["sex"], rng=rng
                )
            losses.append(correlation_loss(df, dp, FEATURES))
        means[eps] = float(np.mean(losses))
    return pd.Series(means)


def trasgodp_loop(df: pd.DataFrame, case: str, runs: int, seed: int) -> pd.Series[float]:
    from trasgodp.categorical import dp_randomized_response_binary as peer_rr
    from trasgodp.metrics import correlation_loss as peer_loss
    from trasgodp.numerical import dp_clip_laplace as peer_laplace

    np.random.seed(seed)  # noqa: NPY002 (trasgoDP draws from NumPy's global state)
    means = {}
    for eps in PAPER_EPSILONS:
        losses = []
        for _ in range(runs):
            if case == "age/laplace":
                dp = peer_laplace(df, "age", eps, LOWER, UPPER)
            else:
                dp = peer_rr(df, "sex", eps, positive_label="Male")
            losses.append(peer_loss(df, dp, FEATURES))
        means[eps] = float(np.mean(losses))
    return pd.Series(means)


# --------------------------------------------------------------------------- report


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=10, help="runs of the full protocol")
    parser.add_argument("--peer-runs", type=int, default=3, help="runs of the subset")
    parser.add_argument("--no-peer", action="store_true", help="skip trasgoDP")
    parser.add_argument("--no-trace", action="store_true", help="no memory tracing")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--json", help="also write the figures as JSON to this path")
    args = parser.parse_args()
    # Seeded on purpose, to compare runs; the warning that says so is expected.
    warnings.filterwarnings("ignore", category=ReproducibleNoiseWarning)
    trace = not args.no_trace

    df = load_adult().dropna(subset=FEATURES).reset_index(drop=True)
    versions = {
        "python": platform.python_version(),
        "numpy": np.__version__,
        "pandas": pd.__version__,
        "cpus": os.cpu_count(),
    }
    if not args.no_peer:
        from importlib.metadata import version

        versions["trasgodp"] = version("trasgodp")
    print(f"Adult, complete rows of the paper's columns: {len(df)} rows; {versions}")
    results: dict[str, Any] = {"rows": len(df), "versions": versions, "args": vars(args)}

    releases = 3 * 2 * len(PAPER_EPSILONS) * args.runs
    _, seconds, peak = timed(lambda: paper_protocol(df, runs=args.runs, rng=args.seed), trace=trace)
    peak_text = f", peak {peak:.1f} MB" if peak is not None else ""
    print(
        f"\nveil paper_protocol: {releases} releases and losses in {seconds:.2f} s "
        f"({1e3 * seconds / releases:.2f} ms each){peak_text}"
    )
    results["protocol"] = {"releases": releases, "seconds": seconds, "peak_mb": peak}

    runs = args.peer_runs
    print(f"\nsubset: {len(PAPER_EPSILONS)} budgets x {runs} runs per case")
    header = f"{'case':<14}{'implementation':<16}{'time s':>9}{'peak MB':>10}{'ratio':>8}"
    print(header + "".join(f"{'ε=' + format(e, 'g'):>9}" for e in SHOWN_EPSILONS))
    results["subset"] = {}
    loops: list[tuple[str, Callable[[pd.DataFrame, str, int, int], Any]]] = [
        ("veil sweep", veil_sweep),
        ("veil loop", veil_loop),
    ]
    if not args.no_peer:
        loops.append(("trasgoDP loop", trasgodp_loop))
    for case in ("age/laplace", "sex/binary_rr"):
        figures: dict[str, Any] = {}
        for name, loop in loops:
            means, seconds, peak = timed(
                lambda loop=loop, case=case: loop(df, case, runs, args.seed), trace=trace
            )
            figures[name] = {
                "seconds": seconds,
                "peak_mb": peak,
                "mean_loss": {str(e): float(means[e]) for e in PAPER_EPSILONS},
            }
        base = figures["veil sweep"]["seconds"]
        for name, fig in figures.items():
            ratio = fig["seconds"] / base
            peak_col = f"{fig['peak_mb']:>10.1f}" if fig["peak_mb"] is not None else f"{'-':>10}"
            losses = "".join(f"{fig['mean_loss'][str(e)]:>9.2f}" for e in SHOWN_EPSILONS)
            print(f"{case:<14}{name:<16}{fig['seconds']:>9.2f}{peak_col}{ratio:>8.1f}{losses}")
        results["subset"][case] = figures
    print("\nratio: time / veil sweep time; columns ε=...: mean correlation loss (%)")

    if args.json:
        with open(args.json, "w", encoding="utf-8") as handle:
            json.dump(results, handle, indent=2)
    sys.stdout.flush()


if __name__ == "__main__":
    main()
