"""Reproduce the OptimShare paper's search on its datasets (Table 5, Table 2) and time it.

For each dataset of the paper's Table 1 that is shipped (wine white, page blocks, letter,
shuttle, NHANES; Give Me Some Credit is not, its licence is unclear), in a fresh
subprocess (so that no JAX compilation is shared between datasets and the peak RSS is
the dataset's own):

* the paper's global Q and class label (Table 1; shuttle's a..i are its nine attributes
  in file order, page blocks' at1..at10 its ten);
* PIF_thresh by the paper's Eq. 7 on the global Q (the largest QSPIF of a Q attribute,
  :func:`veil.share.derive_requirements` with every distinct value a category), and the
  TN = 12 pairs of :func:`veil.share.budget_pairs` (T_eps = 8, P_l = 0.01 %); what the
  refinement would move is reported beside;
* the default search (:func:`veil.share.optimshare_search`: MST without compression,
  t = 4, GaussianNB, C = 0.5, E^T = 0.5, S drawn given the exact Q) on the global Q;
* with ``--baseline``, the same search with independent marginals, and with ``--gan`` the
  DP-WGAN on wine white (the paper's generator for continuous attributes);
* NHANES once more with the paper's refined Q (BPQ020, RIAGENDR) for Table 2, with
  ``--seeds`` searches (seeds 1..N) and, for each, ``--repeats`` fold draws of the
  review (:func:`veil.share.review_share`): the original, the chosen pair's model
  sampled whole (every column synthetic, the paper's "direct perturbation" column, here
  MST instead of DP-WGAN) and the OptimShare release; every figure is printed as its
  mean, standard deviation and range over the N x R draws (one draw is one run of the
  paper's table, which moves with the fold draw);
* beside P_N, the raw linkable fraction L (of the chosen candidate, and its range over
  every candidate): P_N = min(1, eps L / T_eps) is small when eps is, however many
  records are linkable.

The load average (1, 5, 15 min) is printed before and after each subprocess: the
machine is shared, and the times are only comparable at a like load.

Domains: public where the data's documentation states them (letter's 0..15 and its 26
letters, page blocks' proportions in [0, 1] and five classes, wine quality 0..10,
shuttle's seven classes); every other bound is read from the data
(:meth:`veil.synth.TableDomain.from_data`, 16 bins), which the result lists as a leak:
acceptable for a timing and a reproduction, not for a release.

Speed: mbi compiles its estimator with JAX once per model structure, and that
compilation is most of a fit. By default this script sets
``XLA_FLAGS=--xla_backend_optimization_level=0 --xla_llvm_disable_expensive_passes=true``
in each subprocess (about 3x faster compilation measured on one MST fit; the estimator
runs slower, but it runs for under 2 s); ``--xla-default`` keeps XLA's defaults.

Run: ``python benchmarks/optimshare_search.py --data DIR`` (DIR: the folder of the
OptimShare datasets, with wine_white/, page_blocks/, letter/, shuttle/, nhanes/).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
import warnings
from pathlib import Path
from typing import Any

FAST_XLA = "--xla_backend_optimization_level=0 --xla_llvm_disable_expensive_passes=true"
DATASETS = ("wine_white", "page_blocks", "letter", "shuttle", "nhanes")
LETTER = [
    "lettr", "x-box", "y-box", "width", "high", "onpix", "x-bar", "y-bar", "x2bar",
    "y2bar", "xybar", "x2ybr", "xy2br", "x-ege", "xegvy", "y-ege", "yegvx",
]  # fmt: skip
GLOBAL_Q = {
    "wine_white": (["free sulfur dioxide", "total sulfur dioxide"], "quality"),
    "page_blocks": (["at1", "at2", "at10"], "class"),
    "letter": (["lettr", "x-box", "y-box", "width", "high", "xy2br"], "lettr"),
    "shuttle": (["b", "d", "i"], "class"),
    "nhanes": (["BPQ020", "RIAGENDR", "ALQ120Q", "LBXTC"], "DIQ010"),
}
PAPER_TABLE2 = {
    "BPQ020_mean": (0.0117, 6.72105, 0.0079),
    "RIAGENDR_mean": (1.30235, 1.66805, 1.35855),
    "BPQ020_std": (0.6667, 0.97205, 0.6667),
    "RIAGENDR_std": (0.45205, 0.1451, 0.47925),
    "NB_RMSE": (0.4015, 0.4125, 0.4153),
    "NB_precision": (0.760, 0.780, 0.811),
    "NB_recall": (0.789, 0.794, 0.798),
}


def load(name: str, folder: Path) -> Any:
    """The dataset as a frame, with the paper's column names."""
    import pandas as pd

    if name == "wine_white":
        return pd.read_csv(folder / "wine_white" / "winequality-white.csv", sep=";")
    if name == "page_blocks":
        frame = pd.read_csv(folder / "page_blocks" / "page-blocks.data", sep=r"\s+", header=None)
        frame.columns = [*(f"at{i}" for i in range(1, 11)), "class"]
        return frame
    if name == "letter":
        frame = pd.read_csv(folder / "letter" / "letter-recognition.data", header=None)
        frame.columns = LETTER
        return frame
    if name == "shuttle":
        parts = [
            pd.read_csv(folder / "shuttle" / f, sep=r"\s+", header=None)
            for f in ("shuttle.trn", "shuttle.tst")
        ]
        frame = pd.concat(parts, ignore_index=True)
        frame.columns = [*"abcdefghi", "class"]
        return frame
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from optimshare_nhanes import build_subset

    return build_subset(folder / "nhanes")[0]


