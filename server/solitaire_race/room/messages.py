"""The protocol messages a room sends, built from its state (docs/protocol.md)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..engine import Game
from ..results import RacerOutcome
from .racer import Racer, seen

if TYPE_CHECKING:
    from .room import Room


def summary(room: Room) -> dict[str, Any]:
    """The race summary of `room` and `races` messages."""
    return {
        "code": room.code,
        "link": room.link,
        "game": room.game.id,
        "deal": room.deal_number,
        "private": room.private,
        "status": room.status.value,
        "creator_id": room.creator_id,
        "time_limit_s": room.time_limit_s,
        "max_players": room.max_players,
        "live_boards": room.live_boards,
        "players": [
            {"id": r.id, "name": r.name, "ready": r.ready, "connected": r.connected}
            for r in room.racers.values()
        ],
        **series_fields(room),
    }


def series_fields(room: Room) -> dict[str, Any]:
    """The room's ``series`` field, if it is worth showing: the score before the race, or
    after it once it is over."""
    series = room.series_now
    return {"series": series.to_json()} if series is not None and series.shown else {}


def progress_fields(game: Game[Any], racer: Racer, *as_seen: Any) -> dict[str, Any]:
    """The racer's progress now, or ``as_seen`` by ``logged``."""
    state, moves, outcome, end_ms = as_seen or seen(racer)
    p = game.progress(state) if state is not None else None
    return {
        "player_id": racer.id,
        "name": racer.name,
        "home": p.home if p else 0,
        "total": p.total if p else 0,
        "moves": moves,
        "outcome": outcome or RacerOutcome.PLAYING,
        "time_ms": end_ms,
    }


def started(room: Room, racer: Racer, view: dict[str, Any], now: float) -> dict[str, Any]:
    """`race_started` for one racer: their view, and how the others stand."""
    return {
        "type": "race_started",
        "code": room.code,
        "game": room.game.id,
        "deal": room.deal_number,
        "elapsed_ms": room.elapsed_ms(now),
        "time_limit_s": room.time_limit_s,
        "view": view,
        "moves": len(racer.log),
        "outcome": racer.outcome or RacerOutcome.PLAYING,
        "opponents": [
            {"type": "progress", **progress_fields(room.game, r)} for r in room.racers.values() if r.id != racer.id
        ] + ([{"type": "progress", **room.ghost.progress()}] if room.ghost else []),
        **({"daily": room.daily} if room.daily else {}),
    }


def watching(room: Room, now: float) -> dict[str, Any]:
    """`watching`, to a spectator: the race and how every racer stands, never a card."""
    return {
        "type": "watching",
        "race": summary(room),
        "elapsed_ms": room.elapsed_ms(now) if room.status.value == "running" else None,
        "racers": [progress_fields(room.game, r) for r in room.racers.values()]
        + ([room.ghost.progress()] if room.ghost else []),
        **({"boards": room.boards_now()} if room.live_boards else {}),
    }


def finished(room: Room) -> dict[str, Any]:
    """`race_finished`: the ranking."""
    return {
        "type": "race_finished",
        "code": room.code,
        "game": room.game.id,
        "deal": room.deal_number,
        "ranking": [r.to_json() for r in room.results],
        **({"daily": room.daily} if room.daily else {}),
        **series_fields(room),
        **ghost_fields(room),
    }


def ghost_fields(room: Room) -> dict[str, Any]:
    """How the first racer's result compares with the ghost's run, in a race against one."""
    if room.ghost is None or not room.results:
        return {}
    r = room.results[0]
    return {"ghost": room.ghost.compared(r.outcome, r.time_ms, r.moves, r.home, r.total)}
