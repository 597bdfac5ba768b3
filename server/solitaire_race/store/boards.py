"""Leaderboard queries: one function per board, each returning a ``LeaderboardPage``.

Boards and their order (ties always broken by fewer moves, then the earlier finish, then
the lower player id so that the order is total):
- ``deal``: every player's best result on one (game, deal): won games by time, then the
  rest by cards left on the table.
- ``daily``: the ranked attempts at one daily challenge, in the same order.
- ``fastest``: per game, each player's fastest win.
- ``wins``: per game, most wins.
- ``win_rate``: per game, best win rate among players with at least ``min_games`` games.

The result boards read ``results`` through the ``ix_results_deal_board`` /
``ix_results_daily_board`` indexes; the all-time boards read ``player_stats``, which
``finish_race`` keeps up to date, so no board ever aggregates every result.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import ColumnElement, and_, func, or_, select
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.orm import aliased

from .models import Player, PlayerStats, Result
from .records import LeaderboardEntry, LeaderboardPage

BOARDS = ("deal", "daily", "fastest", "wins", "win_rate")


def _window(page: int, page_size: int) -> tuple[int, int]:
    first = (page - 1) * page_size + 1
    return first, first + page_size - 1


async def result_board(
    session: AsyncSession,
    *,
    board: str,
    game: str,
    deal: int | None = None,
    date: str | None = None,
    page: int,
    page_size: int,
    viewer: int | None,
) -> LeaderboardPage:
    """The ``deal`` or ``daily`` board: best result per player, ranked."""
    where = [Result.game == game]
    where.append(Result.deal_number == deal if board == "deal" else Result.daily_date == date)
    order = (Result.rank_class, Result.sort_primary, Result.moves, Result.finished_at)
    best = (
        select(
            Result,
            func.row_number().over(partition_by=Result.player_id, order_by=order).label("pn"),
        )
        .where(*where)
        .subquery()
    )
    ranked = (
        select(
            best,
            func.row_number()
            .over(order_by=(best.c.rank_class, best.c.sort_primary, best.c.moves, best.c.finished_at, best.c.player_id))
            .label("position"),
            func.count().over().label("n"),
        )
        .where(best.c.pn == 1)
        .subquery()
    )
    first, last = _window(page, page_size)
    wanted: ColumnElement[bool] = ranked.c.position.between(first, last)
    if viewer is not None:
        wanted = or_(wanted, ranked.c.player_id == viewer)
    rows = (
        await session.execute(
            select(ranked, Player.name).join(Player, Player.id == ranked.c.player_id).where(wanted).order_by(ranked.c.position)
        )
    ).all()
    total = rows[0].n if rows else await _count_players(session, where)
    entries = [_result_entry(r) for r in rows]
    return _page(board, game, entries, total, page, page_size, viewer, first, last, deal=deal, date=date)


async def _count_players(session: AsyncSession, where: list[ColumnElement[bool]]) -> int:
    """Players on a board whose page is past the end (no row carried the count)."""
    return int(await session.scalar(select(func.count(func.distinct(Result.player_id))).where(*where)) or 0)


def _result_entry(row: Any) -> LeaderboardEntry:
    return LeaderboardEntry(
        rank=row.position,
        player_id=row.player_id,
        name=row.name,
        outcome=row.outcome,
        time_ms=row.time_ms,
        moves=row.moves,
        home=row.home,
        total=row.total,
        finished_at=row.finished_at,
        race_id=row.race_id,
    )


# --- all-time boards (player_stats) --------------------------------------------------

S = PlayerStats


def _stats_order(board: str) -> tuple[Any, ...]:
    if board == "fastest":
        return (S.best_time_ms, S.best_moves, S.best_at, S.player_id)
    if board == "wins":
        return (S.wins.desc(), S.win_moves, S.last_win_at, S.player_id)
    return (S.win_rate.desc(), S.wins.desc(), S.win_moves, S.last_win_at, S.player_id)


def _stats_filter(board: str, game: str, min_games: int) -> list[ColumnElement[bool]]:
    where = [S.game == game]
    if board == "fastest":
        where.append(S.best_time_ms.is_not(None))
    elif board == "wins":
        where.append(S.wins > 0)
    else:
        where.append(S.games >= min_games)
    return where


def _ahead_of(board: str, me: Any) -> ColumnElement[bool]:
    """Rows that rank before ``me`` (a row alias of the viewer's stats) on ``board``."""

    def lexi(keys: list[tuple[Any, Any, bool]]) -> ColumnElement[bool]:
        # (column, the viewer's column, descending?) -> lexicographically "strictly better"
        column, mine, descending = keys[0]
        better = column > mine if descending else column < mine
        if len(keys) == 1:
            return better
        return or_(better, and_(column == mine, lexi(keys[1:])))

    pid = (S.player_id, me.player_id, False)
    if board == "fastest":
        return lexi([(S.best_time_ms, me.best_time_ms, False), (S.best_moves, me.best_moves, False), (S.best_at, me.best_at, False), pid])
    tail = [(S.win_moves, me.win_moves, False), (S.last_win_at, me.last_win_at, False), pid]
    if board == "wins":
        return lexi([(S.wins, me.wins, True), *tail])
    return lexi([(S.win_rate, me.win_rate, True), (S.wins, me.wins, True), *tail])


async def stats_board(
    session: AsyncSession, *, board: str, game: str, min_games: int, page: int, page_size: int, viewer: int | None
) -> LeaderboardPage:
    """One statement, one round trip: the page's rows (their ids found in the covering
    index), the viewer's row, the board's size and the number of players ahead of the
    viewer (both counted from the index)."""
    where = _stats_filter(board, game, min_games)
    order = _stats_order(board)
    first, last = _window(page, page_size)
    page_ids = select(S.player_id).where(*where).order_by(*order).offset(first - 1).limit(page_size)
    total_q = select(func.count()).select_from(S).where(*where).scalar_subquery()
    columns: list[Any] = [S, Player.name, total_q.label("total")]
    wanted: ColumnElement[bool] = S.player_id.in_(page_ids)
    if viewer is not None:
        me = aliased(S)
        ahead_q = (
            select(func.count()).select_from(S).join(me, and_(me.game == game, me.player_id == viewer))
            .where(*where, _ahead_of(board, me)).scalar_subquery()
        )
        columns.append(ahead_q.label("ahead"))
        wanted = or_(wanted, S.player_id == viewer)
    rows = (await session.execute(select(*columns).join(Player, Player.id == S.player_id).where(*where, wanted).order_by(*order))).all()
    total = rows[0].total if rows else int(await session.scalar(select(total_q)) or 0)
    entries: list[LeaderboardEntry] = []
    mine = None
    rank = first
    for row in rows:
        stats = row[0]
        if viewer is not None and stats.player_id == viewer:
            mine = _stats_entry(stats, row.name, row.ahead + 1)
            if not first <= mine.rank <= last:
                continue  # shown apart from the page
        entries.append(_stats_entry(stats, row.name, rank))
        rank += 1
    if mine is not None and mine not in entries:
        entries.append(mine)
    return _page(board, game, entries, int(total or 0), page, page_size, viewer, first, last, min_games=min_games if board == "win_rate" else None)


def _stats_entry(s: PlayerStats, name: str, rank: int) -> LeaderboardEntry:
    return LeaderboardEntry(
        rank=rank,
        player_id=s.player_id,
        name=name,
        outcome="won" if s.best_time_ms is not None else None,
        time_ms=s.best_time_ms,
        moves=s.best_moves,
        home=None,
        total=None,
        finished_at=s.best_at,
        race_id=None,
        wins=s.wins,
        games=s.games,
        win_rate=s.win_rate,
    )


def _page(
    board: str,
    game: str,
    entries: list[LeaderboardEntry],
    total: int,
    page: int,
    page_size: int,
    viewer: int | None,
    first: int,
    last: int,
    **where: Any,
) -> LeaderboardPage:
    on_page = tuple(e for e in entries if first <= e.rank <= last)
    me = next((e for e in entries if e.player_id == viewer), None) if viewer is not None else None
    return LeaderboardPage(
        board=board, game=game, page=page, page_size=page_size, total=total,
        entries=on_page, me=me, deal=where.get("deal"), date=where.get("date"), min_games=where.get("min_games"),
    )
