"""Read-only answers: the games, the daily challenges, leaderboards, player profiles and
replays of finished races.

The websocket protocol (``gateway.py``) and the HTTP API (``http_api.py``) both answer
from here, with the same store queries, so the two can never disagree. Each method returns
the message's fields as plain data; bad requests raise ``protocol.ProtocolError``.
"""

from __future__ import annotations

import asyncio
from collections import OrderedDict
from collections.abc import Callable
from datetime import UTC, date, datetime, time, timedelta
from typing import Any

from . import protocol as p
from . import replays
from .daily import parse_day, streak, utc_day
from .daily_planner import DailyPlanner
from .engine import Game
from .game_rules import rules_page
from .results import RacerOutcome
from .store import DailyChallengeRecord, FinishedRaceRecord, LeaderboardEntry, LeaderboardPage, ResultRecord, Store

REPLAYS_KEPT = 200  # built replays kept (a few MB at most): asked for again, not rebuilt
DAILY_LIST_WAIT_S = 1.0  # how long a `daily` listing waits for challenges still being chosen


class Queries:
    def __init__(
        self, *, store: Store, games: dict[str, Game[Any]], planner: DailyPlanner, wall_clock: Callable[[], datetime],
        time_limit_s: float = 0.0, secret: bytes = b"",
    ) -> None:
        self.store = store
        self.secret = secret  # the server's deal secret: replays deal the race's cards again
        self._replays: OrderedDict[str, dict[str, Any]] = OrderedDict()  # the latest built, by race code
        self.games = games
        self.planner = planner
        self.wall_clock = wall_clock
        self.time_limit_s = time_limit_s  # a race's: how long after midnight a day's attempts may still run

    def practice_open(self, day: date) -> bool:
        """Whether ``day``'s challenges may be practised (with hints): once the day is over
        and its last ranked attempts, started just before midnight, are too."""
        over = datetime.combine(day + timedelta(days=1), time(), UTC) + timedelta(seconds=self.time_limit_s)
        return self.wall_clock() >= over

    def today(self) -> date:
        return utc_day(self.wall_clock())

    def day(self, text: str | None) -> date:
        """A request's ``date``: today if none; ``bad_request`` if unreadable, ``not_found``
        if it is still to come."""
        today = self.today()
        day = day_of(text) if text else today
        if day > today:
            raise p.ProtocolError(p.ErrorCode.NOT_FOUND, f"the challenges of {day} are not announced yet")
        return day

    def game(self, game_id: str) -> Game[Any]:
        """The game of that id, or ``unknown_game``."""
        game = self.games.get(game_id)
        if game is None:
            known = ", ".join(sorted(self.games))
            raise p.ProtocolError(p.ErrorCode.UNKNOWN_GAME, f"unknown game {game_id[:32]!r}; known: {known}")
        return game

    def list_games(self) -> dict[str, Any]:
        return {"games": [g.describe() for g in self.games.values()]}

    def rules(self, game_id: str) -> dict[str, Any]:
        """A game's rules page (game_rules.py), or ``unknown_game``."""
        return rules_page(self.game(game_id))

    async def challenge(self, game_id: str, day: date) -> DailyChallengeRecord:
        """Usually a read: the planner chose the day's deals days ahead (daily_planner.py)."""
        return await self.planner.challenge(game_id, day)

    async def daily(self, day_text: str | None, viewer: int | None) -> dict[str, Any]:
        today, day = self.today(), self.day(day_text)
        if day == today:
            # Only on a fresh database are today's deals still being chosen: list those as
            # preparing rather than keep the lobby waiting for the solver.
            challenges: dict[str, DailyChallengeRecord | None] = await self.planner.ready(
                list(self.games), today, DAILY_LIST_WAIT_S
            )
        else:
            challenges = {c.game: c for c in await self.store.daily_challenges(day.isoformat())}
        # Yesterday's deals may be practised (with hints) from today's list: said per game.
        yesterday = today - timedelta(days=1)
        practicable: set[str] = set()
        if day == today and self.practice_open(yesterday):
            practicable = {c.game for c in await self.store.daily_challenges(yesterday.isoformat())}
        out = []
        for game, c in challenges.items():
            item: dict[str, Any] = {"game": game, "name": self.games[game].name if game in self.games else game}
            if c is None:
                item.update(deal=None, par=None, preparing=True)
            else:
                item.update(deal=c.deal_number, par=c.par)
            item["practice_date"] = yesterday.isoformat() if game in practicable else None
            if viewer is not None:
                item["attempted"] = await self.store.ranked_attempt(game, day.isoformat(), viewer) is not None
            out.append(item)
        return {"date": day.isoformat(), "today": today.isoformat(), "challenges": out}

    async def leaderboard(
        self, *, board: str, game: str, deal: int | None = None, date_text: str | None = None, min_games: int = 10,
        page: int = 1, page_size: int = 20, viewer: int | None = None,
    ) -> dict[str, Any]:
        self.game(game)
        if board == "deal" and deal is None:
            raise p.ProtocolError(p.ErrorCode.BAD_REQUEST, "the deal board needs a deal number")
        day = None
        if board == "daily":
            day = self.day(date_text).isoformat()
        result = await self.store.leaderboard(
            board, game, deal=deal if board == "deal" else None, date=day, min_games=min_games,
            page=page, page_size=page_size, viewer=viewer,
        )
        return _page_json(result)

    async def profile(self, player_id: int) -> dict[str, Any]:
        record = await self.store.profile(player_id)
        if record is None:
            raise p.ProtocolError(p.ErrorCode.NOT_FOUND, f"no player {player_id}")
        return {
            "player": {"id": record.player.id, "name": record.player.name},
            "games": [
                {"game": g.game, "games": g.games, "wins": g.wins, "win_rate": g.win_rate,
                 "best_time_ms": g.best_time_ms, "best_moves": g.best_moves}
                for g in record.games
            ],
            "daily_streak": streak(record.daily_dates, self.today()),
            "daily_days": len(record.daily_dates),
            "recent": [
                {"code": r.code, "game": r.game, "deal": r.deal_number, "daily_date": r.daily_date, "rank": r.rank,
                 "racers": r.racers, "outcome": r.outcome, "time_ms": r.time_ms, "moves": r.moves, "home": r.home,
                 "total": r.total, "finished_at": _iso(r.finished_at)}
                for r in record.recent
            ],
        }

    async def replay(self, code: str, viewer: int | None) -> dict[str, Any]:
        """A finished race's replay (``replays.py``), for ``viewer`` (None: anyone, over HTTP).
        A daily attempt of a day still being played is shown only to a player whose own
        ranked attempt at it is over: its moves are that day's solution (``finished_race``;
        docs/protocol.md, replay)."""
        finished = await self.finished_race(code, viewer)
        race = finished.race
        built = self._replays.get(race.code)
        if built is None:  # a finished race never changes: rebuilt by the engine once (~30 ms for 8 long games)
            game = self.game(race.game)
            first = game.deal(race.deal_number, self.secret)
            # A race may hold tens of thousands of moves (some undo each other): a thread
            # keeps the event loop turning meanwhile, as for a hint.
            racers = await asyncio.to_thread(replays.build, game, first, finished.results, game.parse_move)
            built = {
                "code": race.code, "game": race.game, "deal": race.deal_number, "daily_date": race.daily_date,
                "racers": racers,
            }
            self._replays[race.code] = built
            if len(self._replays) > REPLAYS_KEPT:
                self._replays.popitem(last=False)
        self._replays.move_to_end(race.code)
        return built

    async def par_line(self, game_id: str, date_text: str, viewer: int | None) -> dict[str, Any]:
        """A daily challenge's par line as a replay (``replay_data``: one racer, "par", a move a
        second): for a player whose ranked attempt that day is over, or anyone once the day is;
        never before (it is that day's solution)."""
        game, day = self.game(game_id), self.day(date_text)
        challenge = await self.store.find_daily_challenge(game.id, day.isoformat())
        if challenge is None or challenge.par_line is None:
            raise p.ProtocolError(p.ErrorCode.NOT_FOUND, f"no par line is kept for {game.id} on {day}")
        if not self.practice_open(day) and (
            viewer is None or not await self.store.finished_ranked_attempt(game.id, day.isoformat(), viewer)
        ):
            raise p.ProtocolError(
                p.ErrorCode.NOT_ALLOWED,
                f"the par line of {day} opens to you once your ranked attempt is over (or once the day is)",
            )
        first = game.deal(challenge.deal_number, self.secret)
        total = game.progress(first).total
        par = ResultRecord(
            race_id=0, player_id=0, player_name="par", outcome=RacerOutcome.WON, rank=1, time_ms=None,
            moves=len(challenge.par_line), home=total, total=total, move_log=challenge.par_line,
            finished_at=self.wall_clock(),
        )
        return {
            "code": None, "game": game.id, "deal": challenge.deal_number, "daily_date": day.isoformat(),
            "racers": replays.build(game, first, [par], game.parse_move),
        }

    async def finished_race(self, code: str, viewer: int | None) -> FinishedRaceRecord:
        """A finished race whose moves ``viewer`` may see (a replay, a ghost), or
        ``not_found`` / ``not_allowed`` (a daily still being played, see ``replay``)."""
        finished = await self.store.finished_race(p.normalize_code(code)[:16]) if code else None
        if finished is None:
            raise p.ProtocolError(p.ErrorCode.NOT_FOUND, f"no finished race with code {code[:16]!r}")
        race, day = finished.race, finished.race.daily_date
        if day is not None and not self.practice_open(parse_day(day)):
            # Only once the viewer's own ranked attempt is over: one still running (it was
            # this race, perhaps, resumed) must not see the day's solution.
            done = viewer is not None and await self.store.finished_ranked_attempt(race.game, day, viewer)
            if not done:
                raise p.ProtocolError(
                    p.ErrorCode.NOT_ALLOWED,
                    f"the daily challenge of {day} is still being played: its replays and ghosts open to you once "
                    "your own ranked attempt is over (or once the day is)",
                )
        if not finished.results:
            raise p.ProtocolError(
                p.ErrorCode.NOT_FOUND, f"race {race.code} was practice: no result of it is stored, nothing to replay"
            )
        return finished


