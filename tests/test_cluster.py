"""A cluster for real (cluster_support.py): nodes are ``solitaire-race serve --redis``
processes on loopback, sharing a real PostgreSQL database and the machine's real Redis.
Nodes are killed with SIGKILL as a dying machine would be.

What must hold: a race runs on one node and a client that reaches another is brought to
it (``race_elsewhere``); when its node dies another adopts it from the move log, and every
acknowledged move is applied exactly once; the daily planner runs on one node at a time;
Redis or PostgreSQL away for a while loses nothing acknowledged. (A node that lost its
races without knowing it: test_cluster_fencing.py.)
"""

from __future__ import annotations

import asyncio
import re
import signal
import socket
import subprocess
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import asyncpg
import pytest

from solitaire_race.bots.runner import run_bot
from solitaire_race.client.connection import Connection, ws_url

from . import databases
from .cluster_support import (
    DEAL,
    GAME,
    LEASE_TTL_S,
    LINE,
    Node,
    closed,
    cluster,  # noqa: F401  # the fixture
    entries_are,
    finished,
    held_by,
    id_of,
    lease_holder,
    moves_logged,
    pg,  # noqa: F401  # the fixture
    play,
    player,
    race_of_two,
    results_of,
    scalar,
    started,
    until,
)
from .conftest import TIMEOUT, Client
from .databases import Database


async def test_a_race_made_on_one_node_is_joined_through_the_others_and_finished_there(
    cluster: Callable[..., Node], pg: Database
) -> None:
    a, b, c = cluster("a"), cluster("b"), cluster("c")
    host = await player(a, "Hostess")
    room = await host.request({"type": "create_race", "game": GAME, "deal": DEAL, "private": False})
    code = room["race"]["code"]
    # Every node lists it (public lobbies come from the database).
    listing = await player(b, "Looker")
    assert [r["code"] for r in (await listing.request({"type": "list_races"}))["races"]] == [code]
    # Through b, as the protocol says: race_elsewhere, with a's address.
    raw = await Client.connect(type("At", (), {"ws_url": b.url})())
    await raw.hello("Rawley")
    refused = await raw.request({"type": "join_race", "code": code})
    assert refused["code"] == "race_elsewhere" and refused["url"] == a.url and refused["race"] == code, refused
    await raw.close()
    # The client library follows it: racers connected to b and to c end up in a's room.
    guest, third = await player(b, "Guest"), await player(c, "Third")
    for conn in (guest, third):
        assert (await conn.request({"type": "join_race", "code": code}))["type"] == "room"
        assert conn.at == ws_url(a.url)
    assert (await host.request({"type": "start_race"}))["type"] in ("room", "countdown")
    await started(host), await started(guest), await started(third)
    await play(host, LINE)
    await play(guest, LINE)
    await play(third, LINE[:3])
    assert (await third.request({"type": "resign"}))["type"] in ("progress", "move_result")
    await until(lambda: finished(pg, code), 10)
    assert await results_of(pg, code) == [("resigned", 3), ("won", len(LINE)), ("won", len(LINE))]
    # The finished race, asked for through b, comes from the database.
    other = await player(b, "Latecomer")
    assert (await other.request({"type": "join_race", "code": code}))["code"] == "no_such_race"
    # Every node reads the same boards, daily challenges and profiles.
    readers = [await player(node, f"Reader-{node.node_id}") for node in (a, b, c)]
    guest_id = await scalar(pg, "SELECT id FROM players WHERE name = ?", "Guest")
    boards, dailies, profiles = [], [], []
    for conn in readers:
        board = await conn.request({"type": "leaderboard", "board": "deal", "game": GAME, "deal": DEAL})
        boards.append([(e["name"], e["time_ms"]) for e in board["entries"]])
        daily = await conn.request({"type": "daily"})
        dailies.append([(c["game"], c["deal"]) for c in daily["challenges"]])
        profile = await conn.request({"type": "profile", "player_id": guest_id})
        profiles.append((profile["player"]["name"], [(g["game"], g["games"], g["wins"]) for g in profile["games"]]))
    assert boards[0] == boards[1] == boards[2] and sorted(n for n, _ in boards[0]) == ["Guest", "Hostess", "Third"]
    assert dailies[0] == dailies[1] == dailies[2] and len(dailies[0]) == 7
    assert profiles == [("Guest", [(GAME, 1, 1)])] * 3
    for conn in (host, guest, third, listing, other, *readers):
        await conn.close()


