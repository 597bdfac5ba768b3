"""What the cluster tests share: nodes as real ``solitaire-race serve --redis`` processes on
loopback, sharing a real PostgreSQL database (made for the test) and the machine's real
Redis (keys under the database's name, removed after the test); the fixtures that start
them, and the helpers that read what they did (tests/test_cluster.py,
test_cluster_fencing.py, test_cluster_proxy.py)."""

from __future__ import annotations

import asyncio
import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from redis.asyncio import Redis

from solitaire_race.client.connection import Connection
from solitaire_race.cluster.leases import text

from . import databases
from .conftest import TEST_SECRET, TIMEOUT
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
    await forget_keys(pg)


async def forget_keys(pg: Database) -> None:
    """Remove the Redis keys of the test's cluster (named after its database)."""
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


async def finished(pg: Database, code: str) -> bool:
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


async def held_by(pg: Database, race_id: int, node: str) -> bool:
    return await lease_holder(pg, f"race:{race_id}") == node


async def entries_are(pg: Database, code: str, count: int) -> bool:
    found = await scalar(pg, "SELECT count(*) FROM race_entries e JOIN races r ON r.id = e.race_id WHERE r.code = ?",
                         code)
    return bool(found == count)


async def moves_logged(pg: Database, race_id: int, count: int) -> bool:
    found = await scalar(pg, "SELECT count(*) FROM move_log WHERE race_id = ? AND kind = 'move'", race_id)
    return bool(found >= count)


async def joined(conn: Connection, code: str) -> dict[str, Any] | None:
    reply = await conn.request({"type": "join_race", "code": code})
    return reply if reply["type"] == "room" else None
