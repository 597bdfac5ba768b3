"""The solver's front door: ``solve``, ``hint`` and ``verify``.

``solve`` runs the search (``search.py``) with the game's knowledge (``knowledge.py``),
shortens a win it finds (``shorten.py``), writes it in the game's notation and replays it
through the engine before returning it: a line that does not replay to a win is never
handed out (``SolverError``, which would be a solver bug).

Only the engine's public interface is used, on whatever state it is given: for Clock,
Parallels and Patriarchs that means the whole state, hidden cards included (fine for
choosing daily deals). A player's hint must not use what the player cannot see, so in
those games ``hint`` searches layouts of the hidden cards drawn from the player's view
(``sampling.py``) and never the state it is given.
"""

from __future__ import annotations

import time
from collections import Counter
from dataclasses import dataclass
from typing import Any

from ..engine import Game, ReplayError, get_game, replay
from .knowledge import knowledge_for
from .sampling import layouts, seeded
from .search import Status, search
from .shorten import shorten

DEFAULT_NODES = 200_000
DEFAULT_SHORTEN_NODES = 100_000


HINT_LAYOUTS = 6  # layouts of the hidden cards a hint searches, in the games that hide cards


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
    # How the line was shortened, in words (``shorten.Shortened.method``), and whether it is
    # proved the shortest; None and False without a shortening pass.
    shortening: str | None = None
    shortest: bool = False

    @property
    def won(self) -> bool:
        return self.status == "won"


@dataclass(frozen=True, slots=True)
class Hint:
    """A hint: the move (None: no winning line found) and in how many of the positions
    searched it won (``layouts``: 1 where every card is seen)."""

    move: str | None
    wins: int
    layouts: int

    def describe(self) -> str:
        """What the hint is, in words for the player."""
        if self.move is None:
            return "no winning line found from here: the position may be lost, or just hard"
        if self.layouts == 1:
            return "the next move of a winning line"
        return (
            f"the first move of a winning line in {self.wins} of {self.layouts} guesses at the hidden cards "
            "(each a layout of the cards you have not seen)"
        )


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
    shortening: str | None = None
    shortest = False
    if found.status == "won":
        assert found.moves is not None
        line = found.moves
        if shorten_budget > 0:
            short = shorten(rules, state, line, shorten_budget)
            line, shortening, shortest = short.line, short.method, short.proved
            nodes += short.nodes
        texts = tuple(rules.format_move(m) for m in line)
        if not verify(rules, state, texts):
            raise SolverError(f"{rules.id}: the line found does not replay to a win: {' '.join(texts)}")
    return SolveResult(found.status, texts, nodes, time.perf_counter() - started, shortening, shortest)


def hint(game: Game[Any] | str, state: Any, budget: Budget = Budget(nodes=20_000, shorten_nodes=0)) -> Hint:
    """The next move of a winning line from ``state``, in notation, or a ``Hint`` without a
    move when the solver finds none within ``budget`` (the position may be lost, or hard).

    Where the player sees every card (Perseverance, Perseverance A, Cruel, Persian
    Patience) it is the first move of the solver's line. Where cards are hidden (Clock,
    Parallels, Patriarchs) the solver is never given ``state`` itself: only the view the
    player has of it, rebuilt, and ``HINT_LAYOUTS`` layouts of the cards that view hides
    (``sampling.py``), each searched with ``budget``'s nodes and whatever is left of its
    time guard, which all of them share: a layout searched quickly leaves the next more
    time, and a busy machine shortens the last ones, not all of them alike. The hint is the
    first move that wins in most of them: chosen from the view alone, so it cannot tell
    what the player cannot see, and the same view gets the same hint whenever the node
    budget, not the time guard, ends each search.
    """
    rules = _game(game)
    if rules.full_information:
        result = _solve_budgeted(rules, state, budget)
        return Hint(result.moves[0] if result.moves else None, 1 if result.won else 0, 1)
    view = rules.view(state)
    known = rules.from_view(view)  # from here on, only what the player sees
    # Each layout gets the node budget; the time guard, if any, is for all of them.
    deadline = None if budget.seconds is None else time.perf_counter() + budget.seconds
    votes: Counter[str] = Counter()
    for layout in layouts(rules, known, HINT_LAYOUTS, seeded(view)):
        left = None if deadline is None else deadline - time.perf_counter()
        if left is not None and left <= 0:
            break  # the time guard is spent: the layouts searched so far decide
        result = _solve_budgeted(rules, layout, Budget(budget.nodes, left, budget.shorten_nodes))
        if result.moves:
            votes[result.moves[0]] += 1
    if not votes:
        return Hint(None, 0, HINT_LAYOUTS)
    move, wins = votes.most_common(1)[0]  # ties: the move of the earliest layout won
    return Hint(move, wins, HINT_LAYOUTS)


def _solve_budgeted(rules: Game[Any], state: Any, budget: Budget) -> SolveResult:
    return solve(
        rules, state, node_budget=budget.nodes, time_budget_s=budget.seconds, shorten_budget=budget.shorten_nodes
    )
