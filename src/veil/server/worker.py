"""Worker processes: they take queued jobs from the database and run them.

A release never runs in a web request. A worker claims a job with a lease
(:func:`veil.server.jobs.claim`), checks the plan against the operator's policy and
reserves its spend again with :func:`veil.server.budget.reserve`, the same atomic check
the queue made (either may have changed since the job was queued), decrypts the dataset
into its own memory (:func:`veil.server.datasets.read_records`: the plain records are
never written to disk) and hands them to :func:`veil.release.run` with a progress
callback, a :class:`~veil.release.CancelToken` and the policy (whose attack limits make
the run attack a shadow release of the plan first, and refuse it, writing nothing, when
an attack succeeds more often than its limit). With a Dask scheduler address in the
configuration the run goes to ``DaskEngine(scheduler)``; the platform never starts a
scheduler.

A watcher thread renews the job's lease every ``heartbeat_seconds``
(:func:`veil.server.jobs.renew`), turns a cancel request into the token, and stops the
run if the lease was lost. Every write of the outcome is fenced
(:func:`veil.server.leases.held`): a worker that lost its job commits nothing and
removes what it wrote. The release's staging guarantees that a failure, a cancel or a
killed worker leaves no partial output; a killed worker leaves no plain data either
(it lived in the process's memory), and its job is reclaimed within its lease
(:func:`veil.server.jobs.reclaim`).
"""

from __future__ import annotations

import logging
import shutil
import threading
import time
import traceback
from typing import Any

import pandas as pd
from sqlalchemy import func, select

from veil.errors import VeilError
from veil.gate import redact
from veil.release import (
    Cancelled,
    CancelToken,
    Plan,
    Policy,
    PolicyError,
    Progress,
    load_plan,
    render_ledger,
    run,
)
from veil.release.dataset_ledger import planned_spend
from veil.release.engine import DaskEngine, input_spec
from veil.server.accounts import event, now
from veil.server.budget import get_policy, release_policy, reserve, unreserve
from veil.server.config import ServerConfig
from veil.server.custody import KeyRing
from veil.server.database import Database
from veil.server.datasets import profile_dataset, read_records, sweep_retention
from veil.server.folders import job_paths
from veil.server.jobs import claim, reclaim, renew, worker_name
from veil.server.leases import held
from veil.server.models import Dataset, Job, PlanVersion
from veil.server.plans import parse_text, plan_files
from veil.server.releases import record_release

__all__ = ["execute", "queued", "run_worker"]

_LOG = logging.getLogger("veil.server.worker")
_PROGRESS_SECONDS = 0.3
LOST = "lost"
"""What :func:`execute` returns when the job was taken back from this worker."""


class _Watcher:
    """Renews the job's lease, writes its progress (throttled), turns a cancel into the token."""

    def __init__(self, db: Database, config: ServerConfig, job_id: int, worker: str | None):
        self.db, self.job_id, self.worker = db, job_id, worker
        self.every = config.heartbeat_seconds
        self.lease = config.lease_seconds
        self.token = CancelToken()
        self.lost = False
        self._last = 0.0
        self._latest: dict[str, Any] = {}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._poll, daemon=True)

    def __enter__(self) -> _Watcher:
        self._beat()
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(timeout=5)

    def _poll(self) -> None:
        while not self._stop.wait(self.every):
            try:
                self._beat()
            except Exception:  # a database hiccup: the next beat tries again
                _LOG.warning("job %s: heartbeat failed", self.job_id, exc_info=True)

    def _beat(self) -> None:
        if self.worker is None:
            return
        cancel = renew(self.db, self.job_id, self.worker, self.lease)
        if cancel is None:
            self.lost = True
            self.token.cancel()
        elif cancel:
            self.token.cancel()

    def progress(self, event: Progress) -> None:
        self._latest = {
            "phase": event.phase,
            "step": event.step,
            "done": event.done,
            "total": event.total,
            "rows": event.rows,
            "label": event.label,
        }
        moment = time.monotonic()
        if event.total is None or moment - self._last >= _PROGRESS_SECONDS:
            self._last = moment
            self.flush()

    def rows(self, count: int) -> None:
        """A profile's progress: ``count`` records read."""
        self._latest = {"phase": "profile", "rows": count, "label": "records read"}
        moment = time.monotonic()
        if moment - self._last >= _PROGRESS_SECONDS:
            self._last = moment
            self.flush()
        if self.lost:
            raise Cancelled("job: its lease was lost; another took it back")

    def flush(self) -> None:
        with self.db.session() as session:
            job = held(session, self.job_id, self.worker)
            if job is not None:
                job.progress = dict(self._latest)


