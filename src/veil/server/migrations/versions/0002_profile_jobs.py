"""Profiles run as jobs: a dataset's profile status, and jobs without a plan version.

An upload is stored and its profile (and risk summary) computed afterwards by a worker,
as a job of kind ``profile`` that has no plan version.

Revision ID: 0002
Revises: 0001
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("datasets", schema=None) as batch_op:
        batch_op.add_column(
            sa.Column("profile_status", sa.String(length=16), nullable=False, server_default="done")
        )
    with op.batch_alter_table("jobs", schema=None) as batch_op:
        batch_op.alter_column("plan_version_id", existing_type=sa.Integer(), nullable=True)


def downgrade() -> None:
    with op.batch_alter_table("jobs", schema=None) as batch_op:
        batch_op.alter_column("plan_version_id", existing_type=sa.Integer(), nullable=False)
    with op.batch_alter_table("datasets", schema=None) as batch_op:
        batch_op.drop_column("profile_status")
