"""The store's reads of unfinished races: what a restart resumes and what a cluster's
nodes adopt (a part of ``Store``, kept in its own module)."""

from __future__ import annotations

from collections.abc import Callable, Collection
from contextlib import AbstractAsyncContextManager

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from .models import DailyAttempt, MoveLog, Player, Race, RaceEntry
from .records import OpenRaceRecord, RaceRecord, RunningRaceRecord
from .rows import race_record


class Unfinished:
    """Lobbies and running races, as the database holds them."""

    _sessions: Callable[[], AbstractAsyncContextManager[AsyncSession]]

    async def unfinished_races(self) -> list[RaceRecord]:
        """Every race in its lobby or running (a cluster's nodes look for orphans there)."""
        async with self._sessions() as session:
            rows = await session.scalars(select(Race).where(Race.status.in_(("open", "running"))).order_by(Race.id))
            return [race_record(row) for row in rows]

    async def running_races(self, only: Collection[int] | None = None) -> list[RunningRaceRecord]:
        """Every race left running (by a crash or a restart), with its racers and logs;
        with ``only``, those of these race ids."""
        async with self._sessions() as session:
            chosen = select(Race).where(Race.status == "running")
            if only is not None:
                chosen = chosen.where(Race.id.in_(list(only)))
            races = list(await session.scalars(chosen.order_by(Race.id)))
            logs: dict[int, dict[int, list[tuple[int, str, str, int]]]] = {race.id: {} for race in races}
            if races:
                # One pass over the journal's tail: from the oldest running race's first entry.
                tail = min(race.log_from or 0 for race in races)
                running = select(Race.id).where(Race.status == "running", Race.id.in_([race.id for race in races]))
                entries = await session.execute(
                    select(MoveLog.race_id, MoveLog.player_id, MoveLog.seq, MoveLog.kind, MoveLog.text, MoveLog.at_ms)
                    .where(MoveLog.id >= tail, MoveLog.race_id.in_(running)).order_by(MoveLog.id)
                )
                for race_id, player_id, *entry in entries:
                    if race_id in logs:  # always, within one read transaction: a guard
                        logs[race_id].setdefault(player_id, []).append(tuple(entry))  # type: ignore[arg-type]
            out = []
            for race in races:
                players = (
                    await session.execute(
                        select(Player.id, Player.name).join(RaceEntry, RaceEntry.player_id == Player.id)
                        .where(RaceEntry.race_id == race.id).order_by(Player.id)
                    )
                ).all()
                log: dict[int, list[tuple[int, str, str, int]]] = {pid: [] for pid, _ in players} | logs[race.id]
                ranked = await session.scalar(select(DailyAttempt.date).where(DailyAttempt.race_id == race.id))
                out.append(
                    RunningRaceRecord(
                        race=race_record(race),
                        players=tuple((pid, name) for pid, name in players),
                        # By seq; an entry written twice, identical, counts once: on PostgreSQL
                        # a commit whose answer was lost (the connection dropped) may have
                        # happened, and the room writes the same entry again with the racer's
                        # next move. (SQLite always knows whether a commit happened.) Entries
                        # that differ under one seq are left for the room to refuse.
                        logs={pid: tuple(sorted(set(entries))) for pid, entries in log.items()},
                        daily_ranked=ranked is not None,
                    )
                )
            return out

    async def open_races(self, only: Collection[int] | None = None) -> list[OpenRaceRecord]:
        """Every race still in its lobby, with who is in it (``set_race_entries``); with
        ``only``, those of these race ids."""
        async with self._sessions() as session:
            chosen = select(Race).where(Race.status == "open")
            if only is not None:
                chosen = chosen.where(Race.id.in_(list(only)))
            races = list(await session.scalars(chosen.order_by(Race.id)))
            entries = await session.execute(
                select(RaceEntry.race_id, Player.id, Player.name).join(Player, Player.id == RaceEntry.player_id)
                .where(RaceEntry.race_id.in_([race.id for race in races])).order_by(Player.id)
            )
            players: dict[int, list[tuple[int, str]]] = {race.id: [] for race in races}
            for race_id, player_id, name in entries:
                players.setdefault(race_id, []).append((player_id, name))
            return [OpenRaceRecord(race_record(race), tuple(players[race.id])) for race in races]

    async def running_daily_race(self, player_id: int, game: str, day: str) -> RaceRecord | None:
        """The player's daily attempt at ``game`` of ``day`` that is still running, if any."""
        async with self._sessions() as session:
            row = await session.scalar(
                select(Race).where(
                    Race.kind == "daily", Race.created_by == player_id, Race.game == game, Race.daily_date == day,
                    Race.status == "running",
                ).order_by(Race.id.desc()).limit(1)
            )
            return None if row is None else race_record(row)
