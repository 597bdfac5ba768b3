"""races.ghost: the recorded run a practice race is raced against

Revision ID: 0015
Revises: 0014
Create Date: 2026-11-26

A race against a ghost (docs/protocol.md, ``race_ghost``) stores which run it is, as
``<race code>:<player id>``, so that a restart or a takeover brings the ghost back with the
race: such a race is practice, and its results are never stored (ghosts.py). NULL for every
other race.
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0015"
down_revision: str | Sequence[str] | None = "0014"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.add_column("races", sa.Column("ghost", sa.String(40), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("races") as batch:
        batch.drop_column("ghost")
