"""Worker processes: they take queued jobs from the database and run them.

A release never runs in a web request. A worker claims a job (:func:`veil.server.jobs.claim`),
decrypts the dataset into the job's private work folder, checks the plan against the
operator's policy and what remains of the dataset's budget (again: either may have
changed since the job was queued) and hands the plan to :func:`veil.release.run` with a
progress callback that writes the job's progress row and a
:class:`~veil.release.CancelToken` that a watcher thread sets when the job's row asks
for a cancel. With a Dask scheduler address in the configuration the run goes to
``DaskEngine(scheduler)``; the platform never starts a scheduler.

The release's staging guarantees that a failure, a cancel or a killed worker leaves no
partial output; the work folder (the plain copy of the input) is removed whatever
happens, and by :func:`veil.server.jobs.recover` after a crash.
"""

from __future__ import annotations

import logging
import shutil
import threading
import time
from typing import Any

from sqlalchemy import select

from veil.errors import VeilError
from veil.release import (
    Cancelled,
    CancelToken,
    Policy,
    Progress,
    load_plan,
    render_ledger,
    run,
)
from veil.release.engine import DaskEngine
from veil.server.accounts import event, now
from veil.server.budget import dataset_ledger, get_policy, release_policy, unreserve
from veil.server.config import ServerConfig
from veil.server.custody import KeyRing
from veil.server.database import Database
from veil.server.datasets import decrypt_to, profile_dataset, sweep_retention
from veil.server.folders import JobPaths, job_paths
from veil.server.jobs import claim, worker_name
from veil.server.models import Dataset, Job, PlanVersion
from veil.server.plans import parse_text, plan_files
from veil.server.releases import record_release

__all__ = ["execute", "run_worker"]

_LOG = logging.getLogger("veil.server.worker")
_PROGRESS_SECONDS = 0.3


class _Watcher:
    """Writes progress to the job's row (throttled) and turns a cancel request into the token."""

    def __init__(self, db: Database, job_id: int) -> None:
        self.db, self.job_id = db, job_id
        self.token = CancelToken()
        self._last = 0.0
        self._latest: dict[str, Any] = {}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._poll, daemon=True)

    def __enter__(self) -> _Watcher:
        self._check()
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(timeout=5)

    def _poll(self) -> None:
        while not self._stop.wait(0.25):
            self._check()

    def _check(self) -> None:
        with self.db.session() as session:
            job = session.get(Job, self.job_id)
            if job is None:
                return
            if job.cancel_requested:
                self.token.cancel()
            job.heartbeat = now()

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

    def flush(self) -> None:
        with self.db.session() as session:
            job = session.get(Job, self.job_id)
            if job is not None:
                job.progress = dict(self._latest)


def _plan_mapping(version: PlanVersion, input_path: str) -> dict[str, Any]:
    data = parse_text(version.text)
    return {**data, "input": {**(data.get("input") or {}), "path": input_path}}


def _finish(
    db: Database, job_id: int, status: str, error: str | None, result: dict[str, Any] | None
) -> None:
    with db.session() as session:
        job = session.get(Job, job_id)
        assert job is not None
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
            error=error,
        )


def _prepare(
    db: Database, config: ServerConfig, keyring: KeyRing, job_id: int, paths: JobPaths
) -> tuple[dict[str, Any], Policy]:
    """The plan to run (input in the work folder) and the policy, with the ledger's remainder."""
    with db.session() as session:
        job = session.get(Job, job_id)
        assert job is not None
        version = session.get(PlanVersion, job.plan_version_id)
        dataset = session.get(Dataset, job.dataset_id)
        assert version is not None and dataset is not None
        row = get_policy(session)
        policy = dataset_ledger(session, dataset, row).policy(
            release_policy(row), exclude=str(job.id)
        )
        paths.work.mkdir(parents=True, exist_ok=True, mode=0o700)
        shutil.copytree(plan_files(config) / "hierarchies", paths.work / "hierarchies")
        if job.kind == "run":
            decrypt_to(keyring, config, dataset, paths.work / "input.csv")
        return _plan_mapping(version, "input.csv"), policy


def _stopped(db: Database, job_id: int, exc: Exception) -> str:
    """Record why a job stopped (cancelled, refused, or an internal error); its status."""
    if isinstance(exc, Cancelled):
        status, message = "cancelled", str(exc)
    elif isinstance(exc, VeilError):
        status, message = "failed", str(exc)
    else:
        _LOG.exception("job %s failed", job_id, exc_info=exc)
        status, message = "failed", "internal error: the job stopped; see the server log"
    _finish(db, job_id, status, message, None)
    return status


def _profile(db: Database, config: ServerConfig, keyring: KeyRing, job_id: int) -> str:
    """A profile job: the dataset's profile and risk summary (no plan, no budget)."""
    try:
        with _Watcher(db, job_id) as watcher:
            profile_dataset(db, config, keyring, job_id, watcher.rows)
            watcher.flush()
    except Exception as exc:
        return _stopped(db, job_id, exc)
    _finish(db, job_id, "done", None, None)
    return "done"


def execute(db: Database, config: ServerConfig, keyring: KeyRing, job_id: int) -> str:
    """Run one claimed job to its end; returns its final status."""
    with db.session() as session:
        job = session.get(Job, job_id)
        assert job is not None
        paths, kind = job_paths(config, job), job.kind
    if kind == "profile":
        return _profile(db, config, keyring, job_id)
    try:
        mapping, policy = _prepare(db, config, keyring, job_id, paths)
        engine = None if config.dask_scheduler is None else DaskEngine(config.dask_scheduler)
        plan = load_plan(mapping, base_dir=paths.work)
        with _Watcher(db, job_id) as watcher:
            result = run(
                plan,
                None if kind == "dry_run" else paths.release,
                rng=None,
                dry_run=kind == "dry_run",
                engine=engine,
                progress=watcher.progress,
                cancel=watcher.token,
                policy=policy,
            )
            watcher.flush()
        summary = result.to_dict()
        summary["ledger_text"] = render_ledger(result.ledger)
        for drop in ("out_dir", "files"):
            summary.pop(drop, None)
        if kind == "run":
            with db.session() as session:
                job = session.get(Job, job_id)
                assert job is not None
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
        _finish(db, job_id, "done", None, summary)
        return "done"
    except Exception as exc:
        return _stopped(db, job_id, exc)
    finally:
        shutil.rmtree(paths.work, ignore_errors=True)


def run_worker(
    config: ServerConfig,
    keyring: KeyRing,
    *,
    stop: threading.Event | None = None,
    max_jobs: int | None = None,
    sweep_seconds: float = 60.0,
) -> int:
    """Take and run jobs until ``stop`` is set (or ``max_jobs`` are done); returns the count.

    Every ``sweep_seconds`` it also deletes datasets past their retention period.
    """
    db = Database(config.url)
    name = worker_name()
    done, last_sweep = 0, 0.0
    stop = stop or threading.Event()
    try:
        while not stop.is_set() and (max_jobs is None or done < max_jobs):
            if time.monotonic() - last_sweep >= sweep_seconds:
                with db.session() as session:
                    sweep_retention(session, config)
                last_sweep = time.monotonic()
            job_id = claim(db, name)
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
        return len(session.scalars(select(Job.id).where(Job.status == "queued")).all())
