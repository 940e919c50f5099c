"""The operator's largest attack success rate per attack.

* ``operator_policy.max_attack_success``: a JSON object of attack name to the largest
  success rate allowed (``{"location": 0.05}``), or null for no limit. The named
  attacks run on every release (:class:`veil.release.Policy`'s ``max_attack_success``),
  and a release above a limit is refused before anything is written.

Revision ID: 0004
Revises: 0003
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0004"
down_revision = "0003"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("operator_policy", schema=None) as batch_op:
        batch_op.add_column(sa.Column("max_attack_success", sa.JSON(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("operator_policy", schema=None) as batch_op:
        batch_op.drop_column("max_attack_success")
