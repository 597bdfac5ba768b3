"""Daily challenges, the pure part: which day it is, which deal a day gets, streaks.

A day is a UTC calendar date; its challenge is announced at 00:00 UTC. The deal number of
(game, date) comes from the server secret, so every process sharing the database (and so
the secret) computes the same one, and nobody can compute tomorrow's without the secret.
"""

from __future__ import annotations

import functools
import hashlib
import hmac
from collections.abc import Iterable
from datetime import UTC, date, datetime, timedelta

DAILY_SCHEME = "solitaire-race/daily/v1"
CANDIDATES = 200  # candidate deals per (game, day); the solver takes the first it proves winnable


def utc_day(moment: datetime) -> date:
    return moment.astimezone(UTC).date()


def daily_deal_number(secret: bytes, game_id: str, day: date, attempt: int = 0) -> int:
    """The ``attempt``-th candidate deal for (game, day): 48 bits of HMAC-SHA256.

    ``attempt`` lets a later rule skip candidates (e.g. unwinnable deals) while staying
    deterministic."""
    label = f"{DAILY_SCHEME}/{game_id}/{day.isoformat()}/{attempt}".encode()
    return int.from_bytes(hmac.new(secret, label, hashlib.sha256).digest()[:6], "big")


@functools.lru_cache(maxsize=32)  # asked at every create_race: today's few sets, each 200 HMACs
def candidate_deals(secret: bytes, game_id: str, day: date) -> frozenset[int]:
    """Every deal that can be (game, day)'s challenge, whichever the solver picks."""
    return frozenset(daily_deal_number(secret, game_id, day, attempt) for attempt in range(CANDIDATES))


def streak(dates: Iterable[str], today: date) -> int:
    """Consecutive days with a ranked daily attempt, ending today (or yesterday: a streak
    is not lost before the day is over)."""
    played = {date.fromisoformat(d) for d in dates}
    day = today if today in played else today - timedelta(days=1)
    count = 0
    while day in played:
        count += 1
        day -= timedelta(days=1)
    return count


def parse_day(text: str) -> date:
    try:
        return date.fromisoformat(text)
    except ValueError:
        raise ValueError(f"not a date: {text[:20]!r} (expected YYYY-MM-DD)") from None
