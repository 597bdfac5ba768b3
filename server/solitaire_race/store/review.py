"""The store's fair-play review: results held as implausible (``fair_play.py``), cleared or
confirmed by an operator, and players banned from ranked boards (a part of ``Store``, kept
in its own module; ``solitaire-race review`` is its command)."""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractAsyncContextManager
from typing import TypeVar

from sqlalchemy import delete, select, update
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.orm import Session

from ..results import rank_key
from .errors import NotFound
from .models import Player, PlayerStats, Race, Result
from .records import HeldResultRecord
from .writes import BANNED_ASSESSMENT, HELD_CLASS, update_stats

T = TypeVar("T")


class Review:
    """Held results and bans, for the operator."""

    _sessions: Callable[[], AbstractAsyncContextManager[AsyncSession]]

    async def _write(self, job: Callable[[Session], T]) -> T:
        raise NotImplementedError  # Store's: one writer for every write

    async def held_results(self) -> list[HeldResultRecord]:
        """The held results no operator has looked at yet, oldest first."""
        statement = (
            select(Result, Player.name, Race.code)
            .join(Player, Player.id == Result.player_id).join(Race, Race.id == Result.race_id)
            .where(Result.held, Result.review.is_(None)).order_by(Result.finished_at, Result.race_id)
        )
        async with self._sessions() as session:
            return [
                HeldResultRecord(
                    race_id=r.race_id, race_code=code, player_id=r.player_id, player_name=name, game=r.game,
                    outcome=r.outcome, time_ms=r.time_ms, moves=r.moves, daily_date=r.daily_date,
                    finished_at=r.finished_at, fair_play=r.fair_play or "{}",
                )
                for r, name, code in (await session.execute(statement)).all()
            ]

    async def clear_result(self, race_id: int, player_id: int) -> None:
        """The result was played fairly: onto the boards and into the player's stats."""

        def write(session: Session) -> None:
            row = _held(session, race_id, player_id)
            if row.review == "confirmed":
                raise NotFound(f"player {player_id}'s result in race {race_id} was confirmed as unfair: it stays off")
            if session.scalar(select(Player.ranked_ban).where(Player.id == player_id)):
                raise NotFound(f"player {player_id} is banned from ranked boards: their results stay off")
            rank_class, _, _ = rank_key(row.outcome, row.time_ms, row.moves, row.total - row.home)
            session.execute(
                update(Result).where(Result.race_id == race_id, Result.player_id == player_id)
                .values(held=False, review="cleared", rank_class=rank_class)
            )
            update_stats(session, row.game, [{
                "player_id": row.player_id, "outcome": row.outcome, "moves": row.moves,
                "time_ms": row.time_ms, "finished_at": row.finished_at,
            }])
            session.commit()

        await self._write(write)

    async def confirm_result(self, race_id: int, player_id: int) -> None:
        """The result was not played fairly: it stays off the boards, and off the list."""

        def write(session: Session) -> None:
            _held(session, race_id, player_id)
            mine = (Result.race_id == race_id, Result.player_id == player_id)
            session.execute(update(Result).where(*mine).values(review="confirmed"))
            session.commit()

        await self._write(write)

    async def ban_player(self, player_id: int) -> int:
        """Off the ranked boards for good: every result of the player held (confirmed),
        their stats gone, every later result held. Returns how many results it held."""

        def write(session: Session) -> int:
            if session.get(Player, player_id) is None:
                raise NotFound(f"no player {player_id}")
            session.execute(update(Player).where(Player.id == player_id).values(ranked_ban=True))
            held = session.execute(
                update(Result).where(Result.player_id == player_id, Result.held.is_(False))
                .values(held=True, rank_class=HELD_CLASS, review="confirmed", fair_play=BANNED_ASSESSMENT)
            ).rowcount  # type: ignore[attr-defined]
            # Those held already are decided too: off the list, never to be cleared.
            session.execute(update(Result).where(Result.player_id == player_id).values(review="confirmed"))
            session.execute(delete(PlayerStats).where(PlayerStats.player_id == player_id))
            session.commit()
            return int(held)

        return await self._write(write)


def _held(session: Session, race_id: int, player_id: int) -> Result:
    row = session.get(Result, (race_id, player_id))
    if row is None or not row.held:
        raise NotFound(f"no held result of player {player_id} in race {race_id}")
    return row
