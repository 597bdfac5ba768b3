"""Choosing a day's deal: the first candidate the solver proves winnable, and its par.

``daily.daily_deal_number(secret, game, day, attempt)`` gives a deterministic sequence of
candidate deals per (game, day). ``choose_daily`` walks it from attempt 0 and returns the
first candidate the solver wins within the budget, with its par: the length of the
shortest winning line found (after the shortening pass; an upper bound on the true
shortest, which is not computed), and how many candidates it tried. An unproven deal is
never chosen: after ``CANDIDATES`` candidates without a win it raises ``NoProvenDeal``
(the planner then logs it and tries again later; with every game's solver measured,
``bench/solver.py``, that takes a run of hundreds of losses in a row).

Determinism: with ``Budget.seconds`` left at None the answer depends only on the secret,
the game, the day and the node budget, so every server process computes the same one.
A time guard makes it depend on the machine's speed when it binds (documented in
``search.py``); the server stores the chosen deal, so even then all processes agree.

``python -m solitaire_race.solver.daily`` is the server's worker process (see
``daily_planner.py``): one JSON request on stdin, one JSON answer on stdout.
"""

from __future__ import annotations

import json
import os
import sys
from dataclasses import dataclass
from datetime import date

from ..daily import CANDIDATES, daily_deal_number
from ..engine import get_game
from .solve import Budget, solve

DAILY_NODES = 100_000
NO_PROVEN_DEAL = 3  # the worker's exit status when no candidate was proved winnable


def budget_for(nodes: int) -> Budget:
    """The daily budget scaled to ``nodes`` search nodes (the shortening pass gets twice as many)."""
    return Budget(nodes=nodes, seconds=None, shorten_nodes=2 * nodes)


DAILY_BUDGET = budget_for(DAILY_NODES)


@dataclass(frozen=True, slots=True)
class DailyChoice:
    """A day's deal for one game: its number, its par (None only without a solver) and how
    many candidates were tried to find it, itself included; the line par counts, and how
    par was found (``par_method``: the shortening's method and budget, or whether it was
    proved the shortest line; the planner logs it)."""

    deal: int
    par: int | None
    candidates: int
    line: tuple[str, ...] | None = None
    par_method: str | None = None


class NoProvenDeal(RuntimeError):
    """No candidate of the day was proved winnable within the budget."""


def choose_daily(game: str, secret: bytes, day: date, budget: Budget = DAILY_BUDGET) -> DailyChoice:
    """``game``'s challenge on ``day`` (see the module doc)."""
    rules = get_game(game)
    for attempt in range(CANDIDATES):
        number = daily_deal_number(secret, game, day, attempt)
        result = solve(
            rules,
            rules.deal(number, secret),
            node_budget=budget.nodes,
            time_budget_s=budget.seconds,
            shorten_budget=budget.shorten_nodes,
        )
        if result.moves is not None:
            return DailyChoice(number, len(result.moves), attempt + 1, tuple(result.moves), result.shortening)
    raise NoProvenDeal(
        f"no {game} candidate of {day} was proved winnable ({CANDIDATES} tried, {budget.nodes} nodes each)"
    )


def main() -> None:
    """Worker: read ``{"game", "secret" (hex), "day", "nodes"}``, print ``{"deal", "par",
    "candidates", "line", "par_method"}``; exit with ``NO_PROVEN_DEAL`` (and the reason on stderr) if none is."""
    # Players come first: the server's event loop shares these cores with this search.
    os.nice(10)
    request = json.load(sys.stdin)
    try:
        choice = choose_daily(
            request["game"], bytes.fromhex(request["secret"]), date.fromisoformat(request["day"]),
            budget_for(request["nodes"]),
        )
    except NoProvenDeal as exc:
        print(exc, file=sys.stderr)
        sys.exit(NO_PROVEN_DEAL)
    json.dump(
        {
            "deal": choice.deal, "par": choice.par, "candidates": choice.candidates, "line": choice.line,
            "par_method": choice.par_method,
        },
        sys.stdout,
    )


if __name__ == "__main__":
    main()
