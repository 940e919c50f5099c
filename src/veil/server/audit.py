"""The append-only, hash-chained audit log, and its verification.

Every event (login, upload, view, plan edit, run, approval, publication, download,
deletion, policy change, account change) is one row whose ``hash`` is the SHA-256 of
the previous row's hash and of the row's own fields in canonical JSON. The chain's end
(its sequence number and hash) is kept in a separate head row updated in the same
transaction, so an event is written with the change it records or not at all.

:func:`verify_audit` recomputes the chain: an edited row, a removed or inserted row, a
re-ordered row or a cut-off tail breaks it. Someone able to rewrite the whole database
could recompute every hash; the head hash that :func:`verify_audit` returns can be
copied elsewhere (a ticket, a log server) to anchor the chain against that too.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any

from sqlalchemy import select, update
from sqlalchemy.orm import Session

from veil.server.models import AuditEntry, AuditHead

__all__ = ["GENESIS", "AuditReport", "record", "verify_audit"]

GENESIS = "0" * 64
"""The ``prev_hash`` of the first entry."""

_FIELDS = ("seq", "at", "actor", "role", "action", "object_type", "object_id", "detail")


def _digest(prev_hash: str, values: dict[str, Any]) -> str:
    body = json.dumps(values, sort_keys=True, separators=(",", ":"), ensure_ascii=True)
    return hashlib.sha256(f"{prev_hash}\n{body}".encode()).hexdigest()


def _values(entry: AuditEntry) -> dict[str, Any]:
    return {name: getattr(entry, name) for name in _FIELDS}


def record(
    session: Session,
    *,
    actor: str,
    role: str,
    action: str,
    object_type: str = "",
    object_id: str | int = "",
    detail: dict[str, Any] | None = None,
) -> AuditEntry:
    """Append one event to the chain, in ``session``'s transaction.

    The head row is updated first, which locks it (a row lock on PostgreSQL, the write
    lock on SQLite), so concurrent writers append one after the other.
    """
    session.execute(update(AuditHead).where(AuditHead.id == 1).values(seq=AuditHead.seq + 1))
    head = session.execute(
        select(AuditHead).where(AuditHead.id == 1).execution_options(populate_existing=True)
    ).scalar_one()
    entry = AuditEntry(
        seq=head.seq,
        at=datetime.now(timezone.utc).isoformat(timespec="microseconds"),
        actor=actor,
        role=role,
        action=action,
        object_type=object_type,
        object_id=str(object_id),
        detail=json.dumps(detail or {}, sort_keys=True, default=str),
        prev_hash=head.hash,
        hash="",
    )
    entry.hash = _digest(entry.prev_hash, _values(entry))
    head.hash = entry.hash
    session.add(entry)
    session.flush()
    return entry


def initial_head(session: Session) -> None:
    """Create the head row of an empty chain, if missing."""
    if session.get(AuditHead, 1) is None:
        session.add(AuditHead(id=1, seq=0, hash=GENESIS))
        session.flush()


@dataclass
class AuditReport:
    """What :func:`verify_audit` found.

    Attributes
    ----------
    entries : int
        Rows read.
    head : str
        The hash of the chain's end (copy it elsewhere to anchor the chain).
    problems : list of str
        One line per break, naming the row; empty when the chain is intact.
    """

    entries: int = 0
    head: str = GENESIS
    problems: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        """Whether the chain is intact."""
        return not self.problems


def verify_audit(session: Session, *, max_problems: int = 20) -> AuditReport:
    """Recompute the chain and compare it with the head row.

    Returns
    -------
    AuditReport
        ``problems`` names each edited, missing, inserted or re-linked row and a tail
        that does not end at the head.
    """
    report = AuditReport()
    prev, expected_seq = GENESIS, 1
    rows = session.execute(select(AuditEntry).order_by(AuditEntry.seq)).scalars()
    for entry in rows:
        report.entries += 1
        if entry.seq != expected_seq:
            report.problems.append(
                f"audit entry {entry.seq}: expected entry {expected_seq} (rows removed or inserted)"
            )
        if entry.prev_hash != prev:
            report.problems.append(
                f"audit entry {entry.seq}: its prev_hash does not match the hash of the entry "
                "before it (the chain was re-linked)"
            )
        if _digest(entry.prev_hash, _values(entry)) != entry.hash:
            report.problems.append(
                f"audit entry {entry.seq}: its content does not match its hash (the row was "
                f"edited: {entry.action} by {entry.actor!r})"
            )
        prev, expected_seq = entry.hash, entry.seq + 1
        if len(report.problems) >= max_problems:
            break
    head = session.get(AuditHead, 1)
    report.head = prev
    if head is None:
        report.problems.append("audit head: missing (the log was not initialised or removed)")
    elif head.seq != expected_seq - 1 or head.hash != prev:
        report.problems.append(
            f"audit head: the chain ends at entry {expected_seq - 1}, but the head records "
            f"entry {head.seq} (entries at the end were removed or added)"
        )
    return report
