"""Unusual and hostile frames through the real server: bad input gets a clear error and
changes nothing; a huge or broken message closes only its own connection; frames sent
without waiting are served one at a time, in order; a flooding session is paused, not
dropped. Real websockets on 127.0.0.1, each test on a SQLite file and on a PostgreSQL
database (``ON_BOTH_DATABASES``)."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from websockets.exceptions import ConnectionClosed

from solitaire_race.app import App
from solitaire_race.gateway import INBOX_HIGH

from .conftest import ON_BOTH_DATABASES, Client
from .databases import Database
from .test_server import GAME, LINE, make_race, play, start

pytestmark = ON_BOTH_DATABASES


@pytest.mark.parametrize(
    "frame, code",
    [
        ("{not json", "invalid_json"),
        ("[1, 2]", "bad_message"),
        ('{"type": "teleport"}', "unknown_type"),
        ('{"type": "move", "moves": "1>f"}', "bad_message"),
        ('{"type": "create_race", "game": "cruel", "deal": -1}', "bad_message"),
        ('{"type": "hello", "name": "x", "admin": true}', "bad_message"),
        ('{"type": "create_race", "game": "chess"}', "unknown_game"),
        ('{"type": "move", "moves": ["1>f"]}', "not_in_race"),
        ('{"type": "join_race", "code": "ZZZZZZ"}', "no_such_race"),
        (b"\x00\x01binary", "bad_message"),
        ('{"type": "ping", "pad": "' + "x" * 9000 + '"}', "too_large"),
    ],
)
async def test_bad_input_gets_a_clear_error(app: App, clients: Any, frame: str | bytes, code: str) -> None:
    client = await clients("carol")
    await client.send_raw(frame)
    reply = await client.expect("error")
    assert reply["code"] == code and reply["message"]
    assert (await client.request({"type": "ping"}))["type"] == "pong"  # still served


async def test_huge_frame_closes_only_that_connection(app: App, clients: Any) -> None:
    ann, bob = await clients("ann"), await clients("bob")
    await make_race(ann, bob)
    await start(ann, bob)
    hostile = await clients("mallory")
    await hostile.send_raw("x" * 200_000)
    with pytest.raises(ConnectionClosed):
        await hostile.expect("never")
    assert hostile.ws.close_code == 1009
    reply = await play(ann, [LINE[0]])
    assert reply["applied"] == [LINE[0]]  # the race goes on


@pytest.mark.parametrize(
    "frame, code",
    [
        ('{"type": "ping", "id": 1e400}', "bad_message"),  # valid JSON, unreadable number
        ('{"type": "ping", "pad": "' + "é" * 5000 + '"}', "too_large"),  # 5k chars, 10k bytes
    ],
)
async def test_edge_frames(app: App, clients: Any, frame: str, code: str) -> None:
    client = await clients("dan")
    await client.send_raw(frame)
    assert (await client.expect("error"))["code"] == code


async def test_pipelined_requests_are_answered_in_order(app: App, clients: Any, database: Database) -> None:
    """Frames sent without waiting are served one at a time, in order: a rejected move or a
    ping (answered at once) never overtakes a move waiting for its log commit, nor a
    request whose handler awaits the store."""
    ann, bob = await clients("ann"), await clients("bob")
    code = await make_race(ann, bob)
    await start(ann, bob)
    batch: list[dict[str, Any]] = [
        {"type": "move", "moves": [LINE[0]]},
        {"type": "move", "moves": ["9z"]},  # refused: nothing to log
        {"type": "ping"},
        {"type": "move", "moves": [LINE[1]]},
        {"type": "leaderboard", "board": "wins", "game": GAME},  # a handler that awaits the store
        {"type": "move", "moves": [LINE[2], LINE[3]]},
    ]
    for i, message in enumerate(batch, 1):
        await ann.send({**message, "id": i})
    replies = [await ann.expect(lambda m, i=i: "id" in m) for i in range(len(batch))]
    assert [r["id"] for r in replies] == [1, 2, 3, 4, 5, 6]
    assert [r["type"] for r in replies] == [
        "move_result", "move_result", "pong", "move_result", "leaderboard_page", "move_result"
    ]
    assert replies[0]["applied"] == [LINE[0]] and replies[1]["rejected"]["move"] == "9z"
    assert replies[5]["applied"] == [LINE[2], LINE[3]] and replies[5]["moves"] == 4
    seqs = "SELECT m.seq FROM move_log m JOIN races c ON c.id = m.race_id WHERE c.code = ? ORDER BY m.id"
    assert await database.query(seqs, code) == [(0,), (1,), (2,), (3,)]


async def test_a_message_in_fragments_is_served(app: App, clients: Any) -> None:
    client = await clients("dan")
    await client.ws.send(['{"type": "ping",', ' "id": "in', ' parts"}'])  # three frames
    assert (await client.expect("pong"))["id"] == "in parts"


@pytest.mark.parametrize(
    "send, close_code",
    [
        (lambda ws: ws.send(b'{"type": "ping", "pad": "\xff"}', text=True), 1007),  # a text frame, not UTF-8
        (lambda ws: ws.send(["x"] * 100), 1009),  # a message in 100 frames
    ],
)
async def test_a_broken_message_closes_only_that_connection(app: App, clients: Any, send: Any, close_code: int) -> None:
    ann, hostile = await clients("ann"), await clients("mallory")
    await send(hostile.ws)
    with pytest.raises(ConnectionClosed):
        await hostile.expect("never")
    assert hostile.ws.close_code == close_code
    assert (await ann.request({"type": "ping"}))["type"] == "pong"  # the others are served


async def test_a_connection_closed_while_served_leaves_nothing_behind(app: App) -> None:
    """A `hello` still being served when its connection closes finishes first; then the
    connection is forgotten, and not left online."""
    for i in range(5):
        client = await Client.connect(app)
        await client.send({"type": "hello", "name": f"gone{i}"})
        await client.close()
    for _ in range(100):
        if app.gateway.sessions == 0:
            break
        await asyncio.sleep(0.05)
    assert app.gateway.sessions == 0 and app.gateway.outbox.online == {}


class RecordingPeer:
    """A ``Peer`` that keeps what it is sent, and when it was told to stop and start reading."""

    def __init__(self) -> None:
        self.sent: list[dict[str, Any]] = []
        self.reading: list[str] = []

    def send(self, message: dict[str, Any] | str) -> None:
        self.sent.append(json.loads(message) if isinstance(message, str) else message)

    def close(self, code: int, reason: str) -> None:
        self.reading.append(f"close {code}")

    def refuse(self, code: int, reason: str) -> None:
        self.reading.append(f"refuse {code}")

    def pause_reading(self) -> None:
        self.reading.append("pause")

    def resume_reading(self) -> None:
        self.reading.append("resume")


async def test_a_flooding_session_stops_being_read_until_its_frames_are_served(app: App) -> None:
    """Frames that arrive while one is served wait in the session's inbox; past
    ``INBOX_HIGH`` of them the transport is told to stop reading, and to read again once
    they are served. None is lost or reordered."""
    gateway, peer = app.gateway, RecordingPeer()
    session = gateway.connect(peer)
    gateway.receive(session, json.dumps({"type": "hello", "name": "flood", "id": 0}))  # awaits the store
    for i in range(1, INBOX_HIGH + 5):
        gateway.receive(session, json.dumps({"type": "ping", "id": i}))
    assert peer.reading == ["pause"] and peer.sent == []
    await gateway.handle(session, json.dumps({"type": "ping", "id": INBOX_HIGH + 5}))
    assert peer.reading == ["pause", "resume"]
    assert [m["id"] for m in peer.sent] == list(range(INBOX_HIGH + 6))
    assert peer.sent[0]["type"] == "welcome"
    await gateway.disconnect(session)


async def test_out_of_range_id_is_not_echoed(app: App, clients: Any) -> None:
    client = await clients("dan")
    await client.send_raw('{"type": "teleport", "id": 123456789012345678901234567890}')
    reply = await client.expect("error")
    assert reply["code"] == "unknown_type" and "id" not in reply
