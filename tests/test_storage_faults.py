"""Storage faults for real: a full disk (a small tmpfs filled up), an I/O error (the server
process's file size limit), and SQLite's write lock held by another process past the busy
timeout. Each is answered with the retryable ``storage_unavailable`` and one log line,
never ``internal_error`` and a traceback, and the server recovers by itself once the
fault clears, with no acknowledged move lost.

Mounting a tmpfs needs root (the tests run as root here and in CI); without it the
full-disk tests are skipped, and say why.
"""

from __future__ import annotations

import asyncio
import json
import logging
import resource
import shutil
import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from solitaire_race.app import App
from solitaire_race.names import name_key
from solitaire_race.store import StorageUnavailable, Store, hash_token
from solitaire_race.store import engines as store_engines

from .conftest import Client, http_json, make_config
from .test_crash import DEAL, GAME, LINE, Server, connect
from .test_store import T0, new_player, new_race, url_for
from .test_writer import logged, sqlite_writer

VOLUME_BYTES = 8 * 1024 * 1024  # room for the database and its WAL, filled up by the tests


@pytest.fixture
def small_volume(tmp_path: Path) -> Iterator[Path]:
    """A directory on a tmpfs of its own, small enough to fill up in a moment."""
    volume = tmp_path / "volume"
    volume.mkdir()
    if shutil.which("mount") is None:
        pytest.skip("a real full disk needs a small tmpfs, and there is no mount command")
    mounted = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={VOLUME_BYTES}", "tmpfs", str(volume)], capture_output=True, text=True
    )
    if mounted.returncode != 0:
        pytest.skip(
            f"a real full disk needs a small tmpfs, and mounting one failed (root needed): {mounted.stderr.strip()}"
        )
    try:
        yield volume
    finally:
        subprocess.run(["umount", "--lazy", str(volume)], check=False)


def fill(volume: Path) -> Path:
    """Fill the volume to its last byte; remove the file returned to give the space back."""
    filler = volume / "filler"
    with filler.open("ab", buffering=0) as file:
        for size in (1 << 20, 4096, 1):
            try:
                while True:
                    file.write(b"\0" * size)
            except OSError:  # ENOSPC: now smaller pieces, to the last byte
                pass
    return filler


def status_of_races(db: Path) -> list[str]:
    with sqlite3.connect(db) as conn:
        return [status for (status,) in conn.execute("SELECT status FROM races ORDER BY id")]


async def until_started(db: Path) -> None:
    """The race's start is on disk (written just after ``race_started`` is sent)."""
    async with asyncio.timeout(10):
        while status_of_races(db) != ["running"]:
            await asyncio.sleep(0.01)


async def started_race(server: Server) -> Client:
    ann = await connect(server)
    await ann.hello("ann")
    await ann.request({"type": "create_race", "game": GAME, "deal": DEAL})
    await ann.request({"type": "start_race"})
    await ann.expect("race_started")
    await until_started(server.file)
    return ann


async def move(client: Client, index: int) -> dict[str, Any]:
    return await client.request({"type": "move", "moves": [LINE[index]]})


def log_lines(output: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in output.splitlines() if line.startswith("{")]


def assert_one_line_per_failure(output: str, failures: int, reason: str) -> None:
    """Each failed request: one ``storage_unavailable`` line with the reason; no traceback."""
    assert "Traceback" not in output, output
    events = [entry for entry in log_lines(output) if entry.get("event") == "storage_unavailable"]
    assert len(events) == failures, output
    assert all(entry["level"] == "warning" and reason in entry["reason"] for entry in events), events
    assert not [entry for entry in log_lines(output) if entry.get("event") == "internal_error"]


def stopped(server: Server) -> str:
    """Stop the server; what it printed."""
    server.stop()
    return "".join(server.output) + server.rest_of_output()


async def resumed_moves(server: Server, client: Client) -> int:
    """Start the stopped server again and count the moves the race resumes with: the log
    on disk."""
    server.start()
    back = await connect(server)
    try:
        await back.hello(token=client.token)
        await back.request({"type": "join_race", "code": race_code(server.file)})
        resumed = await back.expect("race_started")
        return int(resumed["moves"])
    finally:
        await back.close()


def hold_write_lock(db: Path) -> subprocess.Popen[str]:
    """Another process that holds SQLite's write lock on ``db`` until its input ends."""
    holder = subprocess.Popen(
        [sys.executable, "-c", "import sqlite3, sys\n"
         f"db = sqlite3.connect({str(db)!r}, isolation_level=None)\n"
         "db.execute('BEGIN IMMEDIATE')\nprint('locked', flush=True)\nsys.stdin.read()\n"],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
    )
    assert holder.stdout is not None and holder.stdout.readline() == "locked\n"
    return holder


