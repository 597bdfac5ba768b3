"""The store's one writer on real databases. SQLite's (store/writer.py): where writes
commit (on the loop, or on the writer thread while another process holds the lock), that
order and durability hold on every path, and that the WAL starts over. PostgreSQL's
(store/pg_writer.py), at the end: group commit, order, failures and lost connections."""

from __future__ import annotations

import asyncio
import sqlite3
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import text
from sqlalchemy.orm import Session

from solitaire_race.store import ConstraintViolation, StorageUnavailable, Store, writer
from solitaire_race.store.models import MoveLog
from solitaire_race.store.store import MOVE_LOG_COLUMNS

from . import databases
from .databases import Database
from .test_store import T0, new_player, new_race, url_for

Commit = tuple[int, bool]  # (rows, on the loop)


async def racing_store(tmp_path: Path) -> tuple[Store, int, int, list[Commit]]:
    store = await Store.open(url_for(tmp_path / "race.sqlite3"))
    ann = await new_player(store, "ann")
    race_id = await new_race(store, created_by=ann)
    await store.mark_race_started(race_id, T0, [ann])
    commits: list[Commit] = []
    store.commit_observer = lambda rows, seconds, on_loop: commits.append((rows, on_loop))
    return store, race_id, ann, commits


def sqlite_writer(store: Store) -> writer.Writer:
    assert isinstance(store._writer, writer.Writer)
    return store._writer


def logged(path: Path, race_id: int, player_id: int) -> list[int]:
    """The seqs committed, read by another connection as another process would."""
    with sqlite3.connect(path) as db:
        rows = db.execute(
            "SELECT seq FROM move_log WHERE race_id = ? AND player_id = ? ORDER BY seq", (race_id, player_id)
        )
        return [seq for (seq,) in rows]


def test_rows_are_built_in_the_tables_column_order() -> None:
    # Every column but the journal's id, which SQLite assigns.
    assert tuple(c.name for c in MoveLog.__table__.columns if c.name != "id") == MOVE_LOG_COLUMNS


async def test_appends_of_one_loop_turn_commit_together_on_the_loop(tmp_path: Path) -> None:
    store, race_id, ann, commits = await racing_store(tmp_path)
    try:
        await store.log_moves(race_id, ann, [(0, "move", "1h", 10)])
        assert logged(tmp_path / "race.sqlite3", race_id, ann) == [0]  # durable once acknowledged
        await asyncio.gather(*(store.log_moves(race_id, ann, [(seq, "move", "1h", seq)]) for seq in range(1, 6)))
        assert commits == [(1, True), (5, True)]  # one transaction for the turn's five appends
    finally:
        await store.close()


async def until(condition: Callable[[], bool]) -> None:
    """Let the loop run until ``condition()`` holds (bounded: a hang fails, not waits)."""
    async with asyncio.timeout(10):
        while not condition():
            await asyncio.sleep(0)


def moves_logged(session: Session) -> int:
    """A write job that reads: what it sees tells when it ran."""
    return int(session.execute(text("SELECT count(*) FROM move_log")).scalar_one())


async def test_a_job_runs_at_once_after_the_appends_submitted_before_it(tmp_path: Path) -> None:
    store, race_id, ann, commits = await racing_store(tmp_path)
    try:
        # In one turn: an append (due at the loop's next turn), then a job: the append goes first.
        first = asyncio.ensure_future(store.log_moves(race_id, ann, [(0, "move", "1h", 10)]))
        job = asyncio.ensure_future(store._write(moves_logged))
        await asyncio.sleep(0)
        assert job.done() and job.result() == 1  # run in the same turn, on the loop
        await first
        assert commits == [(1, True)]
    finally:
        await store.close()


async def test_a_failing_batch_on_the_loop_fails_alone(tmp_path: Path) -> None:
    store, race_id, ann, commits = await racing_store(tmp_path)
    try:
        await store.log_moves(race_id, ann, [(0, "move", "1h", 10)])
        with pytest.raises(ConstraintViolation):
            await store.log_moves(race_id, ann, [(1, "teleport", "2-3", 20)])  # no such kind
        await store.log_moves(race_id, ann, [(1, "move", "2-3", 20)])
        assert logged(tmp_path / "race.sqlite3", race_id, ann) == [0, 1]
        assert commits == [(1, True), (1, True)]
    finally:
        await store.close()