async def test_a_node_killed_mid_race_its_race_goes_on_on_another_with_every_acknowledged_move_once(
    cluster: Callable[..., Node], pg: Database
) -> None:
    a, b = cluster("a"), cluster("b")
    host, guest = await player(a, "Hostess"), await player(a, "Guest")
    code = await race_of_two(host, guest)
    half = len(LINE) // 2
    await play(host, LINE[:half])
    await play(guest, LINE[:3])
    before_last = time.monotonic()
    last = await host.request({"type": "move", "moves": ["not-a-move"]})  # refused: just the race's time
    after_last = time.monotonic()
    race_id = await id_of(pg, code)
    assert await lease_holder(pg, f"race:{race_id}") == "a"
    a.signal(signal.SIGKILL)
    killed = time.monotonic()
    # b adopts the race by itself once a's lease has run out, before anyone asks.
    await until(lambda: held_by(pg, race_id, "b"))
    adopted = time.monotonic()
    for conn in (host, guest):
        await closed(conn)
        await conn.move_to(b.url)  # any node: b runs it now
        assert (await conn.request({"type": "join_race", "code": code}))["type"] == "room"
    back_host, back_guest = await started(host), await started(guest)
    # Where each racer was, exactly: nothing acknowledged lost, nothing applied twice.
    assert back_host["moves"] == half and back_guest["moves"] == 3
    # The race clock ran on through the takeover, for both alike, from the race's stored
    # start: each reads at least what had passed when b adopted the race (a clock begun
    # at the adoption would read less), and no more than what has passed now. (Half a
    # second either way: the new owner places the clock by the wall clock.)
    now = time.monotonic()
    for back in (back_host, back_guest):
        least = last["elapsed_ms"] + (adopted - after_last) * 1000 - 500
        most = last["elapsed_ms"] + (now - before_last) * 1000 + 500
        assert least <= back["elapsed_ms"] <= most, (least, back["elapsed_ms"], most)
    await play(host, LINE[half:])
    await play(guest, LINE[3:])
    await until(lambda: finished(pg, code), 10)
    assert await results_of(pg, code) == [("won", len(LINE)), ("won", len(LINE))]
    logged = await pg.query("SELECT player_id, seq, count(*) FROM move_log WHERE race_id = ? AND kind = 'move' "
                            "GROUP BY player_id, seq HAVING count(*) > 1", race_id)
    assert logged == []  # one entry per move and racer
    assert b.events("race_adopted") == 1
    print(f"adopted {adopted - killed:.1f} s after the SIGKILL (lease {LEASE_TTL_S} s)")
    for conn in (host, guest):
        await conn.close()


async def test_bots_follow_their_race_to_its_node_and_through_its_failover(
    cluster: Callable[..., Node], pg: Database
) -> None:
    a, b = cluster("a"), cluster("b")
    host = await player(a, "Hostess")
    code = (await host.request({"type": "create_race", "game": GAME, "deal": DEAL}))["race"]["code"]
    # Two bots that only know b: joined by code, they are brought to a.
    bots = [asyncio.ensure_future(run_bot(b.url, f"bot{i}", code=code, speed=8.0)) for i in (1, 2)]
    await until(lambda: entries_are(pg, code, 3), 15)
    assert (await host.request({"type": "start_race"}))["type"] in ("room", "countdown")
    await started(host)
    race_id = await id_of(pg, code)
    await until(lambda: moves_logged(pg, race_id, 6), 15)  # the bots are playing
    a.signal(signal.SIGKILL)
    await closed(host)
    await host.move_to(b.url)
    assert (await host.request({"type": "join_race", "code": code}))["type"] == "room"
    await started(host)
    assert (await host.request({"type": "resign"}))["type"] != "error"
    results = await asyncio.wait_for(asyncio.gather(*bots), 120)
    assert {r.code for r in results} == {code}
    assert all(len(r.ranking) == 3 for r in results), results
    assert all(r.outcome in ("won", "stuck", "resigned", "timed_out") for r in results), results
    assert len(await results_of(pg, code)) == 3  # one result per racer
    await host.close()


