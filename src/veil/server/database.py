"""The database: engine, sessions and migrations (SQLite by default, PostgreSQL by URL)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from importlib import resources
from typing import Any

from alembic import command
from alembic.config import Config
from sqlalchemy import create_engine, event
from sqlalchemy.engine import Engine
from sqlalchemy.orm import Session, sessionmaker

__all__ = ["POOL_SIZE", "Database"]

POOL_SIZE = 16
"""Connections kept open to a SQLite file, and the web process's request threads."""


def _sqlite_pragmas(dbapi_connection: Any, _record: Any) -> None:
    cursor = dbapi_connection.cursor()
    cursor.execute("PRAGMA journal_mode=WAL")
    cursor.execute("PRAGMA busy_timeout=30000")
    cursor.execute("PRAGMA foreign_keys=ON")
    cursor.close()


class Database:
    """The platform's database at ``url``.

    SQLite files are opened in WAL mode with a busy timeout, so the web process and the
    workers can write in turn; PostgreSQL is used as it is.
    """

    def __init__(self, url: str) -> None:
        self.url = url
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
        self._sessions = sessionmaker(self.engine, expire_on_commit=False)

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
