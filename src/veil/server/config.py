"""The platform's configuration: where its data lives and the limits it enforces."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from veil.errors import ParameterError

__all__ = ["ServerConfig"]

_MiB = 1 << 20


@dataclass(frozen=True)
class ServerConfig:
    """Settings of one platform instance.

    Parameters
    ----------
    data_dir : path
        Folder of the platform's files: the SQLite database (by default), the encrypted
        datasets, the releases, and the jobs' private work folders.
    database_url : str, optional
        SQLAlchemy URL (``postgresql+psycopg://...``); default the SQLite file
        ``<data_dir>/veil.db``.
    key_env : str, default "VEIL_SERVER_KEY"
        Environment variable holding the server key (64 hex digits or base64 of 32
        bytes, as :meth:`veil.masking.SecretKey.from_env` reads), which wraps every
        dataset's data key.
    key_file : path, optional
        A key file instead (:meth:`veil.masking.SecretKey.from_file`), used when the
        variable is unset.
    max_upload_bytes : int, default 2 GiB
        Largest upload (after decompression of a gzip file).
    max_compression_ratio : int, default 200
        A gzip upload that expands more than this many times is refused (a zip bomb).
    session_minutes : int, default 480
        Lifetime of a login session.
    secure_cookies : bool, default True
        Mark cookies ``Secure`` (only sent over HTTPS, or to localhost).
    dask_scheduler : str, optional
        Address of a running Dask scheduler (``tcp://host:8786``): releases then run
        on it (``DaskEngine(scheduler)``). The platform never starts a scheduler.
    standalone : bool, default False
        One local user, no login form (``veil ui``); only for a server bound to
        127.0.0.1.
    max_lockout_failures : int, default 5
        Failed logins in a row that lock an account.
    lockout_minutes : int, default 15
    max_attempts_per_client : int, default 30
        Failed logins from one client address in ``attempt_window_minutes``.
    attempt_window_minutes : int, default 10
    poll_seconds : float, default 0.5
        How often a worker looks for queued jobs.
    """

    data_dir: Path
    database_url: str | None = None
    key_env: str = "VEIL_SERVER_KEY"
    key_file: Path | None = None
    max_upload_bytes: int = 2048 * _MiB
    max_compression_ratio: int = 200
    session_minutes: int = 480
    secure_cookies: bool = True
    dask_scheduler: str | None = None
    standalone: bool = False
    max_lockout_failures: int = 5
    lockout_minutes: int = 15
    max_attempts_per_client: int = 30
    attempt_window_minutes: int = 10
    poll_seconds: float = 0.5
    extra: dict[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        object.__setattr__(self, "data_dir", Path(self.data_dir))
        for name in (
            "max_upload_bytes",
            "max_compression_ratio",
            "session_minutes",
            "max_lockout_failures",
            "lockout_minutes",
            "max_attempts_per_client",
            "attempt_window_minutes",
        ):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ParameterError(f"{name}: must be an integer >= 1, got {value!r}")
        if self.dask_scheduler is not None and "://" not in self.dask_scheduler:
            raise ParameterError(
                f"dask_scheduler: must be a scheduler address such as 'tcp://host:8786', "
                f"got {self.dask_scheduler!r}"
            )

    @property
    def url(self) -> str:
        """The database URL in use."""
        if self.database_url:
            return self.database_url
        return f"sqlite:///{os.fspath(self.data_dir / 'veil.db')}"

    def folder(self, name: str) -> Path:
        """A folder of the data directory (``datasets``, ``releases``, ``work``), created."""
        path = self.data_dir / name
        path.mkdir(parents=True, exist_ok=True, mode=0o700)
        return path
