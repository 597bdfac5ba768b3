"""A cluster for real: nodes are ``solitaire-race serve --redis`` processes on loopback,
sharing a real PostgreSQL database (made for the test) and the machine's real Redis (keys
under the database's name, removed after the test). Nodes are killed with SIGKILL and
paused with SIGSTOP as a dying or stalled machine would be.

What must hold: a race runs on one node and a client that reaches another is brought to
it (``race_elsewhere``); when its node dies another adopts it from the move log, and every
acknowledged move is applied exactly once; a node paused past its lease writes and
acknowledges nothing more once it runs again; the daily planner runs on one node at a time.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
import signal
import socket
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path
from typing import Any

import asyncpg
import pytest
from redis.asyncio import Redis

from solitaire_race.bots.runner import run_bot
from solitaire_race.client.connection import Connection, Disconnected, ws_url
from solitaire_race.cluster.leases import text

from . import databases
from .conftest import TEST_SECRET, TIMEOUT, Client
from .databases import Database
from .support import winnable_deal

REDIS_URL = "redis://127.0.0.1:6379/0"
GAME = "perseverance"
DEAL, LINE = winnable_deal(GAME, TEST_SECRET.encode())
LEASE_TTL_S = 2.0  # short, so that failover takes a few seconds in the tests
FAILOVER_S = 20.0  # the bound the tests wait for a takeover (it takes ~LEASE_TTL_S + a look)


class Node:
    """``solitaire-race serve`` as one node, in its own process; its output goes to a file
    (a pipe nobody reads would fill and stop it)."""

    def __init__(self, db_url: str, node_id: str, log_dir: Path, *options: str) -> None:
        self.node_id = node_id
        self.log = log_dir / f"{node_id}.log"
        self.command = [
            sys.executable, "-m", "solitaire_race.cli", "serve", "--port", "0", "--secret", TEST_SECRET,
            "--db", db_url, "--daily-solver-nodes", "0", "--redis", REDIS_URL, "--node-id", node_id,
            "--lease-ttl", str(LEASE_TTL_S), "--no-fair-play-holds", *options,
        ]
        self.start()

    def start(self) -> None:
        """(Again, after a kill: its output goes on in the same file.)"""
        before = self.log.read_text() if self.log.exists() else ""
        with self.log.open("a") as out:
            self.proc = subprocess.Popen(
                self.command, stdout=out, stderr=subprocess.STDOUT, env={**os.environ, "PYTHONUNBUFFERED": "1"}
            )
        self.url = ""
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and self.proc.poll() is None:
            if match := re.search(r"websocket (ws://[^\s,]+)", self.log.read_text()[len(before):]):
                self.url = match.group(1)
                return
            time.sleep(0.05)
        raise AssertionError(f"node {self.node_id} did not start:\n{self.log.read_text()[-3000:]}")

    def signal(self, sig: signal.Signals) -> None:
        self.proc.send_signal(sig)
        if sig == signal.SIGKILL:
            self.proc.wait(timeout=10)

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGCONT)
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=10)

    def events(self, name: str) -> int:
        return self.log.read_text().count(f'"event": "{name}"')


@pytest.fixture
def pg(tmp_path: Path) -> Iterator[Database]:
    with databases.database("postgresql", tmp_path) as made:
        yield made


@pytest.fixture
async def cluster(pg: Database, tmp_path: Path) -> AsyncIterator[Callable[..., Node]]:
    """Starts nodes (``cluster(node_id, *more_serve_options)``) on the test's database;
    stops them all, and empties the test's Redis keys, at the end."""
    nodes: list[Node] = []

    def start(node_id: str, *options: str) -> Node:
        nodes.append(Node(pg.url, node_id, tmp_path, *options))
        return nodes[-1]

    yield start
    for node in nodes:
        node.stop()
    redis = Redis.from_url(REDIS_URL)
    try:
        keys = [key async for key in redis.scan_iter(match=f"solitaire:*/{pg.name}:*")]
        if keys:
            await redis.delete(*keys)
    finally:
        await redis.aclose()


async def lease_holder(pg: Database, name: str) -> str | None:
    redis = Redis.from_url(REDIS_URL)
    try:
        keys = [key async for key in redis.scan_iter(match=f"solitaire:*/{pg.name}:lease:{name}")]
        value = await redis.get(keys[0]) if keys else None
        return None if value is None else text(value).split("/", 1)[0]
    finally:
        await redis.aclose()


