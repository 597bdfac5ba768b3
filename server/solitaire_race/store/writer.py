"""The one writer: every write transaction of the store goes through here, one at a time,
on one SQLite connection.

SQLite has one writer at a time, so writes take turns anyway; the question is what a turn
costs. Through aiosqlite every statement is a thread hop (BEGIN, each statement, COMMIT),
and each hop waits for the GIL behind a busy event loop: about a millisecond each under
load (docs/performance.md). With WAL and synchronous=NORMAL a commit does not fsync: a
write is CPU work on the page cache, a lone move's commit about 35 µs. So writes run *on
the event loop itself*, synchronously, where a thread hop would cost more in wake-ups and
GIL hand-offs than the write:

- A write job (``run``) is a plain function run at once with a synchronous Session.
- Move-log appends, the hot path, are grouped (group commit): every accepted move must be
  durable before it is acknowledged, but a commit per move caps throughput (a lone commit
  costs 38-47 µs of CPU, a row in a commit of 230 3.6 µs: bench/move_log.py). Appends made
  during one turn of the loop are committed together at its next turn, as one multi-row
  INSERT through the sqlite3 driver. An append's caller is called back once its batch
  is settled (no future, no task to wake: the move's reply is sent from the callback).

The loop never waits for a lock: its busy timeout is 0. When another process holds the
write lock, that write (and the rest of its batch) goes to the writer thread, which waits
for it (busy_timeout); while that hop is in flight every later write queues behind it,
and runs on the loop once it is done, in order: consecutive appends in one transaction,
each job in its own. The connection is shared, never concurrently: the loop uses it only
while no hop is in flight.

Checkpoints (copying the WAL back into the database file, with fsyncs) would otherwise run
inside a commit every 1,000 pages and stall it for ~5 ms; here automatic checkpoints are
off on the writer's connection, and every ``CHECKPOINT_EVERY`` commits a PASSIVE checkpoint
runs on a second thread and connection, alongside the writes, followed by a short one on
the writer thread that copies what arrived meanwhile, so that the WAL can start over
(a checkpoint running alongside continuous writes never lets it: measured, it grew
without bound).

The WAL is bounded in bytes as well, whatever stops a checkpoint: readers still using
old pages, or a failure (a full disk, an I/O error). A checkpoint is also due once the
WAL file is over ``WAL_LIMIT_BYTES`` (looked at every ``WAL_CHECK_EVERY`` commits); one
that did not finish is tried again after ``CHECKPOINT_RETRY_AFTER`` more commits (the WAL
grows only with commits); over twice the limit (an earlier checkpoint did not let it start
over) the writer's own is a TRUNCATE, which waits a moment for readers and empties the
file; and the writer's connection has ``journal_size_limit``, so a WAL that starts over
is cut back to the limit. Before, a WAL that had grown stayed that size for good, and one
whose checkpoints failed grew by another ``CHECKPOINT_EVERY`` commits before the next try.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import functools
import itertools
import logging
import sqlite3
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any, TypeVar

from sqlalchemy import Connection, Engine, Table
from sqlalchemy.exc import DBAPIError
from sqlalchemy.orm import Session

from .errors import storage_fault

T = TypeVar("T")
log = logging.getLogger("solitaire_race.store")

ROWS_PER_STATEMENT = 100  # 600 parameters: far below SQLite's limit (32,766 since 3.32)
CHECKPOINT_EVERY = 500  # commits: ~1,200 WAL pages of move-log appends
WAL_LIMIT_BYTES = 4 * 1024 * 1024  # a bigger WAL is checkpointed; twice this, emptied (module docstring)
WAL_CHECK_EVERY = 50  # commits between looks at the WAL file's size (one stat)
CHECKPOINT_RETRY_AFTER = 50  # commits after a checkpoint that did not finish
TRUNCATE_WAIT_MS = 100  # how long a TRUNCATE checkpoint waits for readers (then: retried); writes queue meanwhile
Job = Callable[[Session], Any]
Rows = list[tuple[Any, ...]]
# Told how a queued item went: (None, result) or (the exception, None). Called on the loop.
Done = Callable[[BaseException | None, Any], None]


class _Checkpoint:
    """The queued item that checkpoints on the writer's own connection; it runs on the
    writer thread only (a checkpoint fsyncs). ``truncate``: a TRUNCATE checkpoint, which
    empties the WAL file, rather than a PASSIVE one."""

    def __init__(self, truncate: bool) -> None:
        self.truncate = truncate

# One queued item: move rows to append, a job, or a checkpoint; and who to tell.
_Item = tuple[Rows | Job | _Checkpoint, Done]


class Writer:
    def __init__(
        self, engine: Engine, move_table: Table, columns: tuple[str, ...],
        on_commit: Callable[[int, float, bool], None] | None = None, busy_timeout_ms: int = 5_000,
    ) -> None:
        self._engine = engine  # its connections must allow use from more than one thread
        self._move_table = move_table
        self._columns = columns  # the order of every appended row's values
        self._on_commit = on_commit  # (rows, seconds, on_loop) after each move-log commit, on the loop: metrics
        self._busy_timeout_ms = busy_timeout_ms
        self._thread = concurrent.futures.ThreadPoolExecutor(max_workers=1, thread_name_prefix="db-writer")
        self._conn: Connection | None = None  # the writer's connection, opened on first use
        self._queue: list[_Item] = []  # for the writer thread's next hop
        self._flusher: asyncio.Task[None] | None = None  # carries the queue to the thread, hop by hop
        self._hopping = False  # the thread is working on a batch
        self._loop: asyncio.AbstractEventLoop | None = None  # the loop the appends come from
        self._pending: list[tuple[Rows, Done]] = []  # appends for the loop's next turn
        self._commits = 0  # since the last checkpoint
        self._wal = Path(f"{engine.url.database}-wal")  # its size bounds the WAL (module docstring)
        self._wal_looked_at = 0  # self._commits when the WAL's size was last looked at
        self._disk_failed = False  # a write failed for the disk (set where it ran, read on the loop)
        self._reclaim = False  # so the next checkpoint empties the WAL
        self.checkpoints = 0  # finished: the WAL was copied in full and may start over
        self._checkpointer = concurrent.futures.ThreadPoolExecutor(max_workers=1, thread_name_prefix="db-checkpoint")
        self._checkpoint_conn: Connection | None = None
        self._checkpointing: asyncio.Task[None] | None = None

    async def run(self, job: Callable[[Session], T]) -> T:
        """Run ``job(session)`` and return what it returns (or raise what it raises). The
        job commits; if it raises, its transaction is rolled back. It runs at once on the
        loop, or on the writer thread while a hop is in flight or another process holds
        SQLite's write lock; so it must not touch the event loop, and should return plain
        data, not ORM rows. Once queued, a job runs even if the caller stops waiting."""
        future: asyncio.Future[T] = asyncio.get_running_loop().create_future()
        done = functools.partial(resolve, future)
        if self._hop_in_flight():
            self._to_thread(job, done)
        else:
            batch, self._pending = [*self._pending, (job, done)], []
            self._run_here(batch)  # type: ignore[arg-type]  # appends submitted before it go first
        return await future

    def append_moves(self, rows: Rows, done: Done) -> None:
        """Append ``rows`` (values in the order of ``columns``) to the move log; then
        ``done(None, None)`` once they are committed, or ``done(exception, None)`` if their
        batch failed: always later, on the loop, never before this returns. The writer keeps
        ``rows`` until then: the caller makes a new list for each call."""
        assert type(rows) is list  # a list is how the writer tells rows from a job
        if self._hop_in_flight():
            self._to_thread(rows, done)
            return
        loop = self._loop
        if loop is None or loop.is_closed():  # asking costs a getpid() call on CPython 3.11
            loop = self._loop = asyncio.get_running_loop()
        if not self._pending:
            loop.call_soon(self._commit_pending)
        self._pending.append((rows, done))

    def _hop_in_flight(self) -> bool:
        """Whether a new write must wait for the thread: it is working, or writes wait for it."""
        return self._hopping or bool(self._queue)

    def _start_flusher(self) -> None:
        if self._flusher is None or self._flusher.done():
            self._flusher = asyncio.create_task(self._flush())

    def _to_thread(self, work: Rows | Job | _Checkpoint, done: Done) -> None:
        # Appends waiting for the loop's turn were submitted first: they keep their place.
        self._queue += self._pending
        self._pending = []
        self._queue.append((work, done))
        self._start_flusher()

    # --- on the loop ------------------------------------------------------------------

    def _commit_pending(self) -> None:
        batch, self._pending = self._pending, []
        if batch:  # else a job took them meanwhile
            self._run_here(batch)  # type: ignore[arg-type]

    def _run_here(self, batch: list[_Item]) -> None:
        """Carry out ``batch`` in order on the loop; from the first item that meets a lock
        held by another process, the rest waits on the writer thread, in order."""
        outcomes, commits, jobs = self._work([work for work, _ in batch], 0)
        if len(outcomes) < len(batch):  # queued before the callers are told: their next writes go behind
            self._queue = batch[len(outcomes) :] + self._queue
            self._start_flusher()
        self._settle(zip(batch, outcomes, strict=False))  # outcomes: the batch's head, the rest queued above
        self._committed(commits, jobs, on_loop=True)

    async def _flush(self) -> None:
        loop = asyncio.get_running_loop()
        while self._queue:
            batch, self._queue = self._queue, []
            items = [work for work, _ in batch]
            self._hopping = True
            try:
                outcomes, commits, jobs = await loop.run_in_executor(
                    self._thread, self._work, items, self._busy_timeout_ms
                )
            except Exception as exc:  # the thread itself failed (shut down, out of memory)
                outcomes, commits, jobs = [(exc, None)] * len(batch), [], 0
            finally:
                self._hopping = False
            # Whatever the callers told here write next goes behind what queued during the
            # hop, while it is queued; once that has run (below), to the loop's next turn.
            # (Sent to the thread instead, the loop's next writes followed them there, hop
            # after hop, for as long as callers kept writing: measured.)
            self._settle(zip(batch, outcomes, strict=True))  # with a busy timeout, every item has one
            self._committed(commits, jobs, on_loop=False)
            if self._queue:
                # What queued meanwhile runs here, on the loop, at once: on the thread, a busy
                # loop made every statement wait for the GIL (hops of 200-300 ms, measured).
                batch, self._queue = self._queue, []
                self._run_here(batch)  # what meets a lock again is queued for the next hop

    @staticmethod
    def _settle(outcomes: Iterable[tuple[_Item, tuple[BaseException | None, Any]]]) -> None:
        for (_, done), (error, value) in outcomes:
            try:
                done(error, value)
            except Exception:  # one caller's failure must not keep the others waiting
                log.exception("a caller failed on being told how its write went")

    def _committed(self, commits: list[tuple[int, float]], jobs: int, on_loop: bool) -> None:
        """``commits``: (rows, seconds) per move-log commit; ``jobs``: jobs committed."""
        # Called after the waiters are told: a failing observer must not leave them hanging.
        if self._on_commit is not None:
            for rows, seconds in commits:
                self._on_commit(rows, seconds, on_loop)
        self._commits += len(commits) + jobs
        if self._disk_failed:
            # A write failed for the disk (full, an I/O error): the first one that commits
            # again means space is back; then empty the WAL at once, rather than let it grow
            # on into the space just freed.
            self._disk_failed, self._reclaim = False, True
            self._commits = max(self._commits, CHECKPOINT_EVERY - 1)
        if self._checkpointing is not None and not self._checkpointing.done():
            return
        due = self._commits >= CHECKPOINT_EVERY
        if not due and self._commits >= self._wal_looked_at + WAL_CHECK_EVERY:
            self._wal_looked_at = self._commits
            due = self._wal_bytes() > WAL_LIMIT_BYTES
        if due:
            self._commits = self._wal_looked_at = 0
            self._checkpointing = asyncio.get_running_loop().create_task(self._checkpoint())

    def _wal_bytes(self) -> int:
        try:
            return self._wal.stat().st_size
        except OSError:  # no WAL file (yet): nothing to copy
            return 0

    async def _checkpoint(self) -> None:
        """Copy the WAL into the database (on the checkpoint thread, alongside the writes,
        then what came meanwhile on the writer thread), so that it can start over. One that
        did not finish is tried again after ``CHECKPOINT_RETRY_AFTER`` more commits."""
        loop = asyncio.get_running_loop()
        reclaim, self._reclaim = self._reclaim, False
        try:
            await loop.run_in_executor(self._checkpointer, self._checkpoint_alongside)
            future: asyncio.Future[Any] = loop.create_future()
            # Over twice the limit, an earlier checkpoint did not let the WAL start over.
            truncate = reclaim or self._wal_bytes() > 2 * WAL_LIMIT_BYTES
            self._to_thread(_Checkpoint(truncate), functools.partial(resolve, future))
            blocked, pages, copied = await future
        except Exception as exc:  # e.g. a full disk: the database file could not grow
            self._checkpoint_later(reclaim)
            log.warning("WAL checkpoint failed, trying again after %d commits: %s", CHECKPOINT_RETRY_AFTER, exc)
            return
        if blocked or copied < pages:  # readers still used older pages: not an error, no log
            self._checkpoint_later(reclaim)
        else:
            self.checkpoints += 1

    def _checkpoint_later(self, reclaim: bool) -> None:
        """Due again after ``CHECKPOINT_RETRY_AFTER`` more commits: the WAL grows only with
        commits, and without any, trying again would meet the same failure."""
        self._commits = max(self._commits, CHECKPOINT_EVERY - CHECKPOINT_RETRY_AFTER)
        self._reclaim = self._reclaim or reclaim

    # --- on the loop, or on the writer thread --------------------------------------------

    def _work(
        self, items: list[Rows | Job | _Checkpoint], busy_timeout_ms: int
    ) -> tuple[list[tuple[BaseException | None, Any]], list[tuple[int, float]], int]:
        """The items in order: (None, result) or (exception, None) each, (rows, seconds) per move-log
        commit, and how many jobs committed. ``busy_timeout_ms``: how long to wait for a
        lock held by another process; with 0 (on the loop) it stops at the first item that
        meets one, so fewer outcomes than items come back."""
        outcomes: list[tuple[BaseException | None, Any]] = []
        commits: list[tuple[int, float]] = []
        jobs = 0
        if busy_timeout_ms:
            self._set_busy_timeout(busy_timeout_ms)
        try:
            i = 0
            while i < len(items):
                item = items[i]
                if isinstance(item, list):
                    j = i
                    while j < len(items) and isinstance(items[j], list):
                        j += 1
                    rows = [row for moves in items[i:j] for row in moves]  # type: ignore[union-attr]
                    started = time.perf_counter()
                    outcome = self._append(rows)
                    if outcome[0] is None:  # metrics count commits, not attempts
                        commits.append((len(rows), time.perf_counter() - started))
                elif isinstance(item, _Checkpoint):
                    if not busy_timeout_ms:
                        break  # never on the loop (it fsyncs): it and the rest go to the thread
                    j = i + 1
                    outcome = self._checkpoint_here(item.truncate)
                else:
                    j = i + 1
                    outcome = self._job(item)
                    if outcome[0] is None:
                        jobs += 1
                if not busy_timeout_ms and _is_busy(outcome[0]):
                    break  # this and the rest wait on the thread
                error = outcome[0]
                if (
                    error is not None
                    and not isinstance(item, _Checkpoint)
                    and not _is_busy(error)
                    and storage_fault(error)
                ):
                    self._disk_failed = True  # see _committed
                outcomes += [outcome] * (j - i)  # every waiter of a batch of appends learns its fate
                i = j
        finally:
            if busy_timeout_ms:
                self._set_busy_timeout(0)  # the loop never waits for a lock: it hands over instead
        return outcomes, commits, jobs

    def _connection(self) -> Connection:
        if self._conn is None:
            self._conn = self._engine.connect()
            raw = self._conn.connection.dbapi_connection
            assert raw is not None
            raw.execute("PRAGMA wal_autocheckpoint=0")  # checkpoints are ours (module docstring)
            raw.execute(f"PRAGMA journal_size_limit={WAL_LIMIT_BYTES}")  # a WAL starting over is cut back
            raw.execute("PRAGMA busy_timeout=0")
        return self._conn

    def _raw(self) -> sqlite3.Connection:
        return self._connection().connection.dbapi_connection  # type: ignore[return-value]

    def _set_busy_timeout(self, ms: int) -> None:
        try:
            self._raw().execute(f"PRAGMA busy_timeout={ms}")
        except sqlite3.Error:
            self._reset()

    def _reset(self) -> None:
        # A connection broken by an error (disk I/O, closed file) is replaced for the next item.
        if self._conn is not None:
            try:
                self._conn.invalidate()
            finally:
                self._conn = None

    def _append(self, rows: Rows) -> tuple[BaseException | None, None]:
        """One transaction through the driver itself: SQLAlchemy's Core would add ~110 µs
        per commit to the ~35 µs SQLite takes (measured)."""
        sql, params = "BEGIN", ()
        try:
            raw = self._raw()
            raw.execute(sql)
            try:
                for start in range(0, len(rows), ROWS_PER_STATEMENT):
                    chunk = rows[start : start + ROWS_PER_STATEMENT]
                    sql, params = self._insert_sql(len(chunk)), tuple(itertools.chain.from_iterable(chunk))
                    raw.execute(sql, params)
                sql, params = "COMMIT", ()
                raw.execute(sql)
            except BaseException:
                if raw.in_transaction:
                    raw.execute("ROLLBACK")
                raise
        except sqlite3.Error as exc:
            if not isinstance(exc, sqlite3.IntegrityError) and not _is_busy(exc):
                self._reset()
            # The store sees SQLAlchemy's exception types, whichever path wrote.
            return DBAPIError.instance(sql, params, exc, sqlite3.Error), None
        return None, None

    @functools.lru_cache(maxsize=ROWS_PER_STATEMENT)  # noqa: B019 - one writer per store
    def _insert_sql(self, count: int) -> str:
        # One multi-row INSERT rather than executemany: the sqlite3 driver releases the GIL
        # around every row's step, and each time getting it back waits behind the busy
        # event loop (up to the switch interval).
        row = "(" + ", ".join("?" * len(self._columns)) + ")"
        return f"INSERT INTO {self._move_table.name} ({', '.join(self._columns)}) VALUES {', '.join([row] * count)}"

    def _job(self, job: Job) -> tuple[BaseException | None, Any]:
        # Every failure, even in rollback or close, is this job's alone: the items before
        # it in the batch are committed and must be reported so.
        try:
            # expire_on_commit=False: a job builds its records from rows after committing.
            with Session(bind=self._connection(), expire_on_commit=False) as session:
                try:
                    return None, job(session)
                except Exception:
                    session.rollback()
                    raise
        except Exception as exc:
            if self._conn is not None and (self._conn.invalidated or self._conn.closed):
                self._conn = None
            return exc, None

    def _checkpoint_here(self, truncate: bool) -> tuple[BaseException | None, Any]:
        # Copies only the pages written since the checkpoint alongside began, then lets
        # the next write start the WAL over. A TRUNCATE waits for readers, but only
        # briefly: the writes queue behind it.
        try:
            raw = self._raw()
            if not truncate:
                return None, raw.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchone()
            raw.execute(f"PRAGMA busy_timeout={TRUNCATE_WAIT_MS}")
            try:
                return None, raw.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()
            finally:
                raw.execute(f"PRAGMA busy_timeout={self._busy_timeout_ms}")
        except sqlite3.Error as exc:
            return exc, None

    # --- on the checkpoint thread ---------------------------------------------------------

    def _checkpoint_alongside(self) -> tuple[int, int, int]:
        if self._checkpoint_conn is None:
            self._checkpoint_conn = self._engine.connect()
        raw = self._checkpoint_conn.connection.dbapi_connection
        assert raw is not None
        try:
            return raw.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchone()  # type: ignore[no-any-return]
        except sqlite3.Error:
            # A connection that met a disk error is replaced, as the writer's is (_reset).
            conn, self._checkpoint_conn = self._checkpoint_conn, None
            conn.invalidate()
            raise

    # --- shutdown ---------------------------------------------------------------------

    async def drain(self) -> None:
        """Wait until everything submitted so far is committed (or failed)."""
        self._commit_pending()
        while self._hop_in_flight() or (self._checkpointing is not None and not self._checkpointing.done()):
            if self._checkpointing is not None and not self._checkpointing.done():
                await asyncio.shield(self._checkpointing)
            if self._flusher is not None and not self._flusher.done():
                await asyncio.shield(self._flusher)

    async def close(self) -> None:
        await self.drain()
        loop = asyncio.get_running_loop()

        def shut(conn: Connection | None) -> None:
            if conn is not None:
                conn.close()

        await loop.run_in_executor(self._checkpointer, shut, self._checkpoint_conn)
        await loop.run_in_executor(self._thread, shut, self._conn)
        await loop.run_in_executor(self._thread, self._engine.dispose)
        self._checkpointer.shutdown(wait=True)
        self._thread.shutdown(wait=True)


def resolve(future: asyncio.Future[Any], error: BaseException | None, value: Any = None) -> None:
    """``Done`` for a caller that awaits ``future`` (bind it with ``functools.partial``)."""
    if future.done():  # the caller stopped waiting (cancelled)
        return
    if error is None:
        future.set_result(value)
    else:
        future.set_exception(error)


def _is_busy(error: BaseException | None) -> bool:
    orig = getattr(error, "orig", error)
    if not isinstance(orig, sqlite3.OperationalError):
        return False
    return getattr(orig, "sqlite_errorname", "") in ("SQLITE_BUSY", "SQLITE_LOCKED")
