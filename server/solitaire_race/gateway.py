"""The connection gateway: sessions, their frames served in order, decoding and dispatching
requests, encoding replies.

The transport hands it each connection's ``Peer`` and frames (``connect``, then each frame
to ``receiver(session)``, ``disconnect``). Each frame is rate-limited, decoded and checked (``protocol.py``), then
answered here (identity: ``identity.py``; read-only data: ``queries.py``) or handed to
``Races`` with the player it comes from. Races reach players back through the ``Outbox``,
by player id: the gateway is the only part that knows which connection a player is on.
Every failure becomes an error message to that connection alone; nothing escapes.
"""

from __future__ import annotations

import asyncio
import functools
import logging
from collections.abc import Callable, Coroutine
from dataclasses import dataclass, field
from typing import Any, Protocol

from . import protocol as p
from .config import Config
from .identity import Identity
from .interpreter import RACE_MOVED_MESSAGE
from .observe import Metrics, event
from .queries import Queries
from .races import Races
from .room import RoomError
from .store import Fenced, PlayerRecord, StorageUnavailable

log = logging.getLogger("solitaire_race.gateway")

# A session's frames waiting to be served: past HIGH its peer stops reading (as websockets'
# own queue does, at 16 messages), and it reads again once they are down to LOW.
INBOX_HIGH, INBOX_LOW = 16, 4
NEW_IDENTITY_ADDRESSES = 100_000  # addresses whose new identities are counted, at most


class Peer(Protocol):
    def send(self, message: dict[str, Any] | str) -> None:
        """Send a message (a str is one already encoded as JSON); never blocks."""

    def close(self, code: int, reason: str) -> None: ...

    def refuse(self, code: int, reason: str) -> None:
        """Close at once, delivering nothing more from this client (abuse)."""

    def pause_reading(self) -> None:
        """Stop taking frames from this client for now (flow control)."""

    def resume_reading(self) -> None: ...


class TokenBucket:
    """``rate`` tokens per second, holding at most ``burst``: the per-connection rate limit."""

    __slots__ = ("burst", "rate", "stamp", "tokens")

    def __init__(self, rate: float, burst: int, now: float) -> None:
        self.rate, self.burst, self.tokens, self.stamp = rate, burst, float(burst), now

    def allow(self, now: float) -> bool:
        self.tokens = min(self.burst, self.tokens + (now - self.stamp) * self.rate)
        self.stamp = now
        if self.tokens >= 1:
            self.tokens -= 1
            return True
        return False

    def full(self, now: float) -> bool:
        """As if never used: nothing to remember about it."""
        return self.tokens + (now - self.stamp) * self.rate >= self.burst


class FrameQueue:
    """One connection's frames, served one at a time, in the order they arrived.

    Its invariants (each tested in tests/test_gateway.py):
    1. at most one frame is being served at a time: a frame whose serving cannot finish at
       once (it awaits the store, or its move awaits the log commit) keeps the queue
       ``busy`` (``serve`` returns True) until ``done``;
    2. frames that arrive meanwhile, even while a frame is being served (a reply may bring
       the next at once), wait, and are served in arrival order, as soon as the one before
       them is done;
    3. with ``high`` frames waiting the peer stops reading, and reads again once they are
       down to ``low``;
    4. after ``close`` no waiting frame is served, so none is answered: a client resends
       what it never saw answered;
    5. ``drained()`` returns once nothing is being served or waiting.
    """

    __slots__ = ("_drained", "busy", "closed", "high", "low", "paused", "peer", "serve", "waiting")

    def __init__(
        self, serve: Callable[[str | bytes], bool], peer: Peer, high: int = INBOX_HIGH, low: int = INBOX_LOW
    ) -> None:
        # Serves one frame: at once (returns False), or later (returns True, then done() is called).
        self.serve = serve
        self.peer = peer
        self.high, self.low = high, low
        self.busy = False
        self.waiting: list[str | bytes] = []
        self.paused = False
        self.closed = False
        self._drained: list[asyncio.Future[None]] = []

    def push(self, frame: str | bytes) -> None:
        """A frame arrived: served now, or after those before it."""
        if self.closed:
            return
        if not self.busy:
            self.busy = True  # from now: a frame pushed while this one is served waits behind it
            if not self.serve(frame):
                self.done()
            return
        self.waiting.append(frame)
        if len(self.waiting) >= self.high and not self.paused:
            self.paused = True
            self.peer.pause_reading()

    def done(self) -> None:
        """The frame being served is done: serve those that waited, in order."""
        waiting = self.waiting
        while waiting and not self.closed:
            frame = waiting.pop(0)
            if self.paused and len(waiting) <= self.low:
                self.paused = False
                self.peer.resume_reading()
            if self.serve(frame):
                return  # it finishes later (busy still): done() is called again then
        self.busy = False
        if self._drained:
            drained, self._drained = self._drained, []
            for future in drained:
                if not future.done():
                    future.set_result(None)

    def close(self) -> None:
        self.closed = True
        self.waiting.clear()

    async def drained(self) -> None:
        if self.busy or self.waiting:
            future: asyncio.Future[None] = asyncio.get_running_loop().create_future()
            self._drained.append(future)
            await future


