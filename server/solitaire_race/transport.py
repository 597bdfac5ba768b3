"""The server: the only module, with ``ws_connection``, that imports ``websockets``.

One port serves both: websocket connections at ``/ws`` (each message handed to the
``Gateway``), and plain HTTP: ``/healthz``, the JSON API under ``/api/`` (``http_api``),
``/metrics`` (Prometheus text), and the static browser client under ``client/web/`` (``/``,
``/join/<code>`` and ``/ghost/<code>/<player id>`` serve its ``index.html``, ``/leaderboard`` its
``leaderboard.html``, ``/player/<id>`` its ``player.html``, ``/replay/<code>`` its ``replay.html``,
``/watch/<code>`` its ``watch.html``,
``/rules/<game>`` its ``rules.html``).

``Server`` listens, makes a ``ws_connection.Connection`` of each client, puts a gateway
session behind each websocket, and sweeps every connection now and then: keepalive pings
for the silent ones, closing the idle ones. ``WebSocketPeer`` is the gateway's handle on a
connection; ``HttpSite`` answers HTTP requests.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import mimetypes
import re
import socket
from collections.abc import Callable
from http import HTTPStatus
from pathlib import Path
from typing import Any, ClassVar

from websockets.http11 import Request, Response

from . import http_api, protocol
from .config import Config
from .gateway import Gateway, Session
from .ws_connection import Connection, http_response

log = logging.getLogger("solitaire_race.transport")

WS_PATH = "/ws"
# The web client's file names (client/web/): letters, digits, ".", "_" and "-", not
# starting with a dot, in a few folders at most.
_STATIC_NAME = re.compile(r"[A-Za-z0-9_-][A-Za-z0-9._-]{0,99}")
_MAX_DEPTH = 4


class WebSocketPeer:
    """A ``Peer`` over a websocket connection. Sends never block: they go straight to the
    socket's buffer, so one slow client cannot hold up a room. A client that stops reading
    is dropped once ``max_buffer`` bytes wait for it (it may reconnect)."""

    __slots__ = ("connection", "max_buffer", "on_drop")

    def __init__(self, connection: Connection, max_buffer: int, on_drop: Callable[[], None]) -> None:
        self.connection = connection
        self.max_buffer = max_buffer
        self.on_drop = on_drop

    def send(self, message: dict[str, Any] | str) -> None:
        transport = self.connection.transport
        if transport.is_closing():
            return
        if transport.get_write_buffer_size() > self.max_buffer:
            self.on_drop()
            transport.abort()  # no close frame could get through a full buffer anyway
            return
        self.connection.send_text(
            message.encode("utf-8") if isinstance(message, str) else protocol.encode_utf8(message)
        )

    def close(self, code: int, reason: str) -> None:
        self.connection.close(code, reason)

    def refuse(self, code: int, reason: str) -> None:
        """Close an abusive client at once: no message it sent is delivered any more, and its
        close frame is not waited for (which would read and parse its flood meanwhile)."""
        self.connection.fail(code, reason)

    def pause_reading(self) -> None:
        self.connection.hold(True)

    def resume_reading(self) -> None:
        self.connection.hold(False)


class Server:
    """Listens on ``config.host``/``config.port`` and serves every connection (``start``);
    ``close`` then ``wait_closed`` stop it."""

    def __init__(self, gateway: Gateway, config: Config) -> None:
        self.gateway = gateway
        self.config = config
        self.site = HttpSite(config.static_dir, gateway)
        self.connections: set[Connection] = set()
        self.sessions: dict[Connection, Session] = {}  # of the open websockets
        self.listener: asyncio.Server | None = None
        self.logger = NoFrameDumps(logging.getLogger("websockets.server"), {})
        self._tasks: set[asyncio.Task[Any]] = set()  # the sweep and the disconnects: kept, the loop holds tasks weakly
        self._closing = asyncio.Event()
        slow_clients_dropped = gateway.metrics.counter("solitaire_slow_clients_dropped_total")

        def dropped() -> None:
            slow_clients_dropped.inc()
            log.warning("dropped a client that does not read", extra={"fields": {"event": "slow_client_dropped"}})

        self._dropped = dropped

    async def start(self) -> None:
        loop = asyncio.get_running_loop()
        self.listener = await loop.create_server(self._connection, self.config.host, self.config.port)
        self._spawn(self._sweep())

    @property
    def port(self) -> int:
        assert self.listener is not None
        return int(self.listener.sockets[0].getsockname()[1])

    def _connection(self) -> Connection:
        connection = Connection(self, self.config.max_frame_bytes, self.config.handshake_timeout_s, self.logger)
        self.connections.add(connection)
        return connection

    # --- ws_connection.Site ----------------------------------------------------------------
    async def respond(self, request: Request) -> Response | None:
        if self._closing.is_set():  # a connection accepted as the server began to stop
            return http_response(HTTPStatus.SERVICE_UNAVAILABLE, b"shutting down\n", "text/plain; charset=utf-8")
        return await self.site.respond(request)

    def opened(self, connection: Connection) -> Callable[[str | bytes], None]:
        if self.config.socket_send_buffer:
            sock = connection.transport.get_extra_info("socket")
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, self.config.socket_send_buffer)
        peer = connection.transport.get_extra_info("peername")
        address = str(peer[0]) if isinstance(peer, tuple) and peer else ""
        header = self.config.client_address_header
        if header and connection.request is not None:  # behind a proxy that says who its client is
            given = connection.request.headers.get_all(header)
            address = given[-1].strip() if given else address  # the proxy's is the last one
        session = self.gateway.connect(WebSocketPeer(connection, self.config.max_send_buffer, self._dropped), address)
        self.sessions[connection] = session
        return self.gateway.receiver(session)

    def closed(self, connection: Connection) -> None:
        self.connections.discard(connection)
        session = self.sessions.pop(connection, None)
        if session is not None:
            self._spawn(self.gateway.disconnect(session))

    # --- keepalive and idle connections ------------------------------------------------
    async def _sweep(self) -> None:
        """Every few seconds: ping the websockets nothing came from for ``keepalive_s``, fail
        those that did not answer within ``keepalive_s`` more (code 1011: a client gone
        without closing its socket), and close those that sent no message for
        ``idle_timeout_s`` (code 4002). One sweep for all connections: a timeout around
        every read cost ~6% of the server's CPU per move (docs/performance.md).

        A connection that sent something since the last sweep counts as heard at this
        sweep, a little after it: so it is closed between the limit and the limit plus
        two sweeps after (an eighth of the idle timeout, a quarter of keepalive_s)."""
        config, loop = self.config, asyncio.get_running_loop()
        tick = min(config.idle_timeout_s / 8, config.keepalive_s / 4, 60.0)
        while not self._closing.is_set():
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._closing.wait(), timeout=tick)
            now = loop.time()
            for connection in list(self.sessions):
                if connection.active:
                    connection.active, connection.quiet_since = False, now
                elif now - connection.quiet_since >= config.idle_timeout_s:
                    connection.close(4002, "idle for too long")
                    continue
                if connection.heard or connection.held:  # held: the gateway stopped reading it, not the client
                    connection.heard, connection.heard_at, connection.ping_sent = False, now, None
                elif connection.ping_sent is not None:
                    if now - connection.ping_sent >= config.keepalive_s:
                        connection.fail(1011, "keepalive ping timeout")
                elif now - connection.heard_at >= config.keepalive_s:
                    connection.ping()
                    connection.ping_sent = now

    # --- stopping ------------------------------------------------------------------------
    def close(self) -> None:
        """Stop listening and close every connection: websockets with code 1001 (going
        away) unless the gateway closed them already, HTTP exchanges at once."""
        self._closing.set()
        if self.listener is not None:
            self.listener.close()
        for connection in list(self.connections):
            if connection in self.sessions:
                connection.close(1001, "server shutting down")
            elif connection.transport is not None:  # None: not yet set up; answered 503 (respond)
                connection.transport.close()

    async def wait_closed(self) -> None:
        """Until every connection is gone and the gateway has seen every session out."""
        if self.listener is not None:
            await self.listener.wait_closed()
        while self.connections or self._tasks:
            await asyncio.gather(
                *(c.wait_closed() for c in list(self.connections)), *list(self._tasks), return_exceptions=True
            )

    def _spawn(self, work: Any) -> None:
        task = asyncio.get_running_loop().create_task(work)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)


class HttpSite:
    """Answers plain HTTP requests: health check, JSON API, the browser client's files."""

    PAGES: ClassVar[dict[str, str]] = {"/": "/index.html", "/leaderboard": "/leaderboard.html"}

    def __init__(self, root: Path, gateway: Gateway) -> None:
        self.root = root.resolve()
        self.gateway = gateway

    async def respond(self, request: Request) -> Response | None:
        path, _, query = request.path.partition("?")
        if path == WS_PATH:
            return None  # let the websocket handshake proceed (a GET only: websockets says 405)
        response = await self._answer(path, query)
        if request.method == "HEAD":
            response.body = b""  # the GET's headers, Content-Length included
        return response

    async def _answer(self, path: str, query: str) -> Response:
        if path == "/healthz":
            return http_response(HTTPStatus.OK, b"ok\n", "text/plain; charset=utf-8")
        if path == "/metrics":
            body = self.gateway.metrics.render().encode("utf-8")
            return http_response(HTTPStatus.OK, body, "text/plain; version=0.0.4; charset=utf-8")
        if path.startswith("/api/"):
            status, data = await http_api.handle(self.gateway.queries, path, query)
            # msgspec: a long race's replay is megabytes, which json.dumps took 0.1-0.6 s to write
            # with the event loop stopped (the same JSON, without the spaces after , and :)
            body = protocol.encode_utf8(data)
            return http_response(HTTPStatus(status), body, "application/json; charset=utf-8")
        if path.startswith(("/join/", "/ghost/")):  # the app, which reads the address
            path = "/index.html"
        elif path.startswith("/player/"):
            path = "/player.html"  # a player's page: player.js reads the id from the address
        elif path.startswith("/watch/"):
            path = "/watch.html"  # a race's standings, live: watch.js reads the code from the address
        elif path.startswith("/replay/"):
            path = "/replay.html"  # a finished race played back: replay.js reads the code from the address
        elif path == "/rules" or path.startswith("/rules/"):
            path = "/rules.html"  # every game's rules page: rules.js reads the game from the address
        else:
            path = self.PAGES.get(path, path)
        found = self._static_file(path)
        if found is None:
            return http_response(HTTPStatus.NOT_FOUND, b"not found\n", "text/plain; charset=utf-8")
        name, body = found
        kind = mimetypes.guess_type(name)[0] or "application/octet-stream"
        if kind.startswith("text/") or kind in ("application/javascript", "application/json"):
            kind += "; charset=utf-8"
        return http_response(HTTPStatus.OK, body, kind)

    def _static_file(self, path: str) -> tuple[str, bytes] | None:
        """The name and content of the web client's file at ``path``, or None. Only a path
        made of names such as the client's own files have reaches the filesystem, so no
        request can make a lookup fail (a NUL byte, a name past the filesystem's 255 bytes)
        or name a hidden file; ``..`` is not a name, and a symlink must resolve inside the
        folder."""
        parts = path[1:].split("/")
        if len(parts) > _MAX_DEPTH or not all(_STATIC_NAME.fullmatch(part) for part in parts):
            return None
        try:
            file = self.root.joinpath(*parts).resolve()
            if file.is_relative_to(self.root) and file.is_file():
                return file.name, file.read_bytes()
        except (OSError, RuntimeError):  # gone meanwhile, unreadable, a symlink loop
            pass
        return None


class NoFrameDumps(logging.LoggerAdapter):  # type: ignore[type-arg]
    """websockets logs every frame at DEBUG, tokens included; never let it."""

    def isEnabledFor(self, level: int) -> bool:
        return level > logging.DEBUG and self.logger.isEnabledFor(level)


async def start(gateway: Gateway, config: Config) -> Server:
    """Start serving; the caller closes the returned server."""
    server = Server(gateway, config)
    await server.start()
    return server