def public_columns(name: str) -> dict[str, Any]:
    """The bounds and categories the datasets' documentation states."""
    if name == "letter":
        spec: dict[str, Any] = {c: {"bounds": [0, 15], "integer": True, "bins": 16} for c in LETTER}
        spec["lettr"] = [chr(c) for c in range(ord("A"), ord("Z") + 1)]
        return spec
    if name == "page_blocks":
        return {
            "at5": {"bounds": [0, 1], "bins": 16},
            "at6": {"bounds": [0, 1], "bins": 16},
            "class": {"bounds": [1, 5], "integer": True},
        }
    if name == "wine_white":
        return {"quality": {"bounds": [0, 10], "integer": True}}
    if name == "shuttle":
        return {"class": {"bounds": [1, 7], "integer": True}}
    return {}


def domain_of(name: str, frame: Any) -> Any:
    from veil.synth import TableDomain

    public = TableDomain.from_dict(public_columns(name)) if public_columns(name) else None
    known = [] if public is None else list(public.names)
    rest = [c for c in frame.columns if c not in known]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        derived = TableDomain.from_data(frame, columns=rest) if rest else None
    columns = {
        **({} if public is None else public.columns),
        **({} if derived is None else derived.columns),
    }
    ordered = {c: columns[c] for c in frame.columns}
    return TableDomain(ordered, leaks=() if derived is None else derived.leaks)


def pairs_for(frame: Any, q: list[str], s: list[str]) -> tuple[Any, Any]:
    """Eq. 7 on the global Q (no refinement applied) and the fuzzy pairs."""
    from veil.share import budget_pairs, derive_requirements

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        req = derive_requirements(frame, q, s, default_bins="exact", on_violation="warn")
    thresh = min(float(req.table["qspif"].max()), 1.0 - 1e-12)
    return budget_pairs(thresh, len(frame)), req


