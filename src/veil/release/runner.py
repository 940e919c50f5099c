"""Run a release plan: a short sequence of phases, whatever the engine.

:func:`run` is the whole path of a release:

1. **validate**: load the plan, choose the engine, derive the random streams;
2. **allocate**: give the randomized steps their epsilon from the budget (an
   ``allocation: target`` measures utility on a public sample, or, opted in, on the
   input itself);
3. **ledger**: the planned costs, checked against the budget and the operator's
   policy before the input is opened (a refused plan reads nothing; a dry run stops
   here);
4. **read**: open the input (the steps are built first: keys loaded, hierarchies read);
5. **protect**: the row steps, the whole-table steps and the class counts the counted
   steps need (:mod:`veil.release.protect`);
6. **write**: the released records, finished and shuffled, into the staged release file;
7. **check**: the costs the functions recorded must equal the planned ones;
8. **evaluate**: risk before and after, and the custodian's report
   (:mod:`veil.release.evaluate`);
9. **manifest**: the public manifest and the confidential custodian record, then the
   commit: the staged files are moved into place, the manifest last
   (:mod:`veil.release.outputs`).

Each phase is a function of its own; what they learn goes into one
:class:`~veil.release.manifest.RunFacts`, each fact on the side it may be published
(:mod:`veil.release.manifest`). A failure or a cancellation at any point leaves the
previous release, report and manifest as they were, and no staged file behind.

The released records keep the index labels of the input rows in memory (the file is
written without them), so the report pairs each released record with its original even
when records were suppressed.

Every privacy decision is made by the functions the steps call (:mod:`veil.ldp`,
:mod:`veil.masking`, :mod:`veil.geo`, :mod:`veil.anonymity`); the runner only
orchestrates them.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import time
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from veil.errors import PrivacyLeakWarning
from veil.gate import OutputSet, acknowledged_unknown, check_carriers
from veil.release.allocate import allocate, needs_sample, plan_privatizer, target_allocate
from veil.release.attack import attack_release
from veil.release.engine import Engine, InputData, PandasEngine, get_engine, input_spec
from veil.release.errors import LedgerMismatchError, PlanError
from veil.release.evaluate import Evaluation, attacker_keys, build_report
from veil.release.ledger import ReleaseLedger, check_budget, cross_check, plan_ledger
from veil.release.manifest import Records, RunFacts, build_records, declared, warning_records
from veil.release.outputs import check_outputs_apart_from_inputs, custodian_folder
from veil.release.plan import Plan, load_plan
from veil.release.policy import Policy, check_attack_limits, check_policy, plan_leaks
from veil.release.progress import CancelToken, ProgressCallback, Reporter
from veil.release.protect import (
    Protected,
    StepPlan,
    check_columns,
    plan_steps,
    plan_steps_dropping,
    protect,
)
from veil.release.result import RunResult
from veil.release.writer import ReleaseWriter, layout_facts, sha256_file
from veil.rng import RngLike, resolve_rng, spawn

__all__ = ["RunResult", "custodian_folder", "run"]


@dataclass
class _Job:
    """What every phase of one run shares."""

    plan: Plan
    engine: Engine
    reporter: Reporter
    session: contextlib.ExitStack
    allocation_rng: np.random.Generator
    steps_rng: np.random.Generator
    order_rng: np.random.Generator
    attack_rng: np.random.Generator
    records: pd.DataFrame | None = None
    facts: RunFacts | None = None
    data: InputData | None = None
    out: Path = Path()
    custodian: Path = Path()

    @property
    def record(self) -> RunFacts:
        assert self.facts is not None, "the facts are set once the ledger is checked"
        return self.facts

    def timed(self, label: str, start: float) -> None:
        self.record.timings[label] = time.perf_counter() - start

    def open_input(self, plan: Plan) -> InputData:
        """The input: the caller's records, else the plan's file or dataset, read."""
        self.session.enter_context(self.engine.session())
        if self.records is not None:
            return self.engine.adopt(self.records, "records given to run (in memory)")
        return self.engine.read(input_spec(plan))


# -------------------------------------------------------------- 1-3: before any data


def _validate(
    plan: Any,
    engine: str | Engine | None,
    rng: RngLike,
    allow_outside: bool,
    reporter: Reporter,
    session: contextlib.ExitStack,
) -> _Job:
    """The plan loaded, the engine chosen, the random streams derived."""
    reporter.phase("validate")
    loaded = load_plan(plan, allow_outside=allow_outside)
    chosen = (
        get_engine(loaded.engine.name, scheduler=loaded.engine.scheduler)
        if engine is None
        else get_engine(engine)
    )
    allocation_rng, steps_rng, order_rng, attack_rng = spawn(resolve_rng(rng, stacklevel=4), 4)
    return _Job(loaded, chosen, reporter, session, allocation_rng, steps_rng, order_rng, attack_rng)


def _allocate(job: _Job) -> tuple[Plan, dict[str, Any] | None]:
    """The plan with every epsilon set; a target allocation may read the input first."""
    job.reporter.phase("allocate")
    plan = job.plan
    if not needs_sample(plan):
        return allocate(plan), None
    target = plan.budget.target
    assert target is not None
    if target.sample is not None:
        spec = plan.input.model_copy(
            update={"path": target.sample, "dataset": None, "format": None}
        )
        sample = PandasEngine().read(spec).table
        source, kind = os.fspath(target.sample), "a public sample"
    else:
        # The plan validated this only with allow_data_dependent_allocation: true.
        job.data = job.open_input(plan)
        sample = job.engine.original(job.data)
        source, kind = "the input (private)", "the private input (a leak)"
        warnings.warn(
            "budget.allocation 'target' measured utility on the private input "
            "(allow_data_dependent_allocation): the epsilons chosen depend on the records, "
            "and that choice is not covered by the ledger. Give budget.target.sample "
            "(public or synthetic data) to avoid it",
            PrivacyLeakWarning,
            stacklevel=4,
        )
    job.reporter.step("allocate", "allocation (target)")
    allocated, chosen = target_allocate(plan, sample, plan_privatizer(plan), job.allocation_rng)
    info = {
        "method": "target",
        "metric": target.metric,
        "target": target.value,
        "sample": source,
        "sample_kind": kind,
        "columns": chosen,
    }
    return allocated, info


def _ledger(job: _Job, plan: Plan, policy: Policy | None) -> ReleaseLedger:
    """The planned costs, refused over the budget or the policy (nothing read yet)."""
    job.reporter.phase("ledger")
    ledger = plan_ledger(plan)
    check_budget(ledger)
    check_policy(plan, ledger, plan_leaks(plan), policy)
    return ledger


def _randomness(rng: RngLike) -> dict[str, Any]:
    if rng is None:
        return {"generator": "secure (AES-CTR keyed from OS entropy)"}
    if isinstance(rng, np.random.Generator):
        return {"generator": "caller-supplied numpy Generator"}
    return {
        "generator": "seeded: reproducible, NOT private if the seed is known",
        "seed": int(rng),
    }


# ------------------------------------------------------------------- 4-6: the data


def _read(job: _Job) -> tuple[InputData, StepPlan]:
    """The steps (keys loaded, hierarchies read), then the input, opened."""
    facts = job.record
    plan = facts.plan
    start = time.perf_counter()
    steps = plan_steps(plan)
    job.timed("prepare", start)
    job.reporter.phase("read")
    start = time.perf_counter()
    if job.data is None:
        job.data = job.open_input(plan)
    else:
        facts.execution["steps"]["allocation (target)"] = job.engine.where("input")
    job.timed("read", start)
    data = job.data
    unlisted = check_columns(plan, data.columns)
    facts.dropped_unlisted = unlisted
    _check_carriers(job, data)
    facts.input_info = {
        "source": data.source,
        "sha256": data.sha256,
        "rows": data.rows,
        "columns": list(data.columns),
    }
    return data, plan_steps_dropping(steps, unlisted)


# Rows the carrier check reads: enough for its rank correlations and shares of
# distinct values to be what they are on the whole table.
_CARRIER_SAMPLE = 20_000


def _check_carriers(job: _Job, data: InputData) -> None:
    """The gate's carrier check on the columns the plan releases as they are.

    Raises :class:`~veil.gate.CarrierError` before any step runs when a kept column
    carries a treated value or singles out records and the plan does not acknowledge it.
    """
    plan = job.record.plan
    what = declared(plan, data.columns)
    acknowledged_unknown(what, data.columns, "acknowledge")
    if not what.kept:
        return
    start = time.perf_counter()
    sample = job.engine.sample(data, _CARRIER_SAMPLE)
    job.record.carriers = check_carriers(sample, what, field_name="acknowledge")
    job.timed("carrier check", start)


def _risk_columns(plan: Plan, dropped: tuple[str, ...], columns: tuple[str, ...]) -> list[str]:
    """The released quasi-identifiers the custodian's risk is measured on."""
    if not (plan.output.report and "risk" in plan.evaluation.metrics):
        return []
    return [c for c in plan.columns_with("quasi_identifier") if c not in dropped and c in columns]


