"""The platform's tables (SQLAlchemy 2 declarative models).

The schema is created and upgraded by the Alembic migrations in
``veil/server/migrations`` (:func:`veil.server.database.migrate`); these classes are
how the code reads and writes it. Secrets are never stored in the clear: passwords as
argon2id hashes, session ids and API tokens as SHA-256 digests, each dataset's data key
wrapped by the server key.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import (
    JSON,
    Boolean,
    DateTime,
    Float,
    ForeignKey,
    Integer,
    LargeBinary,
    String,
    Text,
)
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column

__all__ = [
    "MAX_ID",
    "ROLES",
    "ApiToken",
    "AuditEntry",
    "AuditHead",
    "Base",
    "BudgetEntry",
    "Dataset",
    "DatasetReviewer",
    "Job",
    "LoginAttempt",
    "LoginBackoff",
    "OperatorPolicy",
    "Plan",
    "PlanVersion",
    "Release",
    "Session",
    "SignIn",
    "User",
]

MAX_ID = 2**31 - 1
"""Largest id (and whole-number field) the tables hold: PostgreSQL's INTEGER."""

ROLES = ("admin", "operator", "curator", "data_user")
"""Account roles: accounts; algorithms and policy; raw datasets and releases; published data."""


class Base(DeclarativeBase):
    """Base of every table."""


class User(Base):
    """An account with one role."""

    __tablename__ = "users"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    username: Mapped[str] = mapped_column(String(64), unique=True)
    role: Mapped[str] = mapped_column(String(16))
    password_hash: Mapped[str] = mapped_column(String(255))
    active: Mapped[bool] = mapped_column(Boolean, default=True)
    failed_logins: Mapped[int] = mapped_column(Integer, default=0)
    locked_until: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    created_by: Mapped[int | None] = mapped_column(Integer, nullable=True)
    password_state: Mapped[str] = mapped_column(String(16), default="ok")


class Session(Base):
    """A logged-in browser: the cookie's SHA-256 digest, its CSRF token and expiry."""

    __tablename__ = "sessions"

    id: Mapped[str] = mapped_column(String(64), primary_key=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"))
    csrf_token: Mapped[str] = mapped_column(String(64))
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    expires_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    must_change: Mapped[bool] = mapped_column(Boolean, default=False)


class ApiToken(Base):
    """A token for scripts: scoped to one role, stored as its SHA-256 digest."""

    __tablename__ = "api_tokens"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"))
    name: Mapped[str] = mapped_column(String(64))
    role: Mapped[str] = mapped_column(String(16))
    token_hash: Mapped[str] = mapped_column(String(64), unique=True)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    revoked: Mapped[bool] = mapped_column(Boolean, default=False)


class LoginAttempt(Base):
    """A failed login, for rate limiting by client address."""

    __tablename__ = "login_attempts"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    client: Mapped[str] = mapped_column(String(64), index=True)
    at: Mapped[datetime] = mapped_column(DateTime(timezone=True), index=True)


class SignIn(Base):
    """A successful sign-in: the account and the client address it came from."""

    __tablename__ = "sign_ins"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"))
    client: Mapped[str] = mapped_column(String(64))
    at: Mapped[datetime] = mapped_column(DateTime(timezone=True))


class LoginBackoff(Base):
    """Failed sign-ins in a row under one key (an account, or an account at an address)."""

    __tablename__ = "login_backoff"

    key: Mapped[str] = mapped_column(String(160), primary_key=True)
    failures: Mapped[int] = mapped_column(Integer, default=0)
    next_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)
    updated_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))


