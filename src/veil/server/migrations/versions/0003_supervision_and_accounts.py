"""Leases on jobs, who created each account, sign-in history and backoff, reviewers per
dataset, approval flags, one-time passwords, and the audit chain's keying scheme.

* ``jobs.lease_until``: a running job's lease, renewed by its worker's heartbeat; a job
  whose lease ran out has lost its worker.
* ``users.created_by`` and ``users.password_state`` (``ok``, ``one_time`` or
  ``one_time_used``); ``sessions.must_change`` (a session that may only change its
  password).
* ``sign_ins``: each successful sign-in's account and client address (the addresses an
  account is known at, and the history four-eyes compares).
* ``login_backoff``: failures and the earliest next try, per account and per account at
  one address.
* ``dataset_reviewers``: the curators assigned to review a dataset's releases.
* ``releases.approval_flags``: what made an approval doubtful.
* ``audit_head.scheme``: ``sha256`` for a chain written before this revision, re-keyed to
  ``hmac-sha256`` when the platform next opens with its server key.

Revision ID: 0003
Revises: 0002
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("jobs", schema=None) as batch_op:
        batch_op.add_column(sa.Column("lease_until", sa.DateTime(timezone=True), nullable=True))
    with op.batch_alter_table("users", schema=None) as batch_op:
        batch_op.add_column(sa.Column("created_by", sa.Integer(), nullable=True))
        batch_op.add_column(
            sa.Column("password_state", sa.String(length=16), nullable=False, server_default="ok")
        )
    with op.batch_alter_table("sessions", schema=None) as batch_op:
        batch_op.add_column(
            sa.Column("must_change", sa.Boolean(), nullable=False, server_default=sa.false())
        )
    with op.batch_alter_table("releases", schema=None) as batch_op:
        batch_op.add_column(sa.Column("approval_flags", sa.JSON(), nullable=True))
    with op.batch_alter_table("audit_head", schema=None) as batch_op:
        batch_op.add_column(
            sa.Column("scheme", sa.String(length=16), nullable=False, server_default="sha256")
        )
    op.create_table(
        "sign_ins",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("user_id", sa.Integer(), nullable=False),
        sa.Column("client", sa.String(length=64), nullable=False),
        sa.Column("at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(["user_id"], ["users.id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("id"),
    )
    op.create_index("ix_sign_ins_user_client", "sign_ins", ["user_id", "client"])
    op.create_index("ix_sign_ins_client", "sign_ins", ["client"])
    op.create_table(
        "login_backoff",
        sa.Column("key", sa.String(length=160), nullable=False),
        sa.Column("failures", sa.Integer(), nullable=False),
        sa.Column("next_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("key"),
    )
    op.create_table(
        "dataset_reviewers",
        sa.Column("dataset_id", sa.Integer(), nullable=False),
        sa.Column("user_id", sa.Integer(), nullable=False),
        sa.Column("assigned_by", sa.Integer(), nullable=False),
        sa.Column("assigned_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(["dataset_id"], ["datasets.id"], ondelete="CASCADE"),
        sa.ForeignKeyConstraint(["user_id"], ["users.id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("dataset_id", "user_id"),
    )


def downgrade() -> None:
    op.drop_table("dataset_reviewers")
    op.drop_table("login_backoff")
    op.drop_index("ix_sign_ins_client", table_name="sign_ins")
    op.drop_index("ix_sign_ins_user_client", table_name="sign_ins")
    op.drop_table("sign_ins")
    with op.batch_alter_table("audit_head", schema=None) as batch_op:
        batch_op.drop_column("scheme")
    with op.batch_alter_table("releases", schema=None) as batch_op:
        batch_op.drop_column("approval_flags")
    with op.batch_alter_table("sessions", schema=None) as batch_op:
        batch_op.drop_column("must_change")
    with op.batch_alter_table("users", schema=None) as batch_op:
        batch_op.drop_column("password_state")
        batch_op.drop_column("created_by")
    with op.batch_alter_table("jobs", schema=None) as batch_op:
        batch_op.drop_column("lease_until")
