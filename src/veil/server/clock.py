"""The platform's time: every stored moment is UTC."""

from __future__ import annotations

from datetime import datetime, timezone

__all__ = ["aware", "now"]


def now() -> datetime:
    """The current time, in UTC."""
    return datetime.now(timezone.utc)


def aware(moment: datetime) -> datetime:
    """``moment`` with its time zone (SQLite returns naive datetimes; every one is UTC)."""
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=timezone.utc)
