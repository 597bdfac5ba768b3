"""The store against real SQLite files and real PostgreSQL databases, with the real Alembic
migrations (no mocks). The ``store`` fixture runs each test on both."""

from __future__ import annotations

import asyncio
import dataclasses
import sqlite3
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path

import asyncpg
import pytest
from alembic import command
from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy import text
from sqlalchemy.engine import Connection
from sqlalchemy.exc import IntegrityError

from solitaire_race.store import (
    CodeTaken,
    ConstraintViolation,
    NameTaken,
    NotFound,
    RaceStateError,
    ResultRecord,
    Store,
    hash_token,
)
from solitaire_race.store.migrate import REPO_ROOT, alembic_config
from solitaire_race.store.models import Base

from . import databases
from .conftest import ON_BOTH_DATABASES
from .databases import Database

T0 = datetime(2025, 3, 4, 5, 6, 7, 891011, tzinfo=UTC)
TABLES = {"players", "races", "results", "settings"}


def url_for(path: Path) -> str:
    return f"sqlite+aiosqlite:///{path}"


def head_revision() -> str:
    head = ScriptDirectory.from_config(alembic_config("sqlite+aiosqlite://")).get_current_head()
    assert head is not None
    return head


def sqlite_tables(path: Path) -> set[str]:
    with sqlite3.connect(path) as db:
        rows = db.execute("SELECT name FROM sqlite_master WHERE type = 'table'").fetchall()
    return {name for (name,) in rows}


def result(race_id: int, player_id: int, rank: int, **overrides: object) -> ResultRecord:
    fields: dict[object, object] = dict(
        race_id=race_id,
        player_id=player_id,
        player_name="",
        outcome="won",
        rank=rank,
        time_ms=60_000 * rank,
        moves=10 * rank,
        home=52,
        total=52,
        move_log=("1h", "2-3", "r"),
        finished_at=T0 + timedelta(minutes=rank),
    )
    fields.update(overrides)
    return ResultRecord(**fields)  # type: ignore[arg-type]


@pytest.fixture(params=databases.KINDS)
async def store(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Store]:
    """A store on a new database: a SQLite file, and a PostgreSQL database."""
    with databases.database(request.param, tmp_path) as db:
        store = await Store.open(db.url)
        yield store
        await store.close()


@pytest.fixture
async def sqlite_store(tmp_path: Path) -> AsyncIterator[Store]:
    """For what only SQLite has (PRAGMAs, its files)."""
    store = await Store.open(url_for(tmp_path / "race.sqlite3"))
    yield store
    await store.close()


async def new_player(store: Store, name: str = "ann") -> int:
    return (await store.create_player(name, hash_token(f"token-of-{name}"), T0)).id


async def new_race(store: Store, code: str = "ABCD", created_by: int | None = None) -> int:
    if created_by is None:
        created_by = await new_player(store, f"host-{code}")
    race = await store.create_race(
        code=code,
        game="perseverance",
        deal_number=2**53 - 1,
        private=False,
        created_by=created_by,
        time_limit_s=600,
        now=T0,
    )
    return race.id


# --- migrations -------------------------------------------------------------------------


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


async def test_models_and_migrations_agree(store: Store) -> None:
    def diff(conn: Connection) -> list[object]:
        context = MigrationContext.configure(conn, opts={"compare_type": True})
        return list(compare_metadata(context, Base.metadata))

    async with store.engine.connect() as conn:
        assert await conn.run_sync(diff) == []


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