async def until(check: Callable[[], Any], seconds: float = FAILOVER_S) -> Any:
    """Poll ``check`` (sync or async) until it returns something true, for at most ``seconds``."""
    deadline = time.monotonic() + seconds
    while True:
        value = check()
        if asyncio.iscoroutine(value):
            value = await value
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"not within {seconds} s")
        await asyncio.sleep(0.1)


async def scalar(pg: Database, sql: str, *args: Any) -> Any:
    rows = await pg.query(sql, *args)
    return rows[0][0] if rows else None


async def _finished(pg: Database, code: str) -> bool:
    return bool(await scalar(pg, "SELECT status FROM races WHERE code = ?", code) == "finished")


async def id_of(pg: Database, code: str) -> int:
    return int(await scalar(pg, "SELECT id FROM races WHERE code = ?", code))


async def results_of(pg: Database, code: str) -> list[tuple[Any, ...]]:
    """The race's stored (outcome, moves), sorted."""
    return sorted(await pg.query(
        "SELECT outcome, moves FROM results r JOIN races ON races.id = r.race_id WHERE races.code = ?", code
    ))


async def race_of_two(host: Connection, guest: Connection, game: str = GAME, deal: int = DEAL) -> str:
    """A race made by ``host``, joined by ``guest``, started, and both told: its code."""
    code = str((await host.request({"type": "create_race", "game": game, "deal": deal}))["race"]["code"])
    assert (await guest.request({"type": "join_race", "code": code}))["type"] == "room"
    assert (await host.request({"type": "start_race"}))["type"] in ("room", "countdown")
    await started(host), await started(guest)
    return code


async def player(node: Node, name: str) -> Connection:
    conn = await Connection.open(node.url)
    assert (await conn.request({"type": "hello", "name": name}))["type"] == "welcome"
    return conn


async def started(conn: Connection) -> dict[str, Any]:
    """The next race_started event on ``conn``."""
    while True:
        event = await conn.next_event(timeout=TIMEOUT)
        if event["type"] == "race_started":
            return event


async def closed(conn: Connection) -> None:
    """Read ``conn``'s events up to its ``closed`` (its node died)."""
    while (await conn.next_event(timeout=TIMEOUT))["type"] != "closed":
        pass


async def play(conn: Connection, moves: tuple[str, ...] | list[str]) -> int:
    """Play ``moves`` one at a time; return how many were acknowledged."""
    for i, move in enumerate(moves):
        reply = await conn.request({"type": "move", "moves": [move]})
        assert reply["type"] == "move_result" and reply["applied"] == [move], (i, reply)
    return len(moves)


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
    await until(lambda: _finished(pg, code), 10)
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
    await until(lambda: _held_by(pg, race_id, "b"))
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
    await until(lambda: _finished(pg, code), 10)
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
    await until(lambda: _entries(pg, code, 3), 15)
    assert (await host.request({"type": "start_race"}))["type"] in ("room", "countdown")
    await started(host)
    race_id = await id_of(pg, code)
    await until(lambda: _moves_logged(pg, race_id, 6), 15)  # the bots are playing
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


async def _entries(pg: Database, code: str, count: int) -> bool:
    found = await scalar(pg, "SELECT count(*) FROM race_entries e JOIN races r ON r.id = e.race_id WHERE r.code = ?",
                         code)
    return bool(found == count)


async def _moves_logged(pg: Database, race_id: int, count: int) -> bool:
    found = await scalar(pg, "SELECT count(*) FROM move_log WHERE race_id = ? AND kind = 'move'", race_id)
    return bool(found >= count)


