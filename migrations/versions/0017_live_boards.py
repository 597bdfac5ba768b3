"""races.live_boards: a race whose spectators see every racer's board live

Revision ID: 0017
Revises: 0016
Create Date: 2026-11-28

A race created with ``live_boards`` (docs/protocol.md, ``create_race``) shows its spectators
every racer's board as it is played. Its racers could watch each other's boards on the same
deal, so its results are unranked: stored (the race's replay, the players' history) but on
no leaderboard and in no player's statistics (docs/fair-play.md). False for every other race.
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0017"
down_revision: str | Sequence[str] | None = "0016"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.add_column("races", sa.Column("live_boards", sa.Boolean(), nullable=False, server_default=sa.false()))


def downgrade() -> None:
    with op.batch_alter_table("races") as batch:
        batch.drop_column("live_boards")
