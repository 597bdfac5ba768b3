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
        self._insert_sql = f"INSERT INTO {move_table.name} ({', '.join(columns)}) SELECT * FROM unnest({arrays})"
        self._queue: deque[tuple[Rows | Job, Done]] = deque()
        self._task: asyncio.Task[None] | None = None
        self._conn: AsyncConnection | None = None  # the writer's connection, opened on first use
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

    def _submit(self, work: Rows | Job, done: Done) -> None:
        if self._closed:
            raise RuntimeError("the store is closed")
        self._queue.append((work, done))
        if self._task is None or self._task.done():
            self._task = asyncio.get_running_loop().create_task(self._carry())

    # --- the writer task --------------------------------------------------------------

    async def _carry(self) -> None:
        """Commit what is queued, in order, until nothing is: every append queued together
        in one statement, each job in its own transaction."""
        # Started at the loop turn after the first submission: that turn's appends are all queued.
        queue = self._queue
        while queue:
            if isinstance(queue[0][0], list):
                batch: list[tuple[Rows | Job, Done]] = []
                while queue and isinstance(queue[0][0], list):
                    batch.append(queue.popleft())
                rows = [row for moves, _ in batch for row in moves]  # type: ignore[union-attr]
                started = time.perf_counter()
                error = await self._append(rows)
                outcome: tuple[BaseException | None, Any] = (error, None)
                if error is None and self._on_commit is not None:
                    self._observe(len(rows), time.perf_counter() - started)
            else:
                batch = [queue.popleft()]
                outcome = await self._job(batch[0][0])  # type: ignore[arg-type]
            for _, done in batch:
                try:
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
            except BaseException:
                await conn.close()
                raise
            self._conn = conn
        return self._conn

    async def _drop_connection(self) -> None:
        """Forget a connection that broke: the next item gets a new one."""
        conn, self._conn = self._conn, None
        if conn is not None:
            try:
                await conn.invalidate()
                await conn.close()
            except Exception:  # it is gone either way
                pass

    async def _append(self, rows: Rows) -> BaseException | None:
        """One statement, one transaction (asyncpg runs it in autocommit), one round trip."""
        columns = [list(values) for values in zip(*rows, strict=True)]
        try:
            conn = await self._connection()
            raw = await conn.get_raw_connection()
            driver = raw.driver_connection
            assert driver is not None
            await driver.execute(self._insert_sql, *columns)
        except Exception as exc:
            closed = self._conn is None or _driver_closed(self._conn)
            if closed:
                await self._drop_connection()
            return _sqlalchemy_error(self._insert_sql, exc, self._engine, closed)
        return None

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
            conn, self._conn = self._conn, None
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