class OperatorPolicy(Base):
    """The operator's policy (one row): limits no curator can override.

    ``max_attack_success`` maps an attack of :mod:`veil.attacks` to the largest success
    rate a release may let it reach (the attack then runs on every release).
    """

    __tablename__ = "operator_policy"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    max_ldp_epsilon: Mapped[float | None] = mapped_column(Float, nullable=True)
    max_ldp_delta: Mapped[float | None] = mapped_column(Float, nullable=True)
    max_metric_epsilon: Mapped[float | None] = mapped_column(Float, nullable=True)
    dataset_ldp_epsilon: Mapped[float | None] = mapped_column(Float, nullable=True)
    dataset_ldp_delta: Mapped[float | None] = mapped_column(Float, nullable=True)
    dataset_metric_epsilon: Mapped[float | None] = mapped_column(Float, nullable=True)
    min_k: Mapped[int | None] = mapped_column(Integer, nullable=True)
    allowed_methods: Mapped[list[str] | None] = mapped_column(JSON, nullable=True)
    allow_leaks: Mapped[bool] = mapped_column(Boolean, default=False)
    four_eyes: Mapped[bool] = mapped_column(Boolean, default=True)
    max_attack_success: Mapped[dict[str, float] | None] = mapped_column(JSON, nullable=True)
    updated_by: Mapped[int | None] = mapped_column(Integer, nullable=True)
    updated_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)


class Dataset(Base):
    """A raw table owned by a curator, encrypted at rest."""

    __tablename__ = "datasets"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    uid: Mapped[str] = mapped_column(String(32), unique=True)
    name: Mapped[str] = mapped_column(String(200))
    owner_id: Mapped[int] = mapped_column(ForeignKey("users.id"))
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    custody: Mapped[str] = mapped_column(String(16))
    wrapped_key: Mapped[bytes | None] = mapped_column(LargeBinary, nullable=True)
    key_id: Mapped[str] = mapped_column(String(32))
    size_bytes: Mapped[int] = mapped_column(Integer)
    cipher_sha256: Mapped[str] = mapped_column(String(64))
    profile: Mapped[dict[str, Any]] = mapped_column(JSON)
    risk: Mapped[dict[str, Any]] = mapped_column(JSON)
    profile_status: Mapped[str] = mapped_column(String(16), default="done")
    retention_days: Mapped[int | None] = mapped_column(Integer, nullable=True)
    delete_after_publish: Mapped[bool] = mapped_column(Boolean, default=False)
    deleted_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)
    deletion_reason: Mapped[str | None] = mapped_column(String(200), nullable=True)


class DatasetReviewer(Base):
    """A curator assigned (by an admin) to review the releases of one dataset."""

    __tablename__ = "dataset_reviewers"

    dataset_id: Mapped[int] = mapped_column(
        ForeignKey("datasets.id", ondelete="CASCADE"), primary_key=True
    )
    user_id: Mapped[int] = mapped_column(
        ForeignKey("users.id", ondelete="CASCADE"), primary_key=True
    )
    assigned_by: Mapped[int] = mapped_column(Integer)
    assigned_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))


class Plan(Base):
    """A release plan of one dataset; its text lives in numbered versions."""

    __tablename__ = "plans"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    dataset_id: Mapped[int] = mapped_column(ForeignKey("datasets.id"))
    name: Mapped[str] = mapped_column(String(200))
    created_by: Mapped[int] = mapped_column(ForeignKey("users.id"))
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))


class PlanVersion(Base):
    """One version of a plan: every edit is a new version (never changed afterwards)."""

    __tablename__ = "plan_versions"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    plan_id: Mapped[int] = mapped_column(ForeignKey("plans.id"))
    number: Mapped[int] = mapped_column(Integer)
    text: Mapped[str] = mapped_column(Text)
    note: Mapped[str] = mapped_column(String(500), default="")
    created_by: Mapped[int] = mapped_column(ForeignKey("users.id"))
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    ledger: Mapped[dict[str, Any]] = mapped_column(JSON)
    errors: Mapped[list[dict[str, Any]]] = mapped_column(JSON)


