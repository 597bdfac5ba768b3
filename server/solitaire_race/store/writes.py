"""The write jobs the writer runs (``writer.py``): statements of the race lifecycle and the
player statistics, each built once (building one cost more than SQLite's work to run it).
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Any, NamedTuple

from sqlalchemy import Float, Select, and_, bindparam, case, cast, delete, func, insert, or_, select, update
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.dialects.postgresql import insert as postgresql_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session
from sqlalchemy.sql.dml import Delete, Insert, ReturningUpdate

from ..results import RacerOutcome, rank_key
from .errors import Fenced, NotFound, RaceStateError
from .models import Base, DailyAttempt, MoveLog, Player, PlayerStats, Race, RaceEntry, Result
from .records import RaceStatus

# A race's status change (``_transition_statement``): UPDATE ... RETURNING game, deal_number, live_boards.
Transition = ReturningUpdate[str, int, bool]

HELD_CLASS = 2  # a held result's rank_class: the boards read classes 0 (won) and 1 only
UNRANKED_CLASS = 3  # a result of a race with live boards (its racers could see each other's): on no board
BANNED_ASSESSMENT = '{"held": true, "reasons": ["the player is banned from ranked boards"], "evidence": {}}'


def place_on_boards(row: dict[str, Any], banned: set[int], live_boards: bool) -> None:
    """A new result row's ``rank_class`` and ``sort_primary`` (``results.rank_key``): where
    the boards put it, if anywhere. A banned player's is held, decided already (off the
    boards, not on the review list); a race with live boards is unranked, so never held."""
    left = row["total"] - row["home"]
    rank_class, row["sort_primary"], _ = rank_key(row["outcome"], row["time_ms"], row["moves"], left)
    if live_boards:
        row["held"] = False
        rank_class = UNRANKED_CLASS
    elif row["player_id"] in banned:
        row.update(held=True, fair_play=BANNED_ASSESSMENT, review="confirmed")
    row["rank_class"] = HELD_CLASS if row["held"] else rank_class


def banned_players(session: Session, player_ids: Sequence[int]) -> set[int]:
    """Those of ``player_ids`` banned from ranked boards (their results are held)."""
    if not player_ids:
        return set()
    players = Player.__table__.c
    return set(session.scalars(select(players.id).where(players.id.in_(player_ids), players.ranked_ban)))


@functools.cache
def stats_upsert(dialect: str = "sqlite") -> sqlite.Insert | postgresql.Insert:
    """INSERT a racer's first result of a game, or fold it into their row (built once per
    dialect: SQLite's and PostgreSQL's ``INSERT ... ON CONFLICT DO UPDATE`` are the same
    statement, each built with its dialect's ``insert``)."""
    table = PlayerStats.__table__
    statement = postgresql_insert(table) if dialect == "postgresql" else sqlite_insert(table)
    old, new = table.c, statement.excluded
    # A win with no time yet, a faster time, or the same time in fewer moves.
    better = and_(
        new.best_time_ms.is_not(None),
        or_(
            old.best_time_ms.is_(None), new.best_time_ms < old.best_time_ms,
            and_(new.best_time_ms == old.best_time_ms, new.best_moves < old.best_moves),
        ),
    )
    return statement.on_conflict_do_update(
        index_elements=[old.player_id, old.game],
        set_={
            "games": old.games + 1,
            "wins": old.wins + new.wins,
            "win_moves": old.win_moves + new.win_moves,
            "win_rate": cast(old.wins + new.wins, Float) / (old.games + 1),
            # The later of the two: a cleared result (review.py) may be older than the last win.
            "last_win_at": case(
                (
                    and_(new.wins == 1, or_(old.last_win_at.is_(None), new.last_win_at > old.last_win_at)),
                    new.last_win_at,
                ),
                else_=old.last_win_at,
            ),
            "best_time_ms": case((better, new.best_time_ms), else_=old.best_time_ms),
            "best_moves": case((better, new.best_moves), else_=old.best_moves),
            "best_at": case((better, new.best_at), else_=old.best_at),
        },
    )


def update_stats(session: Session, game: str, rows: Sequence[dict[str, Any]]) -> None:
    """Fold new results into ``player_stats`` (inside the caller's write job): one upsert
    for the room, computed by SQLite. The ORM's load-change-flush of one object per racer
    made this the costliest part of finishing a race (~2 ms of the event loop per race)."""
    if not rows:
        return  # (every result of the race held: fair_play.py)
    values = []
    for row in rows:
        won = row["outcome"] == RacerOutcome.WON
        values.append({
            "player_id": row["player_id"], "game": game, "games": 1, "wins": int(won),
            "win_rate": float(won), "win_moves": row["moves"] if won else 0,
            "last_win_at": row["finished_at"] if won else None,
            "best_time_ms": row["time_ms"] if won else None, "best_moves": row["moves"] if won else None,
            "best_at": row["finished_at"] if won else None,
        })
    session.execute(stats_upsert(session.get_bind().dialect.name), values)  # one statement, executed per racer


class Statements(NamedTuple):
    """Statements of the race lifecycle's writes, built once (``statements()``): building
    one (coercing its clauses, each time) cost more than SQLite's work to run it."""

    add_entries: Insert
    drop_entries: Delete
    ranked_date: Select[str]
    add_results: Insert


