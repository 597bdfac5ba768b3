"""The async Store: every read and write of players, races and results.

This module owns the engine (and, for SQLite, how each connection is set up), the
transactions, and the translation between rows and ``records``. Callers get frozen
dataclasses and the exceptions defined here, never SQLAlchemy objects or errors.
"""

from __future__ import annotations

import asyncio
import dataclasses
import functools
import hashlib
import re
import secrets
from collections.abc import Callable, Sequence
from datetime import datetime
from pathlib import Path
from types import TracebackType
from typing import Any, NamedTuple, Self, TypeVar

from sqlalchemy import Engine, Float, and_, bindparam, case, cast, create_engine, delete, event, func, insert, or_, select, update
from sqlalchemy.dialects.sqlite import insert as sqlite_insert
from sqlalchemy.engine import URL, Connection, make_url
from sqlalchemy.exc import IntegrityError, SQLAlchemyError
from sqlalchemy.ext.asyncio import AsyncEngine, async_sessionmaker, create_async_engine
from sqlalchemy.orm import Session
from sqlalchemy.pool import ConnectionPoolEntry, NullPool

from ..results import RacerOutcome, rank_key
from .migrate import upgrade_to_head
from . import boards, players
from ..names import name_key
from .errors import (  # re-exported: callers import them from the store
    CodeTaken,
    NameTaken,
    ConstraintViolation,
    NotFound,
    RaceStateError,
    StoreError,
    store_error,
    translating,
)
from .integrity import check_database_file
from .lock import ServerLock
from .writer import Writer, resolve
from .models import DailyAttempt, DailyChallenge, MoveLog, Player, PlayerStats, Race, RaceEntry, Result, Setting
from .records import (
    CODE_MAX_LENGTH,
    DailyChallengeRecord,
    GameStatsRecord,
    LeaderboardPage,
    ProfileRecord,
    RunningRaceRecord,
    OpenRaceRecord,
    FinishedRaceRecord,
    OUTCOMES,
    PlayerRecord,
    RaceRecord,
    RaceStatus,
    ResultRecord,
)

T = TypeVar("T")
BUSY_TIMEOUT_MS = 5_000
MOVE_LOG_COLUMNS = ("race_id", "player_id", "seq", "kind", "text", "at_ms")  # log_moves builds rows in this order
DEAL_SECRET_SETTING = "deal_secret"
DEAL_SECRET_BYTES = 32

_TOKEN_HASH = re.compile(r"[0-9a-f]{64}")


def hash_token(token: str) -> str:
    """The ``players.token_hash`` of a secret token: sha256 of its UTF-8, as lowercase hex."""
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


# --- engine -------------------------------------------------------------------------


def _sqlite_file(url: URL) -> Path | None:
    """The file behind a SQLite URL, or None for memory databases and other backends."""
    if url.get_backend_name() != "sqlite":
        return None
    database = url.database or ""
    if database in ("", ":memory:") or database.startswith("file:"):
        return None
    return Path(database)


def ensure_sqlite_directory(url: str | URL) -> None:
    """Create the parent directory of a SQLite database file, so connecting can create it."""
    path = _sqlite_file(make_url(url))
    if path is not None:
        path.parent.mkdir(parents=True, exist_ok=True)


def _on_sqlite_connect(dbapi_connection: Any, connection_record: ConnectionPoolEntry) -> None:
    # Stop the sqlite3 driver's own (legacy) transaction handling, which skips BEGIN
    # before DDL and SELECT; _on_sqlite_begin emits BEGIN instead, so DDL (migrations)
    # and reads are really transactional. See SQLAlchemy's "Transactions with SQLite and
    # the sqlite3 driver". PRAGMAs then run here in autocommit, outside any transaction,
    # which journal_mode and foreign_keys need.
    dbapi_connection.isolation_level = None
    cursor = dbapi_connection.cursor()
    try:
        cursor.execute("PRAGMA journal_mode=WAL")  # readers don't block the writer
        cursor.execute("PRAGMA foreign_keys=ON")  # off by default in SQLite, per connection
        cursor.execute("PRAGMA synchronous=NORMAL")  # safe with WAL; fsync at checkpoints
        cursor.execute(f"PRAGMA busy_timeout={BUSY_TIMEOUT_MS}")
    finally:
        cursor.close()


