"""Hostile input on the real server: each gets a clear, documented error (or close code),
changes nothing, logs no traceback, and leaves the connection's neighbours served."""

from __future__ import annotations

import logging
from typing import Any

import pytest

from solitaire_race.app import App

from .conftest import Client
from .test_limits import strict  # noqa: F401  (a fixture: a server with the `limits` settings)


@pytest.fixture
def no_tracebacks(caplog: pytest.LogCaptureFixture) -> Any:
    """Fails the test if the server logged an error or a traceback while it ran."""
    caplog.set_level(logging.WARNING)
    yield
    bad = [r for r in caplog.records if r.levelno >= logging.ERROR or r.exc_info]
    assert not bad, [f"{r.name}: {r.getMessage()}" for r in bad]


def nested(depth: int, inner: str = "1") -> str:
    return "[" * depth + inner + "]" * depth


@pytest.mark.parametrize(
    "frame",
    [
        '{"type": "ping", "id": ' + nested(3000) + "}",
        '{"type": "ping", "pad": ' + nested(3000) + "}",
        '{"pad": ' + nested(3000) + ', "type": "ping"}',  # the tag, looked for past the nesting
        '{"type": "move", "moves": ' + nested(3000) + "}",
        '{"type": "leaderboard", "board": "wins", "game": "cruel", "page": ' + nested(3000) + "}",
        '{"type": "hello", "name": ' + '{"a":' * 1200 + "1" + "}" * 1200 + "}",
        nested(3000),
    ],
    ids=["id", "unknown field", "before the type", "moves", "page", "objects", "top level"],
)
async def test_deeply_nested_json_is_a_bad_message(app: App, clients: Any, no_tracebacks: None, frame: str) -> None:
    client = await clients()
    await client.send_raw(frame)
    reply = await client.expect("error")
    assert reply["code"] == "bad_message" and "nested too deeply" in reply["message"], reply
    assert (await client.request({"type": "ping"}))["type"] == "pong"  # still served


@pytest.mark.limits(rate_per_s=0.01, rate_burst=1)
async def test_a_deeply_nested_id_is_not_echoed_when_rate_limited(strict: App, no_tracebacks: None) -> None:
    client = await Client.connect(strict)
    try:
        assert (await client.request({"type": "ping"}))["type"] == "pong"  # the only token
        await client.send_raw('{"type": "ping", "id": ' + nested(3000) + "}")
        reply = await client.expect("error")
        assert reply["code"] == "rate_limited" and "id" not in reply
    finally:
        await client.close()
