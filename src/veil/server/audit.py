"""The append-only audit log: a keyed hash chain with signed checkpoints, and its check.

Every event (login, upload, view, plan edit, run, approval, publication, download,
deletion, policy change, account change) is one row whose ``hash`` is
HMAC-SHA256 (RFC 2104), under a key derived from the server key, of the previous row's
hash and of the row's own fields in canonical JSON. The chain's end (its sequence number
and hash) is kept in a head row updated in the same transaction, so an event is written
with the change it records or not at all.

Without the server key nobody can compute a row's hash: a row edited, inserted, removed
or re-ordered, or a whole chain recomputed, fails :func:`verify_audit`. Cutting the tail
off (and setting the head back) leaves a chain that is consistent in itself, so each
transaction that writes events also appends a **signed checkpoint** (its last entry's
number and hash, with an HMAC under the same key) to a file outside the database
(:attr:`ServerConfig.checkpoints <veil.server.config.ServerConfig.checkpoints>`): a
checkpoint whose entry is missing or different gives the truncation away. The file is
only as safe as where it lives: keep it on another disk or host, or append-only, for an
attacker who could rewrite both.

A chain written by an earlier version (plain SHA-256) is checked and re-keyed once, at
the first start with the server key (:func:`rekey`); the event that records the
re-keying holds the old head.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from sqlalchemy import select, update
from sqlalchemy.orm import Session

from veil.server.models import AuditEntry, AuditHead

__all__ = [
    "GENESIS",
    "KEYED",
    "AuditReport",
    "append_checkpoint",
    "initial_head",
    "record",
    "rekey",
    "verify_audit",
]

GENESIS = "0" * 64
"""The ``prev_hash`` of the first entry."""
KEYED = "hmac-sha256"
"""The scheme of a keyed chain."""
_LEGACY = "sha256"

_TAIL_BYTES = 4 << 20
_FIELDS = ("seq", "at", "actor", "role", "action", "object_type", "object_id", "detail")


class AuditKeyError(RuntimeError):
    """The platform tried to write or check the audit log without its key."""


def _digest(key: bytes | None, prev_hash: str, values: dict[str, Any]) -> str:
    body = json.dumps(values, sort_keys=True, separators=(",", ":"), ensure_ascii=True)
    message = f"{prev_hash}\n{body}".encode()
    if key is None:
        return hashlib.sha256(message).hexdigest()
    return hmac.new(key, b"entry\n" + message, hashlib.sha256).hexdigest()


def _checkpoint_mac(key: bytes, seq: int, digest: str, at: str) -> str:
    message = f"checkpoint\n{seq}\n{digest}\n{at}".encode()
    return hmac.new(key, message, hashlib.sha256).hexdigest()


def _values(entry: AuditEntry) -> dict[str, Any]:
    return {name: getattr(entry, name) for name in _FIELDS}


def _key(session: Session) -> bytes:
    key = session.info.get("audit_key")
    if not isinstance(key, bytes):
        raise AuditKeyError(
            "audit: this database connection has no audit key (open the platform with its "
            "server key)"
        )
    return key


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
    lock on SQLite), so concurrent writers append one after the other. The session's
    commit appends the checkpoint (see :func:`append_checkpoint`).
    """
    key = _key(session)
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
    entry.hash = _digest(key, entry.prev_hash, _values(entry))
    head.hash = entry.hash
    session.add(entry)
    session.flush()
    session.info["audit_last"] = (entry.seq, entry.hash)
    return entry


def append_checkpoint(path: Path, key: bytes, seq: int, digest: str) -> None:
    """Append a signed checkpoint of entry ``seq`` (called once its transaction committed).

    One line, ``seq hash time mac``, appended with ``O_APPEND`` to a file created 0600.
    """
    at = datetime.now(timezone.utc).isoformat(timespec="seconds")
    line = f"{seq} {digest} {at} {_checkpoint_mac(key, seq, digest, at)}\n".encode()
    descriptor = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
    try:
        os.write(descriptor, line)
    finally:
        os.close(descriptor)


def initial_head(session: Session) -> None:
    """Create the head row of an empty chain, if missing."""
    if session.get(AuditHead, 1) is None:
        session.add(AuditHead(id=1, seq=0, hash=GENESIS, scheme=KEYED))
        session.flush()


