"""The one writer on PostgreSQL: the interface of ``writer.Writer`` (``run(job)``,
``append_moves(rows, done)``, ``drain()``, ``close()``) over asyncpg.

SQLite's writer runs each write synchronously on the loop, because there a commit is CPU
work on the page cache. A PostgreSQL commit is a round trip to another process, which
waits for the WAL to reach the disk: the loop must go on serving meanwhile. So here one
task carries the writes to the server, one at a time, on one connection, in the order
they were submitted:

- Move-log appends are grouped (group commit): whatever was appended while the task was
  busy, or in the loop turn that woke it, goes in one statement, which is its own
  transaction: ``INSERT INTO move_log ... SELECT * FROM unnest($1, ..., $6)``, one column
  array per parameter, so one prepared statement serves every batch size, and one round
  trip commits it. Through asyncpg itself: SQLAlchemy would add its statement handling to
  every commit, for nothing (the rows are plain tuples). While one commit is in flight,
  the next batch gathers; the more the server is loaded, the bigger the batches.
- An append may be fenced (``append_fenced``): its rows are written only while their
  race's epoch is the one they carry (``Store.claim_race``), checked in the same
  statement; a batch with fenced appends goes through that statement instead.
- A write job is the same plain function the SQLite writer runs, given a synchronous
  ``Session`` through ``AsyncSession.run_sync`` (every statement an await on asyncpg,
  hidden by SQLAlchemy's greenlet bridge), in a transaction of its own.
- Every caller is told after its commit (or its failure), on the loop, in order: appends
  and jobs submitted before a job commit before it, as on SQLite (a race's last moves
  before its results).

The connection runs at READ COMMITTED: with one writer per database (the server's lock,
``lock.PostgresServerLock``) no other transaction writes beside it. A connection that
breaks (the server restarted, the connection was terminated) fails the item it was
carrying (``StorageUnavailable``; nothing is retried, because a commit whose answer was
lost may or may not have happened) and is replaced for the next one.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import time
from collections import deque
from collections.abc import Callable
from typing import Any, TypeVar

from sqlalchemy import Table
from sqlalchemy.dialects.postgresql.asyncpg import AsyncAdapt_asyncpg_connection
from sqlalchemy.exc import DBAPIError, OperationalError
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine, AsyncSession
from sqlalchemy.orm import Session

from .errors import Fenced
from .writer import Done, Rows, resolve

T = TypeVar("T")
Job = Callable[[Session], Any]
log = logging.getLogger("solitaire_race.store")

# Each column's array type, by the move log's column: asyncpg encodes a list per parameter.
_ARRAY_TYPES = {"race_id": "integer[]", "player_id": "integer[]", "seq": "integer[]", "kind": "varchar[]",
                "text": "varchar[]", "at_ms": "integer[]"}


class PostgresWriter:
    def __init__(
        self, engine: AsyncEngine, move_table: Table, columns: tuple[str, ...],
        on_commit: Callable[[int, float, bool], None] | None = None,
    ) -> None:
        self._engine = engine
        self._columns = columns  # the order of every appended row's values
        self._on_commit = on_commit  # (rows, seconds, on_loop) after each move-log commit: metrics
        arrays = ", ".join(f"${i}::{_ARRAY_TYPES[c]}" for i, c in enumerate(columns, start=1))
        names = ", ".join(columns)
        self._insert_sql = f"INSERT INTO {move_table.name} ({names}) SELECT * FROM unnest({arrays})"
        # Fenced: a row goes in only if its race's epoch is still the one it carries (-1:
        # unfenced). FOR SHARE locks the races' rows until the commit: a claim (UPDATE
        # races SET epoch = epoch + 1) waits for it, so a new owner reads the log after
        # these rows; and an insert that waited for a claim reads the new epoch (READ
        # COMMITTED re-reads a row locked after a concurrent update) and writes nothing.
        n = len(columns)
        # It returns the races' epochs as the rows were written: an append whose epoch is
        # not its race's was kept out.
        self._fenced_sql = (
            f"WITH fence AS (SELECT id, epoch FROM races WHERE id = ANY(${n + 2}::integer[]) FOR SHARE), "
            f"written AS (INSERT INTO {move_table.name} ({names}) SELECT {', '.join('u.' + c for c in columns)} "
            f"FROM unnest({arrays}, ${n + 1}::integer[]) AS u({names}, epoch) "
            "WHERE u.epoch < 0 OR EXISTS (SELECT 1 FROM fence f WHERE f.id = u.race_id AND f.epoch = u.epoch)) "
            "SELECT id, epoch FROM fence"
        )
        self._race_column = columns.index("race_id")
        self._queue: deque[tuple[Rows | Job, Done, int | None]] = deque()
        self._task: asyncio.Task[None] | None = None
        self._conn: AsyncConnection | None = None  # the writer's connection, opened on first use
        # asyncpg's connection under it, which the appends use: asked for once per connection,
        # because SQLAlchemy hands it out through a greenlet (get_raw_connection).
        self._driver: Any = None
        self._closed = False

    async def run(self, job: Callable[[Session], T]) -> T:
        """Run ``job(session)`` in a transaction of its own, after every write submitted
        before it, and return what it returns (or raise what it raises). The job commits;
        if it raises, its transaction is rolled back. Once queued, a job runs even if the
        caller stops waiting."""
        future: asyncio.Future[T] = asyncio.get_running_loop().create_future()
        self._submit(job, functools.partial(resolve, future))
        return await future

    def append_moves(self, rows: Rows, done: Done) -> None:
        """Append ``rows`` (values in the order of ``columns``) to the move log; then
        ``done(None, None)`` once they are committed, or ``done(exception, None)`` if their
        batch failed: always later, on the loop, never before this returns."""
        assert type(rows) is list  # a list is how the writer tells rows from a job
        self._submit(rows, done)

    def append_fenced(self, rows: Rows, done: Done, epoch: int) -> None:
        """``append_moves`` for rows of one race, written only while the race's epoch is
        ``epoch``; else ``done(Fenced, None)`` and nothing of them is written."""
        assert type(rows) is list and len({row[self._race_column] for row in rows}) <= 1
        self._submit(rows, done, epoch)

    def _submit(self, work: Rows | Job, done: Done, epoch: int | None = None) -> None:
        if self._closed:
            raise RuntimeError("the store is closed")
        self._queue.append((work, done, epoch))
        if self._task is None or self._task.done():
            self._task = asyncio.get_running_loop().create_task(self._carry())

    # --- the writer task --------------------------------------------------------------

    async def _carry(self) -> None:
        """Commit what is queued, in order, until nothing is: every append queued together
        in one statement, each job in its own transaction."""
        # Started at the loop turn after the first submission: that turn's appends are all queued.
        queue = self._queue
        while queue:
            epochs: dict[int, int] = {}  # of the fenced appends' races, as their rows were written
            if isinstance(queue[0][0], list):
                batch: list[tuple[Rows | Job, Done, int | None]] = []
                while queue and isinstance(queue[0][0], list):
                    batch.append(queue.popleft())
                rows = [row for moves, _, _ in batch for row in moves]  # type: ignore[union-attr]
                started = time.perf_counter()
                if all(epoch is None for _, _, epoch in batch):
                    error = await self._append(rows)
                else:
                    error, epochs = await self._append_fenced(batch, rows)
                outcome: tuple[BaseException | None, Any] = (error, None)
                if error is None and self._on_commit is not None:
                    self._observe(len(rows), time.perf_counter() - started)
            else:
                batch = [queue.popleft()]
                outcome = await self._job(batch[0][0])  # type: ignore[arg-type]
            for work, done, epoch in batch:
                try:
                    race = work[0][self._race_column] if epoch is not None and work else None  # type: ignore[index]
                    if race is not None and outcome[0] is None and epochs.get(race) != epoch:
                        done(Fenced(f"race {race} has a newer owner than epoch {epoch}"), None)
                    else:
                        done(*outcome)
                except Exception:  # one caller's failure must not keep the others waiting
                    log.exception("a caller failed on being told how its write went")

    def _observe(self, rows: int, seconds: float) -> None:
        try:
            self._on_commit(rows, seconds, True)  # type: ignore[misc]  # committed from the loop
        except Exception:
            log.exception("the commit observer failed")

    async def _connection(self) -> AsyncConnection:
        if self._conn is None:
            conn = await self._engine.connect()
            try:
                await conn.execution_options(isolation_level="READ COMMITTED")
                raw = await conn.get_raw_connection()
            except BaseException:
                await conn.close()
                raise
            self._conn, self._driver = conn, raw.driver_connection
        return self._conn

    async def _drop_connection(self) -> None:
        """Forget a connection that broke: the next item gets a new one."""
        conn, self._conn, self._driver = self._conn, None, None
        if conn is not None:
            try:
                await conn.invalidate()
                await conn.close()
            except Exception:  # it is gone either way
                pass

    async def _append(self, rows: Rows) -> BaseException | None:
        """One statement, one transaction (asyncpg runs it in autocommit), one round trip."""
        columns = [list(values) for values in zip(*rows, strict=True)]
        return (await self._execute(self._insert_sql, columns, fetch=False))[0]

    async def _append_fenced(
        self, batch: list[tuple[Rows | Job, Done, int | None]], rows: Rows
    ) -> tuple[BaseException | None, dict[int, int]]:
        """``_append`` through the fence; also returns the fenced races' epochs."""
        epochs = [-1 if epoch is None else epoch for moves, _, epoch in batch for _ in moves]  # type: ignore[union-attr]
        races = sorted({moves[0][self._race_column] for moves, _, epoch in batch if epoch is not None and moves})  # type: ignore[index]
        columns = [list(values) for values in zip(*rows, strict=True)]
        return await self._execute(self._fenced_sql, [*columns, epochs, races], fetch=True)

    async def _execute(
        self, sql: str, arrays: list[list[Any]], fetch: bool
    ) -> tuple[BaseException | None, dict[int, int]]:
        """Run one statement through asyncpg itself; with ``fetch``, the (race, epoch) rows it returned."""
        try:
            await self._connection()
            driver = self._driver
            if fetch:
                return None, {record[0]: record[1] for record in await driver.fetch(sql, *arrays)}
            await driver.execute(sql, *arrays)
        except Exception as exc:
            closed = self._conn is None or _driver_closed(self._conn)
            if closed:
                await self._drop_connection()
            return _sqlalchemy_error(sql, exc, self._engine, closed), {}
        return None, {}

    async def _job(self, job: Job) -> tuple[BaseException | None, Any]:
        # Every failure, even in rollback or close, is this job's alone.
        try:
            conn = await self._connection()
        except Exception as exc:
            return _sqlalchemy_error(None, exc, self._engine, True), None
        try:
            # expire_on_commit=False: a job builds its records from rows after committing.
            async with AsyncSession(bind=conn, expire_on_commit=False) as session:
                try:
                    return None, await session.run_sync(job)
                except Exception:
                    await session.rollback()
                    raise
        except Exception as exc:
            if conn.invalidated or conn.closed or _driver_closed(conn):
                await self._drop_connection()
            elif conn.in_transaction():
                await conn.rollback()
            return exc, None

    # --- shutdown ---------------------------------------------------------------------

    async def drain(self) -> None:
        """Wait until everything submitted so far is committed (or failed)."""
        while self._task is not None and not self._task.done():
            await asyncio.shield(self._task)

    async def close(self) -> None:
        await self.drain()
        self._closed = True
        if self._conn is not None:
            conn, self._conn, self._driver = self._conn, None, None
            await conn.close()


