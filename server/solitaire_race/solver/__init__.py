"""The solver: searches a full-information game for a winning line.

Pure, like the engine beside it (no I/O, no asyncio; the clock is read only as a budget
guard), and built on the engine's public interface alone. See ``docs/solver.md``.

- ``solve(game, state, node_budget=..., time_budget_s=...)`` -> ``SolveResult`` (status
  ``won`` with the moves in notation, ``unwinnable`` (proved) or ``unknown``); every
  returned line has been replayed through the engine to a win.
- ``hint(game, state, budget)``: the next move of a winning line (``Hint``); where cards are
  hidden, chosen from the player's view alone over layouts of the hidden cards.
- ``choose_daily(game, secret, day, budget)``: the day's deal, its par and the candidates
  tried (``DailyChoice``); never an unproven deal (``NoProvenDeal``).
- ``verify(game, state, moves)``: does a line replay to a win.

Modules: ``search`` (the game-blind search), ``knowledge`` (per-game facts: keys, safe
moves, dead positions, footprints, scores), ``shorten`` (the shortening pass), ``bounds``
(its lower bounds and free moves per game), ``solve`` (the front door), ``sampling``
(layouts of hidden cards), ``daily`` (choosing daily deals).
"""

from ..daily import CANDIDATES
from .daily import DAILY_BUDGET, DAILY_NODES, NO_PROVEN_DEAL, DailyChoice, NoProvenDeal, budget_for, choose_daily
from .solve import HINT_LAYOUTS, Budget, Hint, SolverError, SolveResult, hint, solve, verify

__all__ = [
    "CANDIDATES",
    "DAILY_BUDGET",
    "DAILY_NODES",
    "HINT_LAYOUTS",
    "NO_PROVEN_DEAL",
    "Budget",
    "DailyChoice",
    "Hint",
    "NoProvenDeal",
    "SolveResult",
    "SolverError",
    "budget_for",
    "choose_daily",
    "hint",
    "solve",
    "verify",
]
