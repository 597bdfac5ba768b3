"""A player's websocket connection to the race server (docs/protocol.md).

``Connection.request`` sends a message with a fresh id and returns the reply that echoes
it; every other message (room changes, countdowns, other racers' progress, the race's
start and finish) goes to the ``events`` queue in arrival order. When the connection
closes, pending requests fail with ``Disconnected`` and a final ``{"type": "closed"}``
event is queued, so a consumer waiting on events always wakes up.

A request the server refuses with ``rate_limited`` (its per-connection message budget,
docs/protocol.md) is sent again after a growing pause, a bounded number of times, so a fast
client slows down to what the server allows instead of failing. ``next_event`` can send a
``ping`` while it waits, so that a client waiting quietly (in a lobby, for the others to
finish) is not taken for an idle connection.

``ws_url`` turns whatever a person types as a server into the websocket address.

A server that is one node of a cluster may answer ``race_elsewhere``: the race runs on
another node, at the ``url`` the error gives. ``request`` follows it without its caller
noticing: it moves the connection there (signing in again with the token of the last
``welcome``) and asks again; with no ``url`` (the race is moving to another node), or
one that does not answer (that node just died), it asks again after a pause. ``reopen``
connects again where the connection began (after a drop: any node will do, and brings
the client to the race). The ``events`` queue stays the same across both.

A ``transform`` given to ``open`` sees every message (and the close reason) before anyone
else does: the terminal client passes ``terminal_text.safe_message`` there, so nothing a
server sends reaches its screen unescaped.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Callable
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed

log = logging.getLogger("solitaire_race.client")

DEFAULT_SERVER = "ws://127.0.0.1:8765/ws"
WS_PATH = "/ws"
REQUEST_TIMEOUT_S = 15.0
RATE_RETRIES = 20  # pauses of 0.05 s doubling up to 1 s: about 15 s in all
KEEPALIVE_S = 300.0  # a quiet client pings this often while waiting for events
FOLLOW_TRIES = 30  # race_elsewhere answers followed per request: ~15 s of a race moving
MOVING_PAUSE_S = 0.5  # before asking again about a race that is moving to another node


class Disconnected(ConnectionError):
    """The connection closed (or never opened); the message says why."""


def ws_url(server: str) -> str:
    """The websocket URL for a server given as ``ws://h:p/ws``, ``http://h:p``, ``h:p``...

    http maps to ws and https to wss; an empty path or ``/`` (or a browser link such as
    ``/join/KXPMRT``) becomes ``/ws``.
    """
    text = server.strip()
    if "://" not in text:
        text = "ws://" + text
    parts = urlsplit(text)
    scheme = {"http": "ws", "https": "wss", "ws": "ws", "wss": "wss"}.get(parts.scheme.lower())
    if scheme is None:
        raise ValueError(f"not a server address: {server!r} (use e.g. {DEFAULT_SERVER})")
    if not parts.netloc:
        raise ValueError(f"not a server address: {server!r} (no host)")
    path = parts.path if parts.path.rstrip("/").endswith(WS_PATH) else WS_PATH
    return urlunsplit((scheme, parts.netloc, path.rstrip("/") or WS_PATH, "", ""))


def http_url(server: str) -> str:
    """The server's web address (for pages such as ``/leaderboard``) from its websocket URL."""
    parts = urlsplit(ws_url(server))
    return urlunsplit(({"ws": "http", "wss": "https"}[parts.scheme], parts.netloc, "", "", ""))


