"""``solitaire-race review``: the results the fair-play assessment held (``fair_play.py``)
and what an operator decides about each: clear it (onto the boards), confirm it (it stays
off), or ban its player from ranked boards (docs/fair-play.md)."""

from __future__ import annotations

import asyncio
import json
import sys
from datetime import datetime

from .client.terminal_text import safe_text
from .store import HeldResultRecord, NotFound, Store


def main(db_url: str, action: str, race: int | None, player: int | None) -> int:
    try:
        return asyncio.run(_run(db_url, action, race, player))
    except NotFound as exc:  # an unknown race or player, or a result not held: said plainly
        print(f"solitaire-race review: {exc}", file=sys.stderr)
        return 2


async def _run(db_url: str, action: str, race: int | None, player: int | None) -> int:
    store = await Store.open(db_url)
    try:
        if action == "clear" and race is not None and player is not None:
            await store.clear_result(race, player)
            print(f"cleared: player {player}'s result in race {race} is on the boards")
        elif action == "confirm" and race is not None and player is not None:
            await store.confirm_result(race, player)
            print(f"confirmed: player {player}'s result in race {race} stays off the boards")
        elif action == "ban" and player is not None:
            held = await store.ban_player(player)
            print(f"banned player {player} from ranked boards: {held} results held, and every later one")
        else:
            held_results = await store.held_results()
            if not held_results:
                print("no held results to review")
            for result in held_results:
                print(describe(result))
        return 0
    finally:
        await store.close()


def describe(r: HeldResultRecord) -> str:
    """A held result and its evidence, for the operator (names are made safe to print)."""
    found = json.loads(r.fair_play)
    day = f", daily {r.daily_date}" if r.daily_date else ""
    lines = [safe_text(
        f"race {r.race_id} ({r.race_code}{day}) player {r.player_id} {r.player_name}: {r.game}, {r.outcome} "
        f"in {_seconds(r.time_ms)}, {r.moves} moves, finished {_utc(r.finished_at)}"
    )]
    lines += [f"    - {reason}" for reason in found.get("reasons", [])]
    evidence = found.get("evidence") or {}
    if evidence:
        lines.append("    " + ", ".join(f"{key} {value}" for key, value in evidence.items()))
    return "\n".join(lines)


def _seconds(ms: int | None) -> str:
    return "--" if ms is None else f"{ms / 1000:.1f} s"


def _utc(when: datetime) -> str:
    return f"{when:%Y-%m-%d %H:%M} UTC"
