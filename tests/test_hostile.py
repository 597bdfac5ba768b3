"""Hostile input on the real server: each gets a clear, documented error (or close code),
changes nothing, logs no traceback, and leaves the connection's neighbours served."""

from __future__ import annotations

import asyncio
import json
import logging
from itertools import pairwise
from pathlib import Path
from typing import Any

import pytest

from solitaire_race.app import App

from .conftest import TIMEOUT, Client, RawWebSocket, http_json, make_config
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
async def test_a_deeply_nested_id_is_not_echoed_when_rate_limited(
    strict: App,  # noqa: F811 - pytest injects the fixture imported above by this name
    no_tracebacks: None,
) -> None:
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
async def test_an_integer_out_of_range_is_a_bad_message(
    app: App, clients: Any, no_tracebacks: None, message: dict[str, Any], value: int
) -> None:
    client = await clients("ann")
    field = next(k for k, v in message.items() if v is None)
    reply = await client.request({**message, field: value})
    assert reply["type"] == "error" and reply["code"] == "bad_message", reply
    assert field in reply["message"]
    assert app.races.rooms == {}  # nothing created
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
async def test_http_api_integers_take_the_documented_bounds(
    app: App, no_tracebacks: None, template: str, name: str, lo: int, hi: int
) -> None:
    for text in (str(lo), str(hi)):
        status, body = await http_json(app, api_url(template, name, text))
        assert status in (200, 404) and (status == 200 or body["error"]["code"] == "not_found"), (text, body)
    for text in (str(lo - 1), str(hi + 1), str(2**63), str(2**64), "1_0", "+1", "%201", "%D9%A3", "1.0", "0x1", "x"):
        status, body = await http_json(app, api_url(template, name, text))
        assert status == 400 and body["error"]["code"] == "bad_request", (text, status, body)
        assert f"from {lo} to {hi}" in body["error"]["message"]


# --- HTTP -------------------------------------------------------------------------------


async def raw_http(app: App, request: bytes) -> tuple[int, dict[str, str], bytes]:
    """Send bytes as they are to the server's port (no client library tidies them up) and
    return the response's status, headers (lower-case names) and body."""
    reader, writer = await asyncio.open_connection("127.0.0.1", app.config.port)
    try:
        writer.write(request)
        await writer.drain()
        data = await asyncio.wait_for(reader.read(), TIMEOUT)  # the server closes after answering
    finally:
        writer.close()
    head, _, body = data.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    assert lines[0].startswith("HTTP/1.1 "), data[:200]
    headers = {k.strip().lower(): v.strip() for k, _, v in (line.partition(":") for line in lines[1:])}
    return int(lines[0].split()[1]), headers, body


def get(path: bytes, method: bytes = b"GET") -> bytes:
    return method + b" " + path + b" HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n"


@pytest.mark.parametrize(
    "path",
    [
        b"/" + b"a" * 300,  # a name past the filesystem's 255 bytes
        b"/js/" + b"x" * 5000,
        b"/" + b"a/" * 2000 + b"b",  # past PATH_MAX
        b"/a\x00b",  # a NUL byte, as it is
        b"/a%00b",
        b"/../pyproject.toml",
        b"/js/../../pyproject.toml",
        b"/%2e%2e/pyproject.toml",
        b"/.gitignore",
        b"/js",  # a folder
        b"/js/",
        b"//etc/passwd",
    ],
    ids=lambda path: repr(path[:24]),
)
async def test_a_path_the_filesystem_cannot_take_is_not_found(app: App, no_tracebacks: None, path: bytes) -> None:
    status, _, body = await raw_http(app, get(path))
    assert status == 404 and body == b"not found\n", (status, body[:200])
    assert (await raw_http(app, get(b"/")))[0] == 200  # still serving


async def test_symlinks_in_the_client_folder_stay_inside_it(tmp_path: Path, no_tracebacks: None) -> None:
    web = tmp_path / "web"
    web.mkdir()
    (web / "index.html").write_text("<!doctype html><title>t</title>")
    (tmp_path / "secret.txt").write_text("secret")
    (web / "inside.html").symlink_to(web / "index.html")
    (web / "outside.txt").symlink_to(tmp_path / "secret.txt")
    (web / "loop").symlink_to(web / "loop")
    app = await App.start(make_config(tmp_path, static_dir=web))
    try:
        assert (await raw_http(app, get(b"/inside.html")))[0] == 200
        for path in (b"/outside.txt", b"/loop", b"/loop/x"):
            status, _, body = await raw_http(app, get(path))
            assert status == 404 and b"secret" not in body, path
    finally:
        await app.stop()