@dataclass(frozen=True)
class _Written:
    rows: int
    privacy: list[dict[str, Any]]
    masking: list[dict[str, Any]]
    released: Any
    evaluation: Evaluation
    staged: Path


def _write(job: _Job, protected: Protected, outputs: OutputSet, evaluation: Evaluation) -> _Written:
    """The released records, finished and shuffled, into the staged release file."""
    plan, facts = job.record.plan, job.record
    job.reporter.phase("write")
    shuffle = not plan.output.keep_order
    if not shuffle:
        warnings.warn(
            "output.keep_order: the released records keep the input's order, which "
            "links them to people by position (a file sorted by date, or with the "
            "positive cases first)",
            PrivacyLeakWarning,
            stacklevel=4,
        )
    staged = outputs.stage(job.out / plan.output.filename)
    fmt = plan.output.format
    scratch = outputs.scratch("shuffle")
    with ReleaseWriter(staged, fmt, escape=not plan.output.raw_csv, scratch=scratch) as writer:
        streamed = protected.engine.stream(
            protected.rows,
            writer,
            job.reporter,
            finish=protected.finish,
            probe=evaluation.probe() if evaluation.active else None,
            collect=evaluation.collect if evaluation.active else None,
            order=job.order_rng if shuffle else None,
        )
    facts.timings.update(protected.timings)
    facts.timings.update(streamed.timings)
    facts.release = layout_facts(protected.engine.where("order") if shuffle else None, writer)
    facts.outputs["release"] = {
        "file": plan.output.filename,
        "format": fmt,
        "rows": streamed.rows,
        "columns": list(writer.columns),
        "sha256": sha256_file(staged),
    }
    return _Written(
        streamed.rows, streamed.privacy, streamed.masking, streamed.frame, evaluation, staged
    )


