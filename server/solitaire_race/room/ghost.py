"""A ghost: a recorded run raced against (docs/protocol.md, ``create_race`` with ``ghost``).

The run's progress after each of its moves, at the race time it was made, is told to the
racers as a racer's would be, in ``progress`` messages (player id ``GHOST_ID``, which no
player has, and ``ghost: true``), when the new race's clock reaches that time: the room
asks for a tick then (``Room.deadline``). A race with a ghost is practice: its results are
never stored. At its end the racers learn how their run compares, and where it would have
ranked in the race the ghost came from.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..results import RacerOutcome, rank_key

GHOST_ID = 0  # the ghost's player id in progress messages: no player has it


@dataclass(slots=True)
class Ghost:
    code: str  # the race it was recorded in
    player_id: int  # whose run it is
    name: str
    total: int  # cards to bring home
    points: tuple[tuple[int, int], ...]  # (race ms, cards home) after each of its moves
    outcome: RacerOutcome
    time_ms: int | None  # when its game ended (None: it ran out of time)
    field: tuple[tuple[int, int, int], ...] = ()  # the rank keys of its race's results, or its day's board
    daily_date: str | None = None  # a daily attempt's: ``field`` is that day's board
    dealt_home: int = 0  # cards home as dealt, before its first move (Cruel deals its aces home)
    told: int = 0  # points told so far; ``len(points) + 1`` once its end is told too

    def next_ms(self) -> int | None:
        """The race time of the next thing to tell: a move, or its end (None: all told)."""
        if self.told < len(self.points):
            return self.points[self.told][0]
        if self.told == len(self.points) and self.time_ms is not None:
            return self.time_ms
        return None

    def due(self, elapsed_ms: int) -> dict[str, Any] | None:
        """Its progress if there is news by ``elapsed_ms`` (everything due, in one entry)."""
        before = self.told
        while (at := self.next_ms()) is not None and at <= elapsed_ms:
            self.told += 1
        return self.progress() if self.told != before else None

    def progress(self) -> dict[str, Any]:
        """A racer's progress fields (room/messages.py), as far as told."""
        moves = min(self.told, len(self.points))
        over = self.told > len(self.points)
        return {
            "player_id": GHOST_ID, "name": self.name, "home": self.points[moves - 1][1] if moves else self.dealt_home,
            "total": self.total, "moves": moves, "outcome": self.outcome if over else RacerOutcome.PLAYING,
            "time_ms": self.time_ms if over else None, "ghost": True,
        }

    def compared(self, outcome: str, time_ms: int | None, moves: int, home: int, total: int) -> dict[str, Any]:
        """How a racer's result compares: the ghost's run, and where the racer's result would
        have ranked (1 = first) among its race's results, or on its day's board."""
        mine = rank_key(outcome, time_ms, moves, total - home)
        return {
            "code": self.code, "player_id": self.player_id, "name": self.name, "outcome": self.outcome,
            "time_ms": self.time_ms, "moves": len(self.points),
            "home": self.points[-1][1] if self.points else self.dealt_home,
            "total": self.total, "would_rank": 1 + sum(1 for key in self.field if key <= mine),
            "of": len(self.field) + 1, "board": "daily" if self.daily_date else "race", "date": self.daily_date,
        }