def _driver_closed(conn: AsyncConnection) -> bool:
    """Whether asyncpg's connection under ``conn`` is closed (the server went away)."""
    try:
        fairy = conn.sync_connection.connection if conn.sync_connection is not None else None
        driver = fairy.driver_connection if fairy is not None else None
    except Exception:  # SQLAlchemy has invalidated it already
        return True
    return driver is None or bool(driver.is_closed())


def _sqlalchemy_error(sql: str | None, exc: Exception, engine: AsyncEngine, lost: bool) -> BaseException:
    """What the store sees of a failure of asyncpg itself: SQLAlchemy's exception, as a
    statement through SQLAlchemy would have raised (an IntegrityError for a constraint,
    a DBAPIError carrying asyncpg's SQLSTATE for the rest), whichever path wrote."""
    if isinstance(exc, DBAPIError):
        return exc
    dbapi = engine.dialect.loaded_dbapi
    try:
        AsyncAdapt_asyncpg_connection._handle_exception_no_connection(dbapi, exc)  # raises it, translated
    except dbapi.Error as translated:
        return DBAPIError.instance(sql, None, translated, dbapi.Error, connection_invalidated=lost)
    except Exception:
        pass
    # Not the driver's: the socket's (refused, unreachable, timed out).
    return OperationalError(sql, None, exc, connection_invalidated=lost)