async def test_running_races_read_their_logs_from_the_journal_tail(store: Store) -> None:
    """Entries of many races interleave in the journal; each running race gets exactly its
    own, in seq order, and a race started later starts its log after every earlier entry."""
    ann, bob = await new_player(store, "ann"), await new_player(store, "bob")
    old = await new_race(store, "BCDF", created_by=ann)
    await store.mark_race_started(old, T0, [ann])
    await store.log_moves(old, ann, [(0, "move", "1h", 1)])
    await store.finish_race(old, T0 + timedelta(minutes=1), [result(old, ann, 1, move_log=("1h",))])
    first = await new_race(store, "BCDG", created_by=ann)
    await store.mark_race_started(first, T0, [ann, bob])
    await store.log_moves(first, ann, [(0, "move", "a", 10)])
    second = await new_race(store, "BCDH", created_by=bob)
    await store.mark_race_started(second, T0, [bob])
    await asyncio.gather(
        store.log_moves(first, bob, [(0, "move", "b", 11)]),
        store.log_moves(second, bob, [(0, "move", "c", 12), (1, "move", "d", 13)]),
        store.log_moves(first, ann, [(1, "resign", "", 14)]),
    )
    running = {r.race.id: r.logs for r in await store.running_races()}
    assert running == {
        first: {ann: ((0, "move", "a", 10), (1, "resign", "", 14)), bob: ((0, "move", "b", 11),)},
        second: {bob: ((0, "move", "c", 12), (1, "move", "d", 13))},
    }


async def test_an_entry_written_twice_is_resumed_once(store: Store) -> None:
    """A commit whose answer was lost may have happened (PostgreSQL: the connection dropped
    during it); the room then writes the same entry again. A restart reads it once; two
    different entries under one seq are left for the room to refuse."""
    ann = await new_player(store, "ann")
    race_id = await new_race(store, created_by=ann)
    await store.mark_race_started(race_id, T0, [ann])
    await store.log_moves(race_id, ann, [(0, "move", "1h", 10)])
    await store.log_moves(race_id, ann, [(0, "move", "1h", 10), (1, "move", "2-3", 20)])  # the first again
    (running,) = await store.running_races()
    assert running.logs[ann] == ((0, "move", "1h", 10), (1, "move", "2-3", 20))
    await store.log_moves(race_id, ann, [(1, "move", "r", 30)])
    (running,) = await store.running_races()
    assert [seq for seq, *_ in running.logs[ann]] == [0, 1, 1]


# --- connection setup -------------------------------------------------------------------


async def test_every_connection_has_wal_and_foreign_keys(sqlite_store: Store) -> None:
    store = sqlite_store

    async def pragmas() -> tuple[object, ...]:
        async with store.engine.connect() as conn:
            values = []
            for name in ("journal_mode", "foreign_keys", "synchronous", "busy_timeout"):
                values.append((await conn.exec_driver_sql(f"PRAGMA {name}")).scalar())
            await asyncio.sleep(0.01)  # hold this connection so the others are new ones
            return tuple(values)

    # synchronous: 1 is NORMAL.
    assert await asyncio.gather(*(pragmas() for _ in range(3))) == [("wal", 1, 1, 5000)] * 3


async def test_foreign_keys_refuse_a_result_for_an_unknown_race(store: Store) -> None:
    player_id = await new_player(store)
    with pytest.raises(IntegrityError, match=r"(?i)FOREIGN KEY"):
        async with store.engine.begin() as conn:
            await conn.execute(
                text(
                    "INSERT INTO results (race_id, player_id, outcome, rank, moves, home,"
                    " total, move_log, finished_at) VALUES (999, :p, 'won', 1, 0, 0, 52, '', 0)"
                ),
                {"p": player_id},
            )


# --- players ----------------------------------------------------------------------------


async def test_players(store: Store) -> None:
    token_hash = hash_token("secret")
    created = await store.create_player("ann", token_hash, T0)
    assert created.name == "ann" and created.created_at == T0

    assert await store.player_by_token_hash(token_hash) == created
    assert await store.player_by_token_hash(hash_token("other")) is None
    assert await store.player(created.id) == created
    assert await store.player(created.id + 100) is None

    with pytest.raises(ConstraintViolation):
        await store.create_player("bob", token_hash, T0)

    await store.rename_player(created.id, "Ann B.")
    assert (await store.player(created.id)).name == "Ann B."  # type: ignore[union-attr]
    with pytest.raises(NotFound):
        await store.rename_player(created.id + 100, "x")


async def test_a_name_that_looks_taken_is_refused_by_the_database(store: Store) -> None:
    ann = await store.create_player("ann", hash_token("1"), T0)
    for lookalike in ("ann", "Ann", "\u0430nn", "\uff41nn"):  # Cyrillic а; full-width ａ
        with pytest.raises(NameTaken):
            await store.create_player(lookalike, hash_token("2"), T0)
        assert await store.player_by_name(lookalike) == ann
    assert await store.player_by_name("anne") is None
    bob = await store.create_player("bob", hash_token("3"), T0)
    with pytest.raises(NameTaken):
        await store.rename_player(bob.id, "ANN")
    await store.rename_player(ann.id, "Ann")  # its own name, in another case
    assert await store.player(ann.id) == dataclasses.replace(ann, name="Ann")


