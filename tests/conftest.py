"""Fixtures that start the real server on 127.0.0.1 (port 0) with a temporary SQLite file,
and a small websocket client that records every frame in both directions."""

from __future__ import annotations

import asyncio
import json
import urllib.error
import urllib.request
from collections.abc import AsyncIterator, Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from websockets.asyncio.client import ClientConnection, connect

from solitaire_race.app import App
from solitaire_race.config import Config

TEST_SECRET = "test-secret"
TIMEOUT = 5.0

# Every frame any test client sent or received: (direction, parsed message).
TRAFFIC: list[tuple[str, Any]] = []


def make_config(tmp_path: Path, **overrides: Any) -> Config:
    base = Config(
        host="127.0.0.1",
        port=0,
        db_url=f"sqlite+aiosqlite:///{tmp_path / 'race.sqlite3'}",
        secret=TEST_SECRET,
        countdown_s=0.05,
        daily_solver_nodes=0,  # each day's first candidate: the solver's own tests choose real ones
    )
    return replace(base, **overrides)


@pytest.fixture
async def app(tmp_path: Path) -> AsyncIterator[App]:
    running = await App.start(make_config(tmp_path))
    try:
        yield running
    finally:
        await running.stop()


async def http_get(app: App, path: str) -> tuple[int, str, str]:
    """GET a path of the running server: status, Content-Type and body text."""

    def get() -> tuple[int, str, str]:
        try:
            with urllib.request.urlopen(app.config.public_url + path, timeout=5) as r:
                return r.status, r.headers["Content-Type"], r.read().decode()
        except urllib.error.HTTPError as e:
            return e.code, e.headers["Content-Type"], e.read().decode()

    return await asyncio.to_thread(get)


async def http_json(app: App, path: str) -> tuple[int, Any]:
    status, _, body = await http_get(app, path)
    return status, json.loads(body)


def progress_entries(message: dict[str, Any]) -> list[dict[str, Any]]:
    """The racer progress a message carries: a `standings` frame's entries, or a `progress`."""
    kind = message.get("type")
    return message["racers"] if kind == "standings" else [message] if kind == "progress" else []


class Client:
    """A protocol client for tests: send, then expect messages by type."""

    def __init__(self, ws: ClientConnection) -> None:
        self.ws = ws
        self.inbox: list[dict[str, Any]] = []
        self._next_id = 0
        self.player: dict[str, Any] | None = None
        self.token: str | None = None

    @classmethod
    async def connect(cls, app: App) -> "Client":
        return cls(await connect(app.ws_url, open_timeout=TIMEOUT, compression=None))

    async def send(self, message: dict[str, Any]) -> None:
        TRAFFIC.append(("in", message))
        await self.ws.send(json.dumps(message))

    async def send_raw(self, frame: str | bytes) -> None:
        await self.ws.send(frame)

    async def request(self, message: dict[str, Any]) -> dict[str, Any]:
        """Send with a fresh id and return the reply that echoes it."""
        self._next_id += 1
        rid = self._next_id
        await self.send({**message, "id": rid})
        return await self.expect(lambda m: m.get("id") == rid)

    async def _read(self) -> dict[str, Any]:
        raw = await asyncio.wait_for(self.ws.recv(), TIMEOUT)
        message = json.loads(raw)
        TRAFFIC.append(("out", message))
        return message

    async def expect(self, match: Any, timeout: float = TIMEOUT) -> dict[str, Any]:
        """The first message (buffered or new) of a type, or matching a predicate."""
        test = match if callable(match) else (lambda m: m.get("type") == match)
        for i, message in enumerate(self.inbox):
            if test(message):
                return self.inbox.pop(i)
        async with asyncio.timeout(timeout):
            while True:
                message = await self._read()
                if test(message):
                    return message
                self.inbox.append(message)

    async def expect_progress(self, match: Callable[[dict[str, Any]], bool], timeout: float = TIMEOUT) -> dict[str, Any]:
        """The first racer progress matching ``match``, from a `standings` frame or a `progress`."""
        msg = await self.expect(lambda m: any(match(r) for r in progress_entries(m)), timeout)
        return next(r for r in progress_entries(msg) if match(r))

    async def hello(self, name: str | None = None, token: str | None = None) -> dict[str, Any]:
        msg: dict[str, Any] = {"type": "hello"}
        if name is not None:
            msg["name"] = name
        if token is not None:
            msg["token"] = token
        reply = await self.request(msg)
        if reply["type"] == "welcome":
            self.player = reply["player"]
            self.token = reply.get("token", token)
        return reply

    async def close(self) -> None:
        await self.ws.close()


@pytest.fixture
async def clients(app: App) -> AsyncIterator[Any]:
    """A factory of connected clients, all closed at the end of the test."""
    made: list[Client] = []

    async def make(name: str | None = None) -> Client:
        client = await Client.connect(app)
        made.append(client)
        if name is not None:
            reply = await client.hello(name)
            assert reply["type"] == "welcome", reply
        return client

    yield make
    for client in made:
        await client.close()


def pytest_asyncio_loop_factories(config: pytest.Config, item: pytest.Item) -> dict[str, Callable[[], asyncio.AbstractEventLoop]]:
    """Async tests run on uvloop, the server's event loop by default (``app.loop_factory``);
    the server's own tests run on asyncio's loop as well (``serve --loop asyncio``, and
    where uvloop does not exist)."""
    import uvloop

    factories: dict[str, Callable[[], asyncio.AbstractEventLoop]] = {"uvloop": uvloop.new_event_loop}
    if getattr(getattr(item, "module", None), "__name__", "").endswith("test_server"):
        factories["asyncio"] = asyncio.new_event_loop
    return factories
