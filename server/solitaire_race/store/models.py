"""The database schema as SQLAlchemy declarative models (the store's private business).

These models are the source of truth for Alembic autogenerate and for the store's
queries; they never leave the store (``store.py`` turns rows into ``records``). Every
constraint and index gets a deterministic name from the MetaData naming convention, which
SQLite batch migrations need in order to find and alter them later.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any, ClassVar

from sqlalchemy import (
    BigInteger,
    CheckConstraint,
    Dialect,
    Float,
    ForeignKey,
    Index,
    Integer,
    MetaData,
    String,
    Table,
    Text,
    false,
)
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column
from sqlalchemy.types import TypeDecorator, TypeEngine

from .records import (
    CODE_MAX_LENGTH,
    GAME_MAX_LENGTH,
    NAME_KEY_MAX_LENGTH,
    NAME_MAX_LENGTH,
    OUTCOMES,
    RACE_KINDS,
    RACE_STATUSES,
)

NAMING_CONVENTION: dict[str, str] = {
    "ix": "ix_%(table_name)s_%(column_0_N_name)s",
    "uq": "uq_%(table_name)s_%(column_0_N_name)s",
    "ck": "ck_%(table_name)s_%(constraint_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}

EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
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


# A journal id: BIGINT on PostgreSQL (migration 0009: the move log outgrows 2^31 entries);
# on SQLite an INTEGER PRIMARY KEY is the rowid, 64 bits already, and BIGINT would not be.
JournalId = BigInteger().with_variant(Integer(), "sqlite")


def _in(values: tuple[str, ...]) -> str:
    return "(" + ", ".join(f"'{v}'" for v in values) + ")"


class Base(DeclarativeBase):
    metadata = MetaData(naming_convention=NAMING_CONVENTION)
    type_annotation_map: ClassVar[dict[type[Any], TypeEngine[Any]]] = {datetime: UTCDateTime()}

    if TYPE_CHECKING:
        # SQLAlchemy types it as any FromClause; every model here maps a table of its own.
        __table__: ClassVar[Table]


class Player(Base):
    __tablename__ = "players"

    id: Mapped[int] = mapped_column(primary_key=True)
    name: Mapped[str] = mapped_column(String(NAME_MAX_LENGTH))
    # names.name_key(name): equal for names that look the same. Unique, so that the database
    # decides who gets a name when two players race for look-alikes (store/players.py).
    name_key: Mapped[str] = mapped_column(String(NAME_KEY_MAX_LENGTH), unique=True)
    # sha256(secret token) as 64 lowercase hex digits; the raw token is never stored.
    token_hash: Mapped[str] = mapped_column(String(64), unique=True)
    created_at: Mapped[datetime]
    ranked_ban: Mapped[bool] = mapped_column(server_default=false())  # every later result held (0012)


class Race(Base):
    __tablename__ = "races"
    __table_args__ = (
        CheckConstraint(f"status IN {_in(RACE_STATUSES)}", name="status"),
        CheckConstraint(f"kind IN {_in(RACE_KINDS)}", name="kind"),
        Index("ix_races_series_id", "series_id"),  # a series' score is read from its races
    )

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
    kind: Mapped[str] = mapped_column(String(8), server_default="race")  # race | daily
    daily_date: Mapped[str | None] = mapped_column(String(10))  # ISO date of a daily attempt
    # No move_log entry of this race has a smaller id: set when it starts (running_races).
    log_from: Mapped[int | None] = mapped_column(JournalId)
    # Its owner's fencing token: raised by each takeover (Store.claim_race, migration 0010).
    epoch: Mapped[int] = mapped_column(server_default="0")
    # Races in series (migration 0013): best of N (NULL: an open series), the id of the
    # series' first race (NULL: this one), its number in the series, and the race that
    # followed it (its join code, set once: Store.claim_rematch).
    best_of: Mapped[int | None]
    series_id: Mapped[int | None]
    series_number: Mapped[int] = mapped_column(server_default="1")
    rematch_code: Mapped[str | None] = mapped_column(String(CODE_MAX_LENGTH))
    ghost: Mapped[str | None] = mapped_column(String(40))  # "<code>:<player id>": the run raced against (0015)
    # Spectators see every board live (0017): its results are unranked (UNRANKED_CLASS).
    live_boards: Mapped[bool] = mapped_column(server_default=false())


class Result(Base):
    __tablename__ = "results"
    __table_args__ = (
        CheckConstraint(f"outcome IN {_in(OUTCOMES)}", name="outcome"),
        Index(None, "race_id", "rank"),  # race_results() reads a race's rows in rank order
        # Leaderboards walk these in ranking order (see boards.py), so a page costs an
        # index range, not a sort of every result.
        Index("ix_results_deal_board", "game", "deal_number", "rank_class", "sort_primary", "moves", "finished_at"),
        Index("ix_results_daily_board", "game", "daily_date", "rank_class", "sort_primary", "moves", "finished_at"),
        Index(None, "player_id", "finished_at"),
        Index("ix_results_held", "held", "review"),
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
    move_times: Mapped[str | None] = mapped_column(Text)  # each move's race ms, comma-separated (migration 0014)
    finished_at: Mapped[datetime]
    # Copied from the race, and derived from the result, when it is written: leaderboards
    # filter and sort on these without joins.
    game: Mapped[str] = mapped_column(String(GAME_MAX_LENGTH), server_default="")
    deal_number: Mapped[int] = mapped_column(BigInteger, server_default="0")
    daily_date: Mapped[str | None] = mapped_column(String(10))  # only on ranked daily attempts
    rank_class: Mapped[int] = mapped_column(server_default="1")  # 0 won, 1 not won
    # won: time_ms; else cards left * TIME_SPAN + time_ms (results.rank_key, migration 0011)
    sort_primary: Mapped[int] = mapped_column(BigInteger().with_variant(Integer(), "sqlite"), server_default="0")
    # Fair play (migration 0012): a held result has rank_class 2 (off every board) until cleared.
    held: Mapped[bool] = mapped_column(server_default=false())
    fair_play: Mapped[str | None] = mapped_column(Text)  # the assessment: reasons and figures, JSON
    review: Mapped[str | None] = mapped_column(String(16))  # 'cleared' | 'confirmed', once reviewed


class RaceEntry(Base):
    """Who races in a race, written when it starts (crash recovery rebuilds rooms from it)."""

    __tablename__ = "race_entries"

    race_id: Mapped[int] = mapped_column(ForeignKey("races.id"), primary_key=True)
    player_id: Mapped[int] = mapped_column(ForeignKey("players.id"), primary_key=True)


class MoveLog(Base):
    """Every accepted move (and resignation), appended before it is acknowledged: a journal
    in commit order (migration 0006). No index on (race, player, seq): with every racer's
    entries at their own place in such a B-tree, a commit of 60 racers' moves wrote ~60
    pages to the WAL; appended at the end of the rowid B-tree it writes one or two. A
    race's entries are those of its id from ``Race.log_from`` on."""

    __tablename__ = "move_log"
    # Comparisons, not ``IN (...)``: SQLite builds a temporary table of an IN list for
    # every row it checks, 0.9 µs of a row's 2.3 µs insert (migration 0007).
    __table_args__ = (CheckConstraint("kind = 'move' OR kind = 'resign' OR kind = 'left'", name="kind"),)

    # SQLite's rowid; on PostgreSQL a BIGINT from a sequence: the order of commits (of
    # nextval(), precisely: what writes.start_statement relies on is explained there).
    id: Mapped[int] = mapped_column(JournalId, primary_key=True)
    race_id: Mapped[int] = mapped_column(ForeignKey("races.id"))
    player_id: Mapped[int] = mapped_column(ForeignKey("players.id"))
    seq: Mapped[int]  # 0, 1, 2 ... per player and race
    kind: Mapped[str] = mapped_column(String(8))
    text: Mapped[str] = mapped_column(String(64))  # the move in the game's notation
    at_ms: Mapped[int]  # server time since the race's start