def race_code(db: Path) -> str:
    with sqlite3.connect(db) as conn:
        (code,) = conn.execute("SELECT code FROM races").fetchone()
    return str(code)


async def test_a_full_disk_is_storage_unavailable_until_space_returns(small_volume: Path) -> None:
    server = Server(small_volume / "race.sqlite3", "--countdown", "0.05")
    server.start()
    ann: Client | None = None
    try:
        ann = await started_race(server)
        assert (await move(ann, 0))["applied"] == [LINE[0]]
        filler = fill(small_volume)
        # The first write that needs a new page fails. One that still fits in the pages the
        # WAL file has (a WAL that started over reuses its file) succeeds, so a few may pass.
        for k in range(1, 12):
            failed = await move(ann, k)
            if failed["type"] == "error":
                break
            assert failed["applied"] == [LINE[k]], failed
        assert failed["type"] == "error" and failed["code"] == "storage_unavailable", failed
        filler.unlink()  # space is back: no restart, no operator action on the server
        after = await move(ann, k + 1)
        assert after["applied"] == [LINE[k + 1]] and after["moves"] == k + 2  # the failed move was kept...
        await ann.close()  # (else the server waits for it to close when it stops)
        assert_one_line_per_failure(stopped(server), 1, "SQLITE_FULL")
        assert await resumed_moves(server, ann) == k + 2  # ...and is on disk: logged with the next
    finally:
        if ann is not None:
            await ann.close()
        server.stop()


async def test_an_io_error_is_storage_unavailable_until_it_clears(tmp_path: Path) -> None:
    """A real I/O error: the server process may not write past its file size limit
    (RLIMIT_FSIZE, set from outside with prlimit), so SQLite's next write to the WAL fails
    with EFBIG, which it reports as SQLITE_IOERR_WRITE."""
    server = Server(tmp_path / "race.sqlite3", "--countdown", "0.05")
    server.start()
    assert server.proc is not None
    ann: Client | None = None
    try:
        ann = await started_race(server)
        assert (await move(ann, 0))["applied"] == [LINE[0]]
        wal = Path(f"{server.file}-wal").stat().st_size
        try:
            resource.prlimit(server.proc.pid, resource.RLIMIT_FSIZE, (wal, resource.RLIM_INFINITY))
        except PermissionError as exc:
            pytest.skip(f"setting another process's file size limit needs root: {exc}")
        failed = await move(ann, 1)
        assert failed["type"] == "error" and failed["code"] == "storage_unavailable", failed
        resource.prlimit(server.proc.pid, resource.RLIMIT_FSIZE, (resource.RLIM_INFINITY, resource.RLIM_INFINITY))
        after = await move(ann, 2)
        assert after["applied"] == [LINE[2]] and after["moves"] == 3
        await ann.close()
        assert_one_line_per_failure(stopped(server), 1, "SQLITE_IOERR")
        assert await resumed_moves(server, ann) == 3
    finally:
        if ann is not None:
            await ann.close()
        server.stop()