def _on_sqlite_begin(connection: Connection) -> None:
    connection.exec_driver_sql("BEGIN")


def make_writer_engine(url: str | URL) -> Engine:
    """The synchronous engine of the one writer (``writer.py``): the sqlite3 driver on
    the same file, set up like every other connection."""
    parsed = make_url(url)
    if parsed.get_backend_name() != "sqlite" or _sqlite_file(parsed) is None:
        raise ValueError(f"the store needs a SQLite database file, not {parsed.render_as_string(hide_password=True)!r}")
    # Used on the event loop and, while another process holds the lock, the writer thread:
    # never both at once.
    engine = create_engine(parsed.set(drivername="sqlite"), poolclass=NullPool, connect_args={"check_same_thread": False})
    event.listen(engine, "connect", _on_sqlite_connect)
    event.listen(engine, "begin", _on_sqlite_begin)
    return engine


def make_engine(url: str | URL, **kwargs: Any) -> AsyncEngine:
    """An AsyncEngine for ``url``, with the per-connection SQLite setup when it is SQLite.

    Used by ``Store.open`` and by ``migrations/env.py``, so the command line and the server
    see identically configured connections. ``kwargs`` go to ``create_async_engine``.
    """
    engine = create_async_engine(url, **kwargs)
    if engine.dialect.name == "sqlite":
        event.listen(engine.sync_engine, "connect", _on_sqlite_connect)
        event.listen(engine.sync_engine, "begin", _on_sqlite_begin)
    return engine


# --- validation ---------------------------------------------------------------------


def _check_token_hash(token_hash: str) -> str:
    # Guards against storing a raw token by mistake: only a sha256 hex digest fits.
    if not _TOKEN_HASH.fullmatch(token_hash):
        raise ValueError("token_hash must be 64 lowercase hex digits (sha256 of the token)")
    return token_hash


def _check_time(moment: datetime) -> datetime:
    # Checked here too (the column type also refuses) so callers get a plain ValueError.
    if not isinstance(moment, datetime):
        raise TypeError(f"expected a datetime, got {moment!r}")
    if moment.tzinfo is None or moment.utcoffset() is None:
        raise ValueError(f"naive datetime {moment!r}: pass an aware UTC datetime")
    return moment


def _join_move_log(race_id: int, player_id: int, moves: Sequence[str]) -> str:
    for move in moves:
        if "\n" in move or "\r" in move:
            raise ValueError(f"race {race_id}, player {player_id}: a move contains a line break")
    return "\n".join(moves)


def _split_move_log(text: str) -> tuple[str, ...]:
    return tuple(text.split("\n")) if text else ()


# --- rows to records ----------------------------------------------------------------


def _challenge_record(row: DailyChallenge) -> DailyChallengeRecord:
    return DailyChallengeRecord(game=row.game, date=row.date, deal_number=row.deal_number, par=row.par)


def _race_record(row: Race) -> RaceRecord:
    status: RaceStatus = row.status  # type: ignore[assignment]  # CHECK constraint holds it
    return RaceRecord(
        id=row.id,
        code=row.code,
        game=row.game,
        deal_number=row.deal_number,
        private=row.private,
        created_by=row.created_by,
        created_at=row.created_at,
        started_at=row.started_at,
        finished_at=row.finished_at,
        status=status,
        time_limit_s=row.time_limit_s,
        kind=row.kind,
        daily_date=row.daily_date,
    )


def _result_record(row: Result, player_name: str) -> ResultRecord:
    return ResultRecord(
        race_id=row.race_id,
        player_id=row.player_id,
        player_name=player_name,
        outcome=RacerOutcome(row.outcome),
        rank=row.rank,
        time_ms=row.time_ms,
        moves=row.moves,
        home=row.home,
        total=row.total,
        move_log=_split_move_log(row.move_log),
        finished_at=row.finished_at,
    )


