"""The one writer: every write transaction of the store runs here, on one dedicated thread.

SQLite has one writer at a time, so writes take turns anyway; the question is what a turn
costs. Through aiosqlite every statement is a thread hop (BEGIN, each statement, COMMIT),
and each hop waits for the GIL behind a busy event loop: about a millisecond each under
load (docs/performance.md). A race's results took a dozen hops and held the write turn
for 16 ms while every racer's move log waited. Here a write is a plain function run with
a synchronous Session on the writer thread: one hop, whatever it does.

Move-log appends are grouped (group commit): every accepted move must be durable before
it is acknowledged, but a commit per move caps throughput at a few thousand per second
(shared/design/performance.md: 5.9k rows/s with per-row commits, 400k with batches). While
the thread works, new appends and jobs queue; the next hop takes the whole queue, in order:
consecutive appends in one transaction, each job in its own. No timer and no added latency
when the server is idle: a lone move commits at once.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import functools
import time
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

from sqlalchemy import Connection, Engine, Table
from sqlalchemy.orm import Session

T = TypeVar("T")
ROWS_PER_STATEMENT = 100  # 600 parameters: far below SQLite's limit (32,766 since 3.32)
Job = Callable[[Session], Any]
# One queued item: move rows to append, or a job; and who waits for it.
_Item = tuple[list[dict[str, Any]] | Job, "asyncio.Future[Any]"]


class Writer:
    def __init__(self, engine: Engine, move_table: Table, on_commit: Callable[[int, float], None] | None = None) -> None:
        self._engine = engine
        self._move_table = move_table
        self._columns = [c.name for c in move_table.columns]  # every row has every column
        self._on_commit = on_commit  # (rows, seconds) after each move-log commit, on the loop: metrics
        self._thread = concurrent.futures.ThreadPoolExecutor(max_workers=1, thread_name_prefix="db-writer")
        self._conn: Connection | None = None  # the thread's own connection, opened there
        self._queue: list[_Item] = []
        self._flusher: asyncio.Task[None] | None = None

    async def run(self, job: Callable[[Session], T]) -> T:
        """Run ``job(session)`` on the writer thread and return what it returns (or raise
        what it raises). The job commits; if it raises, its transaction is rolled back.
        It must not touch the event loop, and should return plain data, not ORM rows.
        Once queued, a job runs even if the caller stops waiting for it."""
        return await self._submit(job)  # type: ignore[no-any-return]

    async def append_moves(self, rows: Sequence[dict[str, Any]]) -> None:
        """Return once ``rows`` are committed to the move log; raise if their batch failed."""
        await self._submit(list(rows))

    def _submit(self, work: list[dict[str, Any]] | Job) -> asyncio.Future[Any]:
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._queue.append((work, future))
        if self._flusher is None or self._flusher.done():
            self._flusher = asyncio.create_task(self._flush())
        return future

    async def _flush(self) -> None:
        loop = asyncio.get_running_loop()
        while self._queue:
            batch, self._queue = self._queue, []
            try:
                outcomes, commits = await loop.run_in_executor(self._thread, self._work, [work for work, _ in batch])
            except Exception as exc:  # the thread itself failed (shut down, out of memory)
                outcomes, commits = [(False, exc)] * len(batch), []
            if self._on_commit is not None:
                for rows, seconds in commits:
                    self._on_commit(rows, seconds)
            for (_, future), (ok, value) in zip(batch, outcomes):
                if future.done():  # the waiter was cancelled
                    continue
                if ok:
                    future.set_result(value)
                else:
                    future.set_exception(value)

    # --- on the writer thread ---------------------------------------------------------

    def _work(self, items: list[list[dict[str, Any]] | Job]) -> tuple[list[tuple[bool, Any]], list[tuple[int, float]]]:
        """Every queued item in order: (ok, result or exception) each, and (rows, seconds)
        per move-log commit."""
        outcomes: list[tuple[bool, Any]] = []
        commits: list[tuple[int, float]] = []
        i = 0
        while i < len(items):
            if callable(items[i]):
                outcomes.append(self._job(items[i]))  # type: ignore[arg-type]
                i += 1
                continue
            j = i
            while j < len(items) and not callable(items[j]):
                j += 1
            rows = [row for moves in items[i:j] for row in moves]  # type: ignore[union-attr]
            started = time.perf_counter()
            outcome = self._append(rows)
            if outcome[0]:  # metrics count commits, not attempts
                commits.append((len(rows), time.perf_counter() - started))
            outcomes += [outcome] * (j - i)  # every waiter of the batch learns its fate
            i = j
        return outcomes, commits

    def _connection(self) -> Connection:
        if self._conn is None:
            self._conn = self._engine.connect()
        return self._conn

    def _failed(self, exc: Exception) -> tuple[bool, Any]:
        # A connection broken by the error (disk I/O, closed file) is replaced for the next item.
        if self._conn is not None and (self._conn.invalidated or self._conn.closed):
            self._conn = None
        return False, exc

    def _append(self, rows: list[dict[str, Any]]) -> tuple[bool, Any]:
        try:
            conn = self._connection()
            with conn.begin():
                for start in range(0, len(rows), ROWS_PER_STATEMENT):
                    chunk = rows[start : start + ROWS_PER_STATEMENT]
                    conn.exec_driver_sql(self._insert_sql(len(chunk)), tuple(r[c] for r in chunk for c in self._columns))
        except Exception as exc:
            return self._failed(exc)
        return True, None

    @functools.lru_cache(maxsize=ROWS_PER_STATEMENT)  # noqa: B019 - one writer per store
    def _insert_sql(self, count: int) -> str:
        # One multi-row INSERT rather than executemany: the sqlite3 driver releases the GIL
        # around every row's step, and each time getting it back waits behind the busy
        # event loop (up to the switch interval).
        row = "(" + ", ".join("?" * len(self._columns)) + ")"
        return f"INSERT INTO {self._move_table.name} ({', '.join(self._columns)}) VALUES {', '.join([row] * count)}"

    def _job(self, job: Job) -> tuple[bool, Any]:
        # Every failure, even in rollback or close, is this job's alone: the items before
        # it in the batch are committed and must be reported so.
        try:
            # expire_on_commit=False: a job builds its records from rows after committing.
            with Session(bind=self._connection(), expire_on_commit=False) as session:
                try:
                    return True, job(session)
                except Exception:
                    session.rollback()
                    raise
        except Exception as exc:
            return self._failed(exc)

    # --- shutdown ---------------------------------------------------------------------

    async def drain(self) -> None:
        """Wait until everything submitted so far is committed (or failed)."""
        while self._flusher is not None and not self._flusher.done():
            await asyncio.shield(self._flusher)

    async def close(self) -> None:
        await self.drain()

        def shut() -> None:
            if self._conn is not None:
                self._conn.close()
            self._engine.dispose()

        await asyncio.get_running_loop().run_in_executor(self._thread, shut)
        self._thread.shutdown(wait=True)
