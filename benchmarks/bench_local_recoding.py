"""Local recoding and microaggregation on ARX's Adult benchmark: figures side by side.

1. Global full-domain generalization (``veil.anonymity.anonymize``) against local
   recoding (``veil.anonymity.local.anonymize_local``, ARX's iterative local
   transformation) on ARX's Adult benchmark (eight QIs, its hierarchies) for several k,
   suppression limits and models: records released, ARX's Loss, classes, rounds, time.
2. MDAV microaggregation (``veil.anonymity.microaggregation``) of Adult-like numeric
   columns at growing sizes: time, SSE/SST and IL1s; and the univariate optimal
   partition against MDAV on one column.

No peer tool runs here (ARX is Java, sdcMicro is R); the global search is the baseline.
Not a test (pytest does not collect it). Run::

    python benchmarks/bench_local_recoding.py --arx-data DIR [--json PATH]

benchmarks/README.md ("Data and environments") shows how to lay out the folder from the
copy a clone holds.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from veil.anonymity import DistinctLDiversity, Hierarchy, KAnonymity, anonymize
from veil.anonymity.checks import k_anonymity
from veil.anonymity.local import anonymize_local
from veil.anonymity.microaggregation import microaggregate
from veil.anonymity.models import PrivacyModel

# ARX's Adult folder, set in main() from --arx-data.
ARX_DIR: Path
QIS = [
    "sex", "age", "race", "marital-status", "education", "native-country", "workclass",
    "salary-class",
]  # fmt: skip


def _adult() -> tuple[pd.DataFrame, dict[str, Hierarchy]]:
    df = pd.read_csv(ARX_DIR / "adult.csv", sep=";", dtype=str)
    hierarchies = {q: Hierarchy.from_csv(ARX_DIR / f"adult_hierarchy_{q}.csv") for q in QIS}
    return df, hierarchies


def _timed(call: Any) -> tuple[Any, float]:
    start = time.perf_counter()
    value = call()
    return value, time.perf_counter() - start


def local_recoding() -> list[dict[str, Any]]:
    df, hierarchies = _adult()
    cases: list[tuple[str, list[PrivacyModel], str | None, float]] = [
        ("k=2", [KAnonymity(2)], None, 0.05),
        ("k=5", [KAnonymity(5)], None, 0.0),
        ("k=5", [KAnonymity(5)], None, 0.02),
        ("k=5", [KAnonymity(5)], None, 0.05),
        ("k=5", [KAnonymity(5)], None, 0.10),
        ("k=10", [KAnonymity(10)], None, 0.05),
        ("k=20", [KAnonymity(20)], None, 0.05),
        ("k=5 + l=2 (occupation)", [KAnonymity(5), DistinctLDiversity("occupation", 2)],
         "occupation", 0.05),
    ]  # fmt: skip
    rows = []
    print("\n1. Global against local recoding, ARX Adult (30 162 records, 8 QIs)\n")
    header = (
        f"{'models':<24}{'supp':>6} | {'global released':>15}{'loss':>8}{'s':>6} | "
        f"{'local released':>14}{'loss':>8}{'rounds':>7}{'repaired':>9}{'s':>6} | "
        f"{'loss ratio':>10}"
    )
    print(header)
    print("-" * len(header))
    for name, models, sensitive, limit in cases:
        found, t_global = _timed(
            lambda m=models, s=sensitive, x=limit: anonymize(
                df, hierarchies, m, max_suppression=x, sensitive=s
            )
        )
        local, t_local = _timed(
            lambda m=models, s=sensitive, x=limit: anonymize_local(
                df, hierarchies, m, max_suppression=x, sensitive=s
            )
        )
        assert k_anonymity(local.data, QIS) >= models[0].k  # type: ignore[attr-defined]
        row = {
            "models": name,
            "max_suppression": limit,
            "global_released": len(found.data),
            "global_loss": found.metrics["loss"],
            "global_seconds": t_global,
            "local_released": len(local.data),
            "local_loss": local.metrics["loss"],
            "local_rounds": int(local.subset.max()) + 1,
            "local_repaired": local.repaired,
            "local_seconds": t_local,
        }
        rows.append(row)
        print(
            f"{name:<24}{limit:>6.2f} | {row['global_released']:>15,}{row['global_loss']:>8.4f}"
            f"{t_global:>6.2f} | {row['local_released']:>14,}{row['local_loss']:>8.4f}"
            f"{row['local_rounds']:>7}{local.repaired:>9}{t_local:>6.2f} | "
            f"{row['local_loss'] / row['global_loss'] if row['global_loss'] else 1:>10.3f}"
        )
    return rows


def microaggregation() -> list[dict[str, Any]]:
    rng = np.random.default_rng(0)
    rows = []
    print("\n2. MDAV microaggregation of three correlated numeric columns\n")
    header = f"{'records':>9}{'k':>4}{'seconds':>9}{'SSE/SST':>10}{'IL1s':>9}{'sizes':>8}"
    print(header)
    print("-" * len(header))
    for n in (10_000, 30_000, 100_000):
        age = rng.integers(17, 91, n).astype(float)
        hours = np.clip(rng.normal(40, 12, n) - 0.1 * (age - 40), 1, 99).round()
        income = np.exp(rng.normal(10 + 0.01 * age, 0.6, n)).round(-2)
        df = pd.DataFrame({"age": age, "hours": hours, "income": income})
        for k in (3, 5, 10):
            result, seconds = _timed(
                lambda d=df, kk=k: microaggregate(d, ["age", "hours", "income"], kk)
            )
            loss = result.information_loss
            rows.append(
                {"records": n, "k": k, "seconds": seconds, **loss, "max_size": result.sizes.max()}
            )
            print(
                f"{n:>9,}{k:>4}{seconds:>9.2f}{loss['sse_sst']:>10.4f}{loss['il1s']:>9.4f}"
                f"{f'{result.sizes.min()}-{result.sizes.max()}':>8}"
            )
    print("\n   Univariate: optimal (Hansen-Mukherjee) against MDAV, one column\n")
    header = f"{'records':>9}{'k':>4}{'optimal SSE/SST':>17}{'s':>7}{'MDAV SSE/SST':>14}{'s':>7}"
    print(header)
    print("-" * len(header))
    for n in (10_000, 100_000):
        df = pd.DataFrame({"income": np.exp(rng.normal(10, 0.8, n)).round(-2)})
        for k in (3, 10):
            best, t_best = _timed(
                lambda d=df, kk=k: microaggregate(d, "income", kk, method="optimal")
            )
            mdav, t_mdav = _timed(lambda d=df, kk=k: microaggregate(d, "income", kk))
            rows.append(
                {
                    "records": n,
                    "k": k,
                    "optimal_sse_sst": best.information_loss["sse_sst"],
                    "optimal_seconds": t_best,
                    "mdav_sse_sst": mdav.information_loss["sse_sst"],
                    "mdav_seconds": t_mdav,
                }
            )
            print(
                f"{n:>9,}{k:>4}{best.information_loss['sse_sst']:>17.2e}{t_best:>7.2f}"
                f"{mdav.information_loss['sse_sst']:>14.2e}{t_mdav:>7.2f}"
            )
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", type=Path, help="also write the figures as JSON")
    parser.add_argument(
        "--arx-data",
        type=Path,
        required=True,
        metavar="DIR",
        help="ARX's Adult: adult.csv (; separated) and adult_hierarchy_<attr>.csv",
    )
    args = parser.parse_args()
    global ARX_DIR
    ARX_DIR = args.arx_data
    figures = {"local_recoding": local_recoding(), "microaggregation": microaggregation()}
    if args.json:
        args.json.write_text(json.dumps(figures, indent=2, default=float))


if __name__ == "__main__":
    main()
