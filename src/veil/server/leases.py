"""Fencing: a worker writes a job's result only while the job is still its own.

A worker that lost its lease (it stalled, or the platform took the job back after its
heartbeat stopped) may still be running; every write of its job's outcome goes through
:func:`held`, which returns the job only while it is running under that worker's name.
"""

from __future__ import annotations

from sqlalchemy import select
from sqlalchemy.orm import Session as DbSession

from veil.server.models import Job

__all__ = ["held"]


def held(session: DbSession, job_id: int, worker: str | None) -> Job | None:
    """The job ``job_id`` if it is running under ``worker`` (locked until commit), else None.

    With ``worker`` None (a caller that claimed nothing: a test running a job by hand)
    the job is returned while it is running.
    """
    statement = select(Job).where(Job.id == job_id).execution_options(populate_existing=True)
    if session.get_bind().dialect.name == "postgresql":
        statement = statement.with_for_update()
    job = session.scalar(statement)
    if job is None or job.status != "running":
        return None
    if worker is not None and job.worker != worker:
        return None
    return job
