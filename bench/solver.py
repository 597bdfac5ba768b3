"""Solver benchmark: ``python bench/solver.py [--deals N] [--games G ...] [--seconds S] [--nodes N] [--par K]``.

Solves the first N deals (default 200) of each game with the benchmark secret and prints,
per game: the share won (a line found and replayed through the engine), proven
unwinnable, and unknown (budget spent), the median and 90th-percentile solve time, and the
share decided (won or proven) within the time budget. Each deal gets ``--seconds`` of time
(default 2, the product goal) and ``--nodes`` engine moves (default 5,000,000, so that the
time budget is what binds). The shortening pass is not timed unless ``--shorten``.

``--par K`` (default 10; 0 skips it) then measures how close par is to the shortest line:
for the first K deals of each game that the daily search wins (``DAILY_NODES``), the
winning line is shortened with the daily budget (as the daily planner does) and, from the
same line, with ten times that budget (both lines replayed to a win through the engine, as
a published par is); it prints the mean and the largest gap in moves, and how many of
those pars the daily budget proved the shortest line (the bounded search ran to its end).
``--deals 0`` skips the solve table, for the par gap alone.

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
from solitaire_race.solver import DAILY_BUDGET, DAILY_NODES, solve, verify
from solitaire_race.solver.knowledge import knowledge_for
from solitaire_race.solver.search import search
from solitaire_race.solver.shorten import shorten

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


def par_gap(game_id: str, count: int, factor: int = 10) -> dict[str, Any]:
    """Par at the daily shortening budget against ``factor`` times that budget."""
    game = all_games()[game_id]
    gaps: list[int] = []
    pars: list[int] = []
    proved = 0  # pars proved the shortest line at the daily budget
    for number in range(10 * count):
        if len(gaps) == count:
            break
        state = game.deal(number, SECRET)
        found = search(game, knowledge_for(game), state, node_budget=DAILY_NODES, time_budget_s=None)
        if found.moves is None:
            continue
        par = shorten(game, state, found.moves, DAILY_BUDGET.shorten_nodes)
        longer = shorten(game, state, found.moves, factor * DAILY_BUDGET.shorten_nodes)
        for line in (par.line, longer.line):  # as a published par is: a line that replays to a win
            if not verify(game, state, [game.format_move(m) for m in line]):
                raise SystemExit(f"{game_id} deal {number}: a shortened line does not replay to a win")
        pars.append(len(par.line))
        gaps.append(len(par.line) - len(longer.line))
        proved += par.proved
    return {
        "game": game_id, "deals": len(gaps), "mean_par": statistics.mean(pars) if pars else None,
        "mean_gap": statistics.mean(gaps) if gaps else None, "max_gap": max(gaps, default=None), "proved": proved,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--deals", type=int, default=200, help="deals per game to solve (0: skip, for --par alone)")
    parser.add_argument("--games", nargs="*", default=sorted(all_games()))
    parser.add_argument("--seconds", type=float, default=2.0, help="time budget per deal (default 2)")
    parser.add_argument("--nodes", type=int, default=5_000_000, help="node budget per deal (default 5,000,000)")
    parser.add_argument("--shorten", action="store_true", help="include the shortening pass in the time")
    parser.add_argument("--par", type=int, default=10, help="deals per game for the par gap (0: skip)")
    parser.add_argument("--json", help="also write the figures to this file")
    args = parser.parse_args()
    rows = []
    if args.deals:  # 0: the par gap alone
        print(f"{args.deals} deals per game, {args.seconds:g} s and {args.nodes:,} nodes per deal")
        print(
            f"{'game':<18} {'won':>6} {'proved':>7} {'unknown':>8} {'median':>9} {'p90':>9} {'decided':>8} {'line':>5}"
        )
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
    gaps = []
    if args.par:
        budget = DAILY_BUDGET.shorten_nodes
        print(f"\npar: shortened with {budget:,} nodes (the daily budget) against {10 * budget:,}, {args.par} deals")
        print(f"{'game':<18} {'par':>6} {'mean gap':>9} {'max gap':>8} {'proved':>7}")
        for game_id in args.games:
            gap = par_gap(game_id, args.par)
            gaps.append(gap)
            if gap["deals"]:
                print(
                    f"{game_id:<18} {gap['mean_par']:>6.1f} {gap['mean_gap']:>9.1f} {gap['max_gap']:>8} "
                    f"{gap['proved']:>3}/{gap['deals']}",
                    flush=True,
                )
            else:
                print(f"{game_id:<18} no deal won", flush=True)
    if args.json:
        with open(args.json, "w", encoding="utf-8") as out:
            json.dump({"solve": rows, "par": gaps}, out, indent=2)


if __name__ == "__main__":
    main()