@functools.cache
def _stats_upsert() -> Any:
    """INSERT a racer's first result of a game, or fold it into their row (built once)."""
    table = PlayerStats.__table__
    statement = sqlite_insert(table)
    old, new = table.c, statement.excluded
    # A win with no time yet, a faster time, or the same time in fewer moves.
    better = and_(
        new.best_time_ms.is_not(None),
        or_(
            old.best_time_ms.is_(None), new.best_time_ms < old.best_time_ms,
            and_(new.best_time_ms == old.best_time_ms, new.best_moves < old.best_moves),
        ),
    )
    return statement.on_conflict_do_update(
        index_elements=[old.player_id, old.game],
        set_={
            "games": old.games + 1,
            "wins": old.wins + new.wins,
            "win_moves": old.win_moves + new.win_moves,
            "win_rate": cast(old.wins + new.wins, Float) / (old.games + 1),
            "last_win_at": case((new.wins == 1, new.last_win_at), else_=old.last_win_at),
            "best_time_ms": case((better, new.best_time_ms), else_=old.best_time_ms),
            "best_moves": case((better, new.best_moves), else_=old.best_moves),
            "best_at": case((better, new.best_at), else_=old.best_at),
        },
    )


def _update_stats(session: Session, game: str, rows: Sequence[dict[str, Any]]) -> None:
    """Fold new results into ``player_stats`` (inside the caller's write job): one upsert
    for the room, computed by SQLite. The ORM's load-change-flush of one object per racer
    made this the costliest part of finishing a race (~2 ms of the event loop per race)."""
    values = []
    for row in rows:
        won = row["outcome"] == RacerOutcome.WON
        values.append({
            "player_id": row["player_id"], "game": game, "games": 1, "wins": int(won),
            "win_rate": float(won), "win_moves": row["moves"] if won else 0,
            "last_win_at": row["finished_at"] if won else None,
            "best_time_ms": row["time_ms"] if won else None, "best_moves": row["moves"] if won else None,
            "best_at": row["finished_at"] if won else None,
        })
    session.execute(_stats_upsert(), values)  # one statement, executed per racer


# --- the store ----------------------------------------------------------------------


