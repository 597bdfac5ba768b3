"""The async Store: every read and write of players, races and results.

This module owns the transactions of players, races and the move log; ``daily.py`` holds
the rest of the store (daily challenges, boards, profiles, settings), ``engines.py`` how
connections are made, ``rows.py`` the translation between rows and ``records`` and
``writes.py`` the write jobs. Callers get frozen dataclasses and the store's exceptions
(``errors.py``), never SQLAlchemy objects or errors.
"""

from __future__ import annotations

import asyncio
import functools
import hashlib
from collections.abc import Callable, Sequence
from datetime import datetime
from types import TracebackType
from typing import Any, Self, TypeVar

from sqlalchemy import Engine, select
from sqlalchemy.engine import make_url
from sqlalchemy.exc import DBAPIError, IntegrityError, SQLAlchemyError
from sqlalchemy.ext.asyncio import AsyncEngine, async_sessionmaker
from sqlalchemy.orm import Session

from ..names import name_key
from ..results import RacerOutcome
from . import engines, players
from .daily import DailyAndBoards
from .engines import ensure_sqlite_directory, make_engine, make_writer_engine, sqlite_file
from .errors import (
    CodeTaken,
    ConstraintViolation,
    DatabaseUnusable,
    NameTaken,
    NotFound,
    storage_fault,
    store_error,
    translating,
)
from .integrity import check_database_file
from .lock import PostgresServerLock, ServerLock
from .migrate import upgrade_to_head
from .models import DailyAttempt, MoveLog, Player, Race, Result
from .pg_writer import PostgresWriter
from .records import (
    CODE_MAX_LENGTH,
    OUTCOMES,
    FinishedRaceRecord,
    PlayerRecord,
    RaceRecord,
    ResultRecord,
)
from .review import Review
from .rows import check_time, check_token_hash, join_move_log, join_move_times, race_record, result_record
from .series import Series
from .unfinished import Unfinished
from .writer import Writer, resolve
from .writes import (
    HELD_CLASS,
    abandon,
    banned_players,
    check_epoch,
    claim,
    finish_statement,
    place_on_boards,
    replace_entries,
    start_statement,
    statements,
    transition,
    update_stats,
)

T = TypeVar("T")
MOVE_LOG_COLUMNS = ("race_id", "player_id", "seq", "kind", "text", "at_ms")  # log_moves builds rows in this order


def hash_token(token: str) -> str:
    """The ``players.token_hash`` of a secret token: sha256 of its UTF-8, as lowercase hex."""
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


def _connect_refused(error: BaseException) -> str | None:
    """Why PostgreSQL refused the connection itself, for the operator: no such database
    (SQLSTATE 3D000), or no such role or a wrong password (class 28)."""
    driver: BaseException | None = error.orig if isinstance(error, DBAPIError) else error
    if driver is None:
        return None
    code = getattr(driver, "sqlstate", None) or getattr(driver.__cause__, "sqlstate", None)
    if not isinstance(code, str) or not (code == "3D000" or code.startswith("28")):
        return None
    message = str(driver).split("\n", 1)[0]
    if code == "3D000":
        return f"{message} (create it first, e.g. with createdb; the server makes the tables itself)"
    return f"{message} (check the user and password in --db)"


# --- the store ----------------------------------------------------------------------


