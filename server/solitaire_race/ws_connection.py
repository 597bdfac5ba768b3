"""One client connection: a TCP stream driven by websockets' sans-I/O ``ServerProtocol``.

websockets documents its sans-I/O layer for servers that do their own I/O: the protocol
object parses bytes into events (the HTTP request, then frames) and turns what we send into
bytes; this module moves those bytes between it and an asyncio transport, and owns what
websockets leaves to such an integration:

- the opening handshake: only GET and HEAD reach websockets' parser (anything else is 405);
  the request goes to the ``Site``, which answers it over HTTP or lets it upgrade;
- messages: frames put together (64 frames a message at most), text decoded as UTF-8, each
  message handed to ``deliver`` as it arrives, in the read callback (no task per message);
- fairness: what one connection sent at once is served in turns (``TURN_FRAMES``), so a
  flood does not hold up the others;
- timeouts: the opening handshake, and the closing one, within ``handshake_timeout_s``.

Keepalive pings and idle connections are the server's (``transport.close_quiet``): one
sweep over every connection instead of a timer per connection.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from http import HTTPStatus
from typing import Protocol, cast

from websockets.datastructures import Headers
from websockets.frames import CloseCode, Frame, Opcode
from websockets.http11 import Request, Response
from websockets.protocol import State
from websockets.server import ServerProtocol
from websockets.typing import LoggerLike

log = logging.getLogger("solitaire_race.transport")

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
_PEEK = max(map(len, _REQUEST_STARTS))
_END_OF_REQUEST = b"\r\n\r\n"  # a GET or HEAD has no body: its head ends the request
MAX_REQUEST_BYTES = 64 * 1024  # past this, websockets sees it all (and refuses it: its lines are shorter)
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
# Enum members read for every frame, bound to names once (the one speed idiom of the move
# path, explained in docs/performance.md, "Enum members bound to names").
_TEXT, _BINARY, _CONT = Opcode.TEXT, Opcode.BINARY, Opcode.CONT
_OPEN, _CONNECTING = State.OPEN, State.CONNECTING


class Site(Protocol):
    """What a connection asks of the server it belongs to."""

    async def respond(self, request: Request) -> Response | None:
        """An HTTP request's response, or None to accept it as a websocket handshake."""

    def opened(self, connection: Connection) -> Callable[[str | bytes], None]:
        """A websocket is open: return what takes its messages from now on."""

    def closed(self, connection: Connection) -> None:
        """The connection is gone (called once, for every connection)."""


