"""daily_challenges.par_line: the line the par was counted on

Revision ID: 0016
Revises: 0015
Create Date: 2026-11-26

The daily planner keeps the solver's shortened winning line (one move per line), so that a
player who has made their ranked attempt (or anyone, once the day is over) can replay it
(docs/protocol.md, ``replay`` with ``par``). Challenges chosen before, or without the
solver, have NULL: no par line to replay.
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0016"
down_revision: str | Sequence[str] | None = "0015"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.add_column("daily_challenges", sa.Column("par_line", sa.Text(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("daily_challenges") as batch:
        batch.drop_column("par_line")