@pytest.mark.parametrize("method", [b"POST", b"PUT", b"DELETE", b"PATCH", b"OPTIONS", b"TRACE", b"BREW"])
@pytest.mark.parametrize("path", [b"/", b"/leaderboard", b"/join/BCDFGH", b"/api/games", b"/healthz", b"/ws", b"/nope"])
async def test_methods_but_get_and_head_are_not_allowed(
    app: App, no_tracebacks: None, method: bytes, path: bytes
) -> None:
    status, headers, body = await raw_http(app, get(path, method))
    assert status == 405 and headers["allow"] == "GET, HEAD", (status, headers)
    assert headers["content-length"] == str(len(body)) and body == b"method not allowed\n"


@pytest.mark.parametrize(
    "request_bytes",
    [
        b"POST / HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/x-www-form-urlencoded\r\n"
        b"Content-Length: 9\r\n\r\nname=mall",
        b"PUT /api/games HTTP/1.1\r\nHost: localhost\r\nTransfer-Encoding: chunked\r\n\r\n4\r\nabcd\r\n0\r\n\r\n",
        b"POST /api/players/1 HTTP/1.1\r\nHost: localhost\r\nContent-Length: 100000\r\n\r\n" + b"x" * 100_000,
    ],
    ids=["form", "chunked", "big body"],
)
async def test_a_request_with_a_body_gets_405_too(app: App, no_tracebacks: None, request_bytes: bytes) -> None:
    status, headers, _ = await raw_http(app, request_bytes)
    assert status == 405 and headers["allow"] == "GET, HEAD"
    assert (await raw_http(app, get(b"/healthz")))[2] == b"ok\n"


@pytest.mark.parametrize("path", [b"/", b"/leaderboard", b"/api/games", b"/style.css", b"/nope"])
async def test_head_answers_the_get_headers_without_the_body(app: App, no_tracebacks: None, path: bytes) -> None:
    status, headers, body = await raw_http(app, get(path))
    head_status, head_headers, head_body = await raw_http(app, get(path, b"HEAD"))
    assert head_status == status and head_body == b""
    assert head_headers["content-length"] == headers["content-length"] == str(len(body))
    assert head_headers["content-type"] == headers["content-type"]


async def test_the_websocket_path_takes_get_only(app: App, no_tracebacks: None) -> None:
    status, headers, _ = await raw_http(app, get(b"/ws", b"HEAD"))
    assert status == 405 and headers["allow"] == "GET"  # websockets' own answer


@pytest.mark.parametrize("path", [b"/", b"/leaderboard", b"/join/BCDFGH"])
async def test_pages_carry_the_security_headers(app: App, path: bytes) -> None:
    status, headers, _ = await raw_http(app, get(path))
    assert status == 200 and headers["content-type"] == "text/html; charset=utf-8"
    policy = dict(d.strip().split(" ", 1) for d in headers["content-security-policy"].split(";"))
    assert policy["frame-ancestors"] == "'none'" and headers["x-frame-options"] == "DENY"
    assert policy["default-src"] == policy["script-src"] == policy["style-src"] == "'self'"  # no inline code
    assert policy["object-src"] == "'none'"
    assert headers["x-content-type-options"] == "nosniff"
    assert headers["referrer-policy"] == "no-referrer"


# --- websocket frames -------------------------------------------------------------------


def fragments(text: str, count: int) -> list[bytes]:
    """``text`` cut into ``count`` pieces, none empty."""
    data = text.encode()
    assert len(data) >= count
    cuts = [len(data) * i // count for i in range(count + 1)]
    return [data[a:b] for a, b in pairwise(cuts)]


async def test_a_message_in_64_fragments_is_served_and_in_65_closes(
    app: App, clients: Any, no_tracebacks: None
) -> None:
    ann = await clients()
    hostile = await RawWebSocket.connect(app)
    try:
        text = '{"type": "ping", "id": "' + "f" * 60 + '"}'
        hostile.send_message(fragments(text, 64))
        assert json.loads(await hostile.read_text()) == {"type": "pong", "id": "f" * 60}
        hostile.send_message(fragments(text, 65))
        assert await hostile.read_close() == 1009  # docs/protocol.md: more than 64 frames
        assert (await ann.request({"type": "ping"}))["type"] == "pong"
    finally:
        hostile.close()