class Connection(asyncio.Protocol):
    """An asyncio protocol around a ``ServerProtocol``: see the module's docstring."""

    # Slots: thousands of these live at once, and each attribute read is on a move's path.
    __slots__ = (
        "active", "closed", "deadline", "deliver", "fragments", "head", "heard", "heard_at", "held",
        "loop", "opcode", "ping_sent", "protocol", "quiet_since", "request", "responding", "screened", "site",
        "timeout", "transport", "unread",
    )

    def __init__(self, site: Site, max_size: int, timeout: float, logger: LoggerLike) -> None:
        self.site = site
        self.timeout = timeout  # for each handshake: opening (request to answer), closing
        self.protocol = ServerProtocol(max_size=max_size, logger=logger)
        self.loop = asyncio.get_running_loop()
        self.transport: asyncio.Transport = None  # type: ignore[assignment]  # connection_made sets it
        self.closed: asyncio.Future[None] = self.loop.create_future()  # done once the connection is lost
        self.deliver: Callable[[str | bytes], None] | None = None  # set once the websocket is open
        self.request: Request | None = None  # the handshake's request, once the websocket is open
        self.head = b""  # the request, until its end; then what came after it, until answered
        self.screened = False  # its method was seen to be GET or HEAD
        self.responding: asyncio.Task[None] | None = None  # the Site working out a response
        self.deadline: asyncio.TimerHandle | None = None  # for the handshake under way, if any
        self.fragments: tuple[bytes, ...] = ()  # of a message sent in several frames
        self.opcode = Opcode.TEXT  # of that message: its first frame's
        self.unread = b""  # the rest of a read, for the loop's next turn
        self.held = False  # the gateway asked to stop reading (its frame queue is full)
        # For the server's sweep: bytes came since the last sweep (``heard``), a message did
        # (``active``), since when a sweep has seen no message, and when a keepalive ping
        # went unanswered. Flags, not the loop's clock: reading the clock for every message
        # cost ~500 instructions (callgrind, uvloop), 1.4% of the transport's work for a move.
        self.heard = self.active = False
        self.quiet_since = self.heard_at = self.loop.time()
        self.ping_sent: float | None = None

    # --- asyncio.Protocol ----------------------------------------------------------------
    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = cast(asyncio.Transport, transport)  # a stream's (uvloop's is not a subclass)
        self.deadline = self.loop.call_later(self.timeout, self.transport.abort)

    def data_received(self, data: bytes) -> None:
        # Every read comes here, a move at a time at saturation: the common case first.
        self.heard = True
        state = self.protocol.state
        if state is _OPEN and not self.unread and len(data) <= SLICE_BYTES:
            self._receive(data)  # a message or a few: at once
        elif state is _CONNECTING:
            self._request_bytes(data)
        else:  # a big read, a read after one left for the next turn, or the closing handshake
            self._feed(self.unread + data if self.unread else data)

    def eof_received(self) -> None:
        # Reading is paused while a read waits for its next turn, so the end of the stream
        # cannot come before it; if it ever does, the data goes first.
        if self.unread:
            data, self.unread = self.unread, b""
            self._receive(data)
        self.protocol.receive_eof()
        self._send_out()
        # Returns None: asyncio closes the transport (websockets never writes after the
        # end of the client's stream: its closing handshake is over by then).

    def connection_lost(self, exc: Exception | None) -> None:
        self.protocol.receive_eof()  # idempotent: the protocol's state is now CLOSED
        if self.deadline is not None:
            self.deadline.cancel()
        if self.responding is not None:
            self.responding.cancel()
        self.deliver, self.unread, self.fragments = None, b"", ()
        self.closed.set_result(None)
        self.site.closed(self)

    # --- the opening handshake -----------------------------------------------------------
    def _request_bytes(self, data: bytes) -> None:
        """Screen a request's method, then let websockets parse the request, and only the
        request: its parser would go on into frames (and answer a ping before the 101).
        What came after the request waits in ``head`` for the answer: frames, once the
        websocket is open; nothing, after a plain HTTP answer. websockets' parser reads a
        request of any method, and a body makes it drop the connection without an answer
        (a form's POST): the client should learn that only GET and HEAD are served."""
        self.head += data
        if not self.screened:
            if len(self.head) < _PEEK:
                return  # peek at the method
            self.screened = True
            if not self.head.startswith(_REQUEST_STARTS):
                self.head = b""
                self._method_not_allowed()
                return
        end = self.head.find(_END_OF_REQUEST)
        if end < 0 and len(self.head) <= MAX_REQUEST_BYTES:
            return  # more of the request to come
        cut = len(self.head) if end < 0 else end + len(_END_OF_REQUEST)
        request, self.head = self.head[:cut], self.head[cut:]
        self.protocol.receive_data(request)
        events = self.protocol.events_received()
        if events and isinstance(events[0], Request):
            self.responding = self.loop.create_task(self._respond(events[0]))
            self.transport.pause_reading()  # until the answer is out
            return
        # An unreadable request: websockets answered it (414, 431) or ends the stream.
        self.head = b""
        self._send_out()
        self._reading()  # to see the end of the client's stream

    def _method_not_allowed(self) -> None:
        response = http_response(HTTPStatus.METHOD_NOT_ALLOWED, b"method not allowed\n", "text/plain; charset=utf-8")
        response.headers["Allow"] = ", ".join(m.decode() for m in METHODS)
        response.headers["Connection"] = "close"  # the request's body, if any, is not read
        # websockets' own path for a response it did not produce (process_request's): it
        # sends it, ends its side of the stream and discards what still comes.
        self.protocol.send_response(response)
        self._send_out()
        self._reading()  # to see the end of the client's stream (websockets discards the rest)

    async def _respond(self, request: Request) -> None:
        """Answer ``request`` as the ``Site`` says: over HTTP, or by opening the websocket."""
        try:
            response = await self.site.respond(request)
        except Exception:  # a bug: the client gets a 500, the server carries on
            log.exception("answering an HTTP request failed")
            response = http_response(HTTPStatus.INTERNAL_SERVER_ERROR, b"internal error\n", "text/plain; charset=utf-8")
        self.responding = None
        if self.transport.is_closing():
            return  # the client went away meanwhile
        if response is None:
            self.request = request
            response = self.protocol.accept(request)  # 101, or websockets' reason not to
        if "Server" not in response.headers:
            response.headers["Server"] = SERVER_HEADER
        self.protocol.send_response(response)
        self._send_out()
        rest, self.head = self.head, b""
        if self.protocol.state is not _OPEN:  # a plain HTTP answer: websockets ends the stream after it
            self._reading()  # to see the end of the client's (what it sent after is not read)
            return
        assert self.deadline is not None
        self.deadline.cancel()
        self.deadline = None
        try:
            self.deliver = self.site.opened(self)
        except Exception:  # a bug: this connection fails, the server carries on
            log.exception("opening a session failed")
            self.fail(CloseCode.INTERNAL_ERROR, "internal error")
            return
        self._reading()
        if rest:  # frames the client sent with its request, before it saw the 101
            self.data_received(rest)

    # --- frames in -----------------------------------------------------------------------
    def _receive(self, data: bytes) -> int:
        """Feed ``data`` to websockets, send what it answers (pongs, a close frame), and
        serve the frames it found; return how many."""
        protocol = self.protocol
        protocol.receive_data(data)
        events = protocol.events_received()
        self._send_out()
        frame = self._frame
        for event in events:
            frame(event)  # type: ignore[arg-type]  # once open, events are frames
        if protocol.state is not _OPEN:
            self._watch_close()
        return len(events)

    def _feed(self, data: bytes) -> None:
        """Hand ``data`` to websockets a slice at a time, until this turn's budget is spent;
        then keep the rest for the loop's next turn, not reading meanwhile."""
        size, fed, frames = len(data), 0, 0
        while fed < size and frames < TURN_FRAMES and fed < TURN_BYTES:
            # Every frame counts (websocket pings too). While closing, websockets still reads
            # up to the client's close frame, then discards what follows.
            frames += self._receive(data[fed : fed + SLICE_BYTES])
            fed += SLICE_BYTES
        # After ``fail`` (no ``deliver`` any more) websockets only discards: nothing to keep.
        self.unread = data[fed:] if self.deliver is not None and not self.transport.is_closing() else b""
        if self.unread:
            self.loop.call_soon(self._next_turn)
        self._reading()

    def _next_turn(self) -> None:
        data, self.unread = self.unread, b""
        if data and not self.transport.is_closing():  # not lost meanwhile
            self._feed(data)

    def _frame(self, frame: Frame) -> None:
        """One frame from websockets: a message (or part of one) goes to ``deliver``;
        websockets has already answered pings and close frames."""
        opcode = frame.opcode
        if frame.fin and (opcode is _TEXT or opcode is _BINARY):  # a whole message
            data = frame.data
        elif opcode is _TEXT or opcode is _BINARY or opcode is _CONT:
            if opcode is not _CONT:
                self.opcode = opcode
            self.fragments += (bytes(frame.data),)
            if not frame.fin:
                if len(self.fragments) >= MAX_FRAGMENTS:  # this frame is not the last: more to come
                    self.fail(CloseCode.MESSAGE_TOO_BIG, "too many fragments")
                return
            data, opcode, self.fragments = b"".join(self.fragments), self.opcode, ()
        else:
            return  # ping, pong, close
        if opcode is _BINARY:
            message: str | bytes = bytes(data)
        else:
            try:
                message = str(data, "utf-8")
            except UnicodeDecodeError as exc:
                self.fail(CloseCode.INVALID_DATA, f"{exc.reason} at position {exc.start}")
                return
        self.active = True
        if self.deliver is None:
            return  # failed or closed meanwhile
        try:
            self.deliver(message)
        except Exception:  # a bug: this message is lost, the connection and the loop carry on
            log.exception("delivering a message failed")

    # --- flow control --------------------------------------------------------------------
    def hold(self, held: bool) -> None:
        """Stop reading (``True``) or read again, for the gateway's flow control."""
        self.held = held
        self._reading()

    def _reading(self) -> None:
        """Read while neither the gateway nor a read waiting for its turn holds it back."""
        transport = self.transport
        if transport.is_closing():
            return
        # Once closing, the gateway's hold ends: reading goes on to see the client's close
        # frame and the end of its stream.
        if self.unread or (self.held and self.protocol.state is _OPEN):
            transport.pause_reading()
        else:
            transport.resume_reading()

    # --- frames out ----------------------------------------------------------------------
    def send_text(self, data: bytes) -> None:
        """Send one message, already encoded as UTF-8; nothing once the websocket closes."""
        if self.protocol.state is _OPEN:
            self.protocol.send_text(data)
            self._send_out()

    def ping(self) -> None:
        if self.protocol.state is _OPEN:
            self.protocol.send_ping(b"")
            self._send_out()

    def close(self, code: int, reason: str) -> None:
        """Start the closing handshake; the connection is lost once the client answers, or
        after ``timeout``."""
        if self.protocol.state is _OPEN:
            self.protocol.send_close(code, reason)
            self._send_out()
            self._watch_close()
            self._reading()

    def fail(self, code: CloseCode | int, reason: str) -> None:
        """Close at once: the close frame, then the end of this side's stream. What the
        client still sends is read only to see its end of the stream (websockets discards
        it): reading is not paused any more, even by the gateway."""
        self.deliver, self.fragments, self.unread, self.held = None, (), b"", False
        if self.protocol.state is _OPEN:
            self.protocol.fail(code, reason)
            self._send_out()
        self._watch_close()
        self._reading()

    def _send_out(self) -> None:
        """Write what websockets has to send; its empty chunk means: end this side's stream."""
        for chunk in self.protocol.data_to_send():
            if chunk:
                self.transport.write(chunk)
            elif self.transport.can_write_eof():
                self.transport.write_eof()
            else:  # a transport that cannot half-close (TLS)
                self.transport.close()

    def _watch_close(self) -> None:
        """Once websockets expects the stream to end, give the client
        ``timeout`` to end its side."""
        if self.deadline is None and self.protocol.close_expected() and not self.transport.is_closing():
            self.deadline = self.loop.call_later(self.timeout, self.transport.abort)

    async def wait_closed(self) -> None:
        await asyncio.shield(self.closed)


def http_response(status: HTTPStatus, body: bytes, content_type: str) -> Response:
    """A plain HTTP response, with the headers every response carries."""
    headers = Headers(
        [
            ("Content-Type", content_type), ("Content-Length", str(len(body))), ("Cache-Control", "no-cache"),
            ("Server", SERVER_HEADER), *SECURITY_HEADERS,
        ]
    )
    return Response(status.value, status.phrase, headers, body)
