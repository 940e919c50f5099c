"""Benchmark veil.risk.assess_pif against piflib 0.1.1 on Statlog (Shuttle), 58,000 x 10.

Both compute, for every cell, the CSF and the CIG, the wCIG weights (conditional
entropies), the RIGs and PIF_95; veil also returns the paper's PIF_A. piflib's path to
the same outputs is ``compute_csfs``, ``compute_cigs``, the conditional entropy table
behind ``compute_weighted_cigs`` and ``compute_pif``; it is timed once untraced (piflib
is slow) and run once more under tracemalloc for its peak; veil takes the best of three
untraced runs. Targets (issue 10): veil under 1 s and at least 50x faster than piflib.
Peak memory is traced per tool (tracemalloc sees NumPy's buffers too).

The table: ``shuttle.trn`` and ``shuttle.tst`` of the UCI Statlog (Shuttle) data (9
integer attributes and the class), stacked, every value a category.

Run: ``python benchmarks/bench_pif.py --data DIR`` (DIR holds shuttle.trn, shuttle.tst).
"""

from __future__ import annotations

import argparse
import resource
import time
import tracemalloc
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from veil.risk import assess_pif


def load_shuttle(folder: Path) -> pd.DataFrame:
    parts = []
    for name in ("shuttle.trn", "shuttle.tst"):
        path = folder / name
        if not path.exists():
            raise SystemExit(f"--data: {path} does not exist (the Statlog Shuttle files)")
        parts.append(pd.read_csv(path, sep=r"\s+", header=None))
    frame = pd.concat(parts, ignore_index=True)
    frame.columns = [*(f"A{i}" for i in range(1, 10)), "class"]
    return frame


def _peak_mib(fn: Callable[[], Any]) -> float:
    """The traced peak of one call, in MiB."""
    tracemalloc.start()
    fn()
    peak = tracemalloc.get_traced_memory()[1] / 2**20
    tracemalloc.stop()
    return peak


def _piflib(frame: pd.DataFrame) -> dict[str, Any]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        import piflib
        from piflib.entropy import create_conditional_entropy_table
        from piflib.pif_calculator import compute_pif
    out: dict[str, Any] = {"seconds": {}}
    steps: list[tuple[str, Callable[[], Any]]] = [
        ("csf", lambda: piflib.compute_csfs(frame)),
        ("cig", lambda: piflib.compute_cigs(frame)),
        ("entropy", lambda: create_conditional_entropy_table(frame, round_digits=15)),
        ("pif_95", lambda: compute_pif(out["cig"], 95)),
    ]
    for name, fn in steps:
        started = time.perf_counter()
        out[name] = fn()
        out["seconds"][name] = time.perf_counter() - started
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, required=True, help="folder of shuttle.trn/.tst")
    args = parser.parse_args()
    frame = load_shuttle(args.data)
    print(f"Shuttle: {frame.shape[0]:,} x {frame.shape[1]}")

    times = []
    for _ in range(3):
        started = time.perf_counter()
        ours = assess_pif(frame)
        times.append(time.perf_counter() - started)
    veil_peak = _peak_mib(lambda: assess_pif(frame))
    veil_s = min(times)
    runs = ", ".join(f"{t:.3f}" for t in times)
    print(f"veil   assess_pif: {veil_s:.3f} s (best of 3: {runs}), traced peak {veil_peak:.0f} MiB")

    # Timed untraced (tracing slows pure Python down), then traced once for its peak.
    theirs = _piflib(frame)
    piflib_peak = _peak_mib(lambda: _piflib(frame))
    piflib_s = sum(theirs["seconds"].values())
    parts = ", ".join(f"{k} {v:.1f} s" for k, v in theirs["seconds"].items())
    print(f"piflib 0.1.1     : {piflib_s:.1f} s ({parts}), traced peak {piflib_peak:.0f} MiB")
    print(f"ratio piflib / veil: {piflib_s / veil_s:.0f}x (targets: veil < 1 s, ratio >= 50x)")

    csf_diff = float(np.abs(ours.csf.to_numpy() - theirs["csf"].to_numpy()).max())
    cig_diff = float(np.abs(ours.cig.to_numpy() - theirs["cig"].to_numpy()).max())
    pif_diff = abs(ours.pif_n(95) - float(theirs["pif_95"]))
    print(
        f"agreement: max |CSF diff| {csf_diff:.1e}, max |CIG diff| {cig_diff:.1e}, "
        f"|PIF_95 diff| {pif_diff:.1e} bits"
    )
    pif_a = ", ".join(f"{k} {v:.3f}" for k, v in ours.pif_a.items())
    print(f"PIF_95 = {ours.pif_n(95):.4f} bits; PIF_A: {pif_a}")
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"process peak RSS: {rss:.0f} MiB")


if __name__ == "__main__":
    main()