def _check(job: _Job, ledger: ReleaseLedger, written: _Written) -> None:
    """The recorded costs must equal the planned ones (nothing is committed otherwise)."""
    job.reporter.phase("check")
    problems = cross_check(ledger, written.privacy)
    if problems:
        raise LedgerMismatchError(
            "the recorded privacy costs differ from the plan; nothing was written:\n  "
            + "\n  ".join(problems)
        )
    job.record.recorded, job.record.masking = list(written.privacy), written.masking


# ----------------------------------------------------------------- 8-9: the records


def _attack(job: _Job, data: InputData, policy: Policy | None) -> None:
    """The plan's attacks (and the policy's) on a shadow release; refused over the limits.

    The shadow release is made in memory from a random part of the records (at most the
    plan's ``attack_sample`` of them, drawn from an evenly spread sample on Dask); the
    results go to the custodian record. Nothing is written when an attack beats the
    operator's limit.
    """
    plan = job.record.plan
    required = sorted((policy.max_attack_success or {}) if policy is not None else {})
    if not plan.evaluation.attacks and not required:
        return
    job.reporter.phase("attack")
    start = time.perf_counter()
    wanted = sorted({*plan.evaluation.attacks, *required})
    rows = int(plan.evaluation.attack_sample / plan.evaluation.attack_fraction) + 1
    raw = job.engine.sample(data, rows)
    battery = attack_release(plan, raw, attacks=wanted, rng=job.attack_rng).to_dict()
    job.record.attacks = battery
    job.timed("attacks", start)
    check_attack_limits(policy, battery)


