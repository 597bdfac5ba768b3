"""A room beyond its own race: the series it belongs to, the rematch that follows it, and
who watches it, with the boards of a race that shows them live (a part of ``Room``, kept in
its own module; sans-I/O like the rest)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from . import messages
from .effects import Effect, Send
from .status import RoomError, Status

if TYPE_CHECKING:
    from ..engine import Game
    from .racer import Racer
    from .results import Result
    from .series import Series


class Beyond:
    """``Room``'s series, rematch and spectators."""

    code: str
    game: Game[Any]
    status: Status
    racers: dict[int, Racer]
    results: tuple[Result, ...]
    series: Series | None
    rematch: dict[str, Any] | None
    spectators: set[int]
    live_boards: bool
    boards_shown: dict[int, Any]

    if TYPE_CHECKING:  # the rest of ``Room``
        def _deal(self) -> Any: ...

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

    # --- live boards (a race made with ``live_boards``: unranked) ------------------------
    # Spectators see each racer's board as its moves become durable, at most once per flush
    # of the standings: ``watching`` carries every board as ``boards_shown`` holds it, and
    # each ``boards`` message the changes from there. Every spectator's boards are always
    # those of ``boards_shown``, so one set of changes serves them all.

    def boards_now(self) -> list[dict[str, Any]]:
        """``watching``'s boards: each racer's view as spectators see it now (before the
        start, the deal). ``boards_shown`` only ever holds durable states: the deal at the
        start, states rebuilt from the log, logged ones and final ones."""
        boards = []
        for r in self.racers.values():
            state = self.boards_shown.get(r.id)
            boards.append({"player_id": r.id, "view": self.game.view(self._deal() if state is None else state)})
        return boards

    def flush_boards(self, states: dict[int, Any]) -> list[Effect]:
        """``boards`` to the spectators: the changes that bring each racer's board to its
        state in ``states`` (each durable: logged, or final)."""
        changed = []
        for pid, state in states.items():
            if pid not in self.racers:
                continue
            shown = self.boards_shown.get(pid)
            changes = self.game.view_changes(shown, state) if shown is not state else []
            self.boards_shown[pid] = state
            if changes:
                changed.append({"player_id": pid, "changes": changes})
        spectators = tuple(self.spectators)
        return [Send(spectators, {"type": "boards", "racers": changed})] if changed and spectators else []
