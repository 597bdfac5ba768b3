"""The websocket transport: the only module that imports ``websockets``.

One port serves both: websocket connections at ``/ws`` (each frame handed to the
``Gateway``), and plain HTTP through the server's ``process_request`` hook: ``/healthz``,
the JSON API under ``/api/`` (``http_api``), ``/metrics`` (Prometheus text), and the static browser client under
``client/web/`` (``/`` and ``/join/<code>`` serve its ``index.html``, ``/leaderboard`` its
``leaderboard.html``).

It also owns what reaches the gateway from a socket, and how fast: HTTP methods (GET and
HEAD only), static paths (the client's own files only), fragmented messages (64 frames at
most), and fairness (what one connection sent at once is served in turns, so that a flood
does not hold up the others; ``TURN_FRAMES``).
"""

from __future__ import annotations

import asyncio
import functools
import json
import logging
import mimetypes
import re
import socket
from collections.abc import Callable, Generator
from http import HTTPStatus
from pathlib import Path
from typing import Any, ClassVar

from websockets.asyncio.server import Server, ServerConnection, broadcast, serve
from websockets.datastructures import Headers
from websockets.frames import CloseCode, Frame, Opcode
from websockets.http11 import Request, Response
from websockets.protocol import Event

from . import http_api, protocol
from .config import Config
from .gateway import Gateway

log = logging.getLogger("solitaire_race.transport")

WS_PATH = "/ws"
SERVER_HEADER = "solitaire-race"
# Headers on every HTTP response. The web client is plain ES modules and stylesheets from
# this origin (its styles set from scripts go through the CSSOM, which style-src allows);
# the favicon is a data: URL; the websocket is same-origin ('self' covers ws: and wss:).
SECURITY_HEADERS = (
    ("Content-Security-Policy",
     "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; "
     "object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"),
    ("X-Frame-Options", "DENY"),  # frame-ancestors, for browsers without CSP level 2
    ("X-Content-Type-Options", "nosniff"),
    ("Referrer-Policy", "no-referrer"),  # a join link's code stays on this site
)
METHODS = (b"GET", b"HEAD")  # every path; anything else is 405
_REQUEST_STARTS = tuple(method + b" " for method in METHODS)  # a request line's first bytes
# The web client's file names (client/web/): letters, digits, ".", "_" and "-", not
# starting with a dot, in a few folders at most.
_STATIC_NAME = re.compile(r"[A-Za-z0-9_-][A-Za-z0-9._-]{0,99}")
_MAX_DEPTH = 4
MAX_FRAGMENTS = 64  # frames in one message: a message of 64 KiB in one-byte frames is an attack
# Fairness: what one connection may have served in one turn of the event loop. One read
# brings up to 256 KiB, tens of thousands of small frames, and websockets parses all it
# is given at once (~3 µs a frame) before its messages are served (more µs each), so a
# flood held everyone else up for as long as it took. A read is fed to websockets a slice
# at a time; once TURN_FRAMES frames (messages, websocket pings...) or TURN_BYTES bytes
# went through, the rest waits for the loop's next turn (after the other connections'
# reads), with this connection's reading paused meanwhile. At most TURN_FRAMES +
# SLICE_BYTES / 6 frames a turn (6 bytes: the smallest frame), about half a millisecond.
SLICE_BYTES = 512
TURN_FRAMES = 16
TURN_BYTES = 16 * 1024
# Read for every frame: a module constant is read in ~20 ns, ``Opcode.TEXT`` in ~90 ns on
# CPython 3.11 (measured).
_TEXT, _BINARY, _CONT = Opcode.TEXT, Opcode.BINARY, Opcode.CONT
_DATA = (_TEXT, _BINARY, _CONT)


