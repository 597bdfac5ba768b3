"""Engine throughput per game, on one core: ``python bench/engine.py [--deals N] [--json FILE]``.

For every game it records random playouts (the states and the moves chosen), then times
over exactly those positions:
- apply/s:        ``apply`` of the chosen move (validation included: apply re-checks it)
- parse+apply/s:  what the server does per move text (notation parsing, then apply)
- legal/s:        ``legal_moves`` generations
- outcome/s:      ``outcome`` (won / stuck / playing), which the server checks after each move
Figures are printed, never asserted: the machine is shared and noisy.
"""

from __future__ import annotations

import argparse
import json
import random
import time
from collections.abc import Callable
from typing import Any

from solitaire_race.engine import Outcome, all_games

SECRET = b"bench"


def record(game: Any, deals: int, max_moves: int = 400) -> list[tuple[Any, Any, str]]:
    positions = []
    for deal in range(deals):
        rng = random.Random(deal)
        state = game.deal(deal, SECRET)
        for _ in range(max_moves):
            if game.outcome(state) is not Outcome.PLAYING:
                break
            move = rng.choice(game.legal_moves(state))
            positions.append((state, move, game.format_move(move)))
            state = game.apply(state, move)
    return positions


def rate(fn: Callable[[], None], count: int, min_seconds: float = 0.3) -> float:
    """Operations per second, repeating ``fn`` (which does ``count`` ops) for a while."""
    loops, start = 0, time.perf_counter()
    while True:
        fn()
        loops += 1
        elapsed = time.perf_counter() - start
        if elapsed >= min_seconds or loops >= 1000:
            return loops * count / elapsed


def bench_game(game: Any, deals: int) -> dict[str, float]:
    positions = record(game, deals)
    apply, parse, legal, outcome = game.apply, game.parse_move, game.legal_moves, game.outcome

    def do_apply() -> None:
        for state, move, _ in positions:
            apply(state, move)

    def do_parse_apply() -> None:
        for state, _, text in positions:
            apply(state, parse(text))

    def do_legal() -> None:
        for state, _, _ in positions:
            legal(state)

    def do_outcome() -> None:
        for state, _, _ in positions:
            outcome(state)

    n = len(positions)
    return {
        "positions": n,
        "apply_per_s": rate(do_apply, n),
        "parse_apply_per_s": rate(do_parse_apply, n),
        "legal_per_s": rate(do_legal, n),
        "outcome_per_s": rate(do_outcome, n),
    }


def main(argv: list[str] | None = None) -> dict[str, dict[str, float]]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--deals", type=int, default=40)
    parser.add_argument("--json", help="also write the figures to this file")
    args = parser.parse_args(argv)
    results: dict[str, dict[str, float]] = {}
    print(f"{'game':<18}{'positions':>10}{'apply/s':>12}{'parse+apply/s':>15}{'legal/s':>12}{'outcome/s':>12}")
    for game in all_games().values():
        r = results[game.id] = bench_game(game, args.deals)
        print(
            f"{game.id:<18}{r['positions']:>10}{r['apply_per_s']:>12,.0f}"
            f"{r['parse_apply_per_s']:>15,.0f}{r['legal_per_s']:>12,.0f}{r['outcome_per_s']:>12,.0f}"
        )
    if args.json:
        with open(args.json, "w", encoding="utf-8") as fh:
            json.dump(results, fh, indent=2)
    return results


if __name__ == "__main__":
    main()
