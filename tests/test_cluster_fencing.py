"""A node that lost its races without knowing it (paused by SIGSTOP past its lease, cut off
from Redis) writes and acknowledges nothing of them once it acts again: the database
refuses its writes (their epoch is old), and its players are sent to the new owner. And a
node killed during a lobby's countdown: the lobby comes back elsewhere with its players.
Real nodes, PostgreSQL and Redis (cluster_support.py)."""

from __future__ import annotations

import asyncio
import contextlib
import signal
from collections.abc import Callable
from pathlib import Path
from typing import Any

from solitaire_race.app import App
from solitaire_race.client.connection import Connection, Disconnected, ws_url

from .cluster_support import (
    DEAL,
    GAME,
    LINE,
    REDIS_URL,
    Node,
    closed,
    cluster,  # noqa: F401  # the fixture
    entries_are,
    forget_keys,
    held_by,
    id_of,
    joined,
    pg,  # noqa: F401  # the fixture
    play,
    player,
    race_of_two,
    scalar,
    started,
    until,
)
from .conftest import TIMEOUT, Client, make_config
from .databases import Database


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
        await until(lambda: held_by(pg, race_id, "b"))  # adopted while a sleeps
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
        self.cut = asyncio.Event()
        self.sockets: list[asyncio.StreamWriter] = []

    async def start(self) -> str:
        self.server = await asyncio.start_server(self._relay, "127.0.0.1", 0)
        port = self.server.sockets[0].getsockname()[1]
        return f"redis://127.0.0.1:{port}/0"

    async def _relay(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        if self.cut.is_set():
            writer.transport.abort()
            return
        up_reader, up_writer = await asyncio.open_connection("127.0.0.1", 6379)
        self.sockets += [writer, up_writer]
        if self.cut.is_set():  # cut while this one was connecting upstream
            writer.transport.abort()
            up_writer.transport.abort()
            return

        async def pipe(source: asyncio.StreamReader, sink: asyncio.StreamWriter) -> None:
            with contextlib.suppress(OSError):
                while data := await source.read(65536):
                    sink.write(data)
                    await sink.drain()
            sink.transport.abort()

        await asyncio.gather(pipe(reader, up_writer), pipe(up_reader, writer))

    def cut_off(self) -> None:
        self.cut.set()
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
    # Started off the loop: the relay runs on it, and the node reaches Redis as it starts.
    a = await asyncio.to_thread(cluster, "a", "--redis", await relay.start(), "--countdown", "1")
    b = cluster("b", "--countdown", "1")
    try:
        host, guest = await player(a, "Hostess"), await player(a, "Guest")
        code = (await host.request({"type": "create_race", "game": GAME, "deal": DEAL}))["race"]["code"]
        assert (await guest.request({"type": "join_race", "code": code}))["type"] == "room"
        race_id = await id_of(pg, code)
        await until(lambda: entries_are(pg, code, 2))
        relay.cut_off()
        # a's lease runs out (it cannot renew it): b adopts the lobby by itself. a, which
        # cannot hear of it, still holds the lobby: its host starts the countdown there.
        await until(lambda: held_by(pg, race_id, "b"))
        assert (await host.request({"type": "start_race"}))["type"] in ("room", "countdown")
        again = await Connection.open(b.url)
        assert (await again.request({"type": "hello", "token": guest.token}))["type"] == "welcome"
        room = await again.request({"type": "join_race", "code": code})
        assert room["type"] == "room" and again.at == ws_url(b.url), room
        assert {p["name"] for p in room["race"]["players"]} == {"Hostess", "Guest"}
        # a's countdown runs out: its start is fenced, and it sends its racers on their way.
        await until(lambda: a.events("race_fenced") >= 1, 20)
        assert await scalar(pg, "SELECT status FROM races WHERE id = ?", race_id) == "open"
        assert await entries_are(pg, code, 2)
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


async def test_a_lobby_outlives_its_node_with_its_players(cluster: Callable[..., Node], pg: Database) -> None:
    """Killed during the lobby's countdown: the lobby comes back on another node with its
    players, as after a restart (recovery.py), and its creator starts it anew."""
    a, b = cluster("a", "--countdown", "30"), cluster("b")
    host, guest = await player(a, "Hostess"), await player(a, "Guest")
    code = (await host.request({"type": "create_race", "game": GAME, "deal": DEAL}))["race"]["code"]
    assert (await guest.request({"type": "join_race", "code": code}))["type"] == "room"
    await until(lambda: entries_are(pg, code, 2))
    assert (await host.request({"type": "start_race"}))["type"] in ("room", "countdown")
    while (await guest.next_event(timeout=TIMEOUT))["type"] != "countdown":
        pass
    a.signal(signal.SIGKILL)
    for conn in (host, guest):
        await closed(conn)
        await conn.move_to(b.url)
    # The first to ask finds it orphaned (once the lease runs out) and b adopts it.
    room = await until(lambda: joined(host, code))
    assert {p["name"] for p in room["race"]["players"]} == {"Hostess", "Guest"}
    assert room["race"]["status"] == "lobby"
    assert (await guest.request({"type": "join_race", "code": code}))["type"] == "room"
    assert (await host.request({"type": "start_race"}))["type"] in ("room", "countdown")
    await started(host), await started(guest)
    await play(guest, LINE[:2])
    assert b.events("race_adopted") == 1
    await host.close()
    await guest.close()


async def test_a_lobby_left_on_a_node_that_lost_it_stays_the_adopters(pg: Database, tmp_path: Path) -> None:
    """Everyone leaves a lobby on a node that lost it: its deletion is refused (the epoch is
    old), so the lobby another node adopted stays. A node in this process, for the moment
    of the adoption: another node's claim, made in the database."""
    app = await App.start(make_config(tmp_path, db_url=pg.url, redis_url=REDIS_URL, node_id="solo"))
    try:
        ann = await Client.connect(app)
        await ann.hello("ann")
        code = (await ann.request({"type": "create_race", "game": GAME, "deal": DEAL}))["race"]["code"]
        race_id = await id_of(pg, code)
        await app.store.claim_race(race_id)  # another node adopts the lobby meanwhile
        assert (await ann.request({"type": "leave_race"}))["type"] != "error"
        await until(lambda: code not in app.races.rooms, 10)  # released here...
        assert await scalar(pg, "SELECT status FROM races WHERE id = ?", race_id) == "open"  # ...kept there
        await ann.close()
    finally:
        await app.stop()
        await forget_keys(pg)
