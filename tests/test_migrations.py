"""The Alembic migrations for real: a new SQLite file or PostgreSQL database migrated to
the head, down and up again; and the migrations that rebuilt the move log, on databases
holding rows from before them (their rows, ids and rules kept). The models agreeing with
the migrations is checked in test_store.py, on both databases."""

from __future__ import annotations

import asyncio
import sqlite3
from pathlib import Path

import asyncpg
import pytest
from alembic import command
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory

from solitaire_race.store import Store
from solitaire_race.store.migrate import REPO_ROOT, alembic_config

from . import databases
from .test_store import new_player, url_for

TABLES = {"players", "races", "results", "settings"}


def head_revision() -> str:
    head = ScriptDirectory.from_config(alembic_config("sqlite+aiosqlite://")).get_current_head()
    assert head is not None
    return head


def sqlite_tables(path: Path) -> set[str]:
    with sqlite3.connect(path) as db:
        rows = db.execute("SELECT name FROM sqlite_master WHERE type = 'table'").fetchall()
    return {name for (name,) in rows}


def test_repo_root_is_where_alembic_ini_is() -> None:
    assert (REPO_ROOT / "alembic.ini").is_file()
    assert (REPO_ROOT / "migrations" / "env.py").is_file()
    assert (REPO_ROOT / "server" / "solitaire_race" / "store" / "migrate.py").is_file()


async def test_open_creates_schema_at_head_and_is_idempotent(tmp_path: Path) -> None:
    path = tmp_path / "missing" / "dir" / "race.sqlite3"  # parent directories don't exist
    async with await Store.open(url_for(path)) as store:
        player_id = await new_player(store)
        async with store.engine.connect() as conn:
            current = await conn.run_sync(
                lambda c: MigrationContext.configure(c).get_current_revision()
            )
        assert current == head_revision()
    assert sqlite_tables(path) >= TABLES

    async with await Store.open(url_for(path)) as store:  # second open: nothing to do
        assert (await store.player(player_id)) is not None
    with sqlite3.connect(path) as db:
        assert db.execute("SELECT version_num FROM alembic_version").fetchall() == [
            (head_revision(),)
        ]


def test_upgrade_downgrade_upgrade_round_trip(tmp_path: Path) -> None:
    # Plain sync test: from the command line path env.py runs its own asyncio.run().
    path = tmp_path / "roundtrip.sqlite3"
    config = alembic_config(url_for(path))
    config.attributes["configure_logger"] = False
    command.upgrade(config, "head")
    assert sqlite_tables(path) >= TABLES
    command.downgrade(config, "base")
    assert sqlite_tables(path) & TABLES == set()
    command.upgrade(config, "head")
    assert sqlite_tables(path) >= TABLES
    with sqlite3.connect(path) as db:
        assert db.execute("SELECT version_num FROM alembic_version").fetchall() == [
            (head_revision(),)
        ]



async def test_open_migrates_a_new_postgresql_database_to_head(tmp_path: Path) -> None:
    with databases.database("postgresql", tmp_path, migrated=False) as db:
        async with await Store.open(db.url) as store:
            player_id = await new_player(store)
        assert await db.query("SELECT version_num FROM alembic_version") == [(head_revision(),)]
        async with await Store.open(db.url) as store:  # second open: nothing to do
            assert (await store.player(player_id)) is not None
        tables = {name for (name,) in await db.query("SELECT tablename FROM pg_tables WHERE schemaname = 'public'")}
        assert tables >= TABLES


def test_upgrade_downgrade_upgrade_round_trip_on_postgresql(tmp_path: Path) -> None:
    """The same migrations, both ways, on PostgreSQL (``alembic`` as from the command line)."""
    with databases.database("postgresql", tmp_path, migrated=False) as db:
        config = alembic_config(db.url)
        config.attributes["configure_logger"] = False

        def tables() -> set[str]:
            rows = asyncio.run(db.query("SELECT tablename FROM pg_tables WHERE schemaname = 'public'"))
            return {name for (name,) in rows}

        command.upgrade(config, "head")
        assert tables() >= TABLES
        command.downgrade(config, "base")
        assert tables() & TABLES == set()
        command.upgrade(config, "head")
        assert tables() >= TABLES