async def test_a_lock_held_elsewhere_never_blocks_the_loop(tmp_path: Path) -> None:
    """Another process holding SQLite's write lock: the loop does not wait for it (its
    busy timeout is 0); the append waits on the writer thread, and commits when the lock
    is released; writes submitted meanwhile wait for it, then run in order. The lock is
    released by the test itself, once the append is waiting on the thread: no timer."""
    store, race_id, ann, commits = await racing_store(tmp_path)
    other = sqlite3.connect(tmp_path / "race.sqlite3", isolation_level=None, check_same_thread=False)
    try:
        other.execute("BEGIN IMMEDIATE")
        append = asyncio.ensure_future(store.log_moves(race_id, ann, [(0, "move", "1h", 10)]))
        await until(lambda: sqlite_writer(store)._hopping)  # it met the lock on the loop: now on the thread
        # Meanwhile the loop runs: a job and another append queue behind the hop, in order.
        job = asyncio.ensure_future(store._write(moves_logged))
        later = asyncio.ensure_future(store.log_moves(race_id, ann, [(1, "move", "2-3", 20)]))
        for _ in range(20):
            await asyncio.sleep(0)
        assert not (append.done() or job.done() or later.done())  # all wait for the lock...
        other.execute("COMMIT")  # ...until it is released
        await append
        assert await job == 1
        await later  # an append has no result
        # The append that met the lock committed on the thread; what queued behind it, back
        # on the loop once that hop was done.
        assert commits == [(1, False), (1, True)]
        assert logged(tmp_path / "race.sqlite3", race_id, ann) == [0, 1]
    finally:
        other.close()
        await store.close()


async def test_writes_made_on_being_told_return_to_the_loop_after_a_hop(tmp_path: Path) -> None:
    """A caller that writes again as soon as it is told its write committed (a move's
    reply brings the racer's next move) is back on the loop once the hop that met a lock
    is done. Before, each write made while settling a hop went to the thread as well, and
    so did the next one, hop after hop, for as long as the caller kept writing."""
    store, race_id, ann, commits = await racing_store(tmp_path)
    other = sqlite3.connect(tmp_path / "race.sqlite3", isolation_level=None, check_same_thread=False)
    finished: asyncio.Future[None] = asyncio.get_running_loop().create_future()
    errors: list[BaseException] = []

    def append(seq: int) -> None:
        def told(error: BaseException | None) -> None:
            if error is not None:
                errors.append(error)
            if seq < 20 and error is None:
                append(seq + 1)
            elif not finished.done():
                finished.set_result(None)

        store.log_moves_then(race_id, ann, [(seq, "move", "1h", seq)], told)

    try:
        other.execute("BEGIN IMMEDIATE")
        append(0)
        await until(lambda: sqlite_writer(store)._hopping)  # it met the lock: waiting on the thread
        other.execute("COMMIT")
        await asyncio.wait_for(finished, 10)
        assert errors == []
        assert commits[0] == (1, False)  # met the lock: committed on the thread
        assert commits[1:] == [(1, True)] * 20  # every later one on the loop
        assert logged(tmp_path / "race.sqlite3", race_id, ann) == list(range(21))
    finally:
        other.close()
        await store.close()


