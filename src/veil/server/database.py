"""The database: engine, sessions and migrations (SQLite by default, PostgreSQL by URL)."""

from __future__ import annotations

import logging
import os
from collections.abc import Iterator
from contextlib import contextmanager
from importlib import resources
from pathlib import Path
from typing import Any

from alembic import command
from alembic.config import Config
from sqlalchemy import create_engine, event
from sqlalchemy.engine import Engine
from sqlalchemy.engine.url import make_url
from sqlalchemy.orm import Session, sessionmaker

from veil.server.audit import append_checkpoint

__all__ = ["POOL_SIZE", "Database", "redact_url"]

_LOG = logging.getLogger("veil.server")

POOL_SIZE = 16
"""Connections kept open to a SQLite file, and the web process's request threads."""


def _sqlite_pragmas(dbapi_connection: Any, _record: Any) -> None:
    cursor = dbapi_connection.cursor()
    cursor.execute("PRAGMA journal_mode=WAL")
    cursor.execute("PRAGMA busy_timeout=30000")
    cursor.execute("PRAGMA foreign_keys=ON")
    cursor.close()


def redact_url(url: str) -> str:
    """``url`` with its password hidden, for messages and logs."""
    try:
        return make_url(url).render_as_string(hide_password=True)
    except Exception:
        return "<database URL>"


def private_sqlite_file(url: str) -> None:
    """Create a SQLite database file 0600 (its WAL and shared-memory files follow its mode)."""
    parsed = make_url(url)
    if parsed.get_backend_name() != "sqlite" or not parsed.database:
        return
    if parsed.database == ":memory:":
        return
    path = Path(parsed.database)
    descriptor = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
    os.close(descriptor)
    for name in (path, Path(f"{path}-wal"), Path(f"{path}-shm")):
        if name.exists():
            os.chmod(name, 0o600)


def _forget_checkpoint(session: Session) -> None:
    # Events rolled back are not in the chain: no checkpoint may name them.
    session.info.pop("audit_last", None)


class Database:
    """The platform's database at ``url``.

    SQLite files are opened in WAL mode with a busy timeout, so the web process and the
    workers can write in turn; PostgreSQL is used as it is. ``audit_key`` (derived from
    the server key) lets its sessions write and check the audit chain; after a commit
    that wrote audit events, the chain's signed checkpoint is appended to
    ``checkpoints`` (see :mod:`veil.server.audit`).
    """

    def __init__(
        self, url: str, *, audit_key: bytes | None = None, checkpoints: Path | None = None
    ) -> None:
        self.url = url
        self.checkpoints = checkpoints
        kwargs: dict[str, Any] = {"pool_pre_ping": True}
        if url.startswith("sqlite"):
            # A file has no server to drop a connection: no ping. The pool keeps one
            # connection per request thread, so none is opened (with its pragmas) per request.
            kwargs = {
                "connect_args": {"check_same_thread": False, "timeout": 30},
                "pool_size": POOL_SIZE,
                "max_overflow": POOL_SIZE,
            }
        self.engine: Engine = create_engine(url, **kwargs)
        if self.engine.dialect.name == "sqlite":
            event.listen(self.engine, "connect", _sqlite_pragmas)
        self._sessions = sessionmaker(
            self.engine, expire_on_commit=False, info={"audit_key": audit_key}
        )
        event.listen(self._sessions, "after_commit", self._checkpoint)
        event.listen(self._sessions, "after_rollback", _forget_checkpoint)

    def __repr__(self) -> str:
        return f"Database({redact_url(self.url)!r})"

    def _checkpoint(self, session: Session) -> None:
        last = session.info.pop("audit_last", None)
        key = session.info.get("audit_key")
        if last is None or self.checkpoints is None or not isinstance(key, bytes):
            return
        try:
            append_checkpoint(self.checkpoints, key, *last)
        except OSError:
            _LOG.exception("audit: the checkpoint of entry %s could not be written", last[0])

    @property
    def postgres(self) -> bool:
        """Whether the database is PostgreSQL (jobs are then claimed with SKIP LOCKED)."""
        return self.engine.dialect.name == "postgresql"

    def migrate(self) -> None:
        """Create or upgrade the schema to the newest migration (Alembic ``upgrade head``)."""
        config = Config()
        config.set_main_option(
            "script_location", str(resources.files("veil.server").joinpath("migrations"))
        )
        with self.engine.begin() as connection:
            config.attributes["connection"] = connection
            command.upgrade(config, "head")

    @contextmanager
    def session(self) -> Iterator[Session]:
        """A session whose work is committed at the end, or rolled back on any error."""
        session = self._sessions()
        try:
            yield session
            session.commit()
        except BaseException:
            session.rollback()
            raise
        finally:
            session.close()

    def dispose(self) -> None:
        """Close every pooled connection."""
        self.engine.dispose()
