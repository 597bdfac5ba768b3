"""daily challenges, ranked attempts, player stats, leaderboard columns and indexes

Revision ID: 0002
Revises: 0001
Create Date: 2026-11-21

Results gain copies of their race's game and deal and their ranking keys, so that every
leaderboard is an index range scan; existing rows are filled in from their races.
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0002"
down_revision: str | Sequence[str] | None = "0001"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("races") as batch:
        batch.add_column(sa.Column("kind", sa.String(length=8), server_default="race", nullable=False))
        batch.add_column(sa.Column("daily_date", sa.String(length=10), nullable=True))
        batch.create_check_constraint(op.f("ck_races_kind"), "kind IN ('race', 'daily')")

    with op.batch_alter_table("results") as batch:
        batch.add_column(sa.Column("game", sa.String(length=32), server_default="", nullable=False))
        batch.add_column(sa.Column("deal_number", sa.BigInteger(), server_default="0", nullable=False))
        batch.add_column(sa.Column("daily_date", sa.String(length=10), nullable=True))
        batch.add_column(sa.Column("rank_class", sa.Integer(), server_default="1", nullable=False))
        batch.add_column(sa.Column("sort_primary", sa.Integer(), server_default="0", nullable=False))
    op.execute(
        "UPDATE results SET "
        "game = (SELECT game FROM races WHERE races.id = results.race_id), "
        "deal_number = (SELECT deal_number FROM races WHERE races.id = results.race_id), "
        "rank_class = CASE WHEN outcome = 'won' THEN 0 ELSE 1 END, "
        "sort_primary = CASE WHEN outcome = 'won' THEN COALESCE(time_ms, 0) ELSE total - home END"
    )
    op.create_index(
        "ix_results_deal_board", "results",
        ["game", "deal_number", "rank_class", "sort_primary", "moves", "finished_at"],
    )
    op.create_index(
        "ix_results_daily_board", "results",
        ["game", "daily_date", "rank_class", "sort_primary", "moves", "finished_at"],
    )
    op.create_index(op.f("ix_results_player_id_finished_at"), "results", ["player_id", "finished_at"])

    op.create_table(
        "daily_challenges",
        sa.Column("game", sa.String(length=32), nullable=False),
        sa.Column("date", sa.String(length=10), nullable=False),
        sa.Column("deal_number", sa.BigInteger(), nullable=False),
        sa.Column("par", sa.Integer(), nullable=True),
        sa.Column("created_at", sa.BigInteger(), nullable=False),
        sa.PrimaryKeyConstraint("game", "date", name=op.f("pk_daily_challenges")),
    )
    op.create_table(
        "daily_attempts",
        sa.Column("game", sa.String(length=32), nullable=False),
        sa.Column("date", sa.String(length=10), nullable=False),
        sa.Column("player_id", sa.Integer(), nullable=False),
        sa.Column("race_id", sa.Integer(), nullable=False),
        sa.Column("started_at", sa.BigInteger(), nullable=False),
        sa.ForeignKeyConstraint(["player_id"], ["players.id"], name=op.f("fk_daily_attempts_player_id_players")),
        sa.ForeignKeyConstraint(["race_id"], ["races.id"], name=op.f("fk_daily_attempts_race_id_races")),
        sa.PrimaryKeyConstraint("game", "date", "player_id", name=op.f("pk_daily_attempts")),
        sa.UniqueConstraint("race_id", name=op.f("uq_daily_attempts_race_id")),
    )
    op.create_index(op.f("ix_daily_attempts_player_id_date"), "daily_attempts", ["player_id", "date"])
    op.create_table(
        "player_stats",
        sa.Column("player_id", sa.Integer(), nullable=False),
        sa.Column("game", sa.String(length=32), nullable=False),
        sa.Column("games", sa.Integer(), nullable=False),
        sa.Column("wins", sa.Integer(), nullable=False),
        sa.Column("win_rate", sa.Float(), nullable=False),
        sa.Column("win_moves", sa.Integer(), nullable=False),
        sa.Column("last_win_at", sa.BigInteger(), nullable=True),
        sa.Column("best_time_ms", sa.Integer(), nullable=True),
        sa.Column("best_moves", sa.Integer(), nullable=True),
        sa.Column("best_at", sa.BigInteger(), nullable=True),
        sa.ForeignKeyConstraint(["player_id"], ["players.id"], name=op.f("fk_player_stats_player_id_players")),
        sa.PrimaryKeyConstraint("player_id", "game", name=op.f("pk_player_stats")),
    )
    op.create_index(
        "ix_player_stats_fastest", "player_stats", ["game", "best_time_ms", "best_moves", "best_at", "player_id"]
    )
    op.create_index("ix_player_stats_wins", "player_stats", ["game", "wins", "win_moves", "last_win_at", "player_id"])
    op.create_index(
        "ix_player_stats_win_rate", "player_stats",
        ["game", "win_rate", "wins", "win_moves", "last_win_at", "player_id", "games"],
    )
    op.create_index("ix_player_stats_games", "player_stats", ["game", "games"])
    # Stats for results that already exist. SQLite sums and averages a comparison (0 or 1);
    # PostgreSQL's is a boolean, which has no SUM: the same numbers through CASE.
    won, won_share = "rank_class = 0", "rank_class = 0"
    if op.get_context().dialect.name != "sqlite":
        won, won_share = "CASE WHEN rank_class = 0 THEN 1 ELSE 0 END", "CASE WHEN rank_class = 0 THEN 1.0 ELSE 0.0 END"
    op.execute(
        "INSERT INTO player_stats (player_id, game, games, wins, win_rate, win_moves, last_win_at, "
        "best_time_ms, best_moves, best_at) "
        f"SELECT player_id, game, COUNT(*), SUM({won}), AVG({won_share}), "
        "COALESCE(SUM(CASE WHEN rank_class = 0 THEN moves END), 0), "
        "MAX(CASE WHEN rank_class = 0 THEN finished_at END), "
        "MIN(CASE WHEN rank_class = 0 THEN time_ms END), NULL, NULL FROM results GROUP BY player_id, game"
    )


def downgrade() -> None:
    op.drop_index("ix_player_stats_games", table_name="player_stats")
    op.drop_index("ix_player_stats_win_rate", table_name="player_stats")
    op.drop_index("ix_player_stats_wins", table_name="player_stats")
    op.drop_index("ix_player_stats_fastest", table_name="player_stats")
    op.drop_table("player_stats")
    op.drop_index(op.f("ix_daily_attempts_player_id_date"), table_name="daily_attempts")
    op.drop_table("daily_attempts")
    op.drop_table("daily_challenges")
    op.drop_index(op.f("ix_results_player_id_finished_at"), table_name="results")
    op.drop_index("ix_results_daily_board", table_name="results")
    op.drop_index("ix_results_deal_board", table_name="results")
    with op.batch_alter_table("results") as batch:
        for column in ("sort_primary", "rank_class", "daily_date", "deal_number", "game"):
            batch.drop_column(column)
    with op.batch_alter_table("races") as batch:
        batch.drop_constraint(op.f("ck_races_kind"), type_="check")
        batch.drop_column("daily_date")
        batch.drop_column("kind")