@dataclass(eq=False, slots=True)
class Session:
    """One connection: who it is, its rate limit, and its frames."""

    peer: Peer
    bucket: TokenBucket
    id: int
    address: str = ""  # the client's IP address (a proxy's, behind one)
    frames: FrameQueue = field(init=False)
    player: PlayerRecord | None = None
    # Messages refused by the rate limit, less ``rate_per_s`` for every second since: a
    # flood piles them up, a client over the limit now and then never does.
    refused: float = 0.0
    refused_at: float = 0.0  # when the last was refused
    task: asyncio.Task[None] | None = None  # the request being awaited, if any
    # Told (request id, error) once a move that held the queue is answered (Gateway._moved).
    moved: Callable[[Any, BaseException | None], None] = field(init=False)


class ClusterPresence(Protocol):
    """What the gateway asks of the other nodes of a cluster (``cluster/presence.py``)."""

    async def signed_in(self, player_id: int) -> None: ...

    async def new_identity_allowed(self, address: str, per_hour: int) -> bool | None: ...


class Outbox:
    """Who is connected now, by player id: how races reach players (``interpreter.Delivery``).
    A connection watching a race is under its own id negated (``Gateway._watch``)."""

    def __init__(self) -> None:
        self.online: dict[int, Session] = {}  # player id (or -connection id) -> their current connection

    def send(self, player_id: int, message: dict[str, Any] | str) -> None:
        session = self.online.get(player_id)
        if session is not None:
            session.peer.send(message)

    def close(self, player_id: int, code: int, reason: str) -> None:
        session = self.online.get(player_id)
        if session is not None:
            session.peer.close(code, reason)


# The replies of the requests answered with data: their message type.
_REPLY_TYPES: dict[type, str] = {
    p.Ping: "pong", p.ListGames: "games", p.ListRaces: "races", p.Daily: "daily_challenges",
    p.Leaderboard: "leaderboard_page", p.Profile: "player_profile", p.Hint: "hint_result", p.Replay: "replay_data",
    p.ParLine: "replay_data",
}


