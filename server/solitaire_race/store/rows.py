"""Values on their way in (checked) and rows on their way out (made into records)."""

from __future__ import annotations

import re
from collections.abc import Sequence
from datetime import datetime

from ..results import RacerOutcome
from .models import DailyChallenge, Race, Result
from .records import DailyChallengeRecord, RaceRecord, RaceStatus, ResultRecord

_TOKEN_HASH = re.compile(r"[0-9a-f]{64}")


def check_token_hash(token_hash: str) -> str:
    # Guards against storing a raw token by mistake: only a sha256 hex digest fits.
    if not _TOKEN_HASH.fullmatch(token_hash):
        raise ValueError("token_hash must be 64 lowercase hex digits (sha256 of the token)")
    return token_hash


def check_time(moment: datetime) -> datetime:
    # Checked here too (the column type also refuses) so callers get a plain ValueError.
    if not isinstance(moment, datetime):
        raise TypeError(f"expected a datetime, got {moment!r}")
    if moment.tzinfo is None or moment.utcoffset() is None:
        raise ValueError(f"naive datetime {moment!r}: pass an aware UTC datetime")
    return moment


def join_move_log(race_id: int, player_id: int, moves: Sequence[str]) -> str:
    for move in moves:
        if "\n" in move or "\r" in move:
            raise ValueError(f"race {race_id}, player {player_id}: a move contains a line break")
    return "\n".join(moves)


def split_move_log(text: str) -> tuple[str, ...]:
    return tuple(text.split("\n")) if text else ()


def join_move_times(times: Sequence[int] | None) -> str | None:
    return None if times is None else ",".join(map(str, times))


def split_move_times(text: str | None) -> tuple[int, ...] | None:
    return None if text is None else tuple(int(t) for t in text.split(",")) if text else ()


def challenge_record(row: DailyChallenge) -> DailyChallengeRecord:
    return DailyChallengeRecord(
        game=row.game, date=row.date, deal_number=row.deal_number, par=row.par,
        par_line=split_move_log(row.par_line) if row.par_line is not None else None,
    )


def race_record(row: Race) -> RaceRecord:
    status: RaceStatus = row.status  # type: ignore[assignment]  # CHECK constraint holds it
    return RaceRecord(
        id=row.id,
        code=row.code,
        game=row.game,
        deal_number=row.deal_number,
        private=row.private,
        created_by=row.created_by,
        created_at=row.created_at,
        started_at=row.started_at,
        finished_at=row.finished_at,
        status=status,
        time_limit_s=row.time_limit_s,
        kind=row.kind,
        daily_date=row.daily_date,
        epoch=row.epoch,
        best_of=row.best_of,
        series_id=row.series_id,
        series_number=row.series_number,
        rematch_code=row.rematch_code,
        ghost=row.ghost,
        live_boards=row.live_boards,
    )


def result_record(row: Result, player_name: str) -> ResultRecord:
    return ResultRecord(
        race_id=row.race_id,
        player_id=row.player_id,
        player_name=player_name,
        outcome=RacerOutcome(row.outcome),
        rank=row.rank,
        time_ms=row.time_ms,
        moves=row.moves,
        home=row.home,
        total=row.total,
        move_log=split_move_log(row.move_log),
        move_times=split_move_times(row.move_times),
        finished_at=row.finished_at,
        held=row.held,
        fair_play=row.fair_play,
        review=row.review,
    )
