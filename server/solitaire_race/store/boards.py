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
``finish_race`` keeps up to date, so no board ever aggregates every result. Each all-time
board has a covering index in its exact order (``ix_player_stats_fastest``, ``_wins``,
``_win_rate``), and its statement's plan is checked in ``tests/test_leaderboards.py``.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from sqlalchemy import ColumnClause, ColumnElement, Integer, Select, and_, bindparam, func, literal_column, or_, select
from sqlalchemy.engine import Row
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.orm import InstrumentedAttribute, aliased

from ..results import BOARDS, RacerOutcome
from .models import Player, PlayerStats, Race, Result
from .records import LeaderboardEntry, LeaderboardPage
from .writes import HELD_CLASS

__all__ = ["BOARDS", "result_board", "stats_board"]


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
    # Classes 0 (won) and 1: a held result (class 2, fair_play.py) is on no board.
    where = [Result.game == game, Result.rank_class < HELD_CLASS]
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
            select(ranked, Player.name, Race.code.label("race_code"))
            .join(Player, Player.id == ranked.c.player_id)
            .join(Race, Race.id == ranked.c.race_id)  # the code its replay is found by
            .where(wanted)
            .order_by(ranked.c.position)
        )
    ).all()
    total = rows[0].n if rows else await _count_players(session, where)
    entries = [_result_entry(r) for r in rows]
    return _page(board, game, entries, total, page, page_size, viewer, first, last, deal=deal, date=date)


async def _count_players(session: AsyncSession, where: list[ColumnElement[bool]]) -> int:
    """Players on a board whose page is past the end (no row carried the count)."""
    return int(await session.scalar(select(func.count(func.distinct(Result.player_id))).where(*where)) or 0)


# ``*tuple[Any, ...]``: the row's columns, which mypy cannot type (they come from the board's subqueries).
def _result_entry(row: Row[*tuple[Any, ...]]) -> LeaderboardEntry:
    return LeaderboardEntry(
        rank=row.position,
        player_id=row.player_id,
        name=row.name,
        outcome=RacerOutcome(row.outcome),
        time_ms=row.time_ms,
        moves=row.moves,
        home=row.home,
        total=row.total,
        finished_at=row.finished_at,
        race_id=row.race_id,
        race_code=row.race_code,
    )


# --- all-time boards (player_stats) --------------------------------------------------

S = PlayerStats


def _stats_order(board: str) -> tuple[Any, ...]:
    if board == "fastest":
        return (S.best_time_ms, S.best_moves, S.best_at, S.player_id)
    if board == "wins":
        return (S.wins.desc(), S.win_moves, S.last_win_at, S.player_id)
    return (S.win_rate.desc(), S.wins.desc(), S.win_moves, S.last_win_at, S.player_id)


def _stats_filter(board: str, t: Any = S) -> list[ColumnElement[bool]]:
    """Who is on ``board`` (parameters ``game``, ``min_games``); ``t``: ``PlayerStats`` or
    an alias of it."""
    where = [t.game == bindparam("game")]
    if board == "fastest":
        where.append(t.best_time_ms.is_not(None))
    elif board == "wins":
        where.append(t.wins > 0)
    else:
        where.append(t.games >= bindparam("min_games"))
    return where


def _ahead(board: str, viewers: Callable[[Any], Any], dialect: str = "sqlite") -> list[ColumnElement[bool]]:
    """Rows that rank before the viewer on ``board`` (``viewers(column)``: the viewer's
    value of that column), as disjoint conditions, one per ranking key: the keys before it
    equal to the viewer's and this one strictly better. Each is an equality prefix and one
    range of the board's index, so counting it is a count of index entries; one OR of them
    all makes SQLite build a MULTI-INDEX OR, with a rowid set to remove duplicates, which
    costs three times as much at the bottom of a million-result board.

    Equal nullable keys compare with ``IS``: ``last_win_at`` is NULL for the players
    without a win, who tie at the bottom of the win-rate board. (A NULL ``last_win_at``
    only ever ties with another NULL: players with equal wins either both have one or both
    do not.) The others compare with ``=``, which SQLite always prefers to a range on the
    same column (unanalyzed, it took ``wins > 0`` over ``wins IS ?``).

    PostgreSQL cannot search an index with ``IS NOT DISTINCT FROM``: every level after the
    first then read the whole game's part of the index (145 ms for the fastest board's
    viewer, a million results). There a tie is ``=``, which gives the same counts: on the
    fastest board every row has a best time, moves and date (the board's condition), on the
    wins board a last win (wins > 0), and the viewer's values are those of a row on the
    board. Only the win-rate board's ``last_win_at`` may be NULL on both sides (no win
    yet): there the tie is ``=``, or both NULL, after the equal prefix the index narrows
    to."""
    keys: list[tuple[InstrumentedAttribute[Any], bool]]
    if board == "fastest":
        keys = [(S.best_time_ms, False), (S.best_moves, False), (S.best_at, False)]
    else:
        keys = [(S.wins, True), (S.win_moves, False), (S.last_win_at, False)]
        if board == "win_rate":
            keys.insert(0, (S.win_rate, True))
    keys.append((S.player_id, False))
    levels = []
    for i, (column, descending) in enumerate(keys):
        if dialect == "sqlite":
            ties = [c.is_not_distinct_from(viewers(c)) if _nullable(c) else c == viewers(c) for c, _ in keys[:i]]
        else:
            ties = [_pg_tie(board, c, viewers(c)) for c, _ in keys[:i]]
        levels.append(and_(*ties, column > viewers(column) if descending else column < viewers(column)))
    return levels