class Gateway:
    def __init__(
        self, *, config: Config, clock: Callable[[], float], identity: Identity, queries: Queries, races: Races,
        outbox: Outbox, metrics: Metrics,
    ) -> None:
        self.config = config
        self.clock = clock
        self.identity = identity
        self.queries = queries
        self.races = races
        self.outbox = outbox
        self.metrics = metrics
        self.sessions = 0  # open connections
        self._next_session = 0
        self._frames_counted = metrics.counter("solitaire_messages_total")
        self._new_identities: dict[str, TokenBucket] = {}  # client address -> its new identities' bucket
        self.cluster: ClusterPresence | None = None  # on a node of a cluster: what the nodes tell each other
        # Requests answered with data (the reply's fields), and those that act on a race
        # (which answer through the outbox); ``move`` has a path of its own (``Races.move``).
        self._answers: dict[type, Callable[[Session, Any], Coroutine[Any, Any, dict[str, Any]]]] = {
            p.Ping: self._ping, p.ListGames: self._list_games, p.ListRaces: self._list_races, p.Daily: self._daily,
            p.Leaderboard: self._leaderboard, p.Profile: self._profile, p.Hint: self._hint, p.Replay: self._replay,
            p.ParLine: self._par_line,
        }
        self._actions: dict[type, Callable[[PlayerRecord, Any], Coroutine[Any, Any, None]]] = {
            p.CreateRace: races.create_race, p.JoinRace: races.join_race, p.LeaveRace: races.leave_race,
            p.Ready: races.ready, p.StartRace: races.start_race, p.Resign: races.resign,
            p.StartDaily: races.start_daily, p.Rematch: races.rematch, p.RaceGhost: races.race_ghost,
        }
        metrics.gauge("solitaire_connections", "Open websocket connections.", lambda: [({}, self.sessions)])
        metrics.gauge(
            "solitaire_players_online", "Identified players connected.",
            lambda: [({}, sum(1 for key in self.outbox.online if key > 0))],  # spectators are under negative ids
        )

    # --- connections -------------------------------------------------------------------
    def connect(self, peer: Peer, address: str = "") -> Session:
        self.sessions += 1
        self._next_session += 1
        bucket = TokenBucket(self.config.rate_per_s, self.config.rate_burst, self.clock())
        session = Session(peer, bucket, self._next_session, address)
        session.frames = FrameQueue(functools.partial(self._serve, session), peer)
        session.moved = functools.partial(self._moved, session)
        event(log, "connected", conn=session.id)
        return session

    def receive(self, session: Session, frame: str | bytes) -> None:
        """Take one frame from the transport, as it arrives; nothing to await."""
        session.frames.push(frame)

    @staticmethod
    def receiver(session: Session) -> Callable[[str | bytes], None]:
        """``receive`` for ``session``, bound once: what the transport hands its frames to."""
        return session.frames.push

    async def handle(self, session: Session, frame: str | bytes) -> None:
        """``receive``, then wait until everything the session received is served: for
        callers in the same process, such as benchmarks."""
        self.receive(session, frame)
        await session.frames.drained()

    async def disconnect(self, session: Session) -> None:
        """The connection closed: frames it sent that were not served yet are dropped (never
        answered), the one being served finishes first, then its player leaves the room (and
        the race it watched, if any, loses a spectator)."""
        session.frames.close()
        if session.task is not None:
            await asyncio.wait([session.task])
        self.sessions -= 1
        if self.outbox.online.get(-session.id) is session:
            del self.outbox.online[-session.id]
            await self.races.disconnected(-session.id)
        player = session.player
        event(log, "disconnected", conn=session.id, player=player.id if player else None)
        if player is None or self.outbox.online.get(player.id) is not session:
            return  # never identified, or replaced by a newer connection
        del self.outbox.online[player.id]
        await self.races.disconnected(player.id)

    def shutdown(self) -> None:
        """Tell every client to come back: their races and lobbies resume at the next start."""
        for session in list(self.outbox.online.values()):
            session.peer.close(1012, "server restarting: reconnect to resume your race")

    # --- one frame ---------------------------------------------------------------------
    def _serve(self, session: Session, frame: str | bytes) -> bool:
        """Serve one frame: at once (False), or later (True: the session's queue is held
        until it is done)."""
        self._frames_counted.inc()
        now = self.clock()
        if not session.bucket.allow(now):
            self._refuse(session, frame, now)
            return False
        request_id = None
        try:
            request = p.decode(frame)
            request_id = request.id
            kind = type(request)
            player = session.player
            if type(request) is p.Move and player is not None:  # the usual frame, at saturation nearly every one
                return self.races.move(player, request, session.moved)
            if isinstance(request, p.Hello):
                return self._await(session, self._hello(session, request), request_id)
            if player is None and not isinstance(request, p.ANONYMOUS):
                raise p.ProtocolError(p.ErrorCode.NOT_IDENTIFIED, "say hello first")
            if isinstance(request, p.WatchRace):
                return self._await(session, self._watch(session, request), request_id)
            if kind in self._answers:
                return self._await(session, self._answer(session, request), request_id)
            assert player is not None
            return self._await(session, self._actions[kind](player, request), request_id)
        except Exception as exc:
            self._fail(session, exc, request_id)
            return False

    def _refuse(self, session: Session, frame: str | bytes, now: float) -> None:
        """A frame over the rate limit: refused, and the connection closed once the refused
        pile up to ``abuse_limit``. They are counted with a decay, not in a row: a flood that
        let a token come back before every hundredth refused frame (2,000 a second, by
        default) was never closed."""
        rate = self.config.rate_per_s
        session.refused = max(0.0, session.refused - (now - session.refused_at) * rate) + 1
        session.refused_at = now
        self._send_error(
            session, p.ErrorCode.RATE_LIMITED, f"slow down: at most {rate:g} messages per second", p.peek_id(frame)
        )
        if session.refused < self.config.abuse_limit:
            return
        event(
            log, "abusive_connection_closed", logging.WARNING,
            conn=session.id, player=session.player.id if session.player else None,
        )
        # Nothing more of this connection is served: neither the frames waiting in its
        # queue nor any it sent since (the peer delivers none once refused).
        session.frames.close()
        session.peer.refuse(1008, "too many messages")

    def _await(self, session: Session, work: Coroutine[Any, Any, None], request_id: Any) -> bool:
        """Serve the rest of a frame in a task; the session's next frames wait for it (True)."""
        session.task = asyncio.create_task(self._finish(session, work, request_id))
        return True

    async def _finish(self, session: Session, work: Coroutine[Any, Any, None], request_id: Any) -> None:
        try:
            await work
        except Exception as exc:
            self._fail(session, exc, request_id)
        finally:
            session.task = None
            session.frames.done()

    def _moved(self, session: Session, request_id: Any, error: BaseException | None) -> None:
        """A move held the queue until its log commit: answered, or failed (the session's
        ``moved``, made once per connection)."""
        if error is not None:
            self._fail(session, error, request_id)
        session.frames.done()

    async def _answer(self, session: Session, request: Any) -> None:
        fields = await self._answers[type(request)](session, request)
        session.peer.send(p.reply({"type": _REPLY_TYPES[type(request)], **fields}, request.id))

    def _fail(self, session: Session, exc: BaseException, request_id: Any) -> None:
        """Answer a request that failed with ``exc`` with the error message it calls for."""
        if isinstance(exc, p.ProtocolError):
            rid = exc.request_id if request_id is None else request_id
            self._send_error(session, exc.code, exc.message, rid, **exc.fields)
        elif isinstance(exc, RoomError):
            self._send_error(session, exc.code, exc.message, request_id)
        elif isinstance(exc, Fenced):
            event(log, "race_moved", logging.WARNING, conn=session.id)
            self._send_error(session, p.ErrorCode.RACE_MOVED, RACE_MOVED_MESSAGE, request_id)
        elif isinstance(exc, StorageUnavailable):
            # Not a bug (a full disk, an I/O error, a lock held elsewhere): one line, no
            # traceback; the client may retry, and the store does by itself (operations.md).
            event(log, "storage_unavailable", logging.WARNING, conn=session.id, reason=exc.reason)
            self._send_error(
                session, p.ErrorCode.STORAGE_UNAVAILABLE,
                "the server cannot save right now (storage unavailable): try again shortly", request_id,
            )
        else:
            log.error("internal error serving a request", exc_info=exc,
                      extra={"fields": {"event": "internal_error", "conn": session.id}})
            self._send_error(session, p.ErrorCode.INTERNAL_ERROR, "internal server error", request_id)

    def _send_error(
        self, session: Session, code: p.ErrorCode | str, message: str, request_id: Any, **fields: Any
    ) -> None:
        self.metrics.counter("solitaire_errors_total", code=p.ErrorCode(code).value).inc()
        session.peer.send(p.error(code, message, request_id, **fields))

    # --- identity ----------------------------------------------------------------------
    async def _hello(self, session: Session, req: p.Hello) -> None:
        if session.player is not None:
            raise p.ProtocolError(p.ErrorCode.ALREADY_IDENTIFIED, f"already identified as {session.player.name}")
        if req.token is None and self.config.new_players_per_hour:  # identities are free, but not in bulk
            await self._new_identity_allowed(session.address)
        player, token = await self.identity.sign_in(req.name, req.token)
        online = self.outbox.online
        older = online.get(player.id)
        if older is not None and older is not session:
            self._replace(older)
            self.races.reconnected(player.id)  # this connection takes over the older one's seat
        session.player = player
        online[player.id] = session
        if online.get(-session.id) is session:  # it watches a race: as this player from now on
            self.races.watch_as(-session.id, player.id)
        if self.cluster is not None:  # and on the other nodes
            await self.cluster.signed_in(player.id)
        event(log, "identified", conn=session.id, player=player.id, new=token is not None)
        welcome: dict[str, Any] = {"type": "welcome", "player": {"id": player.id, "name": player.name}}
        if token is not None:
            welcome["token"] = token
        session.peer.send(p.reply(welcome, req.id))

    @staticmethod
    def _replace(older: Session) -> None:
        older.peer.send(p.error(p.ErrorCode.REPLACED, "you signed in from another connection"))
        older.peer.close(4001, "signed in from another connection")

    def signed_in_elsewhere(self, player_id: int) -> None:
        """The player signed in on another node of the cluster: their connection here, if
        any, is replaced as by a newer one here."""
        older = self.outbox.online.get(player_id)
        if older is not None:
            self._replace(older)

    async def _new_identity_allowed(self, address: str) -> None:
        """At most ``new_players_per_hour`` new identities per client address, in bursts of
        as many (a family or a classroom behind one address fits). Counted per process, or
        across a cluster's nodes in Redis (``cluster/presence.py``), this process's count
        standing in while Redis cannot be reached."""
        now = self.clock()
        per_hour = self.config.new_players_per_hour
        bucket = self._new_identities.get(address)
        if bucket is None:
            if len(self._new_identities) >= NEW_IDENTITY_ADDRESSES:  # bounded: full buckets are forgotten
                self._new_identities = {a: b for a, b in self._new_identities.items() if not b.full(now)}
            bucket = self._new_identities[address] = TokenBucket(per_hour / 3600, per_hour, now)
        allowed = bucket.allow(now)
        if self.cluster is not None:
            shared = await self.cluster.new_identity_allowed(address, per_hour)
            allowed = allowed if shared is None else shared
        if not allowed:
            raise p.ProtocolError(
                p.ErrorCode.RATE_LIMITED,
                f"too many new players from your address (at most {per_hour} an hour): "
                "sign in with your token, or try again later",
            )

    # --- requests answered with data ---------------------------------------------------
    async def _ping(self, session: Session, req: p.Ping) -> dict[str, Any]:
        return {}

    async def _list_games(self, session: Session, req: p.ListGames) -> dict[str, Any]:
        return self.queries.list_games()

    async def _list_races(self, session: Session, req: p.ListRaces) -> dict[str, Any]:
        return {"races": await self.races.list_races()}

    async def _daily(self, session: Session, req: p.Daily) -> dict[str, Any]:
        return await self.queries.daily(req.date, session.player.id if session.player else None)

    async def _leaderboard(self, session: Session, req: p.Leaderboard) -> dict[str, Any]:
        return await self.queries.leaderboard(
            board=req.board, game=req.game, deal=req.deal, date_text=req.date, min_games=req.min_games,
            page=req.page, page_size=req.page_size, viewer=session.player.id if session.player else None,
        )

    async def _profile(self, session: Session, req: p.Profile) -> dict[str, Any]:
        player_id = req.player_id or (session.player.id if session.player else None)
        if player_id is None:
            raise p.ProtocolError(p.ErrorCode.NOT_IDENTIFIED, "say hello first, or name a player_id")
        return await self.queries.profile(player_id)

    async def _viewer(self, session: Session, token: str | None) -> int | None:
        """Who asks for a replay: the connection's player, or the one its ``token`` names (a
        page beside the app proves who it is without signing in, which would take the
        player's connection over from the app's tab)."""
        if session.player is not None:
            return session.player.id
        return (await self.identity.who(token)).id if token is not None else None

    async def _replay(self, session: Session, req: p.Replay) -> dict[str, Any]:
        return await self.queries.replay(req.code, await self._viewer(session, req.token))

    async def _par_line(self, session: Session, req: p.ParLine) -> dict[str, Any]:
        return await self.queries.par_line(req.game, req.date, await self._viewer(session, req.token))

    async def _watch(self, session: Session, req: p.WatchRace) -> None:
        """A connection watches a race under its own negative id (no player's): the outbox
        reaches it by that id, as it reaches players by theirs, and races seat it there."""
        self.outbox.online[-session.id] = session
        await self.races.watch(-session.id, req, session.player.id if session.player else None)

    async def _hint(self, session: Session, req: p.Hint) -> dict[str, Any]:
        assert session.player is not None  # not an anonymous request: _serve checked
        return await self.races.hint(session.player, req)
