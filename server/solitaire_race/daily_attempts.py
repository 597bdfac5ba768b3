"""Daily attempts: ``start_daily``, a player's attempt at a day's challenge started, or
resumed (a part of ``Races``, kept in its own module; docs/protocol.md, ``start_daily``).

A player's first attempt of the day at a game is ranked, by the key of ``daily_attempts``
(``Store.claim_daily_attempt``); later ones are unranked; a past day's is practice. Requests
of one player are served one at a time on a node; on a cluster, an attempt another node
runs is found through the ``Placement`` and the player sent there (``race_elsewhere``).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Coroutine
from datetime import datetime
from typing import TYPE_CHECKING, Any

from . import protocol as p
from .config import Config
from .daily_planner import DailyNotReady
from .interpreter import Interpreter
from .keyed_locks import KeyedLocks
from .observe import event
from .queries import Queries
from .room import Room, Status
from .store import DailyChallengeRecord, PlayerRecord, RaceRecord, Store

if TYPE_CHECKING:
    from .races import Placement

log = logging.getLogger("solitaire_race.races")


class DailyAttempts:
    """``start_daily`` and what it needs of ``Races``."""

    config: Config
    store: Store
    queries: Queries
    interpreter: Interpreter
    clock: Callable[[], float]
    wall_clock: Callable[[], datetime]
    seats: dict[int, Room]
    daily_rooms: dict[tuple[int, str, str], Room]  # (player, game, date) -> attempt
    _daily_starts: KeyedLocks  # start_daily served one at a time per player
    placement: Placement | None
    stopping: bool
    # Races' own, which this request builds on:
    _leave_finished: Callable[[int], Coroutine[Any, Any, None]]
    _free: Callable[[int], None]
    _new_race_record: Callable[..., Coroutine[Any, Any, RaceRecord]]
    new_room: Callable[..., Room]

    async def start_daily(self, player: PlayerRecord, req: p.StartDaily) -> None:
        """Start or resume the player's attempt, one request at a time per player on this
        node: a newer connection's request (the older connection's may still be in flight
        when the newer signs in) waits for the older one's, then resumes the attempt it
        started. (So a start of another game waits too, while today's deal is being chosen.)"""
        async with self._daily_starts.hold(player.id):
            if self.stopping:  # waited through the shutdown: the connection is closing
                raise p.ProtocolError(p.ErrorCode.NOT_ALLOWED, "the server is restarting: start it again then")
            await self._start_daily(player, req)

    async def _start_daily(self, player: PlayerRecord, req: p.StartDaily) -> None:
        player_id, name = player.id, player.name
        game = self.queries.game(req.game)
        today, when = self.queries.today(), self.queries.day(req.date)
        day = when.isoformat()
        key = (player_id, game.id, day)
        current = self.daily_rooms.get(key)
        if current is None and self.placement is not None:  # an attempt another node may run
            running = await self.store.running_daily_race(player_id, game.id, day)
            current = None if running is None else await self.placement.find(running)
        resuming = current is not None and current.status is Status.RUNNING
        practice = when < today  # a past day's deal: never ranked, hints allowed (docs/fair-play.md)
        challenge: DailyChallengeRecord | None = None
        if practice and not resuming:  # refused before anything changes
            if not self.queries.practice_open(when):
                raise p.ProtocolError(
                    p.ErrorCode.NOT_ALLOWED,
                    f"the challenges of {day} can be practised once its last ranked attempts are over "
                    f"({self.config.time_limit_s // 60} minutes after midnight UTC)",
                )
            challenge = await self.store.find_daily_challenge(game.id, day)
            if challenge is None:
                raise p.ProtocolError(p.ErrorCode.NOT_FOUND, f"no daily challenge of {day} for {game.id}")
        elif not resuming:
            try:  # usually a read; it waits only while the day's deal is being chosen
                challenge = await self.queries.challenge(game.id, today)
            except DailyNotReady as exc:
                raise p.ProtocolError(p.ErrorCode.NOT_FOUND, str(exc)) from None
        await self._leave_finished(player_id)
        if current is not None and resuming:
            await self._resume_daily(player, current, req)
            return
        assert challenge is not None  # looked up above: a refusal comes before anything changes
        self._free(player_id)
        limit = self.config.time_limit_s
        record = await self._new_race_record(game.id, challenge.deal_number, True, player_id, limit, daily_date=day)
        ranked = not practice and await self.store.claim_daily_attempt(
            game.id, day, player_id, record.id, self.wall_clock()
        )
        if not practice and not ranked and self.placement is not None:
            ranked_room = await self._lost_claim(player_id, game.id, day, record)
            if ranked_room is not None:
                await self._resume_daily(player, ranked_room, req)
                return
        room = self.new_room(record, game, limit, daily=daily_field(day, ranked, challenge.par, practice))
        self.daily_rooms[key] = room
        self.seats[player_id] = room
        now = self.clock()
        room.join(player_id, name, now)  # a lobby of one, never stored: it starts at once
        await self.interpreter.run(room, room.start_now(player_id, now), reply=(player_id, req.id, "race_started"))

    async def _resume_daily(self, player: PlayerRecord, room: Room, req: p.StartDaily) -> None:
        """The attempt in progress, resumed: its clock never stopped."""
        seat = self.seats.get(player.id)
        if seat is not None and seat is not room:
            raise p.ProtocolError(p.ErrorCode.ALREADY_IN_RACE, f"leave race {seat.code} first")
        self.seats[player.id] = room
        await self.interpreter.run(
            room, room.join(player.id, player.name, self.clock()), reply=(player.id, req.id, "race_started")
        )

    async def _lost_claim(self, player_id: int, game_id: str, day: str, record: RaceRecord) -> Room | None:
        """On a cluster, today's ranked attempt went to another race than ``record``. If
        that race runs, or is being started by another node (which holds it), it was started
        in the same moment as ``record`` (a newer connection of the player's signed in there
        while this one's request was in flight): ``record`` is dropped and the player goes to
        that attempt, never given a second, unranked one beside it. That attempt's room is
        returned to resume if it runs here; if it runs on another node, ``race_elsewhere``
        is raised (the client follows it there). Otherwise (the attempt is over, or its start
        was never recorded) None: ``record`` is the player's unranked go, as on one process."""
        assert self.placement is not None
        ranked_id = await self.store.ranked_attempt(game_id, day, player_id)
        ranked = None if ranked_id is None else await self.store.race(ranked_id)
        if ranked is None or ranked.status == "finished":
            return None
        if ranked.status == "open" and not await self.placement.held_elsewhere(ranked.id):
            return None  # its node stopped before the start was recorded: it never runs
        try:
            room = await self.placement.find(ranked)  # race_elsewhere, raised, if another node runs it
        except p.ProtocolError:
            await self._drop(record)
            event(log, "daily_attempt_elsewhere", player=player_id, game=game_id, day=day, race=ranked.id)
            raise
        if room.status is not Status.RUNNING:
            return None  # here, and over (its results being saved): ``record`` is the unranked go
        await self._drop(record)
        return room

    async def _drop(self, record: RaceRecord) -> None:
        """A race made here that never opened: gone, and its lease with it."""
        try:
            await self.store.abandon_race(record.id)
        finally:
            assert self.placement is not None
            await self.placement.unplaced(record.id)


def daily_field(day: str, ranked: bool, par: int | None, practice: bool) -> dict[str, Any]:
    """The ``daily`` field of a daily attempt's messages."""
    return {"date": day, "ranked": ranked, "par": par, "practice": practice}
