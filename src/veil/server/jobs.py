"""The job queue, in the database: queue, claim, leases, cancel, recovery.

A job is the profile of a dataset just uploaded (its rows, types, missing values and
risk summary; :func:`enqueue_profile`), or a dry run or a release of one plan version.
Queuing a release re-checks the plan against the policy and reserves what the plan may
spend with :func:`veil.server.budget.reserve`, the one atomic budget check; the worker
that runs it calls the same function again (:mod:`veil.server.worker`). Workers claim
queued jobs one at a time: on PostgreSQL with ``FOR UPDATE SKIP LOCKED`` (two workers
never wait on each other nor take the same job), on SQLite with one ``UPDATE`` of the
oldest queued row, which the database's write lock serializes.

**Leases.** A claimed job holds a lease of ``lease_seconds`` that its worker renews with
a heartbeat every ``heartbeat_seconds`` (:func:`renew`). A job whose lease ran out, or
whose worker process on this host is gone, has lost its worker: :func:`reclaim` marks it
``interrupted``, removes any uncommitted output and frees its reservation, so that
nothing waits on a dead worker for longer than the lease. Any worker reclaims lost jobs
as it polls, and ``veil serve``'s supervisor does at once when it sees one of its worker
processes die (:mod:`veil.server.supervisor`). A worker that lost its lease commits
nothing: every write of its result is fenced on the job still being its own and
running. A release the run had already committed (its manifest verifies) is kept and
its spend recorded: nothing is lost and nothing is counted twice. At a start of the
platform every job still marked running is reclaimed.
"""

from __future__ import annotations

import os
import secrets
import shutil
import socket
from datetime import timedelta
from typing import Any

from sqlalchemy import select, update
from sqlalchemy.orm import Session as DbSession

from veil.release.outputs import verify_release
from veil.server.access import require_role
from veil.server.accounts import Identity, event, now
from veil.server.budget import lock_dataset, reserve, unreserve
from veil.server.clock import aware
from veil.server.config import ServerConfig
from veil.server.database import Database
from veil.server.datasets import time_limit_message
from veil.server.errors import Conflict, InputError
from veil.server.folders import job_paths
from veil.server.models import Dataset, Job, PlanVersion
from veil.server.plans import check_plan, parse_text
from veil.server.releases import adopt_committed

__all__ = [
    "FINISHED",
    "cancel",
    "claim",
    "enqueue",
    "enqueue_profile",
    "job_view",
    "overdue",
    "reclaim",
    "renew",
    "rerun",
    "worker_name",
]

FINISHED = ("done", "failed", "cancelled", "interrupted")
"""States a job does not leave."""


def worker_name() -> str:
    """This process's worker name: host, process id and a random part."""
    return f"{socket.gethostname()[:32]}:{os.getpid()}:{secrets.token_hex(4)}"


def enqueue(
    db: DbSession,
    config: ServerConfig,
    who: Identity,
    version: PlanVersion,
    dataset: Dataset,
    kind: Any,
    rerun_of: int | None = None,
) -> Job:
    """Queue a dry run or a release of ``version`` (re-checked; a release reserves budget)."""
    require_role(who, "curator")
    if kind not in ("dry_run", "run"):
        raise InputError(f"kind: must be 'dry_run' or 'run', got {kind!r}", field="kind")
    if dataset.custody != "encrypted":
        raise Conflict(
            f"dataset {dataset.id}: its raw data was deleted; nothing can be run", field="dataset"
        )
    checked = check_plan(db, config, dataset, parse_text(version.text), ledger=False)
    if not checked.ok:
        raise InputError(
            "plan: refused now (the policy changed since it was saved): "
            + "; ".join(e["message"] for e in checked.errors),
            field="plan",
        )
    assert checked.spend is not None
    # The dataset's budget is held from here to the commit (before the job row, whose
    # foreign key would otherwise share-lock the dataset first and deadlock two queuers).
    lock_dataset(db, dataset.id)
    job = Job(
        uid=secrets.token_hex(16),
        plan_version_id=version.id,
        dataset_id=dataset.id,
        kind=kind,
        status="queued",
        created_by=who.user.id,
        created_at=now(),
        progress={},
        cancel_requested=False,
        rerun_of=rerun_of,
    )
    db.add(job)
    db.flush()
    # The one budget check, under the dataset's lock; a dry run checks and holds nothing.
    reserve(db, job, checked.spend, hold=kind == "run")
    event(
        db,
        who,
        "job.queue",
        "job",
        job.id,
        job_kind=kind,
        plan_version=version.id,
        reserved=None if checked.spend is None or kind != "run" else checked.spend.to_dict(),
    )
    return job


