"""OptimShare pieces: fit and sample times of veil's DP synthesizers, and the FIS search.

Every synthesizer case runs in a fresh Python subprocess, so its time includes JAX's
compilation of mbi's estimator (paid once per model structure in a process) and its
``ru_maxrss`` is its own. Per case the script reports:

* ``fit s``: ``Synthesizer.fit`` at ε = 1 and OptimShare's δ = P_l / (100 n) with
  P_l = 0.01 %;
* ``sample s``: ``model.sample(n)`` (veil's NumPy sampler, veil.rng);
* ``given s``: ``model.sample(given=data[Q])``, S drawn conditionally on each row's Q;
* ``mbi sample s``: the peer, mbi 2.0's own ``MarkovRandomField.synthetic_data(n)`` on a
  model rebuilt from the same potentials (it draws from NumPy's global state, which is
  why veil does not use it); ``ratio`` is mbi's time over veil's;
* ``TVD``: mean total variation distance of all 2-way marginals (binned in the domain)
  between the data and veil's sample; ``TVD|Q`` the same for the sample given the
  data's Q (Q exact, S drawn for each row, as OptimShare releases);
* ``NB``: utility as OptimShare measures it, GaussianNB accuracy on the label (Adult:
  salary-class, Wine: quality) trained on veil's sample and tested on the data, beside
  ``NB real``, 5-fold cross-validated accuracy on the data itself;
* RSS after loading, and the process max RSS.

The FIS case times ``veil.share.budget_pairs`` (surface on a 200 x 200 grid, contour,
pair solve) against scikit-fuzzy's ``ControlSystemSimulation`` evaluating the same
system point by point on a 40 x 40 grid (its time per point is scaled to 200 x 200).

    python benchmarks/bench_synth.py --data ../shared/data/optimshare/wine_white
    python benchmarks/bench_synth.py --data DIR --synth mst --datasets wine --json out.json
    python benchmarks/bench_synth.py --data DIR --synth mst,dpwgan --datasets adult-num,wine

``adult-num`` is Adult's continuous columns (age, education-num, hours-per-week,
capital-gain, with public bounds) with sex as Q and salary-class as the label. The
DP-WGAN (``dpwgan``, its default settings) is fitted conditional on each dataset's Q.

``--data`` is the folder holding ``winequality-white.csv`` (UCI Wine Quality, white).
Adult is the copy bundled with veil. Wine's bounds are read from the data
(``TableDomain.from_data``, its PrivacyLeakWarning silenced): acceptable for a timing,
not for a release, which declares them.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import subprocess
import sys
import time
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

SYNTHS = ("independent", "mst", "aim", "dpwgan")
DATASETS = ("adult", "adult-num", "wine")
EPSILON = 1.0
P_L = 0.01  # percent of 1/n, OptimShare's default
WINE_Q = ["free sulfur dioxide", "total sulfur dioxide"]  # the paper's global Q
ADULT_Q = ["sex", "race"]
ADULT_NUM_Q = ["sex"]
LABELS = {"adult": "salary-class", "adult-num": "salary-class", "wine": "quality"}


def _rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def _adult() -> tuple[pd.DataFrame, Any, list[str]]:
    from veil.datasets import ADULT_BOUNDS, ADULT_DOMAINS, load_adult
    from veil.synth import TableDomain

    data = load_adult()
    spec: dict[str, Any] = {}
    for col, values in ADULT_DOMAINS.items():
        spec[col] = {"values": list(values), "missing": bool(data[col].isna().any())}
    for col, (lo, hi) in ADULT_BOUNDS.items():
        spec[col] = {"bounds": [lo, hi], "bins": 16, "integer": True}
    return data[list(spec)], TableDomain.from_dict(spec), ADULT_Q


def _adult_num() -> tuple[pd.DataFrame, Any, list[str]]:
    """Adult's continuous columns, sex (Q) and salary-class (the label)."""
    from veil.datasets import ADULT_BOUNDS, ADULT_DOMAINS, load_adult
    from veil.synth import TableDomain

    spec: dict[str, Any] = {
        col: {"bounds": [lo, hi], "bins": 16, "integer": True}
        for col, (lo, hi) in ADULT_BOUNDS.items()
    }
    for col in ("sex", "salary-class"):
        spec[col] = list(ADULT_DOMAINS[col])
    return load_adult()[list(spec)], TableDomain.from_dict(spec), ADULT_NUM_Q


