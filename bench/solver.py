"""Solver benchmark: ``python bench/solver.py [--deals N] [--games G ...] [--seconds S] [--nodes N]``.

Solves the first N deals (default 200) of each game with the benchmark secret and prints,
per game: the share won (a line found and replayed through the engine), proven
unwinnable, and unknown (budget spent), the median and 90th-percentile solve time, and the
share decided (won or proven) within the time budget. Each deal gets ``--seconds`` of time
(default 2, the product goal) and ``--nodes`` engine moves (default 5,000,000, so that the
time budget is what binds). The shortening pass is not timed unless ``--shorten``.

Figures are printed, never asserted: the machine is shared and noisy. Run it on an idle
machine for numbers worth comparing; ``--json FILE`` also writes them.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from typing import Any

from solitaire_race.engine import all_games
from solitaire_race.solver import solve

SECRET = b"bench"


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def bench_game(game_id: str, deals: int, seconds: float, nodes: int, shorten: bool) -> dict[str, Any]:
    game = all_games()[game_id]
    counts = {"won": 0, "unwinnable": 0, "unknown": 0}
    times: list[float] = []
    lengths: list[int] = []
    for number in range(deals):
        state = game.deal(number, SECRET)
        result = solve(game, state, node_budget=nodes, time_budget_s=seconds, shorten_budget=100_000 if shorten else 0)
        counts[result.status] += 1
        times.append(result.seconds)
        if result.moves is not None:
            lengths.append(len(result.moves))
    return {
        "game": game_id,
        "deals": deals,
        "won": counts["won"] / deals,
        "unwinnable": counts["unwinnable"] / deals,
        "unknown": counts["unknown"] / deals,
        "decided": (counts["won"] + counts["unwinnable"]) / deals,
        "median_ms": 1000 * statistics.median(times),
        "p90_ms": 1000 * percentile(times, 0.9),
        "mean_line": statistics.mean(lengths) if lengths else None,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--deals", type=int, default=200)
    parser.add_argument("--games", nargs="*", default=sorted(all_games()))
    parser.add_argument("--seconds", type=float, default=2.0, help="time budget per deal (default 2)")
    parser.add_argument("--nodes", type=int, default=5_000_000, help="node budget per deal (default 5,000,000)")
    parser.add_argument("--shorten", action="store_true", help="include the shortening pass in the time")
    parser.add_argument("--json", help="also write the figures to this file")
    args = parser.parse_args()
    print(f"{args.deals} deals per game, {args.seconds:g} s and {args.nodes:,} nodes per deal")
    print(f"{'game':<18} {'won':>6} {'proved':>7} {'unknown':>8} {'median':>9} {'p90':>9} {'decided':>8} {'line':>5}")
    rows = []
    started = time.perf_counter()
    for game_id in args.games:
        row = bench_game(game_id, args.deals, args.seconds, args.nodes, args.shorten)
        rows.append(row)
        line = "--" if row["mean_line"] is None else f"{row['mean_line']:.0f}"
        print(
            f"{game_id:<18} {row['won']:>6.1%} {row['unwinnable']:>7.1%} {row['unknown']:>8.1%} "
            f"{row['median_ms']:>7.1f}ms {row['p90_ms']:>7.0f}ms {row['decided']:>8.1%} {line:>5}",
            flush=True,
        )
    print(f"total {time.perf_counter() - started:.0f} s (won: a line replayed to a win; proved: unwinnable; "
          f"decided: won or proved within the budget; line: mean moves of the lines found)")
    if args.json:
        with open(args.json, "w", encoding="utf-8") as out:
            json.dump(rows, out, indent=2)


if __name__ == "__main__":
    main()