class RaceConnection(ServerConnection):
    """A websockets server connection that hands each complete message to ``deliver`` as it
    arrives, in the event loop's read callback. websockets' own ``recv()`` queues every
    message and wakes the handler's task for it: about 6 µs a message, a tenth of a move's
    cost at saturation (docs/performance.md, "Design decisions"). Everything else
    (handshake, control frames, closing, size limits) stays websockets'."""

    # Slots: one more key in the connection's big instance dict doubled its size (1.6 KB
    # per connection, measured with tracemalloc).
    __slots__ = ("active", "deliver", "early", "fragments", "held", "opcode", "quiet_since", "unread")

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.deliver: Callable[[str | bytes], None] | None = None  # set by ``attach``
        # For the idle sweep: a message came since the last sweep, and since when a sweep
        # has seen none. A flag, not the loop's clock: reading the clock for every message
        # cost ~500 instructions (callgrind, uvloop), 1.4% of the transport's work for a move.
        self.active = False
        self.quiet_since = 0.0
        self.early: tuple[str | bytes, ...] = ()  # messages that came before ``attach``
        self.fragments: tuple[bytes | bytearray | memoryview, ...] = ()  # of a message sent in several frames
        self.opcode = _TEXT  # of that message: its first frame's
        self.unread = b""  # the rest of a read, for the loop's next turn
        self.held = False  # the gateway asked to stop reading (its frame queue is full)
        # The sans-I/O protocol parses the request with a generator it just started; ours
        # runs first (it takes over the same reader, which has read nothing yet).
        self.protocol.parser = self._screen_method()
        next(self.protocol.parser)

    def _screen_method(self) -> Generator[None, None, None]:
        """Refuse every HTTP method but GET and HEAD with 405, then hand over to websockets'
        request parser. That parser reads a request of any method and ``HttpSite`` would
        answer it as a GET, except a request with a body (a form's POST), which it drops
        without an answer."""
        protocol = self.protocol
        reader = protocol.reader
        while len(reader.buffer) < max(map(len, _REQUEST_STARTS)) and not reader.eof:
            yield  # peek: the request stays in the buffer for the parser
        if reader.buffer and not reader.buffer.startswith(_REQUEST_STARTS):
            response = http_response(
                HTTPStatus.METHOD_NOT_ALLOWED, b"method not allowed\n", "text/plain; charset=utf-8"
            )
            response.headers["Allow"] = ", ".join(m.decode() for m in METHODS)
            response.headers["Connection"] = "close"  # the request's body, if any, is not read
            response.headers["Server"] = SERVER_HEADER
            protocol.send_response(response)  # hands the rest of the stream to a discarding parser
            yield
        yield from protocol.parse()

    def data_received(self, data: bytes) -> None:
        # Every read comes here, a move at a time at saturation: kept to a test and a call.
        if self.unread or len(data) > SLICE_BYTES:
            self._feed(self.unread + data if self.unread else data)
        else:
            _data_received(self, data)  # a message or a few: at once

    def _feed(self, data: bytes) -> None:
        """Hand ``data`` to websockets a slice at a time, until this turn's budget is spent;
        then keep the rest for the loop's next turn, not reading meanwhile."""
        protocol, size, fed, frames = self.protocol, len(data), 0, 0
        while fed < size and frames < TURN_FRAMES and fed < TURN_BYTES:
            # Parsed first, to count the frames the slice held (websocket pings too) without
            # counting every message on the common path; then websockets handles them as
            # for any read (replies, closing, the events), the slice already in its buffer.
            protocol.receive_data(data[fed : fed + SLICE_BYTES])
            frames += len(protocol.events)
            _data_received(self, b"")
            fed += SLICE_BYTES
        # Once this side has ended (a failed connection), websockets discards what comes.
        self.unread = data[fed:] if not (self.transport.is_closing() or self.protocol.eof_sent) else b""
        if self.unread:
            self.loop.call_soon(self._next_turn)
        self._reading()

    def _next_turn(self) -> None:
        data, self.unread = self.unread, b""
        if data and not self.transport.is_closing():  # not lost meanwhile
            self._feed(data)

    def eof_received(self) -> None:
        # Reading is paused while a read waits for its next turn, so the end of the stream
        # cannot come before it; if it ever does, the data goes first.
        if self.unread:
            data, self.unread = self.unread, b""
            _data_received(self, data)
        super().eof_received()

    def hold(self, held: bool) -> None:
        """Stop reading (``True``) or read again, for the gateway's flow control."""
        self.held = held
        self._reading()

    def _reading(self) -> None:
        """Read while neither the gateway nor a read waiting for its turn holds it back."""
        transport = self.transport
        if transport.is_closing():
            return
        if self.held or self.unread:
            transport.pause_reading()
        else:
            transport.resume_reading()

    def attach(self, deliver: Callable[[str | bytes], None]) -> None:
        """From now on give every message to ``deliver``, starting with any already here."""
        self.deliver = deliver
        self.quiet_since = self.loop.time()
        early, self.early = self.early, ()
        for message in early:
            deliver(message)

    def process_event(self, event: Event) -> None:
        if type(event) is not Frame or event.opcode not in _DATA:
            super().process_event(event)  # the handshake's request, pings, pongs, close
            return
        opcode: Opcode
        if event.fin and event.opcode is not _CONT:  # a whole message in one frame
            data, opcode = event.data, event.opcode
        else:
            if event.opcode is not _CONT:
                self.opcode = event.opcode
            self.fragments += (event.data,)
            if not event.fin:
                if len(self.fragments) >= MAX_FRAGMENTS:  # this frame is not the last: more to come
                    self._fail(CloseCode.MESSAGE_TOO_BIG, "too many fragments")
                return
            data, opcode, self.fragments = b"".join(self.fragments), self.opcode, ()
        if opcode is _BINARY:
            message: str | bytes = bytes(data)
        else:
            try:
                message = str(data, "utf-8")
            except UnicodeDecodeError as exc:
                self._fail(CloseCode.INVALID_DATA, f"{exc.reason} at position {exc.start}")
                return
        self.active = True
        if self.deliver is None:
            self.early += (message,)
            return
        try:
            self.deliver(message)
        except Exception:  # a bug: this message is lost, the connection and the loop carry on
            log.exception("delivering a message failed")

    def _fail(self, code: CloseCode | int, reason: str) -> None:
        """Close at once: the close frame, then the end of the stream. What the client still
        sends is read only to see its end of the stream (websockets discards it): reading
        stays paused otherwise, even by the gateway, and the connection never closes."""
        self.fragments, self.unread, self.held = (), b"", False
        self.protocol.fail(code, reason)
        self.send_data()  # the close frame: data_received sent its output before the events
        self._reading()

    def refuse(self, code: int, reason: str) -> None:
        """Close an abusive client at once: no message it sent is delivered any more, and its
        close frame is not waited for (which would read and parse its flood meanwhile)."""
        self.deliver = _ignore
        self._fail(code, reason)