async def test_a_node_paused_past_its_lease_acknowledges_nothing_once_it_runs_again(
    cluster: Callable[..., Node], pg: Database
) -> None:
    a, b = cluster("a"), cluster("b")
    host, guest = await player(a, "Hostess"), await player(a, "Guest")
    code = await race_of_two(host, guest)
    await play(host, LINE[:4])
    await play(guest, LINE[:4])
    race_id = await id_of(pg, code)
    a.signal(signal.SIGSTOP)
    try:
        await until(lambda: _held_by(pg, race_id, "b"))  # adopted while a sleeps
        # The guest, through b, plays on there (its connection to a is replaced).
        again = await Connection.open(b.url)
        assert (await again.request({"type": "hello", "token": guest.token}))["type"] == "welcome"
        assert (await again.request({"type": "join_race", "code": code}))["type"] == "room"
        assert (await started(again))["moves"] == 4
        await play(again, LINE[4:6])
    finally:
        a.signal(signal.SIGCONT)
    # a wakes up believing it runs the race, where the host's next move is LINE[4]: it is
    # legal there, but writing it fails (a's epoch is old), so it is not acknowledged, the
    # host is told race_moved, and nothing of it reaches the move log.
    # (Or a's lease renewal, due at once on waking, found the lease lost first: the host
    # is told race_moved, and the move finds no race here.)
    # Either way the host's connection to a is then closed (4003): a sends it on its way.
    try:
        reply: dict[str, Any] | None = await host.request({"type": "move", "moves": [LINE[4]]})
    except Disconnected:
        reply = None  # closed before the answer came
    assert reply is None or (reply["type"] == "error" and reply["code"] in ("race_moved", "not_in_race")), reply
    told = [await host.next_event(timeout=TIMEOUT) for _ in range(host.events.qsize() or 1)]
    while told[-1]["type"] != "closed":
        told.append(await host.next_event(timeout=TIMEOUT))
    assert (reply or {}).get("code") == "race_moved" or any(m.get("code") == "race_moved" for m in told), told
    assert "4003" in told[-1]["reason"], told
    await until(lambda: a.events("race_fenced") >= 1, 10)
    # Sent on its way, the host comes back through a (as through the site's address): a
    # sends it to b (race_elsewhere), where the race has its four moves and goes on.
    await host.move_to(a.url)
    assert (await host.request({"type": "join_race", "code": code}))["type"] == "room"
    assert host.at == again.at  # the client followed the redirect to b
    assert (await started(host))["moves"] == 4
    await play(host, LINE[4:5])
    logged = await pg.query("SELECT player_id, text FROM move_log WHERE race_id = ? AND kind = 'move' "
                            "ORDER BY player_id, seq", race_id)
    by_player: dict[int, list[str]] = {}
    for player_id, move in logged:
        by_player.setdefault(player_id, []).append(move)
    assert sorted(by_player.values(), key=len) == [list(LINE[:5]), list(LINE[:6])]
    await again.close()
    await host.close()
    await guest.close()


