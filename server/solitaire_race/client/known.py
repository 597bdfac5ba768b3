"""What a player's own view tells about their game, as engine values.

``known_state(view)`` is the engine state the view shows, every hidden card a placeholder
(``Game.from_view``, which each game implements for its own view). So in every game the
legal moves of the rebuilt state are exactly the player's, and a chain of foundation
moves played on it is legal in the real game, because a placeholder never goes home
(``tests/test_bots.py`` checks both over random games). The terminal client uses this to
expand short move forms, the bots to choose moves.
"""

from __future__ import annotations

from typing import Any

from ..engine import Game, Kind, Move, get_game


def known_state(view: dict[str, Any]) -> Any:
    """The engine state the view shows, hidden cards as ``cards.UNKNOWN``."""
    return get_game(view["game"]).from_view(view)


def legal_moves(view: dict[str, Any]) -> list[Move]:
    """The player's legal moves now, read off the view alone."""
    return get_game(view["game"]).legal_moves(known_state(view))


def home_chain(view: dict[str, Any], limit: int = 64) -> list[str]:
    """Foundation moves that can be played one after the other from this view, in notation.

    Each step plays the first foundation move of the rebuilt state; a card that only the
    next move would reveal is a placeholder and never goes home, so every move in the
    chain is legal in the real game. Empty in a game without foundation moves (Clock).
    """
    game: Game[Any] = get_game(view["game"])
    state = known_state(view)
    chain: list[str] = []
    while len(chain) < limit:
        move = next((m for m in game.legal_moves(state) if m.kind is Kind.HOME), None)
        if move is None:
            break
        chain.append(game.format_move(move))
        state = game.apply(state, move)
    return chain
