"""A room beyond its own race: the series it belongs to, the rematch that follows it, and
who watches it (a part of ``Room``, kept in its own module; sans-I/O like the rest)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from . import messages
from .effects import Effect, Send
from .status import RoomError, Status

if TYPE_CHECKING:
    from .racer import Racer
    from .results import Result
    from .series import Series


class Beyond:
    """``Room``'s series, rematch and spectators."""

    code: str
    status: Status
    racers: dict[int, Racer]
    results: tuple[Result, ...]
    series: Series | None
    rematch: dict[str, Any] | None
    spectators: set[int]

    @property
    def series_now(self) -> Series | None:
        """The race's series as it stands: with this race's result once it is over."""
        if self.series is None or not self.results:
            return self.series
        return self.series.after([(r.player_id, r.name, r.rank) for r in self.results])

    def rematch_proposed(self, code: str, by: tuple[int, str], same_deal: bool) -> list[Effect]:
        """A racer asked for a rematch, race ``code``: the others are invited to it."""
        if self.status is not Status.FINISHED:
            raise RoomError("not_allowed", f"race {self.code} is not over yet: a rematch comes after it")
        self.rematch = {"code": code, "by": {"id": by[0], "name": by[1]}, "same_deal": same_deal}
        invited = tuple(r.id for r in self.racers.values() if r.connected)  # racers, not spectators
        return [Send(invited, {"type": "rematch_proposed", "race": self.code, **self.rematch})]

    def watch(self, spectator: int, now: float) -> list[Effect]:
        """A spectator starts watching: the race as everyone sees it, never a card."""
        self.spectators.add(spectator)
        room: Any = self  # messages take the Room this is a part of
        over = [Send((spectator,), messages.finished(room))] if self.status is Status.FINISHED else []
        return [Send((spectator,), messages.watching(room, now)), *over]