class DailyChallenge(Base):
    """The deal of one game on one UTC day, the same for every server sharing the database."""

    __tablename__ = "daily_challenges"

    game: Mapped[str] = mapped_column(String(GAME_MAX_LENGTH), primary_key=True)
    date: Mapped[str] = mapped_column(String(10), primary_key=True)  # ISO, UTC
    deal_number: Mapped[int] = mapped_column(BigInteger)
    par: Mapped[int | None]  # moves in the shortest known solution, when known
    par_line: Mapped[str | None] = mapped_column(Text)  # that solution, a move per line (migration 0016)
    created_at: Mapped[datetime]


class DailyAttempt(Base):
    """A player's one ranked attempt at a daily challenge; the key enforces "one"."""

    __tablename__ = "daily_attempts"
    __table_args__ = (Index(None, "player_id", "date"),)  # streaks

    game: Mapped[str] = mapped_column(String(GAME_MAX_LENGTH), primary_key=True)
    date: Mapped[str] = mapped_column(String(10), primary_key=True)
    player_id: Mapped[int] = mapped_column(ForeignKey("players.id"), primary_key=True)
    race_id: Mapped[int] = mapped_column(ForeignKey("races.id"), unique=True)
    started_at: Mapped[datetime]


class PlayerStats(Base):
    """Per player and game, kept up to date with every result (all-time boards, profiles)."""

    __tablename__ = "player_stats"
    __table_args__ = (
        # Covering indexes (player_id, games included): a page, the total and the
        # viewer's rank are all counted from the index without touching the table. Each
        # is in its board's exact order (the wins and win-rate ones are below: they have
        # descending columns), so a page is read in order and nothing is sorted.
        Index("ix_player_stats_fastest", "game", "best_time_ms", "best_moves", "best_at", "player_id"),
        Index("ix_player_stats_games", "game", "games"),  # the win-rate board's size
    )

    player_id: Mapped[int] = mapped_column(ForeignKey("players.id"), primary_key=True)
    game: Mapped[str] = mapped_column(String(GAME_MAX_LENGTH), primary_key=True)
    games: Mapped[int]
    wins: Mapped[int]
    win_rate: Mapped[float] = mapped_column(Float)  # wins / games
    win_moves: Mapped[int]  # moves over all wins (tie-break: fewer is better)
    last_win_at: Mapped[datetime | None]
    best_time_ms: Mapped[int | None]  # fastest win
    best_moves: Mapped[int | None]
    best_at: Mapped[datetime | None]


# ORDER BY wins DESC, win_moves, last_win_at, player_id (boards._stats_order), and the same
# with win_rate DESC in front. With all-ascending indexes SQLite followed these orders only
# as far as the descending columns and sorted every run of ties in a temporary B-tree
# (migration 0004).
Index(
    "ix_player_stats_wins",
    PlayerStats.game, PlayerStats.wins.desc(), PlayerStats.win_moves, PlayerStats.last_win_at, PlayerStats.player_id,
)
Index(
    "ix_player_stats_win_rate",
    PlayerStats.game, PlayerStats.win_rate.desc(), PlayerStats.wins.desc(), PlayerStats.win_moves,
    PlayerStats.last_win_at, PlayerStats.player_id, PlayerStats.games,
)


class Setting(Base):
    """Server-wide values the server keeps for itself, such as the deal secret."""

    __tablename__ = "settings"

    name: Mapped[str] = mapped_column(String(64), primary_key=True)
    value: Mapped[str] = mapped_column(Text)
