"""The store's races in series: which race followed a finished one (its rematch), and a
series' score, counted from its results (a part of ``Store``, kept in its own module;
migration 0013 says what the columns hold)."""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractAsyncContextManager
from typing import TypeVar

from sqlalchemy import case, func, select, update
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.orm import Session

from .models import Player, Race, Result

T = TypeVar("T")


class Series:
    """Rematches and series scores."""

    _sessions: Callable[[], AbstractAsyncContextManager[AsyncSession]]

    async def _write(self, job: Callable[[Session], T]) -> T:
        raise NotImplementedError  # Store's: one writer for every write

    async def claim_rematch(self, race_id: int, code: str) -> str | None:
        """Make the race with join code ``code`` the rematch of the finished race
        ``race_id``, unless it has one already: returns the rematch's code, ours or the one
        claimed before (None if there is no such finished race). One statement, so two
        racers asking at once (on any nodes) get the same answer."""

        def write(session: Session) -> str | None:
            session.execute(
                update(Race)
                .where(Race.id == race_id, Race.status == "finished", Race.rematch_code.is_(None))
                .values(rematch_code=code)
            )
            claimed = session.scalar(select(Race.rematch_code).where(Race.id == race_id, Race.status == "finished"))
            session.commit()
            return claimed

        return await self._write(write)

    async def release_rematch(self, race_id: int, code: str) -> None:
        """Let go of a finished race's rematch ``code`` (its lobby was deleted, empty), so
        that a new one can be claimed; a later claim is left as it is."""

        def write(session: Session) -> None:
            session.execute(
                update(Race).where(Race.id == race_id, Race.rematch_code == code).values(rematch_code=None)
            )
            session.commit()

        await self._write(write)

    async def series_wins(self, series_id: int, before: int) -> list[tuple[int, str, int]]:
        """(player id, name, races won) of everyone who raced in the series' races numbered
        below ``before``, in the order they first raced (then by id): the first of each
        race wins it."""
        races = select(Race.id).where(
            (Race.id == series_id) | (Race.series_id == series_id), Race.series_number < before
        )
        statement = (
            select(
                Result.player_id, Player.name,
                func.sum(case((Result.rank == 1, 1), else_=0)),
                func.min(Result.race_id),
            )
            .join(Player, Player.id == Result.player_id)
            .where(Result.race_id.in_(races))
            .group_by(Result.player_id, Player.name)
            .order_by(func.min(Result.race_id), Result.player_id)
        )
        async with self._sessions() as session:
            return [(pid, name, int(wins or 0)) for pid, name, wins, _ in (await session.execute(statement)).all()]
