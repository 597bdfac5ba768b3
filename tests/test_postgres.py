"""What only PostgreSQL has, for real, on the local PostgreSQL server: one ``serve`` per
database (an advisory lock, released however the server ends), ``backup`` pointing to
pg_dump, and the messages for a database that cannot be used. (Everything the store does is
tested on both databases in test_store.py, test_writer.py, test_leaderboards.py, and the
server's tests.)"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from solitaire_race.cli import main
from solitaire_race.store import DatabaseInUse, DatabaseUnusable, Store

from . import databases
from .databases import Database
from .test_crash import Server


@pytest.fixture
def pg_database(tmp_path: Path) -> Database:  # type: ignore[misc]
    with databases.database("postgresql", tmp_path) as db:
        yield db


def test_one_server_per_postgresql_database(pg_database: Database) -> None:
    """A second ``serve`` on the database exits with code 2 and says which process holds
    it; once the first is killed (SIGKILL: its connection drops), a new one starts."""
    first = Server(pg_database.url)
    first.start()
    try:
        second = subprocess.run(
            [sys.executable, "-m", "solitaire_race.cli", "serve", "--port", "0", "--db", pg_database.url],
            capture_output=True, text=True, timeout=60,
        )
        assert second.returncode == 2, second.stderr
        in_use = f"the PostgreSQL database {pg_database.url} is in use by another solitaire-race server"
        assert f"solitaire-race serve: {in_use}" in second.stderr
        assert f"process {first.proc.pid} on " in second.stderr  # type: ignore[union-attr]
        assert "Traceback" not in second.stderr
        # Commands that only read work beside it.
        assert main(["leaderboard", "cruel", "--db", pg_database.url]) == 0
        first.kill()
        again = Server(pg_database.url)  # PostgreSQL released the lock with the session
        again.start()
        again.stop()
    finally:
        first.stop()


async def test_the_lock_is_per_database_and_released_on_close(pg_database: Database, tmp_path: Path) -> None:
    store = await Store.open(pg_database.url, serve=True)
    try:
        with pytest.raises(DatabaseInUse):
            await Store.open(pg_database.url, serve=True)
        reader = await Store.open(pg_database.url)  # not a server: no lock
        await reader.close()
        with databases.database("postgresql", tmp_path / "other") as other:  # another database: another lock
            await (await Store.open(other.url, serve=True)).close()
    finally:
        await store.close()
    again = await Store.open(pg_database.url, serve=True)
    await again.close()


def test_backup_of_a_postgresql_database_says_to_use_pg_dump(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    url = "postgresql+asyncpg://race:s3cret@db.example:5433/race"
    assert main(["backup", str(tmp_path / "copy.sqlite3"), "--db", url]) == 2
    err = capsys.readouterr().err
    assert err.startswith(
        "solitaire-race backup: postgresql+asyncpg://race:***@db.example:5433/race is a PostgreSQL database"
    )
    assert "pg_dump --format=custom --file=DEST.dump 'postgresql://race@db.example:5433/race'" in err
    assert "pg_restore" in err and "s3cret" not in err and "Traceback" not in err
    assert not (tmp_path / "copy.sqlite3").exists()


async def test_a_postgresql_database_that_cannot_be_used_is_named_with_the_reason(tmp_path: Path) -> None:
    missing = databases.sqlalchemy_url("solitaire_test_never_created")
    with pytest.raises(DatabaseUnusable, match=r"does not exist \(create it first"):
        await Store.open(missing, serve=True)
    unreachable = "postgresql+asyncpg://postgres@127.0.0.1:1/race"  # nothing listens on port 1
    with pytest.raises(DatabaseUnusable, match="cannot reach the PostgreSQL server"):
        await Store.open(unreachable)


def test_serve_on_an_unreachable_postgresql_exits_with_a_message() -> None:
    url = "postgresql+asyncpg://postgres@127.0.0.1:1/race"
    done = subprocess.run(
        [sys.executable, "-m", "solitaire_race.cli", "serve", "--port", "0", "--db", url],
        capture_output=True, text=True, timeout=60,
    )
    assert done.returncode == 2
    assert done.stderr.startswith(
        f"solitaire-race serve: cannot use the PostgreSQL database {url}: cannot reach the PostgreSQL server"
    ), done.stderr
    assert "Traceback" not in done.stderr