class Job(Base):
    """A queued job done by a worker: a dry run or a release of a plan version, or the
    profile of a dataset just uploaded (kind ``profile``, no plan version)."""

    __tablename__ = "jobs"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    uid: Mapped[str] = mapped_column(String(32), unique=True)
    plan_version_id: Mapped[int | None] = mapped_column(
        ForeignKey("plan_versions.id"), nullable=True
    )
    dataset_id: Mapped[int] = mapped_column(ForeignKey("datasets.id"))
    kind: Mapped[str] = mapped_column(String(16))
    status: Mapped[str] = mapped_column(String(16), index=True)
    created_by: Mapped[int] = mapped_column(ForeignKey("users.id"))
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    started_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)
    finished_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)
    heartbeat: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)
    lease_until: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)
    worker: Mapped[str | None] = mapped_column(String(64), nullable=True)
    cancel_requested: Mapped[bool] = mapped_column(Boolean, default=False)
    progress: Mapped[dict[str, Any]] = mapped_column(JSON)
    error: Mapped[str | None] = mapped_column(Text, nullable=True)
    result: Mapped[dict[str, Any] | None] = mapped_column(JSON, nullable=True)
    rerun_of: Mapped[int | None] = mapped_column(Integer, nullable=True)


class BudgetEntry(Base):
    """A line of a dataset's ledger: a job's reservation, or a release's spend."""

    __tablename__ = "budget_entries"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    dataset_id: Mapped[int] = mapped_column(ForeignKey("datasets.id"), index=True)
    job_id: Mapped[int] = mapped_column(ForeignKey("jobs.id"), unique=True)
    state: Mapped[str] = mapped_column(String(16))
    ldp_epsilon: Mapped[float] = mapped_column(Float)
    ldp_delta: Mapped[float] = mapped_column(Float)
    metric_epsilon: Mapped[float] = mapped_column(Float)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))


class Release(Base):
    """A committed release: draft, awaiting approval, approved, published or rejected."""

    __tablename__ = "releases"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    uid: Mapped[str] = mapped_column(String(32), unique=True)
    job_id: Mapped[int] = mapped_column(ForeignKey("jobs.id"), unique=True)
    dataset_id: Mapped[int] = mapped_column(ForeignKey("datasets.id"))
    plan_version_id: Mapped[int] = mapped_column(ForeignKey("plan_versions.id"))
    title: Mapped[str] = mapped_column(String(200))
    status: Mapped[str] = mapped_column(String(24))
    file_name: Mapped[str] = mapped_column(String(200))
    file_format: Mapped[str] = mapped_column(String(16))
    file_sha256: Mapped[str] = mapped_column(String(64))
    rows: Mapped[int] = mapped_column(Integer)
    manifest: Mapped[dict[str, Any]] = mapped_column(JSON)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    requested_by: Mapped[int | None] = mapped_column(Integer, nullable=True)
    approved_by: Mapped[int | None] = mapped_column(Integer, nullable=True)
    published_by: Mapped[int | None] = mapped_column(Integer, nullable=True)
    published_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)
    approval_flags: Mapped[list[str] | None] = mapped_column(JSON, nullable=True)


class AuditHead(Base):
    """The end of the audit chain (one row): its sequence number, hash and scheme."""

    __tablename__ = "audit_head"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    seq: Mapped[int] = mapped_column(Integer)
    hash: Mapped[str] = mapped_column(String(64))
    scheme: Mapped[str] = mapped_column(String(16), default="hmac-sha256")


class AuditEntry(Base):
    """One event of the append-only, hash-chained audit log."""

    __tablename__ = "audit_log"

    seq: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=False)
    at: Mapped[str] = mapped_column(String(40))
    actor: Mapped[str] = mapped_column(String(64))
    role: Mapped[str] = mapped_column(String(16))
    action: Mapped[str] = mapped_column(String(40))
    object_type: Mapped[str] = mapped_column(String(24))
    object_id: Mapped[str] = mapped_column(String(40))
    detail: Mapped[str] = mapped_column(Text)
    prev_hash: Mapped[str] = mapped_column(String(64))
    hash: Mapped[str] = mapped_column(String(64))
