"""What a room asks its caller to do: its effects.

Values only: ``Room`` makes them, ``interpreter.Interpreter`` carries them out.
"""

from __future__ import annotations

from typing import Any, NamedTuple

from ..engine.base import StuckSearch
from .results import Result


# The effects are NamedTuples: immutable like frozen dataclasses, and half the cost to
# make (a move makes two or three of them).
class Send(NamedTuple):
    to: tuple[int, ...]
    message: dict[str, Any]


class SaveResults(NamedTuple):
    results: tuple[Result, ...]


class LogMoves(NamedTuple):
    player_id: int
    entries: tuple[tuple[int, str, str, int], ...]  # (seq, kind, text, at_ms)


class CheckStuck(NamedTuple):
    player_id: int
    moves: int  # the racer's move count at that position: later moves make the check moot
    search: StuckSearch[Any]


class SaveEntrants(NamedTuple):
    player_ids: tuple[int, ...]  # everyone in the lobby, replacing what was stored


class RecordStart(NamedTuple):
    """The race starts with these racers: durable before `race_started` tells them, so a
    move can never be logged for a race the database does not know to be running."""

    player_ids: tuple[int, ...]


Effect = Send | SaveResults | LogMoves | CheckStuck | SaveEntrants | RecordStart


class Played(NamedTuple):
    """What ``play`` did, by name: the one shape of the hot path."""

    log: LogMoves | None  # the applied moves' entries, durable before ``answer`` is sent (None: none applied)
    answer: Send  # the racer's `move_result`: a new message, to them alone (the interpreter adds the request's id)
    check: CheckStuck | None  # a stuck search to run off the move path
    closing: list[Effect]  # the race ended with this move: its closing effects, after the answer

    @property
    def effects(self) -> list[Effect]:
        """All of it as effects, in the order to carry them out."""
        return [e for e in (self.log, self.answer, self.check) if e is not None] + self.closing
