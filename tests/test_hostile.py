"""Hostile input on the real server: each gets a clear, documented error (or close code),
changes nothing, logs no traceback, and leaves the connection's neighbours served."""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any

import pytest

from solitaire_race.app import App

from .conftest import Client, http_json
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


# --- integers: every one a request carries is bounded ----------------------------------

HUGE = [2**53, 2**63, 2**64, -(2**63) - 1, 10**30]


@pytest.mark.parametrize("value", HUGE)
@pytest.mark.parametrize(
    "message",
    [
        {"type": "profile", "player_id": None},
        {"type": "create_race", "game": "cruel", "deal": None},
        {"type": "create_race", "game": "cruel", "time_limit_s": None},
        {"type": "leaderboard", "board": "deal", "game": "cruel", "deal": None},
        {"type": "leaderboard", "board": "win_rate", "game": "cruel", "min_games": None},
        {"type": "leaderboard", "board": "wins", "game": "cruel", "page": None},
        {"type": "leaderboard", "board": "wins", "game": "cruel", "page_size": None},
    ],
    ids=lambda m: f"{m['type']}.{next(k for k, v in m.items() if v is None)}",
)
async def test_an_integer_out_of_range_is_a_bad_message(app: App, clients: Any, no_tracebacks: None, message: dict[str, Any], value: int) -> None:
    client = await clients("ann")
    field = next(k for k, v in message.items() if v is None)
    reply = await client.request({**message, field: value})
    assert reply["type"] == "error" and reply["code"] == "bad_message", reply
    assert field in reply["message"]
    assert app.service.rooms == {}  # nothing created
    assert (await client.request({"type": "ping"}))["type"] == "pong"


async def test_integers_at_their_bounds_are_served(app: App, clients: Any, no_tracebacks: None) -> None:
    client = await clients("ann")
    reply = await client.request({"type": "profile", "player_id": 2**53 - 1})
    assert reply["code"] == "not_found"
    reply = await client.request({"type": "leaderboard", "board": "deal", "game": "cruel", "deal": 2**53 - 1,
                                  "page": 1_000_000, "page_size": 100})
    assert reply["type"] == "leaderboard_page" and reply["entries"] == []
    reply = await client.request({"type": "create_race", "game": "cruel", "deal": 2**53 - 1, "time_limit_s": 4 * 3600})
    assert reply["type"] == "room" and reply["race"]["deal"] == 2**53 - 1


SPEC = json.loads((Path(__file__).resolve().parents[1] / "docs" / "openapi.json").read_text())


def api_integers() -> list[tuple[str, str, int, int]]:
    """(path template, parameter, minimum, maximum) of every integer the HTTP API takes."""
    out = []
    for template, item in SPEC["paths"].items():
        for param in item["get"].get("parameters", []):
            schema = param["schema"]
            if schema.get("type") == "integer":
                assert "maximum" in schema, f"{template} {param['name']} has no maximum"
                out.append((template, param["name"], schema["minimum"], schema["maximum"]))
    return out


def api_url(template: str, name: str, text: str) -> str:
    path = template.replace("{board}", "deal").replace("{game}", "cruel")
    if name == "id":
        return path.replace("{id}", text)
    board_deal = "" if name == "deal" else "deal=1&"  # the deal board needs one
    return f"{path}?{board_deal}{name}={text}"


@pytest.mark.parametrize("template, name, lo, hi", api_integers(), ids=lambda v: str(v))
async def test_http_api_integers_take_the_documented_bounds(app: App, no_tracebacks: None, template: str, name: str, lo: int, hi: int) -> None:
    for text in (str(lo), str(hi)):
        status, body = await http_json(app, api_url(template, name, text))
        assert status in (200, 404) and (status == 200 or body["error"]["code"] == "not_found"), (text, body)
    for text in (str(lo - 1), str(hi + 1), str(2**63), str(2**64), "1_0", "+1", "%201", "%D9%A3", "1.0", "0x1", "x"):
        status, body = await http_json(app, api_url(template, name, text))
        assert status == 400 and body["error"]["code"] == "bad_request", (text, status, body)
        assert f"from {lo} to {hi}" in body["error"]["message"]
