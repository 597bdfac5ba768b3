"""Flood benchmark: how long other players wait while one connection floods the server.

    python bench/flood.py [--frames 5000] [--kind ping|junk] [--probers 10] [--seconds 3] [--loop auto]

Starts the race server (``solitaire-race serve``, its default rate limit, pinned to CPU 0)
and, from this process (pinned to CPU 1), measures the round trip of ``ping`` requests that
well-behaved clients (``--probers``, each 10 pings per second, below the rate limit) send:
first for ``--seconds`` with no flood, then for ``--seconds`` while flooders take turns:
each connects, writes ``--frames`` messages at once (``ping`` requests, or ``junk`` frames
that are not JSON) and reads until the server closes it, and the next one connects.

Prints the probers' round-trip p50/p99/max without and during the floods, and per flood
the time until the server closed the flooder and how many replies the flooder got before
that (the server closes a connection that keeps sending past its rate limit: at most
``rate_burst`` served and ``abuse_limit`` refused, docs/operations.md). Loopback only;
every loop is bounded by the case's time and every flooder by ``FLOOD_TIMEOUT_S``.
Nothing is asserted: tests/test_limits.py checks the behaviour, this measures it.
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import json
import os
import re
import signal
import statistics
import struct
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from load import GENERATOR_CPU, SERVER_CPU, pinned_to, warm_up, websocket_url
from ws_client import WsClient, read_frame, ws_connect

PROBE_INTERVAL_S = 0.1  # per prober: 10 pings a second, half the default rate limit
FLOOD_TIMEOUT_S = 10.0  # a flooder the server never closes is given up after this long
MASK = b"\x00\x00\x00\x00"  # client frames must be masked; a zero key keeps them as they are


def frame(payload: bytes) -> bytes:
    """One masked text frame (payloads under 126 bytes: all this benchmark sends)."""
    assert len(payload) < 126
    return bytes((0x81, 0x80 | len(payload))) + MASK + payload


class Flooder(asyncio.Protocol):
    """Writes its whole flood at once, then only counts the server's frames (by type or
    error code, without decoding their JSON) until the server's close frame."""

    CODE, TYPE = re.compile(rb'"code":"([a-z_]+)"'), re.compile(rb'"type":"([a-z_]+)"')

    def __init__(self, flood: bytes, host: str, port: int) -> None:
        self.flood, self.host, self.port = flood, host, port
        self.buffer = bytearray()
        self.handshake_done = False
        self.counts: dict[str, int] = {}
        self.close_code: int | None = None
        self.closed: asyncio.Future[float] = asyncio.get_running_loop().create_future()
        self.sent_at = 0.0
        self.transport: asyncio.Transport | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self.transport = transport
        key = base64.b64encode(os.urandom(16)).decode()
        head = (f"GET /ws HTTP/1.1\r\nHost: {self.host}:{self.port}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                f"Sec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n\r\n")
        self.sent_at = time.perf_counter()
        # The handshake and the flood in one write: the server reads them as they come.
        transport.write(head.encode() + self.flood)

    def data_received(self, data: bytes) -> None:
        buf = self.buffer
        buf += data
        pos = 0
        if not self.handshake_done:
            end = buf.find(b"\r\n\r\n")
            if end < 0:
                return
            self.handshake_done, pos = True, end + 4
        while (frame := read_frame(buf, pos)) is not None:
            opcode, payload, pos = frame
            if opcode == 0x1 and (m := self.CODE.search(payload) or self.TYPE.search(payload)):
                key = m.group(1).decode()
                self.counts[key] = self.counts.get(key, 0) + 1
            elif opcode == 0x8:
                self.close_code = struct.unpack_from("!H", payload)[0] if len(payload) >= 2 else None
                self._closed()
        del buf[:pos]

    def _closed(self) -> None:
        if not self.closed.done():
            self.closed.set_result(time.perf_counter())
        if self.transport is not None:
            self.transport.close()

    def connection_lost(self, exc: Exception | None) -> None:
        self._closed()

    def replies(self) -> dict[str, Any]:
        return {"replies": dict(self.counts), "close_code": self.close_code}


async def probe(client: WsClient, phase: float, deadline: float, rtts: list[float]) -> None:
    """Ping every PROBE_INTERVAL_S (from ``phase``) until ``deadline``, keeping round trips."""
    await asyncio.sleep(phase)
    n = 0
    while time.perf_counter() < deadline:
        n += 1
        sent = time.perf_counter()
        client.send(f'{{"type":"ping","id":{n}}}'.encode())
        reply = json.loads(await client.recv())
        if reply.get("type") == "pong":
            rtts.append(time.perf_counter() - sent)
        else:
            raise RuntimeError(f"a prober was refused: {reply}")
        await asyncio.sleep(max(0.0, PROBE_INTERVAL_S - (time.perf_counter() - sent)))


async def flood(host: str, port: int, payload: bytes, deadline: float, floods: list[dict[str, Any]]) -> None:
    """Flooders one after the other until ``deadline``, each until the server closes it."""
    loop = asyncio.get_running_loop()
    while time.perf_counter() < deadline:
        transport, flooder = await loop.create_connection(lambda: Flooder(payload, host, port), host, port)
        try:
            closed_at = await asyncio.wait_for(asyncio.shield(flooder.closed), FLOOD_TIMEOUT_S)
        except TimeoutError:
            transport.abort()
            closed_at = float("nan")
        floods.append({"closed_after_ms": (closed_at - flooder.sent_at) * 1e3, **flooder.replies()})


async def measure(url: str, args: argparse.Namespace) -> dict[str, Any]:
    m = re.fullmatch(r"ws://([^:/]+):(\d+)/ws", url)
    assert m, url
    host, port = m.group(1), int(m.group(2))
    message = b'{"type":"ping"}' if args.kind == "ping" else b"junk"
    payload = frame(message) * args.frames
    probers = [await ws_connect(url) for _ in range(args.probers)]
    figures: dict[str, Any] = {}
    for case in ("quiet", "flood"):
        rtts: list[float] = []
        floods: list[dict[str, Any]] = []
        deadline = time.perf_counter() + args.seconds
        work = [probe(c, PROBE_INTERVAL_S * i / len(probers), deadline, rtts) for i, c in enumerate(probers)]
        if case == "flood":
            work.append(flood(host, port, payload, deadline, floods))
        await asyncio.gather(*work)
        rtts.sort()
        figures[case] = {
            "samples": len(rtts), "p50_ms": percentile_ms(rtts, 0.5), "p99_ms": percentile_ms(rtts, 0.99),
            "max_ms": rtts[-1] * 1e3 if rtts else float("nan"), "floods": floods,
        }
    for client in probers:
        client.close()
    return figures


def percentile_ms(sorted_s: list[float], q: float) -> float:
    """The ``q`` quantile of sorted round trips in seconds, in milliseconds."""
    return sorted_s[min(len(sorted_s) - 1, int(q * len(sorted_s)))] * 1e3 if sorted_s else float("nan")


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--frames", type=int, default=5000, help="messages each flooder writes at once")
    parser.add_argument(
        "--kind", choices=("ping", "junk"), default="ping", help="ping requests, or frames that are not JSON"
    )
    parser.add_argument(
        "--probers", type=int, default=10, help="well-behaved clients pinging 10 times a second each"
    )
    parser.add_argument("--seconds", type=float, default=3.0, help="how long each case (quiet, flood) lasts")
    parser.add_argument("--loop", choices=("auto", "uvloop", "asyncio"), default="auto", help="the server's event loop")
    parser.add_argument("--json", help="write the figures to this file")
    args = parser.parse_args(argv)
    if not 1 <= args.frames <= 100_000 or not 1 <= args.probers <= 100 or not 0 < args.seconds <= 60:
        parser.error("--frames 1-100000, --probers 1-100, --seconds up to 60")
    with tempfile.TemporaryDirectory() as tmp:
        cmd = [sys.executable, "-m", "solitaire_race.cli", "serve", "--port", "0",
               "--db", f"sqlite+aiosqlite:///{Path(tmp) / 'flood.sqlite3'}", "--daily-solver-nodes", "0",
               "--loop", args.loop]
        server = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
                                  env={**os.environ, "PYTHONUNBUFFERED": "1"}, preexec_fn=pinned_to(SERVER_CPU))
        try:
            url = websocket_url(server)
            if url is None:
                raise RuntimeError("the race server did not start")
            warm_up(url)
            os.sched_setaffinity(0, {GENERATOR_CPU})
            figures = asyncio.run(measure(url, args))
        finally:
            server.send_signal(signal.SIGTERM)
            server.wait(timeout=30)
    print(f"{args.probers} probers, 10 pings/s each; flooders of {args.frames:,} {args.kind} frames, "
          f"{args.seconds:g} s per case")
    print(f"{'case':<8}{'samples':>9}{'p50 ms':>9}{'p99 ms':>9}{'max ms':>9}")
    for case, f in figures.items():
        print(f"{case:<8}{f['samples']:>9}{f['p50_ms']:>9.2f}{f['p99_ms']:>9.2f}{f['max_ms']:>9.2f}")
    floods = figures["flood"]["floods"]
    if floods:
        closed = [f["closed_after_ms"] for f in floods]
        print(f"{len(floods)} flooders; closed after {statistics.median(closed):.1f} ms (median), "
              f"{max(closed):.1f} ms (max); close codes {sorted({f['close_code'] for f in floods}, key=str)}")
        print(f"replies to the first flooder: {floods[0]['replies']}")
    if args.json:
        Path(args.json).write_text(json.dumps(figures, indent=2))
    return figures


if __name__ == "__main__":
    main()