@functools.cache
def statements() -> Statements:
    attempts = DailyAttempt.__table__.c
    return Statements(
        add_entries=insert(RaceEntry.__table__),
        drop_entries=delete(RaceEntry.__table__).where(RaceEntry.__table__.c.race_id == bindparam("race_id")),
        ranked_date=select(attempts.date).where(attempts.race_id == bindparam("race_id")),
        add_results=insert(Result.__table__),
    )


def _transition_statement(to: RaceStatus, **values: Any) -> Transition:
    """UPDATE a race from the status bound as ``frm`` to ``to``, setting ``values``, and
    return its game, deal number and whether its boards are live; the race is bound as ``race_id``."""
    races = Race.__table__.c
    return (
        update(Race.__table__).where(races.id == bindparam("race_id"), races.status == bindparam("frm"))
        .values(status=to, **values).returning(races.game, races.deal_number, races.live_boards)
    )


@functools.cache
def start_statement() -> Transition:
    # Its entries will come after every entry there is: SQLite gives a new row the largest
    # rowid plus one, and the journal never deletes. On PostgreSQL ``move_log.id`` comes
    # from a sequence (BIGINT, migration 0009), whose nextval() hands out ever larger values
    # (CACHE 1, the default: no session holds a range of its own), whether or not their
    # transactions commit. The race's entries are appended only after this transaction
    # commits (a race's start is saved before any of its moves is logged), so each one's
    # nextval() comes after every value max(id) can see here: larger, so >= max + 1. Values
    # of transactions still in flight or rolled back are invisible or gone, and only make
    # this lower bound lower, never wrong.
    next_entry = select(func.coalesce(func.max(MoveLog.id), 0) + 1).scalar_subquery()
    started_at = bindparam("started_at", type_=Race.started_at.type)
    return _transition_statement("running", started_at=started_at, log_from=next_entry)


@functools.cache
def finish_statement() -> Transition:
    return _transition_statement("finished", finished_at=bindparam("finished_at", type_=Race.finished_at.type))


def transition(
    session: Session, statement: Transition, race_id: int, frm: RaceStatus, **values: Any
) -> tuple[str, int, bool]:
    """Run a ``_transition_statement`` on the race inside the caller's transaction and
    return its (game, deal number, live boards), or raise NotFound / RaceStateError."""
    row = session.execute(statement, {"race_id": race_id, "frm": frm, **values}).first()
    if row is None:
        race = session.get(Race, race_id)
        if race is None:
            raise NotFound(f"no race {race_id}")
        raise RaceStateError(f"race {race_id} is {race.status!r}, not {frm!r}")
    return row.game, row.deal_number, row.live_boards


def replace_entries(session: Session, race_id: int, player_ids: Sequence[int]) -> None:
    session.execute(statements().drop_entries, {"race_id": race_id})
    if player_ids:
        session.execute(statements().add_entries, [{"race_id": race_id, "player_id": p} for p in player_ids])


def insert_unless_present(row: Base) -> Callable[[Session], bool]:
    """A job inserting ``row``: False (nothing written) if its key is already taken."""

    def write(session: Session) -> bool:
        session.add(row)
        try:
            session.commit()
        except IntegrityError:
            return False
        return True

    return write


def check_epoch(session: Session, race_id: int, epoch: int) -> None:
    """Raise Fenced unless ``epoch`` is the race's; the race's row stays locked until the
    caller's transaction ends (on PostgreSQL: a claim waits for it), so it stays so."""
    current = session.scalar(select(Race.epoch).where(Race.id == race_id).with_for_update())
    if current is None:
        raise NotFound(f"no race {race_id}")
    if current != epoch:
        raise Fenced(f"race {race_id} has a newer owner than epoch {epoch}")


def claim(session: Session, race_id: int, expected: int | None = None) -> int:
    """Raise the race's epoch and commit: the new epoch (``Store.claim_race``). With
    ``expected``, only from that epoch (else ``Fenced``: another owner claimed it since)."""
    races = Race.__table__.c
    claimed = update(Race.__table__).where(races.id == race_id)
    if expected is not None:
        claimed = claimed.where(races.epoch == expected)
    epoch = session.scalar(claimed.values(epoch=races.epoch + 1).returning(races.epoch))
    if epoch is None:
        session.rollback()
        if expected is not None and session.scalar(select(races.id).where(races.id == race_id)) is not None:
            raise Fenced(f"race {race_id} was claimed by another owner (not at epoch {expected} any more)")
        raise NotFound(f"no race {race_id}")
    session.commit()
    return int(epoch)


def abandon(session: Session, race_id: int, epoch: int | None = None) -> bool:
    """Delete the race if it is still open, with its entrants (``Store.abandon_race``):
    whether it was. With ``epoch``, only while it is the race's (else ``Fenced``)."""
    if epoch is not None:
        try:
            check_epoch(session, race_id, epoch)
        except NotFound:
            session.rollback()
            return False
    # Its entrants first: they refer to the race. Nothing is deleted unless it is open.
    open_race = select(Race.id).where(Race.id == race_id, Race.status == "open").scalar_subquery()
    session.execute(delete(RaceEntry).where(RaceEntry.race_id == open_race))
    count = session.execute(delete(Race).where(Race.id == race_id, Race.status == "open")).rowcount  # type: ignore[attr-defined]
    session.commit()
    return bool(count)
