"""Commands over whole releases: ``release``, ``sweep``, ``report`` and ``demo``.

``release`` runs a YAML plan (:func:`veil.release.run`) or, with ``--dry-run``, prints
its privacy ledger and writes nothing; ``sweep`` measures utility against epsilon
(:mod:`veil.release.sweep`), for the trasgoDP paper's protocol or for one column of a
plan; ``report`` builds the HTML report of a release (:mod:`veil.release.report`);
``demo`` releases the bundled Adult and NYC taxi tables through the example plans
(:mod:`veil.demo`). Every privacy decision is the plan's and the library's.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import numpy as np
import pandas as pd
import typer

from veil.cli.console import (
    captured_warnings,
    emit_json,
    print_note,
    print_table,
    print_text,
    print_warnings,
    progress,
    release_progress,
    status,
)
from veil.cli.errors import CliUsageError, errors_about, reporting_errors
from veil.cli.files import (
    output_folder,
    read_table,
    require_columns,
    split_list,
    split_numbers,
)
from veil.cli.options import Json, Seed, Sep
from veil.errors import PrivacyLeakWarning
from veil.gate import check_confidential_place

if TYPE_CHECKING:
    from veil.release import Plan, ReleaseLedger, RunResult

__all__ = ["demo", "release", "report", "sweep"]

PlanFile = Annotated[Path, typer.Argument(help="The release plan (YAML).")]
OutDir = Annotated[
    Path | None,
    typer.Option("--out", help="Output folder (created if needed)."),
]


# --------------------------------------------------------------------------- release


def _print_ledger(ledger: ReleaseLedger) -> None:
    from veil.release import render_ledger

    print_text(render_ledger(ledger))


def _location_scales(plan_file: Path, allow_outside: bool) -> list[dict[str, str]]:
    """Say each location mask's expected displacement before the run; its warnings.

    From the plan's parameters alone (the budget allocated when it does not depend on
    the data); a plan that cannot be loaded says nothing here (the run then names the
    error).
    """
    from rich.markup import escape

    from veil.cli.geo import metres_text, scale_warnings
    from veil.errors import VeilError
    from veil.geo import expected_scale
    from veil.release import allocate, load_plan

    try:
        plan = load_plan(plan_file, allow_outside=allow_outside)
        if plan.locations and plan.budget.allocation != "target":
            plan = allocate(plan)
    except (VeilError, OSError, ValueError):
        return []
    found: list[dict[str, str]] = []
    for loc in plan.locations:
        mask = loc.mask
        bounds = getattr(mask, "bounds_m", None)
        phrase, metres = expected_scale(
            mask.method,
            epsilon=getattr(mask, "epsilon", None),
            radius_m=getattr(mask, "radius_m", None),
            kind=getattr(mask, "kind", "disc"),
            r_min_m=getattr(mask, "r_min_m", None),
            r_max_m=getattr(mask, "r_max_m", None),
            cell_m=getattr(mask, "cell_m", None),
            root_size_m=None if bounds is None else bounds[2],
        )
        print_note(
            escape(f"veil: release: {loc.name}: {mask.method}: {phrase}{metres_text(metres)}")
        )
        found += scale_warnings(f"{phrase} of {loc.name}", metres)
    return found


def _dry_run(plan_file: Path, as_json: bool, allow_outside: bool) -> None:
    from veil.release import BudgetError, allocate, load_plan, plan_ledger, run

    scales = _location_scales(plan_file, allow_outside)
    print_warnings(scales)
    with errors_about(os.fspath(plan_file)), captured_warnings() as caught:
        try:
            result = run(plan_file, dry_run=True, allow_outside=allow_outside)
        except BudgetError:
            # The ledger is what the user needs to see why the plan is refused. (A
            # target allocation refused only on explicit steps: shown without it.)
            plan = load_plan(plan_file, allow_outside=allow_outside)
            if plan.budget.allocation != "target":
                ledger = plan_ledger(allocate(plan))
                if as_json:
                    emit_json({**ledger.to_dict(), "dry_run": True, "within_budget": False})
                else:
                    _print_ledger(ledger)
            raise
    print_warnings([*caught, *result.warnings])
    if as_json:
        emit_json({**result.ledger.to_dict(), "dry_run": True, "within_budget": True})
        return
    _print_ledger(result.ledger)
    print_text("dry run: within budget; nothing was read or written")


def _run_payload(result: RunResult) -> dict[str, Any]:
    return {
        "plan": result.plan.name,
        "out_dir": result.out_dir,
        "release": result.release_path,
        "manifest": result.manifest_path,
        "custodian": result.custodian_path,
        "report": result.report_path,
        "rows_in": result.rows_in,
        "rows_out": result.rows_out,
        "totals": result.totals,
        "not_protected": result.ledger.not_protected(),
        "warnings": result.warnings,
        "seconds": result.seconds,
    }


def _print_run(result: RunResult) -> None:
    print_text(result.summary())


@reporting_errors
def release(
    plan: Annotated[
        Path | None, typer.Argument(help="The release plan (YAML); not needed with --schema.")
    ] = None,
    out: OutDir = None,
    schema: Annotated[
        bool,
        typer.Option("--schema", help="Print the JSON Schema of release plans and exit."),
    ] = False,
    dry_run: Annotated[
        bool,
        typer.Option(
            "--dry-run",
            help="Validate the plan and print its privacy ledger; read and write nothing.",
        ),
    ] = False,
    engine: Annotated[
        str | None,
        typer.Option(
            "--engine",
            help="pandas (in memory), dask (threads, for larger data) or dask-local (a local "
            "cluster of processes); overrides the plan's engine section (default pandas).",
        ),
    ] = None,
    scheduler: Annotated[
        str | None,
        typer.Option(
            "--scheduler",
            metavar="ADDRESS",
            help="With --engine dask: the address of a running Dask scheduler "
            "(tcp://host:8786), or threads, synchronous, processes or local.",
        ),
    ] = None,
    allow_outside: Annotated[
        bool,
        typer.Option(
            "--allow-outside",
            help="Let the plan name files outside its own folder (refused by default, so "
            "that a plan from someone else cannot read arbitrary files).",
        ),
    ] = False,
    seed: Seed = None,
    as_json: Json = False,
) -> None:
    """Run a release plan: the release and its public manifest.json into --out.

    The confidential custodian.json and report.html go to the custodian folder (the
    plan's output.custodian_dir, by default OUT.custodian beside OUT): keep them apart
    from the release. The plan's privacy ledger is checked against its budget before any
    data is read: a plan over budget is refused with exit code 1; an invalid plan gives
    exit code 2 and names the field. On a terminal, standard error shows the step being
    run.
    """
    if schema:
        from veil.release import plan_schema

        emit_json(plan_schema())
        return
    if plan is None:
        raise CliUsageError("PLAN: required (the release plan, a YAML file), unless --schema")
    if dry_run:
        _dry_run(plan, as_json, allow_outside)
        return
    if out is None:
        raise CliUsageError("--out: required unless --dry-run (the folder for the release)")
    if out.exists() and not out.is_dir():
        raise CliUsageError(f"--out: {os.fspath(out)!r} is a file, not a folder")
    from veil.release import run
    from veil.release.engine import get_engine

    print_warnings(_location_scales(plan, allow_outside))
    chosen = None  # the plan's engine section
    if engine is not None or scheduler is not None:
        with errors_about("--scheduler" if scheduler is not None else "--engine"):
            chosen = get_engine(engine or "pandas", scheduler=scheduler)
    with errors_about(os.fspath(plan)), release_progress(f"releasing {plan.name}") as on_event:
        result = run(
            plan, out, rng=seed, engine=chosen, progress=on_event, allow_outside=allow_outside
        )
    print_warnings(result.warnings)
    if as_json:
        emit_json(_run_payload(result))
    else:
        _print_run(result)


# ----------------------------------------------------------------------------- sweep


def _print_sweep(summary: pd.DataFrame) -> None:
    """One row per epsilon, one column per swept column and mechanism: mean ± std."""
    series = list(dict.fromkeys(zip(summary["column"], summary["mechanism"], strict=True)))
    mean = np.char.mod("%.4g", summary["mean"].to_numpy(dtype=np.float64))
    std = np.char.mod("%.2g", summary["std"].to_numpy(dtype=np.float64))
    cells = (
        summary.assign(cell=np.char.add(np.char.add(mean, " ± "), std))
        .pivot_table(
            index="epsilon", columns=["column", "mechanism"], values="cell", aggfunc="first"
        )
        .reindex(columns=pd.MultiIndex.from_tuples(series))
        .fillna("-")
        .sort_index()
    )
    metrics = ", ".join(str(m) for m in pd.unique(summary["metric"]))
    print_table(
        f"Sweep: {metrics}, mean ± std over runs",
        ["epsilon", *(f"{column} {mechanism}" for column, mechanism in series)],
        cells.reset_index().to_numpy().tolist(),
    )


def _read_plan_input(plan: Plan, plan_file: Path) -> pd.DataFrame:
    """The plan's input table, read with the plan's options (as a release reads it)."""
    from veil.release import read_input

    with errors_about(os.fspath(plan_file)):
        return read_input(plan)


def _plan_sweep_arguments(plan: Plan, column: str, plan_file: Path) -> dict[str, Any]:
    """The sweep's mechanism and public parameters from the column's plan treatment."""
    from veil.release.plan import (
        ExponentialTreatment,
        GaussianTreatment,
        LaplaceTreatment,
        RandomizedResponseTreatment,
    )

    spec = plan.columns.get(column)
    if spec is None:
        raise CliUsageError(
            f"--column: {column!r} is not a column of the plan {os.fspath(plan_file)!r} "
            f"(its columns: {list(plan.columns)})"
        )
    treatment = spec.treatment
    if isinstance(treatment, LaplaceTreatment):
        return {"mechanisms": ["laplace"], "bounds": tuple(treatment.bounds)}
    if isinstance(treatment, GaussianTreatment):
        return {
            "mechanisms": ["gaussian"],
            "bounds": tuple(treatment.bounds),
            "delta": treatment.delta,
            "gaussian_calibration": treatment.calibration,
        }
    if isinstance(treatment, ExponentialTreatment):
        if treatment.ordinal:
            raise CliUsageError(
                f"--column: {column!r} uses the exponential mechanism with ordinal scores, "
                "which sweeps do not run yet"
            )
        return {
            "mechanisms": ["exponential"],
            "domain": list(treatment.domain),
            "exponential_calibration": treatment.calibration,
        }
    if isinstance(treatment, RandomizedResponseTreatment):
        binary = len(treatment.domain) == 2
        return {"mechanisms": ["binary_rr" if binary else "krr"], "domain": list(treatment.domain)}
    raise CliUsageError(
        f"--column: {column!r} has treatment {treatment.method!r} in "
        f"{os.fspath(plan_file)!r}; a sweep needs a local-DP treatment (laplace, gaussian, "
        "exponential or randomized_response)"
    )


# The sweep's parameters and the options that set them, for its error messages.
_SWEEP_OPTIONS = {
    "epsilons": "--epsilons",
    "epsilon": "--epsilons",
    "runs": "--runs",
    "metric": "--metric",
    "mechanisms": "--mechanisms",
    "features": "--features",
    "delta": "--delta",
    "calibration": "--calibration",
    "gaussian_calibration": "--calibration",
    "exponential_calibration": "--calibration",
}
_CALIBRATIONS = {"gaussian": ("classic", "analytic"), "exponential": ("standard", "full")}


def _calibration(value: str, mechanisms: list[str]) -> dict[str, str]:
    """The sweep's calibration arguments for ``--calibration`` and the mechanisms swept."""
    chosen = {}
    for mechanism, allowed in _CALIBRATIONS.items():
        if mechanism in mechanisms:
            if value not in allowed:
                raise CliUsageError(
                    f"--calibration: {value!r} is not a calibration of the {mechanism} "
                    f"mechanism; allowed: {', '.join(allowed)}"
                )
            chosen[f"{mechanism}_calibration"] = value
    if not chosen:
        raise CliUsageError(
            f"--calibration: the swept mechanisms ({', '.join(mechanisms)}) have no "
            "calibration; it is for gaussian (classic, analytic) and exponential "
            "(standard, full)"
        )
    return chosen


@contextlib.contextmanager
def _as_options() -> Iterator[None]:
    """Name the command's options, not the Python parameters, in the sweep's errors."""
    from veil.errors import VeilError

    try:
        yield
    except VeilError as exc:
        text = str(exc)
        name, colon, rest = text.partition(":")
        if colon and name in _SWEEP_OPTIONS:
            text = f"{_SWEEP_OPTIONS[name]}:{rest}"
        text = re.sub(r"calibration='(\w+)'", r"--calibration \1", text)
        raise CliUsageError(text) from None


def _sweep_plan_column(
    plan_file: Path,
    column: str,
    epsilons: list[float],
    runs: int,
    mechanisms: str | None,
    metric: str,
    features: str | None,
    delta: float | None,
    seed: int | None,
    sample: Path | None = None,
    private_input: bool = False,
    calibration: str | None = None,
) -> tuple[pd.DataFrame, dict[str, Any]]:
    from veil.release import load_plan
    from veil.release.sweep import sweep as run_sweep

    with errors_about(os.fspath(plan_file)):
        plan = load_plan(plan_file)
    arguments = _plan_sweep_arguments(plan, column, plan_file)
    if mechanisms is not None:
        arguments["mechanisms"] = split_list(mechanisms, "--mechanisms")
    if delta is not None:
        arguments["delta"] = delta
    if calibration is not None:
        arguments.update(_calibration(calibration, arguments["mechanisms"]))
    public_input = plan.input.dataset is not None  # a bundled, published dataset
    if sample is not None:
        spec = plan.input.model_copy(update={"path": sample, "dataset": None, "format": None})
        plan = plan.model_copy(update={"input": spec})
        source = "a public sample (--sample)"
    elif public_input:
        source = f"the bundled public dataset {plan.input.dataset!r}"
    elif private_input:
        source = "the plan's private input (--private-input): the figures are confidential"
        warnings.warn(
            "veil sweep measured utility on the plan's private input: its figures are "
            "computed from the records (keep them with the custodian), and an epsilon "
            "chosen from them depends on the data, outside any ledger",
            PrivacyLeakWarning,
            stacklevel=2,
        )
    else:
        raise CliUsageError(
            "--sample: the plan's input is private; the sweep's figures would be computed "
            "from its records and an epsilon chosen from them would depend on the data. "
            "Give --sample PUBLIC.csv (public or synthetic data with the same columns), or "
            "--private-input to accept that (the files are then confidential)"
        )
    frame = _read_plan_input(plan, plan_file)
    if column not in frame.columns:
        raise CliUsageError(
            f"--column: {column!r} is not in the plan's input (columns: {list(frame.columns)})"
        )
    if features is not None:
        chosen = split_list(features, "--features")
    else:
        kept = set(plan.columns_with("identifier", "quasi_identifier", "sensitive", "insensitive"))
        chosen = [str(c) for c in frame.columns if c in kept]
    absent = [c for c in chosen if c not in frame.columns]
    if absent:
        raise CliUsageError(f"--features: {absent} not in the plan's input")
    used = list(dict.fromkeys([column, *chosen]))
    complete = frame.dropna(subset=used)
    info = {
        "features": chosen,
        "rows": len(complete),
        "rows_dropped": len(frame) - len(complete),
        "measured_on": source,
    }
    with _as_options():
        result = run_sweep(
            complete[used],
            column,
            arguments.pop("mechanisms"),
            epsilons,
            runs=runs,
            features=chosen,
            metric=metric,  # type: ignore[arg-type]  # checked by the sweep
            rng=seed,
            **arguments,
        )
    return result, info


@reporting_errors
def sweep(
    plan: Annotated[
        Path | None,
        typer.Argument(help="A release plan whose --column is swept (or use --paper)."),
    ] = None,
    out: Annotated[
        Path, typer.Option("--out", help="Output folder for the sweep's files (created if needed).")
    ] = Path("sweep"),
    paper: Annotated[
        bool,
        typer.Option(
            "--paper",
            help="The trasgoDP paper's protocol on bundled Adult: age (laplace, gaussian), "
            "workclass (exponential, krr), sex (exponential, binary_rr), 24 epsilons.",
        ),
    ] = False,
    column: Annotated[
        str | None, typer.Option("--column", help="The plan column to sweep.")
    ] = None,
    epsilons: Annotated[
        str | None,
        typer.Option(
            "--epsilons",
            help="Comma-separated budgets per record (required with a plan; default for "
            "--paper: the paper's 24).",
        ),
    ] = None,
    runs: Annotated[int, typer.Option("--runs", help="Runs per mechanism and epsilon.")] = 10,
    mechanisms: Annotated[
        str | None,
        typer.Option(
            "--mechanisms",
            help="With a plan: mechanisms to compare (laplace, gaussian, exponential, krr, "
            "binary_rr); default the plan's.",
        ),
    ] = None,
    metric: Annotated[
        str,
        typer.Option(
            "--metric", help="With a plan: correlation_loss (default), tvd, js, kl, wasserstein."
        ),
    ] = "correlation_loss",
    features: Annotated[
        str | None,
        typer.Option(
            "--features",
            help="With a plan: features of the correlation loss; default the plan's "
            "released columns.",
        ),
    ] = None,
    delta: Annotated[
        float | None,
        typer.Option(
            "--delta",
            help="With a plan: delta of the gaussian mechanism when the plan's treatment "
            "is not gaussian.",
        ),
    ] = None,
    calibration: Annotated[
        str | None,
        typer.Option(
            "--calibration",
            help="With a plan: gaussian: classic (epsilon <= 1) or analytic; exponential: "
            "standard (trasgoDP's, spends epsilon/2) or full. Default: the plan's "
            "treatment's (classic and standard when the plan's mechanism is another).",
        ),
    ] = None,
    sample: Annotated[
        Path | None,
        typer.Option(
            "--sample",
            help="With a plan: a public or synthetic table (the plan's columns) to sweep on "
            "instead of the plan's private input.",
        ),
    ] = None,
    private_input: Annotated[
        bool,
        typer.Option(
            "--private-input",
            help="With a plan: sweep on its private input anyway; the figures are then "
            "confidential and an epsilon chosen from them depends on the data.",
        ),
    ] = False,
    seed: Seed = None,
    as_json: Json = False,
) -> None:
    """Utility against epsilon: runs, summary (mean, std) and a plot in --out.

    Writes NAME_runs.csv, NAME_summary.csv and NAME.png (NAME: 'paper' or the column).
    With a plan whose input is private, give --sample (public data) or --private-input.
    """
    from veil.release.sweep import summarize, write_sweep

    if paper == (plan is not None):
        raise CliUsageError("PLAN, --paper: give a plan (with --column) or --paper, not both")
    grid = None if epsilons is None else split_numbers(epsilons, "--epsilons")
    info: dict[str, Any] = {}
    with captured_warnings() as caught, status("sweeping"):
        if paper:
            given = {
                "--column": column,
                "--mechanisms": mechanisms,
                "--features": features,
                "--delta": delta,
                "--calibration": calibration,
            }
            if any(v is not None for v in given.values()):
                named = [k for k, v in given.items() if v is not None]
                raise CliUsageError(f"{', '.join(named)}: not with --paper")
            from veil.datasets import load_adult
            from veil.release.sweep import PAPER_EPSILONS, PAPER_FEATURES, paper_protocol

            adult = load_adult().dropna(subset=list(PAPER_FEATURES))
            with _as_options():
                frame = paper_protocol(
                    adult, runs=runs, epsilons=grid or list(PAPER_EPSILONS), rng=seed
                )
            name = "paper"
            info = {"features": list(PAPER_FEATURES), "rows": len(adult)}
        else:
            assert plan is not None
            if column is None:
                raise CliUsageError("--column: required with a plan (the column to sweep)")
            if grid is None:
                raise CliUsageError("--epsilons: required with a plan (e.g. 0.1,0.5,1)")
            frame, info = _sweep_plan_column(
                plan,
                column,
                grid,
                runs,
                mechanisms,
                metric,
                features,
                delta,
                seed,
                sample=sample,
                private_input=private_input,
                calibration=calibration,
            )
            name = column
        paths = write_sweep(frame, output_folder(out), name=name)
    print_warnings(caught)
    summary = summarize(frame)
    if as_json:
        emit_json(
            {
                "files": paths,
                **info,
                "summary": summary.to_dict(orient="records"),
                "warnings": caught,
            }
        )
        return
    _print_sweep(summary)
    print_text("wrote " + ", ".join(os.fspath(p) for p in paths.values()))


# ---------------------------------------------------------------------------- report


def _manifest_defaults(manifest: dict[str, Any]) -> dict[str, Any]:
    """Quasi-identifiers, sensitive columns, locations and target from a record's plan.

    Read from the plan section as written (the public manifest's allow-listed plan or
    the custodian record's full one), without validating it as a runnable plan: the
    public one has no input.
    """
    section = manifest.get("plan")
    if not isinstance(section, dict):
        return {}
    columns = section.get("columns")
    columns = columns if isinstance(columns, dict) else {}

    def with_role(*roles: str) -> list[str]:
        return [
            str(name)
            for name, spec in columns.items()
            if isinstance(spec, dict)
            and spec.get("role") in roles
            and _method(spec.get("treatment")) != "drop"
        ]

    locations = section.get("locations")
    evaluation = section.get("evaluation")
    return {
        "quasi_identifiers": with_role("quasi_identifier"),
        "sensitive": with_role("sensitive"),
        "locations": [
            (str(loc["lat"]), str(loc["lon"]))
            for loc in (locations if isinstance(locations, list) else [])
            if isinstance(loc, dict) and "lat" in loc and "lon" in loc
        ],
        "target": evaluation.get("target") if isinstance(evaluation, dict) else None,
    }


def _method(treatment: Any) -> str | None:
    if isinstance(treatment, str):
        return treatment
    if isinstance(treatment, dict):
        return str(treatment.get("method")) if "method" in treatment else None
    return None


def _recorded_release_hash(manifest: dict[str, Any]) -> str | None:
    entry = manifest.get("outputs", {}).get("release") if isinstance(manifest, dict) else None
    if isinstance(entry, dict) and isinstance(entry.get("sha256"), str):
        return str(entry["sha256"])
    return None


def _check_recorded_hash(path: Path, wanted: str | None, name: str, source: str) -> None:
    """``path`` must hash to what ``source`` recorded (nothing to check without a hash)."""
    if wanted is None:
        return
    with errors_about(name):
        digest = hashlib.sha256()
        with open(path, "rb") as handle:
            for block in iter(lambda: handle.read(1 << 20), b""):
                digest.update(block)
    if digest.hexdigest() != wanted:
        raise CliUsageError(
            f"{name}: {os.fspath(path)!r} is not the file {source} records (its SHA-256 "
            "differs); give the table of that release"
        )


@reporting_errors
def report(
    original: Annotated[Path, typer.Argument(help="The table before protection.")],
    released: Annotated[Path, typer.Argument(help="The released table.")],
    manifest: Annotated[
        Path | None,
        typer.Option(
            "--manifest",
            help="The release's manifest.json (veil release writes one); without it, as for "
            "the one-table commands' outputs, give the roles with --qi, --sensitive, "
            "--location.",
        ),
    ] = None,
    out: Annotated[
        Path | None, typer.Option("--out", help="The report to write (.html; required).")
    ] = None,
    qi: Annotated[
        str | None,
        typer.Option("--qi", help="Quasi-identifiers, comma-separated; default the plan's."),
    ] = None,
    sensitive: Annotated[
        str | None,
        typer.Option("--sensitive", help="Sensitive columns, comma-separated; default the plan's."),
    ] = None,
    location: Annotated[
        list[str] | None,
        typer.Option(
            "--location", metavar="LAT,LON", help="LAT,LON columns of a location; repeatable."
        ),
    ] = None,
    target: Annotated[
        str | None,
        typer.Option("--target", help="Class column for ML utility; default the plan's."),
    ] = None,
    title: Annotated[str, typer.Option("--title", help="The page title.")] = "Release report",
    seed: Annotated[
        int | None,
        typer.Option(
            "--seed",
            help="Reproducible train/test split (ML utility) and probe points (maps). "
            "Default: secure randomness.",
        ),
    ] = None,
    custodian: Annotated[
        Path | None,
        typer.Option(
            "--custodian",
            help="The release's custodian.json: ORIGINAL must be the input it records "
            "(same SHA-256).",
        ),
    ] = None,
    sep: Sep = None,
) -> None:
    """Build the self-contained HTML report of a release (veil.release.report).

    Roles default to those of the plan recorded in the manifest. RELEASED must be the
    file the manifest records (same SHA-256), and with --custodian, ORIGINAL the input
    the custodian record names; the custodian record's facts (risk before release, a
    share step's scores and review) then join the manifest's in the report, as in the
    report veil release writes. The report shows the original records' distributions:
    keep it as confidential as the original data, apart from the release.
    """
    from veil.release.report import build_report, write_report

    if out is None:
        raise CliUsageError("--out: required: the report to write, a file ending in .html")
    if out.suffix.lower() not in (".html", ".htm"):
        raise CliUsageError(f"--out: must end in .html, got {os.fspath(out)!r}")
    if not out.resolve().parent.is_dir():
        raise CliUsageError(f"--out: the folder {os.fspath(out.resolve().parent)!r} does not exist")
    # The report compares the release with the raw records: never beside a release.
    check_confidential_place(out, "--out")
    facts: dict[str, Any] = {}
    if manifest is None:
        # The one-table commands write no manifest: the report compares the two tables
        # on the roles given, and its verdict claims no treatment and no guarantee.
        print_note(
            "without --manifest, the report knows no treatment, cost or plan: it compares "
            "ORIGINAL and RELEASED on --qi, --sensitive and --location, and claims no "
            "guarantee"
        )
    else:
        with errors_about("--manifest"):
            try:
                recorded = json.loads(manifest.read_text(encoding="utf-8"))
            except json.JSONDecodeError as exc:
                raise CliUsageError(f"{os.fspath(manifest)!r} is not valid JSON ({exc})") from None
        if not isinstance(recorded, dict):
            raise CliUsageError(f"--manifest: {os.fspath(manifest)!r} is not a JSON object")
        _check_recorded_hash(released, _recorded_release_hash(recorded), "RELEASED", "--manifest")
        facts.update(recorded)
    if custodian is None:
        print_note(
            "without --custodian, ORIGINAL is not checked against the release's input, and "
            "what the run measured on the raw records (risk before release, the attacks on "
            "its shadow release, the search's scores and review) is left out; give the "
            "custodian.json of the release"
        )
    else:
        with errors_about("--custodian"):
            try:
                record = json.loads(custodian.read_text(encoding="utf-8"))
            except json.JSONDecodeError as exc:
                raise CliUsageError(f"{os.fspath(custodian)!r} is not valid JSON ({exc})") from None
        wanted = record.get("input", {}).get("sha256") if isinstance(record, dict) else None
        if not isinstance(wanted, str):
            raise CliUsageError(f"--custodian: {os.fspath(custodian)!r} records no input hash")
        _check_recorded_hash(original, wanted, "ORIGINAL", "--custodian")
        facts.update(record)  # the custodian's part of the facts, as veil release reads them
    defaults = _manifest_defaults(facts)
    before = read_table(original, sep=sep, parameter="ORIGINAL")
    after = read_table(released, sep=sep, parameter="RELEASED")
    present = set(before.columns)
    quasi = (
        split_list(qi, "--qi")
        if qi is not None
        else [c for c in defaults.get("quasi_identifiers", []) if c in present]
    )
    secret = (
        split_list(sensitive, "--sensitive")
        if sensitive is not None
        else [c for c in defaults.get("sensitive", []) if c in present]
    )
    pairs: list[tuple[str, str]] = []
    for item in location or []:
        lat_lon = split_list(item, "--location")
        if len(lat_lon) != 2:
            raise CliUsageError(f"--location: expected LAT,LON column names, got {item!r}")
        pairs.append((lat_lon[0], lat_lon[1]))
    if location is None:
        pairs = [p for p in defaults.get("locations", []) if set(p) <= present]
    require_columns(before, quasi, "--qi", original.name)
    require_columns(before, secret, "--sensitive", original.name)
    require_columns(before, [c for p in pairs for c in p], "--location", original.name)
    if target is not None:
        require_columns(before, [target], "--target", original.name)
    goal = target if target is not None else defaults.get("target")
    if target is None and goal not in present:
        goal = None
    with captured_warnings() as caught, status("building the report"):
        page = build_report(
            before,
            after,
            manifest=facts,
            quasi_identifiers=quasi,
            sensitive=secret,
            locations=pairs,
            target=goal,
            rng=seed,
            title=title,
        )
        write_report(out, page)
    print_warnings(caught)
    print_text(f"wrote {out}")


# ------------------------------------------------------------------------------ demo


@reporting_errors
def demo(
    out: Annotated[
        Path, typer.Option("--out", help="Output folder (adult/ and location/ inside).")
    ] = Path("veil-demo"),
    seed: Seed = None,
    as_json: Json = False,
) -> None:
    """Release bundled Adult and a NYC taxi sample through the example plans, with a map.

    DIR/adult: adult_release.csv, manifest.json, report.html. DIR/location:
    taxi_release.csv, manifest.json, report.html and map.html (masked pickups only).
    """
    from veil.demo import DEMO_STEPS, run_demo

    with progress("demo", len(DEMO_STEPS)) as advance:
        result = run_demo(output_folder(out), rng=seed, on_step=advance)
    print_warnings([*result.adult.warnings, *result.location.warnings])
    if as_json:
        emit_json(
            {
                "adult": _run_payload(result.adult),
                "location": _run_payload(result.location),
                "map": result.map_path,
                "explained": result.explained,
            }
        )
        return
    for label, name, run_result in (
        ("Adult", "adult", result.adult),
        ("NYC taxi", "location", result.location),
    ):
        print_text(f"\n{label}: plan {run_result.plan.name!r}")
        _print_run(run_result)
        for subject, why in result.explained.get(name, []):
            print_text(f"  the report flags {subject}: {why}")
    print_text(f"\nmap of the masked pickups: {result.map_path}")
    print_text(
        "open the report.html files in a browser: ledger, risk before and after, the "
        "attacks on each release, distributions, utility, maps"
    )
