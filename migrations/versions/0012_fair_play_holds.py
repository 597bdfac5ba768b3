"""results held for fair-play review, and players banned from ranked boards

Revision ID: 0012
Revises: 0011
Create Date: 2026-11-26

A result judged implausible from its move times (``fair_play.py``) is stored **held**:
``results.held`` true, with the assessment's reasons and figures in ``results.fair_play``
(JSON), ``rank_class`` 2 so that no board's index range reaches it (boards read classes 0
and 1), and not folded into ``player_stats``. An operator reviews it
(``solitaire-race review``): ``review`` becomes 'cleared' (the result goes on the boards)
or 'confirmed' (it stays off). ``players.ranked_ban``: every later result of that player
is held. Existing rows are neither held nor banned.
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0012"
down_revision: str | Sequence[str] | None = "0011"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.add_column("results", sa.Column("held", sa.Boolean(), nullable=False, server_default=sa.false()))
    op.add_column("results", sa.Column("fair_play", sa.Text(), nullable=True))
    op.add_column("results", sa.Column("review", sa.String(16), nullable=True))
    op.add_column("players", sa.Column("ranked_ban", sa.Boolean(), nullable=False, server_default=sa.false()))
    # The operator's list: the held results still to review.
    op.create_index("ix_results_held", "results", ["held", "review"])


def downgrade() -> None:
    op.drop_index("ix_results_held", table_name="results")
    with op.batch_alter_table("players") as batch:
        batch.drop_column("ranked_ban")
    with op.batch_alter_table("results") as batch:
        batch.drop_column("review")
        batch.drop_column("fair_play")
        batch.drop_column("held")
