"""veil.attacks beside anonymeter 1.1 on the same inputs, and the battery's time on Adult.

Part ``compare`` (the peer): Adult's complete records are split at random into a raw part
(the default shadow sample, 10 000 records), a control part (10 000, as many, so that
neither tool corrects singling out for a size difference) and 10 000 other people. Each
release below is attacked by both tools with the same settings; anonymeter's rates are its
``EvaluationResults`` (attack, baseline of random guesses, control), its risk the residual
over the control with its 95 % interval; veil's are ``success``, ``baseline`` (the control)
and ``advantage`` with its 95 % interval. Releases:

* ``copy``: the raw records themselves (every attack should succeed);
* ``noisy``: the raw records with Laplace noise on the numbers (5 % of the range) and one
  category in five redrawn (a partial leak);
* ``other``: 10 000 other people (nothing leaks: advantages near 0);
* ``mst``: DP synthetic data, MST at epsilon = 1 (``--no-mst`` skips its fit).

Attacks: singling out (univariate, multivariate with 3 columns, 500 predicates, 100 000
attempts at most), linkability (anonymeter's Adult example split of the auxiliary
columns, 2 000 targets, 1 neighbour), inference of salary-class from the other columns
(2 000 targets). anonymeter runs with ``n_jobs=2`` (the machine's cores).

anonymeter 1.1 pins numpy < 1.27 and pyarrow < 22, which veil's environment does not
admit (numpy 2, pyarrow 26; trasgodp pins numpy 2.0.2), so it runs in a venv of its own
(``--anonymeter-python``) in a subprocess that reads the same frames from Parquet files.

Part ``battery``: ``run_battery`` on Adult (32 561 records) with the default sample, every
attack (location has no location to attack in Adult and says so), the release function a
plan-like treatment shaped like ``src/veil/release/examples/adult.yaml`` without its
k-anonymity search (randomized response on workclass and occupation and Laplace on hours
at epsilon = 1, 5-year age bands, the country as United-States or Other, fnlwgt,
education-num, relationship and the capital columns dropped) and, for the intersection,
a second release with 10-year age bands and the country kept; then the location attack on
the NYC taxi example's treatment. Load average before and after.

Part ``plan``: the Adult example plan (``adult.yaml``) with every attack a plan alone can
run (the intersection needs a second release), run by ``veil.release.run`` on pandas and
on Dask (threads, 4 partitions), ``--rounds`` times each; the release's time beside the
attack phase's, with ``attack_sample`` the plans' default (``--attack-sample`` to change).

    python -m venv .venv-anonymeter && .venv-anonymeter/bin/pip install anonymeter==1.1.0
    .venv/bin/python benchmarks/bench_attacks.py --anonymeter-python .venv-anonymeter/bin/python
    .venv/bin/python benchmarks/bench_attacks.py --part battery
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import textwrap
import time
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from veil.attacks import (
    ATTACKS,
    AttackResult,
    AttackSpec,
    Location,
    Release,
    inference,
    linkability,
    run_battery,
    singling_out,
)
from veil.datasets import ADULT_BOUNDS, ADULT_DOMAINS, load_adult, load_nyc_taxi

SEED = 20261202
SECRET = "salary-class"
# anonymeter's own Adult example (its notebook) splits the attacker's auxiliary columns so.
LINK_SPLIT = (
    ["workclass", "education", "hours-per-week", "capital-loss", "capital-gain"],
    ["race", "sex", "fnlwgt", "age", "native-country"],
)
N_PREDICATES, N_TARGETS, MAX_ATTEMPTS = 500, 2000, 100_000

ANONYMETER_SCRIPT = textwrap.dedent(
    """
    import json, sys, time, warnings
    import pandas as pd
    from anonymeter.evaluators import (
        InferenceEvaluator, LinkabilityEvaluator, SinglingOutEvaluator)
    folder, secret, split, n_pred, n_tgt, attempts = sys.argv[1:7]
    split, n_pred, n_tgt, attempts = json.loads(split), int(n_pred), int(n_tgt), int(attempts)
    warnings.simplefilter("ignore")
    ori = pd.read_parquet(f"{folder}/raw.parquet")
    control = pd.read_parquet(f"{folder}/control.parquet")
    out = {}
    for name in json.loads(sys.argv[7]):
        syn = pd.read_parquet(f"{folder}/{name}.parquet")
        rows = {}
        def keep(key, evaluator, start):
            res = evaluator.results()
            risk = res.risk()
            rows[key] = {
                "rate": res.attack_rate.value, "baseline": res.baseline_rate.value,
                "control": None if res.control_rate is None else res.control_rate.value,
                "risk": risk.value, "risk_ci": list(risk.ci),
                "seconds": time.perf_counter() - start}
        for mode in ("univariate", "multivariate"):
            start = time.perf_counter()
            ev = SinglingOutEvaluator(ori=ori, syn=syn, control=control, n_attacks=n_pred,
                                      n_cols=3, max_attempts=attempts, seed=1)
            ev.evaluate(mode=mode)
            keep("singling_out " + mode, ev, start)
        start = time.perf_counter()
        ev = LinkabilityEvaluator(ori=ori, syn=syn, control=control, n_attacks=n_tgt,
                                  aux_cols=split, n_neighbors=1)
        ev.evaluate(n_jobs=2)
        keep("linkability", ev, start)
        start = time.perf_counter()
        aux = [c for c in ori.columns if c != secret]
        ev = InferenceEvaluator(ori=ori, syn=syn, control=control, aux_cols=aux,
                                secret=secret, n_attacks=n_tgt)
        ev.evaluate(n_jobs=2)
        keep("inference " + secret, ev, start)
        out[name] = rows
    print(json.dumps(out))
    """
)


def _adult_parts(rng: np.random.Generator) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    adult = load_adult().dropna().reset_index(drop=True)
    order = rng.permutation(len(adult))
    return tuple(adult.iloc[order[i * 10_000 : (i + 1) * 10_000]] for i in range(3))  # type: ignore[return-value]


def _noisy(raw: pd.DataFrame, rng: np.random.Generator) -> pd.DataFrame:
    out = raw.copy()
    for column in raw.columns:
        values = raw[column]
        if pd.api.types.is_numeric_dtype(values):
            span = float(values.max() - values.min())
            out[column] = values + np.round(rng.laplace(0.0, 0.05 * span, len(values)))
        else:
            redraw = rng.random(len(values)) < 0.2
            pool = values.to_numpy()
            out.loc[redraw, column] = pool[rng.integers(0, len(pool), redraw.sum())]
    return out


def _mst(raw: pd.DataFrame) -> pd.DataFrame:
    from veil.synth import MST, TableDomain

    spec: dict[str, object] = {c: list(ADULT_DOMAINS[c]) for c in ADULT_DOMAINS}
    for column, (low, high) in ADULT_BOUNDS.items():
        spec[column] = {"bounds": [low, high], "bins": 32, "integer": True}
    # fnlwgt and capital-loss have no documented bounds; these are public-looking round
    # figures (a timing, not a release).
    spec["fnlwgt"] = {"bounds": [10_000, 1_500_000], "bins": 32, "integer": True}
    spec["capital-loss"] = {"bounds": [0, 4_400], "bins": 32, "integer": True}
    model = MST().fit(raw, TableDomain.from_dict(spec), 1.0, 1e-6, rng=np.random.default_rng(5))
    return model.sample(len(raw), rng=np.random.default_rng(6))[list(raw.columns)]


def _veil_figures(
    raw: pd.DataFrame, release: pd.DataFrame, control: pd.DataFrame, seed: int
) -> dict[str, dict[str, Any]]:
    aux = [c for c in raw.columns if c != SECRET]
    spec = AttackSpec(aux, sensitive=[SECRET], link_split=LINK_SPLIT)
    rows: dict[str, dict[str, Any]] = {}
    runs: list[tuple[str, Callable[[], tuple[AttackResult, ...]]]] = [
        (
            "singling_out",
            lambda: singling_out(
                raw,
                release,
                spec,
                control,
                n_attacks=N_PREDICATES,
                max_attempts=MAX_ATTEMPTS,
                rng=np.random.default_rng(seed),
            ),
        ),
        (
            "linkability",
            lambda: linkability(
                raw, release, spec, control, n_attacks=N_TARGETS, rng=np.random.default_rng(seed)
            ),
        ),
        (
            "inference",
            lambda: inference(
                raw, release, spec, control, n_attacks=N_TARGETS, rng=np.random.default_rng(seed)
            ),
        ),
    ]
    for name, run in runs:
        start = time.perf_counter()
        results = run()
        seconds = (time.perf_counter() - start) / len(results)
        for r in results:
            key = name if name == "linkability" else f"{name} {r.variant}"
            rows[key] = {
                "rate": r.success.value,
                "control": r.baseline.value,
                "advantage": r.advantage[0],
                "advantage_ci": list(r.advantage[1:]),
                "seconds": seconds,
            }
    return rows


def _anonymeter(python: str, folder: Path, names: list[str]) -> dict[str, Any]:
    script = folder / "run_anonymeter.py"
    script.write_text(ANONYMETER_SCRIPT)
    args = [
        python,
        str(script),
        str(folder),
        SECRET,
        json.dumps(LINK_SPLIT),
        str(N_PREDICATES),
        str(N_TARGETS),
        str(MAX_ATTEMPTS),
        json.dumps(names),
    ]
    done = subprocess.run(args, capture_output=True, text=True, check=True)
    return json.loads(done.stdout.strip().splitlines()[-1])  # type: ignore[no-any-return]


def compare(anonymeter_python: str | None, with_mst: bool) -> dict[str, Any]:
    rng = np.random.default_rng(SEED)
    raw, control, other = _adult_parts(rng)
    releases = {"copy": raw.copy(), "noisy": _noisy(raw, rng), "other": other}
    if with_mst:
        start = time.perf_counter()
        releases["mst"] = _mst(raw)
        print(f"# MST fit and sample at epsilon = 1: {time.perf_counter() - start:.1f} s")
    veil_rows = {name: _veil_figures(raw, r, control, SEED) for name, r in releases.items()}
    peer: dict[str, Any] = {}
    if anonymeter_python:
        with tempfile.TemporaryDirectory() as tmp:
            folder = Path(tmp)
            raw.to_parquet(folder / "raw.parquet")
            control.to_parquet(folder / "control.parquet")
            for name, release in releases.items():
                release.to_parquet(folder / f"{name}.parquet")
            peer = _anonymeter(anonymeter_python, folder, list(releases))
    print(
        f"\n{'release':7} {'attack':32} | {'veil rate':>9} {'control':>7} "
        f"{'advantage [95 % CI]':>24} {'s':>6} | {'anon rate':>9} {'control':>7} "
        f"{'risk [95 % CI]':>21} {'s':>6}"
    )
    for name, rows in veil_rows.items():
        for attack, mine in rows.items():
            theirs = peer.get(name, {}).get(attack)
            low, high = mine["advantage_ci"]
            line = (
                f"{name:7} {attack:32} | {mine['rate']:9.3f} {mine['control']:7.3f} "
                f"{mine['advantage']:7.3f} [{low:6.3f}, {high:6.3f}] {mine['seconds']:6.1f} |"
            )
            if theirs:
                rlow, rhigh = theirs["risk_ci"]
                line += (
                    f" {theirs['rate']:9.3f} {theirs['control']:7.3f} {theirs['risk']:6.3f} "
                    f"[{rlow:5.3f}, {rhigh:5.3f}] {theirs['seconds']:6.1f}"
                )
            print(line)
    return {"veil": veil_rows, "anonymeter": peer}


def _plan_like(rng_seed: int, age_width: int, country: bool) -> Callable[[pd.DataFrame], Release]:
    """A release function shaped like the Adult example plan (the lead's runner goes here)."""
    from veil.ldp import dp_clip_laplace, dp_randomized_response_kary

    def age_band(age: pd.Series) -> pd.Series:
        low = age // age_width * age_width
        return low.astype(str) + "-" + (low + age_width - 1).astype(str)

    def region(country_name: pd.Series) -> pd.Series:
        return country_name.where(country_name.isna() | (country_name == "United-States"), "Other")

    def release(frame: pd.DataFrame) -> Release:
        rng = np.random.default_rng(rng_seed)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            out = frame.drop(
                columns=["fnlwgt", "education-num", "relationship", "capital-gain", "capital-loss"]
            )
            for column in ("workclass", "occupation"):
                out = dp_randomized_response_kary(
                    out,
                    column,
                    1.0,
                    overwrite=True,
                    domain=list(ADULT_DOMAINS[column]),
                    missing="keep",
                    rng=rng,
                )
            out = dp_clip_laplace(out, "hours-per-week", 1.0, 1, 99, overwrite=True, rng=rng)
        recode = {"age": age_band}
        out = out.assign(age=age_band(out["age"]))
        if not country:
            recode["native-country"] = region
            out = out.assign(**{"native-country": region(out["native-country"])})
        out = out.iloc[rng.permutation(len(out))]
        return Release(out, recode=recode)

    return release


def battery() -> dict[str, Any]:
    adult = load_adult()
    spec = AttackSpec(
        ["age", "workclass", "education", "marital-status", "race", "sex", "native-country"],
        sensitive=["occupation", SECRET],
        exact=[SECRET, "education", "marital-status", "race", "sex"],
    )
    load_before = os.getloadavg()
    start = time.perf_counter()
    result = run_battery(
        adult,
        _plan_like(1, 5, country=False),
        spec,
        attacks=list(ATTACKS),
        other=_plan_like(2, 10, country=True),
        rng=np.random.default_rng(SEED),
    )
    total = time.perf_counter() - start
    load_after = os.getloadavg()
    print(
        f"\nbattery on Adult ({len(adult)} records, shadow sample {result.n_released_records},"
        f" control {result.n_control}): {total:.1f} s in all"
    )
    for name, seconds in result.seconds.items():
        print(f"  {name:14} {seconds:6.1f} s")
    print(f"  skipped: {result.skipped}")
    for r in result.results:
        value, low, high = r.advantage
        print(
            f"  {r.attack:13} {r.variant[:34]:34} rate {r.success.value:.3f} baseline "
            f"{r.baseline.value:.3f} ({r.baseline_kind}) advantage {value:.3f} "
            f"[{low:.3f}, {high:.3f}] {'FINDING' if r.is_finding() else ''} {list(r.columns)}"
        )
    print(
        f"  load average before {load_before[0]:.2f}, after {load_after[0]:.2f}"
        f" ({os.cpu_count()} CPUs)"
    )
    taxi = load_nyc_taxi()
    taxi_spec = AttackSpec(
        ["trip_distance"],
        sensitive=["fare_amount"],
        exact=["passenger_count"],
        locations=[
            Location("pickup_latitude", "pickup_longitude"),
            Location("dropoff_latitude", "dropoff_longitude"),
        ],
    )
    start = time.perf_counter()
    located = run_battery(
        taxi, _taxi_release, taxi_spec, attacks=["location"], rng=np.random.default_rng(SEED)
    )
    print(
        f"\nlocation on the NYC taxi example ({located.n_released_records} trips in the "
        f"shadow release): {time.perf_counter() - start:.2f} s"
    )
    for r in located.results:
        print(
            f"  {r.variant[:60]:60} rate {r.success.value:.3f} chance {r.baseline.value:.4f}"
            f" single candidate {r.details['single_candidate_share']:.3f}"
        )
    return {
        "adult": result.to_dict(),
        "seconds_total": total,
        "taxi": located.to_dict(),
        "load": [load_before, load_after],
    }


def _taxi_release(frame: pd.DataFrame) -> Release:
    from veil.geo import grid, planar_laplace, projection_at

    projection = projection_at(40.7580, -73.9855)
    rng = np.random.default_rng(7)
    out = planar_laplace(
        frame,
        "pickup_latitude",
        "pickup_longitude",
        0.01,
        projection=projection,
        outside="drop",
        rng=rng,
    )
    out = grid(
        out,
        "dropoff_latitude",
        "dropoff_longitude",
        250,
        min_count=3,
        projection=projection,
        outside="drop",
    )
    out = out.drop(columns=["tpep_pickup_datetime", "total_amount"])
    out = out.iloc[rng.permutation(len(out))]

    def cells(points: pd.DataFrame) -> pd.DataFrame:
        return grid(points, "dropoff_latitude", "dropoff_longitude", 250, projection=projection)

    return Release(out, cells={("dropoff_latitude", "dropoff_longitude"): cells})


def plan_battery(rounds: int, sample: int | None = None) -> dict[str, Any]:
    """The Adult example plan with every applicable attack, on pandas and on Dask.

    Prints the release's time beside the attack phase's (the shadow release and the
    battery), from the run's custodian record, ``rounds`` times each, engines alternating.
    The shadow release holds at most ``sample`` records: by default the plans' default
    ``attack_sample`` (10 000, the sample of the issue's goal), not the example plan's 2 000.
    """
    import tempfile

    from veil.release import load_plan, run
    from veil.release.engine import DaskEngine
    from veil.release.plan import EvaluationSpec

    if sample is None:
        sample = int(EvaluationSpec.model_fields["attack_sample"].default)

    examples = Path(__file__).resolve().parents[1] / "src" / "veil" / "release" / "examples"
    loaded = load_plan(examples / "adult.yaml")
    attacks = ["singling_out", "linkability", "inference", "location", "membership"]
    plan = loaded.model_copy(
        update={
            "evaluation": loaded.evaluation.model_copy(
                update={"attacks": attacks, "attack_sample": sample}
            ),
            "output": loaded.output.model_copy(update={"report": False}),
        }
    )
    figures: dict[str, list[tuple[float, float]]] = {"pandas": [], "dask": []}
    for _ in range(rounds):
        for name in ("pandas", "dask"):
            engine = None if name == "pandas" else DaskEngine("threads", npartitions=4)
            with tempfile.TemporaryDirectory() as folder:
                result = run(plan, Path(folder) / "out", engine=engine)
            attacked = float(result.custodian["timings_s"]["attacks"])
            figures[name].append((result.seconds - attacked, attacked))
    print(
        f"\nthe Adult example plan with {', '.join(attacks)}, attack_sample {sample}"
        f" (load {os.getloadavg()[0]:.2f}):"
    )
    for name, values in figures.items():
        releases = sorted(v[0] for v in values)
        battery_s = sorted(v[1] for v in values)
        print(
            f"  {name:6} release min/median/max {releases[0]:.1f}/"
            f"{releases[len(releases) // 2]:.1f}/{releases[-1]:.1f} s; attack phase "
            f"{battery_s[0]:.1f}/{battery_s[len(battery_s) // 2]:.1f}/{battery_s[-1]:.1f} s"
        )
    return {"plan": figures, "attack_sample": sample}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--part", choices=["compare", "battery", "plan", "all"], default="all")
    parser.add_argument("--rounds", type=int, default=3, help="rounds of the plan part")
    parser.add_argument(
        "--attack-sample",
        type=int,
        help="the plan part's attack_sample (default: the plans' default, 10 000)",
    )
    parser.add_argument("--anonymeter-python", help="python of a venv with anonymeter 1.1")
    parser.add_argument("--no-mst", action="store_true", help="skip the MST release")
    parser.add_argument("--json", help="write the figures to this file")
    args = parser.parse_args()
    print(
        f"# {os.cpu_count()} CPUs, load average at start {os.getloadavg()[0]:.2f}, "
        f"python {sys.version.split()[0]}, numpy {np.__version__}, pandas {pd.__version__}"
    )
    out: dict[str, Any] = {}
    if args.part in ("compare", "all"):
        if not args.anonymeter_python:
            print("# no --anonymeter-python: veil's figures only")
        out["compare"] = compare(args.anonymeter_python, not args.no_mst)
    if args.part in ("battery", "all"):
        out["battery"] = battery()
    if args.part in ("plan", "all"):
        out["plan"] = plan_battery(args.rounds, args.attack_sample)
    if args.json:
        Path(args.json).write_text(json.dumps(out, indent=2, default=str))


if __name__ == "__main__":
    main()
