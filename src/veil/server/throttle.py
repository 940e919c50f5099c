"""Backoff after failed sign-ins, per account and per account at one address.

The counters behind :mod:`veil.server.signin` (which explains the rules): a key's
failures in a row, and the earliest moment of its next try. Rows idle for a day are
removed as new failures come in.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from sqlalchemy import delete, select
from sqlalchemy.orm import Session as DbSession

from veil.server.clock import aware, now
from veil.server.config import ServerConfig
from veil.server.models import LoginBackoff

__all__ = [
    "account_key",
    "backing_off",
    "clear_backoff",
    "fail",
    "pair_key",
    "unlock",
    "waiting",
]


def account_key(username: str) -> str:
    """The key of an account's failures from addresses it has not signed in from."""
    return f"account:{username.lower()[:64]}"


def pair_key(username: str, client: str) -> str:
    """The key of one address's failures at one account."""
    return f"pair:{username.lower()[:64]}:{client[:64]}"


def waiting(db: DbSession, keys: list[str]) -> datetime | None:
    """The latest moment any of ``keys`` must wait for (None when none waits)."""
    rows = db.scalars(select(LoginBackoff).where(LoginBackoff.key.in_(keys))).all()
    waits = [aware(r.next_at) for r in rows if r.next_at is not None]
    latest = max(waits, default=None)
    return latest if latest is not None and latest > now() else None


def backing_off(db: DbSession, username: str) -> bool:
    """Whether the account waits before tries from addresses it has not signed in from."""
    return waiting(db, [account_key(username)]) is not None


def fail(db: DbSession, keys: list[str], config: ServerConfig) -> None:
    """Count one more failure under each key; past the threshold, double the wait."""
    moment = now()
    db.execute(delete(LoginBackoff).where(LoginBackoff.updated_at < moment - timedelta(days=1)))
    for key in keys:
        row = db.get(LoginBackoff, key)
        if row is None:
            row = LoginBackoff(key=key, failures=0, next_at=None, updated_at=moment)
            db.add(row)
        row.failures += 1
        row.updated_at = moment
        over = row.failures - config.max_lockout_failures
        if over >= 0:
            seconds = min(2.0 ** min(over, 30), config.lockout_minutes * 60.0)
            row.next_at = moment + timedelta(seconds=seconds)
    db.flush()


def clear_backoff(db: DbSession, keys: list[str]) -> None:
    """Forget the failures under ``keys``."""
    db.execute(delete(LoginBackoff).where(LoginBackoff.key.in_(keys)))


def unlock(db: DbSession, username: str) -> None:
    """Forget every failure at an account, from every address (an admin's unlock)."""
    name = username.lower()[:64]
    db.execute(
        delete(LoginBackoff).where(
            (LoginBackoff.key == account_key(name))
            | LoginBackoff.key.startswith(f"pair:{name}:", autoescape=True)
        )
    )
