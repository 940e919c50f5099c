"""The job queue, in the database: queue, claim, progress, cancel, recovery.

A job is the profile of a dataset just uploaded (its rows, types, missing values and
risk summary; :func:`enqueue_profile`), or a dry run or a release of one plan version.
Queuing a release re-checks the plan against the policy and the dataset's ledger and
reserves what the plan may spend;
the worker that runs it checks both again (:mod:`veil.server.worker`). Workers claim
queued jobs one at a time: on PostgreSQL with ``FOR UPDATE SKIP LOCKED`` (two workers
never wait on each other nor take the same job), on SQLite with one ``UPDATE`` of the
oldest queued row, which the database's write lock serializes.

When the platform starts, a job still marked running belongs to a worker that no longer
exists: :func:`recover` marks it ``interrupted``, removes its work folder (the plain
copy of the input) and any uncommitted output, and frees its reservation; the job can be
re-run as a new job. A release the run had already committed (its manifest verifies) is
kept and its spend recorded: nothing is lost and nothing is counted twice.
"""

from __future__ import annotations

import os
import secrets
import shutil
import socket
from typing import Any

from sqlalchemy import select, update
from sqlalchemy.orm import Session as DbSession

from veil.release.outputs import verify_release
from veil.server.access import require_role
from veil.server.accounts import Identity, event, now
from veil.server.budget import reserve, unreserve
from veil.server.config import ServerConfig
from veil.server.database import Database
from veil.server.errors import Conflict, InputError
from veil.server.folders import job_paths
from veil.server.models import Dataset, Job, PlanVersion
from veil.server.plans import check_plan, parse_text

__all__ = [
    "FINISHED",
    "cancel",
    "claim",
    "enqueue",
    "enqueue_profile",
    "job_view",
    "recover",
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
    checked = check_plan(db, config, dataset, parse_text(version.text))
    if not checked.ok:
        raise InputError(
            "plan: refused now (the policy or the dataset's budget changed since it was "
            "saved): " + "; ".join(e["message"] for e in checked.errors),
            field="plan",
        )
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
    if kind == "run":
        assert checked.spend is not None
        reserve(db, job, checked.spend)
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


def claim(db: Database, worker: str) -> int | None:
    """Take the oldest queued job for ``worker``; its id, or None when none is queued."""
    oldest = select(Job.id).where(Job.status == "queued").order_by(Job.id).limit(1)
    if db.postgres:
        oldest = oldest.with_for_update(skip_locked=True)
    statement = (
        update(Job)
        .where(Job.id == oldest.scalar_subquery(), Job.status == "queued")
        .values(status="running", worker=worker, started_at=now(), heartbeat=now())
        .returning(Job.id)
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
    if job.status == "queued":
        job.status, job.finished_at = "cancelled", now()
        job.error = "cancel: cancelled before it started; nothing was read"
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


def recover(db: Database, config: ServerConfig, *, all_running: bool = False) -> list[int]:
    """Mark running jobs whose worker is gone (or every running job) as interrupted.

    Returns the ids of the jobs marked. See the module documentation.
    """
    marked: list[int] = []
    with db.session() as session:
        running = session.scalars(select(Job).where(Job.status == "running")).all()
        for job in running:
            if not all_running and _alive(job.worker):
                continue
            paths = job_paths(config, job)
            shutil.rmtree(paths.work, ignore_errors=True)
            committed = False
            if job.kind == "run" and (paths.release / "manifest.json").exists():
                try:
                    verify_release(paths.release)
                    committed = True
                except Exception:
                    committed = False
            if committed:
                from veil.server.releases import adopt_committed

                adopt_committed(session, config, job)
                event(
                    session,
                    None,
                    "job.recovered",
                    "job",
                    job.id,
                    actor="platform",
                    actor_role="system",
                    note="committed before the interruption; kept",
                )
                continue
            shutil.rmtree(paths.base, ignore_errors=True)
            job.status, job.finished_at = "interrupted", now()
            job.error = (
                "interrupted: the platform stopped during the run; nothing was released (re-run it)"
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
