"""The database schema as SQLAlchemy declarative models (the store's private business).

These models are the source of truth for Alembic autogenerate and for the store's
queries; they never leave the store (``store.py`` turns rows into ``records``). Every
constraint and index gets a deterministic name from the MetaData naming convention, which
SQLite batch migrations need in order to find and alter them later.
"""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from typing import Any

from sqlalchemy import (
    BigInteger,
    CheckConstraint,
    Dialect,
    ForeignKey,
    Index,
    MetaData,
    String,
    Text,
)
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column
from sqlalchemy.types import TypeDecorator

from .records import (
    CODE_MAX_LENGTH,
    GAME_MAX_LENGTH,
    NAME_MAX_LENGTH,
    OUTCOMES,
    RACE_STATUSES,
)

NAMING_CONVENTION: dict[str, str] = {
    "ix": "ix_%(table_name)s_%(column_0_N_name)s",
    "uq": "uq_%(table_name)s_%(column_0_N_name)s",
    "ck": "ck_%(table_name)s_%(constraint_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}

EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)
_MICROSECOND = timedelta(microseconds=1)


class UTCDateTime(TypeDecorator[datetime]):
    """An aware datetime stored as integer microseconds since the Unix epoch (UTC).

    Integers compare and sort in SQL exactly like the instants they stand for, on every
    backend, and round-trip without SQLite's "datetimes come back naive" problem.
    Naive datetimes are refused rather than guessed at.
    """

    impl = BigInteger
    cache_ok = True

    def process_bind_param(self, value: datetime | None, dialect: Dialect) -> int | None:
        if value is None:
            return None
        if not isinstance(value, datetime):
            raise TypeError(f"expected a datetime, got {value!r}")
        if value.tzinfo is None or value.utcoffset() is None:
            raise ValueError(f"naive datetime {value!r}: pass an aware UTC datetime")
        # Integer division of timedeltas is exact; no float rounding.
        return (value - EPOCH) // _MICROSECOND

    def process_result_value(self, value: Any | None, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        return EPOCH + timedelta(microseconds=int(value))


def _in(values: tuple[str, ...]) -> str:
    return "(" + ", ".join(f"'{v}'" for v in values) + ")"


class Base(DeclarativeBase):
    metadata = MetaData(naming_convention=NAMING_CONVENTION)
    type_annotation_map = {datetime: UTCDateTime()}


class Player(Base):
    __tablename__ = "players"

    id: Mapped[int] = mapped_column(primary_key=True)
    name: Mapped[str] = mapped_column(String(NAME_MAX_LENGTH), index=True)  # player_by_name
    # sha256(secret token) as 64 lowercase hex digits; the raw token is never stored.
    token_hash: Mapped[str] = mapped_column(String(64), unique=True)
    created_at: Mapped[datetime]


class Race(Base):
    __tablename__ = "races"
    __table_args__ = (CheckConstraint(f"status IN {_in(RACE_STATUSES)}", name="status"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    code: Mapped[str] = mapped_column(String(CODE_MAX_LENGTH), unique=True)
    game: Mapped[str] = mapped_column(String(GAME_MAX_LENGTH))
    deal_number: Mapped[int] = mapped_column(BigInteger)
    private: Mapped[bool]
    created_by: Mapped[int] = mapped_column(ForeignKey("players.id"))
    created_at: Mapped[datetime]
    started_at: Mapped[datetime | None]
    finished_at: Mapped[datetime | None]
    status: Mapped[str] = mapped_column(String(16))
    time_limit_s: Mapped[int]


class Result(Base):
    __tablename__ = "results"
    __table_args__ = (
        CheckConstraint(f"outcome IN {_in(OUTCOMES)}", name="outcome"),
        Index(None, "race_id", "rank"),  # race_results() reads a race's rows in rank order
    )

    race_id: Mapped[int] = mapped_column(ForeignKey("races.id"), primary_key=True)
    player_id: Mapped[int] = mapped_column(ForeignKey("players.id"), primary_key=True)
    outcome: Mapped[str] = mapped_column(String(16))
    rank: Mapped[int]
    time_ms: Mapped[int | None]
    moves: Mapped[int]
    home: Mapped[int]
    total: Mapped[int]
    move_log: Mapped[str] = mapped_column(Text)  # one move per line, no trailing newline
    finished_at: Mapped[datetime]


class Setting(Base):
    """Server-wide values the server keeps for itself, such as the deal secret."""

    __tablename__ = "settings"

    name: Mapped[str] = mapped_column(String(64), primary_key=True)
    value: Mapped[str] = mapped_column(Text)
