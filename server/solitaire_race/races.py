"""Races: the rooms by join code, who sits in which, and every racing request.

``Races`` answers the requests that act on a race (create, join, leave, ready, start,
move, resign, a practice hint; a daily attempt in ``daily_attempts.py``, a rematch in
``rematches.py``, a race against a ghost in ``ghosts.py``), each for a player id: it knows players,
never connections. Messages reach players through the ``Delivery`` it is given, and only
those who sit in the room they come from (``seated``): a player sits in the room their
current connection created or joined, until they leave it, move on to another race, or
their connection goes. Effects are carried out by ``interpreter.Interpreter``; a restart brings
races back through ``recovery.py``.
"""

from __future__ import annotations

import asyncio
import logging
import secrets
import time
from collections.abc import Callable, Sequence
from datetime import datetime
from typing import Any, Protocol

from . import protocol as p
from . import solver
from .config import Config
from .daily import candidate_deals, utc_day
from .daily_attempts import DailyAttempts, daily_field
from .engine import Game
from .ghosts import Ghosts
from .interpreter import Delivery, Interpreter
from .keyed_locks import KeyedLocks
from .observe import Metrics, event
from .queries import Queries
from .rematches import Rematches
from .room import Ghost, Room, RoomError, Series, Status
from .spectators import Spectators
from .store import CodeTaken, FinishedRaceRecord, PlayerRecord, RaceRecord, Store

log = logging.getLogger("solitaire_race.races")

# Unambiguous when read aloud or handwritten: no vowels (no words), no I/L/1, O/0, S/5, Z/2.
CODE_ALPHABET = "BCDFGHJKMNPQRTVWXY"
CODE_LENGTH = 6
HINT_BUDGET = solver.Budget(nodes=20_000, seconds=2.0, shorten_nodes=0)


class Placement(Protocol):
    """Where races run when this process is one node of a cluster (``cluster/placement.py``);
    ``Races.placement`` is None on a single process, where every race runs here."""

    async def placed(self, race_id: int) -> None:
        """A new race, run here: hold it (or raise ``StorageUnavailable``)."""

    async def unplaced(self, race_id: int) -> None:
        """A new race dropped before it opened: let it go at once."""

    async def held_elsewhere(self, race_id: int) -> bool:
        """Whether another live node holds the race (or raise ``StorageUnavailable``)."""

    async def find(self, race: RaceRecord) -> Room:
        """The unfinished ``race``'s room here, adopted if no node runs it; or raise
        ``ProtocolError(RACE_ELSEWHERE)`` with the URL of the node that runs it."""

    def forgotten(self, room: Room) -> None:
        """A finished room was released: let its race go."""

    async def lobbies(self) -> list[dict[str, Any]]:
        """The public lobbies of every node."""


def new_join_code() -> str:
    return "".join(secrets.choice(CODE_ALPHABET) for _ in range(CODE_LENGTH))