def day_of(text: str) -> date:
    """A request's ``date``, or ``bad_request``."""
    try:
        return parse_day(text)
    except ValueError as exc:
        raise p.ProtocolError(p.ErrorCode.BAD_REQUEST, str(exc)) from None


def _entry_json(e: LeaderboardEntry) -> dict[str, Any]:
    return {
        "rank": e.rank, "player_id": e.player_id, "name": e.name, "outcome": e.outcome, "time_ms": e.time_ms,
        "moves": e.moves, "home": e.home, "total": e.total,
        "finished_at": _iso(e.finished_at) if e.finished_at else None,
        "wins": e.wins, "games": e.games, "win_rate": e.win_rate, "race_code": e.race_code,
    }


def _page_json(page: LeaderboardPage) -> dict[str, Any]:
    return {
        "board": page.board, "game": page.game, "deal": page.deal, "date": page.date, "min_games": page.min_games,
        "page": page.page, "page_size": page.page_size, "total": page.total,
        "entries": [_entry_json(e) for e in page.entries],
        "me": _entry_json(page.me) if page.me else None,
        **({"par": page.par} if page.board == "daily" else {}),  # the protocol has par on daily boards only
    }


def _iso(moment: datetime) -> str:
    """A stored time as the protocol writes times: ISO 8601 in UTC, with a Z."""
    return moment.isoformat().replace("+00:00", "Z")