async def test_player_input_is_checked(store: Store) -> None:
    with pytest.raises(ValueError):
        await store.create_player("x" * 33, hash_token("t"), T0)
    with pytest.raises(ValueError):
        await store.create_player("", hash_token("t"), T0)
    with pytest.raises(ValueError, match="64 lowercase hex"):
        await store.create_player("ann", "raw-secret-token", T0)
    with pytest.raises(ValueError, match="naive"):
        await store.create_player("ann", hash_token("t"), T0.replace(tzinfo=None))


# --- races and results -------------------------------------------------------------------


async def test_race_lifecycle(store: Store) -> None:
    ann = await new_player(store, "ann")
    bob = await new_player(store, "bob")
    race = await store.create_race(
        code="QX7K",
        game="cruel",
        deal_number=2**53 - 1,
        private=True,
        created_by=ann,
        time_limit_s=900,
        now=T0,
    )
    assert (race.status, race.started_at, race.finished_at) == ("open", None, None)
    assert (race.deal_number, race.private, race.created_by) == (2**53 - 1, True, ann)
    assert await store.race(race.id) == race
    assert await store.race_by_code("QX7K") == race
    assert await store.race_by_code("NOPE") is None

    with pytest.raises(CodeTaken):
        await store.create_race(
            code="QX7K", game="cruel", deal_number=1, private=False, created_by=bob,
            time_limit_s=60, now=T0,
        )

    started = T0 + timedelta(seconds=5)
    await store.mark_race_started(race.id, started)
    running = await store.race(race.id)
    assert running is not None and running.status == "running" and running.started_at == started
    with pytest.raises(RaceStateError):
        await store.mark_race_started(race.id, started)

    finished = T0 + timedelta(minutes=10)
    await store.finish_race(
        race.id,
        finished,
        [  # given out of rank order, on purpose
            result(race.id, bob, 2, outcome="stuck", move_log=("1h",)),
            result(race.id, ann, 1, move_log=()),
        ],
    )
    done = await store.race(race.id)
    assert done is not None and done.status == "finished" and done.finished_at == finished

    results = await store.race_results(race.id)
    assert [(r.rank, r.player_name, r.outcome, r.move_log) for r in results] == [
        (1, "ann", "won", ()),
        (2, "bob", "stuck", ("1h",)),
    ]
    assert results[1] == result(
        race.id, bob, 2, player_name="bob", outcome="stuck", move_log=("1h",)
    )
    with pytest.raises(RaceStateError):
        await store.finish_race(race.id, finished, [])


async def test_create_race_with_unknown_creator_is_not_code_taken(store: Store) -> None:
    with pytest.raises(ConstraintViolation) as caught:
        await new_race(store, "ZZZZ", created_by=12345)
    assert not isinstance(caught.value, CodeTaken)


async def test_finish_race_is_one_transaction(store: Store) -> None:
    ann = await new_player(store, "ann")
    race_id = await new_race(store)
    await store.mark_race_started(race_id, T0)
    # The second row names a player who doesn't exist: the whole finish must roll back.
    with pytest.raises(ConstraintViolation):
        await store.finish_race(race_id, T0, [result(race_id, ann, 1), result(race_id, 999, 2)])
    race = await store.race(race_id)
    assert race is not None and race.status == "running" and race.finished_at is None
    assert await store.race_results(race_id) == []

    with pytest.raises(ValueError):  # a result for another race
        await store.finish_race(race_id, T0, [result(race_id + 1, ann, 1)])
    with pytest.raises(NotFound):
        await store.finish_race(race_id + 100, T0, [])


