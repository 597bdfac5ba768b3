"""race entries and the append-only move log (crash recovery)

Revision ID: 0003
Revises: 0002
Create Date: 2026-11-21
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0003"
down_revision: str | Sequence[str] | None = "0002"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "race_entries",
        sa.Column("race_id", sa.Integer(), nullable=False),
        sa.Column("player_id", sa.Integer(), nullable=False),
        sa.ForeignKeyConstraint(["player_id"], ["players.id"], name=op.f("fk_race_entries_player_id_players")),
        sa.ForeignKeyConstraint(["race_id"], ["races.id"], name=op.f("fk_race_entries_race_id_races")),
        sa.PrimaryKeyConstraint("race_id", "player_id", name=op.f("pk_race_entries")),
    )
    op.create_table(
        "move_log",
        sa.Column("race_id", sa.Integer(), nullable=False),
        sa.Column("player_id", sa.Integer(), nullable=False),
        sa.Column("seq", sa.Integer(), nullable=False),
        sa.Column("kind", sa.String(length=8), nullable=False),
        sa.Column("text", sa.String(length=64), nullable=False),
        sa.Column("at_ms", sa.Integer(), nullable=False),
        sa.CheckConstraint("kind IN ('move', 'resign', 'left')", name=op.f("ck_move_log_kind")),
        sa.ForeignKeyConstraint(["player_id"], ["players.id"], name=op.f("fk_move_log_player_id_players")),
        sa.ForeignKeyConstraint(["race_id"], ["races.id"], name=op.f("fk_move_log_race_id_races")),
        sa.PrimaryKeyConstraint("race_id", "player_id", "seq", name=op.f("pk_move_log")),
    )


def downgrade() -> None:
    op.drop_table("move_log")
    op.drop_table("race_entries")
