"""The registered games, by id. The one place that lists them."""

from __future__ import annotations

from typing import Any

from .base import Game
from .clock import Clock
from .cruel import Cruel
from .parallels import Parallels
from .patriarchs import Patriarchs
from .perseverance import Perseverance
from .perseverance_a import PerseveranceA
from .persian import PersianPatience


def all_games() -> dict[str, Game[Any]]:
    games: list[Game[Any]] = [
        Perseverance(),
        PerseveranceA(),
        Cruel(),
        Clock(),
        Parallels(),
        Patriarchs(),
        PersianPatience(),
    ]
    return {g.id: g for g in games}


def get_game(game_id: str) -> Game[Any]:
    games = all_games()
    try:
        return games[game_id]
    except KeyError:
        raise KeyError(
            f"unknown game {game_id!r}; known games: {', '.join(sorted(games))}"
        ) from None
