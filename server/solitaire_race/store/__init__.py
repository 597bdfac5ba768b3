"""Persistence for the race server: players, races and results in SQL (SQLite by default).

The only package that imports SQLAlchemy. The rest of the server uses ``Store`` and gets
back the frozen records below; schema changes go through Alembic (see docs/database.md).
"""

from .boards import BOARDS
from .engines import database_name
from .engines import describe as display_url
from .errors import (
    CodeTaken,
    ConstraintViolation,
    DatabaseInUse,
    DatabaseUnusable,
    Fenced,
    NameTaken,
    NotFound,
    RaceStateError,
    StorageUnavailable,
    StoreError,
)
from .records import (
    OUTCOMES,
    RACE_STATUSES,
    DailyChallengeRecord,
    FinishedRaceRecord,
    GameStatsRecord,
    HeldResultRecord,
    LeaderboardEntry,
    LeaderboardPage,
    OpenRaceRecord,
    PlayerRecord,
    ProfileRecord,
    RaceRecord,
    RaceStatus,
    ResultRecord,
    RunningRaceRecord,
)
from .store import Store, hash_token

__all__ = [
    "BOARDS",
    "OUTCOMES",
    "RACE_STATUSES",
    "CodeTaken",
    "ConstraintViolation",
    "DailyChallengeRecord",
    "DatabaseInUse",
    "DatabaseUnusable",
    "Fenced",
    "FinishedRaceRecord",
    "GameStatsRecord",
    "HeldResultRecord",
    "LeaderboardEntry",
    "LeaderboardPage",
    "NameTaken",
    "NotFound",
    "OpenRaceRecord",
    "PlayerRecord",
    "ProfileRecord",
    "RaceRecord",
    "RaceStateError",
    "RaceStatus",
    "ResultRecord",
    "RunningRaceRecord",
    "StorageUnavailable",
    "Store",
    "StoreError",
    "database_name",
    "display_url",
    "hash_token",
]
