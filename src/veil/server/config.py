"""The platform's configuration: where its data lives and the limits it enforces."""

from __future__ import annotations

import ipaddress
import os
from dataclasses import dataclass, field
from pathlib import Path

from veil.atomic import private_folder
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
        Failed logins in a row before an account's sign-in backs off: each further
        failure doubles the wait before the next try (1 s, 2 s, 4 s, ...). The wait
        applies to addresses the account has not signed in from; from an address it
        has signed in from, only that address's own failures count, so that nobody
        elsewhere can keep an account (the only admin's, say) out.
    lockout_minutes : int, default 15
        Longest wait of the backoff.
    max_attempts_per_client : int, default 30
        Failed logins from one client address in ``attempt_window_minutes``; past it,
        that address signs in only to accounts that have signed in from it before.
    attempt_window_minutes : int, default 10
    known_address_days : int, default 90
        How long a successful sign-in makes its address known to the account.
    trusted_proxies : tuple of str, default ()
        Addresses or networks (``10.0.0.5``, ``10.0.0.0/24``) of reverse proxies whose
        ``X-Forwarded-For``, ``-Proto`` and ``-Host`` headers are believed; from any
        other peer they are ignored (see :mod:`veil.server.web.proxy`).
    allowed_origins : tuple of str, default ()
        Origins (``https://data.example.org``) besides the one the request addressed
        from which state-changing requests are accepted.
    poll_seconds : float, default 0.5
        How often a worker looks for queued jobs.
    heartbeat_seconds : float, default 2
        How often a running job's worker renews its lease (and reads a cancel request).
    lease_seconds : float, default 15
        A running job whose lease is this old has lost its worker: it is marked
        interrupted and its reservation freed (at least twice ``heartbeat_seconds``).
    max_columns : int, default 1000
        Most columns an upload may have (its header is refused past it).
    max_cell_chars : int, default 10000
        Most characters between two separators (comma, line end) of an upload.
    profile_seconds : int, default 300
        Time limit of a profile job; past it the profile is stopped (its worker too if
        it does not stop) and the dataset marked failed.
    audit_checkpoints : path, optional
        Append-only file of the audit log's signed checkpoints; default
        ``<data_dir>/audit-checkpoints.log``. Put it on another disk or host (or make it
        append-only) so that a copy of the database alone cannot hide a truncation.
    """

    data_dir: Path
    database_url: str | None = field(default=None, repr=False)
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
    known_address_days: int = 90
    trusted_proxies: tuple[str, ...] = ()
    allowed_origins: tuple[str, ...] = ()
    poll_seconds: float = 0.5
    heartbeat_seconds: float = 2.0
    lease_seconds: float = 15.0
    max_columns: int = 1000
    max_cell_chars: int = 10_000
    profile_seconds: int = 300
    audit_checkpoints: Path | None = None
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
            "known_address_days",
            "max_columns",
            "max_cell_chars",
            "profile_seconds",
        ):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ParameterError(f"{name}: must be an integer >= 1, got {value!r}")
        for name in ("poll_seconds", "heartbeat_seconds", "lease_seconds"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not value > 0:
                raise ParameterError(f"{name}: must be a number of seconds > 0, got {value!r}")
        if self.lease_seconds < 2 * self.heartbeat_seconds:
            raise ParameterError(
                f"lease_seconds: must be at least twice heartbeat_seconds "
                f"({self.heartbeat_seconds:g}), got {self.lease_seconds!r}"
            )
        object.__setattr__(self, "trusted_proxies", _networks(self.trusted_proxies))
        for origin in self.allowed_origins:
            if not isinstance(origin, str) or "://" not in origin or origin.count("/") != 2:
                raise ParameterError(
                    f"allowed_origins: each must be scheme://host[:port] with no path, "
                    f"got {origin!r}"
                )
        if self.audit_checkpoints is not None:
            object.__setattr__(self, "audit_checkpoints", Path(self.audit_checkpoints))
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

    @property
    def checkpoints(self) -> Path:
        """The audit log's checkpoint file in use."""
        return self.audit_checkpoints or self.data_dir / "audit-checkpoints.log"

    def folder(self, name: str) -> Path:
        """A folder of the data directory (``datasets``, ``releases``, ``work``), made or
        tightened to ``0o700`` (:func:`veil.atomic.private_folder`)."""
        return private_folder(self.data_dir / name)


def _networks(values: object) -> tuple[str, ...]:
    if isinstance(values, str) or not isinstance(values, (tuple, list)):
        raise ParameterError(
            f"trusted_proxies: must be a list of addresses or networks, got {values!r}"
        )
    out = []
    for value in values:
        try:
            out.append(str(ipaddress.ip_network(str(value), strict=False)))
        except ValueError:
            raise ParameterError(
                f"trusted_proxies: {value!r} is not an IP address or network (10.0.0.5, "
                "10.0.0.0/24, ::1)"
            ) from None
    return tuple(out)