def enqueue_profile(db: DbSession, who: Identity, dataset: Dataset) -> Job:
    """Queue the profile of ``dataset`` (rows, types, missing values, risk summary)."""
    if dataset.custody != "encrypted":
        raise Conflict(
            f"dataset {dataset.id}: its raw data was deleted; nothing can be profiled",
            field="dataset",
        )
    job = Job(
        uid=secrets.token_hex(16),
        plan_version_id=None,
        dataset_id=dataset.id,
        kind="profile",
        status="queued",
        created_by=who.user.id,
        created_at=now(),
        progress={},
        cancel_requested=False,
    )
    db.add(job)
    db.flush()
    dataset.profile_status = "pending"
    event(db, who, "job.queue", "job", job.id, job_kind="profile", dataset=dataset.id)
    return job


def claim(db: Database, worker: str, lease_seconds: float = 15.0) -> int | None:
    """Take the oldest queued job for ``worker`` with a lease; its id, or None."""
    oldest = select(Job.id).where(Job.status == "queued").order_by(Job.id).limit(1)
    if db.postgres:
        oldest = oldest.with_for_update(skip_locked=True)
    moment = now()
    statement = (
        update(Job)
        .where(Job.id == oldest.scalar_subquery(), Job.status == "queued")
        .values(
            status="running",
            worker=worker,
            started_at=moment,
            heartbeat=moment,
            lease_until=moment + timedelta(seconds=lease_seconds),
        )
        .returning(Job.id)
    )
    with db.session() as session:
        return session.execute(statement).scalar_one_or_none()


def renew(db: Database, job_id: int, worker: str, lease_seconds: float) -> bool | None:
    """The worker's heartbeat: extend its lease on ``job_id``.

    Returns whether a cancel was asked, or None when the job is no longer this worker's
    running job (its lease ran out and it was reclaimed): the worker must then stop and
    commit nothing.
    """
    moment = now()
    statement = (
        update(Job)
        .where(Job.id == job_id, Job.worker == worker, Job.status == "running")
        .values(heartbeat=moment, lease_until=moment + timedelta(seconds=lease_seconds))
        .returning(Job.cancel_requested)
    )
    with db.session() as session:
        return session.execute(statement).scalar_one_or_none()


def cancel(db: DbSession, who: Identity, job: Job) -> None:
    """Ask a job to stop: a queued job is cancelled at once, a running one at its next check."""
    if job.status in FINISHED:
        raise Conflict(f"job {job.id}: already {job.status}", field="job")
    if job.kind == "profile":
        raise Conflict(
            f"job {job.id}: a profile is not cancelled (it reads the file once and changes "
            "nothing); delete the dataset's raw data instead",
            field="job",
        )
    if job.status == "queued" or _lost(job):
        before = job.status
        job.status, job.finished_at = "cancelled", now()
        job.error = (
            "cancel: cancelled before it started; nothing was read"
            if before == "queued"
            else "cancel: cancelled; its worker had stopped, nothing was released"
        )
        unreserve(db, job)
    else:
        job.cancel_requested = True
    event(db, who, "job.cancel", "job", job.id, status=job.status)


def rerun(db: DbSession, config: ServerConfig, who: Identity, job: Job) -> Job:
    """A new job for the same plan version as a job that did not finish well."""
    if job.status not in ("failed", "cancelled", "interrupted"):
        raise Conflict(
            f"job {job.id}: is {job.status}; only failed, cancelled or interrupted jobs are re-run",
            field="job",
        )
    dataset = db.get(Dataset, job.dataset_id)
    assert dataset is not None
    if job.kind == "profile":
        fresh = enqueue_profile(db, who, dataset)
        fresh.rerun_of = job.id
        return fresh
    version = db.get(PlanVersion, job.plan_version_id)
    assert version is not None
    return enqueue(db, config, who, version, dataset, job.kind, rerun_of=job.id)