def test_the_journal_keeps_its_rows_and_ids_through_the_migrations_on_postgresql(tmp_path: Path) -> None:
    """On PostgreSQL, 0006 makes the move log a journal (a SERIAL id, in (race, player, seq)
    order) and sets ``log_from``, 0007 replaces the CHECK in place, 0009 makes the ids
    BIGINT: the rows and ids stay, the CHECK and foreign keys hold, the sequence goes on
    after the ids there are, and the downgrade gives 0005's table back."""
    rows = [
        (2, 1, 1, "move", "2>f", 20), (1, 1, 0, "move", "1h", 5),
        (2, 1, 0, "move", "1>f", 10), (2, 2, 0, "resign", "", 30),
    ]
    with databases.database("postgresql", tmp_path, migrated=False) as db:
        config = alembic_config(db.url)
        config.attributes["configure_logger"] = False
        command.upgrade(config, "0005")

        async def fill() -> None:
            await db.execute(
                "INSERT INTO players (id, name, token_hash, created_at) "
                "VALUES (1, 'ann', 'h1', 1), (2, 'bob', 'h2', 1)",
                "INSERT INTO races "
                "(id, code, game, deal_number, private, status, created_by, time_limit_s, created_at) "
                "VALUES "
                "(1, 'BCDFGH', 'cruel', 1, true, 'finished', 1, 600, 1), "
                "(2, 'BCDFGJ', 'cruel', 1, true, 'running', 1, 600, 1), "
                "(3, 'BCDFGK', 'cruel', 1, true, 'running', 1, 600, 1)",
                "INSERT INTO race_entries (race_id, player_id) VALUES (2, 1), (2, 2), (3, 1)",
                "INSERT INTO move_log VALUES "
                + ", ".join(f"({r}, {p}, {q}, '{k}', '{t}', {a})" for r, p, q, k, t, a in rows),
            )

        asyncio.run(fill())
        command.upgrade(config, "head")

        async def check_head() -> None:
            journal = [(i + 1, *row) for i, row in enumerate(sorted(rows))]
            assert await db.query("SELECT * FROM move_log ORDER BY id") == journal
            assert await db.query("SELECT id, log_from FROM races ORDER BY id") == [(1, 1), (2, 2), (3, 5)]
            types = await db.query(
                "SELECT table_name, column_name, data_type FROM information_schema.columns "
                "WHERE (table_name, column_name) IN (('move_log', 'id'), ('races', 'log_from')) ORDER BY table_name"
            )
            assert types == [("move_log", "id", "bigint"), ("races", "log_from", "bigint")]
            assert await db.query("SELECT pg_get_serial_sequence('move_log', 'id')") == [("public.move_log_id_seq",)]
            checks = await db.query(
                "SELECT conname FROM pg_constraint WHERE conrelid = 'move_log'::regclass AND contype = 'c'"
            )
            assert checks == [("ck_move_log_kind",)]
            insert = (
                "INSERT INTO move_log (race_id, player_id, seq, kind, text, at_ms) "
                "VALUES ({}, 1, 9, '{}', 'x', 0) RETURNING id"
            )
            assert await db.query(insert.format(2, "move")) == [(5,)]  # after the ids copied in
            for bad in (insert.format(2, "teleport"), insert.format(7, "move")):  # the CHECK; no race 7
                with pytest.raises(asyncpg.IntegrityConstraintViolationError):
                    await db.query(bad)
            await db.query("DELETE FROM move_log WHERE id = 5")

        asyncio.run(check_head())

        async def resumed() -> dict[int, dict[int, tuple[tuple[int, str, str, int], ...]]]:
            async with await Store.open(db.url) as store:
                return {r.race.id: r.logs for r in await store.running_races()}

        assert asyncio.run(resumed()) == {
            2: {1: ((0, "move", "1>f", 10), (1, "move", "2>f", 20)), 2: ((0, "resign", "", 30),)},
            3: {1: ()},
        }
        command.downgrade(config, "0005")
        assert asyncio.run(db.query("SELECT * FROM move_log ORDER BY race_id, player_id, seq")) == sorted(rows)
        command.upgrade(config, "head")
        assert asyncio.run(db.query("SELECT id, race_id, seq FROM move_log ORDER BY id"))[0] == (1, 1, 0)


