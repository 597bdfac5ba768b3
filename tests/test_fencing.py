"""Fencing (migration 0010): a race's epoch, raised by each claim, and the writes that carry
an older one failing with ``Fenced``, writing nothing; on real SQLite files and a real
PostgreSQL, whose move-log appends are fenced in the same statement (pg_writer.py)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import asyncpg
import pytest

from solitaire_race.store import Fenced, Store

from . import databases
from .databases import Database
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