def _nb_utility(domain: Any, data: pd.DataFrame, sample: pd.DataFrame, label: str) -> float:
    """GaussianNB trained on ``sample``, accuracy on ``data`` (features: public scaling)."""
    from sklearn.naive_bayes import GaussianNB

    features = [c for c in domain.names if c != label]
    model = GaussianNB().fit(_nb_features(domain, sample, features), sample[label].astype(str))
    predicted = model.predict(_nb_features(domain, data, features))
    return float(np.mean(predicted == data[label].astype(str).to_numpy()))


def _nb_real(domain: Any, data: pd.DataFrame, label: str) -> float:
    """5-fold cross-validated GaussianNB accuracy on the data itself."""
    from sklearn.model_selection import cross_val_score
    from sklearn.naive_bayes import GaussianNB

    features = [c for c in domain.names if c != label]
    x, y = _nb_features(domain, data, features), data[label].astype(str).to_numpy()
    return float(np.mean(cross_val_score(GaussianNB(), x, y, cv=5)))


def _nb_features(domain: Any, frame: pd.DataFrame, columns: list[str]) -> np.ndarray:
    """Numeric columns as they are (missing: the lower bound), categories one-hot."""
    from veil.synth import CategoricalColumn

    codes = domain.encode(frame, columns)
    parts = []
    for col in columns:
        spec = domain.columns[col]
        if isinstance(spec, CategoricalColumn):
            parts.append(np.eye(spec.size)[codes[col]])
        else:
            x = frame[col].to_numpy(dtype=np.float64, na_value=np.nan)
            parts.append(np.where(np.isnan(x), spec.lower, x)[:, None])
    return np.concatenate(parts, axis=1)


def _wine(folder: Path) -> tuple[pd.DataFrame, Any, list[str]]:
    from veil.synth import TableDomain

    data = pd.read_csv(folder / "winequality-white.csv", sep=";")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        domain = TableDomain.from_data(data, bins=16)
    return data, domain, WINE_Q


def _mbi_sample_seconds(model: Any, n: int) -> float | None:
    """mbi's own sampler on the fitted potentials (the peer)."""
    if not hasattr(model, "potentials"):
        return None  # not a graphical model (the DP-WGAN)
    if len(model.potentials) == len(model.domain.names) and all(
        len(c) == 1 for c in model.potentials
    ):
        return None  # the baseline is not an mbi model
    import jax

    from veil.synth.estimation import require_mbi

    mbi = require_mbi()
    from mbi import marginal_oracles

    sizes = model.model_sizes  # the codes the potentials use (MST merges rare ones)
    domain = mbi.Domain(list(sizes), list(sizes.values()))
    with jax.enable_x64(True):
        tables = {
            c: mbi.Factor(domain.project(c), jax.numpy.asarray(t))
            for c, t in model.potentials.items()
        }
        potentials = mbi.CliqueVector(domain, list(tables), tables)
        marginals = marginal_oracles.message_passing_stable(potentials, model.total)
        peer = mbi.MarkovRandomField(potentials=potentials, marginals=marginals, total=model.total)
        start = time.perf_counter()
        peer.synthetic_data(n)
        return time.perf_counter() - start