async def test_the_daily_planner_runs_on_one_node_and_moves_when_it_dies(
    cluster: Callable[..., Node], pg: Database
) -> None:
    a = cluster("a")
    await until(lambda: lease_holder(pg, "daily-planner"), 10)
    b = cluster("b")
    assert await lease_holder(pg, "daily-planner") == "a"
    chosen = await scalar(pg, "SELECT count(*) FROM daily_challenges")
    assert chosen and chosen % 7 == 0  # each game's, once: today's and tomorrow's
    assert a.events("daily_chosen") == chosen and b.events("daily_chosen") == 0
    a.signal(signal.SIGKILL)
    await until(lambda: _planner_is(pg, "b"))
    # b reads the challenges a chose: a daily attempt through b is today's deal.
    conn = await player(b, "Dailyn")
    reply = await conn.request({"type": "start_daily", "game": GAME})
    assert reply["type"] == "race_started" and reply["daily"]["ranked"] is True, reply
    await conn.close()


async def _planner_is(pg: Database, node: str) -> bool:
    return await lease_holder(pg, "daily-planner") == node


async def test_the_terminal_client_follows_its_race_to_its_node_and_through_its_failover(
    cluster: Callable[..., Node], pg: Database, tmp_path: Path
) -> None:
    from .test_tui_pty import SGR, expect, spawn

    a, b = cluster("a"), cluster("b")
    host = await player(a, "Hostess")
    code = (await host.request({"type": "create_race", "game": GAME, "deal": DEAL}))["race"]["code"]
    child = spawn(b.url, tmp_path / "config", "--name", "tess", "--join", code)  # knows only b
    try:
        await expect(child, "Type ready when you are")  # in the room, which runs on a
        assert (await host.request({"type": "start_race"}))["type"] in ("room", "countdown")
        await started(host)
        await expect(child, "move> ")
        child.sendline(LINE[0])
        await expect(child, "✓ " + SGR + re.escape(LINE[0]))
        a.signal(signal.SIGKILL)
        await expect(child, "reconnecting")
        await expect(child, "reconnected")
        child.sendline(LINE[1])
        await expect(child, "✓ " + SGR + re.escape(LINE[1]))
    finally:
        child.close(force=True)
    race_id = await id_of(pg, code)
    moves = await pg.query("SELECT text FROM move_log WHERE race_id = ? AND kind = 'move' ORDER BY seq", race_id)
    assert [m for (m,) in moves] == list(LINE[:2])
    await host.close()


