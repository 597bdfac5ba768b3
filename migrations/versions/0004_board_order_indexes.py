"""the wins and win-rate board indexes in their boards' exact order (descending columns)

Revision ID: 0004
Revises: 0003
Create Date: 2026-11-21

The boards order by wins (and win rate) descending, then fewer moves, the earlier win and
the lower player id. The 0002 indexes were ascending throughout, so SQLite could follow
them only for the descending columns and sorted every run of ties in a temporary B-tree;
these are walked in order. Same names, same columns: each replaces its old version.
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0004"
down_revision: str | Sequence[str] | None = "0003"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.drop_index("ix_player_stats_win_rate", table_name="player_stats")
    op.drop_index("ix_player_stats_wins", table_name="player_stats")
    op.create_index(
        "ix_player_stats_wins", "player_stats",
        ["game", sa.text("wins DESC"), "win_moves", "last_win_at", "player_id"],
    )
    op.create_index(
        "ix_player_stats_win_rate", "player_stats",
        ["game", sa.text("win_rate DESC"), sa.text("wins DESC"), "win_moves", "last_win_at", "player_id", "games"],
    )


def downgrade() -> None:
    op.drop_index("ix_player_stats_win_rate", table_name="player_stats")
    op.drop_index("ix_player_stats_wins", table_name="player_stats")
    op.create_index("ix_player_stats_wins", "player_stats", ["game", "wins", "win_moves", "last_win_at", "player_id"])
    op.create_index(
        "ix_player_stats_win_rate", "player_stats",
        ["game", "win_rate", "wins", "win_moves", "last_win_at", "player_id", "games"],
    )
