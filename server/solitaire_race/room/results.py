"""A race's results: each racer's, ranked, and checked against the move logs.

Pure functions of the game and the racers; ``Room`` calls them when the race closes and
before its results may be saved.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from ..engine import Game, ReplayError, replay
from ..fair_play import PLAUSIBLE, Assessment, assess
from ..results import RacerOutcome, rank_key
from .racer import Racer


@dataclass(frozen=True, slots=True)
class Result:
    player_id: int
    name: str
    rank: int
    outcome: RacerOutcome
    time_ms: int | None  # from the common start to the end of this racer's game
    moves: int
    home: int
    total: int
    move_log: tuple[str, ...]
    fair_play: Assessment = PLAUSIBLE  # held off the public boards if implausible (fair_play.py)
    move_times: tuple[int, ...] = ()  # each move's race time (ms), for replays

    def to_json(self) -> dict[str, Any]:
        return {
            "player_id": self.player_id,
            "name": self.name,
            "rank": self.rank,
            "outcome": self.outcome,
            "time_ms": self.time_ms,
            "moves": self.moves,
            "home": self.home,
            "total": self.total,
            "held": self.fair_play.held,
        }


def rank(
    game: Game[Any], racers: Iterable[Racer], fair_play: bool = True, parse: Callable[[str], Any] | None = None
) -> tuple[Result, ...]:
    """The racers' results in ``results.rank_key``'s order (then by player id), each with
    its fair-play assessment (unless ``fair_play`` is off: every result plausible), which
    reads the moves with ``parse`` (the game's own by default)."""
    unranked = []
    for r in racers:
        p = game.progress(r.state)
        outcome = r.outcome or RacerOutcome.TIMEOUT
        unranked.append((rank_key(outcome, r.end_ms, len(r.log), p.total - p.home), r.id, r, outcome, p))
    unranked.sort(key=lambda entry: entry[:2])
    return tuple(
        Result(
            r.id, r.name, place, outcome, r.end_ms, len(r.log), p.home, p.total, tuple(r.log),
            assess(game, r.log, r.times, outcome is RacerOutcome.WON, r.end_ms, parse) if fair_play else PLAUSIBLE,
            tuple(r.times),
        )
        for place, (_, _, r, outcome, p) in enumerate(unranked, start=1)
    )


def verify(game: Game[Any], first: Any, result: Result, parse: Callable[[str], Any]) -> None:
    """Replay a result's move log from the deal's ``first`` state: a log that does not
    replay, or that contradicts its result, raises ValueError."""
    try:
        state, applied = replay(game, first, result.move_log, parse)
    except ReplayError as exc:
        raise ValueError(f"player {result.player_id}'s log does not replay: {exc}") from None
    won = game.is_won(state)
    if (
        applied != result.moves
        or game.progress(state).home != result.home
        or won != (result.outcome == RacerOutcome.WON)
    ):
        raise ValueError(f"player {result.player_id}'s result contradicts its log")