def test_move_log_becomes_without_rowid_and_keeps_its_rows_and_rules(tmp_path: Path) -> None:
    """Migration 0005 rebuilds move_log clustered on its key; nothing in it is lost, and its
    CHECK and foreign keys still hold (both ways)."""
    path = tmp_path / "m.sqlite3"
    config = alembic_config(url_for(path))
    config.attributes["configure_logger"] = False
    command.upgrade(config, "0004")
    rows = [(1, 1, seq, "move", f"{seq + 1}>f", 10 * seq) for seq in range(5)] + [(1, 1, 5, "resign", "", 60)]
    with sqlite3.connect(path) as db:
        db.execute("INSERT INTO players (id, name, token_hash, created_at) VALUES (1, 'ann', 'h', '2026-11-21')")
        db.execute(
            "INSERT INTO races (id, code, game, deal_number, private, status, created_by, time_limit_s, created_at) "
            "VALUES (1, 'BCDFGH', 'cruel', 1, 1, 'running', 1, 600, '2026-11-21')"
        )
        db.executemany("INSERT INTO move_log VALUES (?, ?, ?, ?, ?, ?)", rows)

    def table_sql() -> str:
        with sqlite3.connect(path) as db:
            return str(db.execute("SELECT sql FROM sqlite_master WHERE name = 'move_log'").fetchone()[0])

    def check_rules() -> None:
        with sqlite3.connect(path) as db:
            db.execute("PRAGMA foreign_keys = ON")
            assert db.execute("SELECT * FROM move_log ORDER BY seq").fetchall() == rows
            with pytest.raises(sqlite3.IntegrityError):
                db.execute("INSERT INTO move_log VALUES (1, 1, 9, 'teleport', 'x', 0)")  # CHECK
            with pytest.raises(sqlite3.IntegrityError):
                db.execute("INSERT INTO move_log VALUES (7, 1, 9, 'move', 'x', 0)")  # no race 7
            with pytest.raises(sqlite3.IntegrityError):
                db.execute("INSERT INTO move_log VALUES (1, 1, 0, 'move', 'x', 0)")  # seq taken

    command.upgrade(config, "0005")
    assert "WITHOUT ROWID" in table_sql()
    check_rules()
    command.downgrade(config, "0004")
    assert "WITHOUT ROWID" not in table_sql()
    check_rules()


def add_ann_and_bob(db: sqlite3.Connection) -> None:
    """Players 1 and 2, written straight into a database at an older revision."""
    db.executemany(
        "INSERT INTO players (id, name, token_hash, created_at) VALUES (?, ?, ?, 1795000000000000)",
        [(1, "ann", "h1"), (2, "bob", "h2")],
    )


