"""One racer in a room: their game, their log and how their race stands."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from ..engine import Game, Outcome
from ..results import RacerOutcome

ENDED_AS = {Outcome.WON: RacerOutcome.WON, Outcome.STUCK: RacerOutcome.STUCK}  # a game that ended by itself


@dataclass(slots=True)
class Racer:
    id: int
    name: str
    ready: bool = False
    connected: bool = True
    state: Any = None
    log: list[str] = field(default_factory=list)
    times: list[int] = field(default_factory=list)  # the race time each move of ``log`` came at
    outcome: RacerOutcome | None = None  # set when this racer's game is over
    end_ms: int | None = None
    gone_since: float | None = None  # disconnected mid-race at this time
    events: int = 0  # entries in this racer's durable log (the next seq)
    last_move_ms: int = 0  # when their last move was made (a game found stuck ends then)
    shown: Any = None  # the state whose view their client has (None: unknown): move results send changes to it
    unlogged: list[tuple[int, str, str, int]] = field(default_factory=list)  # entries whose write failed

    def record(self, kind: str, text: str, at_ms: int, count: int = 1) -> tuple[int, str, str, int]:
        entry = (self.events, kind, text, at_ms)
        self.events += count
        return entry

    @property
    def done(self) -> bool:
        return self.outcome is not None


def seen(racer: Racer) -> tuple[Any, int, str | None, int | None]:
    """What progress is made from: (state, moves, outcome, end_ms), as it is now."""
    return racer.state, len(racer.log), racer.outcome, racer.end_ms


def rebuilt(
    game: Game[Any], first: Any, pid: int, name: str, entries: Sequence[tuple[int, str, str, int]], code: str
) -> Racer:
    """A racer brought back from their durable log (seq, kind, text, at_ms), disconnected:
    every logged move replayed through the engine, so a log that does not replay is refused
    (``IllegalMove``) rather than trusted, and one with a gap raises ValueError."""
    racer = Racer(pid, name, connected=False, state=first)
    for seq, kind, text, at_ms in entries:
        if seq != racer.events:
            raise ValueError(f"race {code}: player {pid}'s log has seq {seq} where {racer.events} is due")
        racer.record(kind, text, at_ms)
        if kind == "move":
            racer.state = game.apply(racer.state, game.parse_move(text))
            racer.log.append(text)
            racer.times.append(at_ms)
            outcome = game.outcome(racer.state)
            if outcome is not Outcome.PLAYING:
                racer.outcome, racer.end_ms = ENDED_AS[outcome], at_ms
        else:  # resign / left
            racer.outcome = RacerOutcome.RESIGNED if kind == "resign" else RacerOutcome.LEFT
            racer.end_ms = at_ms
    return racer
