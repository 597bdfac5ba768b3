"""The solver's front door: ``solve``, ``hint`` and ``verify``.

``solve`` runs the search (``search.py``) with the game's knowledge (``knowledge.py``),
shortens a win it finds (``shorten.py``), writes it in the game's notation and replays it
through the engine before returning it: a line that does not replay to a win is never
handed out (``SolverError``, which would be a solver bug).

Only the engine's public interface is used, on whatever state it is given: for Clock,
Parallels and Patriarchs that means the whole state, hidden cards included (fine for
choosing daily deals; a player's hint must not use it, hence ``hint`` answers only for
the games where the player sees every card).
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

from ..engine import Game, ReplayError, get_game, replay
from .knowledge import knowledge_for
from .search import Status, search
from .shorten import shorten

DEFAULT_NODES = 200_000
DEFAULT_SHORTEN_NODES = 100_000


class SolverError(RuntimeError):
    """The search produced a line that the engine does not accept as a win (a bug)."""


@dataclass(frozen=True, slots=True)
class Budget:
    """How much work a solve may do. ``nodes`` (engine moves applied) is reproducible;
    ``seconds`` is a guard only, read with ``time.perf_counter`` (see ``search.py``)."""

    nodes: int = DEFAULT_NODES
    seconds: float | None = None
    shorten_nodes: int = DEFAULT_SHORTEN_NODES


@dataclass(frozen=True, slots=True)
class SolveResult:
    status: Status  # "won" | "unwinnable" | "unknown" (budget spent)
    moves: tuple[str, ...] | None  # the winning line in the game's notation, when won
    nodes: int  # engine moves applied: search plus shortening
    seconds: float  # wall-clock time taken (reported, never used for the answer)

    @property
    def won(self) -> bool:
        return self.status == "won"


def _game(game: Game[Any] | str) -> Game[Any]:
    return get_game(game) if isinstance(game, str) else game


def verify(game: Game[Any] | str, state: Any, moves: tuple[str, ...] | list[str]) -> bool:
    """Whether ``moves`` (notation) replay through the engine from ``state`` to a win."""
    rules = _game(game)
    try:
        end, _ = replay(rules, state, moves)
    except ReplayError:
        return False
    return rules.is_won(end)


def solve(
    game: Game[Any] | str,
    state: Any,
    *,
    node_budget: int = DEFAULT_NODES,
    time_budget_s: float | None = None,
    shorten_budget: int = DEFAULT_SHORTEN_NODES,
) -> SolveResult:
    """Search ``state`` for a winning line.

    ``won`` comes with the (shortened, verified) moves; ``unwinnable`` is a proof that no
    line wins; ``unknown`` means the budget ran out first. ``shorten_budget`` nodes go to
    the shortening pass (0: none).
    """
    rules = _game(game)
    started = time.perf_counter()
    found = search(rules, knowledge_for(rules), state, node_budget=node_budget, time_budget_s=time_budget_s)
    nodes = found.nodes
    texts: tuple[str, ...] | None = None
    if found.status == "won":
        assert found.moves is not None
        line = found.moves
        if shorten_budget > 0:
            line, spent = shorten(rules, state, line, shorten_budget)
            nodes += spent
        texts = tuple(rules.format_move(m) for m in line)
        if not verify(rules, state, texts):
            raise SolverError(f"{rules.id}: the line found does not replay to a win: {' '.join(texts)}")
    return SolveResult(found.status, texts, nodes, time.perf_counter() - started)


def hint(game: Game[Any] | str, state: Any, budget: Budget = Budget(nodes=20_000, shorten_nodes=0)) -> str | None:
    """The next move of a winning line from ``state``, in notation, or None when the solver
    finds none within ``budget`` (the position may be lost, or just hard).

    Only for the games where the player sees every card (Perseverance, Perseverance A,
    Cruel, Persian Patience): elsewhere the solver would use cards the player cannot see,
    so the answer is always None there.
    """
    rules = _game(game)
    if not rules.full_information:
        return None
    result = solve(
        rules, state, node_budget=budget.nodes, time_budget_s=budget.seconds, shorten_budget=budget.shorten_nodes
    )
    if result.moves:
        return result.moves[0]
    return None
