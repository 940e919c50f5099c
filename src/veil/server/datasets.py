"""Raw datasets: intake, profile and risk on upload, custody, retention and deletion.

An upload is written encrypted under a random name (``datasets/<uid>.veil``; the name
the user gave the file is kept only as text) while it streams in; the request then reads
only its header line (:func:`veil.release.intake.read_header`) and queues a ``profile``
job, so that no request holds a large file for minutes. A worker profiles it by
streaming through the decrypting reader (:func:`veil.release.intake.profile_csv`, in
bounded memory, never a plain copy on disk) with the risk guidance of
:func:`veil.release.intake.risk_guidance` (:func:`profile_dataset`); the page polls
until the profile and risk summary arrive. A file refused at upload is removed; a file
the profile refuses (a malformed line deep in it) has its raw data deleted, with the
reason in the audit log, and its dataset says why.

Deleting a dataset's raw data destroys its wrapped key and removes its file; the audit
event records the ciphertext's SHA-256 and size, the key id and the reason (the owner,
the retention period, or publication with delete-after-publish), which proves what was
deleted and when.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import secrets
import time
from collections.abc import Callable
from datetime import timedelta
from pathlib import Path
from typing import Any

import pandas as pd
from sqlalchemy import select
from sqlalchemy.orm import Session as DbSession

from veil.errors import VeilError
from veil.release.engine import csv_options
from veil.release.intake import Profile, profile_csv, read_header, risk_guidance
from veil.release.plan import InputSpec
from veil.server.accounts import Identity, event, now
from veil.server.clock import aware
from veil.server.config import ServerConfig
from veil.server.custody import CHUNK, DecryptingReader, KeyRing
from veil.server.database import Database
from veil.server.errors import Conflict, InputError
from veil.server.leases import held
from veil.server.models import Dataset, Job
from veil.server.uploads import UploadSink

__all__ = [
    "DatasetForm",
    "delete_raw",
    "new_upload",
    "profile_dataset",
    "read_records",
    "register_upload",
    "require_profile",
    "sweep_retention",
    "time_limit_message",
]

_MAX_NAME = 200


def _file(config: ServerConfig, uid: str) -> Path:
    return config.folder("datasets") / f"{uid}.veil"


class DatasetForm:
    """The fields of an upload besides the file, checked."""

    def __init__(self, name: Any, retention_days: Any, delete_after_publish: Any) -> None:
        text = "" if name is None else str(name).strip()
        if not 1 <= len(text) <= _MAX_NAME:
            raise InputError(f"name: must be 1 to {_MAX_NAME} characters", field="name")
        if any(ord(c) < 32 for c in text):
            raise InputError("name: must not hold control characters", field="name")
        self.name = text
        days = None if retention_days in (None, "") else str(retention_days).strip()
        if days is None or days == "":
            self.retention_days: int | None = None
        else:
            if not days.isdigit() or not 1 <= int(days) <= 36500:
                raise InputError(
                    f"retention_days: must be a whole number of days from 1 to 36500, or "
                    f"empty to keep the data, got {retention_days!r}",
                    field="retention_days",
                )
            self.retention_days = int(days)
        self.delete_after_publish = delete_after_publish in (True, "true", "on", "1", "yes")


def new_upload(config: ServerConfig, keyring: KeyRing) -> tuple[str, bytes, UploadSink]:
    """A fresh dataset id, its data key and the sink its bytes go through."""
    uid = secrets.token_hex(16)
    key = keyring.new_data_key()
    sink = UploadSink(
        _file(config, uid),
        key,
        uid,
        max_bytes=config.max_upload_bytes,
        max_ratio=config.max_compression_ratio,
        max_cell_chars=config.max_cell_chars,
    )
    return uid, key, sink


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def _opener(path: Path, data_key: bytes, uid: str) -> Callable[[], io.BufferedReader]:
    return lambda: io.BufferedReader(DecryptingReader(path, data_key, uid), CHUNK)


def register_upload(
    db: DbSession,
    who: Identity,
    keyring: KeyRing,
    uid: str,
    data_key: bytes,
    sink: UploadSink,
    form: DatasetForm,
    original_name: str,
    max_columns: int,
) -> Dataset:
    """Record the stored upload (its header checked); the caller queues its profile.

    The file is removed when its header is refused, or names more than
    ``max_columns`` columns.
    """
    path = sink.path
    try:
        names = read_header(_opener(path, data_key, uid))
        if len(names) > max_columns:
            raise InputError(
                f"file: has {len(names):,} columns; the limit is {max_columns:,} "
                "(veil serve --max-columns)",
                field="file",
            )
    except VeilError as exc:
        with contextlib.suppress(FileNotFoundError):
            path.unlink()
        raise InputError(str(exc), field="file") from None
    dataset = Dataset(
        uid=uid,
        name=form.name,
        owner_id=who.user.id,
        created_at=now(),
        custody="encrypted",
        wrapped_key=keyring.wrap(data_key, uid),
        key_id=keyring.key_id,
        size_bytes=sink.plain_bytes,
        cipher_sha256=_sha256(path),
        profile={
            "rows": None,
            "columns": [{"name": n, "type": "pending", "missing": None} for n in names],
            "original_name": original_name[:200],
        },
        risk={},
        profile_status="pending",
        retention_days=form.retention_days,
        delete_after_publish=form.delete_after_publish,
    )
    db.add(dataset)
    db.flush()
    event(
        db,
        who,
        "dataset.upload",
        "dataset",
        dataset.id,
        name=dataset.name,
        bytes=dataset.size_bytes,
        columns=len(names),
        cipher_sha256=dataset.cipher_sha256,
        key_id=dataset.key_id,
        compressed=sink.compressed,
    )
    return dataset


def profile_dataset(
    db: Database,
    config: ServerConfig,
    keyring: KeyRing,
    job_id: int,
    progress: Callable[[int], None] | None = None,
    worker: str | None = None,
) -> None:
    """A worker's profile job: stream the dataset's profile and risk summary into its row.

    Nothing is written unless the job is still ``worker``'s (see
    :func:`veil.server.leases.held`).

    The profile stops once it has run ``config.profile_seconds`` (checked after each
    block of rows). The time left is the risk guidance's limit: a combination scan it
    stops keeps the combinations it measured, and the summary says how many.

    Raises
    ------
    InputError
        The file is not a valid CSV table (naming ``file``): its raw data is then
        deleted, with the reason, and the dataset is marked ``failed``. Or the time
        limit ran out (naming ``profile``): the dataset is marked ``failed`` and keeps
        its raw data (re-run the job with a longer limit, or delete it).
    """
    with db.session() as session:
        job = session.get(Job, job_id)
        assert job is not None
        dataset = session.get(Dataset, job.dataset_id)
        assert dataset is not None
        if dataset.custody != "encrypted" or dataset.wrapped_key is None:
            raise Conflict(f"dataset {dataset.id}: its raw data was deleted", field="dataset")
        uid, dataset_id = dataset.uid, dataset.id
        key = keyring.unwrap(dataset.wrapped_key, uid)
    started = time.monotonic()

    def left() -> float:
        remaining = config.profile_seconds - (time.monotonic() - started)
        if remaining <= 0:
            raise _TimeUp(time_limit_message(config))
        return remaining

    def tick(rows: int) -> None:
        left()
        if progress is not None:
            progress(rows)

    try:
        profile = profile_csv(_opener(_file(config, uid), key, uid), rng=None, progress=tick)
        # The combination scan stops itself at the time left and keeps what it
        # measured (``risk["scanned"]`` says how far it went): the profile stands.
        risk = _risk(profile, left())
    except _TimeUp as exc:
        _failed(db, job_id, worker, dataset_id, str(exc), None)
        raise InputError(str(exc), field="profile") from None
    except VeilError as exc:
        _failed(db, job_id, worker, dataset_id, str(exc), config)
        raise InputError(str(exc), field="file") from None
    with db.session() as session:
        dataset = session.get(Dataset, dataset_id)
        if held(session, job_id, worker) is None or dataset is None:
            return
        original = dataset.profile.get("original_name", "")
        dataset.profile = {**profile.to_dict(), "original_name": original}
        dataset.risk = risk
        dataset.profile_status = "done"
        event(
            session,
            None,
            "dataset.profile",
            "dataset",
            dataset.id,
            actor="worker",
            actor_role="system",
            rows=profile.rows,
            columns=len(profile.columns),
        )


class _TimeUp(VeilError):
    """A profile ran past its time limit."""


def _risk(profile: Profile, seconds: float) -> dict[str, Any]:
    """The risk summary of ``profile``, or why it could not be made (the profile stands).

    A table the risk scan refuses (too many columns to combine, say) is no defect of
    the file: its profile is kept and the summary says why it is missing.
    """
    try:
        return risk_guidance(profile, time_limit=seconds).to_dict()
    except _TimeUp:
        raise
    except VeilError as exc:
        return {"error": f"risk summary: not made ({exc})"}


def _failed(
    db: Database,
    job_id: int,
    worker: str | None,
    dataset_id: int,
    message: str,
    config: ServerConfig | None,
) -> None:
    """Mark a dataset whose profile failed; with ``config``, the file was refused: its raw
    data is deleted, with the reason."""
    with db.session() as session:
        dataset = session.get(Dataset, dataset_id)
        if held(session, job_id, worker) is None or dataset is None:
            return
        if config is not None:
            delete_raw(session, config, None, dataset, f"refused by its profile: {message}"[:200])
        dataset.profile_status, dataset.risk = "failed", {"error": message}


def time_limit_message(config: ServerConfig) -> str:
    """Why a profile stopped at its time limit."""
    return (
        f"profile: stopped after its time limit of {config.profile_seconds} s "
        "(veil serve --profile-seconds); a table this wide or long needs a longer limit"
    )


def require_profile(dataset: Dataset) -> None:
    """Refuse planning on a dataset whose profile has not arrived (or failed)."""
    if dataset.profile_status != "done":
        raise Conflict(
            f"dataset {dataset.id}: its profile is {dataset.profile_status}; plans need the "
            "profile (wait for it, or re-run its job from the dataset's page)",
            field="dataset",
        )


def dataset_view(dataset: Dataset) -> dict[str, Any]:
    """What the owner sees of a dataset (profile and risk are confidential to them)."""
    expires = (
        None
        if dataset.retention_days is None
        else (aware(dataset.created_at) + timedelta(days=dataset.retention_days)).isoformat()
    )
    return {
        "id": dataset.id,
        "name": dataset.name,
        "custody": dataset.custody,
        "created_at": dataset.created_at.isoformat(),
        "size_bytes": dataset.size_bytes,
        "key_id": dataset.key_id,
        "cipher_sha256": dataset.cipher_sha256,
        "profile": dataset.profile,
        "profile_status": dataset.profile_status,
        "risk": dataset.risk,
        "retention_days": dataset.retention_days,
        "delete_after_publish": dataset.delete_after_publish,
        "expires_at": expires,
        "deleted_at": None if dataset.deleted_at is None else dataset.deleted_at.isoformat(),
        "deletion_reason": dataset.deletion_reason,
    }


def set_retention(db: DbSession, who: Identity, dataset: Dataset, form: DatasetForm) -> None:
    """Change the retention period and delete-after-publish of a dataset."""
    dataset.retention_days = form.retention_days
    dataset.delete_after_publish = form.delete_after_publish
    event(
        db,
        who,
        "dataset.retention",
        "dataset",
        dataset.id,
        retention_days=form.retention_days,
        delete_after_publish=form.delete_after_publish,
    )


def read_records(
    keyring: KeyRing, config: ServerConfig, dataset: Dataset, spec: InputSpec
) -> pd.DataFrame:
    """The dataset's records, decrypted into this process's memory, read as ``spec`` says.

    The plain text exists only in this process's memory, a block at a time as the CSV
    parser reads it; nothing is written to disk, so a killed worker leaves no plain copy
    behind. The read options are the plan's (:func:`veil.release.engine.input_spec`).
    """
    if dataset.custody != "encrypted":
        raise Conflict(f"dataset {dataset.id}: its raw data was deleted", field="dataset")
    key = keyring.unwrap(dataset.wrapped_key, dataset.uid)
    with _opener(_file(config, dataset.uid), key, dataset.uid)() as source:
        try:
            frame: pd.DataFrame = pd.read_csv(source, **csv_options(spec))
        except (ValueError, OSError) as exc:
            reason = " ".join(str(exc).split())[:300]
            raise InputError(
                f"input: the dataset cannot be read ({reason})", field="input"
            ) from None
    return frame


def delete_raw(
    db: DbSession, config: ServerConfig, who: Identity | None, dataset: Dataset, reason: str
) -> None:
    """Destroy the dataset's key and file, with the audit event that proves it."""
    if dataset.custody == "deleted":
        raise Conflict(f"dataset {dataset.id}: already deleted", field="dataset")
    path = _file(config, dataset.uid)
    cipher = _sha256(path) if path.exists() else dataset.cipher_sha256
    dataset.wrapped_key = None
    dataset.custody = "deleted"
    dataset.deleted_at = now()
    dataset.deletion_reason = reason
    db.flush()
    with contextlib.suppress(FileNotFoundError):
        path.unlink()
    event(
        db,
        who,
        "dataset.delete",
        "dataset",
        dataset.id,
        actor="platform",
        actor_role="system",
        reason=reason,
        cipher_sha256=cipher,
        bytes=dataset.size_bytes,
        key_id=dataset.key_id,
        key_destroyed=True,
        file_removed=not path.exists(),
    )


def sweep_retention(db: DbSession, config: ServerConfig) -> int:
    """Delete every dataset past its retention period; returns how many."""
    count = 0
    for dataset in db.scalars(
        select(Dataset).where(Dataset.custody == "encrypted", Dataset.retention_days.is_not(None))
    ):
        assert dataset.retention_days is not None
        if aware(dataset.created_at) + timedelta(days=dataset.retention_days) <= now():
            delete_raw(db, config, None, dataset, f"retention of {dataset.retention_days} days")
            count += 1
    return count
