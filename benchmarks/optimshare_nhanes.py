"""The OptimShare paper's NHANES finding (Fig. 8): LBXTC and ALQ120Q leave Q.

The paper's diabetes subset (NHDS: 4,412 records x 17 attributes, class DIQ010, global
Q = BPQ020, RIAGENDR, ALQ120Q, LBXTC) is not published; this script rebuilds one from
the raw NHANES 2013-2014 tables by a stated rule and runs veil's Q refinement on it
(:func:`veil.share.derive_requirements`, alpha = 1 as in the paper).

The rule (``build_subset``):

* tables: ``demographic``, ``examination``, ``labs`` and ``questionnaire`` (``*.csv.zip``
  in ``--data``), left-joined on ``SEQN`` from ``demographic``;
* rows: the two classes of DIQ010 (1 = told by a doctor of diabetes, 2 = not; borderline
  3, refused 7, don't know 9 and missing dropped) and an answer to ALQ120Q (alcohol
  frequency, asked of those who had 12 drinks in their life; missing, refused 777 and
  don't know 999 dropped);
* columns (17): Q = BPQ020, RIAGENDR, ALQ120Q, LBXTC; S = RIDAGEYR, RIDRETH1, DMDEDUC2,
  INDFMPIR, BMXWT, BMXHT, BMXBMI, BMXWAIST, BPXSY1, BPXDI1, LBXGH, LBDHDD and the class
  DIQ010. The paper names BMXBMI and BMXHT among its S attributes; the others are
  common diabetes covariates. Missing values are kept (a category of their own).

Two readings of the numbers: the paper's (every distinct value a category, as piflib
takes them), and Q exact with S coarsened (5 quantile bins for every S column of more
than 10 values), to see whether the finding hangs on near-unique S values.

Run: ``python benchmarks/optimshare_nhanes.py --data DIR`` (DIR holds the NHANES tables).
"""

from __future__ import annotations

import argparse
import time
import warnings
from pathlib import Path

import pandas as pd

from veil.errors import PrivacyWarning
from veil.share import ShareRequirements, derive_requirements

Q = ["BPQ020", "RIAGENDR", "ALQ120Q", "LBXTC"]
S = [
    "RIDAGEYR",
    "RIDRETH1",
    "DMDEDUC2",
    "INDFMPIR",
    "BMXWT",
    "BMXHT",
    "BMXBMI",
    "BMXWAIST",
    "BPXSY1",
    "BPXDI1",
    "LBXGH",
    "LBDHDD",
    "DIQ010",
]
TABLES = ("demographic", "examination", "labs", "questionnaire")
PAPER = {"records": 4412, "attributes": 17, "moved": ["ALQ120Q", "LBXTC"]}


def build_subset(folder: Path) -> tuple[pd.DataFrame, dict[str, int]]:
    """The diabetes subset and the row counts after each step of the rule."""
    frames = {}
    for name in TABLES:
        path = folder / f"{name}.csv.zip"
        if not path.exists():
            raise SystemExit(f"--data: {path} does not exist (the NHANES *.csv.zip tables)")
        frames[name] = pd.read_csv(path, low_memory=False)
    merged = frames["demographic"]
    for name in TABLES[1:]:
        wanted = ["SEQN", *[c for c in (*Q, *S) if c in frames[name].columns]]
        merged = merged.merge(frames[name][wanted], on="SEQN", how="left")
    counts = {"all participants": len(merged)}
    merged = merged[merged["DIQ010"].isin([1, 2])]
    counts["DIQ010 in {1, 2}"] = len(merged)
    merged = merged[merged["ALQ120Q"].notna() & ~merged["ALQ120Q"].isin([777, 999])]
    counts["ALQ120Q answered"] = len(merged)
    return merged[[*Q, *S]].reset_index(drop=True), counts


def _run(data: pd.DataFrame, label: str, **options: object) -> ShareRequirements:
    started = time.perf_counter()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", PrivacyWarning)
        result = derive_requirements(data, Q, S, alpha=1.0, on_violation="warn", **options)
    seconds = time.perf_counter() - started
    print(f"\n## {label} ({seconds:.2f} s)")
    print(f"{'attribute':10} {'QPIF':>8} {'QSPIF':>8} {'delta':>8} {'alpha*QPIF':>11}  verdict")
    for attribute, row in result.table.iterrows():
        verdict = "moves to S" if row["moved"] else "stays in Q"
        print(
            f"{attribute!s:10} {row['qpif']:8.4f} {row['qspif']:8.4f} {row['delta']:8.4f} "
            f"{row['bound']:11.4f}  {verdict}"
        )
    print(f"moved to S: {list(result.moved)} (paper: {PAPER['moved']})")
    print(
        f"refined Q: {list(result.refined_q)}; QPIF of the refined Q (Fig. 8): "
        + ", ".join(f"{k} {v:.4f}" for k, v in result.refined_qpif.items())
    )
    thresh = "None" if result.pif_thresh is None else f"{result.pif_thresh:.4f}"
    print(f"PIF_thresh (max QSPIF over the refined Q): {thresh}")
    print(f"largest PIF_A over Q u S (Eq. 12 reading): {result.max_qs_pif:.4f}")
    guard = result.guard
    print(
        f"guard: {guard.k}-anonymous on {list(guard.columns)}, {guard.unique_records} records "
        f"alone, worst CSF {guard.worst_csf:.4f}: {'passed' if guard.passed else 'FAILED'}"
    )
    for item in caught:
        print(f"  warning: {item.message}")
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, required=True, help="folder of NHANES *.csv.zip")
    args = parser.parse_args()
    data, counts = build_subset(args.data)
    print("# OptimShare NHANES: Q refinement (paper Fig. 8)")
    for step, n in counts.items():
        print(f"rows, {step}: {n:,}")
    print(
        f"subset: {data.shape[0]:,} x {data.shape[1]} (paper: {PAPER['records']:,} x "
        f"{PAPER['attributes']}); missing cells: {int(data.isna().sum().sum()):,}"
    )
    exact = _run(data, "exact values (the paper's and piflib's reading)", default_bins="exact")
    wide = [c for c in S if data[c].nunique() > 10]
    binned = _run(
        data,
        f"Q exact, quantile bins (5) on the S columns of more than 10 values {wide}",
        bins=dict.fromkeys(wide, 5),
        default_bins="exact",
    )
    for label, result in (("exact", exact), ("binned", binned)):
        same = sorted(result.moved) == sorted(PAPER["moved"])
        print(f"{label}: the paper's finding {'reproduces' if same else 'does NOT reproduce'}")


if __name__ == "__main__":
    main()