class Store:
    """Async access to the race database. Open with ``await Store.open(url)``.

    Reads are short transactions on pooled aiosqlite connections, so they run concurrently
    from different tasks (WAL: readers never wait for the writer). Every write is one job
    of the one writer (``writer.py``), one transaction, in the order submitted, run on the
    event loop (or on the writer thread while another process holds SQLite's write lock).
    Write jobs start with their write statement, so they take SQLite's write lock before
    reading.
    """

    def __init__(self, engine: AsyncEngine, writer_engine: Engine, lock: ServerLock | None = None) -> None:
        self._engine = engine
        # expire_on_commit=False: rows are turned into records after commit. Reads see
        # storage faults as StorageUnavailable, like writes.
        self._sessions = translating(async_sessionmaker(engine, expire_on_commit=False))
        self._writer = Writer(
            writer_engine, MoveLog.__table__, MOVE_LOG_COLUMNS, self._observe_commit, BUSY_TIMEOUT_MS  # type: ignore[arg-type]
        )
        self._lock = lock  # held while this store serves the file (open(serve=True))
        self.commit_observer: Any = None  # called with (rows, seconds, on_loop) after each move-log commit

    async def _write(self, job: Callable[[Session], T]) -> T:
        """Run a write job through the writer; callers see store errors only."""
        try:
            return await self._writer.run(job)
        except SQLAlchemyError as error:  # e.g. a full disk, or "database is locked" past busy_timeout
            raise store_error(error, "database write failed") from error

    def _observe_commit(self, rows: int, seconds: float, on_loop: bool) -> None:
        if self.commit_observer is not None:
            self.commit_observer(rows, seconds, on_loop)

    @classmethod
    async def open(cls, url: str, *, serve: bool = False) -> Self:
        """Connect, create a SQLite file's directory if needed, and upgrade to head.

        Refuses an empty file (``DatabaseUnusable``): opening it would silently make it a
        new database. ``serve``: for the server, which must be the file's only one: it takes
        the file's lock first (``lock.py``; ``DatabaseInUse`` while another server holds
        it), and checks the whole file (``integrity.py``) before anything writes to it."""
        ensure_sqlite_directory(url)
        path = _sqlite_file(make_url(url))
        lock = ServerLock.acquire(path) if serve and path is not None else None
        try:
            if path is not None:
                check_database_file(path, thorough=serve)
            writer_engine = make_writer_engine(url)
            engine = make_engine(url)
            try:
                await upgrade_to_head(engine)
            except BaseException:
                await engine.dispose()
                writer_engine.dispose()
                raise
        except BaseException:
            if lock is not None:
                lock.release()
            raise
        return cls(engine, writer_engine, lock)

    async def close(self) -> None:
        try:
            await self._writer.close()
            await self._engine.dispose()
        finally:
            if self._lock is not None:  # after the last write: the next server may start
                self._lock.release()

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.close()

    @property
    def engine(self) -> AsyncEngine:
        """The underlying engine, for tests and diagnostics; the server shouldn't need it."""
        return self._engine

    # --- players --------------------------------------------------------------------

    async def create_player(self, name: str, token_hash: str, now: datetime) -> PlayerRecord:
        """A new player. Raises NameTaken when another player's name looks the same
        (``players.name_key``, unique), ConstraintViolation for a token hash in use."""
        result = await self._write(players.create(name, _check_token_hash(token_hash), _check_time(now)))
        if result is players.NAME_TAKEN:
            raise NameTaken(f"another player's name looks like {name!r}")
        if isinstance(result, IntegrityError):
            raise ConstraintViolation("a player with this token hash already exists") from result
        return result  # type: ignore[return-value]

    async def player_by_token_hash(self, token_hash: str) -> PlayerRecord | None:
        async with self._sessions() as session:
            row = await session.scalar(select(Player).where(Player.token_hash == token_hash))
            return None if row is None else players.player_record(row)

    async def player_by_name(self, name: str) -> PlayerRecord | None:
        """The player whose name looks like ``name`` (the same ``names.name_key``: case,
        look-alike letters and invisible characters aside), if there is one."""
        async with self._sessions() as session:
            row = await session.scalar(players.by_key(), {"key": name_key(name)})
            return None if row is None else players.player_record(row)

    async def player(self, player_id: int) -> PlayerRecord | None:
        async with self._sessions() as session:
            row = await session.get(Player, player_id)
            return None if row is None else players.player_record(row)

    async def rename_player(self, player_id: int, name: str) -> None:
        """Raises NameTaken when another player's name looks the same, NotFound."""
        result = await self._write(players.rename(player_id, name))
        if result is players.NAME_TAKEN:
            raise NameTaken(f"another player's name looks like {name!r}")
        if result == 0:
            raise NotFound(f"no player {player_id}")

    # --- races ----------------------------------------------------------------------

    async def create_race(
        self,
        *,
        code: str,
        game: str,
        deal_number: int,
        private: bool,
        created_by: int,
        time_limit_s: int,
        now: datetime,
        kind: str = "race",
        daily_date: str | None = None,
    ) -> RaceRecord:
        """A new race in status 'open'. Raises CodeTaken if ``code`` is in use.

        ``kind="daily"`` with ``daily_date`` marks a daily challenge attempt."""
        if not 1 <= len(code) <= CODE_MAX_LENGTH:
            raise ValueError(f"a race code has 1 to {CODE_MAX_LENGTH} characters")
        row = Race(
            code=code,
            game=game,
            deal_number=deal_number,
            private=private,
            created_by=created_by,
            created_at=_check_time(now),
            started_at=None,
            finished_at=None,
            status="open",
            time_limit_s=time_limit_s,
            kind=kind,
            daily_date=daily_date,
        )

        def write(session: Session) -> RaceRecord | IntegrityError:
            session.add(row)
            try:
                session.commit()
            except IntegrityError as error:
                return error
            return _race_record(row)

        failure = await self._write(write)
        if isinstance(failure, RaceRecord):
            return failure
        # Tell a taken code from a bad created_by without parsing driver messages.
        if await self.race_by_code(code) is not None:
            raise CodeTaken(f"race code {code!r} is taken") from failure
        raise ConstraintViolation(f"cannot create race: {failure.orig}") from failure

    async def race(self, race_id: int) -> RaceRecord | None:
        async with self._sessions() as session:
            row = await session.get(Race, race_id)
            return None if row is None else _race_record(row)

    async def race_by_code(self, code: str) -> RaceRecord | None:
        async with self._sessions() as session:
            row = await session.scalar(select(Race).where(Race.code == code))
            return None if row is None else _race_record(row)

    async def mark_race_started(self, race_id: int, started_at: datetime, player_ids: Sequence[int] = ()) -> None:
        """'open' -> 'running', recording who races. Raises NotFound, or RaceStateError if
        it isn't open."""
        started = _check_time(started_at)

        def write(session: Session) -> None:
            _transition(session, _start_statement(), race_id, "open", started_at=started)
            if player_ids:  # who races replaces who was in the lobby
                _replace_entries(session, race_id, player_ids)
            session.commit()

        await self._write(write)

    async def set_race_entries(self, race_id: int, player_ids: Sequence[int]) -> None:
        """Who is in an open race's lobby now (``recover`` brings lobbies back with them)."""

        def write(session: Session) -> None:
            _replace_entries(session, race_id, player_ids)
            session.commit()

        await self._write(write)

    # --- the move log -----------------------------------------------------------------

    def log_moves_then(
        self, race_id: int, player_id: int, entries: Sequence[tuple[int, str, str, int]],
        done: Callable[[BaseException | None], None],
    ) -> None:
        """Append (seq, kind, text, at_ms) entries; then ``done(None)`` once they are
        committed, or ``done(error)`` (a ``StoreError`` for a database failure): always
        later, on the loop. Calls made in one turn of the loop share a commit (group commit,
        ``writer.py``). The hot path: nothing to await, so no task to wake per move."""
        rows = [(race_id, player_id, seq, kind, text, at_ms) for seq, kind, text, at_ms in entries]  # MOVE_LOG_COLUMNS

        def settled(error: BaseException | None, _: Any) -> None:
            if isinstance(error, SQLAlchemyError):
                # an unknown race or player, a bad kind, a full disk: the whole batch failed
                error = store_error(error, f"cannot log moves of race {race_id}")
            done(error)

        self._writer.append_moves(rows, settled)

    async def log_moves(self, race_id: int, player_id: int, entries: Sequence[tuple[int, str, str, int]]) -> None:
        """``log_moves_then``, awaited: returns once the entries are committed, or raises."""
        committed: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self.log_moves_then(race_id, player_id, entries, functools.partial(resolve, committed))
        await committed

    async def running_races(self) -> list[RunningRaceRecord]:
        """Every race left running (by a crash or a restart), with its racers and logs."""
        async with self._sessions() as session:
            races = list(await session.scalars(select(Race).where(Race.status == "running").order_by(Race.id)))
            logs: dict[int, dict[int, list[tuple[int, str, str, int]]]] = {race.id: {} for race in races}
            if races:
                # One pass over the journal's tail: from the oldest running race's first entry.
                tail = min(race.log_from or 0 for race in races)
                running = select(Race.id).where(Race.status == "running")
                entries = await session.execute(
                    select(MoveLog.race_id, MoveLog.player_id, MoveLog.seq, MoveLog.kind, MoveLog.text, MoveLog.at_ms)
                    .where(MoveLog.id >= tail, MoveLog.race_id.in_(running)).order_by(MoveLog.id)
                )
                for race_id, player_id, *entry in entries:
                    if race_id in logs:  # always, within one read transaction: a guard
                        logs[race_id].setdefault(player_id, []).append(tuple(entry))  # type: ignore[arg-type]
            out = []
            for race in races:
                players = (
                    await session.execute(
                        select(Player.id, Player.name).join(RaceEntry, RaceEntry.player_id == Player.id)
                        .where(RaceEntry.race_id == race.id).order_by(Player.id)
                    )
                ).all()
                log: dict[int, list[tuple[int, str, str, int]]] = {pid: [] for pid, _ in players} | logs[race.id]
                ranked = await session.scalar(select(DailyAttempt.date).where(DailyAttempt.race_id == race.id))
                out.append(
                    RunningRaceRecord(
                        race=_race_record(race),
                        players=tuple((pid, name) for pid, name in players),
                        logs={pid: tuple(sorted(entries)) for pid, entries in log.items()},  # by seq
                        daily_ranked=ranked is not None,
                    )
                )
            return out

    async def open_races(self) -> list[OpenRaceRecord]:
        """Every race still in its lobby, with who is in it (``set_race_entries``)."""
        async with self._sessions() as session:
            races = list(await session.scalars(select(Race).where(Race.status == "open").order_by(Race.id)))
            entries = await session.execute(
                select(RaceEntry.race_id, Player.id, Player.name).join(Player, Player.id == RaceEntry.player_id)
                .join(Race, Race.id == RaceEntry.race_id).where(Race.status == "open").order_by(Player.id)
            )
            players: dict[int, list[tuple[int, str]]] = {race.id: [] for race in races}
            for race_id, player_id, name in entries:
                players.setdefault(race_id, []).append((player_id, name))
            return [OpenRaceRecord(_race_record(race), tuple(players[race.id])) for race in races]

    async def finished_race(self, code: str) -> FinishedRaceRecord | None:
        """A finished race by its join code, with its results in rank order."""
        race = await self.race_by_code(code)
        if race is None or race.status != "finished":
            return None
        async with self._sessions() as session:
            ranked = await session.scalar(select(DailyAttempt.date).where(DailyAttempt.race_id == race.id))
        return FinishedRaceRecord(race, tuple(await self.race_results(race.id)), daily_ranked=ranked is not None)

    async def finish_race(
        self, race_id: int, finished_at: datetime, results: Sequence[ResultRecord]
    ) -> None:
        """'running' -> 'finished' plus every result row, in one transaction.

        Returns only after the commit; on any error nothing is written. Raises NotFound or
        RaceStateError (race missing / not running), ConstraintViolation (e.g. an unknown
        player or a player listed twice), ValueError (a result for another race, an
        unknown outcome, a move with a line break). ``player_name`` is ignored.
        """
        rows: list[dict[str, Any]] = []
        for r in results:
            if r.race_id != race_id:
                raise ValueError(f"result for race {r.race_id} passed to finish_race({race_id})")
            if r.outcome not in OUTCOMES:
                raise ValueError(f"unknown outcome {r.outcome!r}")
            rows.append(
                {
                    "race_id": race_id,
                    "player_id": r.player_id,
                    "outcome": RacerOutcome(r.outcome).value,
                    "rank": r.rank,
                    "time_ms": r.time_ms,
                    "moves": r.moves,
                    "home": r.home,
                    "total": r.total,
                    "move_log": _join_move_log(race_id, r.player_id, r.move_log),
                    "finished_at": _check_time(r.finished_at),
                }
            )
        finished = _check_time(finished_at)

        def write(session: Session) -> None:
            # The UPDATE comes first: it takes the write lock and proves the race is running.
            game, deal_number = _transition(session, _finish_statement(), race_id, "running", finished_at=finished)
            ranked = session.scalar(_statements().ranked_date, {"race_id": race_id})
            for row in rows:
                rank_class, sort_primary, _ = rank_key(row["outcome"], row["time_ms"], row["moves"], row["total"] - row["home"])
                row.update(
                    game=game, deal_number=deal_number, daily_date=ranked, rank_class=rank_class, sort_primary=sort_primary
                )
            try:
                if rows:
                    session.execute(_statements().add_results, rows)  # Core: the ORM's bulk path costs more
                    _update_stats(session, game, rows)
                session.commit()
            except IntegrityError as error:
                raise ConstraintViolation(f"cannot store results of race {race_id}: {error.orig}") from error

        await self._write(write)

    async def race_results(self, race_id: int) -> list[ResultRecord]:
        """The race's results ordered by rank (then player id), with player names."""
        statement = (
            select(Result, Player.name)
            .join(Player, Player.id == Result.player_id)
            .where(Result.race_id == race_id)
            .order_by(Result.rank, Result.player_id)
        )
        async with self._sessions() as session:
            rows = (await session.execute(statement)).all()
            return [_result_record(result, name) for result, name in rows]

    # --- daily challenges -------------------------------------------------------------

    async def find_daily_challenge(self, game: str, date: str) -> DailyChallengeRecord | None:
        """The stored challenge of ``game`` on ``date``, if it has been chosen."""
        async with self._sessions() as session:
            row = await session.get(DailyChallenge, (game, date))
            return None if row is None else _challenge_record(row)

    async def daily_challenge(
        self, game: str, date: str, deal_number: int, now: datetime, par: int | None = None
    ) -> DailyChallengeRecord:
        """The challenge of ``game`` on ``date``, created with ``deal_number`` and ``par`` if new.

        The first insert wins, so all processes sharing the database agree on the deal even
        if they chose it differently (another solver budget, an older version)."""
        found = await self.find_daily_challenge(game, date)
        if found is not None:
            return found
        # A fresh transaction that starts with its write: in WAL mode a transaction that
        # read first cannot take the write lock once another writer has committed.
        row = DailyChallenge(game=game, date=date, deal_number=deal_number, par=par, created_at=_check_time(now))
        await self._write(_insert_unless_present(row))  # another process may have made it first
        found = await self.find_daily_challenge(game, date)
        assert found is not None
        return found

    async def daily_challenges(self, date: str) -> list[DailyChallengeRecord]:
        async with self._sessions() as session:
            rows = await session.scalars(select(DailyChallenge).where(DailyChallenge.date == date).order_by(DailyChallenge.game))
            return [_challenge_record(r) for r in rows]

    async def claim_daily_attempt(self, game: str, date: str, player_id: int, race_id: int, now: datetime) -> bool:
        """Make ``race_id`` the player's ranked attempt at the day's ``game`` challenge.

        True if it is the first attempt (ranked); False if the player already had one."""
        row = DailyAttempt(game=game, date=date, player_id=player_id, race_id=race_id, started_at=_check_time(now))
        return await self._write(_insert_unless_present(row))

    async def ranked_attempt(self, game: str, date: str, player_id: int) -> int | None:
        """The race id of the player's ranked attempt at that challenge, if any."""
        async with self._sessions() as session:
            return await session.scalar(
                select(DailyAttempt.race_id).where(
                    DailyAttempt.game == game, DailyAttempt.date == date, DailyAttempt.player_id == player_id
                )
            )

    # --- leaderboards and profiles ------------------------------------------------------

    async def leaderboard(
        self,
        board: str,
        game: str,
        *,
        deal: int | None = None,
        date: str | None = None,
        min_games: int = 10,
        page: int = 1,
        page_size: int = 20,
        viewer: int | None = None,
    ) -> LeaderboardPage:
        """One page of a board (see ``boards``), with the viewer's own entry wherever it is."""
        if board not in boards.BOARDS:
            raise ValueError(f"unknown board {board!r}")
        if page < 1 or not 1 <= page_size <= 100:
            raise ValueError("page starts at 1; page_size is 1 to 100")
        async with self._sessions() as session:
            if board in ("deal", "daily"):
                if (board == "deal") != (deal is not None) or (board == "daily") != (date is not None):
                    raise ValueError("the deal board needs a deal number; the daily board a date")
                result = await boards.result_board(
                    session, board=board, game=game, deal=deal, date=date, page=page, page_size=page_size, viewer=viewer
                )
                if board == "daily":  # the par, to set beside each entry's moves
                    challenge = await session.get(DailyChallenge, (game, date))
                    result = dataclasses.replace(result, par=challenge.par if challenge else None)
                return result
            return await boards.stats_board(
                session, board=board, game=game, min_games=min_games, page=page, page_size=page_size, viewer=viewer
            )

    async def profile(self, player_id: int) -> ProfileRecord | None:
        async with self._sessions() as session:
            player = await session.get(Player, player_id)
            if player is None:
                return None
            stats = await session.scalars(select(PlayerStats).where(PlayerStats.player_id == player_id).order_by(PlayerStats.game))
            dates = await session.scalars(
                select(DailyAttempt.date).where(DailyAttempt.player_id == player_id)
                .group_by(DailyAttempt.date).order_by(DailyAttempt.date.desc()).limit(400)
            )
            return ProfileRecord(
                player=players.player_record(player),
                games=tuple(GameStatsRecord(s.game, s.games, s.wins, s.win_rate, s.best_time_ms, s.best_moves) for s in stats),
                daily_dates=tuple(dates),
            )

    async def abandon_race(self, race_id: int) -> bool:
        """Delete a race that is still 'open' (never started): it has no results and
        nothing refers to it. Returns False, changing nothing, if the race is missing or
        has started; a started race is ended with finish_race instead."""
        def write(session: Session) -> bool:
            # Its entrants first: they refer to the race. Nothing is deleted unless it is open.
            open_race = select(Race.id).where(Race.id == race_id, Race.status == "open").scalar_subquery()
            session.execute(delete(RaceEntry).where(RaceEntry.race_id == open_race))
            count = session.execute(delete(Race).where(Race.id == race_id, Race.status == "open")).rowcount  # type: ignore[attr-defined]
            session.commit()
            return bool(count)

        return await self._write(write)

    # --- server settings ------------------------------------------------------------

    async def deal_secret(self) -> bytes:
        """The server's deal secret: random bytes made on first use and kept in
        ``settings``, so a deal number means the same cards after a restart."""
        stored = await self._setting(DEAL_SECRET_SETTING)
        if stored is None:
            fresh = Setting(name=DEAL_SECRET_SETTING, value=secrets.token_hex(DEAL_SECRET_BYTES))
            await self._write(_insert_unless_present(fresh))  # or another process's is used
            stored = await self._setting(DEAL_SECRET_SETTING)
            if stored is None:
                raise StoreError("the deal secret could not be stored")
        return bytes.fromhex(stored)

    async def _setting(self, name: str) -> str | None:
        async with self._sessions() as session:
            row = await session.get(Setting, name)
            return None if row is None else row.value