def test_move_log_becomes_a_journal_and_running_races_resume_from_it(tmp_path: Path) -> None:
    """Migration 0006 turns move_log into a rowid table in (race, player, seq) order, sets
    each race's ``log_from``, keeps the CHECK and foreign keys, and a store opened on it
    resumes the running races with their whole logs; the downgrade gives 0005's table back."""
    path = tmp_path / "m.sqlite3"
    config = alembic_config(url_for(path))
    config.attributes["configure_logger"] = False
    command.upgrade(config, "0005")
    # Race 1 finished, race 2 running with entries, race 3 running with none yet; rows
    # inserted out of key order (the old table keeps key order whatever the insert order).
    rows = [
        (2, 1, 1, "move", "2>f", 20), (1, 1, 0, "move", "1h", 5),
        (2, 1, 0, "move", "1>f", 10), (2, 2, 0, "resign", "", 30),
    ]
    with sqlite3.connect(path) as db:
        add_ann_and_bob(db)
        db.executemany(
            "INSERT INTO races "
            "(id, code, game, deal_number, private, status, created_by, time_limit_s, created_at, started_at) "
            "VALUES (?, ?, 'persian-patience', 1, 1, ?, 1, 600, 1795000000000000, 1795000000000000)",
            [(1, "BCDFGH", "finished"), (2, "BCDFGJ", "running"), (3, "BCDFGK", "running")],
        )
        db.executemany("INSERT INTO race_entries (race_id, player_id) VALUES (?, ?)", [(2, 1), (2, 2), (3, 1)])
        db.executemany("INSERT INTO move_log VALUES (?, ?, ?, ?, ?, ?)", rows)

    command.upgrade(config, "head")
    with sqlite3.connect(path) as db:
        assert "WITHOUT ROWID" not in db.execute("SELECT sql FROM sqlite_master WHERE name = 'move_log'").fetchone()[0]
        journal = [(i + 1, *row) for i, row in enumerate(sorted(rows))]
        assert db.execute("SELECT * FROM move_log ORDER BY id").fetchall() == journal
        assert db.execute("SELECT id, log_from FROM races ORDER BY id").fetchall() == [(1, 1), (2, 2), (3, 5)]
        db.execute("PRAGMA foreign_keys = ON")
        insert = "INSERT INTO move_log (race_id, player_id, seq, kind, text, at_ms) VALUES "
        with pytest.raises(sqlite3.IntegrityError):
            db.execute(insert + "(2, 1, 9, 'teleport', 'x', 0)")
        with pytest.raises(sqlite3.IntegrityError):
            db.execute(insert + "(7, 1, 9, 'move', 'x', 0)")

    async def resumed() -> dict[int, dict[int, tuple[tuple[int, str, str, int], ...]]]:
        async with await Store.open(url_for(path)) as store:
            return {r.race.id: r.logs for r in await store.running_races()}

    # (Sync test: alembic's env.py runs its own event loop.)
    assert asyncio.run(resumed()) == {
        2: {1: ((0, "move", "1>f", 10), (1, "move", "2>f", 20)), 2: ((0, "resign", "", 30),)},
        3: {1: ()},
    }

    command.downgrade(config, "0005")
    with sqlite3.connect(path) as db:
        assert "WITHOUT ROWID" in db.execute("SELECT sql FROM sqlite_master WHERE name = 'move_log'").fetchone()[0]
        assert db.execute("SELECT * FROM move_log").fetchall() == sorted(rows)
        assert "log_from" not in {c[1] for c in db.execute("PRAGMA table_info(races)")}


def test_move_log_checks_its_kind_with_comparisons_and_keeps_its_rows(tmp_path: Path) -> None:
    """Migration 0007 rebuilds move_log with the same CHECK written as comparisons (an IN
    list made SQLite build a temporary table for every row inserted); rows and ids stay,
    and the CHECK and foreign keys hold, both ways."""
    path = tmp_path / "m.sqlite3"
    config = alembic_config(url_for(path))
    config.attributes["configure_logger"] = False
    command.upgrade(config, "0006")
    rows = [(1, 1, 0, "move", "1h", 5), (1, 1, 1, "resign", "", 9), (1, 2, 0, "left", "", 12)]
    with sqlite3.connect(path) as db:
        add_ann_and_bob(db)
        db.execute(
            "INSERT INTO races "
            "(id, code, game, deal_number, private, status, created_by, time_limit_s, created_at, log_from) "
            "VALUES (1, 'BCDFGH', 'cruel', 1, 1, 'running', 1, 600, 1795000000000000, 1)"
        )
        db.executemany(
            "INSERT INTO move_log (id, race_id, player_id, seq, kind, text, at_ms) VALUES (?, ?, ?, ?, ?, ?, ?)",
            [(10 * (i + 1), *row) for i, row in enumerate(rows)],
        )
    insert = "INSERT INTO move_log (race_id, player_id, seq, kind, text, at_ms) VALUES (1, 1, 2, 'move', 'x', 20)"

    def check(ephemeral: bool) -> None:
        with sqlite3.connect(path) as db:
            db.execute("PRAGMA foreign_keys = ON")
            journal = [(10 * (i + 1), *row) for i, row in enumerate(rows)]
            assert db.execute("SELECT * FROM move_log ORDER BY id").fetchall() == journal
            assert any(op == "OpenEphemeral" for _, op, *_ in db.execute("EXPLAIN " + insert)) == ephemeral
            with pytest.raises(sqlite3.IntegrityError):
                db.execute(insert.replace("'move'", "'teleport'"))  # CHECK
            with pytest.raises(sqlite3.IntegrityError):
                db.execute(insert.replace("VALUES (1,", "VALUES (7,"))  # no race 7
            db.rollback()

    check(ephemeral=True)
    command.upgrade(config, "0007")
    check(ephemeral=False)
    command.downgrade(config, "0006")
    check(ephemeral=True)