async def test_a_write_lock_held_past_the_busy_timeout_is_storage_unavailable(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """Another process holds SQLite's write lock longer than the busy timeout (shortened
    here from 5 s): the move waits that long on the writer thread, then is refused."""
    monkeypatch.setattr(store_engines, "BUSY_TIMEOUT_MS", 300)
    app = await App.start(make_config(tmp_path))
    db = tmp_path / "race.sqlite3"
    holder: subprocess.Popen[str] | None = None
    ann = await Client.connect(app)
    try:
        await ann.hello("ann")
        await ann.request({"type": "create_race", "game": GAME, "deal": DEAL})
        await ann.request({"type": "start_race"})
        await ann.expect("race_started")
        await until_started(db)
        holder = hold_write_lock(db)
        caplog.clear()
        with caplog.at_level(logging.INFO, logger="solitaire_race"):
            failed = await move(ann, 0)
        assert failed["type"] == "error" and failed["code"] == "storage_unavailable", failed
        holder.communicate("")  # it ends, and its lock with it
        after = await move(ann, 1)
        assert after["applied"] == [LINE[1]] and after["moves"] == 2
    finally:
        if holder is not None and holder.poll() is None:
            holder.kill()
        await ann.close()
        await app.stop()
    gateway = [r for r in caplog.records if r.name == "solitaire_race.gateway"]
    assert [(r.levelname, r.getMessage()) for r in gateway] == [("WARNING", "storage_unavailable")]
    assert gateway[0].exc_info is None and "SQLITE_BUSY" in gateway[0].fields["reason"]  # type: ignore[attr-defined]


async def test_after_a_full_disk_the_first_commit_gives_the_wal_space_back(small_volume: Path) -> None:
    """The WAL is the one file that grows between checkpoints; once a write failed for want
    of space, the first write that commits again starts a TRUNCATE checkpoint, which
    empties it, instead of letting it grow on into the space just freed."""
    db = small_volume / "race.sqlite3"
    store = await Store.open(url_for(db))
    try:
        ann = await new_player(store, "ann")
        race_id = await new_race(store, created_by=ann)
        await store.mark_race_started(race_id, T0, [ann])
        for seq in range(100):
            await store.log_moves(race_id, ann, [(seq, "move", "1h", seq)])
        filler = fill(small_volume)
        with pytest.raises(StorageUnavailable, match="SQLITE_FULL"):
            await store.log_moves(race_id, ann, [(100, "move", "1h", 100)])
        filler.unlink()
        grown = Path(f"{db}-wal").stat().st_size
        await store.log_moves(race_id, ann, [(100, "move", "1h", 100)])
        await store._writer.drain()  # the checkpoint that commit started
        assert sqlite_writer(store).checkpoints == 1
        assert grown > 100 * 4096 and Path(f"{db}-wal").stat().st_size == 0
        assert logged(db, race_id, ann) == list(range(101))
    finally:
        await store.close()


async def test_a_race_starts_for_its_racers_only_once_its_start_is_saved(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The start of a race is saved before `race_started` tells anyone: while another
    process holds the write lock, the racers wait (the start is retried), and once it is
    saved the race runs; a move is never logged for a race the database holds as a lobby."""
    monkeypatch.setattr(store_engines, "BUSY_TIMEOUT_MS", 300)
    app = await App.start(make_config(tmp_path))
    db = tmp_path / "race.sqlite3"
    ann = await Client.connect(app)
    holder: subprocess.Popen[str] | None = None
    try:
        await ann.hello("ann")
        code = (await ann.request({"type": "create_race", "game": GAME, "deal": DEAL}))["race"]["code"]
        holder = hold_write_lock(db)
        await ann.send({"type": "start_race"})
        with pytest.raises(TimeoutError):  # the start cannot be saved: nobody is told it started
            await ann.expect("race_started", timeout=1.5)
        holder.communicate("")  # the lock goes: the next attempt saves the start
        started = await ann.expect("race_started", timeout=10)
        assert started["moves"] == 0
        with sqlite3.connect(db) as conn:
            assert conn.execute("SELECT status FROM races WHERE code = ?", (code,)).fetchone() == ("running",)
        assert (await move(ann, 0))["applied"] == [LINE[0]]
        await ann.close()
    finally:
        if holder is not None and holder.poll() is None:
            holder.kill()
        await app.stop()


async def test_the_http_api_answers_503_when_the_database_cannot_be_read(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """A real damaged file under a running server: every page after the first overwritten,
    so SQLite reads garbage (SQLITE_CORRUPT) for any page it has not cached yet: the last
    of 3,000 players was never read. The JSON API says the storage is unavailable, with one
    log line and no traceback, instead of a 500."""
    app = await App.start(make_config(tmp_path))
    db = tmp_path / "race.sqlite3"
    try:
        with sqlite3.connect(db) as conn:
            conn.executemany(
                "INSERT INTO players (name, name_key, token_hash, created_at) VALUES (?, ?, ?, 1795000000000000)",
                [(f"p{i}", name_key(f"p{i}"), hash_token(f"t{i}")) for i in range(3000)],
            )
        assert (await http_json(app, "/api/players/1"))[0] == 200
        with sqlite3.connect(db) as conn:
            conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")  # every page in the file itself
        size = db.stat().st_size
        with db.open("r+b") as file:
            file.seek(4096)
            file.write(b"\xa5" * (size - 4096))
        caplog.clear()
        with caplog.at_level(logging.INFO, logger="solitaire_race"):
            status, body = await http_json(app, "/api/players/3000")
        assert status == 503 and body["error"]["code"] == "storage_unavailable", body
        lines = [r for r in caplog.records if r.name == "solitaire_race.http_api"]
        assert [(r.levelname, r.getMessage()) for r in lines] == [("WARNING", "storage_unavailable")]
        assert lines[0].exc_info is None
    finally:
        await app.stop()
