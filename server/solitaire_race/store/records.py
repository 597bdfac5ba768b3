"""Plain, frozen values that the store hands to the rest of the server.

The store owns these shapes; nothing here imports SQLAlchemy, so the race server can
hold, compare and pass these around without ever touching a session or an ORM object.
All datetimes are timezone-aware UTC.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Final, Literal

from ..results import FINAL_OUTCOMES, RacerOutcome

RaceStatus = Literal["open", "running", "finished"]

# The models build their CHECK constraints from these; migrations spell them out instead,
# because a migration must keep describing the schema as it was when it was written.
RACE_STATUSES: Final[tuple[RaceStatus, ...]] = ("open", "running", "finished")
RACE_KINDS: Final[tuple[str, ...]] = ("race", "daily")
OUTCOMES: Final[tuple[str, ...]] = tuple(o.value for o in FINAL_OUTCOMES)

NAME_MAX_LENGTH: Final = 32  # names.NAME_MAX_LENGTH
# players.name_key: at most 7 characters per character of a name (a Hangul syllable's jamo)
NAME_KEY_MAX_LENGTH: Final = 256
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
    kind: str = "race"  # race | daily
    daily_date: str | None = None  # ISO date of a daily challenge attempt
    epoch: int = 0  # its owner's fencing token (Store.claim_race)
    best_of: int | None = None  # its series' length (None: an open series, a running score)
    series_id: int | None = None  # the race id of its series' first race (None: this one)
    series_number: int = 1  # its number in its series
    rematch_code: str | None = None  # the join code of the race that followed it, once asked for
    ghost: str | None = None  # a practice race against a recorded run: "<race code>:<player id>"
    live_boards: bool = False  # spectators see every board live: its results are unranked

    @property
    def series(self) -> int:
        """The id of its series: that of the series' first race."""
        return self.series_id if self.series_id is not None else self.id


@dataclass(frozen=True, slots=True)
class ResultRecord:
    """One player's result in one race.

    ``player_name`` is filled in when reading (from ``players``); ``finish_race`` ignores
    it, so a caller writing results may pass the name it has at hand, or "".
    """

    race_id: int
    player_id: int
    player_name: str
    outcome: RacerOutcome
    rank: int  # 1-based
    time_ms: int | None  # from the common start to the end of this player's game
    moves: int
    home: int
    total: int
    move_log: tuple[str, ...]  # moves in the game's notation, in order
    finished_at: datetime
    held: bool = False  # implausible (fair_play.py): kept off the public boards until cleared
    fair_play: str | None = None  # the assessment's reasons and figures (JSON; fair_play.py)
    review: str | None = None  # 'cleared' | 'confirmed' once an operator looked at it
    move_times: tuple[int, ...] | None = None  # each move's race time in ms (None: stored before they were)


@dataclass(frozen=True, slots=True)
class HeldResultRecord:
    """A result held for review (``Store.held_results``), with its assessment (JSON)."""

    race_id: int
    race_code: str
    player_id: int
    player_name: str
    game: str
    outcome: str
    time_ms: int | None
    moves: int
    daily_date: str | None
    finished_at: datetime
    fair_play: str


@dataclass(frozen=True, slots=True)
class LeaderboardEntry:
    """One row of a leaderboard. Result boards fill the result fields; all-time boards
    fill wins/games/win_rate and the player's fastest win (time_ms, moves, finished_at)."""

    rank: int
    player_id: int
    name: str
    outcome: RacerOutcome | None
    time_ms: int | None
    moves: int | None
    home: int | None
    total: int | None
    finished_at: datetime | None
    race_id: int | None
    wins: int | None = None
    games: int | None = None
    win_rate: float | None = None
    race_code: str | None = None  # a result's race (its replay); None on the all-time boards


@dataclass(frozen=True, slots=True)
class LeaderboardPage:
    board: str  # deal | daily | fastest | wins | win_rate
    game: str
    page: int  # 1-based
    page_size: int
    total: int  # entries on the whole board
    entries: tuple[LeaderboardEntry, ...]
    me: LeaderboardEntry | None  # the viewer's own entry, on this page or not
    deal: int | None = None
    date: str | None = None
    min_games: int | None = None
    par: int | None = None  # daily board: the challenge's par, if known


@dataclass(frozen=True, slots=True)
class DailyChallengeRecord:
    game: str
    date: str  # ISO date, UTC
    deal_number: int
    par: int | None
    par_line: tuple[str, ...] | None = None  # the line par was counted on, when kept


@dataclass(frozen=True, slots=True)
class GameStatsRecord:
    game: str
    games: int
    wins: int
    win_rate: float
    best_time_ms: int | None
    best_moves: int | None


@dataclass(frozen=True, slots=True)
class ProfileRecord:
    player: PlayerRecord
    games: tuple[GameStatsRecord, ...]
    daily_dates: tuple[str, ...]  # dates with a ranked daily attempt, newest first (≤ 400)
    recent: tuple[RecentResultRecord, ...] = ()  # the latest results, newest first


@dataclass(frozen=True, slots=True)
class RecentResultRecord:
    """One of a player's latest results, for their profile."""

    code: str  # the race's join code
    game: str
    deal_number: int
    daily_date: str | None  # a ranked daily attempt's date
    rank: int
    racers: int  # how many raced
    outcome: RacerOutcome
    time_ms: int | None
    moves: int
    home: int
    total: int
    finished_at: datetime


@dataclass(frozen=True, slots=True)
class RunningRaceRecord:
    """A race left running when the server stopped: enough to rebuild its room."""

    race: RaceRecord
    players: tuple[tuple[int, str], ...]  # (player id, name), from race_entries
    logs: dict[int, tuple[tuple[int, str, str, int], ...]]  # player -> (seq, kind, text, at_ms)
    daily_ranked: bool  # a ranked daily attempt


@dataclass(frozen=True, slots=True)
class OpenRaceRecord:
    """A race still in its lobby when the server stopped: enough to bring the lobby back."""

    race: RaceRecord
    players: tuple[tuple[int, str], ...]  # (player id, name), from race_entries


@dataclass(frozen=True, slots=True)
class FinishedRaceRecord:
    """A finished race and its results in rank order."""

    race: RaceRecord
    results: tuple[ResultRecord, ...]
    daily_ranked: bool  # a ranked daily attempt