def _alive(worker: str | None) -> bool:
    if not worker:
        return False
    host, _, rest = worker.partition(":")
    pid = rest.partition(":")[0]
    if host != socket.gethostname()[:32] or not pid.isdigit():
        return False
    try:
        os.kill(int(pid), 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _lost(job: Job) -> bool:
    """Whether a running job's lease ran out, or its worker on this host is gone."""
    if job.status != "running":
        return False
    if job.lease_until is not None and aware(job.lease_until) < now():
        return True
    host = (job.worker or "").partition(":")[0]
    return host == socket.gethostname()[:32] and not _alive(job.worker)


def _keep_committed(session: DbSession, config: ServerConfig, job: Job) -> bool:
    """Record a release the run committed before it stopped; whether there was one."""
    paths = job_paths(config, job)
    if job.kind != "run" or not (paths.release / "manifest.json").exists():
        return False
    try:
        verify_release(paths.release)
    except Exception:
        return False
    adopt_committed(session, config, job)
    event(
        session,
        None,
        "job.recovered",
        "job",
        job.id,
        actor="platform",
        actor_role="system",
        note="committed before its worker stopped; kept",
    )
    return True


def reclaim(db: Database, config: ServerConfig, *, all_running: bool = False) -> list[int]:
    """Mark running jobs that lost their worker (or, at a start, all) as interrupted.

    A job has lost its worker when its lease ran out or its worker process on this host
    no longer exists. Returns the ids of the jobs marked; see the module documentation.
    """
    marked: list[int] = []
    with db.session() as session:
        running = session.scalars(
            select(Job).where(Job.status == "running").with_for_update(skip_locked=True)
            if db.postgres
            else select(Job).where(Job.status == "running")
        ).all()
        for job in running:
            if not all_running and not _lost(job):
                continue
            paths = job_paths(config, job)
            shutil.rmtree(paths.work, ignore_errors=True)
            if _keep_committed(session, config, job):
                continue
            shutil.rmtree(paths.base, ignore_errors=True)
            job.status, job.finished_at = "interrupted", now()
            job.error = (
                "interrupted: its worker stopped during the run; nothing was released (re-run it)"
            )
            unreserve(session, job)
            if job.kind == "profile":
                dataset = session.get(Dataset, job.dataset_id)
                if dataset is not None and dataset.profile_status == "pending":
                    dataset.profile_status = "interrupted"
            event(
                session,
                None,
                "job.interrupted",
                "job",
                job.id,
                actor="platform",
                actor_role="system",
                worker=job.worker,
            )
            marked.append(job.id)
    return marked


def overdue(db: Database, config: ServerConfig, grace_seconds: float = 10.0) -> list[str]:
    """Fail running profile jobs past their time limit; the workers that still hold them.

    The worker stops a profile itself when its time is up (between blocks of rows);
    this catches one that does not (a single block that takes too long), so that its
    supervisor can stop the worker process.
    """
    limit = now() - timedelta(seconds=config.profile_seconds + grace_seconds)
    workers: list[str] = []
    with db.session() as session:
        jobs = session.scalars(
            select(Job).where(
                Job.status == "running", Job.kind == "profile", Job.started_at < limit
            )
        ).all()
        for job in jobs:
            job.status, job.finished_at = "failed", now()
            job.error = time_limit_message(config)
            dataset = session.get(Dataset, job.dataset_id)
            if dataset is not None:
                dataset.profile_status = "failed"
                dataset.risk = {"error": job.error}
            event(
                session,
                None,
                "job.failed",
                "job",
                job.id,
                actor="platform",
                actor_role="system",
                error=job.error,
            )
            workers.append(job.worker or "")
    return workers


def job_view(job: Job) -> dict[str, Any]:
    """A job as plain data (for its owner)."""
    return {
        "id": job.id,
        "kind": job.kind,
        "status": job.status,
        "plan_version_id": job.plan_version_id,
        "dataset_id": job.dataset_id,
        "created_at": job.created_at.isoformat(),
        "started_at": None if job.started_at is None else job.started_at.isoformat(),
        "finished_at": None if job.finished_at is None else job.finished_at.isoformat(),
        "progress": job.progress,
        "cancel_requested": job.cancel_requested,
        "error": job.error,
        "result": job.result,
        "rerun_of": job.rerun_of,
    }