# --- write jobs (run by the writer, see writer.py) ------------------------------------


class _Statements(NamedTuple):
    """Statements of the race lifecycle's writes, built once (``_statements``): building
    one (coercing its clauses, each time) cost more than SQLite's work to run it."""

    add_entries: Any
    ranked_date: Any
    add_results: Any


@functools.cache
def _statements() -> _Statements:
    attempts = DailyAttempt.__table__.c
    return _Statements(
        add_entries=insert(RaceEntry.__table__),
        ranked_date=select(attempts.date).where(attempts.race_id == bindparam("race_id")),
        add_results=insert(Result.__table__),
    )


def _transition_statement(to: RaceStatus, **values: Any) -> Any:
    """UPDATE a race from the status bound as ``frm`` to ``to``, setting ``values``, and
    return its game and deal number; the race is bound as ``race_id``."""
    races = Race.__table__.c
    return (
        update(Race.__table__).where(races.id == bindparam("race_id"), races.status == bindparam("frm"))
        .values(status=to, **values).returning(races.game, races.deal_number)
    )


@functools.cache
def _start_statement() -> Any:
    # Its entries will come after every entry there is: SQLite gives a new row the largest
    # rowid plus one, and the journal never deletes.
    next_entry = select(func.coalesce(func.max(MoveLog.id), 0) + 1).scalar_subquery()
    return _transition_statement("running", started_at=bindparam("started_at", type_=Race.started_at.type), log_from=next_entry)


