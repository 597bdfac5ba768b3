"""Fencing (migration 0010): a race's epoch, raised by each claim, and the writes that carry
an older one failing with ``Fenced``, writing nothing; on real SQLite files and a real
PostgreSQL, whose move-log appends are fenced in the same statement (pg_writer.py). Then
the server: it claims each race it starts or resumes, and a race another process took over
is released, its racers told (``race_moved``)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import asyncpg
import pytest
from websockets.exceptions import ConnectionClosed

from solitaire_race.app import App
from solitaire_race.store import Fenced, Store

from . import databases
from .conftest import ON_BOTH_DATABASES, Client, make_config
from .databases import Database
from .test_server import LINE, make_race, play, start
from .test_store import T0, new_player, new_race, result


@pytest.fixture(params=databases.KINDS)
def db(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Database]:
    with databases.database(request.param, tmp_path) as made:
        yield made


@pytest.fixture
def pg(tmp_path: Path) -> Iterator[Database]:
    with databases.database("postgresql", tmp_path) as made:
        yield made


@pytest.fixture
async def store(db: Database) -> AsyncIterator[Store]:
    async with await Store.open(db.url) as opened:
        yield opened


async def running_race(store: Store, code: str = "ABCD") -> tuple[int, int]:
    """A running race and its racer."""
    player = await new_player(store, f"racer-{code}")
    race = await new_race(store, code)
    await store.mark_race_started(race, T0, [player])
    return race, player


async def test_each_claim_raises_the_epoch(store: Store) -> None:
    race, _ = await running_race(store)
    assert (await store.race(race)).epoch == 0  # type: ignore[union-attr]
    assert await store.claim_race(race) == 1
    assert await store.claim_race(race) == 2
    assert (await store.race(race)).epoch == 2  # type: ignore[union-attr]


async def test_results_with_an_old_epoch_are_refused_and_with_the_current_one_written(store: Store) -> None:
    race, player = await running_race(store)
    old = await store.claim_race(race)
    new = await store.claim_race(race)
    with pytest.raises(Fenced):
        await store.finish_race(race, T0, [result(race, player, 1)], epoch=old)
    assert (await store.race(race)).status == "running" and await store.race_results(race) == []  # type: ignore[union-attr]
    await store.finish_race(race, T0, [result(race, player, 1)], epoch=new)
    assert (await store.race(race)).status == "finished"  # type: ignore[union-attr]


async def test_moves_with_an_old_epoch_are_refused_on_postgresql(pg: Database) -> None:
    async with await Store.open(pg.url) as store:
        race, player = await running_race(store)
        other, other_player = await running_race(store, "EFGH")
        old = await store.claim_race(race)
        await store.log_moves(race, player, [(0, "move", "1h", 10)], epoch=old)
        new = await store.claim_race(race)
        other_epoch = await store.claim_race(other)
        # One batch (one loop turn): the stale append fails alone; the others land.
        outcomes = await asyncio.gather(
            store.log_moves(race, player, [(1, "move", "2h", 20)], epoch=old),
            store.log_moves(race, player, [(1, "move", "3h", 30)], epoch=new),
            store.log_moves(other, other_player, [(0, "move", "1h", 5)], epoch=other_epoch),
            store.log_moves(other, other_player, [(1, "move", "2h", 6)]),  # unfenced
            return_exceptions=True,
        )
        assert isinstance(outcomes[0], Fenced) and list(outcomes[1:]) == [None, None, None]
    rows = await pg.query("SELECT race_id, seq, text FROM move_log ORDER BY race_id, seq")
    assert rows == [(race, 0, "1h"), (race, 1, "3h"), (other, 0, "1h"), (other, 1, "2h")]


async def test_a_claim_under_way_fences_out_an_append_that_waited_for_it(pg: Database) -> None:
    """READ COMMITTED and FOR SHARE: the append waits for the claim's row lock, then sees
    the new epoch and writes nothing."""
    async with await Store.open(pg.url) as store:
        race, player = await running_race(store)
        epoch = await store.claim_race(race)
        claimer = await asyncpg.connect(databases._dsn(pg.name or ""))
        try:
            claim = claimer.transaction()
            await claim.start()
            await claimer.execute("UPDATE races SET epoch = epoch + 1 WHERE id = $1", race)
            append = asyncio.ensure_future(store.log_moves(race, player, [(0, "move", "1h", 10)], epoch=epoch))
            await asyncio.sleep(0.3)
            assert not append.done()  # waiting for the claim's lock
            await claim.commit()
            with pytest.raises(Fenced):
                await asyncio.wait_for(append, 5)
        finally:
            await claimer.close()
    assert await pg.query("SELECT count(*) FROM move_log") == [(0,)]


# --- the server: its races' epochs, and a race another process took over -----------------

async def took_over(app: App, db: Database, code: str) -> None:
    """What another server process does when it takes the race over: raise its epoch."""
    race = await app.store.race_by_code(code)
    assert race is not None
    await db.execute(f"UPDATE races SET epoch = epoch + 1 WHERE id = {race.id}")


@ON_BOTH_DATABASES
async def test_a_started_race_is_claimed_and_claimed_again_after_a_restart(
    tmp_path: Path, database: Database
) -> None:
    config = make_config(tmp_path, db_url=database.url)
    app = await App.start(config)
    ann = await Client.connect(app)
    try:
        await ann.hello("ann")
        code = await make_race(ann)
        await start(ann)
        race = await app.store.race_by_code(code)
        assert race is not None and race.epoch == 1 and app.races.interpreter.epochs == {race.id: 1}
    finally:
        await ann.close()
        await app.stop()
    app = await App.start(config)
    try:
        assert app.races.interpreter.epochs == {race.id: 2}  # resumed: claimed anew
        assert (await app.store.race(race.id)).epoch == 2  # type: ignore[union-attr]
    finally:
        await app.stop()


@pytest.mark.parametrize("database", ["postgresql"], indirect=True)
async def test_a_move_after_a_takeover_is_not_logged_and_the_racers_are_told(
    app: App, clients: object, database: Database
) -> None:
    ann, bob, eve = await clients("ann"), await clients("bob"), await clients()  # type: ignore[operator]
    code = await make_race(ann, bob)
    await start(ann, bob)
    assert (await eve.request({"type": "watch_race", "code": code}))["type"] == "watching"  # a spectator
    assert (await play(ann, list(LINE[:1])))["applied"] == list(LINE[:1])
    await took_over(app, database, code)
    refused = await play(ann, list(LINE[1:2]))
    assert refused["type"] == "error" and refused["code"] == "race_moved"
    for other in (bob, eve):
        told = await other.expect("error")
        assert told["code"] == "race_moved" and "join it again" in told["message"]
    for racer in (ann, bob, eve):  # and sent on their way: reconnect, join (or watch) again
        with pytest.raises(ConnectionClosed) as closed:
            await racer.expect("nothing more")
        assert closed.value.rcvd is not None and closed.value.rcvd.code == 4003
    assert code not in app.races.rooms  # released: this process writes nothing more of it
    race = await app.store.race_by_code(code)
    assert race is not None
    logged = await database.query(f"SELECT text FROM move_log WHERE race_id = {race.id} ORDER BY id")
    assert [text for (text,) in logged] == list(LINE[:1])


@ON_BOTH_DATABASES
async def test_results_after_a_takeover_are_not_written(app: App, clients: object, database: Database) -> None:
    ann = await clients("ann")  # type: ignore[operator]
    code = await make_race(ann)
    await start(ann)
    await took_over(app, database, code)
    resigned = await ann.request({"type": "resign"})  # the last game ends: the results would be saved
    if database.is_postgresql:  # the resignation's log entry is fenced already
        assert resigned["type"] == "error" and resigned["code"] == "race_moved", resigned
    else:  # the move log is not fenced on SQLite (one process per file): the results are
        assert resigned["type"] == "progress"
        assert (await ann.expect("error"))["code"] == "race_moved"
    race = await app.store.race_by_code(code)
    assert race is not None and race.status == "running" and await app.store.race_results(race.id) == []


async def test_a_lobbys_entrants_are_written_only_at_its_epoch(store: Store) -> None:
    """A cluster's lobby adopted by another node: the node that lost it can no longer say
    who is in it."""
    race = await new_race(store, "LOBY")
    ann, bob = await new_player(store, "ann-lobby"), await new_player(store, "bob-lobby")
    await store.set_race_entries(race, [ann], epoch=0)
    adopted = await store.claim_race(race)  # another node takes the lobby over
    with pytest.raises(Fenced):
        await store.set_race_entries(race, [ann, bob], epoch=0)
    (lobby,) = [r for r in await store.open_races() if r.race.id == race]
    assert [pid for pid, _ in lobby.players] == [ann]  # nothing written
    await store.set_race_entries(race, [ann, bob], epoch=adopted)
    (lobby,) = [r for r in await store.open_races() if r.race.id == race]
    assert sorted(pid for pid, _ in lobby.players) == sorted([ann, bob])


async def test_a_lobby_is_started_only_at_its_epoch(store: Store) -> None:
    """A node that lost its lobby (paused past its lease) and whose countdown then ends
    cannot start the race or replace who races in it."""
    race = await new_race(store, "STRT")
    ann, bob = await new_player(store, "ann-start"), await new_player(store, "bob-start")
    await store.set_race_entries(race, [ann, bob], epoch=0)
    adopted = await store.claim_race(race)  # another node takes the lobby over
    with pytest.raises(Fenced):
        await store.mark_race_started(race, T0, [ann], epoch=0)
    record = await store.race(race)
    assert record is not None and record.status == "open" and record.epoch == adopted  # nothing written
    (lobby,) = [r for r in await store.open_races() if r.race.id == race]
    assert sorted(pid for pid, _ in lobby.players) == sorted([ann, bob])
    await store.mark_race_started(race, T0, [ann, bob], epoch=adopted)
    assert (await store.race(race)).status == "running"  # type: ignore[union-attr]


async def test_a_lobby_is_abandoned_only_at_its_epoch(store: Store) -> None:
    """Everyone left the lobby on the node that lost it: the lobby another node adopted stays."""
    race = await new_race(store, "ABND")
    ann = await new_player(store, "ann-abandon")
    await store.set_race_entries(race, [ann], epoch=0)
    adopted = await store.claim_race(race)
    with pytest.raises(Fenced):
        await store.abandon_race(race, epoch=0)
    assert [r.race.id for r in await store.open_races()] == [race]  # still there, with its entrant
    assert await store.abandon_race(race + 1000, epoch=0) is False  # no such race: nothing to do
    assert await store.abandon_race(race, epoch=adopted) is True
    assert await store.race(race) is None