def run_one(
    name: str, folder: Path, synthesizer: str, refined: bool, seeds: int = 1, repeats: int = 1
) -> dict[str, Any]:
    import numpy as np

    from veil.share import optimshare_search

    frame = load(name, folder)
    q, label = GLOBAL_Q[name]
    s = [c for c in frame.columns if c not in q]
    started = time.perf_counter()
    pairs, req = pairs_for(frame, q, s)
    if refined:  # the paper's refined Q, and PIF_thresh over it (Eq. 7)
        from veil.share import budget_pairs

        q, s = [str(c) for c in req.refined_q], [str(c) for c in req.refined_s]
        pairs = budget_pairs(min(float(req.pif_thresh), 1.0 - 1e-12), len(frame))
    domain = domain_of(name, frame)
    setup = time.perf_counter() - started
    marks: list[float] = []

    def progress(label_: str, done: int, total: int) -> None:
        marks.append(time.perf_counter())
        if label_.startswith("fit") or done == total:
            print(f"  [{name}] {done}/{total} {label_}", file=sys.stderr, flush=True)

    def search(seed: int | None) -> Any:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return optimshare_search(
                frame,
                q=q,
                s=s,
                label=label,
                domain=domain,
                pairs=pairs,
                synthesizer=synthesizer,
                # the DP-WGAN must be told the columns it conditions on
                synthesizer_settings={"condition": q} if synthesizer == "dpwgan" else None,
                rng=seed,
                progress=progress,
            )

    result = search(1 if refined else None)
    total = time.perf_counter() - started
    table = result.table
    fits = table.groupby("pair")["fit_seconds"].first()
    out: dict[str, Any] = {
        "dataset": name,
        "synthesizer": synthesizer,
        "rows": len(frame),
        "columns": frame.shape[1],
        "q": q,
        "label": label,
        "refinement_moves": [str(c) for c in req.moved],
        "guard_k_of_global_q": int(frame.groupby(q, dropna=False).size().min()),
        "pif_thresh": pairs.pif_thresh,
        "epsilon_star": pairs.epsilon_star,
        "delta": pairs.pairs[0][1],
        "seconds": total,
        "setup_seconds": setup,
        "fit_seconds": [float(v) for v in fits],
        "sample_seconds": float(table["sample_seconds"].sum()),
        "score_seconds": float(table["score_seconds"].sum()),
        "mean_u": float(table["utility"].mean()),
        "mean_e": float(table["e"].mean()),
        "u_o": float(table["u_o"].iloc[0]),
        "qualifying": int(table["qualifies"].sum()),
        "candidates": len(table),
        "chosen": {
            k: (v.item() if isinstance(v, np.generic) else v) for k, v in result.chosen.items()
        },
        "cost": {
            "epsilon": result.cost.epsilon,
            "delta": result.cost.delta,
            "rule": result.cost.mechanism,
        },
        "private_cost": {
            "epsilon": result.costs["private"].epsilon,
            "delta": result.costs["private"].delta,
        }
        if "private" in result.costs
        else None,
        "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
        "leaks": len(result.leaks),
    }
    out["linkable"] = {
        "chosen": float(result.chosen["linkable"]),
        "min": float(table["linkable"].min()),
        "max": float(table["linkable"].max()),
        "mean": float(table["linkable"].mean()),
    }
    if refined:
        out["table2"], out["linkage2"] = _table2(
            frame, q, s, label, domain, result, search, seeds, repeats
        )
    return out