@pytest.fixture
def own_redis(tmp_path: Path) -> Iterator[Callable[[], str]]:
    """A Redis server of the test's own (the real program), so that it can be killed and
    started again: ``start()`` (again) returns its URL."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    procs: list[subprocess.Popen[bytes]] = []

    def start() -> str:
        procs.append(subprocess.Popen(
            ["redis-server", "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        ))
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            with socket.socket() as probe:
                if probe.connect_ex(("127.0.0.1", port)) == 0:
                    return f"redis://127.0.0.1:{port}/0"
            time.sleep(0.05)
        raise AssertionError("redis-server did not start")

    yield start
    for proc in procs:
        proc.kill()
        proc.wait(timeout=10)


async def test_redis_restarted_mid_race_the_race_stays_and_loses_nothing(
    cluster: Callable[..., Node], pg: Database, own_redis: Callable[[], str]
) -> None:
    redis_url = own_redis()
    a, b = cluster("a", "--redis", redis_url), cluster("b", "--redis", redis_url)
    host = await player(a, "Hostess")
    code = (await host.request({"type": "create_race", "game": GAME, "deal": DEAL}))["race"]["code"]
    await host.request({"type": "start_race"})
    await started(host)
    await play(host, LINE[:3])
    looker = await player(b, "Looker")
    subprocess.run(["redis-cli", "-u", redis_url, "shutdown", "nosave"], check=False, capture_output=True)
    # Moves need the database only: they go on while Redis is down.
    await play(host, LINE[3:6])
    # Finding where a race runs needs Redis: a clear, retryable error meanwhile.
    refused = await looker.request({"type": "join_race", "code": code})
    assert refused["code"] == "storage_unavailable", refused
    assert b.events("storage_unavailable") >= 1  # its log says why: Redis cannot be reached
    own_redis()  # back, empty: every lease is gone
    # A request for the race at once, through b, finds no lease: b does not take the race
    # for that (it is "moving", not yet an orphan); a takes its lease back meanwhile.
    raw = await Client.connect(type("At", (), {"ws_url": b.url})())
    await raw.hello("Rawley")
    asked = await raw.request({"type": "join_race", "code": code})
    assert asked["code"] == "race_elsewhere", asked
    await raw.close()
    await asyncio.sleep(3 * LEASE_TTL_S)  # renewals and looks for orphans, several of each
    await play(host, LINE[6:])
    await until(lambda: finished(pg, code), 10)
    assert await results_of(pg, code) == [("won", len(LINE))]
    # The race stayed on a: its lease was taken back, not adopted by b.
    assert b.events("race_adopted") == 0 and a.events("race_fenced") == 0
    assert "Traceback" not in a.log.read_text() + b.log.read_text()
    await host.close()
    await looker.close()


async def test_postgresql_unavailable_for_seconds_clear_errors_and_no_acknowledged_move_lost(
    cluster: Callable[..., Node], pg: Database
) -> None:
    a, _ = cluster("a"), cluster("b")
    host = await player(a, "Hostess")
    code = (await host.request({"type": "create_race", "game": GAME, "deal": DEAL}))["race"]["code"]
    await host.request({"type": "start_race"})
    await started(host)
    await play(host, LINE[:3])
    # The database refuses connections and drops the ones it has, for a few seconds.
    admin = await asyncpg.connect(databases.ADMIN_URL)
    await admin.execute(f'ALTER DATABASE "{pg.name}" WITH ALLOW_CONNECTIONS false')
    await admin.execute("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1", pg.name)
    acknowledged = 3
    refused = 0
    try:
        for move in LINE[3:6]:
            reply = await host.request({"type": "move", "moves": [move]})
            if reply["type"] == "move_result":
                acknowledged = reply["moves"]
            else:
                assert reply["code"] == "storage_unavailable", reply  # retryable, said clearly
                refused += 1
        await asyncio.sleep(3)
    finally:
        await admin.execute(f'ALTER DATABASE "{pg.name}" WITH ALLOW_CONNECTIONS true')
        await admin.close()
    assert refused >= 1
    # Back: the moves kept while it was away are saved with the next one, nothing twice.
    reply = await until(lambda: _move_once(host, LINE[6]), 20)
    assert reply["moves"] == 7 and reply["moves"] >= acknowledged
    await play(host, LINE[7:])
    await until(lambda: finished(pg, code), 10)
    race_id = await id_of(pg, code)
    logged = await pg.query("SELECT text FROM move_log WHERE race_id = ? AND kind = 'move' ORDER BY seq", race_id)
    assert [m for (m,) in logged] == list(LINE)
    assert "Traceback" not in a.log.read_text()  # one line per fault, said as such
    await host.close()


async def _move_once(conn: Connection, move: str) -> dict[str, Any] | None:
    """The move's move_result, or None while the database is still unavailable."""
    reply = await conn.request({"type": "move", "moves": [move]})
    if reply["type"] == "move_result":
        return reply
    assert reply["code"] == "storage_unavailable", reply
    await asyncio.sleep(0.5)
    return None


async def test_signing_in_on_one_node_replaces_the_connection_on_another(cluster: Callable[..., Node]) -> None:
    a, b = cluster("a"), cluster("b")
    first = await player(a, "Twice")
    second = await Connection.open(b.url)
    assert (await second.request({"type": "hello", "token": first.token}))["type"] == "welcome"
    told = await first.next_event(timeout=TIMEOUT)
    assert told["type"] == "error" and told["code"] == "replaced", told
    assert (await first.next_event(timeout=TIMEOUT))["type"] == "closed"
    assert "4001" in (first.close_reason or "")
    assert (await second.request({"type": "ping"}))["type"] == "pong"  # the newer one carries on
    await second.close()


async def test_new_identities_are_counted_per_address_across_the_nodes(cluster: Callable[..., Node]) -> None:
    a, b = cluster("a", "--new-players-per-hour", "3"), cluster("b", "--new-players-per-hour", "3")
    made = [await player(node, f"New{i}") for i, node in enumerate((a, b, a))]
    fourth = await Connection.open(b.url)  # b has made one: alone it would allow two more
    refused = await fourth.request({"type": "hello", "name": "New3"})
    assert refused["code"] == "rate_limited" and "new players" in refused["message"], refused
    # Returning players are not new identities.
    assert (await fourth.request({"type": "hello", "token": made[0].token}))["type"] == "welcome"
    for conn in (*made, fourth):
        await conn.close()


