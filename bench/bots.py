"""Bots against the solver: ``python bench/bots.py [--deals N] [--games G ...] [--seconds S]``.

For each game (by default the three that hide cards: Clock, Parallels, Patriarchs) and
each of the first N deals (default 20, benchmark secret), three players:

- the **solver**, which sees the whole deal, hidden cards included (``solve`` with
  ``--seconds`` per deal): an upper bound on what any player can win;
- the **bot** (``bots.Policy`` as the bot runner plays), which sees only its own view,
  move by move, as over the wire;
- the bot **with layouts** (``Policy(hidden_solve_calls=--layout-calls)``): where cards
  are hidden it plans on layouts of them (``solver.sampling``) and plans again when the
  game shows something else.

Prints, per game, the share of deals each won and the bots' median seconds per game.
Nothing is asserted: the figures go in docs/solver.md. ``--json FILE`` also writes them.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from typing import Any

from solitaire_race.bots.policy import Policy
from solitaire_race.engine import Outcome, get_game
from solitaire_race.solver import solve

SECRET = b"bench"
HIDDEN = ["clock", "parallels", "patriarchs"]
MAX_MOVES = 3000


def bot_game(game_id: str, number: int, options: dict[str, Any]) -> tuple[bool, float]:
    """(won, seconds) of the bot on one deal, from its views alone."""
    game = get_game(game_id)
    state = game.deal(number, SECRET)
    policy = Policy(game_id, seed=number, **options)
    started = time.perf_counter()
    for _ in range(MAX_MOVES):
        if game.outcome(state) is not Outcome.PLAYING:
            break
        text = policy.choose(game.view(state))
        if text is None:
            break
        state = game.apply(state, game.parse_move(text))
    return game.is_won(state), time.perf_counter() - started


def bench_game(game_id: str, deals: int, seconds: float, layout_calls: int) -> dict[str, Any]:
    game = get_game(game_id)
    won = {"solver": 0, "bot": 0, "layouts": 0}
    times: dict[str, list[float]] = {"bot": [], "layouts": []}
    for number in range(deals):
        state = game.deal(number, SECRET)
        won["solver"] += solve(game, state, node_budget=5_000_000, time_budget_s=seconds, shorten_budget=0).won
        for name, options in (("bot", {}), ("layouts", {"hidden_solve_calls": layout_calls})):
            result, spent = bot_game(game_id, number, options)
            won[name] += result
            times[name].append(spent)
    return {
        "game": game_id, "deals": deals, **{f"{k}_won": v / deals for k, v in won.items()},
        **{f"{k}_median_s": statistics.median(v) for k, v in times.items()},
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--deals", type=int, default=20)
    parser.add_argument("--games", nargs="*", default=HIDDEN)
    parser.add_argument("--seconds", type=float, default=2.0, help="the solver's time per deal (default 2)")
    parser.add_argument("--layout-calls", type=int, default=60, help="solver calls a game for the bot with layouts")
    parser.add_argument("--json", help="also write the figures to this file")
    args = parser.parse_args()
    print(f"{args.deals} deals per game; the solver sees every card ({args.seconds:g} s a deal), the bots their views")
    print(f"{'game':<12} {'solver':>7} {'bot':>6} {'(s/game)':>9} {'with layouts':>13} {'(s/game)':>9}")
    rows = []
    for game_id in args.games:
        row = bench_game(game_id, args.deals, args.seconds, args.layout_calls)
        rows.append(row)
        print(
            f"{game_id:<12} {row['solver_won']:>7.0%} {row['bot_won']:>6.0%} {row['bot_median_s']:>8.2f}s "
            f"{row['layouts_won']:>13.0%} {row['layouts_median_s']:>8.2f}s",
            flush=True,
        )
    if args.json:
        with open(args.json, "w", encoding="utf-8") as out:
            json.dump(rows, out, indent=2)


if __name__ == "__main__":
    main()
