"""Rematches and series: a finished race's racers raced again together, and the running score
of the races they run one after another (a part of ``Races``, kept in its own module;
docs/protocol.md, ``rematch``; the score's rules are ``room/series.py``)."""

from __future__ import annotations

import asyncio
import secrets
from collections.abc import Callable, Coroutine
from typing import TYPE_CHECKING, Any

from . import protocol as p
from .daily import candidate_deals
from .engine import Game
from .interpreter import Interpreter
from .queries import Queries
from .room import Room, Score, Series, Status
from .store import PlayerRecord, RaceRecord, Store

if TYPE_CHECKING:
    from .races import Placement

NO_REMATCH = (
    "a rematch is asked for from a finished race you raced in (not a daily attempt, nor a race against a ghost)"
)


class Rematches:
    """``rematch`` and the series of the rooms ``Races`` makes and brings back."""

    store: Store
    secret: bytes
    queries: Queries
    rooms: dict[str, Room]
    seats: dict[int, Room]
    placement: Placement | None
    interpreter: Interpreter
    _proposing: dict[Room, asyncio.Future[str]]
    # Races' own, which these requests build on:
    join_race: Callable[[PlayerRecord, p.JoinRace], Coroutine[Any, Any, None]]
    _new_race_record: Callable[..., Coroutine[Any, Any, RaceRecord]]
    new_room: Callable[..., Room]

    async def series_of(self, race: RaceRecord) -> Series | None:
        """A stored race's place in its series, with the score before it (None: a daily
        attempt): for the rooms brought back after a restart or a takeover."""
        if race.kind == "daily" or race.ghost is not None:  # practice against a run: no series, no rematch
            return None
        score = await self.store.series_wins(race.series, race.series_number) if race.series_number > 1 else []
        return Series(race.series, race.best_of, race.series_number, tuple(Score(*s) for s in score))

    async def rematch(self, player: PlayerRecord, req: p.Rematch) -> None:
        """Race the racers of the finished race again: the first to ask makes the room and
        the others are invited (``rematch_proposed``); whoever asks after joins it."""
        room = self.seats.get(player.id)
        if req.race:
            if room is not None and room.status is not Status.FINISHED:  # refused before a rematch is made
                raise p.ProtocolError(p.ErrorCode.ALREADY_IN_RACE, f"leave race {room.code} first")
            named = self.rooms.get(p.normalize_code(req.race))
            if named is not None and named.status is Status.FINISHED and player.id in named.racers:
                room = named  # the race named, not the one sat in: its racers still in its room are invited
            else:
                # Its room was released (everyone left, or a restart): from the database.
                code = await self._stored_rematch(player, req)
                if not await self._join_rematch(player, code, req.id):
                    raise p.ProtocolError(p.ErrorCode.NO_SUCH_RACE, f"the rematch, race {code}, is gone: ask again")
                return
        if room is None or room.status is not Status.FINISHED or room.series is None:
            raise p.ProtocolError(p.ErrorCode.NOT_ALLOWED, NO_REMATCH)
        code = await self._rematch_code(player, room, req.same_deal)
        if not await self._join_rematch(player, code, req.id):
            # Its lobby was left empty, and deleted: the claim is let go, and a new one made.
            await self.store.release_rematch(room.race_id, code)
            if room.rematch is not None and room.rematch["code"] == code:
                room.rematch = None
            code = await self._rematch_code(player, room, req.same_deal)
            await self.join_race(player, p.JoinRace(code=code, id=req.id))

    async def _join_rematch(self, player: PlayerRecord, code: str, request_id: Any) -> bool:
        """Join the rematch ``code``: False if its lobby was left empty, and deleted;
        ``race_started`` if it ran without the player (it is not made again: the series
        has one race of each number)."""
        try:
            await self.join_race(player, p.JoinRace(code=code, id=request_id))
        except p.ProtocolError as exc:
            if exc.code is not p.ErrorCode.NO_SUCH_RACE:
                raise
            if await self.store.race_by_code(code) is None:
                return False
            raise p.ProtocolError(
                p.ErrorCode.RACE_STARTED, f"the rematch, race {code}, has started without you"
            ) from None
        return True

    async def _rematch_code(self, player: PlayerRecord, room: Room, same_deal: bool) -> str:
        """The code of ``room``'s rematch: the one made already, or one made now. One
        proposal at a time per race: whoever asks while it is being made gets it too."""
        if room.rematch is not None:
            return str(room.rematch["code"])
        proposing = self._proposing.get(room)
        if proposing is None:
            proposing = asyncio.ensure_future(self._propose_rematch(player, room, same_deal))
            self._proposing[room] = proposing
            proposing.add_done_callback(lambda _: self._proposing.pop(room, None))
        return await asyncio.shield(proposing)

    async def _propose_rematch(self, player: PlayerRecord, room: Room, same_deal: bool) -> str:
        """The rematch of ``room``, made now (its racers invited), unless another racer's came
        first: its code, ours or theirs."""
        series = room.series_now
        assert series is not None  # not a daily attempt: checked by the caller
        code, made = await self._make_rematch(
            player, room.race_id, room.game, room.deal_number if same_deal else None, room.private,
            room.time_limit_s, series, live_boards=room.live_boards,
        )
        if made:
            await self.interpreter.run(room, room.rematch_proposed(code, (player.id, player.name), same_deal))
        return code

    async def _stored_rematch(self, player: PlayerRecord, req: p.Rematch) -> str:
        """The rematch of a finished race no longer in memory (``req.race``), which the
        player raced in: the one made already, or one made now (its racers find it when they
        come back to the race: its code is in their ``room``)."""
        assert req.race is not None
        finished = await self.store.finished_race(p.normalize_code(req.race))
        if finished is None or all(r.player_id != player.id for r in finished.results):
            raise p.ProtocolError(p.ErrorCode.NOT_ALLOWED, NO_REMATCH)
        race = finished.race
        if race.rematch_code is not None and await self.store.race_by_code(race.rematch_code) is not None:
            return race.rematch_code
        if race.rematch_code is not None:  # its lobby was left empty, and deleted
            await self.store.release_rematch(race.id, race.rematch_code)
        series = await self.series_of(race)
        if series is None:
            raise p.ProtocolError(p.ErrorCode.NOT_ALLOWED, NO_REMATCH)
        series = series.after([(r.player_id, r.player_name, r.rank) for r in finished.results])
        game = self.queries.game(race.game)
        deal = race.deal_number if req.same_deal else None
        code, _ = await self._make_rematch(
            player, race.id, game, deal, race.private, race.time_limit_s, series, live_boards=race.live_boards
        )
        return code

    async def _make_rematch(
        self, player: PlayerRecord, race_id: int, game: Game[Any], deal: int | None, private: bool, limit: int,
        series: Series, *, live_boards: bool,
    ) -> tuple[str, bool]:
        """A rematch of finished race ``race_id`` (on ``deal``, or a fresh one, with live boards
        as it had), as the next race of ``series`` (as it stands after that race), unless
        another racer's came first
        (on another node, or while this one was being stored): its code, and whether it is
        ours."""
        deal = deal if deal is not None else secrets.randbelow(1_000_000_000)
        if deal in candidate_deals(self.secret, game.id, self.queries.today()):
            raise p.ProtocolError(  # as create_race: today's daily deal is played with start_daily only
                p.ErrorCode.NOT_ALLOWED, "that is today's daily challenge deal: play it with start_daily"
            )
        record = await self._new_race_record(
            game.id, deal, private, player.id, limit, best_of=series.best_of, series=series.next(), place=False,
            live_boards=live_boards,
        )
        # Read before the claim, so that its room is there the moment the claim is ours: the
        # others, who read the claim from the database, join it at once.
        room_series = await self.series_of(record)
        code = await self.store.claim_rematch(race_id, record.code)
        if code != record.code:  # another racer's rematch came first: ours was never seen
            await self.store.abandon_race(record.id)
            if code is None:
                raise p.ProtocolError(p.ErrorCode.NOT_ALLOWED, "that race is not finished")
            return code, False
        if self.placement is not None:
            await self.placement.placed(record.id)
        self.new_room(record, game, limit, series=room_series)
        return record.code, True

