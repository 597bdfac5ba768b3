"""races in series: best of N, a race's number in its series, and its rematch

Revision ID: 0013
Revises: 0012
Create Date: 2026-11-26

Friends race again on the same deal or a fresh one (``rematch``), and the races they run
one after another form a **series** with a running score. ``races.best_of`` is the
series' length chosen by the creator of its first race (NULL: an open series, a running
score that never ends); ``races.series_id`` is the id of the series' first race (NULL: the
race is its own series' first); ``races.series_number`` counts from 1. A finished race's
``rematch_code`` is the join code of the race it was followed by: set once, by whichever
racer asked first (``Store.claim_rematch``), so that every racer of the group lands in the
same room. The score is not stored: it is counted from the series' results (the first of
each race wins it). Existing races are single races, each its own series.
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0013"
down_revision: str | Sequence[str] | None = "0012"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.add_column("races", sa.Column("best_of", sa.Integer(), nullable=True))
    op.add_column("races", sa.Column("series_id", sa.Integer(), nullable=True))
    op.add_column("races", sa.Column("series_number", sa.Integer(), nullable=False, server_default="1"))
    op.add_column("races", sa.Column("rematch_code", sa.String(16), nullable=True))
    # The score of a series is read from its races (Store.series_wins).
    op.create_index("ix_races_series_id", "races", ["series_id"])


def downgrade() -> None:
    op.drop_index("ix_races_series_id", table_name="races")
    with op.batch_alter_table("races") as batch:
        batch.drop_column("rematch_code")
        batch.drop_column("series_number")
        batch.drop_column("series_id")
        batch.drop_column("best_of")
