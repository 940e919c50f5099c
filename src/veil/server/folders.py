"""Where a job's files live in the data directory."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from veil.server.config import ServerConfig
from veil.server.models import Job

__all__ = ["JobPaths", "job_paths"]


@dataclass(frozen=True)
class JobPaths:
    """A job's folders.

    Attributes
    ----------
    work : Path
        Private work folder: the plain copy of the input while the job runs.
    base : Path
        Holds the release folder and the custodian folder beside it.
    release, custodian : Path
        The release (release file, public manifest) and the custodian folder
        (custodian record, report).
    """

    work: Path
    base: Path
    release: Path
    custodian: Path


def job_paths(config: ServerConfig, job: Job) -> JobPaths:
    """The folders of ``job`` (named by its random id, never by a user's input)."""
    base = config.folder("releases") / job.uid
    return JobPaths(
        config.folder("work") / job.uid, base, base / "release", base / "release.custodian"
    )
