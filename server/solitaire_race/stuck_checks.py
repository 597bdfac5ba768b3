"""Stuck searches, run in slices between other work (sans-I/O: the service drives it).

Whether a position with nothing productive left is stuck takes a search of the racer's
rearranging moves (``StuckSearch``, from ``Game.assess``): up to a few hundred positions, 10–25 ms for
Persian Patience and more for Parallels, measured. Run inside the move, that stalled the
whole server, every racer's move waiting behind it. Here each search advances
``slice_positions`` positions per ``step`` (about a millisecond), the oldest first, and the
caller yields to other work between steps. A racer's newer position replaces the check of
their older one, and decided positions are remembered (racers shuffling cards back and
forth revisit them).
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from .engine import Outcome
from .engine.base import StuckSearch

R = TypeVar("R")  # whatever the caller checks for (a room): handed back with the verdict


@dataclass(slots=True)
class _Check(Generic[R]):
    owner: R
    player_id: int
    moves: int
    key: tuple[str, Any]  # (game id, position): the verdict cache's key
    search: StuckSearch[Any]


class StuckChecks(Generic[R]):
    def __init__(self, slice_positions: int = 25, remembered: int = 4096) -> None:
        self.slice_positions = slice_positions
        self._remembered = remembered
        self._checks: dict[tuple[int, int], _Check[R]] = {}  # (race id, player id), oldest first
        self._verdicts: OrderedDict[tuple[str, Any], Outcome] = OrderedDict()

    def __len__(self) -> int:
        return len(self._checks)

    def add(self, owner: R, race_id: int, player_id: int, moves: int, search: StuckSearch[Any]) -> None:
        """Run ``search``, from the position of ``player_id`` after ``moves`` moves."""
        # Nothing is hashed here: a racer who moves on replaces this check before it runs.
        self._checks.pop((race_id, player_id), None)  # their older position no longer matters
        self._checks[(race_id, player_id)] = _Check(owner, player_id, moves, (search.game.id, search.start), search)

    def step(self) -> list[tuple[R, int, int, Outcome]]:
        """Advance the oldest search by one slice (none if its position was decided before);
        return the verdicts now known, each as (owner, player id, moves, outcome)."""
        if not self._checks:
            return []
        ident, check = next(iter(self._checks.items()))
        del self._checks[ident]
        outcome = self._verdicts.get(check.key)
        if outcome is not None:
            self._verdicts.move_to_end(check.key)
            return [(check.owner, check.player_id, check.moves, outcome)]
        outcome = check.search.run(self.slice_positions)
        if outcome is None:
            self._checks[ident] = check  # to the back of the line
            return []
        self._verdicts[check.key] = outcome
        if len(self._verdicts) > self._remembered:
            self._verdicts.popitem(last=False)
        return [(check.owner, check.player_id, check.moves, outcome)]
