"""The race service: identities, rooms by join code, room timers, and the store.

This is the asyncio glue between the transport (which hands it frames from a ``Peer``) and
the sans-I/O ``Room``. It owns no socket: a ``Peer`` is anything with a non-blocking
``send(message)`` and ``close(code, reason)``. It never trusts the client for time: every
``now`` comes from the clock it was given.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import secrets
import time
from collections.abc import Callable, Coroutine
from dataclasses import dataclass, field
from datetime import date, datetime, timezone
from typing import Any, Protocol

from . import protocol as p
from .config import Config
from .daily import candidate_deals, parse_day, streak, utc_day
from .daily_planner import DailyPlanner
from .engine import Game, IllegalMove, NotationError, all_games
from . import solver
from .observe import Metrics, event
from .stuck_checks import StuckChecks
from .room import CheckStuck, LogMoves, Room, RoomError, SaveResults, Send, Status
from .store import (
    CodeTaken,
    DailyChallengeRecord,
    LeaderboardEntry,
    LeaderboardPage,
    PlayerRecord,
    RaceRecord,
    RaceStateError,
    ResultRecord,
    Store,
    hash_token,
)

log = logging.getLogger("solitaire_race.service")

# Unambiguous when read aloud or handwritten: no vowels (no words), no I/L/1, O/0, S/5, Z/2.
CODE_ALPHABET = "BCDFGHJKMNPQRTVWXY"
CODE_LENGTH = 6
TOKEN_BYTES = 32  # 256-bit tokens; only their SHA-256 is stored
HINT_BUDGET = solver.Budget(nodes=20_000, seconds=2.0, shorten_nodes=0)
DAILY_LIST_WAIT_S = 1.0  # how long a `daily` listing waits for challenges still being chosen
# A session's frames waiting to be served: past HIGH its peer stops reading (as websockets'
# own queue does, at 16 messages), and it reads again once they are down to LOW.
INBOX_HIGH, INBOX_LOW = 16, 4
_RUNNING = Status.RUNNING  # read for every move: faster than the enum's attribute (room.py)


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

    __slots__ = ("rate", "burst", "tokens", "stamp")

    def __init__(self, rate: float, burst: int, now: float) -> None:
        self.rate, self.burst, self.tokens, self.stamp = rate, burst, float(burst), now

    def allow(self, now: float) -> bool:
        self.tokens = min(self.burst, self.tokens + (now - self.stamp) * self.rate)
        self.stamp = now
        if self.tokens >= 1:
            self.tokens -= 1
            return True
        return False


@dataclass(eq=False, slots=True)
class Session:
    """One connection's view of who it is and which race it is in, and of the frames it
    sent that are not served yet."""

    peer: Peer
    bucket: TokenBucket
    id: int = 0
    player: PlayerRecord | None = None
    room: Room | None = None
    closed: bool = False
    # Messages refused by the rate limit, less ``rate_per_s`` for every second since: a
    # flood piles them up, a client over the limit now and then never does.
    refused: float = 0.0
    refused_at: float = 0.0  # when the last was refused
    busy: bool = False  # a frame is being served: its handler awaits, or its move's log commit
    inbox: list[str | bytes] = field(default_factory=list)  # frames that arrived meanwhile
    paused: bool = False  # the peer stopped reading: the inbox is full
    task: asyncio.Task[None] | None = None  # the handler being awaited, if any
    idle: list[asyncio.Future[None]] = field(default_factory=list)  # who waits for all to be served


def new_join_code() -> str:
    return "".join(secrets.choice(CODE_ALPHABET) for _ in range(CODE_LENGTH))


def normalize_code(text: str) -> str:
    return "".join(ch for ch in text.upper() if ch.isalnum())


class RaceService:
    def __init__(
        self,
        *,
        store: Store,
        secret: bytes,
        config: Config,
        clock: Callable[[], float],
        planner: DailyPlanner,
        wall_clock: Callable[[], datetime] = lambda: datetime.now(timezone.utc),
        metrics: Metrics | None = None,
    ) -> None:
        self.store = store
        self.secret = secret
        self.config = config
        self.clock = clock
        self.wall_clock = wall_clock
        self.planner = planner
        self.games = all_games()
        self.metrics = metrics or Metrics()
        # Counted for every frame and move: kept at hand (``Metrics.counter``).
        self._frames_counted = self.metrics.counter("solitaire_messages_total")
        self._moves_counted = self.metrics.counter("solitaire_moves_total")
        self._move_seconds = self.metrics.histograms["solitaire_move_seconds"]
        self.sessions = 0  # open connections
        self._next_session = 0
        self.rooms: dict[str, Room] = {}
        self.online: dict[int, Session] = {}  # player id -> its current session
        self._timers: dict[str, tuple[float, asyncio.Task[None]]] = {}
        self._started: set[int] = set()  # races whose start is recorded in the store
        self._flusher: asyncio.Task[None] | None = None
        self._stuck_checks: StuckChecks[Room] = StuckChecks()
        self._checker: asyncio.Task[None] | None = None  # runs the stuck checks, while there are any
        # Every request but ``move``, which ``_serve`` plays itself (``_move``).
        self._handlers: dict[type, Callable[[Session, Any], Coroutine[Any, Any, None]]] = {
            p.Hello: self._hello,
            p.ListGames: self._list_games,
            p.ListRaces: self._list_races,
            p.CreateRace: self._create_race,
            p.JoinRace: self._join_race,
            p.LeaveRace: self._leave_race,
            p.Ready: self._ready,
            p.StartRace: self._start_race,
            p.Resign: self._resign,
            p.Ping: self._ping,
            p.StartDaily: self._start_daily,
            p.Daily: self._daily,
            p.Leaderboard: self._leaderboard,
            p.Profile: self._profile,
            p.Hint: self._hint,
        }
        self._daily_rooms: dict[tuple[int, str, str], Room] = {}  # (player, game, date)
        self._install_gauges()

    # --- connections ---------------------------------------------------------------
    def connect(self, peer: Peer) -> Session:
        self.sessions += 1
        self._next_session += 1
        session = Session(peer, TokenBucket(self.config.rate_per_s, self.config.rate_burst, self.clock()), self._next_session)
        event(log, "connected", conn=session.id)
        return session

    def _install_gauges(self) -> None:
        self.metrics.gauge("solitaire_connections", "Open websocket connections.", lambda: [({}, self.sessions)])
        self.metrics.gauge("solitaire_players_online", "Identified players connected.", lambda: [({}, len(self.online))])

        def races() -> list[tuple[dict[str, str], float]]:
            counts = {s.value: 0 for s in Status}
            for room in self.rooms.values():
                counts[room.status.value] += 1
            return [({"status": k}, v) for k, v in counts.items()]

        self.metrics.gauge("solitaire_races", "Races in memory, by status.", races)

    def _send_error(self, session: Session, code: p.ErrorCode | str, message: str, request_id: Any) -> None:
        self.metrics.inc("solitaire_errors_total", code=p.ErrorCode(code).value)
        session.peer.send(p.error(code, message, request_id))

    # --- frames --------------------------------------------------------------------
    def receive(self, session: Session, frame: str | bytes) -> None:
        """Take one frame from the transport, as it arrives; nothing to await. A session's
        frames are served one at a time, in order: one that arrives while an earlier one is
        still being served (its handler awaits the store, or its move awaits the log
        commit) waits in the session's inbox."""
        if not session.busy:
            self._serve(session, frame)
            return
        session.inbox.append(frame)
        if len(session.inbox) >= INBOX_HIGH and not session.paused:
            session.paused = True
            session.peer.pause_reading()

    async def handle(self, session: Session, frame: str | bytes) -> None:
        """``receive``, then wait until everything the session received is served: for
        callers in the same process, such as benchmarks."""
        self.receive(session, frame)
        if session.busy:
            done: asyncio.Future[None] = asyncio.get_running_loop().create_future()
            session.idle.append(done)
            await done

    def _serve(self, session: Session, frame: str | bytes) -> None:
        """Serve one frame: at once, or by starting the task that serves it (the session is
        ``busy`` until it is done). Every failure becomes an error message; nothing escapes."""
        self._frames_counted.value += 1
        if not session.bucket.allow(now := self.clock()):
            self._refuse(session, frame, now)
            return
        request_id = None
        try:
            request = p.decode(frame)
            request_id = request.id
            if session.player is None and not isinstance(request, p.ANONYMOUS):
                raise p.ProtocolError(p.ErrorCode.NOT_IDENTIFIED, "say hello first")
            if type(request) is p.Move:
                self._move(session, request)  # no task: the common move is served from callbacks
            else:
                self._await(session, self._handlers[type(request)](session, request), request_id)
        except Exception as exc:
            self._fail(session, exc, request_id)

    def _refuse(self, session: Session, frame: str | bytes, now: float) -> None:
        """A frame over the rate limit: refused, and the connection closed once the refused
        pile up to ``abuse_limit``. They are counted with a decay, not in a row: a flood that
        let a token come back before every hundredth refused frame (2,000 a second, by
        default) was never closed."""
        rate = self.config.rate_per_s
        session.refused = max(0.0, session.refused - (now - session.refused_at) * rate) + 1
        session.refused_at = now
        self._send_error(session, p.ErrorCode.RATE_LIMITED, f"slow down: at most {rate:g} messages per second", p.peek_id(frame))
        if session.refused < self.config.abuse_limit:
            return
        event(log, "abusive_connection_closed", logging.WARNING, conn=session.id, player=session.player.id if session.player else None)
        # Nothing more of this connection is served: neither the frames waiting in its inbox
        # nor any it sent since (the peer delivers none once refused).
        session.closed = True
        session.inbox.clear()
        session.peer.refuse(1008, "too many messages")

    def _await(self, session: Session, work: Coroutine[Any, Any, None], request_id: Any) -> None:
        """Serve the rest of a frame in a task; the session's next frames wait for it."""
        session.busy = True
        session.task = asyncio.create_task(self._finish(session, work, request_id))

    async def _finish(self, session: Session, work: Coroutine[Any, Any, None], request_id: Any) -> None:
        try:
            await work
        except Exception as exc:
            self._fail(session, exc, request_id)
        finally:
            session.task = None
            self._served(session)

    def _served(self, session: Session) -> None:
        """The session's frame is served: serve those that waited, in order."""
        session.busy = False
        inbox = session.inbox
        while inbox and not session.busy:
            if session.closed:
                inbox.clear()  # never served, so never answered: the client knows to resend
                break
            frame = inbox.pop(0)
            if session.paused and len(inbox) <= INBOX_LOW:
                session.paused = False
                session.peer.resume_reading()
            self._serve(session, frame)
        if not session.busy and session.idle:
            waiters, session.idle = session.idle, []
            for done in waiters:
                if not done.done():
                    done.set_result(None)

    def _fail(self, session: Session, exc: BaseException, request_id: Any) -> None:
        """Answer a request that failed with ``exc`` with the error message it calls for."""
        if isinstance(exc, p.ProtocolError):
            self._send_error(session, exc.code, exc.message, exc.request_id if request_id is None else request_id)
        elif isinstance(exc, RoomError):
            self._send_error(session, exc.code, exc.message, request_id)
        else:
            log.error("internal error serving a request", exc_info=exc,
                      extra={"fields": {"event": "internal_error", "conn": session.id}})
            self._send_error(session, p.ErrorCode.INTERNAL_ERROR, "internal server error", request_id)

    async def disconnect(self, session: Session) -> None:
        """The connection closed: frames it sent that were not served yet are dropped (never
        answered), the one being served finishes first, then its player leaves the room."""
        session.closed = True
        session.inbox.clear()
        if session.task is not None:
            await asyncio.wait([session.task])
        self.sessions -= 1
        player = session.player
        event(log, "disconnected", conn=session.id, player=player.id if player else None,
              race=session.room.race_id if session.room else None)
        if player is None or self.online.get(player.id) is not session:
            return  # never identified, or replaced by a newer connection
        del self.online[player.id]
        room = session.room
        if room is not None and player.id in room.racers:
            await self._run(room, room.leave(player.id, self.clock()))

    # --- identity ------------------------------------------------------------------
    async def _hello(self, session: Session, req: p.Hello) -> None:
        if session.player is not None:
            raise p.ProtocolError(p.ErrorCode.ALREADY_IDENTIFIED, f"already identified as {session.player.name}")
        token: str | None = None
        name = req.name.strip() if req.name else None
        if name is not None and not name:
            raise p.ProtocolError(p.ErrorCode.BAD_MESSAGE, "a name cannot be blank")
        if req.token is not None:
            player = await self.store.player_by_token_hash(hash_token(req.token))
            if player is None:
                raise p.ProtocolError(p.ErrorCode.BAD_TOKEN, "unknown token: send your name without a token to get a new identity")
            if name is not None and name != player.name:
                await self._check_name_free(name, player.id)
                await self.store.rename_player(player.id, name)
                player = PlayerRecord(player.id, name, player.created_at)
        else:
            if name is None:
                raise p.ProtocolError(p.ErrorCode.BAD_MESSAGE, "a new player must give a name")
            await self._check_name_free(name, None)
            token = secrets.token_urlsafe(TOKEN_BYTES)
            player = await self.store.create_player(name, hash_token(token), self.wall_clock())
        older = self.online.get(player.id)
        if older is not None and older is not session:
            older.peer.send(p.error(p.ErrorCode.REPLACED, "you signed in from another connection"))
            older.peer.close(4001, "signed in from another connection")
            if older.room is not None:
                session.room = older.room
                older.room.resync(player.id)  # replies may have gone to the old connection
            del self.online[player.id]
        session.player = player
        self.online[player.id] = session
        event(log, "identified", conn=session.id, player=player.id, new=token is not None)
        welcome: dict[str, Any] = {"type": "welcome", "id": req.id, "player": {"id": player.id, "name": player.name}}
        if token is not None:
            welcome["token"] = token
        session.peer.send(_drop_none(welcome))

    async def _check_name_free(self, name: str, player_id: int | None) -> None:
        holder = await self.store.player_by_name(name)
        if holder is not None and holder.id != player_id:
            raise p.ProtocolError(
                p.ErrorCode.NAME_TAKEN,
                f"the name {name!r} belongs to another player: present its token, or choose another name",
            )

    # --- lobby ---------------------------------------------------------------------
    async def _list_games(self, session: Session, req: p.ListGames) -> None:
        games = [g.describe() for g in self.games.values()]
        session.peer.send(_drop_none({"type": "games", "id": req.id, "games": games}))

    async def _list_races(self, session: Session, req: p.ListRaces) -> None:
        races = [r.summary() for r in self.rooms.values() if not r.private and r.open]
        session.peer.send(_drop_none({"type": "races", "id": req.id, "races": races}))

    async def _create_race(self, session: Session, req: p.CreateRace) -> None:
        player = self._player(session)
        self._leave_finished(session)
        if session.room is not None:
            raise p.ProtocolError(p.ErrorCode.ALREADY_IN_RACE, f"leave race {session.room.code} first")
        game = self._game(req.game)
        owned = sum(1 for r in self.rooms.values() if r.created_by == player.id and r.status is not Status.FINISHED)
        if owned >= self.config.max_rooms_per_player:
            raise p.ProtocolError(
                p.ErrorCode.TOO_MANY_ROOMS, f"you already have {owned} unfinished races (at most {self.config.max_rooms_per_player})"
            )
        deal = req.deal if req.deal is not None else secrets.randbelow(1_000_000_000)
        # Any of today's candidates: the one chosen may not be stored yet just after a start.
        if deal in candidate_deals(self.secret, game.id, self.today()):
            # Practising today's daily in a private race would make its ranking unfair.
            raise p.ProtocolError(p.ErrorCode.BAD_REQUEST, "that is today's daily challenge deal: play it with start_daily")
        limit = req.time_limit_s or self.config.time_limit_s
        record = await self._new_race_record(game.id, deal, req.private, player.id, limit)
        room = self._new_room(record, game, limit)
        session.room = room
        await self._run(room, room.join(player.id, player.name, self.clock()), reply=(player.id, req.id))

    async def _new_race_record(
        self, game_id: str, deal: int, private: bool, player_id: int, limit: int, daily_date: str | None = None
    ) -> RaceRecord:
        """Store a new race under a fresh join code (retrying the rare taken code)."""
        for _ in range(20):
            code = new_join_code()
            if code in self.rooms:
                continue
            try:
                return await self.store.create_race(
                    code=code, game=game_id, deal_number=deal, private=private, created_by=player_id,
                    time_limit_s=limit, now=self.wall_clock(),
                    kind="race" if daily_date is None else "daily", daily_date=daily_date,
                )
            except CodeTaken:
                continue
        raise RuntimeError("could not find a free join code")

    def _new_room(self, record: RaceRecord, game: Game[Any], limit: int, daily: dict[str, Any] | None = None) -> Room:
        room = Room(
            race_id=record.id, code=record.code, game=game, deal_number=record.deal_number, secret=self.secret,
            private=record.private, creator_id=record.created_by, time_limit_s=limit,
            countdown_s=self.config.countdown_s, max_players=1 if daily else self.config.max_players,
            link=f"{self.config.public_url}/join/{record.code}",
            # A daily attempt's clock runs on through a disconnect, up to the time limit.
            leave_grace_s=limit if daily else self.config.leave_grace_s,
            daily=daily,
        )
        self.rooms[record.code] = room
        event(log, "race_created", race=record.id, code=record.code, game=game.id, deal=record.deal_number,
              player=record.created_by, daily=daily["date"] if daily else None)
        return room

    def _game(self, game_id: str) -> Game[Any]:
        game = self.games.get(game_id)
        if game is None:
            known = ", ".join(sorted(self.games))
            raise p.ProtocolError(p.ErrorCode.UNKNOWN_GAME, f"unknown game {game_id[:32]!r}; known: {known}")
        return game

    async def _join_race(self, session: Session, req: p.JoinRace) -> None:
        player = self._player(session)
        code = normalize_code(req.code)
        room = self.rooms.get(code)
        if room is None or room.status is Status.FINISHED and player.id not in room.racers:
            raise p.ProtocolError(p.ErrorCode.NO_SUCH_RACE, f"no race with code {req.code[:16]!r}")
        self._leave_finished(session)
        if session.room is not None and session.room is not room:
            raise p.ProtocolError(p.ErrorCode.ALREADY_IN_RACE, f"leave race {session.room.code} first")
        effects = room.join(player.id, player.name, self.clock())
        session.room = room
        await self._run(room, effects, reply=(player.id, req.id))

    async def _leave_race(self, session: Session, req: p.LeaveRace) -> None:
        player, room = self._player(session), self._room(session)
        now = self.clock()
        effects = []
        if room.status is Status.RUNNING and not room.racers[player.id].done:
            effects += room.resign(player.id, now)  # leaving a running race gives it up
        effects += room.leave(player.id, now)
        session.room = None
        await self._run(room, effects)
        session.peer.send(_drop_none({"type": "left", "id": req.id, "code": room.code}))

    async def _ready(self, session: Session, req: p.Ready) -> None:
        room = self._room(session)
        await self._run(room, room.set_ready(self._player(session).id, req.ready, self.clock()), reply=(session.player.id, req.id))  # type: ignore[union-attr]

    async def _start_race(self, session: Session, req: p.StartRace) -> None:
        room = self._room(session)
        player = self._player(session)
        await self._run(room, room.start(player.id, self.clock()), reply=(player.id, req.id))

    # --- racing --------------------------------------------------------------------
    def _move(self, session: Session, req: p.Move) -> None:
        """Play the moves; the reply goes once their log entries are committed. Most moves
        need nothing awaited (log, answer, maybe a stuck check): they are served from the
        log's commit callback, with none of a task's suspending and waking."""
        room, player = self._room(session), self._player(session)
        started = time.perf_counter()
        effects = room.play(player.id, req.moves, self.clock())
        logged = effects[0] if type(effects[0]) is LogMoves else None
        answer = effects[1 if logged else 0]
        assert type(answer) is Send and answer.message["type"] == "move_result"  # Room.play's order
        reply = answer.message
        self._moves_counted.value += len(reply["applied"])
        if reply["rejected"]:
            self.metrics.inc("solitaire_moves_rejected_total")
        rest = effects[2 if logged else 1 :]
        if room.status is not _RUNNING or (rest and (len(rest) > 1 or type(rest[0]) is not CheckStuck)):
            self._await(session, self._end_move(room, effects, (player.id, req.id), started), req.id)  # the race ended
        elif logged is None:
            self._answer(room, player.id, req.id, reply, rest, started)
        else:
            answer_then = functools.partial(self._move_logged, session, room, logged, req.id, reply, rest, started)
            try:
                self.store.log_moves_then(room.race_id, logged.player_id, logged.entries, answer_then)
            except BaseException:
                room.log_failed(logged)  # not even queued: kept for the racer's next append
                raise
            session.busy = True  # until ``answer_then``: never called before log_moves_then returns

    def _move_logged(
        self, session: Session, room: Room, logged: LogMoves, request_id: Any, reply: dict[str, Any],
        rest: list[Any], started: float, error: BaseException | None,
    ) -> None:
        """The move's log entries are committed (or failed): answer, then serve the session's
        next frame. What ``_run`` would do, without its general checks (a running race's
        deadline and start record do not change here)."""
        try:
            if error is None:
                room.logged(logged)
                self._answer(room, logged.player_id, request_id, reply, rest, started)
            else:
                room.log_failed(logged)
                self._fail(session, error, request_id)
        finally:
            self._served(session)

    def _answer(self, room: Room, player_id: int, request_id: Any, reply: dict[str, Any], rest: list[Any], started: float) -> None:
        target = self._online_in(room, player_id)
        if target is not None:
            if request_id is not None:
                reply["id"] = request_id
            target.peer.send(reply)
        for check in rest:
            self._check(room, check)
        self._move_seconds.observe(time.perf_counter() - started)

    async def _end_move(self, room: Room, effects: list[Any], reply: tuple[Any, ...], started: float) -> None:
        await self._run(room, effects, reply=reply)  # all of it, in order
        self._move_seconds.observe(time.perf_counter() - started)

    async def _resign(self, session: Session, req: p.Resign) -> None:
        room, player = self._room(session), self._player(session)
        await self._run(room, room.resign(player.id, self.clock()), reply=(player.id, req.id))

    async def _ping(self, session: Session, req: p.Ping) -> None:
        session.peer.send(_drop_none({"type": "pong", "id": req.id}))

    # --- daily challenges --------------------------------------------------------
    def today(self) -> date:
        return utc_day(self.wall_clock())

    async def challenge(self, game_id: str, day: date) -> DailyChallengeRecord:
        """Usually a read: the planner chose the day's deals a day ahead (daily_planner.py)."""
        return await self.planner.challenge(game_id, day)

    async def _start_daily(self, session: Session, req: p.StartDaily) -> None:
        player = self._player(session)
        game = self._game(req.game)
        self._leave_finished(session)
        day = self.today().isoformat()
        key = (player.id, game.id, day)
        current = self._daily_rooms.get(key)
        if current is not None and current.status is Status.RUNNING:
            if session.room is not None and session.room is not current:
                raise p.ProtocolError(p.ErrorCode.ALREADY_IN_RACE, f"leave race {session.room.code} first")
            session.room = current  # the attempt in progress: resume it, clock still running
            await self._run(current, current.join(player.id, player.name, self.clock()), reply=(player.id, req.id, "race_started"))
            return
        if session.room is not None:
            raise p.ProtocolError(p.ErrorCode.ALREADY_IN_RACE, f"leave race {session.room.code} first")
        challenge = await self.challenge(game.id, self.today())
        limit = self.config.time_limit_s
        record = await self._new_race_record(game.id, challenge.deal_number, True, player.id, limit, daily_date=day)
        ranked = await self.store.claim_daily_attempt(game.id, day, player.id, record.id, self.wall_clock())
        room = self._new_room(record, game, limit, daily={"date": day, "ranked": ranked, "par": challenge.par})
        self._daily_rooms[key] = room
        session.room = room
        now = self.clock()
        room.join(player.id, player.name, now)
        await self._run(room, room.start_now(player.id, now), reply=(player.id, req.id, "race_started"))

    async def daily_data(self, day_text: str | None, viewer: int | None) -> dict[str, Any]:
        today = self.today()
        day = _day(day_text) if day_text else today
        if day > today:
            raise p.ProtocolError(p.ErrorCode.NOT_FOUND, f"the challenges of {day} are not announced yet")
        if day == today:
            # Only on a fresh database are today's deals still being chosen: list those as
            # preparing rather than keep the lobby waiting for the solver.
            challenges: dict[str, DailyChallengeRecord | None] = await self.planner.ready(
                list(self.games), today, DAILY_LIST_WAIT_S
            )
        else:
            challenges = {c.game: c for c in await self.store.daily_challenges(day.isoformat())}
        out = []
        for game, c in challenges.items():
            item: dict[str, Any] = {"game": game, "name": self.games[game].name if game in self.games else game}
            if c is None:
                item.update(deal=None, par=None, preparing=True)
            else:
                item.update(deal=c.deal_number, par=c.par)
            if viewer is not None:
                item["attempted"] = await self.store.ranked_attempt(game, day.isoformat(), viewer) is not None
            out.append(item)
        return {"date": day.isoformat(), "today": today.isoformat(), "challenges": out}

    async def _daily(self, session: Session, req: p.Daily) -> None:
        data = await self.daily_data(req.date, session.player.id if session.player else None)
        session.peer.send(_drop_none({"type": "daily_challenges", "id": req.id, **data}))

    async def _hint(self, session: Session, req: p.Hint) -> None:
        room, player = self._room(session), self._player(session)
        if not room.daily or room.daily["ranked"]:
            raise p.ProtocolError(
                p.ErrorCode.NOT_ALLOWED,
                "hints are for unranked practice only (a daily challenge replay), never in a race or a ranked attempt",
            )
        racer = room.racers[player.id]
        if room.status is not Status.RUNNING or racer.done:
            raise p.ProtocolError(p.ErrorCode.GAME_OVER, "your game is over")
        # The solver is CPU-bound: a thread keeps the event loop turning (1 ms GIL slices).
        move = await asyncio.to_thread(solver.hint, room.game, racer.state, HINT_BUDGET)
        message = "the next move of a winning line" if move else (
            "no hint: no winning line found from here, or the game hides cards the solver may not use"
        )
        session.peer.send(_drop_none({"type": "hint_result", "id": req.id, "move": move, "message": message}))

    # --- leaderboards and profiles --------------------------------------------------
    async def leaderboard_data(
        self, *, board: str, game: str, deal: int | None = None, date_text: str | None = None, min_games: int = 10,
        page: int = 1, page_size: int = 20, viewer: int | None = None,
    ) -> dict[str, Any]:
        self._game(game)
        if board == "deal" and deal is None:
            raise p.ProtocolError(p.ErrorCode.BAD_REQUEST, "the deal board needs a deal number")
        day = None
        if board == "daily":
            when = _day(date_text) if date_text else self.today()
            if when > self.today():
                raise p.ProtocolError(p.ErrorCode.NOT_FOUND, f"the challenges of {when} are not announced yet")
            day = when.isoformat()
        result = await self.store.leaderboard(
            board, game, deal=deal if board == "deal" else None, date=day, min_games=min_games,
            page=page, page_size=page_size, viewer=viewer,
        )
        return _page_json(result)

    async def _leaderboard(self, session: Session, req: p.Leaderboard) -> None:
        data = await self.leaderboard_data(
            board=req.board, game=req.game, deal=req.deal, date_text=req.date, min_games=req.min_games,
            page=req.page, page_size=req.page_size, viewer=session.player.id if session.player else None,
        )
        session.peer.send(_drop_none({"type": "leaderboard_page", "id": req.id, **data}))

    async def profile_data(self, player_id: int) -> dict[str, Any]:
        record = await self.store.profile(player_id)
        if record is None:
            raise p.ProtocolError(p.ErrorCode.NOT_FOUND, f"no player {player_id}")
        return {
            "player": {"id": record.player.id, "name": record.player.name},
            "games": [
                {"game": g.game, "games": g.games, "wins": g.wins, "win_rate": g.win_rate,
                 "best_time_ms": g.best_time_ms, "best_moves": g.best_moves}
                for g in record.games
            ],
            "daily_streak": streak(record.daily_dates, self.today()),
            "daily_days": len(record.daily_dates),
        }

    async def _profile(self, session: Session, req: p.Profile) -> None:
        player_id = req.player_id or (session.player.id if session.player else None)
        if player_id is None:
            raise p.ProtocolError(p.ErrorCode.NOT_IDENTIFIED, "say hello first, or name a player_id")
        data = await self.profile_data(player_id)
        session.peer.send(_drop_none({"type": "player_profile", "id": req.id, **data}))

    # --- effects -------------------------------------------------------------------
    async def _run(self, room: Room, effects: list[Any], reply: tuple[Any, ...] | None = None) -> None:
        """Carry out a room's effects in order. ``reply`` is (player id, request id[, type]):
        the first message to the requester (of that type, if given) echoes the request id."""
        pending_reply = reply
        for effect in effects:
            if isinstance(effect, Send):
                encoded: str | None = None  # encoded once for all its recipients
                for pid in effect.to:
                    session = self._online_in(room, pid)
                    if session is None:
                        continue
                    if (
                        pending_reply is not None
                        and pid == pending_reply[0]
                        and (len(pending_reply) < 3 or effect.message.get("type") == pending_reply[2])
                    ):
                        reply_id, pending_reply = pending_reply[1], None
                        if reply_id is not None:
                            session.peer.send({**effect.message, "id": reply_id})
                            continue
                    if encoded is None:
                        encoded = p.encode(effect.message)
                    session.peer.send(encoded)
            elif isinstance(effect, LogMoves):
                await self._log(room, effect)  # durable before any message below acknowledges them
            elif isinstance(effect, SaveResults):
                await self._save_results(room, effect)
                await self._run(room, room.results_saved())
            elif isinstance(effect, CheckStuck):
                self._check(room, effect)
        if room.status is Status.RUNNING and room.race_id not in self._started:
            self._started.add(room.race_id)
            await self.store.mark_race_started(room.race_id, self.wall_clock(), list(room.racers))
            event(log, "race_started", race=room.race_id, code=room.code, players=list(room.racers))
        self._schedule(room)
        if room.status is Status.FINISHED and not room.racers and self.rooms.get(room.code) is room:
            await self.store.abandon_race(room.race_id)  # everyone left the lobby
        if room.status is Status.FINISHED and not any(r.connected for r in room.racers.values()):
            self._forget(room)

    def _online_in(self, room: Room, player_id: int) -> Session | None:
        """The player's current connection (perhaps newer than the one that asked), if it
        is in ``room``: who a room's messages reach."""
        session = self.online.get(player_id)
        return session if session is not None and session.room is room else None

    async def _log(self, room: Room, effect: LogMoves) -> None:
        try:
            await self.store.log_moves(room.race_id, effect.player_id, effect.entries)
        except BaseException:
            room.log_failed(effect)
            raise
        room.logged(effect)

    def _check(self, room: Room, effect: CheckStuck) -> None:
        self._stuck_checks.add(room, room.race_id, effect.player_id, effect.moves, effect.search)
        if self._checker is None or self._checker.done():
            self._checker = asyncio.create_task(self._check_stuck())

    async def _save_results(self, room: Room, effect: SaveResults) -> None:
        for result in effect.results:  # re-validated by replay before it can reach a leaderboard
            room.verify((result,))
            await asyncio.sleep(0)  # a log at a time: 8 long logs would hold up moves for ~20 ms
        finished_at = self.wall_clock()
        records = [
            ResultRecord(
                race_id=room.race_id, player_id=r.player_id, player_name=r.name, outcome=r.outcome,
                rank=r.rank, time_ms=r.time_ms, moves=r.moves, home=r.home, total=r.total,
                move_log=r.move_log, finished_at=finished_at,
            )
            for r in effect.results
        ]
        for attempt in range(5):
            try:
                try:
                    await self.store.finish_race(room.race_id, finished_at, records)
                except RaceStateError:
                    # Already finished: an attempt reported failed had in fact committed.
                    if attempt == 0 or not await self.store.race_results(room.race_id):
                        raise
                self.metrics.inc("solitaire_races_finished_total")
                event(log, "race_finished", race=room.race_id, code=room.code,
                      ranking=[(r.player_id, r.outcome, r.time_ms) for r in effect.results])
                return
            except Exception:
                log.exception("saving results of race %s failed (attempt %d)", room.code, attempt + 1)
                await asyncio.sleep(0.2 * 2**attempt)
        raise RuntimeError(f"could not save the results of race {room.code}")

    def _schedule(self, room: Room) -> None:
        """Keep one timer task per room, aimed at the room's next deadline."""
        deadline = room.deadline()
        current = self._timers.get(room.code)
        if current is not None and current[0] == deadline and not current[1].done():
            return
        if current is not None:
            current[1].cancel()
            del self._timers[room.code]
        if deadline is not None:
            self._timers[room.code] = (deadline, asyncio.create_task(self._timer(room, deadline)))

    async def _timer(self, room: Room, deadline: float) -> None:
        await asyncio.sleep(max(0.0, deadline - self.clock()))
        self._timers.pop(room.code, None)
        try:
            await self._run(room, room.tick(self.clock()))
        except Exception:
            log.exception("timer of race %s failed", room.code)

    def _forget(self, room: Room) -> None:
        if self.rooms.get(room.code) is room:
            del self.rooms[room.code]
        for key in [k for k, r in self._daily_rooms.items() if r is room]:
            del self._daily_rooms[key]
        timer = self._timers.pop(room.code, None)
        if timer is not None:
            timer[1].cancel()

    def _leave_finished(self, session: Session) -> None:
        if session.room is not None and session.room.status is Status.FINISHED:
            session.room = None

    def _player(self, session: Session) -> PlayerRecord:
        assert session.player is not None  # handle() checked
        return session.player

    def _room(self, session: Session) -> Room:
        if session.room is None:
            raise p.ProtocolError(p.ErrorCode.NOT_IN_RACE, "you are not in a race: create or join one")
        return session.room

    # --- background ----------------------------------------------------------------
    def start(self) -> None:
        """Start the progress flusher (once the event loop runs)."""
        self._flusher = asyncio.create_task(self._flush_progress())

    async def _flush_progress(self) -> None:
        while True:
            await asyncio.sleep(self.config.progress_interval_s)
            for room in list(self.rooms.values()):
                if room.has_pending_progress:
                    try:
                        await self._run(room, room.flush_progress())
                    except Exception:
                        log.exception("flushing progress of race %s failed", room.code)
                    # Moves waiting meanwhile go first: a flush of every room at once would
                    # hold them up for tens of milliseconds with a thousand racers.
                    await asyncio.sleep(0)

    async def _check_stuck(self) -> None:
        # A slice of search (~1 ms), then whatever else is ready: moves are never held up
        # behind a search (stuck_checks.py).
        while self._stuck_checks:
            for room, player_id, moves, outcome in self._stuck_checks.step():
                try:
                    await self._run(room, room.stuck_checked(player_id, moves, outcome))
                except Exception:
                    log.exception("ending a stuck game in race %s failed", room.code)
            await asyncio.sleep(0)

    # --- restart -------------------------------------------------------------------
    async def recover(self) -> None:
        """Rebuild every race left running by a crash or a restart, from its move log.

        The race clock kept running while the server was down: a race's start is placed on
        this process's clock from its stored start time. Lobbies do not survive a restart
        (nobody is connected to them any more); they are removed. A race that cannot be
        resumed (its game is no longer served, or its log does not replay) is closed
        without results and the reason logged, so that the other races resume; its moves
        stay in the move log. Left running, it would also keep every later restart reading
        the move log from its start (docs/database.md)."""
        now, wall = self.clock(), self.wall_clock()
        for lobby in await self.store.open_races():
            await self.store.abandon_race(lobby.id)
        for saved in await self.store.running_races():
            race = saved.race
            game = self.games.get(race.game)
            daily = None
            if race.kind == "daily" and race.daily_date:
                challenge = await self.store.find_daily_challenge(race.game, race.daily_date)
                daily = {"date": race.daily_date, "ranked": saved.daily_ranked, "par": challenge.par if challenge else None}
            names = dict(saved.players)
            try:
                if game is None or race.started_at is None:
                    raise ValueError(f"unknown game {race.game!r}" if game is None else "no start time")
                room = self._new_room(race, game, race.time_limit_s, daily)
                start_at = now - (wall - race.started_at).total_seconds()
                room.restore(start_at, [(pid, names[pid], saved.logs.get(pid, ())) for pid in names], now)
            except (ValueError, IllegalMove, NotationError) as exc:
                event(log, "race_not_resumed", logging.ERROR, race=race.id, code=race.code, game=race.game, reason=str(exc))
                self.rooms.pop(race.code, None)
                await self.store.finish_race(race.id, wall, [])
                continue
            self._started.add(race.id)
            if daily is not None:
                self._daily_rooms[(race.created_by, race.game, race.daily_date)] = room  # type: ignore[index]
            event(log, "race_resumed", race=race.id, code=race.code, game=race.game, players=list(names))
            await self._run(room, room.tick(now))  # closes it at once if its time ran out

    async def shutdown(self) -> None:
        """Stop: every acknowledged move is already durable; tell the clients to come back.

        Races stay running in the database and resume when the server starts again."""
        for task in (self._flusher, self._checker):  # a stuck check left undone is redone on resume
            if task is not None:
                task.cancel()
        for session in list(self.online.values()):
            session.peer.close(1012, "server restarting: reconnect to resume your race")
        for _, task in list(self._timers.values()):
            task.cancel()
        self._timers.clear()


def _day(text: str) -> date:
    try:
        return parse_day(text)
    except ValueError as exc:
        raise p.ProtocolError(p.ErrorCode.BAD_REQUEST, str(exc)) from None


def _entry_json(e: LeaderboardEntry) -> dict[str, Any]:
    return {
        "rank": e.rank, "player_id": e.player_id, "name": e.name, "outcome": e.outcome, "time_ms": e.time_ms,
        "moves": e.moves, "home": e.home, "total": e.total,
        "finished_at": e.finished_at.isoformat().replace("+00:00", "Z") if e.finished_at else None,
        "wins": e.wins, "games": e.games, "win_rate": e.win_rate,
    }


def _page_json(page: LeaderboardPage) -> dict[str, Any]:
    return {
        "board": page.board, "game": page.game, "deal": page.deal, "date": page.date, "min_games": page.min_games,
        "page": page.page, "page_size": page.page_size, "total": page.total,
        "entries": [_entry_json(e) for e in page.entries],
        "me": _entry_json(page.me) if page.me else None,
        **({"par": page.par} if page.board == "daily" else {}),  # the protocol has par on daily boards only
    }


def _drop_none(message: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in message.items() if v is not None or k not in ("id", "token")}
