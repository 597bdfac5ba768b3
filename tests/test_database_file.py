"""The database file ``serve`` starts on, with real ``serve`` processes on real files: a
damaged, truncated, foreign or empty file stops the start with one short message (exit
code 2, no traceback) naming the file, what is wrong and how to restore a backup; a file
another server is serving is refused the same way, and the lock goes with that server,
however it ends; the commands that only read keep working beside a running server."""

from __future__ import annotations

import signal
import sqlite3
import subprocess
import sys
from pathlib import Path

from solitaire_race.store import Store

from .conftest import TEST_SECRET
from .test_crash import Server
from .test_store import new_player, url_for


def serve(db: Path, timeout: float = 30) -> subprocess.CompletedProcess[str]:
    """``serve`` on ``db``, expected to refuse to start: it must exit by itself."""
    return subprocess.run(
        [sys.executable, "-m", "solitaire_race.cli", "serve", "--port", "0", "--secret", TEST_SECRET,
         "--db", f"sqlite+aiosqlite:///{db}", "--daily-solver-nodes", "0"],
        capture_output=True, text=True, timeout=timeout,
    )


def command(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "solitaire_race.cli", *args], capture_output=True, text=True, timeout=60
    )


def assert_refused(done: subprocess.CompletedProcess[str], db: Path, *what: str) -> None:
    """Exit code 2 and a few lines on standard error, naming the file and what is wrong."""
    assert done.returncode == 2, (done.returncode, done.stdout, done.stderr)
    assert "Traceback" not in done.stderr + done.stdout
    assert done.stderr.startswith("solitaire-race serve: ") and len(done.stderr.splitlines()) <= 4, done.stderr
    assert str(db) in done.stderr and all(text in done.stderr for text in what), done.stderr


async def make_database(path: Path) -> None:
    """A real database with a few players, checkpointed into the file (no WAL left)."""
    async with await Store.open(url_for(path)) as store:
        for i in range(200):
            await new_player(store, f"player{i}")
    assert not Path(f"{path}-wal").exists()


def root_page(path: Path, table: str) -> int:
    with sqlite3.connect(path) as db:
        (page,) = db.execute("SELECT rootpage FROM sqlite_master WHERE name = ?", (table,)).fetchone()
    return int(page)


async def test_a_damaged_database_stops_the_start_with_a_short_message(tmp_path: Path) -> None:
    db = tmp_path / "race.sqlite3"
    await make_database(db)
    page = root_page(db, "players")
    with db.open("r+b") as file:  # a page in the middle of the file overwritten
        file.seek((page - 1) * 4096)
        file.write(b"\xa5" * 4096)
    assert_refused(serve(db), db, "damaged", "quick_check", "solitaire-race backup", "docs/operations.md")


async def test_a_truncated_database_stops_the_start_with_a_short_message(tmp_path: Path) -> None:
    db = tmp_path / "race.sqlite3"
    await make_database(db)
    with db.open("r+b") as file:
        file.truncate(db.stat().st_size // 2)
    assert_refused(serve(db), db, "damaged", "solitaire-race backup")


def test_a_file_that_is_not_a_database_stops_the_start(tmp_path: Path) -> None:
    db = tmp_path / "race.sqlite3"
    db.write_text("these are not the races you are looking for\n" * 100)
    assert_refused(serve(db), db, "not a SQLite database", "solitaire-race backup")


def test_an_empty_file_is_not_silently_made_a_new_database(tmp_path: Path) -> None:
    db = tmp_path / "race.sqlite3"
    db.touch()
    assert_refused(serve(db), db, "empty (0 bytes)", f"rm {db}", "solitaire-race backup")
    assert db.stat().st_size == 0  # left as it was, for the operator to decide
    # The readers refuse it too, rather than make it a database.
    board = command("leaderboard", "cruel", "--db", f"sqlite+aiosqlite:///{db}")
    assert board.returncode == 2 and "empty (0 bytes)" in board.stderr and "Traceback" not in board.stderr
    assert db.stat().st_size == 0
    # The documented way to start afresh: delete it.
    db.unlink()
    server = Server(db)
    server.start()  # it serves: the URL is printed
    server.stop()


async def test_one_server_per_database_file(tmp_path: Path) -> None:
    """A second ``serve`` on the file refuses to start (its recovery would take over the
    first one's races); the reading commands work beside the server; once the first is
    killed (SIGKILL: no clean-up of its own), a new server starts on the file."""
    db = tmp_path / "race.sqlite3"
    first = Server(db)
    first.start()
    assert first.proc is not None
    try:
        second = serve(db)
        assert_refused(
            second, db,
            "in use by another solitaire-race server", f"process {first.proc.pid}", "one SQLite file serves one",
        )
        assert (tmp_path / "race.sqlite3-server.lock").is_file()  # beside the database
        # Beside the running server: the commands that read.
        backup = command("backup", str(tmp_path / "copy.sqlite3"), "--db", f"sqlite+aiosqlite:///{db}")
        assert backup.returncode == 0, backup.stderr
        board = command("leaderboard", "cruel", "--db", f"sqlite+aiosqlite:///{db}")
        assert board.returncode == 0 and "Cruel: fastest wins" in board.stdout, board.stderr
        hint = command("hint", "persian-patience", "1", "--db", f"sqlite+aiosqlite:///{db}", "--nodes", "1000")
        assert hint.returncode in (0, 1) and "Traceback" not in hint.stderr, hint.stderr
        first.proc.send_signal(signal.SIGKILL)
        first.proc.wait(timeout=10)
        again = Server(db)  # the kernel released the lock with the process
        again.start()  # it serves: the URL is printed
        again.stop()
    finally:
        first.stop()


def test_a_missing_file_is_a_new_database(tmp_path: Path) -> None:
    db = tmp_path / "new" / "race.sqlite3"
    server = Server(db)
    server.start()  # it serves: the URL is printed
    server.stop()
    with sqlite3.connect(db) as conn:
        assert conn.execute("SELECT count(*) FROM players").fetchone() == (0,)
