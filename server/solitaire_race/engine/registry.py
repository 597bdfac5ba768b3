"""The registered games, by id. The one place that lists them."""

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
def _games() -> tuple[Game[Any], ...]:
    # Games are stateless rule books (but for their outcome caches): one of each will do.
    return (
        Perseverance(),
        PerseveranceA(),
        Cruel(),
        Clock(),
        Parallels(),
        Patriarchs(),
        PersianPatience(),
    )


def all_games() -> dict[str, Game[Any]]:
    return {g.id: g for g in _games()}


def get_game(game_id: str) -> Game[Any]:
    games = all_games()
    try:
        return games[game_id]
    except KeyError:
        raise KeyError(
            f"unknown game {game_id!r}; known games: {', '.join(sorted(games))}"
        ) from None
