"""Shared test helpers: a small solver that finds winning lines for real deals, and a daily
deal chooser that holds one game back."""

from __future__ import annotations

import asyncio
import random
from datetime import date
from functools import cache
from typing import Any

from solitaire_race.daily_planner import Chooser, first_candidate
from solitaire_race.engine import Game, Kind, Outcome, get_game
from solitaire_race.engine.base import StuckSearch
from solitaire_race.solver import DailyChoice, budget_for, choose_daily


def held_back_chooser(secret: bytes, gate: asyncio.Event, held: str = "patriarchs", solved: str = "clock") -> Chooser:
    """A fresh server's daily planner: ``held``'s deal is chosen only once ``gate`` is set;
    ``solved``'s by the real solver (milliseconds for Clock), so it has a par; the others'
    are their first candidate."""
    plain = first_candidate(secret)

    async def choose(game_id: str, day: date) -> DailyChoice:
        if game_id == held:
            await gate.wait()
        if game_id == solved:
            return choose_daily(game_id, secret, day, budget_for(SMALL_DAILY_NODES))
        return await plain(game_id, day)

    return choose


def random_playout(game_id: str, secret: bytes, deals: int, steps: int, seed: int) -> list[Any]:
    """Every position along random games of deals 0..deals-1 (a fixed seed: the same each run)."""
    game = get_game(game_id)
    rng = random.Random(seed)
    states = []
    for deal in range(deals):
        state = game.deal(deal, secret)
        for _ in range(steps):
            states.append(state)
            moves = game.legal_moves(state)
            if not moves:
                break
            state = game.apply(state, rng.choice(moves))
    return states


def searched_line(game_id: str, secret: bytes, deal: int, verdict: Outcome) -> list[str]:
    """Moves of a random game of ``deal`` (fixed seeds) into a position that only the stuck
    search decides (``Game.assess`` gives a ``StuckSearch``), and decides ``verdict``."""
    game = get_game(game_id)
    for seed in range(1_000):
        rng, state = random.Random(seed), game.deal(deal, secret)
        line: list[str] = []
        for _ in range(400):
            if isinstance(game.assess(state), StuckSearch) and game.outcome(state) is verdict and line:
                return line
            if game.outcome(state) is not Outcome.PLAYING:
                break
            move = rng.choice(game.legal_moves(state))
            line.append(game.format_move(move))
            state = game.apply(state, move)
    raise AssertionError(f"no {verdict.value} position found by search in deal {deal} of {game_id}")


SMALL_DAILY_NODES = 5_000  # enough for the games the tests solve; keeps the tests quick


def solve(game: Game[Any], state: Any, budget: int = 200_000) -> list[str] | None:
    """Iterative depth-first search with a transposition table, foundation moves first.

    Returns a winning move list in notation, or None if none was found within budget.
    """

    def ordered(s: Any) -> list[Any]:
        return sorted(game.legal_moves(s), key=lambda m: (m.kind is not Kind.HOME, m.kind is Kind.REDEAL))

    if game.is_won(state):
        return []
    seen = {state}
    stack = [(state, iter(ordered(state)))]
    line: list[str] = []
    nodes = 0
    while stack and nodes < budget:
        s, moves = stack[-1]
        move = next(moves, None)
        if move is None:
            stack.pop()
            if line:
                line.pop()
            continue
        nxt = game.apply(s, move)
        if nxt in seen:
            continue
        seen.add(nxt)
        nodes += 1
        line.append(game.format_move(move))
        if game.is_won(nxt):
            return line
        stack.append((nxt, iter(ordered(nxt))))
    return None


@cache
def winnable_deal(game_id: str, secret: bytes, first: int = 0, tries: int = 200) -> tuple[int, tuple[str, ...]]:
    """The first deal number from ``first`` with a winning line the solver finds."""
    game = get_game(game_id)
    for number in range(first, first + tries):
        line = solve(game, game.deal(number, secret), budget=20_000)
        if line is not None:
            state = game.deal(number, secret)
            for text in line:
                state = game.apply(state, game.parse_move(text))
            assert game.outcome(state) is Outcome.WON
            return number, tuple(line)
    raise AssertionError(f"no winnable {game_id} deal found in {tries} tries")
