"""The connection layer (``ws_connection``, ``transport.Server``) on the real server:
keepalive pings, the opening and closing handshakes' timeouts, frames sent before the
handshake's answer, and stopping. Floods, fragments and HTTP methods: test_limits.py and
test_hostile.py."""

from __future__ import annotations

import asyncio
import base64
import json
import os
import time
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from solitaire_race.app import App

from .conftest import Client, RawWebSocket, make_config

UPGRADE = (
    "GET /ws HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
    "Sec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n\r\n"
)


@pytest.fixture
async def quick(tmp_path: Path) -> AsyncIterator[App]:
    """A server whose keepalive and handshakes take fractions of a second."""
    app = await App.start(make_config(tmp_path, keepalive_s=0.2, handshake_timeout_s=0.5))
    try:
        yield app
    finally:
        await app.stop()


async def frames_until_close(raw: RawWebSocket) -> tuple[list[int], int | None]:
    """The opcodes of the frames the server sends, up to its close frame, and its code."""
    opcodes: list[int] = []
    async with asyncio.timeout(5):
        while True:
            opcode, payload = await raw._frame()
            opcodes.append(opcode)
            if opcode == 0x8:
                return opcodes, int.from_bytes(payload[:2], "big")


async def test_a_client_that_does_not_answer_pings_is_failed_and_one_that_does_stays(quick: App) -> None:
    silent = await RawWebSocket.connect(quick)  # never reads its frames, so never answers a ping
    alive = await Client.connect(quick)  # websockets answers pings by itself
    try:
        started = time.monotonic()
        opcodes, code = await frames_until_close(silent)
        assert opcodes[0] == 0x9 and code == 1011  # a ping, then "keepalive ping timeout"
        assert time.monotonic() - started >= 0.4  # silent for keepalive_s, then unanswered as long
        assert (await alive.request({"type": "ping"}))["type"] == "pong"  # still open
    finally:
        silent.close()
        await alive.close()


async def test_a_connection_that_does_not_finish_its_request_is_closed(quick: App) -> None:
    for sent in (b"", b"GET / HTTP/1.1\r\nHost: 12"):
        reader, writer = await asyncio.open_connection("127.0.0.1", quick.config.port)
        try:
            writer.write(sent)
            started = time.monotonic()
            assert await asyncio.wait_for(reader.read(), 5) == b""  # closed without an answer
            assert time.monotonic() - started >= 0.3
        finally:
            writer.close()
    assert not quick.server.connections


async def test_a_client_that_does_not_answer_the_close_frame_is_cut_off(tmp_path: Path) -> None:
    app = await App.start(make_config(tmp_path, idle_timeout_s=0.3, handshake_timeout_s=0.5))
    try:
        raw = await RawWebSocket.connect(app)
        assert await raw.read_close() == 4002  # idle; the client never sends its close frame
        started = time.monotonic()
        assert await asyncio.wait_for(raw.reader.read(), 5) == b""  # the server gave up waiting
        assert time.monotonic() - started >= 0.2
        raw.close()
        for _ in range(100):  # bounded: the server sees the connection go at once
            if not app.server.connections:
                break
            await asyncio.sleep(0.01)
        assert not app.server.connections and not app.server.sessions
    finally:
        await app.stop()


async def test_frames_sent_with_the_request_are_served_after_the_handshake(app: App) -> None:
    reader, writer = await asyncio.open_connection("127.0.0.1", app.config.port)
    try:
        key = base64.b64encode(os.urandom(16)).decode()
        control_ping = RawWebSocket.frame(0x9, b"hi")  # a websocket ping: its pong comes after the 101
        ping = RawWebSocket.frame(0x1, b'{"type": "ping", "id": "early"}')
        writer.write(UPGRADE.format(key=key).encode() + control_ping + ping)  # one write: no wait for the 101
        head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), 5)
        assert head.startswith(b"HTTP/1.1 101 ") and head.count(b"\r\nServer: solitaire-race\r\n") == 1
        raw = RawWebSocket(reader, writer)
        assert await asyncio.wait_for(raw._frame(), 5) == (0xA, b"hi")
        assert json.loads(await raw.read_text()) == {"type": "pong", "id": "early"}
    finally:
        writer.close()


async def test_stopping_closes_every_connection(tmp_path: Path) -> None:
    """Signed-in players are told to come back (1012), others that the server goes (1001);
    a client that answers the close frame is let go then, not at the handshake timeout."""
    app = await App.start(make_config(tmp_path, handshake_timeout_s=60.0))
    player, stranger = await Client.connect(app), await RawWebSocket.connect(app)
    assert (await player.hello("ann"))["type"] == "welcome"

    async def answer_the_close() -> int | None:
        code = await stranger.read_close()
        stranger.writer.write(RawWebSocket.frame(0x8, (1000).to_bytes(2, "big")))
        stranger.close()  # as a client does once the server has ended its stream
        return code

    waiting = asyncio.create_task(answer_the_close())
    await asyncio.wait_for(app.stop(), 30)  # bounded well below the 60 s timeout
    assert await waiting == 1001
    await player.ws.wait_closed()
    assert player.ws.close_code == 1012
    assert not app.server.connections and not app.server.sessions


async def test_an_http_exchange_ends_when_the_client_closes(tmp_path: Path) -> None:
    """Not at the handshake timeout: the server reads on after its answer, to see the end."""
    app = await App.start(make_config(tmp_path, handshake_timeout_s=60.0))
    try:
        reader, writer = await asyncio.open_connection("127.0.0.1", app.config.port)
        writer.write(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        answer = await asyncio.wait_for(reader.read(), 5)  # the server ends its side after the answer
        assert answer.startswith(b"HTTP/1.1 200 ") and answer.endswith(b"ok\n")
        assert answer.count(b"\r\nServer: solitaire-race\r\n") == 1
        exchanges = list(app.server.connections)
        writer.close()
        # Bounded well below the 60 s timeout: the connection goes with the client's end.
        await asyncio.wait_for(asyncio.gather(*(c.wait_closed() for c in exchanges)), 30)
        assert not app.server.connections
    finally:
        await app.stop()


async def test_behind_a_proxy_the_client_address_is_the_last_one_its_header_gives(tmp_path: Path) -> None:
    app = await App.start(make_config(tmp_path, client_address_header="X-Real-IP"))
    try:
        for headers, expected in (
            ("X-Real-IP: 203.0.113.9\r\n", "203.0.113.9"),
            ("X-Real-IP: 198.51.100.1\r\nX-Real-IP: 203.0.113.7\r\n", "203.0.113.7"),  # twice: the proxy's
            ("", "127.0.0.1"),  # none: the connection's own
        ):
            reader, writer = await asyncio.open_connection("127.0.0.1", app.config.port)
            try:
                key = base64.b64encode(os.urandom(16)).decode()
                request = UPGRADE.format(key=key).removesuffix("\r\n") + headers + "\r\n"
                writer.write(request.encode() + RawWebSocket.frame(0x1, b'{"type": "ping", "id": 1}'))
                head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), 5)
                assert head.startswith(b"HTTP/1.1 101 "), head
                assert json.loads(await RawWebSocket(reader, writer).read_text()) == {"type": "pong", "id": 1}
                addresses = [s.address for s in app.server.sessions.values()]
                assert addresses == [expected], addresses
            finally:
                writer.close()
                await writer.wait_closed()
            for _ in range(100):  # bounded: the server sees the close
                if not app.server.sessions:
                    break
                await asyncio.sleep(0.01)
    finally:
        await app.stop()
