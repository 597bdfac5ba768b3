"""Abuse limits, slow clients, /metrics and structured logs, on the real server."""

from __future__ import annotations

import asyncio
import collections
import json
import logging
import re
import socket
import time
import urllib.request
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from websockets.asyncio.client import connect
from websockets.exceptions import ConnectionClosed

from solitaire_race.app import App
from solitaire_race.observe import JsonFormatter

from .conftest import TEST_SECRET, Client, RawWebSocket, make_config
from .support import winnable_deal


@pytest.fixture
async def strict(tmp_path: Path, request: pytest.FixtureRequest) -> AsyncIterator[App]:
    """A server with the settings the test's ``limits`` marker gives."""
    marker = request.node.get_closest_marker("limits")
    app = await App.start(make_config(tmp_path, **(marker.kwargs if marker else {})))
    try:
        yield app
    finally:
        await app.stop()


async def player(app: App, name: str) -> Client:
    client = await Client.connect(app)
    assert (await client.hello(name))["type"] == "welcome"
    return client


@pytest.mark.limits(rate_per_s=5, rate_burst=5, abuse_limit=12)
async def test_rate_limit_then_disconnect_on_abuse(strict: App) -> None:
    ann, bob = await player(strict, "ann"), await player(strict, "bob")
    try:
        await asyncio.sleep(1.0)  # hello used a token; let the bucket fill again
        for i in range(5):
            await ann.send({"type": "ping", "id": i})
        for i in range(5, 8):
            await ann.send({"type": "ping", "id": i})
        replies = [await ann.expect(lambda m, i=i: m.get("id") == i) for i in range(8)]
        assert [r["type"] for r in replies[:5]] == ["pong"] * 5
        assert all(r["type"] == "error" and r["code"] == "rate_limited" for r in replies[5:])
        assert "at most 5 messages per second" in replies[5]["message"]
        await asyncio.sleep(0.5)  # tokens come back
        assert (await ann.request({"type": "ping"}))["type"] == "pong"
        assert (await bob.request({"type": "ping"}))["type"] == "pong"  # others unaffected
        for i in range(40):  # bounded flood: the connection is closed on the way
            try:
                await ann.send({"type": "ping", "id": 100 + i})
            except ConnectionClosed:
                break
        with pytest.raises(ConnectionClosed):
            await ann.expect("never")
        assert ann.ws.close_code == 1008
        assert (await bob.request({"type": "ping"}))["type"] == "pong"
    finally:
        await ann.close()
        await bob.close()


@pytest.mark.limits(max_rooms_per_player=1)
async def test_rooms_per_player(strict: App) -> None:
    ann, bob = await player(strict, "ann"), await player(strict, "bob")
    try:
        room = await ann.request({"type": "create_race", "game": "cruel"})
        await bob.request({"type": "join_race", "code": room["race"]["code"]})
        await ann.request({"type": "leave_race"})  # bob keeps the race; ann created it
        again = await ann.request({"type": "create_race", "game": "cruel"})
        assert again["type"] == "error" and again["code"] == "too_many_rooms"
        await bob.request({"type": "leave_race"})  # the race is abandoned: ann may create again
        assert (await ann.request({"type": "create_race", "game": "cruel"}))["type"] == "room"
    finally:
        await ann.close()
        await bob.close()


@pytest.mark.limits(idle_timeout_s=0.3)
async def test_idle_connection_is_closed(strict: App) -> None:
    ann = await player(strict, "ann")
    with pytest.raises(ConnectionClosed):
        await ann.expect("never", timeout=5)
    assert ann.ws.close_code == 4002


@pytest.mark.limits(idle_timeout_s=0.4)
async def test_a_connection_is_idle_only_once_it_stops_sending(strict: App) -> None:
    ann = await player(strict, "ann")
    for _ in range(12):  # three idle periods, a message every quarter of one
        await asyncio.sleep(0.1)
        last = time.monotonic()
        assert (await ann.request({"type": "ping"}))["type"] == "pong"
    with pytest.raises(ConnectionClosed):
        await ann.expect("never", timeout=5)
    assert ann.ws.close_code == 4002
    assert time.monotonic() - last >= 0.4  # never before the idle timeout