def _table2(
    frame: Any,
    q: list[str],
    s: list[str],
    label: str,
    domain: Any,
    first: Any,
    search: Any,
    seeds: int,
    repeats: int,
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """Table 2 over ``seeds`` searches x ``repeats`` fold draws, and each release's linkage."""
    import numpy as np

    from veil.share import review_share

    values: dict[str, dict[str, list[float]]] = {}
    linkage = []
    for seed in range(1, seeds + 1):
        result = first if seed == 1 else search(seed)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            review = review_share(
                frame,
                result.data,
                q=q,
                s=s,
                label=label,
                domain=domain,
                model=result.model,
                repeats=repeats,
                epsilon=float(result.chosen["epsilon"]),
                t_epsilon=float(result.settings["t_epsilon"]),
                rng=1000 + seed,
            )
        for row, tables in review["comparison_spread"].items():
            for column, cell in tables.items():
                values.setdefault(column, {}).setdefault(row, []).extend(cell["values"])
        linkage.append({"seed": seed, **review["linkage"]})
    table2 = {
        column: {
            row: {
                "mean": float(np.mean(v)),
                "sd": float(np.std(v, ddof=1)) if len(v) > 1 else 0.0,
                "min": float(np.min(v)),
                "max": float(np.max(v)),
                "draws": len(v),
            }
            for row, v in rows.items()
        }
        for column, rows in values.items()
    }
    return table2, linkage


def _child(args: argparse.Namespace) -> None:
    result = run_one(args.only, args.data, args.synthesizer, args.refined, args.seeds, args.repeats)
    Path(args.result).write_text(json.dumps(result), encoding="utf-8")


def _spawn(
    folder: Path, name: str, synthesizer: str, refined: bool, fast: bool, draws: tuple[int, int]
) -> dict[str, Any]:
    env = dict(os.environ)
    if fast:
        env["XLA_FLAGS"] = FAST_XLA
    with tempfile.NamedTemporaryFile(suffix=".json", delete=False) as tmp:
        target = tmp.name
    try:
        command = [sys.executable, __file__, "--data", str(folder), "--only", name]
        command += ["--synthesizer", synthesizer, "--result", target]
        if refined:
            command += ["--refined", "--seeds", str(draws[0]), "--repeats", str(draws[1])]
        load_before = os.getloadavg()
        subprocess.run(command, check=True, env=env)
        result = dict(json.loads(Path(target).read_text(encoding="utf-8")))
        result["load_average"] = {"before": load_before, "after": os.getloadavg()}
        return result
    finally:
        os.unlink(target)


def _print(results: list[dict[str, Any]]) -> None:
    print("\n## Table 5 (veil): the default search on the paper's global Q\n")
    print(
        "| dataset | synthesizer | rows | time s | fits s (sum; min-max) | sample s | score s "
        "| U_o | mean U | mean e | qualifying | chosen pair: epsilon (instance), e | chosen "
        "L (all: min-max) | chosen P_N | composed cost (epsilon, delta) | private-rule cost "
        "| peak RSS MB | load avg before, after |"
    )
    print("|---" * 18 + "|")
    for r in results:
        if "table2" in r:
            continue
        fits = r["fit_seconds"]
        c = r["chosen"]
        link = r["linkable"]
        private = r["private_cost"]
        load = r.get("load_average", {"before": [0, 0, 0], "after": [0, 0, 0]})
        print(
            f"| {r['dataset']} | {r['synthesizer']} | {r['rows']:,} | {r['seconds']:.1f} | "
            f"{sum(fits):.1f} ({min(fits):.1f}-{max(fits):.1f}) | {r['sample_seconds']:.1f} | "
            f"{r['score_seconds']:.1f} | {r['u_o']:.3f} | {r['mean_u']:.3f} | {r['mean_e']:.3f} | "
            f"{r['qualifying']}/{r['candidates']} | {c['epsilon']:.3g} ({int(c['instance']) + 1}), "
            f"{c['e']:.3f} | {link['chosen']:.3f} ({link['min']:.3f}-{link['max']:.3f}) | "
            f"{c['p_n']:.4f} | {r['cost']['epsilon']:.2f}, {r['cost']['delta']:.2g} | "
            f"{'-' if private is None else format(private['epsilon'], '.2f')} | "
            f"{r['peak_rss_mb']:.0f} | {load['before'][0]:.1f}, {load['after'][0]:.1f} |"
        )
    print("\nPIF_thresh, epsilon* and what the refinement would do:")
    for r in results:
        print(
            f"  {r['dataset']} ({r['synthesizer']}, Q = {r['q']}): "
            f"PIF_thresh {r['pif_thresh']:.4f}, "
            f"epsilon* {r['epsilon_star']:.3f}, delta {r['delta']:.3g}; the refinement would move "
            f"{r['refinement_moves']}; the global Q is {r['guard_k_of_global_q']}-anonymous"
        )
    for r in results:
        if "table2" in r:
            _print_table2(r)


def _print_table2(r: dict[str, Any]) -> None:
    names = list(r["table2"])
    draws = next(iter(next(iter(r["table2"].values())).values()))["draws"]
    print(
        f"\n## Table 2 (NHANES, refined Q {r['q']}): mean ± sd [min, max] over {draws} draws "
        "(searches x fold draws), beside the paper\n"
    )
    print("| measure | " + " | ".join(names) + " | paper: Original | DP-WGAN | OptimShare |")
    print("|---" * (len(names) + 4) + "|")
    for row in r["table2"][names[0]]:
        paper = PAPER_TABLE2.get(row, ("-", "-", "-"))
        cells = [r["table2"][n][row] for n in names]
        print(
            f"| {row} | "
            + " | ".join(
                f"{c['mean']:.4f} ± {c['sd']:.4f} [{c['min']:.4f}, {c['max']:.4f}]" for c in cells
            )
            + " | "
            + " | ".join(str(p) for p in paper)
            + " |"
        )
    print("\nEach search's release: raw linkable fraction L beside P_N (chosen pair's epsilon):")
    for link in r["linkage2"]:
        print(
            f"  seed {link['seed']}: L = {link['linkable_fraction']:.4f} "
            f"({link['linkable_records']} of {link['records']}; {link['alone']} alone on their Q, "
            f"{link['groups']} groups), epsilon {link['epsilon']:.3g}, P_N = {link['p_n']:.4f}"
        )
    load = r.get("load_average", {"before": [0, 0, 0], "after": [0, 0, 0]})
    print(f"  load average before, after: {load['before'][0]:.1f}, {load['after'][0]:.1f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, required=True, help="folder of the OptimShare data")
    parser.add_argument("--datasets", default=",".join(DATASETS), help="comma-separated subset")
    parser.add_argument("--synthesizer", default="mst")
    parser.add_argument("--baseline", action="store_true", help="also time 'independent'")
    parser.add_argument("--gan", action="store_true", help="also time 'dpwgan' on wine_white")
    parser.add_argument("--xla-default", action="store_true", help="keep XLA's compile flags")
    parser.add_argument("--json", type=Path, help="write every figure here too")
    parser.add_argument("--print-json", type=Path, help="print the tables of a saved --json")
    parser.add_argument("--only", help=argparse.SUPPRESS)
    parser.add_argument("--result", help=argparse.SUPPRESS)
    parser.add_argument("--refined", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--seeds", type=int, default=5, help="Table 2: searches (seeds 1..N)")
    parser.add_argument("--repeats", type=int, default=5, help="Table 2: fold draws per search")
    args = parser.parse_args()
    if args.only:
        _child(args)
        return
    if args.print_json is not None:
        _print(json.loads(args.print_json.read_text(encoding="utf-8")))
        return
    for name in args.datasets.split(","):
        if name not in DATASETS:
            raise SystemExit(f"--datasets: {name!r} is not one of {DATASETS}")
        if not (args.data / name).is_dir():
            raise SystemExit(f"--data: {args.data / name} does not exist")
    fast = not args.xla_default
    print(f"# OptimShare search; XLA_FLAGS = {FAST_XLA if fast else '(defaults)'}")
    print(f"# load average at start: {os.getloadavg()}", flush=True)
    results = []
    for name in args.datasets.split(","):
        synths = [args.synthesizer, *(["independent"] if args.baseline else [])]
        if args.gan and name == "wine_white":
            synths.append("dpwgan")
        for synth in synths:
            results.append(_spawn(args.data, name, synth, False, fast, (1, 1)))
            print(f"done {name} / {synth}: {results[-1]['seconds']:.1f} s", flush=True)
        if name == "nhanes":
            draws = (args.seeds, args.repeats)
            results.append(_spawn(args.data, name, args.synthesizer, True, fast, draws))
    _print(results)
    if args.json is not None:
        args.json.write_text(json.dumps(results, indent=2), encoding="utf-8")


if __name__ == "__main__":
    main()
