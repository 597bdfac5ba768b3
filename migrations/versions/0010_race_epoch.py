"""races.epoch: the fencing token of a race's owner

Revision ID: 0010
Revises: 0009
Create Date: 2026-11-28

A race runs on one server process at a time. Whoever takes a race over (a node of a
cluster after its owner died, docs/cluster.md) first increments the race's ``epoch``; the
move-log appends and the results of a race are written only while the epoch they carry is
still the race's (``Store.claim_race``, ``log_moves_then(epoch=...)``,
``finish_race(epoch=...)``), so a process that lost the race without knowing it can no
longer write to it. Existing races start at 0.
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0010"
down_revision: str | Sequence[str] | None = "0009"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.add_column("races", sa.Column("epoch", sa.Integer(), nullable=False, server_default="0"))


def downgrade() -> None:
    with op.batch_alter_table("races") as batch:
        batch.drop_column("epoch")