def _finish(
    db: Database,
    job_id: int,
    worker: str | None,
    status: str,
    error: str | None,
    result: dict[str, Any] | None,
    audited: str | None = None,
) -> str:
    """Record the job's end if it is still this worker's; its status (or :data:`LOST`).

    The audit event says ``audited`` in place of ``error`` when given (an error that
    quotes figures measured on the raw records, which only the job's curator sees).
    Both pass the release gate's :func:`veil.gate.redact`: no credential (of a
    scheduler address, a database URL, a key) is ever recorded.
    """
    error = None if error is None else redact(error)
    audited = None if audited is None else redact(audited)
    with db.session() as session:
        job = held(session, job_id, worker)
        if job is None:
            return LOST
        job.status, job.error, job.result, job.finished_at = status, error, result, now()
        if status != "done" or job.kind != "run":
            unreserve(session, job)
        event(
            session,
            None,
            f"job.{status}",
            "job",
            job.id,
            actor="worker",
            actor_role="system",
            error=error if audited is None else audited,
        )
    return status


class _Lost(Exception):
    """The job is no longer this worker's (its lease ran out and it was reclaimed)."""


def _prepare(
    db: Database, config: ServerConfig, keyring: KeyRing, job_id: int, worker: str | None
) -> tuple[Plan, Policy, pd.DataFrame | None]:
    """The plan, the policy, and (for a release) the records decrypted into memory.

    The dataset's budget is checked, and a release's reservation refreshed, by
    :func:`veil.server.budget.reserve`: the check the queue made, made again (only while
    the job is still this worker's).
    """
    with db.session() as session:
        job = held(session, job_id, worker)
        if job is None:
            raise _Lost
        version = session.get(PlanVersion, job.plan_version_id)
        dataset = session.get(Dataset, job.dataset_id)
        assert version is not None and dataset is not None
        data = parse_text(version.text)
        mapping = {**data, "input": {**(data.get("input") or {}), "path": "input.csv"}}
        plan = load_plan(mapping, base_dir=plan_files(config))
        reserve(session, job, planned_spend(plan), hold=job.kind == "run")
        policy = release_policy(get_policy(session))
        release = job.kind == "run"
    records = None
    if release:
        records = read_records(keyring, config, dataset, input_spec(plan))
    return plan, policy, records


_ATTACK_LIMITS = "policy.max_attack_success"


def _stopped(db: Database, job_id: int, worker: str | None, exc: Exception) -> str:
    """Record why a job stopped (cancelled, refused, or an internal error); its status.

    A run refused by the policy's attack limits names each attack and its success rate
    in the job's error, for its curator; the audit log (read by admins) names the limit
    only, since the rates are measured on the raw records.
    """
    audited = None
    if isinstance(exc, Cancelled):
        status, message = "cancelled", str(exc)
    elif isinstance(exc, VeilError):
        status, message = "failed", str(exc)
        if isinstance(exc, PolicyError) and message.startswith(_ATTACK_LIMITS):
            audited = (
                f"{_ATTACK_LIMITS}: the release's attacks beat the operator's limits (the "
                "rates are in the job, for its curator); nothing was written"
            )
    else:
        # The exception's text may quote a secret: the log gets it redacted, and the
        # traceback's frames without it.
        _LOG.error(
            "job %s failed: %s\n%s",
            job_id,
            redact(f"{type(exc).__name__}: {exc}"),
            "".join(traceback.format_tb(exc.__traceback__)),
        )
        status, message = "failed", "internal error: the job stopped; see the server log"
    return _finish(db, job_id, worker, status, message, None, audited)


