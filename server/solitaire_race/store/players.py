"""The players table: rows to records, and the write jobs that give a player a name.

Every row's ``name_key`` is ``names.name_key(name)``, computed here and nowhere else (and
by migration 0008 for the rows it found), and the column is unique: two players racing for
look-alike names at once, even from two server processes, cannot both get them, because
SQLite refuses the second write. The jobs report that as ``NAME_TAKEN`` for ``Store`` to
raise ``NameTaken``; the rules of what a name may be are the service's (``names``).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from datetime import datetime
from typing import Final

from sqlalchemy import Select, bindparam, select, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from ..names import name_key
from .models import Player
from .records import NAME_KEY_MAX_LENGTH, NAME_MAX_LENGTH, PlayerRecord

NAME_TAKEN: Final = "name taken"  # what a job returns when another player has the name's key


def player_record(row: Player) -> PlayerRecord:
    return PlayerRecord(id=row.id, name=row.name, created_at=row.created_at)


def keyed(name: str) -> tuple[str, str]:
    """``name`` and its key, once both fit their columns (ValueError otherwise)."""
    if not 1 <= len(name) <= NAME_MAX_LENGTH:
        raise ValueError(f"a player name has 1 to {NAME_MAX_LENGTH} characters, not {len(name)}")
    key = name_key(name)
    if not 1 <= len(key) <= NAME_KEY_MAX_LENGTH:  # never, for a name the service took
        raise ValueError(f"the name {name!r} has a key of {len(key)} characters")
    return name, key


@functools.cache
def by_key() -> Select[Player]:
    # Built once, as the store's other hot statements (docs/performance.md, "Design decisions").
    return select(Player).where(Player.name_key == bindparam("key"))


def _key_holder(session: Session, key: str) -> bool:
    return session.scalar(select(Player.id).where(Player.name_key == key)) is not None


def create(name: str, token_hash: str, now: datetime) -> Callable[[Session], PlayerRecord | str | IntegrityError]:
    """The job inserting a player: its record, ``NAME_TAKEN``, or the IntegrityError of
    another constraint (a token hash already there)."""
    name, key = keyed(name)
    row = Player(name=name, name_key=key, token_hash=token_hash, created_at=now)

    def write(session: Session) -> PlayerRecord | str | IntegrityError:
        session.add(row)
        try:
            session.commit()
        except IntegrityError as error:
            session.rollback()
            return NAME_TAKEN if _key_holder(session, key) else error
        return player_record(row)

    return write


def rename(player_id: int, name: str) -> Callable[[Session], int | str]:
    """The job renaming a player: rows changed (0: no such player), or ``NAME_TAKEN``."""
    name, key = keyed(name)
    statement = update(Player).where(Player.id == player_id).values(name=name, name_key=key)

    def write(session: Session) -> int | str:
        try:
            count = session.execute(statement).rowcount  # type: ignore[attr-defined]
            session.commit()
        except IntegrityError:
            session.rollback()
            return NAME_TAKEN
        return int(count)

    return write