async def test_a_daily_attempt_resumed_through_another_node_is_the_same_attempt(
    cluster: Callable[..., Node], pg: Database
) -> None:
    a, b = cluster("a"), cluster("b")
    await until(lambda: _challenges(pg), 10)  # the planner has chosen today's deals
    first = await player(a, "Dailyn")
    started_on_a = await first.request({"type": "start_daily", "game": GAME})
    assert started_on_a["type"] == "race_started" and started_on_a["daily"]["ranked"] is True, started_on_a
    code = started_on_a["code"]
    # The same player, later, through b: start_daily brings them back to the attempt on a,
    # clock running, still ranked: not a second, unranked attempt.
    again = await Connection.open(b.url)
    assert (await again.request({"type": "hello", "token": first.token}))["type"] == "welcome"
    resumed = await again.request({"type": "start_daily", "game": GAME})
    assert resumed["type"] == "race_started" and resumed["code"] == code, resumed
    assert resumed["daily"]["ranked"] is True
    assert await scalar(pg, "SELECT count(*) FROM races WHERE kind = 'daily'") == 1
    await again.close()
    await first.close()


async def _challenges(pg: Database) -> bool:
    return bool(await scalar(pg, "SELECT count(*) FROM daily_challenges"))


async def test_one_players_daily_started_on_two_nodes_at_once_is_one_ranked_attempt(
    cluster: Callable[..., Node], pg: Database
) -> None:
    # The player's older connection (on a) asks for today's challenge; before a has
    # claimed the ranked attempt, a newer connection signs in on b and asks too. A lock on
    # daily_attempts, held by the test, holds both claims until both are waiting, so they
    # meet for certain, and one of them wins. The node whose claim lost must send the player
    # to the winner's attempt, not seat them in a second, unranked one beside it.
    a, b = cluster("a"), cluster("b")
    await until(lambda: _challenges(pg), 10)
    first = await player(a, "Twice")
    daily_races = "SELECT count(*) FROM races WHERE kind = 'daily'"
    waiting = "SELECT count(*) FROM pg_locks WHERE relation = 'daily_attempts'::regclass AND NOT granted"
    holder = await asyncpg.connect(databases._dsn(pg.name or ""))
    second = await Connection.open(b.url)
    tasks: list[asyncio.Task[dict[str, Any]]] = []
    try:
        transaction = holder.transaction()
        await transaction.start()
        await holder.execute("LOCK TABLE daily_attempts IN EXCLUSIVE MODE")
        tasks.append(asyncio.create_task(first.request({"type": "start_daily", "game": GAME})))
        await until(lambda: _at_least(pg, waiting, 1), 10)  # a's claim waits
        assert (await second.request({"type": "hello", "token": first.token}))["type"] == "welcome"
        tasks.append(asyncio.create_task(second.request({"type": "start_daily", "game": GAME})))
        await until(lambda: _at_least(pg, waiting, 2), 10)  # and b's
        assert await scalar(pg, daily_races) == 2
        await transaction.rollback()  # the claims go on
        resumed = await asyncio.wait_for(tasks[1], TIMEOUT)
        assert resumed["type"] == "race_started" and resumed["daily"]["ranked"] is True, resumed
        ranked_race = await scalar(pg, "SELECT race_id FROM daily_attempts")
        assert resumed["code"] == await scalar(pg, "SELECT code FROM races WHERE id = ?", ranked_race)
        # The losing node's race is dropped: no second attempt (a's may still be dropping it).
        await until(lambda: _exactly(pg, daily_races, 1), 10)
        assert a.events("daily_attempt_elsewhere") + b.events("daily_attempt_elsewhere") == 1
    finally:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)  # the older connection was replaced
        await holder.close()
        await second.close()
        await first.close()


async def _exactly(pg: Database, sql: str, count: int) -> bool:
    return bool(await scalar(pg, sql) == count)


async def _at_least(pg: Database, sql: str, count: int) -> bool:
    return bool(await scalar(pg, sql) >= count)
