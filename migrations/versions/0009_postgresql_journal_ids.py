"""the move log's ids as BIGINT on PostgreSQL (nothing changes on SQLite)

Revision ID: 0009
Revises: 0008
Create Date: 2026-11-27

``move_log.id`` numbers every move ever logged, and a busy server logs billions: on
PostgreSQL 0006 made it a SERIAL, a 32-bit INTEGER whose sequence stops at 2^31 - 1
(about 250 days at 100 moves/s). Here it becomes a BIGINT, its sequence too (renamed
``move_log_id_seq``: 0006 created it for ``move_log_new``), and so does ``races.log_from``,
which holds such ids. On SQLite an INTEGER PRIMARY KEY is the rowid, already 64 bits (and
a BIGINT one would not be the rowid): nothing to do.

The type change rewrites the table under an exclusive lock: quick for the journal of a
new PostgreSQL database, which is where this runs first. The downgrade gives the INTEGER
back (and fails if an id or ``log_from`` no longer fits it).
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0009"
down_revision: str | Sequence[str] | None = "0008"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

SEQUENCE = "move_log_id_seq"


def _postgresql() -> bool:
    return op.get_context().dialect.name == "postgresql"


def _ids(type_: sa.types.TypeEngine[int], old: sa.types.TypeEngine[int], sequence_type: str) -> None:
    op.alter_column("move_log", "id", type_=type_, existing_type=old, existing_nullable=False)
    op.alter_column("races", "log_from", type_=type_, existing_type=old, existing_nullable=True)
    op.execute(f"ALTER SEQUENCE {SEQUENCE} AS {sequence_type}")


def upgrade() -> None:
    if not _postgresql():
        return
    # Whatever 0006 called it (a SERIAL's sequence is named after the table it was made for).
    op.execute(
        "DO $$ DECLARE seq regclass := pg_get_serial_sequence('move_log', 'id')::regclass; BEGIN "
        f"IF (SELECT relname FROM pg_class WHERE oid = seq) <> '{SEQUENCE}' THEN "
        f"EXECUTE format('ALTER SEQUENCE %s RENAME TO {SEQUENCE}', seq); END IF; END $$"
    )
    _ids(sa.BigInteger(), sa.Integer(), "bigint")


def downgrade() -> None:
    if not _postgresql():
        return
    _ids(sa.Integer(), sa.BigInteger(), "integer")