async def test_interrupted_is_a_valid_outcome(store: Store) -> None:
    # Room.interrupt ends a running race with this outcome when the server shuts down.
    ann = await new_player(store)
    race_id = await new_race(store, created_by=ann)
    await store.mark_race_started(race_id, T0)
    await store.finish_race(race_id, T0, [result(race_id, ann, 1, outcome="interrupted")])
    assert [r.outcome for r in await store.race_results(race_id)] == ["interrupted"]
    with pytest.raises(ValueError):
        await store.finish_race(race_id, T0, [result(race_id, ann, 1, outcome="bogus")])


@ON_BOTH_DATABASES
async def test_deal_secret_is_made_once_and_kept(database: Database) -> None:
    url = database.url
    async with await Store.open(url) as store:
        secret = await store.deal_secret()
        assert len(secret) == 32
        assert await store.deal_secret() == secret
    async with await Store.open(url) as store:
        assert await store.deal_secret() == secret


async def test_abandon_race(store: Store) -> None:
    host = await new_player(store)
    race_id = await new_race(store, "OPEN", created_by=host)
    assert await store.abandon_race(race_id) is True
    assert await store.race(race_id) is None
    assert await store.race_by_code("OPEN") is None  # the code is free again
    await new_race(store, "OPEN", created_by=host)

    started_id = await new_race(store, "BUSY", created_by=host)
    await store.mark_race_started(started_id, T0)
    assert await store.abandon_race(started_id) is False
    assert (await store.race(started_id)) is not None


# --- timestamps ---------------------------------------------------------------------------


async def test_timestamps_round_trip_as_aware_utc_and_sort_in_sql(store: Store) -> None:
    plus_two = timezone(timedelta(hours=2))
    moments = [
        datetime(2024, 1, 1, 10, 0, 0, 1, tzinfo=plus_two),  # 08:00:00.000001 UTC
        datetime(2024, 1, 1, 9, 0, tzinfo=UTC),
        datetime(1969, 7, 20, 20, 17, 40, tzinfo=UTC),  # before the epoch
        datetime(2024, 1, 1, 8, 0, tzinfo=UTC),
    ]
    ids = []
    for i, moment in enumerate(moments):
        player = await store.create_player(f"p{i}", hash_token(f"t{i}"), moment)
        ids.append(player.id)
        stored = await store.player(player.id)
        assert stored is not None
        assert stored.created_at == moment
        assert stored.created_at.utcoffset() == timedelta(0)
        assert stored.created_at.tzinfo is UTC

    async with store.engine.connect() as conn:
        in_sql_order = (
            await conn.execute(text("SELECT id FROM players ORDER BY created_at"))
        ).scalars().all()
    by_instant = [i for _, i in sorted(zip(moments, ids, strict=True))]
    assert in_sql_order == by_instant == [ids[2], ids[3], ids[0], ids[1]]


async def test_writes_queued_together_fail_alone(store: Store) -> None:
    """The writer thread takes whatever is queued in one hop (writer.py): a failing write
    among move-log appends rolls back alone; the appends before and after it commit."""
    ann = await new_player(store, "ann")
    race_id = await new_race(store, created_by=ann)
    await store.mark_race_started(race_id, T0, [ann])
    commits: list[int] = []
    store.commit_observer = lambda rows, seconds, on_loop: commits.append(rows)
    before = store.log_moves(race_id, ann, [(0, "move", "1h", 10)])
    duplicate = store.create_player("ann2", hash_token("token-of-ann"), T0)  # token hash taken
    after = store.log_moves(race_id, ann, [(1, "move", "2-3", 20)])
    outcomes = await asyncio.gather(before, duplicate, after, return_exceptions=True)
    assert outcomes[0] is None and outcomes[2] is None
    assert isinstance(outcomes[1], ConstraintViolation)
    assert await store.player_by_name("ann2") is None
    (running,) = await store.running_races()
    assert running.logs[ann] == ((0, "move", "1h", 10), (1, "move", "2-3", 20))
    # A failing batch fails every move in it, and only them: there is no race 999.
    with pytest.raises(ConstraintViolation):
        await store.log_moves(999, ann, [(2, "move", "r", 30)])
    await store.log_moves(race_id, ann, [(2, "move", "r", 30)])
    (running,) = await store.running_races()
    assert [seq for seq, *_ in running.logs[ann]] == [0, 1, 2]
    assert commits == [1, 1, 1]  # the failed batch is not counted as a commit
