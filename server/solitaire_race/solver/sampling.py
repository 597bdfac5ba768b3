"""Hidden cards: positions consistent with what a player sees, for hints and bots.

In Clock, Parallels and Patriarchs a player sees only part of the deal: ``Game.from_view``
rebuilds what their view shows, every hidden card a ``cards.UNKNOWN``. ``layouts`` deals
the cards the player has not seen into those places at random: each layout is a whole
position that looks exactly like the player's (its view is the player's view). The solver
may search layouts, never the real position, so whatever it answers from them depends on
the view alone. Choosing by what wins in most layouts is perfect-information Monte Carlo
(Ginsberg's GIB for bridge; Long et al. 2010 on why it works in card games): it assumes
the hidden cards will be known when they matter, which in these games is mostly so, since
a hidden card is seen before it can be played.

A state here is a frozen dataclass whose cards sit in tuples (nested at most once, as
Clock's piles); ``UNKNOWN`` marks a hidden card, and no other field of these games can
equal it (foundation tops are ranks 1-13). ``tests/test_sampling.py`` checks, for every
game with hidden cards, that a layout shows the same view and holds the deck's cards.
"""

from __future__ import annotations

import dataclasses
import functools
import json
import random
from collections import Counter
from collections.abc import Iterator
from typing import Any

from ..engine import Game, get_game
from ..engine.cards import UNKNOWN, Card


@functools.cache
def _every_card(game_id: str) -> Counter[Card]:
    # Every position of a game holds the same cards (the engine's conservation rule), the
    # foundations' starting cards included, which ``Game.deck`` leaves out: any deal tells.
    game = get_game(game_id)
    return Counter(game.all_cards(game.deal(0, b"")))


def unseen(game: Game[Any], known: Any) -> list[Card]:
    """The cards that ``known`` does not show, in a fixed order."""
    shown = Counter(c for c in game.all_cards(known) if c != UNKNOWN)
    return sorted((_every_card(game.id) - shown).elements())


def _filled(value: Any, cards: Iterator[Card]) -> Any:
    if type(value) is tuple:
        return tuple(_filled(v, cards) for v in value)
    return next(cards) if type(value) is int and value == UNKNOWN else value


def layouts(game: Game[Any], known: Any, count: int, rng: random.Random) -> list[Any]:
    """``count`` positions that look like ``known``: its hidden cards dealt at random."""
    hidden = unseen(game, known)
    out = []
    for _ in range(count):
        cards = hidden[:]
        rng.shuffle(cards)
        deal = iter(cards)
        fields = {f.name: _filled(getattr(known, f.name), deal) for f in dataclasses.fields(known)}
        if next(deal, None) is not None:
            raise ValueError("the view hides fewer cards than the deck lacks")
        out.append(dataclasses.replace(known, **fields))
    return out


def seeded(view: dict[str, Any]) -> random.Random:
    """A generator seeded by the view itself: the same view, the same layouts, on every
    run and every machine (a string seed is hashed with SHA-512, not Python's hash)."""
    return random.Random(json.dumps(view, sort_keys=True))