def _evaluate(
    job: _Job,
    protected: Protected,
    written: _Written,
    report_rng: np.random.Generator,
    caught: list[warnings.WarningMessage],
) -> str | None:
    """Risk before and after (custodian record) and the report, if the plan asks."""
    job.reporter.phase("evaluate")
    facts, evaluation = job.record, written.evaluation
    facts.risk = evaluation.risk(f"every record ({protected.engine.where('counts')} group-by)")
    if not facts.plan.output.report:
        return None
    start = time.perf_counter()
    note = evaluation.sample_note()
    if note is not None:
        facts.execution["report"] = note
    original, released = evaluation.paired_sample()
    draft = build_records(facts, caught)
    html = build_report(
        original,
        released,
        facts.plan,
        {**draft.manifest, **draft.custodian},
        report_rng,
        title="Release report" if note is None else f"Release report ({note})",
    )
    job.timed("report", start)
    return html


def _manifest(
    job: _Job,
    outputs: OutputSet,
    written: _Written,
    report_html: str | None,
    caught: list[warnings.WarningMessage],
) -> Records:
    """The public manifest and the custodian record, staged, then the commit."""
    job.reporter.phase("manifest")
    facts = job.record
    if report_html is not None:
        outputs.stage(job.custodian / "report.html", confidential=True).write_text(
            report_html, encoding="utf-8"
        )
        facts.custodian_outputs["report"] = {
            "file": "report.html",
            "sha256": hashlib.sha256(report_html.encode("utf-8")).hexdigest(),
        }
    facts.outputs["report"] = (
        "confidential: the report compares the release with the original records; it "
        "is in the custodian folder and does not travel with the release"
        if report_html is not None
        else None
    )
    records = build_records(facts, caught)
    manifest_text = json.dumps(records.manifest, indent=2, default=str) + "\n"
    records.custodian["outputs"]["manifest"] = {
        "file": "manifest.json",
        "sha256": hashlib.sha256(manifest_text.encode("utf-8")).hexdigest(),
    }
    outputs.stage(job.custodian / "custodian.json", confidential=True).write_text(
        json.dumps(records.custodian, indent=2, default=str) + "\n", encoding="utf-8"
    )
    outputs.stage(job.out / "manifest.json").write_text(manifest_text, encoding="utf-8")
    job.reporter.check("the commit")
    outputs.commit()
    return records


def _plan_source(plan: Any) -> dict[str, str] | None:
    if isinstance(plan, (Plan, dict)):
        return None
    return {"path": os.fspath(plan), "sha256": sha256_file(os.fspath(plan))}