@pytest.mark.limits(
    max_send_buffer=8192, socket_send_buffer=4096, rate_per_s=1e6, rate_burst=10**6, progress_interval_s=0.002
)
async def test_a_client_that_stops_reading_is_dropped_and_others_play_on(strict: App) -> None:
    deal, line = winnable_deal("persian-patience", TEST_SECRET.encode())
    ann = await player(strict, "ann")
    host, port = strict.config.public_url.split("//")[1].rsplit(":", 1)
    raw = socket.socket()
    raw.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 2048)
    raw.connect((host, int(port)))
    raw.setblocking(False)
    sam = Client(await connect(strict.ws_url, sock=raw, compression=None))
    try:
        await sam.hello("sam")
        room = await ann.request({"type": "create_race", "game": "persian-patience", "deal": deal})
        code = room["race"]["code"]
        await sam.request({"type": "join_race", "code": code})
        await ann.request({"type": "start_race"})
        await sam.expect("race_started")
        sam.ws.transport.pause_reading()  # sam stops reading; the server keeps sending progress

        def dropped() -> float:
            return strict.gateway.metrics.counter("solitaire_slow_clients_dropped_total").value

        played = 0
        for text in line[:1500]:  # bounded; the drop comes after a hundred or so
            reply = await ann.request({"type": "move", "moves": [text]})
            assert reply["applied"] == [text]  # every move of the honest player is answered
            played += 1
            if dropped():
                break
        assert dropped() == 1 and played < 1500
        assert (await ann.request({"type": "move", "moves": [line[played]]}))["applied"] == [line[played]]
        sam.ws.transport.abort()

        back = await Client.connect(strict)  # sam may come back, and finds the game as it was
        try:
            await back.hello(token=sam.token)
            await back.request({"type": "join_race", "code": code})
            resumed = await back.expect("race_started")
            assert resumed["moves"] == 0 and resumed["opponents"][0]["moves"] == played + 1
        finally:
            await back.close()
    finally:
        await ann.close()


# --- floods: one connection's flood does not hold up the others --------------------------


@pytest.mark.limits(rate_per_s=1e12, rate_burst=10**9, max_send_buffer=2**26)  # no limit: every frame is served
async def test_a_flood_is_served_in_turns_and_others_are_served_meanwhile(strict: App) -> None:
    """10,000 frames in one write (not JSON: each answered at once, no task in between) are
    served a few dozen per turn of the event loop (ws_connection.TURN_FRAMES, SLICE_BYTES),
    so another client's ping, sent once the flood is being served, is served after a few
    turns' worth of it, not after all of it. Every flood frame is still answered, in order."""
    gateway = strict.gateway
    order: list[str] = []  # whose frames the gateway served, in order
    serve = gateway._serve

    def recording(session: Any, frame: str | bytes) -> bool:
        order.append("probe" if "probe" in str(frame) else "flood")
        return serve(session, frame)

    gateway._serve = recording  # type: ignore[method-assign]  # the connections' frame queues call it
    flooder, prober = await RawWebSocket.connect(strict), await Client.connect(strict)
    try:
        replies = asyncio.create_task(flooder.read_texts(10_000))  # read as they come
        flooder.send_texts([b"junk"] * 10_000)
        while "flood" not in order:
            await asyncio.sleep(0)
        await prober.send({"type": "ping", "id": "probe"})
        assert (await prober.expect("pong"))["id"] == "probe"
        assert order.index("probe") < 1_000, f"the ping was served after {order.index('probe')} flood frames"
        assert [json.loads(r)["code"] for r in await replies] == ["invalid_json"] * 10_000
    finally:
        gateway._serve = serve  # type: ignore[method-assign]
        flooder.close()
        await prober.close()


@pytest.mark.limits(rate_per_s=5, rate_burst=5, abuse_limit=20)
async def test_a_flood_is_closed_once_abuse_limit_messages_are_refused(strict: App) -> None:
    """5,000 pings in one write: the burst is served, abuse_limit are refused, and the
    connection is closed; none of the rest is served or answered."""
    ann = await player(strict, "ann")
    flooder = await RawWebSocket.connect(strict)
    try:
        flooder.send_texts([b'{"type": "ping"}'] * 5_000)
        replies, code = await flooder.read_until_close()
        assert code == 1008
        kinds = collections.Counter(r.get("code", r["type"]) for r in replies)
        assert set(kinds) == {"pong", "rate_limited"}
        assert kinds["pong"] <= 5 + 1  # the burst (and a token that came back meanwhile)
        assert kinds["rate_limited"] <= 20 + 1  # the refused count decays meanwhile, by 5 a second
        assert (await ann.request({"type": "ping"}))["type"] == "pong"
    finally:
        flooder.close()
        await ann.close()


@pytest.mark.limits(rate_per_s=5, rate_burst=5, abuse_limit=30)
async def test_a_steady_flood_is_closed_too(strict: App) -> None:
    """Ten times the limit, steadily: a token comes back every fifth of a second and lets one
    message through, so 30 are never refused in a row; the connection is closed all the
    same, since the refused pile up faster than they are forgiven (5 a second)."""
    flooder = await RawWebSocket.connect(strict)
    try:
        closed = asyncio.create_task(flooder.read_until_close())
        for _ in range(200):  # 4 s at most
            if closed.done():
                break
            flooder.send_texts([b'{"type": "ping"}'])
            await asyncio.sleep(0.02)
        assert (await closed)[1] == 1008
    finally:
        flooder.close()


