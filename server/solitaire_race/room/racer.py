"""One racer in a room: their game, their log and how their race stands."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..results import RacerOutcome


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
