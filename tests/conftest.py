"""Fixtures that start the real server on 127.0.0.1 (port 0) with a database of its own (a
temporary SQLite file, or a PostgreSQL database made for the test: ``database``), and a
small websocket client that records every frame in both directions."""

from __future__ import annotations

import asyncio
import base64
import json
import os
import urllib.error
import urllib.request
from collections.abc import AsyncIterator, Callable, Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from websockets.asyncio.client import ClientConnection, connect

from solitaire_race.app import App
from solitaire_race.config import Config

from . import databases
from .databases import Database

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
        new_players_per_hour=0,  # tests make many players from 127.0.0.1; test_hostile.py tests the limit
        # Tests win in milliseconds, as programs do: test_fair_play.py holds them, the rest
        # test what a plausible result does.
        fair_play_holds=False,
    )
    return replace(base, **overrides)


# Runs a module's (or a test's) tests on both databases: ``pytestmark = ON_BOTH_DATABASES``.
ON_BOTH_DATABASES = pytest.mark.parametrize("database", databases.KINDS, indirect=True)


@pytest.fixture
def database(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Database]:
    """The test's database: SQLite, unless the test is parametrized with ``database``
    (``ON_BOTH_DATABASES``, or ``indirect=True`` with "sqlite" / "postgresql")."""
    with databases.database(getattr(request, "param", "sqlite"), tmp_path) as db:
        yield db


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    databases.finish()  # the PostgreSQL databases' drops, and their template's


@pytest.fixture
async def app(tmp_path: Path, database: Database) -> AsyncIterator[App]:
    running = await App.start(make_config(tmp_path, db_url=database.url))
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
    async def connect(cls, app: App) -> Client:
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

    async def expect_progress(
        self, match: Callable[[dict[str, Any]], bool], timeout: float = TIMEOUT
    ) -> dict[str, Any]:
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


class RawWebSocket:
    """A websocket client that writes frames exactly as told, many at once if asked: for
    what the server does with fragments and floods, which a client library tidies up.
    Frames are masked with a zero key (RFC 6455 allows it: the payload goes as it is)."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader, self.writer = reader, writer

    @classmethod
    async def connect(cls, app: App) -> RawWebSocket:
        reader, writer = await asyncio.open_connection("127.0.0.1", app.config.port)
        key = base64.b64encode(os.urandom(16)).decode()
        writer.write(
            f"GET /ws HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
            f"Sec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n\r\n".encode()
        )
        head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), TIMEOUT)
        assert head.startswith(b"HTTP/1.1 101 "), head
        return cls(reader, writer)

    @staticmethod
    def frame(opcode: int, payload: bytes, fin: bool = True) -> bytes:
        n = len(payload)
        size = bytes([0x80 | n]) if n < 126 else bytes([0x80 | 126]) + n.to_bytes(2, "big")
        return bytes([(0x80 if fin else 0) | opcode]) + size + b"\0\0\0\0" + payload

    def send_message(self, pieces: list[bytes]) -> None:
        """One text message in ``len(pieces)`` frames."""
        last = len(pieces) - 1
        self.writer.write(b"".join(self.frame(0x0 if i else 0x1, piece, i == last) for i, piece in enumerate(pieces)))

    def send_texts(self, texts: list[bytes]) -> None:
        """Many text messages, one frame each, in one write."""
        self.writer.write(b"".join(self.frame(0x1, text) for text in texts))

    async def _frame(self) -> tuple[int, bytes]:
        head = await self.reader.readexactly(2)
        n = head[1] & 0x7F
        if n >= 126:
            n = int.from_bytes(await self.reader.readexactly(2 if n == 126 else 8), "big")
        return head[0] & 0x0F, await self.reader.readexactly(n)

    async def read_text(self) -> str:
        opcode, payload = await asyncio.wait_for(self._frame(), TIMEOUT)
        assert opcode == 0x1, (opcode, payload)
        return payload.decode()

    async def read_texts(self, count: int) -> list[str]:
        return [await self.read_text() for _ in range(count)]

    async def read_until_close(self) -> tuple[list[dict[str, Any]], int | None]:
        """Every message up to the server's close frame, and its close code."""
        messages: list[dict[str, Any]] = []
        async with asyncio.timeout(TIMEOUT):
            while True:
                opcode, payload = await self._frame()
                if opcode == 0x8:
                    return messages, int.from_bytes(payload[:2], "big") if len(payload) >= 2 else None
                if opcode == 0x1:
                    messages.append(json.loads(payload))

    async def read_close(self) -> int | None:
        return (await self.read_until_close())[1]

    def close(self) -> None:
        self.writer.close()


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


def pytest_asyncio_loop_factories(
    config: pytest.Config, item: pytest.Item
) -> dict[str, Callable[[], asyncio.AbstractEventLoop]]:
    """Async tests run on uvloop, the server's event loop by default (``app.loop_factory``);
    the server's own tests run on asyncio's loop as well (``serve --loop asyncio``, and
    where uvloop does not exist)."""
    import uvloop

    factories: dict[str, Callable[[], asyncio.AbstractEventLoop]] = {"uvloop": uvloop.new_event_loop}
    if getattr(getattr(item, "module", None), "__name__", "").endswith(("test_server", "test_server_frames")):
        factories["asyncio"] = asyncio.new_event_loop
    return factories