async def test_checkpoints_let_the_wal_start_over(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Automatic checkpoints are off on the writer's connection; the writer's own keep the
    WAL short. Without them, 300 commits leave some 700 pages in the WAL. Each commit waits
    for the checkpoint it started (``drain`` waits for the one in flight), so the verdict
    does not depend on how far the checkpoint thread got meanwhile (on a busy machine it
    had not caught up: 346 pages)."""
    monkeypatch.setattr(writer, "CHECKPOINT_EVERY", 25)
    store, race_id, ann, commits = await racing_store(tmp_path)  # 3 commits already
    try:
        for seq in range(300):
            await store.log_moves(race_id, ann, [(seq, "move", "1h", seq)])
            await store._writer.drain()
        with sqlite3.connect(tmp_path / "race.sqlite3") as db:
            (autocheckpoint,) = db.execute("PRAGMA wal_autocheckpoint").fetchone()
            busy, wal_pages, _ = db.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchone()
        assert autocheckpoint == 1000  # other connections keep SQLite's default
        assert sqlite_writer(store).checkpoints == 303 // 25  # each one finished: the WAL started over
        assert busy == 0 and 0 < wal_pages <= 2 * (303 % 25)  # only the commits since the last one
        assert commits == [(1, True)] * 300
        assert logged(tmp_path / "race.sqlite3", race_id, ann) == list(range(300))
    finally:
        await store.close()


async def test_a_wal_grown_behind_a_reader_is_emptied_once_it_is_done(tmp_path: Path) -> None:
    """A reader that keeps its snapshot stops every checkpoint from letting the WAL start
    over, so it grows past the bound. Once the reader is done, a checkpoint within
    ``CHECKPOINT_RETRY_AFTER`` or ``WAL_CHECK_EVERY`` commits empties it (TRUNCATE), rather
    than the WAL keeping its size for good."""
    store, race_id, ann, _ = await racing_store(tmp_path)
    wal = tmp_path / "race.sqlite3-wal"
    reader = sqlite3.connect(tmp_path / "race.sqlite3", isolation_level=None)
    try:
        reader.execute("BEGIN")
        reader.execute("SELECT count(*) FROM move_log").fetchone()  # its snapshot: older pages stay
        seq = 0
        while wal.stat().st_size <= 2 * writer.WAL_LIMIT_BYTES:
            await store.log_moves(race_id, ann, [(seq, "move", "1h", seq)])
            seq += 1
        assert sqlite_writer(store).checkpoints == 0  # the reader kept every one from finishing
        reader.execute("COMMIT")
        # The one in flight, if any, may now finish; else one of these commits starts one.
        for _ in range(writer.CHECKPOINT_RETRY_AFTER + writer.WAL_CHECK_EVERY):
            await store.log_moves(race_id, ann, [(seq, "move", "1h", seq)])
            seq += 1
        await store._writer.drain()  # wait for it
        assert sqlite_writer(store).checkpoints >= 1
        assert wal.stat().st_size <= writer.WAL_LIMIT_BYTES
        assert logged(tmp_path / "race.sqlite3", race_id, ann) == list(range(seq))
    finally:
        reader.close()
        await store.close()


# --- PostgreSQL's writer (store/pg_writer.py) ------------------------------------------


@pytest.fixture
async def pg(tmp_path: Path) -> AsyncIterator[tuple[Store, int, int, list[Commit], Database]]:
    """A store on a PostgreSQL database of its own, a running race and its racer."""
    with databases.database("postgresql", tmp_path) as db:
        store = await Store.open(db.url)
        try:
            ann = await new_player(store, "ann")
            race_id = await new_race(store, created_by=ann)
            await store.mark_race_started(race_id, T0, [ann])
            commits: list[Commit] = []
            store.commit_observer = lambda rows, seconds, on_loop: commits.append((rows, on_loop))
            yield store, race_id, ann, commits, db
        finally:
            await store.close()


async def pg_logged(db: Database, race_id: int, player_id: int) -> list[int]:
    """The seqs committed, read by another connection as another process would."""
    rows = await db.query("SELECT seq FROM move_log WHERE race_id = ? AND player_id = ? ORDER BY id",
                          race_id, player_id)
    return [seq for (seq,) in rows]


async def test_postgresql_commits_the_appends_of_one_loop_turn_together(pg: Any) -> None:
    store, race_id, ann, commits, db = pg
    await store.log_moves(race_id, ann, [(0, "move", "1h", 10)])
    assert await pg_logged(db, race_id, ann) == [0]  # durable once acknowledged
    await asyncio.gather(*(store.log_moves(race_id, ann, [(seq, "move", "1h", seq)]) for seq in range(1, 6)))
    assert commits == [(1, True), (5, True)]  # one statement, one transaction, for the turn's five appends
    assert await pg_logged(db, race_id, ann) == list(range(6))


async def test_postgresql_tells_every_caller_after_the_commit_in_order(pg: Any) -> None:
    """Callers are told on the loop, after their batch committed, in the order they
    appended; whatever they append on being told goes in the next batch, and a job
    waits for the appends submitted before it."""
    store, race_id, ann, commits, db = pg
    told: list[tuple[int, list[int]]] = []
    finished: asyncio.Future[None] = asyncio.get_running_loop().create_future()

    def append(seq: int) -> None:
        def done(error: BaseException | None) -> None:
            assert error is None
            told.append((seq, []))
            if seq < 4:
                append(seq + 4)  # the next batch
            elif len(told) == 8:
                finished.set_result(None)

        store.log_moves_then(race_id, ann, [(seq, "move", "1h", seq)], done)

    for seq in range(4):
        append(seq)
    job = asyncio.ensure_future(store._write(moves_logged))  # submitted after the four appends
    assert await job == 4  # ...so it saw them committed
    await asyncio.wait_for(finished, 10)
    assert [seq for seq, _ in told] == list(range(8))
    assert commits == [(4, True), (4, True)]
    assert await pg_logged(db, race_id, ann) == list(range(8))


async def test_postgresql_a_failing_batch_fails_alone(pg: Any) -> None:
    store, race_id, ann, commits, db = pg
    await store.log_moves(race_id, ann, [(0, "move", "1h", 10)])
    with pytest.raises(ConstraintViolation):
        await store.log_moves(race_id, ann, [(1, "teleport", "2-3", 20)])  # no such kind: the CHECK
    with pytest.raises(ConstraintViolation):
        await store.log_moves(race_id + 100, ann, [(1, "move", "2-3", 20)])  # no such race
    await store.log_moves(race_id, ann, [(1, "move", "2-3", 20)])
    assert await pg_logged(db, race_id, ann) == [0, 1]
    assert commits == [(1, True), (1, True)]


async def test_postgresql_a_lost_connection_fails_one_write_and_the_next_reconnects(pg: Any) -> None:
    """The writer's connection is terminated by the server (pg_terminate_backend, as when
    PostgreSQL restarts): the write that meets it is StorageUnavailable, with the reason;
    the next one commits on a new connection. Reads recover the same way."""
    store, race_id, ann, _, db = pg
    pid = await store._write(lambda session: session.execute(text("SELECT pg_backend_pid()")).scalar_one())
    await db.query("SELECT pg_terminate_backend(?)", pid)
    with pytest.raises(StorageUnavailable) as lost:
        await store.log_moves(race_id, ann, [(0, "move", "1h", 10)])
    assert "PostgreSQL" in lost.value.reason, lost.value.reason
    await store.log_moves(race_id, ann, [(0, "move", "1h", 10)])
    pid = await store._write(lambda session: session.execute(text("SELECT pg_backend_pid()")).scalar_one())
    await db.query("SELECT pg_terminate_backend(?)", pid)
    with pytest.raises(StorageUnavailable):
        await store.rename_player(ann, "anna")
    await store.rename_player(ann, "anna")
    assert (await store.player(ann)).name == "anna"
    readers = await db.query(
        "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = ? AND pid <> pg_backend_pid()", db.name
    )
    assert readers  # the pool's connections too (and the writer's)
    with pytest.raises(StorageUnavailable):
        await store.player(ann)
    assert (await store.player(ann)) is not None
    assert await pg_logged(db, race_id, ann) == [0]


async def test_postgresql_a_full_disk_is_storage_unavailable_until_it_clears(pg: Any) -> None:
    """PostgreSQL reports a full disk as SQLSTATE 53100 (disk_full); here a trigger raises
    exactly that error for every insert into the move log."""
    store, race_id, ann, _, db = pg
    await db.fail_inserts("move_log", "disk_full", "could not extend file: No space left on device", sqlstate="53100")
    with pytest.raises(StorageUnavailable) as full:
        await store.log_moves(race_id, ann, [(0, "move", "1h", 10)])
    assert full.value.reason.endswith("(PostgreSQL 53100 disk_full)"), full.value.reason
    await db.drop_trigger("move_log", "disk_full")
    await store.log_moves(race_id, ann, [(0, "move", "1h", 10)])
    assert await pg_logged(db, race_id, ann) == [0]