def run_case(
    dataset: str, synth: str, data_dir: str | None, aim_rounds: int | None
) -> dict[str, Any]:
    """One synthesizer on one dataset (in this process)."""
    from veil.synth import AIM, DPWGAN, MST, IndependentMarginals, marginal_tvd

    loaders = {"adult": _adult, "adult-num": _adult_num}
    data, domain, q = loaders[dataset]() if dataset in loaders else _wine(Path(str(data_dir)))
    n = len(data)
    delta = P_L / (100.0 * n)
    rss_loaded = _rss_mb()
    maker = {
        "independent": IndependentMarginals,
        "mst": MST,
        "aim": lambda: AIM(rounds=aim_rounds),
        "dpwgan": lambda: DPWGAN(condition=q),
    }[synth]
    rng = np.random.default_rng(0)  # benchmark randomness, not a release
    start = time.perf_counter()
    model = maker().fit(data, domain, EPSILON, delta, rng=rng)
    fit_s = time.perf_counter() - start
    start = time.perf_counter()
    sample = model.sample(n, rng=rng)
    sample_s = time.perf_counter() - start
    start = time.perf_counter()
    given_sample = model.sample(given=data[q], rng=rng)
    given_s = time.perf_counter() - start
    return {
        "dataset": dataset,
        "synth": synth,
        "rows": n,
        "columns": len(domain.names),
        "epsilon": model.cost.epsilon,
        "delta": model.cost.delta,
        "fit_s": fit_s,
        "sample_s": sample_s,
        "given_s": given_s,
        "mbi_sample_s": _mbi_sample_seconds(model, n),
        "tvd": marginal_tvd(domain, data, sample, way=2),
        "tvd_given": marginal_tvd(domain, data, given_sample, way=2),
        "nb": _nb_utility(domain, data, sample, LABELS[dataset]),
        "nb_real": _nb_real(domain, data, LABELS[dataset]),
        "details": {
            k: v for k, v in model.details.items() if k in ("tree", "rounds_run", "rounds_planned")
        },
        "noise_multiplier": model.details.get("accounting", {}).get("noise_multiplier"),
        "rss_loaded_mb": rss_loaded,
        "max_rss_mb": _rss_mb(),
    }


def run_fis(repeats: int) -> dict[str, Any]:
    """veil's pair search on a 200 x 200 grid against scikit-fuzzy per point."""
    from veil.share import budget_pairs, fis_output

    veil_s = min(_timed(lambda: budget_pairs(0.6, 4898, grid=200)) for _ in range(repeats))
    out: dict[str, Any] = {"veil_pair_search_s": veil_s}
    try:
        import skfuzzy
        from skfuzzy import control as ctrl
    except ImportError:
        out["skfuzzy"] = "not installed"
        return out
    x = np.linspace(0.0, 1.0, 1001)
    eps, dlt, pif = (
        ctrl.Antecedent(x, "e"),
        ctrl.Antecedent(x, "d"),
        ctrl.Consequent(x, "p", defuzzify_method="centroid"),
    )
    for var in (eps, dlt, pif):
        for name, mean in (("low", 0.0), ("medium", 0.5), ("high", 1.0)):
            var[name] = skfuzzy.gaussmf(var.universe, mean, 1.0)
    rules = [
        ctrl.Rule(eps["low"], pif["high"]),
        ctrl.Rule(dlt["low"], pif["high"]),
        ctrl.Rule(eps["medium"] & dlt["medium"], pif["medium"]),
        ctrl.Rule(eps["high"], pif["low"]),
        ctrl.Rule(dlt["high"], pif["low"]),
    ]
    sim = ctrl.ControlSystemSimulation(ctrl.ControlSystem(rules))
    axis = np.round(np.linspace(0.0, 1.0, 40) * 1000) / 1000  # on the universe points
    values = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        start = time.perf_counter()
        for e in axis:
            for d in axis:
                sim.input["e"] = e
                sim.input["d"] = d
                sim.compute()
                values.append(sim.output["p"])
        peer_s = time.perf_counter() - start
    e_grid, d_grid = np.meshgrid(axis, axis, indexing="ij")
    ours = fis_output(e_grid.ravel(), d_grid.ravel(), rescale=False)
    out.update(
        skfuzzy_40x40_s=peer_s,
        skfuzzy_200x200_scaled_s=peer_s * (200 * 200) / (40 * 40),
        max_abs_diff_literal=float(np.max(np.abs(ours - np.array(values)))),
    )
    return out