def rekey(session: Session) -> str | None:
    """Re-key a chain written with plain SHA-256 (once); the old head, or None if keyed.

    The old chain is checked first; its problems, if any, are recorded in the
    re-keying event (the re-keyed chain then starts from what was there).
    """
    key = _key(session)
    head = session.get(AuditHead, 1)
    if head is None or head.scheme == KEYED:
        return None
    legacy = _walk(session, None, max_problems=20)
    prev = GENESIS
    for entry in session.scalars(select(AuditEntry).order_by(AuditEntry.seq)):
        entry.prev_hash = prev
        entry.hash = _digest(key, prev, _values(entry))
        prev = entry.hash
    head.hash, head.scheme = prev, KEYED
    session.flush()
    record(
        session,
        actor="platform",
        role="system",
        action="audit.rekey",
        detail={
            "scheme": KEYED,
            "previous_head": legacy.head,
            "previous_entries": legacy.entries,
            "previous_problems": legacy.problems,
        },
    )
    return legacy.head


@dataclass
class AuditReport:
    """What :func:`verify_audit` found.

    Attributes
    ----------
    entries : int
        Rows read.
    head : str
        The hash of the chain's end (copy it elsewhere to anchor the chain).
    checkpoints : int
        Signed checkpoints read.
    problems : list of str
        One line per break, naming the row; empty when the chain is intact.
    """

    entries: int = 0
    head: str = GENESIS
    checkpoints: int = 0
    problems: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        """Whether the chain is intact."""
        return not self.problems


def _walk(session: Session, key: bytes | None, *, max_problems: int) -> AuditReport:
    """Recompute the chain with ``key`` (None: plain SHA-256) and compare it with the head."""
    report = AuditReport()
    prev, expected_seq = GENESIS, 1
    for entry in session.execute(select(AuditEntry).order_by(AuditEntry.seq)).scalars():
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
        if not hmac.compare_digest(_digest(key, entry.prev_hash, _values(entry)), entry.hash):
            report.problems.append(
                f"audit entry {entry.seq}: its content does not match its keyed hash (the row "
                f"was edited or written without the key: {entry.action} by {entry.actor!r})"
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


def _check_points(
    session: Session, key: bytes, path: Path | None, report: AuditReport, max_problems: int
) -> None:
    """Every signed checkpoint must be genuine and name an entry the chain still has."""
    if path is None or not path.exists():
        return
    hashes: dict[int, str] = {}
    for number, line in enumerate(_tail(path)):
        parts = line.split()
        report.checkpoints += 1
        if len(parts) != 4 or not parts[0].isdigit():
            report.problems.append(f"checkpoint line {number + 1}: malformed")
        else:
            seq, digest, at, mac = int(parts[0]), parts[1], parts[2], parts[3]
            if not hmac.compare_digest(_checkpoint_mac(key, seq, digest, at), mac):
                report.problems.append(
                    f"checkpoint line {number + 1}: its signature does not verify (forged)"
                )
            else:
                if seq not in hashes:
                    found = session.get(AuditEntry, seq)
                    hashes[seq] = "" if found is None else found.hash
                if hashes[seq] != digest:
                    what = "is missing" if not hashes[seq] else "differs"
                    report.problems.append(
                        f"checkpoint of entry {seq} (signed at {at}): the entry {what} in the "
                        "log (entries were cut off or rewritten)"
                    )
        if len(report.problems) >= max_problems:
            return


def _tail(path: Path) -> list[str]:
    """The file's last :data:`_TAIL_BYTES` as whole lines (the newest checkpoints).

    The newest checkpoints are the ones that catch a cut-off tail; older entries are
    protected by their keyed hashes, so a long file (rotate it as any log) is read from
    its end only.
    """
    with open(path, "rb") as handle:
        size = handle.seek(0, os.SEEK_END)
        start = max(0, size - _TAIL_BYTES)
        handle.seek(start)
        text = handle.read().decode("ascii", errors="replace")
    lines = text.splitlines()
    return lines[1:] if start > 0 else lines


def verify_audit(
    session: Session, *, checkpoints: Path | None = None, max_problems: int = 20
) -> AuditReport:
    """Recompute the keyed chain, compare it with the head and the signed checkpoints.

    Parameters
    ----------
    session : Session
        A session of a :class:`~veil.server.database.Database` opened with the audit
        key (derived from the server key).
    checkpoints : path, optional
        The checkpoint file to compare with (``ServerConfig.checkpoints``).

    Returns
    -------
    AuditReport
        ``problems`` names each edited, missing, inserted or re-linked row, a tail that
        does not end at the head, and each checkpoint the log no longer matches.
    """
    key = _key(session)
    head = session.get(AuditHead, 1)
    legacy = head is not None and head.scheme != KEYED
    report = _walk(session, None if legacy else key, max_problems=max_problems)
    if legacy:
        report.problems.append(
            "audit head: the chain is not keyed yet (written before keying; start the "
            "platform once with its server key to re-key it)"
        )
    _check_points(session, key, checkpoints, report, max_problems)
    return report
