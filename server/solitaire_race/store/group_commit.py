"""Group commit for the move log: many small appends, one transaction per batch.

Every accepted move must be durable before it is acknowledged, but a commit per move caps
throughput at a few thousand per second (shared/design/performance.md: 5.9k rows/s with
per-row commits, 400k with batches). So appends wait for the batch they join: while one
batch commits, newly arriving rows collect, and the next commit takes them all. No timer
and no added latency when the server is idle: a lone move commits at once.

For SQLite a batch is written by a synchronous SQLAlchemy engine on one dedicated thread:
one thread hop per commit, where the async engine makes one per statement (BEGIN, INSERT,
COMMIT), each of which can wait for the GIL behind a busy event loop. Other databases use
the async engine.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import time
from collections.abc import Callable, Sequence
from typing import Any

from sqlalchemy import Connection, Engine, Table, create_engine, event, insert
from sqlalchemy.ext.asyncio import AsyncEngine
from sqlalchemy.pool import NullPool


class GroupCommitter:
    def __init__(
        self, engine: AsyncEngine, table: Table, write_lock: asyncio.Lock, on_commit: Callable[[int, float], None] | None = None
    ) -> None:
        self._engine = engine
        self._write_lock = write_lock
        self._table = table
        self._pending: list[tuple[list[dict[str, Any]], asyncio.Future[None]]] = []
        self._flusher: asyncio.Task[None] | None = None
        self._on_commit = on_commit  # (rows, seconds) after each commit: metrics
        self._sync: Engine | None = None
        self._thread: concurrent.futures.ThreadPoolExecutor | None = None
        if engine.dialect.name == "sqlite":
            self._sync = create_engine(engine.url.set(drivername="sqlite"), poolclass=NullPool)
            event.listen(self._sync, "connect", _sqlite_connect)
            self._thread = concurrent.futures.ThreadPoolExecutor(max_workers=1, thread_name_prefix="move-log")
            self._conn: Connection | None = None  # the thread's own connection, opened there

    def _write_sync(self, rows: list[dict[str, Any]]) -> None:
        """On the move-log thread: one transaction for the whole batch."""
        assert self._sync is not None
        if self._conn is None:
            self._conn = self._sync.connect()
        with self._conn.begin():
            self._conn.execute(insert(self._table), rows)

    async def _write(self, rows: list[dict[str, Any]]) -> None:
        if self._thread is not None:
            await asyncio.get_running_loop().run_in_executor(self._thread, self._write_sync, rows)
        else:
            async with self._engine.begin() as conn:
                await conn.execute(insert(self._table), rows)

    async def close(self) -> None:
        await self.drain()
        if self._thread is not None:
            def shut() -> None:
                if self._conn is not None:
                    self._conn.close()
                assert self._sync is not None
                self._sync.dispose()

            await asyncio.get_running_loop().run_in_executor(self._thread, shut)
            self._thread.shutdown(wait=True)

    async def append(self, rows: Sequence[dict[str, Any]]) -> None:
        """Return once ``rows`` are committed; raise if their batch failed."""
        future: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._pending.append((list(rows), future))
        if self._flusher is None or self._flusher.done():
            self._flusher = asyncio.create_task(self._flush())
        await future

    async def _flush(self) -> None:
        while self._pending:
            batch, self._pending = self._pending, []
            rows = [row for rows, _ in batch for row in rows]
            started = time.perf_counter()
            try:
                async with self._write_lock:
                    await self._write(rows)
            except Exception as exc:  # every waiter of this batch learns of it
                for _, future in batch:
                    if not future.done():
                        future.set_exception(exc)
                continue
            if self._on_commit is not None:
                self._on_commit(len(rows), time.perf_counter() - started)
            for _, future in batch:
                if not future.done():
                    future.set_result(None)

    async def drain(self) -> None:
        """Wait until everything appended so far is committed (or failed)."""
        while self._flusher is not None and not self._flusher.done():
            await asyncio.shield(self._flusher)


def _sqlite_connect(dbapi_connection: Any, record: Any) -> None:
    # The same settings as the store's async connections (store._on_sqlite_connect).
    cursor = dbapi_connection.cursor()
    try:
        for pragma in ("journal_mode=WAL", "foreign_keys=ON", "synchronous=NORMAL", "busy_timeout=5000"):
            cursor.execute(f"PRAGMA {pragma}")
    finally:
        cursor.close()
