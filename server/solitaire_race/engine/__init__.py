"""The pure rules engine: cards, the keyed shuffle, and one module per game.

No asyncio, no I/O, no database here: everything is a function of its inputs, so the
server, the tests, the solver and the clients can all trust the same rules.
"""

from .base import (
    Game,
    IllegalMove,
    Kind,
    Move,
    NotationError,
    Outcome,
    Progress,
    ReplayError,
    ShortForms,
    replay,
)
from .registry import all_games, get_game, register, unregister

__all__ = [
    "Game",
    "IllegalMove",
    "Kind",
    "Move",
    "NotationError",
    "Outcome",
    "Progress",
    "ReplayError",
    "ShortForms",
    "all_games",
    "get_game",
    "register",
    "replay",
    "unregister",
]
