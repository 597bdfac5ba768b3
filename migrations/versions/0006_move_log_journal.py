"""the move log as a journal in commit order, and each race's first entry id

Revision ID: 0006
Revises: 0005
Create Date: 2026-11-21

Clustered on (race, player, seq) (0005), every racer's entries sit at their own place in
the B-tree, so a group commit of many racers' moves changes as many pages: measured with
60 moves of 1,000 racers per commit, 231 KiB written to the WAL per commit and 20 µs per
row, against 9 KiB and 6 µs for a rowid table appended at its end (bench/move_log.py).
So move_log becomes a rowid table with no other index, and ``races.log_from``
(the id its entries start from, set when the race starts) lets a restart read only the
journal's tail. The (race, player, seq) key no longer constrains the table: the room
numbers the entries, and a restart refuses a log whose seq skips or repeats.

On PostgreSQL the id is a SERIAL (a sequence, owned by the column; made BIGINT by 0009),
and the old table's primary key is renamed out of the way first: there an index's name
(``pk_move_log``) is unique in the schema, not in its table.
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0006"
down_revision: str | Sequence[str] | None = "0005"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

COLUMNS = "race_id, player_id, seq, kind, text, at_ms"


def _move_log(name: str, journal: bool) -> None:
    """Create the move log table under ``name``: the journal, or 0005's clustered table."""
    key = [sa.Column("id", sa.Integer(), nullable=False)] if journal else []
    op.create_table(
        name,
        *key,
        sa.Column("race_id", sa.Integer(), nullable=False),
        sa.Column("player_id", sa.Integer(), nullable=False),
        sa.Column("seq", sa.Integer(), nullable=False),
        sa.Column("kind", sa.String(length=8), nullable=False),
        sa.Column("text", sa.String(length=64), nullable=False),
        sa.Column("at_ms", sa.Integer(), nullable=False),
        sa.CheckConstraint("kind IN ('move', 'resign', 'left')", name="ck_move_log_kind"),
        sa.ForeignKeyConstraint(["player_id"], ["players.id"], name="fk_move_log_player_id_players"),
        sa.ForeignKeyConstraint(["race_id"], ["races.id"], name="fk_move_log_race_id_races"),
        sa.PrimaryKeyConstraint(*(["id"] if journal else ["race_id", "player_id", "seq"]), name="pk_move_log"),
        sqlite_with_rowid=journal,
    )


def _replace_move_log(journal: bool) -> None:
    if op.get_context().dialect.name != "sqlite":
        op.execute("ALTER TABLE move_log RENAME CONSTRAINT pk_move_log TO pk_move_log_old")
    _move_log("move_log_new", journal)
    # Old entries keep their order: each race's, then each player's, in seq order.
    op.execute(f"INSERT INTO move_log_new ({COLUMNS}) SELECT {COLUMNS} FROM move_log ORDER BY race_id, player_id, seq")
    op.drop_table("move_log")
    op.rename_table("move_log_new", "move_log")


def upgrade() -> None:
    _replace_move_log(journal=True)
    with op.batch_alter_table("races") as batch:
        batch.add_column(sa.Column("log_from", sa.Integer(), nullable=True))
    bind = op.get_bind()
    firsts = bind.execute(sa.text("SELECT race_id, min(id) FROM move_log GROUP BY race_id")).all()
    if firsts:
        bind.execute(sa.text("UPDATE races SET log_from = :first WHERE id = :race"), [{"race": r, "first": f} for r, f in firsts])
    # A running race with no entry yet: its entries will come after every one there is.
    op.execute(
        "UPDATE races SET log_from = (SELECT coalesce(max(id), 0) + 1 FROM move_log) "
        "WHERE status = 'running' AND log_from IS NULL"
    )


def downgrade() -> None:
    with op.batch_alter_table("races") as batch:
        batch.drop_column("log_from")
    _replace_move_log(journal=False)  # refuses a log with a repeated (race, player, seq)
