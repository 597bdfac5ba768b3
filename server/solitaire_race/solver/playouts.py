"""The models the random playouts run on (``search.Playouts``), and the playout policy.

A playout model owns how a line is extended at random from a position: which edges a
playout may take, with what chances, and how positions along the line are stored so that
a later playout can start again from any of them. ``search.Playouts`` owns the iterated
local search over those lines (where to restart, which line to keep) and knows no model.

- ``EngineModel``, every game's default: the knowledge's ``playout_edges`` and the
  engine's ``apply``; a position is an engine state.
- ``patriarchs_playouts.PatriarchsModel``: the same rules on plain tuples, several times
  faster (Patriarchs spends 90% of its budget in playouts; see that module).

Both count nodes as the search does (each engine move of an edge is one node), and a
winning line is a sequence of engine edges that ``solve`` replays through the engine.
"""

from __future__ import annotations

import random
from typing import Any, Protocol

from ..engine import Game
from .knowledge import Edge, Knowledge
from .two_deck_knowledge import PatriarchsKnowledge

PLAYOUT_HOME = 0.9  # a playout's chance of a move home over the other edges, when it has one


class PlayoutModel(Protocol):
    """How playouts extend a line; positions are the model's own values."""

    def start(self, state: Any) -> Any:
        """The model's position for an engine state."""

    def extend(
        self, position: Any, rng: random.Random, budget: int, line: list[Edge], positions: list[Any]
    ) -> tuple[int, int, bool]:
        """Play at random from ``position`` until won, stuck, or ``budget`` nodes are spent,
        appending each edge to ``line`` and the position it reaches to ``positions``.
        Returns (nodes spent, cards home at the end, won)."""


def playout_edge(know: Knowledge[Any], state: Any, rng: random.Random) -> Edge | None:
    """A playout's next edge from ``state``: a move home with probability ``PLAYOUT_HOME``
    (one of the other edges otherwise, or when there is none), or None: stuck."""
    homes, rest = know.playout_edges(state)
    if homes and (not rest or rng.random() < PLAYOUT_HOME):
        return homes[rng.randrange(len(homes))]
    if len(rest) < 2:
        return rest[0] if rest else None
    return rest[rng.randrange(len(rest))]


class EngineModel:
    """Playouts through the engine: positions are engine states (any game)."""

    def __init__(self, game: Game[Any], know: Knowledge[Any]) -> None:
        self.game = game
        self.know = know

    def start(self, state: Any) -> Any:
        return state

    def extend(
        self, position: Any, rng: random.Random, budget: int, line: list[Edge], positions: list[Any]
    ) -> tuple[int, int, bool]:
        game, know = self.game, self.know
        state = position
        spent = 0
        while spent < budget and not game.is_won(state):
            edge = playout_edge(know, state, rng)
            if edge is None:
                break
            for move in edge:
                state = game.apply(state, move)
            spent += len(edge)
            line.append(edge)
            positions.append(state)
        return spent, game.progress(state).home, game.is_won(state)


def model_for(game: Game[Any], know: Knowledge[Any]) -> PlayoutModel:
    """The fastest faithful model for the game: Patriarchs has its own."""
    if isinstance(know, PatriarchsKnowledge):
        from .patriarchs_playouts import PatriarchsModel  # imports this module's policy

        return PatriarchsModel()
    return EngineModel(game, know)
