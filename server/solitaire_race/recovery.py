"""Bringing races back after a restart or a crash, from the database.

Running races are rebuilt from their move log (``Room.restore`` replays every move through
the engine), their clocks placed on this process's clock from their stored start: the
race clock kept running while the server was down. A race whose every game had ended is
closed at once. Lobbies come back with their players (``Room.restore_lobby``); a countdown
comes back as a lobby. A race that cannot be resumed (its game is no longer served, or its
log does not replay) is closed without results and the reason logged, so that the others
resume; its moves stay in the move log. Left running, it would also keep every later
restart reading the move log from its start (docs/database.md).
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Collection

from .engine import IllegalMove, NotationError
from .observe import event
from .races import Races
from .store import Fenced, NotFound, RaceRecord

log = logging.getLogger("solitaire_race.races")


async def recover(races: Races, only: Collection[int] | None = None) -> None:
    """Bring back every lobby and running race the database holds; with ``only``, those of
    these race ids (a cluster's node adopting the races of a node that died): they are
    claimed first (their epochs raised), so that every move their last owner could still
    commit is in the log read below, and none after it."""
    store = races.store
    claimed = {}
    for race_id in only or ():
        with contextlib.suppress(NotFound):  # an empty lobby deleted meanwhile: nothing to resume
            claimed[race_id] = await store.claim_race(race_id)
    now, wall = races.clock(), races.wall_clock()
    for lobby in await store.open_races(only):
        await _recover_lobby(races, lobby.race, lobby.players, now, claimed.get(lobby.race.id))
    for saved in await store.running_races(only):
        race = saved.race
        game = races.queries.games.get(race.game)
        daily = await races.daily_facts(race, saved.daily_ranked)
        names = dict(saved.players)
        try:
            if game is None or race.started_at is None:
                raise ValueError(f"unknown game {race.game!r}" if game is None else "no start time")
            series, ghost = await races.series_of(race), await races.ghost_for(race)
            room = races.new_room(race, game, race.time_limit_s, daily, series, ghost)
            start_at = now - (wall - race.started_at).total_seconds()
            closing = room.restore(start_at, [(pid, names[pid], saved.logs.get(pid, ())) for pid in names], now)
        except (ValueError, IllegalMove, NotationError) as exc:
            event(log, "race_not_resumed", logging.ERROR, race=race.id, code=race.code, game=race.game, reason=str(exc))
            races.rooms.pop(race.code, None)
            await store.finish_race(race.id, wall, [])
            continue
        # Ours now: an older owner writes no more.
        races.interpreter.epochs[race.id] = claimed.get(race.id) or await store.claim_race(race.id)
        if daily is not None and race.daily_date:
            races.daily_rooms[(race.created_by, race.game, race.daily_date)] = room
        event(log, "race_resumed", race=race.id, code=race.code, game=race.game, players=list(names))
        # Closes it at once if every game had ended, or its time ran out.
        await races.interpreter.run(room, closing + room.tick(now))


async def _recover_lobby(
    races: Races, race: RaceRecord, players: tuple[tuple[int, str], ...], now: float, epoch: int | None
) -> None:
    """A lobby (or a countdown, which comes back as a lobby) left by a restart: back with
    its players, who have the grace period to return; an empty one is deleted (adopted:
    only while ``epoch``, this node's claim, is still its)."""
    if race.kind == "daily":
        # Died between claiming the attempt and recording its start: the player may have
        # seen the deal, so the claim stands (its row keeps the race) and nothing resumes.
        return
    game = races.queries.games.get(race.game)
    if game is None or not players:
        await _abandon(races, race.id, epoch)
        return
    try:
        ghost = await races.ghost_for(race)
    except ValueError as exc:  # a practice lobby whose run is gone: not brought back (it never started)
        event(log, "lobby_not_resumed", logging.ERROR, race=race.id, code=race.code, reason=str(exc))
        await _abandon(races, race.id, epoch)
        return
    room = races.new_room(race, game, race.time_limit_s, series=await races.series_of(race), ghost=ghost)
    room.restore_lobby(players, now)
    event(log, "lobby_resumed", race=race.id, code=race.code, game=race.game, players=[pid for pid, _ in players])
    races.interpreter.schedule(room)


async def _abandon(races: Races, race_id: int, epoch: int | None) -> None:
    with contextlib.suppress(Fenced):  # another node adopted the lobby since: it is that node's
        await races.store.abandon_race(race_id, epoch)
