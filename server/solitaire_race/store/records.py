"""Plain, frozen values that the store hands to the rest of the server.

The store owns these shapes; nothing here imports SQLAlchemy, so the race server can
hold, compare and pass these around without ever touching a session or an ORM object.
All datetimes are timezone-aware UTC.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Final, Literal

RaceStatus = Literal["open", "running", "finished"]
Outcome = Literal["won", "stuck", "resigned", "timeout", "left", "interrupted"]

# The models build their CHECK constraints from these; migrations spell them out instead,
# because a migration must keep describing the schema as it was when it was written.
RACE_STATUSES: Final[tuple[RaceStatus, ...]] = ("open", "running", "finished")
# "interrupted": the server shut down mid-race and ended it there (Room.interrupt).
OUTCOMES: Final[tuple[Outcome, ...]] = (
    "won",
    "stuck",
    "resigned",
    "timeout",
    "left",
    "interrupted",
)

NAME_MAX_LENGTH: Final = 32
CODE_MAX_LENGTH: Final = 16
GAME_MAX_LENGTH: Final = 32


@dataclass(frozen=True, slots=True)
class PlayerRecord:
    id: int
    name: str
    created_at: datetime


@dataclass(frozen=True, slots=True)
class RaceRecord:
    id: int
    code: str
    game: str
    deal_number: int
    private: bool
    created_by: int  # players.id
    created_at: datetime
    started_at: datetime | None
    finished_at: datetime | None
    status: RaceStatus
    time_limit_s: int


@dataclass(frozen=True, slots=True)
class ResultRecord:
    """One player's result in one race.

    ``player_name`` is filled in when reading (from ``players``); ``finish_race`` ignores
    it, so a caller writing results may pass the name it has at hand, or "".
    """

    race_id: int
    player_id: int
    player_name: str
    outcome: Outcome
    rank: int  # 1-based
    time_ms: int | None  # from the common start to the end of this player's game
    moves: int
    home: int
    total: int
    move_log: tuple[str, ...]  # moves in the game's notation, in order
    finished_at: datetime
