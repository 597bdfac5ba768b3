"""A series: friends racing again and again, with a running score.

A race's ``Series`` says which race of the series it is and the score before it; the
score after it (``after``) counts one win for the first of its ranking. A series of
``best_of`` N is decided once someone has won more than half of N races, or after N
races; an open series (``best_of`` None) is a running score that is never decided. A
rematch of a decided series starts a new one of the same length (``next``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

Placed = tuple[int, str, int]  # a racer's (player id, name, rank) in a finished race

BEST_OF = (3, 5, 7)  # the lengths a creator may choose, besides an open series


@dataclass(frozen=True, slots=True)
class Score:
    player_id: int
    name: str
    wins: int


@dataclass(frozen=True, slots=True)
class Series:
    id: int  # the race id of its first race
    best_of: int | None  # None: an open series
    number: int  # this race's number in the series, from 1
    score: tuple[Score, ...] = ()  # in the order first seen: before this race, or including it once ``over``
    over: bool = False  # this race is over and counted in the score (``after``)

    @property
    def shown(self) -> bool:
        """Worth telling the racers: a best-of series, or any race after the first."""
        return self.best_of is not None or self.number > 1

    @property
    def decided(self) -> bool:
        if self.best_of is None:
            return False
        raced = self.number if self.over else self.number - 1
        return raced >= self.best_of or any(s.wins > self.best_of // 2 for s in self.score)

    @property
    def champion(self) -> Score | None:
        """The series' winner once it is decided (None: undecided, or a tie for the most wins)."""
        if not self.decided or not self.score:
            return None
        best = max(s.wins for s in self.score)
        leaders = [s for s in self.score if s.wins == best]
        return leaders[0] if len(leaders) == 1 else None

    def after(self, results: Sequence[Placed]) -> Series:
        """The score once this race's ``results`` are in: the first of its ranking wins it,
        and every racer is on the score sheet."""
        wins = {s.player_id: s for s in self.score}
        for player_id, name, rank in results:
            known = wins.get(player_id)
            wins[player_id] = Score(player_id, name, (rank == 1) + (known.wins if known else 0))
        return Series(self.id, self.best_of, self.number, tuple(wins.values()), over=True)

    def next(self) -> Series | None:
        """Of a finished race's series (``after``): the series of its rematch, the next race
        of this one; or None once this one is decided: the rematch starts a series of its
        own, of the same length."""
        if self.decided:
            return None
        return Series(self.id, self.best_of, self.number + 1, self.score)  # not over: the next race is to come

    def to_json(self) -> dict[str, Any]:
        champion = self.champion
        return {
            "best_of": self.best_of,
            "number": self.number,
            "score": [{"player_id": s.player_id, "name": s.name, "wins": s.wins} for s in self.score],
            "decided": self.decided,
            "champion": champion.player_id if champion else None,
        }
