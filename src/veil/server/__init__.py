"""The veil platform: curators, operators and data users on one server.

A thin layer over :mod:`veil.release` (it holds no privacy arithmetic): accounts and
roles (admin, operator, curator, data user), datasets encrypted at rest with custody
status and retention, versioned plans, the operator's policy, one ledger per dataset
across its releases, jobs run by worker processes from a queue in the database (or
handed to a Dask scheduler), approval and publication, and a hash-chained audit log.
FastAPI + SQLAlchemy + Alembic, Jinja2 + htmx; SQLite by default, PostgreSQL by URL.

:func:`open_platform` opens (and migrates) a platform's database; :func:`create_app`
builds the web application; :func:`veil.server.worker.run_worker` runs the jobs;
:func:`verify` checks the audit chain. The command line is ``veil serve``, ``veil ui``
and ``veil server verify-audit``.
"""

from __future__ import annotations

from dataclasses import dataclass

from fastapi import FastAPI
from sqlalchemy import func, select
from sqlalchemy.exc import SQLAlchemyError

from veil.atomic import private_folder
from veil.gate import redact, redact_url
from veil.masking import SecretKey
from veil.server.accounts import create_user
from veil.server.audit import AuditReport, initial_head, rekey, verify_audit
from veil.server.budget import get_policy
from veil.server.config import ServerConfig
from veil.server.custody import KeyRing, load_server_key
from veil.server.database import Database, private_sqlite_file
from veil.server.errors import InputError
from veil.server.jobs import reclaim
from veil.server.models import User
from veil.server.security import new_token
from veil.server.worker import run_worker

__all__ = [
    "Platform",
    "ServerConfig",
    "create_app",
    "ensure_user",
    "open_platform",
    "run_worker",
    "verify",
]


@dataclass
class Platform:
    """An opened platform: its configuration, database and key ring."""

    config: ServerConfig
    db: Database
    keyring: KeyRing


def open_platform(config: ServerConfig, *, key: SecretKey | None = None) -> Platform:
    """Open the platform's database (created or upgraded) with its server key.

    Parameters
    ----------
    config : ServerConfig
    key : SecretKey, optional
        The server key; by default read from ``config.key_env`` or ``config.key_file``.

    Raises
    ------
    InputError
        The database cannot be opened: the message names it without its credentials
        (:func:`veil.gate.redact_url`) and says why in one line.
    """
    private_folder(config.data_dir)
    server_key = key if key is not None else load_server_key(config.key_env, config.key_file)
    keyring = KeyRing(server_key)
    private_sqlite_file(config.url)
    db = None
    try:
        db = Database(config.url, audit_key=keyring.audit_key, checkpoints=config.checkpoints)
        db.migrate()
    except SQLAlchemyError as exc:
        if db is not None:
            db.dispose()
        reason = " ".join(str(getattr(exc, "orig", None) or exc).split())[:300]
        raise InputError(
            redact(f"database_url: cannot open {redact_url(config.url)} ({reason})"),
            field="database_url",
        ) from None
    with db.session() as session:
        initial_head(session)
        rekey(session)
        policy = get_policy(session)
        if config.standalone and policy.updated_at is None:
            policy.four_eyes = False
    return Platform(config, db, keyring)


def ensure_user(platform: Platform, username: str, role: str) -> str | None:
    """Create ``username`` with a random one-time password if no account has ``role``.

    The password signs in once, into a session that must set a new password. Returns
    it, or None when such an account exists.
    """
    with platform.db.session() as session:
        count = session.scalar(select(func.count()).select_from(User).where(User.role == role))
        if count:
            return None
        password = new_token()[:24]
        create_user(session, None, username, role, password, one_time=True)
        return password


def create_app(platform: Platform, *, recover_jobs: bool = True) -> FastAPI:
    """The web application of ``platform``.

    With ``recover_jobs`` (the default, for a server start) every job still marked
    running is marked interrupted first (see :func:`veil.server.jobs.reclaim`).
    """
    from veil.server.web.app import build_app

    if recover_jobs:
        reclaim(platform.db, platform.config, all_running=True)
    return build_app(platform.config, platform.keyring, platform.db)


def verify(platform: Platform) -> AuditReport:
    """Check the audit chain (see :func:`veil.server.audit.verify_audit`)."""
    with platform.db.session() as session:
        return verify_audit(session, checkpoints=platform.config.checkpoints)
