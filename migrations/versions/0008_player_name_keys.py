"""players.name_key: one key for names that look the same, unique

Revision ID: 0008
Revises: 0007
Create Date: 2026-11-25

Names now follow the rules of ``solitaire_race/names.py`` (docs/protocol.md, "Names"):
one stored form, visible characters only, and two names that look the same (case,
look-alike letters of other scripts, full-width forms, invisible characters aside) are the
same name. ``name_key`` holds ``names.name_key(name)`` under a unique constraint, so the
database itself refuses a second player a name that looks like one taken, even when two
ask at once.

For the players already stored, oldest first, ``names.assign`` says what they become:

- a valid name takes its stored form (``ａｎｎ`` is ``ann``); a name with characters the
  rules refuse (control, format, invisible ones) loses them; one with nothing acceptable
  left becomes ``player #<id>``;
- when that name looks like an older player's (``Ann`` after ``ann``, Cyrillic ``аnn``
  after ``ann``), the player's id is added to it (``Ann #7``): the older player had the
  name first, and two players who look the same is what this migration ends.

Every player still signs in with its token; a renamed one can choose another name with a
``hello`` that carries both. The index on ``name`` goes: lookups are by key now (and
``lower(name)`` never could use it).

Unlike the other migrations, this one imports from ``solitaire_race``: the keys it stores
must be the very ones the store computes for new names. Should the key ever change (new
confusables data), a later migration recomputes every key. Needs a live database: not
``--sql``. The downgrade drops the key and restores the index; names stay as 0008 made
them.
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import context, op

from solitaire_race.names import assign

revision: str = "0008"
down_revision: str | Sequence[str] | None = "0007"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

KEY = sa.String(length=256)


def upgrade() -> None:
    if context.is_offline_mode():
        raise RuntimeError("migration 0008 computes name keys in Python: run it on the database, not with --sql")
    op.add_column("players", sa.Column("name_key", KEY, nullable=True))
    bind = op.get_bind()
    stored = [(row.id, row.name) for row in bind.execute(sa.text("SELECT id, name FROM players ORDER BY id"))]
    rows = [{"player": pid, "new_name": name, "key": key} for pid, name, key in assign(stored)]
    if rows:
        players = sa.table("players", sa.column("id"), sa.column("name"), sa.column("name_key"))
        bind.execute(
            sa.update(players).where(players.c.id == sa.bindparam("player"))
            .values(name=sa.bindparam("new_name"), name_key=sa.bindparam("key")),
            rows,
        )
    op.drop_index(op.f("ix_players_name"), table_name="players")
    with op.batch_alter_table("players") as batch:
        batch.alter_column("name_key", existing_type=KEY, nullable=False)
        batch.create_unique_constraint(op.f("uq_players_name_key"), ["name_key"])


def downgrade() -> None:
    with op.batch_alter_table("players") as batch:
        batch.drop_constraint(op.f("uq_players_name_key"), type_="unique")
        batch.drop_column("name_key")
    op.create_index(op.f("ix_players_name"), "players", ["name"], unique=False)