def _timed(fn: Any) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def _print_table(cases: list[dict[str, Any]], fis: dict[str, Any]) -> None:
    print("\nFIS pair search (budget_pairs, 200 x 200 grid)")
    print(f"  veil: {fis['veil_pair_search_s']:.3f} s")
    if "skfuzzy_40x40_s" in fis:
        ratio = fis["skfuzzy_200x200_scaled_s"] / fis["veil_pair_search_s"]
        print(
            f"  scikit-fuzzy: {fis['skfuzzy_40x40_s']:.2f} s for 40 x 40 points, "
            f"{fis['skfuzzy_200x200_scaled_s']:.1f} s scaled to 200 x 200 "
            f"(ratio {ratio:.0f}); max |difference| of the literal output "
            f"{fis['max_abs_diff_literal']:.1e}"
        )
    head = (
        f"{'dataset':8} {'synth':12} {'rows':>6} {'cols':>4} {'fit s':>8} {'sample s':>9} "
        f"{'given s':>8} {'mbi sample s':>13} {'ratio':>6} {'TVD':>6} {'TVD|Q':>6} {'NB':>6} "
        f"{'NB real':>7} {'eps':>6} "
        f"{'RSS MB':>7} {'max RSS MB':>10}"
    )
    print("\n" + head)
    for c in cases:
        if "error" in c:
            print(f"{c['dataset']:8} {c['synth']:12} error: {c['error']}")
            continue
        peer = c["mbi_sample_s"]
        peer_txt = "-" if peer is None else f"{peer:.3f}"
        ratio = "-" if peer is None else f"{peer / c['sample_s']:.1f}"
        print(
            f"{c['dataset']:8} {c['synth']:12} {c['rows']:>6} {c['columns']:>4} "
            f"{c['fit_s']:>8.2f} {c['sample_s']:>9.3f} {c['given_s']:>8.3f} {peer_txt:>13} "
            f"{ratio:>6} {c['tvd']:>6.3f} {c['tvd_given']:>6.3f} {c['nb']:>6.3f} "
            f"{c['nb_real']:>7.3f} "
            f"{c['epsilon']:>6.3f} {c['rss_loaded_mb']:>7.0f} "
            f"{c['max_rss_mb']:>10.0f}"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", help="folder with winequality-white.csv (for --datasets wine)")
    parser.add_argument("--datasets", default=",".join(DATASETS))
    parser.add_argument("--synth", default=",".join(SYNTHS))
    parser.add_argument("--aim-rounds", type=int, default=None, help="AIM's T (default 16 d)")
    parser.add_argument("--repeats", type=int, default=5, help="timed runs of the FIS search")
    parser.add_argument("--json", help="write every figure to this file")
    parser.add_argument("--case", nargs=2, help=argparse.SUPPRESS)  # internal: one subprocess
    args = parser.parse_args()
    if args.case:
        result = run_case(args.case[0], args.case[1], args.data, args.aim_rounds)
        print("RESULT " + json.dumps(result))
        return
    datasets = [d for d in args.datasets.split(",") if d]
    if "wine" in datasets and not args.data:
        parser.error("--data is required for the wine dataset")
    fis = run_fis(args.repeats)
    cases = []
    for dataset in datasets:
        for synth in [s for s in args.synth.split(",") if s]:
            cmd = [sys.executable, __file__, "--case", dataset, synth]
            if args.data:
                cmd += ["--data", args.data]
            if args.aim_rounds is not None:
                cmd += ["--aim-rounds", str(args.aim_rounds)]
            proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
            line = [ln for ln in proc.stdout.splitlines() if ln.startswith("RESULT ")]
            if proc.returncode or not line:
                tail = (proc.stderr.strip().splitlines() or ["?"])[-1]
                cases.append({"dataset": dataset, "synth": synth, "error": tail})
            else:
                cases.append(json.loads(line[-1][len("RESULT ") :]))
            print(f"done: {dataset} {synth}", file=sys.stderr, flush=True)
    _print_table(cases, fis)
    meta = {
        "python": platform.python_version(),
        "numpy": np.__version__,
        "pandas": pd.__version__,
        "cpus": os.cpu_count(),
        "epsilon": EPSILON,
        "p_l_percent": P_L,
    }
    if args.json:
        Path(args.json).write_text(json.dumps({"meta": meta, "fis": fis, "cases": cases}, indent=2))


if __name__ == "__main__":
    main()