@pytest.mark.limits(rate_per_s=10, rate_burst=5, abuse_limit=8)
async def test_a_client_over_the_limit_now_and_then_is_not_closed(strict: App) -> None:
    client = await Client.connect(strict)
    try:
        for _ in range(3):  # 15 refused in all, never 8 without a pause that forgives them
            for i in range(10):
                await client.send({"type": "ping", "id": i})
            replies = [await client.expect(lambda m, i=i: m.get("id") == i) for i in range(10)]
            assert 0 < sum(r.get("code") == "rate_limited" for r in replies) < 8
            await asyncio.sleep(0.8)
        assert (await client.request({"type": "ping"}))["type"] == "pong"
    finally:
        await client.close()


def metric(text: str, name: str, **labels: str) -> float:
    want = "{" + ",".join(f'{k}="{v}"' for k, v in sorted(labels.items())) + "}" if labels else ""
    for line in text.splitlines():
        if line.startswith(f"{name}{want} "):
            return float(line.rsplit(" ", 1)[1])
    raise AssertionError(f"{name}{want} not in /metrics")


async def test_metrics_endpoint(app: App, clients: Any) -> None:
    deal, line = winnable_deal("cruel", TEST_SECRET.encode())
    ann, bob = await clients("ann"), await clients("bob")
    room = await ann.request({"type": "create_race", "game": "cruel", "deal": deal})
    await bob.request({"type": "join_race", "code": room["race"]["code"]})
    await ann.request({"type": "start_race"})
    await bob.expect("race_started")
    await ann.request({"type": "move", "moves": list(line[:5])})
    await ann.request({"type": "move", "moves": [line[5], "1>1"]})
    await bob.request({"type": "join_race", "code": "NOPE"})

    def get() -> tuple[str, str]:
        with urllib.request.urlopen(app.config.public_url + "/metrics", timeout=5) as r:
            return r.headers["Content-Type"], r.read().decode()

    kind, text = await asyncio.to_thread(get)
    assert kind.startswith("text/plain; version=0.0.4")
    assert metric(text, "solitaire_moves_total") == 6
    assert metric(text, "solitaire_moves_rejected_total") == 1
    assert metric(text, "solitaire_errors_total", code="no_such_race") == 1
    assert metric(text, "solitaire_connections") == 2
    assert metric(text, "solitaire_races", status="running") == 1
    assert metric(text, "solitaire_db_commit_seconds_count") >= 2  # the two batches of moves
    assert metric(text, "solitaire_db_committed_moves_total") == 6
    assert metric(text, "solitaire_db_commit_seconds_bucket", le="+Inf") >= 2
    # Both move requests timed, each bucket counting those at or under its bound.
    assert metric(text, "solitaire_move_seconds_count") == 2
    assert metric(text, "solitaire_move_seconds_bucket", le="+Inf") == 2
    fast = metric(text, "solitaire_move_seconds_bucket", le="0.001")
    assert 0 <= fast <= metric(text, "solitaire_move_seconds_bucket", le="1.0") == 2
    for line_ in text.splitlines():  # the exposition format, line by line
        sample = re.fullmatch(r"[a-z_]+(\{[^}]*\})? [0-9.e+-]+", line_)
        assert line_.startswith(("# HELP ", "# TYPE ")) or sample, line_


async def test_logs_are_json_events_without_secrets(app: App, clients: Any, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)
    deal, _ = winnable_deal("cruel", TEST_SECRET.encode())
    ann = await clients("ann")
    room = await ann.request({"type": "create_race", "game": "cruel", "deal": deal})
    await ann.request({"type": "start_race"})
    await ann.expect("race_started")
    await ann.request({"type": "resign"})
    await ann.expect("race_finished")
    formatter = JsonFormatter()
    lines = [formatter.format(r) for r in caplog.records if r.name.startswith("solitaire_race")]
    events = [json.loads(line) for line in lines]  # every line is one JSON object
    by_event = {e.get("event"): e for e in events}
    race_id = by_event["race_created"]["race"]
    assert by_event["race_created"]["code"] == room["race"]["code"]
    assert by_event["race_started"]["race"] == race_id and by_event["race_finished"]["race"] == race_id
    assert by_event["identified"]["player"] == ann.player["id"]
    assert all(ann.token not in line for line in lines)


def test_histogram_buckets_include_their_bound() -> None:
    from solitaire_race.observe import Metrics

    metrics = Metrics()
    for seconds in (0.0005, 0.0007, 0.001, 2.0):
        metrics.histograms["solitaire_move_seconds"].observe(seconds)  # as the interpreter does
    text = metrics.render()
    assert metric(text, "solitaire_move_seconds_bucket", le="0.0005") == 1
    assert metric(text, "solitaire_move_seconds_bucket", le="0.001") == 3
    assert metric(text, "solitaire_move_seconds_bucket", le="1.0") == 3
    assert metric(text, "solitaire_move_seconds_bucket", le="+Inf") == 4
    assert metric(text, "solitaire_move_seconds_sum") == 0.0005 + 0.0007 + 0.001 + 2.0
