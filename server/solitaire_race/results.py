"""How a racer's game ends and how results rank: one vocabulary for the room, the store,
the protocol, the HTTP API and the command line (the browser's labels, ``OUTCOME_LABELS``
in ``client/web/js/format.js``, mirror the ones here).

Pure: no I/O, imported by layers that do not import each other.
"""

from __future__ import annotations

import enum
from typing import Final, Literal


class RacerOutcome(enum.StrEnum):
    """Where a racer's game stands. A str, so it is its own value in JSON, SQL and text."""

    PLAYING = "playing"  # not over: only in progress messages, never in a result
    WON = "won"
    STUCK = "stuck"  # no move left could bring another card home
    RESIGNED = "resigned"
    TIMEOUT = "timeout"  # still playing when the race's time limit ran out
    LEFT = "left"  # disconnected past the grace period
    INTERRUPTED = "interrupted"  # reserved: never written now (races survive restarts); older rows hold it


# How each outcome is shown to people (the terminal client, the command line, the bots).
OUTCOME_LABELS: Final[dict[RacerOutcome, str]] = {
    RacerOutcome.PLAYING: "playing",
    RacerOutcome.WON: "won",
    RacerOutcome.STUCK: "stuck",
    RacerOutcome.RESIGNED: "resigned",
    RacerOutcome.TIMEOUT: "out of time",
    RacerOutcome.LEFT: "left",
    RacerOutcome.INTERRUPTED: "interrupted",
}


def outcome_label(outcome: str) -> str:
    """``outcome``'s label; a value this version does not know (from a newer server) as it is."""
    try:
        return OUTCOME_LABELS[RacerOutcome(outcome)]
    except ValueError:
        return outcome


# The outcomes a stored result may have (the results table's CHECK constraint).
FINAL_OUTCOMES: Final[tuple[RacerOutcome, ...]] = tuple(o for o in RacerOutcome if o is not RacerOutcome.PLAYING)


# A result's time in ms is below this (about 49 days; a race lasts 30 minutes by default),
# so cards left and time share one integer: cards left * TIME_SPAN + time.
TIME_SPAN: Final = 2**32


def rank_key(outcome: str, time_ms: int | None, moves: int, cards_left: int) -> tuple[int, int, int]:
    """The order results rank in, in a race and on the boards: won games first, by time,
    then fewer moves; then every other game by fewer cards left, then by time (the same
    progress sooner ranks first), then fewer moves. The store keeps the first two parts as
    columns (``rank_class``, ``sort_primary``), so a board page is an index range."""
    if outcome == RacerOutcome.WON:
        return (0, time_ms or 0, moves)
    time = TIME_SPAN - 1 if time_ms is None else min(time_ms, TIME_SPAN - 1)  # no time: last
    return (1, cards_left * TIME_SPAN + time, moves)


# The leaderboards: the protocol's `leaderboard.board`, the HTTP API's and the command line's.
Board = Literal["deal", "daily", "fastest", "wins", "win_rate"]
BOARDS: Final[tuple[Board, ...]] = ("deal", "daily", "fastest", "wins", "win_rate")
ALL_TIME_BOARDS: Final[tuple[Board, ...]] = ("fastest", "wins", "win_rate")