def _pg_tie(board: str, column: Any, value: Any) -> ColumnElement[bool]:
    if board == "win_rate" and _nullable(column):
        return or_(column == value, and_(column.is_(None), value.is_(None)))
    return column == value  # type: ignore[no-any-return]


def _nullable(column: Any) -> bool:
    return bool(S.__table__.c[column.key].nullable)


# The outer statement picks its rows by rowid and nothing else, so that whether or not the
# database has been ANALYZEd, SQLite can only look them up: given a ``game = ?`` term it
# may walk the whole board in index order to save sorting a page (unanalyzed, it guesses
# that an equality on an index matches ten rows).
_ROWID: ColumnClause[int] = literal_column("player_stats.rowid")
_ANY_ROWID: ColumnClause[int] = literal_column("rowid")  # in a subquery with one FROM: that table's rowid


@functools.cache
def _stats_statements(
    board: str, with_viewer: bool, dialect: str = "sqlite"
) -> tuple[Select[*tuple[Any, ...]], Select[int]]:
    """``stats_board``'s statement and its board-size fallback, built once per board: the
    statement is large, and building it (and SQLAlchemy's cache key for it) on every call
    cost more than SQLite takes to run it. Parameters: ``game``, ``min_games`` (win rate),
    ``offset``, ``limit`` and ``viewer``. ``dialect``: PostgreSQL has no rowid, so there
    the page's rows (and the viewer's) are picked by their primary key (``game`` is bound,
    ``player_id`` read from the board's index); SQLite's statement is the rowid one."""
    where = _stats_filter(board)
    order = _stats_order(board)
    by_key = dialect != "sqlite"
    page_rows = select(S.player_id if by_key else _ANY_ROWID).select_from(S).where(*where).order_by(*order)
    page_rows = page_rows.offset(bindparam("offset", type_=Integer)).limit(bindparam("limit", type_=Integer))
    total_q = select(func.count()).select_from(S).where(*where).scalar_subquery()
    columns: list[Any] = [S, Player.name, total_q.label("total")]
    wanted: ColumnElement[bool] = S.player_id.in_(page_rows) if by_key else _ROWID.in_(page_rows)
    if with_viewer:
        me = aliased(S)
        is_viewer = (me.game == bindparam("game"), me.player_id == bindparam("viewer"))

        def viewers(column: Any) -> Any:
            """The viewer's value of ``column``: an uncorrelated subquery, run once."""
            return select(getattr(me, column.key)).where(*is_viewer).scalar_subquery()

        # On the fastest and wins boards, comparing the first key with the viewer's value
        # implies the board's condition (a win time; a win); repeated, it is a second range
        # on that column for SQLite to choose, and unanalyzed it chose it over ``wins = ?``.
        ahead_where = where if board == "win_rate" else where[:1]
        counts = [
            select(func.count()).select_from(S).where(*ahead_where, level).scalar_subquery()
            for level in _ahead(board, viewers, dialect)
        ]
        columns.append(sum(counts[1:], counts[0]).label("ahead"))
        if by_key:  # and the viewer's row, if it is on the board (``where``, below)
            # One list of ids, not an OR: PostgreSQL plans ``IN (page) OR player_id = ?`` as a
            # filter over the whole game's rows (165 ms at a million results); a list of 21
            # ids is 21 primary-key lookups.
            page = page_rows.subquery()
            ids = select(page.c.player_id).union_all(select(bindparam("viewer", type_=Integer)))
            wanted = S.player_id.in_(ids)
        else:
            my_row = select(_ANY_ROWID).select_from(me).where(*_stats_filter(board, me), is_viewer[1])
            wanted = or_(wanted, _ROWID == my_row.scalar_subquery())  # noqa: SIM300 (a column, not a constant)
    if by_key:
        wanted = and_(*where, wanted)  # the board's rows of the game: (game, player_id) is the key
    statement = select(*columns).join(Player, Player.id == S.player_id).where(wanted).order_by(*order)
    return statement, select(total_q)


async def stats_board(
    session: AsyncSession, *, board: str, game: str, min_games: int, page: int, page_size: int, viewer: int | None
) -> LeaderboardPage:
    """One statement, one round trip: the page's rows (their rowids read from the board's
    covering index, in order), the viewer's row, the board's size and the number of players
    ahead of the viewer (both counted from indexes)."""
    first, last = _window(page, page_size)
    statement, total_statement = _stats_statements(board, viewer is not None, session.get_bind().dialect.name)
    params: dict[str, Any] = {"game": game, "offset": first - 1, "limit": page_size}
    if board == "win_rate":
        params["min_games"] = min_games
    if viewer is not None:
        params["viewer"] = viewer
    rows = (await session.execute(statement, params)).all()
    total = rows[0].total if rows else int(await session.scalar(total_statement, params) or 0)
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
    return _page(
        board, game, entries, int(total or 0), page, page_size, viewer, first, last,
        min_games=min_games if board == "win_rate" else None,
    )


def _stats_entry(s: PlayerStats, name: str, rank: int) -> LeaderboardEntry:
    return LeaderboardEntry(
        rank=rank,
        player_id=s.player_id,
        name=name,
        outcome=RacerOutcome.WON if s.best_time_ms is not None else None,
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
