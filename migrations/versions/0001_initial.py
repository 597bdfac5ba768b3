"""initial schema: players, races, results, settings

Revision ID: 0001
Revises:
Create Date: 2026-11-21

Written by hand against solitaire_race/store/models.py (tests/test_store.py checks that
autogenerate finds no difference). Timestamps are BIGINT microseconds since the Unix
epoch, UTC (models.UTCDateTime). Constraint names follow models.NAMING_CONVENTION and are
spelled out with op.f() so they stay fixed whatever the convention becomes later.
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

# revision identifiers, used by Alembic.
revision: str = "0001"
down_revision: str | Sequence[str] | None = None
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "players",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("name", sa.String(length=32), nullable=False),
        sa.Column("token_hash", sa.String(length=64), nullable=False),
        sa.Column("created_at", sa.BigInteger(), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_players")),
        sa.UniqueConstraint("token_hash", name=op.f("uq_players_token_hash")),
    )
    op.create_index(op.f("ix_players_name"), "players", ["name"], unique=False)
    op.create_table(
        "races",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("code", sa.String(length=16), nullable=False),
        sa.Column("game", sa.String(length=32), nullable=False),
        sa.Column("deal_number", sa.BigInteger(), nullable=False),
        sa.Column("private", sa.Boolean(), nullable=False),
        sa.Column("created_by", sa.Integer(), nullable=False),
        sa.Column("created_at", sa.BigInteger(), nullable=False),
        sa.Column("started_at", sa.BigInteger(), nullable=True),
        sa.Column("finished_at", sa.BigInteger(), nullable=True),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("time_limit_s", sa.Integer(), nullable=False),
        sa.CheckConstraint(
            "status IN ('open', 'running', 'finished')", name=op.f("ck_races_status")
        ),
        sa.ForeignKeyConstraint(
            ["created_by"], ["players.id"], name=op.f("fk_races_created_by_players")
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_races")),
        sa.UniqueConstraint("code", name=op.f("uq_races_code")),
    )
    op.create_table(
        "results",
        sa.Column("race_id", sa.Integer(), nullable=False),
        sa.Column("player_id", sa.Integer(), nullable=False),
        sa.Column("outcome", sa.String(length=16), nullable=False),
        sa.Column("rank", sa.Integer(), nullable=False),
        sa.Column("time_ms", sa.Integer(), nullable=True),
        sa.Column("moves", sa.Integer(), nullable=False),
        sa.Column("home", sa.Integer(), nullable=False),
        sa.Column("total", sa.Integer(), nullable=False),
        sa.Column("move_log", sa.Text(), nullable=False),
        sa.Column("finished_at", sa.BigInteger(), nullable=False),
        sa.CheckConstraint(
            "outcome IN ('won', 'stuck', 'resigned', 'timeout', 'left', 'interrupted')",
            name=op.f("ck_results_outcome"),
        ),
        sa.ForeignKeyConstraint(
            ["player_id"], ["players.id"], name=op.f("fk_results_player_id_players")
        ),
        sa.ForeignKeyConstraint(["race_id"], ["races.id"], name=op.f("fk_results_race_id_races")),
        sa.PrimaryKeyConstraint("race_id", "player_id", name=op.f("pk_results")),
    )
    op.create_index(
        op.f("ix_results_race_id_rank"), "results", ["race_id", "rank"], unique=False
    )
    op.create_table(
        "settings",
        sa.Column("name", sa.String(length=64), nullable=False),
        sa.Column("value", sa.Text(), nullable=False),
        sa.PrimaryKeyConstraint("name", name=op.f("pk_settings")),
    )


def downgrade() -> None:
    op.drop_table("settings")
    op.drop_index(op.f("ix_results_race_id_rank"), table_name="results")
    op.drop_table("results")
    op.drop_table("races")
    op.drop_index(op.f("ix_players_name"), table_name="players")
    op.drop_table("players")