class RedisRelay:
    """A TCP relay to the machine's Redis that the test can cut: the node that reaches
    Redis through it is cut off from it, while the others are not."""

    def __init__(self) -> None:
        self.cut = False
        self.sockets: list[asyncio.StreamWriter] = []

    async def start(self) -> str:
        self.server = await asyncio.start_server(self._relay, "127.0.0.1", 0)
        port = self.server.sockets[0].getsockname()[1]
        return f"redis://127.0.0.1:{port}/0"

    async def _relay(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        if self.cut:
            writer.transport.abort()
            return
        up_reader, up_writer = await asyncio.open_connection("127.0.0.1", 6379)
        self.sockets += [writer, up_writer]

        async def pipe(source: asyncio.StreamReader, sink: asyncio.StreamWriter) -> None:
            with contextlib.suppress(OSError):
                while data := await source.read(65536):
                    sink.write(data)
                    await sink.drain()
            sink.transport.abort()

        await asyncio.gather(pipe(reader, up_writer), pipe(up_reader, writer))

    def cut_off(self) -> None:
        self.cut = True
        for writer in self.sockets:
            writer.transport.abort()

    async def close(self) -> None:
        self.cut_off()
        self.server.close()
        await self.server.wait_closed()


async def test_a_node_cut_off_from_redis_through_its_lobbys_countdown_does_not_start_the_lobby_adopted(
    cluster: Callable[..., Node], pg: Database
) -> None:
    """A node cut off from Redis keeps its rooms (only the database can tell it they moved
    on): its lobby's countdown runs out after another node has adopted the lobby. Its start
    is refused (its epoch is old), so the lobby stays the adopter's, with its players, and
    is raced there."""
    relay = RedisRelay()
    countdown_s = 10.0  # the adoption below takes about a lease (2 s): it comes first
    # Started off the loop: the relay runs on it, and the node reaches Redis as it starts.
    a = await asyncio.to_thread(cluster, "a", "--redis", await relay.start(), "--countdown", str(countdown_s))
    b = cluster("b", "--countdown", "1")
    try:
        host, guest = await player(a, "Hostess"), await player(a, "Guest")
        code = (await host.request({"type": "create_race", "game": GAME, "deal": DEAL}))["race"]["code"]
        assert (await guest.request({"type": "join_race", "code": code}))["type"] == "room"
        race_id = await id_of(pg, code)
        await until(lambda: _entries(pg, code, 2))
        assert (await host.request({"type": "start_race"}))["type"] in ("room", "countdown")
        counting = time.monotonic()
        relay.cut_off()
        # a's lease runs out (it cannot renew it): b adopts the lobby by itself; the guest
        # joins it there.
        await until(lambda: _held_by(pg, race_id, "b"))
        assert time.monotonic() - counting < countdown_s - 1, "adopted too late for this test"
        again = await Connection.open(b.url)
        assert (await again.request({"type": "hello", "token": guest.token}))["type"] == "welcome"
        room = await again.request({"type": "join_race", "code": code})
        assert room["type"] == "room" and again.at == ws_url(b.url), room
        assert {p["name"] for p in room["race"]["players"]} == {"Hostess", "Guest"}
        # a's countdown runs out: its start is fenced, and it sends its racers on their way.
        await until(lambda: a.events("race_fenced") >= 1, countdown_s + 10)
        assert await scalar(pg, "SELECT status FROM races WHERE id = ?", race_id) == "open"
        assert await _entries(pg, code, 2)
        await closed(host)
        await host.move_to(b.url)
        assert (await host.request({"type": "join_race", "code": code}))["type"] == "room"
        assert (await host.request({"type": "start_race"}))["type"] in ("room", "countdown")
        await started(host), await started(again)
        await play(host, LINE[:1])
        assert await scalar(pg, "SELECT status FROM races WHERE id = ?", race_id) == "running"
        assert b.events("race_adopted") == 1
        await host.close()
        await again.close()
        await guest.close()
    finally:
        await relay.close()


async def _held_by(pg: Database, race_id: int, node: str) -> bool:
    return await lease_holder(pg, f"race:{race_id}") == node


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
    await until(lambda: _finished(pg, code), 10)
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
    await until(lambda: _finished(pg, code), 10)
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


async def test_a_lobby_outlives_its_node_with_its_players(cluster: Callable[..., Node], pg: Database) -> None:
    """Killed during the lobby's countdown: the lobby comes back on another node with its
    players, as after a restart (recovery.py), and its creator starts it anew."""
    a, b = cluster("a", "--countdown", "30"), cluster("b")
    host, guest = await player(a, "Hostess"), await player(a, "Guest")
    code = (await host.request({"type": "create_race", "game": GAME, "deal": DEAL}))["race"]["code"]
    assert (await guest.request({"type": "join_race", "code": code}))["type"] == "room"
    await until(lambda: _entries(pg, code, 2))
    assert (await host.request({"type": "start_race"}))["type"] in ("room", "countdown")
    while (await guest.next_event(timeout=TIMEOUT))["type"] != "countdown":
        pass
    a.signal(signal.SIGKILL)
    for conn in (host, guest):
        await closed(conn)
        await conn.move_to(b.url)
    # The first to ask finds it orphaned (once the lease runs out) and b adopts it.
    room = await until(lambda: _joined(host, code))
    assert {p["name"] for p in room["race"]["players"]} == {"Hostess", "Guest"}
    assert room["race"]["status"] == "lobby"
    assert (await guest.request({"type": "join_race", "code": code}))["type"] == "room"
    assert (await host.request({"type": "start_race"}))["type"] in ("room", "countdown")
    await started(host), await started(guest)
    await play(guest, LINE[:2])
    assert b.events("race_adopted") == 1
    await host.close()
    await guest.close()


async def _joined(conn: Connection, code: str) -> dict[str, Any] | None:
    reply = await conn.request({"type": "join_race", "code": code})
    return reply if reply["type"] == "room" else None


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
