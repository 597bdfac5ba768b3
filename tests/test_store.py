"""The store against real SQLite files and real PostgreSQL databases, with the real Alembic
migrations (no mocks). The ``store`` fixture runs each test on both. (The migrations
themselves: test_migrations.py.)"""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path

import pytest
from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext
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
from solitaire_race.store.models import Base

from . import databases
from .conftest import ON_BOTH_DATABASES
from .databases import Database

T0 = datetime(2025, 3, 4, 5, 6, 7, 891011, tzinfo=UTC)


def url_for(path: Path) -> str:
    return f"sqlite+aiosqlite:///{path}"


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


async def test_models_and_migrations_agree(store: Store) -> None:
    def diff(conn: Connection) -> list[object]:
        context = MigrationContext.configure(conn, opts={"compare_type": True})
        return list(compare_metadata(context, Base.metadata))

    async with store.engine.connect() as conn:
        assert await conn.run_sync(diff) == []


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
