"""results.sort_primary: equal progress ranks by time

Revision ID: 0011
Revises: 0010
Create Date: 2026-11-28

A result that is not a win ranked by cards left, then moves: two racers stuck with the
same cards left after as many moves ranked in any order, the slower possibly first. Now
the same progress ranks by time, sooner first (``results.rank_key``): ``sort_primary``
holds cards left * 2^32 + time in ms for those results (time alone for a win, as before),
so the boards' indexes keep serving a page as one range. It becomes a BIGINT on
PostgreSQL (SQLite's INTEGER holds 64 bits already), and the rows there are recomputed.
The downgrade gives back cards left.
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0011"
down_revision: str | Sequence[str] | None = "0010"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

TIME_SPAN = 2**32  # results.TIME_SPAN, as it was when this ran


def _postgresql() -> bool:
    return op.get_context().dialect.name == "postgresql"


def upgrade() -> None:
    if _postgresql():
        op.alter_column("results", "sort_primary", type_=sa.BigInteger(), existing_type=sa.Integer(),
                        existing_nullable=False, existing_server_default="0")
    op.execute(
        f"UPDATE results SET sort_primary = (total - home) * {TIME_SPAN} "
        f"+ COALESCE(CASE WHEN time_ms < {TIME_SPAN} THEN time_ms END, {TIME_SPAN - 1}) WHERE rank_class = 1"
    )


def downgrade() -> None:
    op.execute("UPDATE results SET sort_primary = total - home WHERE rank_class = 1")
    if _postgresql():
        op.alter_column("results", "sort_primary", type_=sa.Integer(), existing_type=sa.BigInteger(),
                        existing_nullable=False, existing_server_default="0")