_data_received = ServerConnection.data_received  # websockets' own: super() cost ~1,100 instructions a read


def _ignore(message: str | bytes) -> None:
    """``deliver`` of a connection refused for abuse."""


class WebSocketPeer:
    """A ``Peer`` over a websockets connection. Sends never block: ``broadcast`` writes
    straight to the transport, so one slow client cannot hold up a room. A client that
    stops reading is dropped once ``max_buffer`` bytes wait for it (it may reconnect)."""

    __slots__ = ("connection", "max_buffer", "on_drop")

    def __init__(self, connection: RaceConnection, max_buffer: int, on_drop: Callable[[], None]) -> None:
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
        broadcast((self.connection,), message if isinstance(message, str) else protocol.encode_utf8(message), text=True)

    def close(self, code: int, reason: str) -> None:
        asyncio.get_running_loop().create_task(self.connection.close(code, reason))

    def refuse(self, code: int, reason: str) -> None:
        self.connection.refuse(code, reason)

    def pause_reading(self) -> None:
        self.connection.hold(True)

    def resume_reading(self) -> None:
        self.connection.hold(False)


class HttpSite:
    """Answers plain HTTP requests: health check, JSON API, the browser client's files."""

    PAGES: ClassVar[dict[str, str]] = {"/": "/index.html", "/leaderboard": "/leaderboard.html"}

    def __init__(self, root: Path, gateway: Gateway) -> None:
        self.root = root.resolve()
        self.gateway = gateway

    async def __call__(self, connection: ServerConnection, request: Request) -> Response | None:
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
            body = json.dumps(data, ensure_ascii=False).encode("utf-8")
            return http_response(HTTPStatus(status), body, "application/json; charset=utf-8")
        path = "/index.html" if path.startswith("/join/") else self.PAGES.get(path, path)
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


