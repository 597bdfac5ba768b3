"""The store's daily challenges, attempts, leaderboards, profiles and server settings
(a part of ``Store``, kept in its own module)."""

from __future__ import annotations

import dataclasses
import secrets
from collections.abc import Callable, Sequence
from contextlib import AbstractAsyncContextManager
from datetime import datetime
from typing import TypeVar

from sqlalchemy import exists, func, select
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.orm import Session

from ..results import RacerOutcome
from . import boards, players
from .errors import StoreError
from .models import DailyAttempt, DailyChallenge, Player, PlayerStats, Race, Result, Setting
from .records import DailyChallengeRecord, GameStatsRecord, LeaderboardPage, ProfileRecord, RecentResultRecord
from .rows import challenge_record, check_time
from .writes import HELD_CLASS, insert_unless_present

T = TypeVar("T")
RECENT_RESULTS = 10  # on a profile
DEAL_SECRET_SETTING = "deal_secret"
DEAL_SECRET_BYTES = 32


class DailyAndBoards:
    """Reads and small writes that are not a race's: ``Store`` is made of this part and its own."""

    _sessions: Callable[[], AbstractAsyncContextManager[AsyncSession]]

    async def _write(self, job: Callable[[Session], T]) -> T:
        raise NotImplementedError  # Store's: one writer for every write

    # --- daily challenges -------------------------------------------------------------

    async def find_daily_challenge(self, game: str, date: str) -> DailyChallengeRecord | None:
        """The stored challenge of ``game`` on ``date``, if it has been chosen."""
        async with self._sessions() as session:
            row = await session.get(DailyChallenge, (game, date))
            return None if row is None else challenge_record(row)

    async def daily_challenge(
        self, game: str, date: str, deal_number: int, now: datetime, par: int | None = None,
        par_line: Sequence[str] | None = None,
    ) -> DailyChallengeRecord:
        """The challenge of ``game`` on ``date``, created with ``deal_number``, ``par`` and the
        line par was counted on (``par_line``) if new.

        The first insert wins, so all processes sharing the database agree on the deal even
        if they chose it differently (another solver budget, an older version)."""
        found = await self.find_daily_challenge(game, date)
        if found is not None:
            return found
        # A fresh transaction that starts with its write: in WAL mode a transaction that
        # read first cannot take the write lock once another writer has committed.
        line = None if par_line is None else "\n".join(par_line)
        row = DailyChallenge(
            game=game, date=date, deal_number=deal_number, par=par, par_line=line, created_at=check_time(now)
        )
        await self._write(insert_unless_present(row))  # another process may have made it first
        found = await self.find_daily_challenge(game, date)
        assert found is not None
        return found

    async def daily_challenges(self, date: str) -> list[DailyChallengeRecord]:
        async with self._sessions() as session:
            rows = await session.scalars(
                select(DailyChallenge).where(DailyChallenge.date == date).order_by(DailyChallenge.game)
            )
            return [challenge_record(r) for r in rows]

    async def claim_daily_attempt(self, game: str, date: str, player_id: int, race_id: int, now: datetime) -> bool:
        """Make ``race_id`` the player's ranked attempt at the day's ``game`` challenge.

        True if it is the first attempt (ranked); False if the player already had one."""
        row = DailyAttempt(game=game, date=date, player_id=player_id, race_id=race_id, started_at=check_time(now))
        return await self._write(insert_unless_present(row))

    async def ranked_attempt(self, game: str, date: str, player_id: int) -> int | None:
        """The race id of the player's ranked attempt at that challenge, if any."""
        async with self._sessions() as session:
            return await session.scalar(
                select(DailyAttempt.race_id).where(
                    DailyAttempt.game == game, DailyAttempt.date == date, DailyAttempt.player_id == player_id
                )
            )

    async def finished_ranked_attempt(self, game: str, date: str, player_id: int) -> bool:
        """Whether the player's ranked attempt at that challenge is over (not merely started):
        only then may they see that day's solution (replays, ghosts, the par line)."""
        async with self._sessions() as session:
            race = await session.scalar(
                select(Race.status).join(DailyAttempt, DailyAttempt.race_id == Race.id).where(
                    DailyAttempt.game == game, DailyAttempt.date == date, DailyAttempt.player_id == player_id
                )
            )
            return race == "finished"

    async def daily_board_keys(self, game: str, date: str) -> list[tuple[int, int, int]]:
        """The rank keys (``results.rank_key``) of every result on a day's board: where a
        result that is not on it would have ranked (a race against a ghost)."""
        async with self._sessions() as session:
            rows = await session.execute(
                select(Result.rank_class, Result.sort_primary, Result.moves).where(
                    Result.game == game, Result.daily_date == date, Result.rank_class < HELD_CLASS
                )
            )
            return [(c, s, m) for c, s, m in rows.all()]

    # --- leaderboards and profiles ------------------------------------------------------

    async def leaderboard(
        self,
        board: str,
        game: str,
        *,
        deal: int | None = None,
        date: str | None = None,
        min_games: int = 10,
        page: int = 1,
        page_size: int = 20,
        viewer: int | None = None,
    ) -> LeaderboardPage:
        """One page of a board (see ``boards``), with the viewer's own entry wherever it is."""
        if board not in boards.BOARDS:
            raise ValueError(f"unknown board {board!r}")
        if page < 1 or not 1 <= page_size <= 100:
            raise ValueError("page starts at 1; page_size is 1 to 100")
        async with self._sessions() as session:
            if board in ("deal", "daily"):
                if (board == "deal") != (deal is not None) or (board == "daily") != (date is not None):
                    raise ValueError("the deal board needs a deal number; the daily board a date")
                result = await boards.result_board(
                    session, board=board, game=game, deal=deal, date=date, page=page, page_size=page_size, viewer=viewer
                )
                if board == "daily":  # the par, to set beside each entry's moves
                    challenge = await session.get(DailyChallenge, (game, date))
                    result = dataclasses.replace(result, par=challenge.par if challenge else None)
                return result
            return await boards.stats_board(
                session, board=board, game=game, min_games=min_games, page=page, page_size=page_size, viewer=viewer
            )

    async def profile(self, player_id: int) -> ProfileRecord | None:
        async with self._sessions() as session:
            player = await session.get(Player, player_id)
            if player is None:
                return None
            stats = await session.scalars(
                select(PlayerStats).where(PlayerStats.player_id == player_id).order_by(PlayerStats.game)
            )
            # A day whose attempt was held for fair-play review (fair_play.py) counts in no streak.
            held = exists().where(
                Result.race_id == DailyAttempt.race_id, Result.player_id == DailyAttempt.player_id, Result.held
            )
            dates = await session.scalars(
                select(DailyAttempt.date).where(DailyAttempt.player_id == player_id, ~held)
                .group_by(DailyAttempt.date).order_by(DailyAttempt.date.desc()).limit(400)
            )
            return ProfileRecord(
                player=players.player_record(player),
                games=tuple(
                    GameStatsRecord(s.game, s.games, s.wins, s.win_rate, s.best_time_ms, s.best_moves) for s in stats
                ),
                daily_dates=tuple(dates),
                recent=await _recent_results(session, player_id),
            )

    # --- server settings ------------------------------------------------------------

    async def deal_secret(self) -> bytes:
        """The server's deal secret: random bytes made on first use and kept in
        ``settings``, so a deal number means the same cards after a restart."""
        stored = await self._setting(DEAL_SECRET_SETTING)
        if stored is None:
            fresh = Setting(name=DEAL_SECRET_SETTING, value=secrets.token_hex(DEAL_SECRET_BYTES))
            await self._write(insert_unless_present(fresh))  # or another process's is used
            stored = await self._setting(DEAL_SECRET_SETTING)
            if stored is None:
                raise StoreError("the deal secret could not be stored")
        return bytes.fromhex(stored)

    async def _setting(self, name: str) -> str | None:
        async with self._sessions() as session:
            row = await session.get(Setting, name)
            return None if row is None else row.value


async def _recent_results(session: AsyncSession, player_id: int) -> tuple[RecentResultRecord, ...]:
    """The player's latest results (by the index on player and time), held ones left out as
    on every public board (fair_play.py), with how many raced in each."""
    racers = select(func.count()).where(Result.race_id == Race.id).correlate(Race).scalar_subquery()
    rows = await session.execute(
        select(Result, Race.code, racers)
        .join(Race, Race.id == Result.race_id)
        .where(Result.player_id == player_id, ~Result.held)
        .order_by(Result.finished_at.desc())
        .limit(RECENT_RESULTS)
    )
    return tuple(
        RecentResultRecord(
            code=code, game=r.game, deal_number=r.deal_number, daily_date=r.daily_date, rank=r.rank, racers=count,
            outcome=RacerOutcome(r.outcome), time_ms=r.time_ms, moves=r.moves, home=r.home, total=r.total,
            finished_at=r.finished_at,
        )
        for r, code, count in rows.all()
    )
