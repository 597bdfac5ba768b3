"""Fair-play figures: what the plausibility assessment (``fair_play.py``) makes of play at
known paces, to check its thresholds against (docs/fair-play.md).

    python bench/fair_play.py [--speeds 1,2,4,8,20] [--seconds 30] [--game cruel]

For each speed, two bots (``solitaire-race bot``'s players, one move per message, paced at
that many moves a second) race a private race on a real server (in-process, a SQLite file
in a temporary directory, fair-play holds on) until their games end or the time limit
(``--seconds``, at least 30); then, for each result, whether it was held and the figures it
was judged on: moves, messages, the median gap between messages, the gaps under the
threshold, the largest batch. Loopback only; every race bounded by its time limit.
Nothing is asserted.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import tempfile
from pathlib import Path
from typing import Any

from solitaire_race.app import App
from solitaire_race.bots.runner import run_bots
from solitaire_race.config import Config


async def measure(speeds: list[float], seconds: int, game: str) -> list[dict[str, Any]]:
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        config = Config(port=0, db_url=f"sqlite+aiosqlite:///{tmp}/fair.sqlite3", secret="bench", countdown_s=0.05,
                        daily_solver_nodes=0, new_players_per_hour=0)
        app = await App.start(config)
        try:
            for speed in speeds:
                results = await run_bots(app.ws_url, 2, game=game, speed=speed, prefix=f"p{speed:g}",
                                         time_limit_s=seconds)
                race = await app.store.race_by_code(results[0].code)
                assert race is not None
                for stored in await app.store.race_results(race.id):
                    found = json.loads(stored.fair_play) if stored.fair_play else None
                    evidence = found["evidence"] if found else {}
                    rows.append({"speed": speed, "player": stored.player_name, "outcome": stored.outcome,
                                 "moves": stored.moves, "time_ms": stored.time_ms, "held": stored.held,
                                 "reasons": found["reasons"] if found else [], **evidence})
                    print(f"{speed:>5g} moves/s  {stored.outcome:<9} {stored.moves:>4} moves in "
                          f"{(stored.time_ms or 0) / 1000:6.1f} s, {evidence.get('messages')} messages, median gap "
                          f"{evidence.get('median_gap_ms')} ms, {evidence.get('fast_gaps')} under 120 ms, largest "
                          f"batch {evidence.get('largest_batch')}: held {'yes' if stored.held else 'no'}", flush=True)
        finally:
            await app.stop()
    return rows


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--speeds", default="1,2,4,8,20", help="bot paces, moves per second")
    parser.add_argument("--seconds", type=int, default=30, help="each race's time limit (at least 30)")
    parser.add_argument("--game", default="cruel")
    parser.add_argument("--json", help="write the figures to this file")
    args = parser.parse_args()
    rows = asyncio.run(measure([float(s) for s in args.speeds.split(",")], max(30, args.seconds), args.game))
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
