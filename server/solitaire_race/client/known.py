"""What a player's own view tells about their game, as engine values.

``known_state(view)`` rebuilds an engine state from a view (the ``view`` of a
``race_started`` or ``move_result`` message) without knowing any hidden card: every card
the view does not show (face down in Clock, in the stock, under the waste top) becomes the
placeholder ``UNKNOWN``, a card that fits no foundation and no pile. So:

- in the full-information games (Perseverance, Perseverance A, Cruel, Persian Patience)
  the rebuilt state is the player's position: same view, same moves, same future;
- in every game, ``legal_moves(known_state(view))`` are exactly the player's legal moves
  (hidden cards only matter through their number, which the view gives), and a chain of
  foundation moves played on the rebuilt state is legal in the real one, because a
  placeholder never goes home. ``tests/test_bots.py`` checks both over random games.

The terminal client uses this to expand short move forms, the bots to choose moves. It is
the only place that knows how each view maps back to engine values (``view(known_state(v))
== v`` for every game).
"""

from __future__ import annotations

from typing import Any

from ..engine import Game, Kind, Move, get_game
from ..engine.cards import Card, card, parse_card, rank_of
from ..engine.clock import ClockState
from ..engine.parallels import WIDTH, ParallelsState
from ..engine.patriarchs import PatriarchsState
from ..engine.persian import ORDER, PersianState
from ..engine.perseverance import PerseveranceState
from ..engine.piles import DOWN, UP

# A card nobody can see: rank 15 exists in no game, so it fits no foundation (built up to
# 13 at most, down to 1 at least) and no tableau pile.
UNKNOWN: Card = card(15, 0)

FULL_INFORMATION = frozenset({"perseverance", "perseverance-a", "cruel", "persian-patience"})
PERSEVERANCE_FAMILY = frozenset({"perseverance", "perseverance-a", "cruel"})
TWO_DECK = frozenset({"parallels", "patriarchs"})


def _cards(codes: list[str]) -> tuple[Card, ...]:
    return tuple(parse_card(c) for c in codes)


def _slot(code: str | None) -> Card:
    return 0 if code is None else parse_card(code)


def _two_way(foundations: list[dict[str, Any]]) -> tuple[int, ...]:
    tops = [0] * 8
    for entry in foundations:
        suit = "SHDC".index(entry["suit"])
        side = UP if entry["side"] == "A" else DOWN
        tops[2 * suit + side] = rank_of(parse_card(entry["top"]))
    return tuple(tops)


def known_state(view: dict[str, Any]) -> Any:
    """The engine state the view shows, hidden cards as ``UNKNOWN``."""
    game_id = view["game"]
    if game_id in PERSEVERANCE_FAMILY:
        return PerseveranceState(
            piles=tuple(_cards(p) for p in view["piles"]),
            foundations=tuple(rank_of(parse_card(c)) for c in view["foundations"]),
            redeals=view["redeals_used"],
            # Only Cruel reads this flag, and there a redeal is allowed exactly when it is set
            # (the piles are never all empty while the game goes on).
            homed_since_deal=bool(view["redeal_allowed"]),
        )
    if game_id == "persian-patience":
        heights: list[int] = []
        found = view["foundations"]  # per suit, the higher foundation first
        for s in range(4):
            pair = [0 if c is None else ORDER.index(rank_of(parse_card(c))) + 1 for c in found[2 * s : 2 * s + 2]]
            heights += sorted(pair)
        return PersianState(
            piles=tuple(_cards(p) for p in view["piles"]),
            foundations=tuple(heights),
            redeals=view["redeals_used"],
        )
    if game_id == "parallels":
        slots = tuple(_slot(c) for row in view["rows"] for c in row)
        assert len(slots) % WIDTH == 0
        return ParallelsState(slots, (UNKNOWN,) * view["stock_count"], _two_way(view["foundations"]))
    if game_id == "patriarchs":
        waste: tuple[Card, ...] = ()
        if view["waste_count"]:
            waste = (UNKNOWN,) * (view["waste_count"] - 1) + (parse_card(view["waste_top"]),)
        return PatriarchsState(
            tableau=tuple(_slot(c) for c in view["tableau"]),
            stock=(UNKNOWN,) * view["stock_count"],
            waste=waste,
            foundations=_two_way(view["foundations"]),
            redealt=bool(view["redeal_used"]),
        )
    if game_id == "clock":
        piles = view["piles"]
        return ClockState(
            down=tuple((UNKNOWN,) * p["face_down"] for p in piles),
            up=tuple(_cards(p["face_up"]) for p in piles),
            hand=None if view["hand"] is None else parse_card(view["hand"]),
            exchanged=bool(view["exchange_used"]),
        )
    raise KeyError(f"no known view for game {game_id!r}")


def legal_moves(view: dict[str, Any]) -> list[Move]:
    """The player's legal moves now, read off the view alone."""
    game = get_game(view["game"])
    return game.legal_moves(known_state(view))


def home_chain(view: dict[str, Any], limit: int = 64) -> list[str]:
    """Foundation moves that can be played one after the other from this view, in notation.

    Each step plays the first foundation move of the rebuilt state; a card that only the
    next move would reveal is a placeholder and never goes home, so every move in the
    chain is legal in the real game. Clock has no foundations: always empty there.
    """
    game: Game[Any] = get_game(view["game"])
    if view["game"] == "clock":
        return []
    state = known_state(view)
    chain: list[str] = []
    while len(chain) < limit:
        move = next((m for m in game.legal_moves(state) if m.kind is Kind.HOME), None)
        if move is None:
            break
        chain.append(game.format_move(move))
        state = game.apply(state, move)
    return chain


