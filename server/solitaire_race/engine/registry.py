"""The registered games, by id. The one place that lists the built-in games.

``register`` adds another game (an extension's, or a test's): from then on the server, the
clients, the bots and the solver treat it as they treat the built-in ones, from what its
class declares (docs/engine.md, "Adding a game").
"""

from __future__ import annotations

import functools
from typing import Any

from .base import Game
from .clock import Clock
from .cruel import Cruel
from .parallels import Parallels
from .patriarchs import Patriarchs
from .perseverance import Perseverance
from .perseverance_a import PerseveranceA
from .persian import PersianPatience


@functools.cache
def _registered() -> dict[str, Game[Any]]:
    # Games are stateless rule books (but for their outcome caches): one of each will do.
    built_in: tuple[Game[Any], ...] = (
        Perseverance(),
        PerseveranceA(),
        Cruel(),
        Clock(),
        Parallels(),
        Patriarchs(),
        PersianPatience(),
    )
    return {g.id: g for g in built_in}


def register(game: Game[Any]) -> None:
    """Serve ``game`` too; its id must be new."""
    games = _registered()
    if game.id in games:
        raise ValueError(f"a game with id {game.id!r} is already registered")
    games[game.id] = game


def unregister(game_id: str) -> None:
    """Stop serving a game that ``register`` added (tests use it to clean up)."""
    _registered().pop(game_id, None)


def all_games() -> dict[str, Game[Any]]:
    return dict(_registered())


def get_game(game_id: str) -> Game[Any]:
    games = _registered()
    try:
        return games[game_id]
    except KeyError:
        raise KeyError(
            f"unknown game {game_id!r}; known games: {', '.join(sorted(games))}"
        ) from None