@functools.cache
def _finish_statement() -> Any:
    return _transition_statement("finished", finished_at=bindparam("finished_at", type_=Race.finished_at.type))


def _transition(session: Session, statement: Any, race_id: int, frm: RaceStatus, **values: Any) -> tuple[str, int]:
    """Run a ``_transition_statement`` on the race inside the caller's transaction and
    return its (game, deal number), or raise NotFound / RaceStateError."""
    row = session.execute(statement, {"race_id": race_id, "frm": frm, **values}).first()
    if row is None:
        race = session.get(Race, race_id)
        if race is None:
            raise NotFound(f"no race {race_id}")
        raise RaceStateError(f"race {race_id} is {race.status!r}, not {frm!r}")
    return row.game, row.deal_number


def _replace_entries(session: Session, race_id: int, player_ids: Sequence[int]) -> None:
    session.execute(delete(RaceEntry).where(RaceEntry.race_id == race_id))
    if player_ids:
        session.execute(_statements().add_entries, [{"race_id": race_id, "player_id": p} for p in player_ids])


def _execute_count(statement: Any) -> Callable[[Session], int]:
    """A job running one UPDATE or DELETE: how many rows it changed."""

    def write(session: Session) -> int:
        count = session.execute(statement).rowcount  # type: ignore[attr-defined]
        session.commit()
        return int(count)

    return write


def _insert_unless_present(row: Any) -> Callable[[Session], bool]:
    """A job inserting ``row``: False (nothing written) if its key is already taken."""

    def write(session: Session) -> bool:
        session.add(row)
        try:
            session.commit()
        except IntegrityError:
            return False
        return True

    return write