class Connection:
    """One player connection: ``request`` for replies, ``events`` for everything else."""

    def __init__(
        self, ws: ClientConnection, transform: Callable[[Any], Any] | None = None, home: str = "",
        timeout: float = 10.0,
    ) -> None:
        self.ws = ws
        self.transform = transform
        self.home = home  # where open() connected: reopen() goes back there
        self.at = home  # where the socket is now
        self._moving = asyncio.Lock()
        self.timeout = timeout
        self.token: str | None = None  # from the last welcome: to sign in again after a move
        self.events: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
        self._pending: dict[int, asyncio.Future[dict[str, Any]]] = {}
        self._next_id = 0
        self.close_reason: str | None = None
        self._reader = asyncio.get_running_loop().create_task(self._read(ws))

    @classmethod
    async def open(
        cls, server: str, timeout: float = 10.0, transform: Callable[[Any], Any] | None = None
    ) -> Connection:
        url = ws_url(server)
        return cls(await _connect(url, timeout), transform, home=url, timeout=timeout)

    @property
    def closed(self) -> bool:
        return self._reader.done()

    async def move_to(self, server: str) -> None:
        """Carry on at ``server``: a new socket there, signed in again with the last
        token; the old one is closed. Requests still waiting on the old one fail. One move
        at a time: a second one asked meanwhile (two requests answered race_elsewhere)
        finds the connection there already."""
        async with self._moving:
            if ws_url(server) == self.at and not self.closed:
                return
            await self._move(ws_url(server))

    async def _move(self, url: str) -> None:
        ws = await _connect(url, self.timeout)
        self.at = url
        old, self.ws = self.ws, ws
        await old.close()
        await asyncio.gather(self._reader, return_exceptions=True)
        self.close_reason = None
        self._reader = asyncio.get_running_loop().create_task(self._read(ws))
        if self.token is not None:
            welcome = await self._request_once({"type": "hello", "token": self.token}, self.timeout)
            if welcome.get("type") != "welcome":
                raise Disconnected(f"{url} refused this player: {welcome.get('message')}")

    async def reopen(self) -> None:
        """Connect again where this connection began (after a drop), signed in again."""
        await self.move_to(self.home)

    async def _read(self, ws: ClientConnection) -> None:
        try:
            async for raw in ws:
                if ws is not self.ws:  # a socket this connection moved away from: stale news
                    continue
                try:
                    message = json.loads(raw)
                except (TypeError, ValueError):
                    log.warning("ignoring a frame that is not JSON: %.80r", raw)
                    continue
                if not isinstance(message, dict):
                    continue
                if self.transform is not None:
                    message = self.transform(message)
                if message.get("type") == "welcome" and isinstance(message.get("token"), str):
                    self.token = message["token"]
                rid = message.get("id")
                future = self._pending.pop(rid, None) if isinstance(rid, int) else None
                if future is not None and not future.done():
                    future.set_result(message)
                else:
                    self.events.put_nowait(message)
        except ConnectionClosed:
            pass
        finally:
            self._closed(ws)

    def _closed(self, ws: ClientConnection) -> None:
        """``ws`` is closed: what waits on it fails; if it was this connection's socket
        (not one it moved away from), a ``closed`` event tells the consumer."""
        moved = ws is not self.ws
        if moved:
            reason = "the connection moved to another server node"
        else:
            code, why = ws.close_code, ws.close_reason
            if why and self.transform is not None:
                why = self.transform(why)
            reason = self.close_reason = (
                f"connection closed ({code}{': ' + why if why else ''})"
                if code is not None and code != 1006
                else "connection lost"
            )
        for future in self._pending.values():
            if not future.done():
                future.set_exception(Disconnected(reason))
        self._pending.clear()
        if not moved:
            self.events.put_nowait({"type": "closed", "reason": reason})

    async def request(self, message: dict[str, Any], timeout: float = REQUEST_TIMEOUT_S) -> dict[str, Any]:
        """Send ``message`` with a fresh id; the server's reply (possibly an ``error``)."""
        if message.get("type") == "hello" and isinstance(message.get("token"), str):
            self.token = message["token"]
        reply = await self._request_once(message, timeout)
        for attempt in range(RATE_RETRIES):
            if reply.get("type") != "error" or reply.get("code") != "rate_limited":
                break
            await asyncio.sleep(min(1.0, 0.05 * 2**attempt))  # the server's budget refills
            reply = await self._request_once(message, timeout)
        for _ in range(FOLLOW_TRIES):
            if reply.get("type") != "error" or reply.get("code") != "race_elsewhere":
                break
            url = reply.get("url")
            try:
                if not isinstance(url, str) or not url:
                    raise Disconnected("the race is moving")
                await self.move_to(url)
            except Disconnected:
                # Its node is not answering (it just died; until its lease runs out the
                # others still name it): ask again here, after a pause.
                if self.closed:
                    raise
                await asyncio.sleep(MOVING_PAUSE_S)
            reply = await self._request_once(message, timeout)
        return reply

    async def _request_once(self, message: dict[str, Any], timeout: float) -> dict[str, Any]:
        if self.closed:
            raise Disconnected(self.close_reason or "connection closed")
        self._next_id += 1
        rid = self._next_id
        future: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self._pending[rid] = future
        try:
            await self.ws.send(json.dumps({**message, "id": rid}))
        except ConnectionClosed:
            self._pending.pop(rid, None)
            raise Disconnected(self.close_reason or "connection closed") from None
        try:
            return await asyncio.wait_for(future, timeout)
        except TimeoutError:
            raise Disconnected(f"no reply to {message.get('type')} within {timeout:g} s") from None
        finally:
            self._pending.pop(rid, None)

    async def next_event(self, timeout: float | None = None, keepalive_s: float | None = None) -> dict[str, Any]:
        """The next event; raises ``TimeoutError`` after ``timeout`` seconds. With
        ``keepalive_s``, a ``ping`` goes out after each such quiet stretch."""
        loop = asyncio.get_running_loop()
        deadline = None if timeout is None else loop.time() + timeout
        while True:
            wait = keepalive_s
            if deadline is not None:
                left = deadline - loop.time()
                if left <= 0:
                    raise TimeoutError("no event in time")
                wait = left if wait is None else min(wait, left)
            try:
                return await asyncio.wait_for(self.events.get(), wait)
            except TimeoutError:
                if keepalive_s is None or (deadline is not None and loop.time() >= deadline):
                    raise
                if not self.closed:
                    await self.request({"type": "ping"})

    async def close(self) -> None:
        await self.ws.close()
        await asyncio.gather(self._reader, return_exceptions=True)


async def _connect(url: str, timeout: float) -> ClientConnection:
    try:
        return await connect(url, open_timeout=timeout, compression=None, max_size=2**20)
    except (TimeoutError, OSError) as exc:
        raise Disconnected(f"cannot reach {url}: {exc or type(exc).__name__}") from None
    except Exception as exc:  # handshake refused: wrong path, not a race server, ...
        raise Disconnected(f"cannot open {url}: {exc}") from None
