"""results.move_times: when each move of a result was made, for replays

Revision ID: 0014
Revises: 0013
Create Date: 2026-11-26

A result's ``move_log`` holds its moves; ``move_times`` holds the race time (milliseconds
from the common start, the server's clock) of each of them, comma-separated, in the same
order: what a replay plays them back at (docs/protocol.md, replay). Results stored before
have NULL: their replays play one move a second.
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0014"
down_revision: str | Sequence[str] | None = "0013"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.add_column("results", sa.Column("move_times", sa.Text(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("results") as batch:
        batch.drop_column("move_times")