def _profile(
    db: Database, config: ServerConfig, keyring: KeyRing, job_id: int, worker: str | None
) -> str:
    """A profile job: the dataset's profile and risk summary (no plan, no budget)."""
    try:
        with _Watcher(db, config, job_id, worker) as watcher:
            profile_dataset(db, config, keyring, job_id, watcher.rows, worker)
            watcher.flush()
    except Exception as exc:
        return _stopped(db, job_id, worker, exc)
    return _finish(db, job_id, worker, "done", None, None)


def _commit(
    db: Database, config: ServerConfig, job_id: int, worker: str | None, result: Any
) -> str:
    """Record a committed release as a draft, if the job is still this worker's."""
    summary = result.to_dict()
    summary["ledger_text"] = render_ledger(result.ledger)
    for drop in ("out_dir", "files"):
        summary.pop(drop, None)
    with db.session() as session:
        job = held(session, job_id, worker)
        if job is None:
            return LOST
        job.result = summary
        release = record_release(session, config, job, result.manifest)
        event(
            session,
            None,
            "job.done",
            "job",
            job.id,
            actor="worker",
            actor_role="system",
            release=release.id,
        )
        event(
            session,
            None,
            "release.create",
            "release",
            release.id,
            actor="worker",
            actor_role="system",
            rows=release.rows,
            sha256=release.file_sha256,
        )
    return "done"


def execute(db: Database, config: ServerConfig, keyring: KeyRing, job_id: int) -> str:
    """Run one claimed job to its end; its final status (:data:`LOST` if taken back)."""
    with db.session() as session:
        job = session.get(Job, job_id)
        assert job is not None
        paths, kind, worker = job_paths(config, job), job.kind, job.worker
    if kind == "profile":
        return _profile(db, config, keyring, job_id, worker)
    status = "failed"
    try:
        plan, policy, records = _prepare(db, config, keyring, job_id, worker)
        engine = None if config.dask_scheduler is None else DaskEngine(config.dask_scheduler)
        with _Watcher(db, config, job_id, worker) as watcher:
            result = run(
                plan,
                None if kind == "dry_run" else paths.release,
                rng=None,
                dry_run=kind == "dry_run",
                engine=engine,
                progress=watcher.progress,
                cancel=watcher.token,
                policy=policy,
                records=records,
            )
            del records
            watcher.flush()
        if kind == "run":
            status = _commit(db, config, job_id, worker, result)
            return status
        summary = result.to_dict()
        summary["ledger_text"] = render_ledger(result.ledger)
        status = _finish(db, job_id, worker, "done", None, summary)
        return status
    except _Lost:
        status = LOST
        return status
    except Exception as exc:
        status = _stopped(db, job_id, worker, exc)
        return status
    finally:
        shutil.rmtree(paths.work, ignore_errors=True)
        if status == LOST:
            shutil.rmtree(paths.base, ignore_errors=True)


def run_worker(
    config: ServerConfig,
    keyring: KeyRing,
    *,
    stop: threading.Event | None = None,
    max_jobs: int | None = None,
    sweep_seconds: float = 60.0,
) -> int:
    """Take and run jobs until ``stop`` is set (or ``max_jobs`` are done); returns the count.

    Between jobs it also reclaims jobs that lost their worker (every third of a lease)
    and deletes datasets past their retention period (every ``sweep_seconds``).
    """
    db = Database(config.url, audit_key=keyring.audit_key, checkpoints=config.checkpoints)
    name = worker_name()
    done, last_sweep, last_reclaim = 0, 0.0, 0.0
    stop = stop or threading.Event()
    try:
        while not stop.is_set() and (max_jobs is None or done < max_jobs):
            moment = time.monotonic()
            if moment - last_reclaim >= config.lease_seconds / 3:
                reclaim(db, config)
                last_reclaim = moment
            if moment - last_sweep >= sweep_seconds:
                with db.session() as session:
                    sweep_retention(session, config)
                last_sweep = moment
            job_id = claim(db, name, config.lease_seconds)
            if job_id is None:
                stop.wait(config.poll_seconds)
                continue
            execute(db, config, keyring, job_id)
            done += 1
    finally:
        db.dispose()
    return done


def queued(db: Database) -> int:
    """How many jobs wait for a worker."""
    with db.session() as session:
        return int(
            session.scalar(select(func.count()).select_from(Job).where(Job.status == "queued")) or 0
        )