def run(
    plan: Plan | str | os.PathLike[str] | dict[str, Any],
    out_dir: str | os.PathLike[str] | None = None,
    *,
    rng: RngLike = None,
    dry_run: bool = False,
    engine: str | Engine | None = None,
    progress: ProgressCallback | None = None,
    allow_outside: bool = False,
    cancel: CancelToken | None = None,
    policy: Policy | None = None,
    records: pd.DataFrame | None = None,
) -> RunResult:
    """Run a release plan: the release and its public manifest, and the custodian's files.

    The release folder ``out_dir`` receives the release file and the public
    ``manifest.json``; the custodian folder (``output.custodian_dir``, by default a
    folder named ``<out_dir>.custodian`` beside the release folder) receives the
    confidential ``custodian.json`` and ``report.html`` (see :mod:`veil.release.manifest`).
    The files are written as one set (:mod:`veil.release.outputs`), the manifest last.

    Parameters
    ----------
    plan : Plan, path or mapping
        The plan, or a YAML file / mapping for :func:`~veil.release.plan.load_plan`.
    out_dir : path
        Output folder (created if needed); not needed for a dry run.
    rng : None, int or numpy.random.Generator
        Randomness for every step (see :mod:`veil.rng`): None (default) is
        cryptographically secure; an int seed gives a reproducible, not private, run and
        is recorded in the custodian record.
    dry_run : bool, default False
        Validate, allocate and check the ledger (and the policy) only: nothing is read
        or written.
    engine : {"pandas", "dask", "dask-local"} or Engine, optional
        Where the records are processed (see :mod:`veil.release.engine`); by default
        the plan's ``engine`` section (itself pandas by default).
    progress : callable, optional
        Called with a :class:`~veil.release.progress.Progress` event as each phase and
        step starts and as batches of partitions are done.
    allow_outside : bool, default False
        Let a plan file name paths outside its folder (see
        :func:`~veil.release.plan.load_plan`).
    cancel : CancelToken, optional
        Checked between phases, steps and batches of partitions; once set, the run
        raises :class:`~veil.release.progress.Cancelled` and commits nothing.
    policy : Policy, optional
        Operator limits the plan must meet (:func:`~veil.release.policy.check_policy`),
        checked before the input is opened.
    records : pandas.DataFrame, optional
        The records to release, held by the caller (decrypted in memory, say), instead
        of reading the plan's input: the plan's ``input`` then only names them. The
        frame is not modified; the custodian record keeps the SHA-256 of its columns
        and row hashes instead of the file's.

    Returns
    -------
    RunResult

    Raises
    ------
    PlanError
        Invalid plan, columns absent from the input, or unlisted input columns with
        ``unlisted: error``; :class:`~veil.release.policy.PolicyError` for a plan the
        policy refuses.
    BudgetError
        The plan's costs exceed its budget (raised before the input is opened).
    LedgerMismatchError
        A step recorded another cost than planned (nothing written).
    Cancelled
        ``cancel`` was set (nothing written).
    veil.errors.VeilError
        Any error of a step (missing values, values outside a declared domain, ...);
        the previous outputs stay as they were.
    """
    started = time.perf_counter()
    reporter = Reporter(progress, cancel)
    with warnings.catch_warnings(record=True) as caught, contextlib.ExitStack() as session:
        warnings.simplefilter("always")
        job = _validate(plan, engine, rng, allow_outside, reporter, session)
        job.records = records
        allocated, allocation = _allocate(job)
        ledger = _ledger(job, allocated, policy)
        if dry_run:
            seconds = time.perf_counter() - started
            return RunResult(
                allocated, ledger, True, warnings=warning_records(caught), seconds=seconds
            )
        if out_dir is None:
            raise PlanError("out_dir: required unless dry_run=True")
        out = Path(out_dir)
        custodian_dir = custodian_folder(allocated, out)
        check_outputs_apart_from_inputs(allocated, out, custodian_dir)
        job.facts = RunFacts(
            allocated,
            ledger,
            plan_source=_plan_source(plan),
            engine=job.engine.name,
            randomness=_randomness(rng),
            allocation=allocation,
            leaks=plan_leaks(allocated),
            execution={"engine": job.engine.name, "steps": {}},
        )
        job.out, job.custodian = out, custodian_dir
        outputs = session.enter_context(
            OutputSet((out,), (custodian_dir,), field="output.custodian_dir")
        )
        data, steps = _read(job)
        streams = spawn(job.steps_rng, steps.streams_needed + 1)
        job.reporter.phase("protect")
        protected = protect(job.engine, data, steps, streams[:-1], job.reporter)
        job.record.execution["steps"].update(protected.where)
        job.record.anonymization = protected.facts.get("anonymization")
        job.record.share = protected.facts.get("share")
        if job.record.share is not None:
            job.record.leaks.extend(job.record.share.get("leaks", []))
        risk_qis = _risk_columns(allocated, steps.dropped, data.columns)
        evaluation = Evaluation(
            risk_qis,
            protected.engine.partitions(data),
            data.rows,
            allocated.output.report,
            keys=attacker_keys(allocated, risk_qis),
        )
        written = _write(job, protected, outputs, evaluation)
        _check(job, ledger, written)
        _attack(job, data, policy)
        report_html = _evaluate(job, protected, written, streams[-1], caught)
        written_records = _manifest(job, outputs, written, report_html, caught)
    return RunResult(
        allocated,
        ledger,
        False,
        out_dir=out,
        release_path=out / allocated.output.filename,
        manifest_path=out / "manifest.json",
        report_path=None if report_html is None else custodian_dir / "report.html",
        rows_in=data.rows,
        rows_out=written.rows,
        manifest=written_records.manifest,
        custodian=written_records.custodian,
        custodian_dir=custodian_dir,
        custodian_path=custodian_dir / "custodian.json",
        warnings=warning_records(caught),
        seconds=time.perf_counter() - started,
        release_format=allocated.output.format,
        released=written.released,
    )