class Races(DailyAttempts, Rematches, Ghosts, Spectators):
    def __init__(
        self, *, store: Store, secret: bytes, config: Config, clock: Callable[[], float],
        wall_clock: Callable[[], datetime], queries: Queries, delivery: Delivery, metrics: Metrics,
    ) -> None:
        self.store = store
        self.secret = secret
        self.config = config
        self.clock = clock
        self.wall_clock = wall_clock
        self.queries = queries
        self.delivery = delivery
        self.rooms: dict[str, Room] = {}
        self.seats: dict[int, Room] = {}  # player id -> the room their connection is in
        self.watched_by: dict[int, int] = {}  # a watching connection's (negative) id -> the player signed in on it
        self.daily_rooms: dict[tuple[int, str, str], Room] = {}  # (player, game, date) -> attempt
        self._daily_starts = KeyedLocks()  # start_daily served one at a time per player
        self.placement: Placement | None = None  # set when this process is a node of a cluster
        self._proposing: dict[Room, asyncio.Future[str]] = {}  # rematches being made, by finished room
        self.stopping = False  # shutdown(): connections closing now leave their rooms as they are
        self.interpreter = Interpreter(
            store=store, delivery=delivery, metrics=metrics, clock=clock, wall_clock=wall_clock,
            seated=self.seated, forget=self.forget, progress_interval_s=config.progress_interval_s,
        )
        self._moves_counted = metrics.counter("solitaire_moves_total")
        self._moves_rejected = metrics.counter("solitaire_moves_rejected_total")
        metrics.gauge("solitaire_races", "Races in memory, by status.", self._count_by_status)

    def _count_by_status(self) -> list[tuple[dict[str, str], float]]:
        counts = {s.value: 0 for s in Status}
        for room in self.rooms.values():
            counts[room.status.value] += 1
        return [({"status": k}, v) for k, v in counts.items()]

    # --- seats -----------------------------------------------------------------------
    def seated(self, room: Room, player_id: int) -> bool:
        if self.seats.get(player_id) is not room:
            return False
        # A connection that races in the race it watches is sent its messages once, as a racer.
        return player_id > 0 or self.seats.get(self.watched_by.get(player_id, 0)) is not room

    def _room(self, player_id: int) -> Room:
        room = self.seats.get(player_id)
        if room is None:
            raise p.ProtocolError(p.ErrorCode.NOT_IN_RACE, "you are not in a race: create or join one")
        return room

    def _free(self, player_id: int) -> None:
        """Refuse a new race while the player sits in one that is not finished."""
        room = self.seats.get(player_id)
        if room is not None:
            raise p.ProtocolError(p.ErrorCode.ALREADY_IN_RACE, f"leave race {room.code} first")

    def _free_but_finished(self, player_id: int) -> None:
        """``_free``, before ``_leave_finished``: a finished race is left only once the new
        request can no longer be refused (a refused request changes nothing)."""
        room = self.seats.get(player_id)
        if room is not None and room.status is not Status.FINISHED:
            raise p.ProtocolError(p.ErrorCode.ALREADY_IN_RACE, f"leave race {room.code} first")

    async def _leave_finished(self, player_id: int) -> None:
        """The player moves on from a finished race (to another race): the room is
        released once none of its racers is still in it (``Interpreter.run``)."""
        room = self.seats.get(player_id)
        if room is not None and room.status is Status.FINISHED:
            del self.seats[player_id]
            if player_id in room.racers:
                await self.interpreter.run(room, room.leave(player_id, self.clock()))

    async def disconnected(self, player_id: int) -> None:
        """The player's connection went: they leave the room they sat in (a running race
        keeps their game for the grace period); a spectator's, the race it watched."""
        room = self.seats.pop(player_id, None)
        self.watched_by.pop(player_id, None)
        if room is not None:
            room.spectators.discard(player_id)
        if room is not None and player_id in room.racers and not self.stopping:
            await self.interpreter.run(room, room.leave(player_id, self.clock()))

    def reconnected(self, player_id: int) -> None:
        """A new connection took over the player's seat: replies may have gone to the old
        one, so their next move result carries the whole view."""
        room = self.seats.get(player_id)
        if room is not None:
            room.resync(player_id)

    def forget(self, room: Room) -> None:
        """Release a finished room that nobody looks at any more: its result is stored, and
        ``join_race`` answers from the store from now on."""
        if self.rooms.get(room.code) is room:
            del self.rooms[room.code]
        for key in [k for k, r in self.daily_rooms.items() if r is room]:
            del self.daily_rooms[key]
        for player_id in [pid for pid, r in self.seats.items() if r is room]:
            del self.seats[player_id]
        self.interpreter.cancel(room)
        if self.placement is not None:
            self.placement.forgotten(room)

    # --- the lobby -------------------------------------------------------------------
    async def list_races(self) -> list[dict[str, Any]]:
        if self.placement is not None:
            return await self.placement.lobbies()
        return [r.summary() for r in self.rooms.values() if not r.private and r.open]

    async def create_race(self, player: PlayerRecord, req: p.CreateRace) -> None:
        player_id = player.id
        self._free_but_finished(player_id)
        game = self.queries.game(req.game)
        owned = sum(1 for r in self.rooms.values() if r.created_by == player_id and r.status is not Status.FINISHED)
        if owned >= self.config.max_rooms_per_player:
            raise p.ProtocolError(
                p.ErrorCode.TOO_MANY_ROOMS,
                f"you already have {owned} unfinished races (at most {self.config.max_rooms_per_player})",
            )
        deal = req.deal if req.deal is not None else secrets.randbelow(1_000_000_000)
        # Any of today's candidates: the one chosen may not be stored yet just after a start.
        if deal in candidate_deals(self.secret, game.id, self.queries.today()):
            # Practising today's daily in a private race would make its ranking unfair.
            raise p.ProtocolError(
                p.ErrorCode.BAD_REQUEST, "that is today's daily challenge deal: play it with start_daily"
            )
        await self._leave_finished(player_id)  # only once nothing can refuse the request
        self._free(player_id)
        limit = req.time_limit_s or self.config.time_limit_s
        record = await self._new_race_record(
            game.id, deal, req.private, player_id, limit, best_of=req.best_of, live_boards=req.live_boards
        )
        room = self.new_room(record, game, limit, series=Series(record.id, record.best_of, 1))
        self.seats[player_id] = room
        await self.interpreter.run(room, room.join(player_id, player.name, self.clock()), reply=(player_id, req.id))

    async def _new_race_record(
        self, game_id: str, deal: int, private: bool, player_id: int, limit: int, daily_date: str | None = None,
        best_of: int | None = None, series: Series | None = None, place: bool = True, ghost: str | None = None,
        live_boards: bool = False,
    ) -> RaceRecord:
        """Store a new race under a fresh join code (retrying the rare taken code): a race
        of ``best_of`` (the next race of ``series``, or the first of its own), or a daily
        attempt of ``daily_date``; on a cluster's node, held here (unless not ``place``)."""
        for _ in range(20):
            code = new_join_code()
            if code in self.rooms:
                continue
            try:
                record = await self.store.create_race(
                    code=code, game=game_id, deal_number=deal, private=private, created_by=player_id,
                    time_limit_s=limit, now=self.wall_clock(),
                    kind="race" if daily_date is None else "daily", daily_date=daily_date, best_of=best_of,
                    series_id=series.id if series else None, series_number=series.number if series else 1,
                    ghost=ghost, live_boards=live_boards,
                )
            except CodeTaken:
                continue
            if place and self.placement is not None:
                await self.placement.placed(record.id)
            return record
        raise RuntimeError("could not find a free join code")

    def new_room(
        self, record: RaceRecord, game: Game[Any], limit: int, daily: dict[str, Any] | None = None,
        series: Series | None = None, ghost: Ghost | None = None,
    ) -> Room:
        room = Room(
            race_id=record.id, code=record.code, game=game, deal_number=record.deal_number, secret=self.secret,
            private=record.private, creator_id=record.created_by, time_limit_s=limit,
            countdown_s=self.config.countdown_s, max_players=1 if daily or ghost else self.config.max_players,
            link=f"{self.config.public_url}/join/{record.code}",
            # A daily attempt's clock runs on through a disconnect, up to the time limit.
            leave_grace_s=limit if daily else self.config.leave_grace_s,
            daily=daily, fair_play=self.config.fair_play_holds, series=series, ghost=ghost,
            live_boards=record.live_boards,
        )
        self.rooms[record.code] = room
        if self.placement is not None and record.status == "open":
            self.interpreter.lobby_epochs[record.id] = record.epoch  # its start claims from this epoch
        event(log, "race_created", race=record.id, code=record.code, game=game.id, deal=record.deal_number,
              player=record.created_by, daily=daily["date"] if daily else None)
        return room

    async def _room_of(self, code: str) -> Room | None:
        """The room of race ``code`` (normalized) if it runs here, adopted here if no node runs
        it; None if it is not in memory (finished, or no such race). Raises
        ``race_elsewhere`` when another node runs it."""
        room = self.rooms.get(code)
        if room is None and self.placement is not None and code:
            unfinished = await self.store.race_by_code(code)
            if unfinished is not None and unfinished.status != "finished":
                room = await self.placement.find(unfinished)  # or raises: it runs on another node
        return room

    async def join_race(self, player: PlayerRecord, req: p.JoinRace) -> None:
        player_id = player.id
        code = p.normalize_code(req.code)
        room = await self._room_of(code)
        if room is None:
            finished = await self.store.finished_race(code) if code else None
            if finished is not None and any(r.player_id == player_id for r in finished.results):
                # Released from memory, or finished before a restart: its result is stored.
                await self._leave_finished(player_id)
                await self._send_finished(player_id, finished, req.id)
                return
        if room is None or (room.status is Status.FINISHED and player_id not in room.racers):
            raise p.ProtocolError(p.ErrorCode.NO_SUCH_RACE, f"no race with code {req.code[:16]!r}")
        current = self.seats.get(player_id)
        if current is not None and current is not room:
            self._free_but_finished(player_id)
        effects = room.join(player_id, player.name, self.clock())  # may refuse: nothing changed yet
        if current is not None and current is not room:
            await self._leave_finished(player_id)
        self.seats[player_id] = room
        await self.interpreter.run(room, effects, reply=(player_id, req.id))

    async def _send_finished(
        self, player_id: int, finished: FinishedRaceRecord, request_id: Any, racer: bool = True
    ) -> None:
        """A stored finished race, as a racer coming back to it sees it: its `room` (the
        reply), then `race_finished` with the ranking."""
        race = finished.race
        ranking = [
            {"player_id": r.player_id, "name": r.player_name, "rank": r.rank, "outcome": r.outcome,
             "time_ms": r.time_ms, "moves": r.moves, "home": r.home, "total": r.total, "held": r.held}
            for r in finished.results
        ]
        players = [(r.player_id, r.player_name) for r in finished.results]
        summary = self.stored_summary(race, players, Status.FINISHED)
        series = await self.series_of(race)
        if series is not None:
            series = series.after([(r.player_id, r.player_name, r.rank) for r in finished.results])
        shown = {"series": series.to_json()} if series is not None and series.shown else {}
        if race.rematch_code and racer:  # to its racers only (a private room's code); its code is enough to join
            summary["rematch"] = {"code": race.rematch_code}
        self.delivery.send(player_id, p.reply({"type": "room", "race": summary | shown}, request_id))
        message: dict[str, Any] = {
            "type": "race_finished", "code": race.code, "game": race.game, "deal": race.deal_number, "ranking": ranking,
            **shown,
        }
        daily = await self.daily_facts(race, finished.daily_ranked)
        if daily is not None:
            message["daily"] = daily
        self.delivery.send(player_id, message)

    def stored_summary(
        self, race: RaceRecord, players: Sequence[tuple[int, str]], status: Status = Status.LOBBY
    ) -> dict[str, Any]:
        """A race's summary (as ``Room.summary``) from what the database holds: who is in it,
        but not who is ready or connected."""
        return {
            "code": race.code, "link": f"{self.config.public_url}/join/{race.code}", "game": race.game,
            "deal": race.deal_number, "private": race.private, "status": status.value,
            "creator_id": race.created_by, "time_limit_s": race.time_limit_s,
            "max_players": 1 if race.kind == "daily" or race.ghost else self.config.max_players,
            "live_boards": race.live_boards,
            "players": [{"id": pid, "name": name, "ready": False, "connected": False} for pid, name in players],
        }

    async def daily_facts(self, race: RaceRecord, ranked: bool) -> dict[str, Any] | None:
        """The ``daily`` field of a daily attempt's messages (None for a race)."""
        if race.kind != "daily" or not race.daily_date:
            return None
        challenge = await self.store.find_daily_challenge(race.game, race.daily_date)
        # A practice attempt is an unranked one of a day before the one it was made on.
        practice = not ranked and race.daily_date < utc_day(race.created_at).isoformat()
        return daily_field(race.daily_date, ranked, challenge.par if challenge else None, practice)

    async def leave_race(self, player: PlayerRecord, req: p.LeaveRace) -> None:
        player_id = player.id
        room = self._room(player_id)
        now = self.clock()
        effects = []
        if room.status is Status.RUNNING and not room.racers[player_id].done:
            effects += room.resign(player_id, now)  # leaving a running race gives it up
        effects += room.leave(player_id, now)
        del self.seats[player_id]
        await self.interpreter.run(room, effects)
        self.delivery.send(player_id, p.reply({"type": "left", "code": room.code}, req.id))

    async def ready(self, player: PlayerRecord, req: p.Ready) -> None:
        room = self._room(player.id)
        await self.interpreter.run(room, room.set_ready(player.id, req.ready, self.clock()), reply=(player.id, req.id))

    async def start_race(self, player: PlayerRecord, req: p.StartRace) -> None:
        room = self._room(player.id)
        await self.interpreter.run(room, room.start(player.id, self.clock()), reply=(player.id, req.id))

    # --- racing ----------------------------------------------------------------------
    def move(
        self, player: PlayerRecord, req: p.Move, answered: Callable[[Any, BaseException | None], None]
    ) -> bool:
        """Play the moves. Returns False if the answer was sent already; True if it comes
        later, once the moves' log entries are committed (then ``answered(req.id, error)``
        is called once, ``error`` None if all went well). The usual move awaits nothing: it
        is answered from its commit's callback, with none of a task's suspending and waking."""
        player_id = player.id
        room = self._room(player_id)
        started = time.perf_counter()
        played = room.play(player_id, req.moves, self.clock())
        message = played.answer.message
        self._moves_counted.inc(len(message["applied"]))
        if message["rejected"]:
            self._moves_rejected.inc()
        if played.closing:  # the race ended: all of it in order, results awaited
            def ended(task: asyncio.Task[None]) -> None:
                self.interpreter.observe_move(started)
                answered(req.id, asyncio.CancelledError() if task.cancelled() else task.exception())

            task = asyncio.create_task(self.interpreter.run(room, played.effects, (player_id, req.id)))
            task.add_done_callback(ended)
            return True
        return self.interpreter.answer_move(room, played, req.id, started, answered)

    async def resign(self, player: PlayerRecord, req: p.Resign) -> None:
        room = self._room(player.id)
        await self.interpreter.run(room, room.resign(player.id, self.clock()), reply=(player.id, req.id))

    # --- practice hints ---------------------------------------------------------------
    async def hint(self, player: PlayerRecord, req: p.Hint) -> dict[str, Any]:
        """The next move of a winning line, when practising a past day only: the `hint_result`."""
        player_id = player.id
        room = self._room(player_id)
        if not room.daily or not room.daily["practice"]:
            raise p.ProtocolError(
                p.ErrorCode.NOT_ALLOWED,
                "hints are for practising a past day's daily challenge only (start_daily with its date): "
                "never in a race, nor on today's deal",
            )
        racer = room.racers[player_id]
        if room.status is not Status.RUNNING or racer.done:
            raise p.ProtocolError(p.ErrorCode.GAME_OVER, "your game is over")
        # The solver is CPU-bound: a thread keeps the event loop turning (1 ms GIL slices).
        # The solver sees only what the player sees where cards are hidden (solver.hint).
        found = await asyncio.to_thread(solver.hint, room.game, racer.state, HINT_BUDGET)
        return {"move": found.move, "message": found.describe()}

    # --- start and stop ----------------------------------------------------------------
    def start(self) -> None:
        """Start the background work (once the event loop runs)."""
        self.interpreter.start(lambda: list(self.rooms.values()))

    def shutdown(self) -> None:
        """Stop: every acknowledged move is already durable. Races and lobbies stay in the
        database, with their players, and resume when the server starts again."""
        self.stopping = True
        self.interpreter.stop()


__all__ = ["CODE_ALPHABET", "Races", "RoomError", "new_join_code"]
