"""Persistence for the race server: players, races and results in SQL (SQLite by default).

The only package that imports SQLAlchemy. The rest of the server uses ``Store`` and gets
back the frozen records below; schema changes go through Alembic (see docs/database.md).
"""

from .boards import BOARDS
from .records import (
    OUTCOMES,
    RACE_STATUSES,
    DailyChallengeRecord,
    GameStatsRecord,
    LeaderboardEntry,
    LeaderboardPage,
    ProfileRecord,
    RunningRaceRecord,
    OpenRaceRecord,
    FinishedRaceRecord,
    PlayerRecord,
    RaceRecord,
    RaceStatus,
    ResultRecord,
)
from .errors import (
    CodeTaken,
    ConstraintViolation,
    DatabaseInUse,
    DatabaseUnusable,
    NameTaken,
    NotFound,
    RaceStateError,
    StorageUnavailable,
    StoreError,
)
from .engines import describe as display_url
from .store import Store, hash_token

__all__ = [
    "BOARDS",
    "DailyChallengeRecord",
    "GameStatsRecord",
    "LeaderboardEntry",
    "LeaderboardPage",
    "ProfileRecord",
    "RunningRaceRecord",
    "OpenRaceRecord",
    "FinishedRaceRecord",
    "OUTCOMES",
    "RACE_STATUSES",
    "CodeTaken",
    "ConstraintViolation",
    "DatabaseInUse",
    "DatabaseUnusable",
    "NameTaken",
    "NotFound",
    "PlayerRecord",
    "RaceRecord",
    "RaceStateError",
    "RaceStatus",
    "ResultRecord",
    "StorageUnavailable",
    "Store",
    "StoreError",
    "display_url",
    "hash_token",
]