class Store(DailyAndBoards, Unfinished, Review, Series):
    """Async access to the race database. Open with ``await Store.open(url)``.

    Reads are short transactions on pooled aiosqlite (or asyncpg) connections, so they run concurrently
    from different tasks (WAL: readers never wait for the writer). Every write is one job
    of the one writer (``writer.py``), one transaction, in the order submitted, run on the
    event loop (or on the writer thread while another process holds SQLite's write lock).
    Write jobs start with their write statement, so they take SQLite's write lock before
    reading. On PostgreSQL the writer is ``pg_writer.PostgresWriter``: the same jobs, in
    the same order, carried to the server by a task (a commit there is a round trip).
    """

    def __init__(
        self, engine: AsyncEngine, writer_engine: Engine | None, lock: ServerLock | PostgresServerLock | None = None
    ) -> None:
        """``writer_engine``: SQLite's writer's (``engines.make_writer_engine``); None on
        PostgreSQL, whose writer uses ``engine`` (``pg_writer.py``)."""
        self._engine = engine
        # expire_on_commit=False: rows are turned into records after commit. Reads see
        # storage faults as StorageUnavailable, like writes.
        self._sessions = translating(async_sessionmaker(engine, expire_on_commit=False))
        self._writer: Writer | PostgresWriter
        if writer_engine is None:
            self._writer = PostgresWriter(engine, MoveLog.__table__, MOVE_LOG_COLUMNS, self._observe_commit)
        else:
            self._writer = Writer(
                writer_engine, MoveLog.__table__, MOVE_LOG_COLUMNS, self._observe_commit, engines.BUSY_TIMEOUT_MS
            )
        self._lock = lock  # held while this store serves the database (open(serve=True))
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
    async def open(cls, url: str, *, serve: bool = False, shared: bool = False) -> Self:
        """Connect, create a SQLite file's directory if needed, and upgrade to head.

        Refuses an empty file (``DatabaseUnusable``): opening it would silently make it a
        new database. ``serve``: for the server, which must be the database's only one: it
        takes the database's lock first (``lock.py``; ``DatabaseInUse`` while another server
        holds it) and, for a SQLite file, checks the whole file (``integrity.py``) before
        anything writes to it. A PostgreSQL URL (``postgresql+asyncpg://``) gets the
        PostgreSQL writer (``pg_writer.py``) and, for ``serve``, an advisory lock; a
        PostgreSQL server that cannot be reached is ``DatabaseUnusable``, with the reason.
        ``shared``: a node of a cluster, which shares a PostgreSQL database with the other
        nodes (no lock: leases and fencing keep them apart, docs/cluster.md)."""
        if engines.is_postgresql(url):
            return await cls._open_postgresql(url, serve and not shared)
        if shared:
            raise DatabaseUnusable("a cluster shares a PostgreSQL database: a SQLite file has one server only")
        ensure_sqlite_directory(url)
        path = sqlite_file(make_url(url))
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

    @classmethod
    async def _open_postgresql(cls, url: str, serve: bool) -> Self:
        lock: PostgresServerLock | None = None
        engine = make_engine(url)
        try:
            try:
                if serve:
                    lock = await PostgresServerLock.acquire(url)
                await upgrade_to_head(engine)
            except (OSError, DBAPIError) as error:
                reason = storage_fault(error) or _connect_refused(error)
                if reason is None:
                    raise
                what = f"cannot use the PostgreSQL database {engines.describe(url)}"
                raise DatabaseUnusable(f"{what}: {reason}") from error
        except BaseException:
            await engine.dispose()
            if lock is not None:
                await lock.release()
            raise
        return cls(engine, None, lock)

    async def close(self) -> None:
        try:
            await self._writer.close()
            await self._engine.dispose()
        finally:
            if isinstance(self._lock, PostgresServerLock):
                await self._lock.release()
            elif self._lock is not None:  # after the last write: the next server may start
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
        result = await self._write(players.create(name, check_token_hash(token_hash), check_time(now)))
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
        best_of: int | None = None,
        series_id: int | None = None,
        series_number: int = 1,
        ghost: str | None = None,
        live_boards: bool = False,
    ) -> RaceRecord:
        """A new race in status 'open'. Raises CodeTaken if ``code`` is in use.

        ``kind="daily"`` with ``daily_date`` marks a daily challenge attempt; ``best_of``,
        ``series_id`` and ``series_number`` place it in a series, ``ghost`` names the run a
        practice race is raced against, ``live_boards`` shows spectators every board (its
        results are unranked: ``finish_race``) (``RaceRecord``)."""
        if not 1 <= len(code) <= CODE_MAX_LENGTH:
            raise ValueError(f"a race code has 1 to {CODE_MAX_LENGTH} characters")
        row = Race(
            code=code,
            game=game,
            deal_number=deal_number,
            private=private,
            created_by=created_by,
            created_at=check_time(now),
            started_at=None,
            finished_at=None,
            status="open",
            time_limit_s=time_limit_s,
            kind=kind,
            daily_date=daily_date,
            best_of=best_of,
            series_id=series_id,
            series_number=series_number,
            ghost=ghost,
            live_boards=live_boards,
        )

        def write(session: Session) -> RaceRecord | IntegrityError:
            session.add(row)
            try:
                session.commit()
            except IntegrityError as error:
                return error
            return race_record(row)

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
            return None if row is None else race_record(row)

    async def race_by_code(self, code: str) -> RaceRecord | None:
        async with self._sessions() as session:
            row = await session.scalar(select(Race).where(Race.code == code))
            return None if row is None else race_record(row)

    async def mark_race_started(
        self, race_id: int, started_at: datetime, player_ids: Sequence[int] = (), epoch: int | None = None
    ) -> None:
        """'open' -> 'running', recording who races. Raises NotFound, or RaceStateError if
        it isn't open; with ``epoch``, only while it is the race's (else ``Fenced``, nothing
        written: another node adopted the lobby)."""
        started = check_time(started_at)

        def write(session: Session) -> None:
            if epoch is not None:
                check_epoch(session, race_id, epoch)
            transition(session, start_statement(), race_id, "open", started_at=started)
            if player_ids:  # who races replaces who was in the lobby
                replace_entries(session, race_id, player_ids)
            session.commit()

        await self._write(write)

    async def set_race_entries(self, race_id: int, player_ids: Sequence[int], epoch: int | None = None) -> None:
        """Who is in an open race's lobby now (``recover`` brings lobbies back with them);
        with ``epoch``, only while it is the race's (else ``Fenced``, nothing written)."""

        def write(session: Session) -> None:
            if epoch is not None:
                check_epoch(session, race_id, epoch)
            replace_entries(session, race_id, player_ids)
            session.commit()

        await self._write(write)

    async def claim_race(self, race_id: int, expected: int | None = None) -> int:
        """Take the race over: raise its epoch, and return the new one. From the commit on,
        writes fenced with an older epoch fail with ``Fenced`` (``log_moves_then``,
        ``finish_race``); appends already under way commit first (pg_writer.py). With
        ``expected``, only if that is still its epoch (else ``Fenced``)."""
        return await self._write(functools.partial(claim, race_id=race_id, expected=expected))

    # --- the move log -----------------------------------------------------------------

    def log_moves_then(
        self, race_id: int, player_id: int, entries: Sequence[tuple[int, str, str, int]],
        done: Callable[[BaseException | None], None], epoch: int | None = None,
    ) -> None:
        """Append (seq, kind, text, at_ms) entries; then ``done(None)`` once they are
        committed, or ``done(error)`` (a ``StoreError`` for a database failure): always
        later, on the loop. Calls made in one turn of the loop share a commit (group commit,
        ``writer.py``). The hot path: nothing to await, so no task to wake per move.

        With ``epoch``, on PostgreSQL, the entries are written only while it is the race's
        epoch (else ``done(Fenced)``, nothing written). On SQLite one process holds the
        file (``lock.py``), so there is no other owner to fence out."""
        rows = [(race_id, player_id, seq, kind, text, at_ms) for seq, kind, text, at_ms in entries]  # MOVE_LOG_COLUMNS

        def settled(error: BaseException | None, _: Any) -> None:
            if isinstance(error, SQLAlchemyError):
                # an unknown race or player, a bad kind, a full disk: the whole batch failed
                error = store_error(error, f"cannot log moves of race {race_id}")
            done(error)

        if epoch is not None and isinstance(self._writer, PostgresWriter):
            self._writer.append_fenced(rows, settled, epoch)
        else:
            self._writer.append_moves(rows, settled)

    async def log_moves(
        self, race_id: int, player_id: int, entries: Sequence[tuple[int, str, str, int]], epoch: int | None = None
    ) -> None:
        """``log_moves_then``, awaited: returns once the entries are committed, or raises."""
        committed: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self.log_moves_then(race_id, player_id, entries, functools.partial(resolve, committed), epoch)
        await committed

    async def finished_race(self, code: str) -> FinishedRaceRecord | None:
        """A finished race by its join code, with its results in rank order."""
        race = await self.race_by_code(code)
        if race is None or race.status != "finished":
            return None
        async with self._sessions() as session:
            ranked = await session.scalar(select(DailyAttempt.date).where(DailyAttempt.race_id == race.id))
        return FinishedRaceRecord(race, tuple(await self.race_results(race.id)), daily_ranked=ranked is not None)

    async def finish_race(
        self, race_id: int, finished_at: datetime, results: Sequence[ResultRecord], epoch: int | None = None
    ) -> None:
        """'running' -> 'finished' plus every result row, in one transaction; with
        ``epoch``, only while it is the race's (else ``Fenced``).

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
                    "move_log": join_move_log(race_id, r.player_id, r.move_log),
                    "move_times": join_move_times(r.move_times),
                    "finished_at": check_time(r.finished_at),
                    "held": r.held,
                    "fair_play": r.fair_play,
                    "review": None,
                }
            )
        finished = check_time(finished_at)

        def write(session: Session) -> None:
            if epoch is not None:
                check_epoch(session, race_id, epoch)
            # The UPDATE comes first: it takes the write lock and proves the race is running.
            game, deal_number, live_boards = transition(
                session, finish_statement(), race_id, "running", finished_at=finished
            )
            ranked = session.scalar(statements().ranked_date, {"race_id": race_id})
            banned = set() if live_boards else banned_players(session, [row["player_id"] for row in rows])
            for row in rows:
                row.update(game=game, deal_number=deal_number, daily_date=ranked)
                place_on_boards(row, banned, live_boards)
            try:
                if rows:
                    session.execute(statements().add_results, rows)  # Core: the ORM's bulk path costs more
                    update_stats(session, game, [row for row in rows if row["rank_class"] < HELD_CLASS])
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
            return [result_record(result, name) for result, name in rows]

    async def abandon_race(self, race_id: int, epoch: int | None = None) -> bool:
        """Delete a race that is still 'open' (never started): it has no results and
        nothing refers to it. Returns False, changing nothing, if the race is missing or
        has started; a started race is ended with finish_race instead. With ``epoch``, only
        while it is the race's (else ``Fenced``, nothing deleted)."""
        return await self._write(functools.partial(abandon, race_id=race_id, epoch=epoch))

