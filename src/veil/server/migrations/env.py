"""Alembic environment of the platform's database (run by veil.server.database.migrate)."""

from __future__ import annotations

from alembic import context

from veil.server.models import Base


def _migrate() -> None:
    connection = context.config.attributes["connection"]
    context.configure(
        connection=connection,
        target_metadata=Base.metadata,
        render_as_batch=connection.dialect.name == "sqlite",
    )
    with context.begin_transaction():
        context.run_migrations()


# Alembic runs this file to migrate; importing it elsewhere (a doctest collection) does nothing.
if getattr(context, "config", None) is not None:
    _migrate()
