"""Replays: a finished race rebuilt by the engine, move by move, from its deal and each
racer's stored moves and move times (docs/protocol.md, ``replay``).

Pure: given the game, the deal's first state and the results, ``build`` returns each racer's
view of the deal and, for every move, its race time and the view changes it made, exactly
as the racer's ``move_result`` carried them. So a card that was face down is shown only from
the move that turned it up, as that racer saw it. Who may see which replay is decided in
``queries.py``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from .engine import Game, Move
from .store import ResultRecord

UNTIMED_STEP_MS = 1000  # results stored before move times were: one move a second


def build(
    game: Game[Any], first: Any, results: Sequence[ResultRecord], parse: Callable[[str], Move]
) -> list[dict[str, Any]]:
    """Every racer's replay, in ranking order."""
    return [_racer(game, first, r, parse) for r in results]


def move_times(result: ResultRecord) -> tuple[tuple[int, ...], bool]:
    """Each move's race time, and whether they are the stored ones (for a result stored
    before move times were kept: one move a second)."""
    times = result.move_times
    if times is not None and len(times) == len(result.move_log):
        return times, True
    return tuple(UNTIMED_STEP_MS * (i + 1) for i in range(len(result.move_log))), False


def _racer(game: Game[Any], first: Any, result: ResultRecord, parse: Callable[[str], Move]) -> dict[str, Any]:
    at, timed = move_times(result)
    state, steps = first, []
    for text, at_ms in zip(result.move_log, at, strict=True):
        after = game.apply(state, parse(text))  # a stored log replays: results are verified before they are stored
        steps.append({"move": text, "at_ms": at_ms, "changes": game.view_changes(state, after)})
        state = after
    return {
        "player_id": result.player_id, "name": result.player_name, "rank": result.rank,
        "outcome": result.outcome, "time_ms": result.time_ms, "moves": result.moves, "home": result.home,
        "total": result.total, "timed": timed, "view": game.view(first), "steps": steps,
    }
