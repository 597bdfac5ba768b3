"""Races against a ghost: practice on a finished race's deal against one racer's recorded run,
whose progress arrives at the race times it was made (a part of ``Races``, kept in its own
module; docs/protocol.md, ``race_ghost``; the room's side is ``room/ghost.py``).

The run may be the player's own, a friend's from a link, or any result on a daily board once
the player has made their own ranked attempt of that day (``Queries.finished_race`` decides,
as for replays). Such a race is solo and never ranked: no result of it is stored.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine, Sequence
from typing import Any

from . import protocol as p
from .config import Config
from .engine import Game, IllegalMove, NotationError
from .interpreter import Interpreter
from .queries import Queries
from .replays import move_times
from .results import rank_key
from .room import Ghost, Room
from .store import FinishedRaceRecord, PlayerRecord, RaceRecord


class Ghosts:
    """``race_ghost``, and the ghosts of the rooms ``Races`` brings back."""

    config: Config
    queries: Queries
    secret: bytes
    seats: dict[int, Room]
    interpreter: Interpreter
    clock: Callable[[], float]
    # Races' own, which this request builds on:
    _leave_finished: Callable[[int], Coroutine[Any, Any, None]]
    _free: Callable[[int], None]
    _free_but_finished: Callable[[int], None]
    _new_race_record: Callable[..., Coroutine[Any, Any, RaceRecord]]
    new_room: Callable[..., Room]

    async def race_ghost(self, player: PlayerRecord, req: p.RaceGhost) -> None:
        player_id = player.id
        self._free_but_finished(player_id)
        finished = await self.queries.finished_race(req.code, player_id)
        ghost = await self.ghost_of(finished, req.player_id)
        race, limit = finished.race, self.config.time_limit_s
        game = self.queries.game(race.game)
        await self._leave_finished(player_id)  # only once nothing can refuse the request
        self._free(player_id)
        record = await self._new_race_record(
            game.id, race.deal_number, True, player_id, limit, ghost=f"{race.code}:{req.player_id}"
        )
        room = self.new_room(record, game, limit, ghost=ghost)
        self.seats[player_id] = room
        await self.interpreter.run(room, room.join(player_id, player.name, self.clock()), reply=(player_id, req.id))

    async def ghost_for(self, race: RaceRecord) -> Ghost | None:
        """The ghost of a race brought back by a restart or a takeover (None: it has none)."""
        if race.ghost is None:
            return None
        code, _, player_id = race.ghost.partition(":")
        finished = await self.queries.store.finished_race(code)
        if finished is None or not player_id.isdigit():
            raise ValueError(f"the run raced against, {race.ghost}, is not stored")
        try:
            return await self.ghost_of(finished, int(player_id))
        except (p.ProtocolError, IllegalMove, NotationError) as exc:  # its game gone, or its log no longer replays
            raise ValueError(f"the run raced against, {race.ghost}, cannot be rebuilt: {exc}") from None

    async def ghost_of(self, finished: FinishedRaceRecord, player_id: int) -> Ghost:
        """One racer's run of a finished race, as a ghost: its cards home after each move,
        replayed by the engine, at the moves' race times; and the field a result is ranked
        against at the end: the day's board for a daily attempt, else the race's results."""
        result = next((r for r in finished.results if r.player_id == player_id), None)
        if result is None:
            raise p.ProtocolError(
                p.ErrorCode.NOT_FOUND, f"player {player_id} has no result in race {finished.race.code}"
            )
        game = self.queries.game(finished.race.game)
        first = game.deal(finished.race.deal_number, self.secret)
        dealt_home = game.progress(first).home
        # A run may hold tens of thousands of moves: a thread keeps the event loop turning.
        homes = await asyncio.to_thread(_homes, game, first, result.move_log)
        times, _ = move_times(result)
        day = finished.race.daily_date
        if day is not None:
            field = await self.queries.store.daily_board_keys(finished.race.game, day)
        else:
            field = [rank_key(r.outcome, r.time_ms, r.moves, r.total - r.home) for r in finished.results]
        points = tuple(zip(times, homes, strict=True))
        return Ghost(
            finished.race.code, player_id, result.player_name, result.total, points, result.outcome, result.time_ms,
            tuple(field), daily_date=day, dealt_home=dealt_home,
        )


def _homes(game: Game[Any], state: Any, moves: Sequence[str]) -> list[int]:
    """The cards home after each of ``moves``, played from ``state``."""
    homes = []
    for text in moves:
        state = game.apply(state, game.parse_move(text))
        homes.append(game.progress(state).home)
    return homes