def http_response(status: HTTPStatus, body: bytes, content_type: str) -> Response:
    headers = Headers(
        [
            ("Content-Type", content_type), ("Content-Length", str(len(body))), ("Cache-Control", "no-cache"),
            *SECURITY_HEADERS,
        ]
    )
    return Response(status.value, status.phrase, headers, body)


class NoFrameDumps(logging.LoggerAdapter):  # type: ignore[type-arg]
    """websockets logs every frame at DEBUG, tokens included; never let it."""

    def isEnabledFor(self, level: int) -> bool:
        return level > logging.DEBUG and self.logger.isEnabledFor(level)


async def start(gateway: Gateway, config: Config) -> Server:
    """Start serving; the caller closes the returned server."""

    slow_clients_dropped = gateway.metrics.counter("solitaire_slow_clients_dropped_total")

    def dropped() -> None:
        slow_clients_dropped.inc()
        log.warning("dropped a client that does not read", extra={"fields": {"event": "slow_client_dropped"}})

    open_connections: set[RaceConnection] = set()  # for the idle sweep
    loop = asyncio.get_running_loop()

    async def handler(connection: ServerConnection) -> None:
        assert isinstance(connection, RaceConnection)
        if config.socket_send_buffer:
            sock = connection.transport.get_extra_info("socket")
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, config.socket_send_buffer)
        address = connection.remote_address[0] if connection.remote_address else ""
        session = gateway.connect(WebSocketPeer(connection, config.max_send_buffer, dropped), str(address))
        open_connections.add(connection)
        try:
            connection.attach(functools.partial(gateway.receive, session))
            await connection.wait_closed()
        finally:
            open_connections.discard(connection)
            await gateway.disconnect(session)

    server = await serve(
        handler,
        config.host,
        config.port,
        process_request=HttpSite(config.static_dir, gateway),
        create_connection=RaceConnection,
        compression=None,  # small messages: deflate costs more than it saves (docs/performance)
        max_size=config.max_frame_bytes,
        server_header=SERVER_HEADER,
        logger=NoFrameDumps(logging.getLogger("websockets.server"), {}),
    )
    # Kept: the loop holds tasks only weakly. It ends by itself once the server has closed.
    sweep = loop.create_task(close_idle(server, open_connections, config.idle_timeout_s))
    _background.add(sweep)
    sweep.add_done_callback(_background.discard)
    return server


async def close_idle(server: Server, connections: set[RaceConnection], idle_s: float) -> None:
    """Close connections that sent nothing for ``idle_s`` (code 4002), checking a few times
    per period, until the server has closed. One sweep for all connections: a timeout
    around every ``recv`` cost ~6% of the server's CPU per move (docs/performance.md).

    A connection that sent a message since the last sweep is quiet from this sweep on, a
    little after its message: it is closed between ``idle_s`` and ``idle_s`` plus two
    sweeps after it (a quarter of the period at most), never before."""
    loop = asyncio.get_running_loop()
    closed = asyncio.ensure_future(server.wait_closed())
    while not closed.done():
        await asyncio.wait([closed], timeout=min(idle_s / 8, 60.0))
        now = loop.time()
        for connection in list(connections):
            if connection.active:
                connection.active, connection.quiet_since = False, now
            elif now - connection.quiet_since >= idle_s:
                connections.discard(connection)  # closed once
                closing = loop.create_task(connection.close(4002, "idle for too long"))
                _background.add(closing)
                closing.add_done_callback(_background.discard)


_background: set[asyncio.Task[Any]] = set()  # tasks the transport starts and no one awaits


def bound_port(server: Server) -> int:
    return int(next(iter(server.sockets)).getsockname()[1])
