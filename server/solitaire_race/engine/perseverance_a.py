"""Perseverance A: Perseverance, but the first deal moves every King to the bottom of its pile.

Redeals are dealt exactly as in Perseverance; only the initial layout differs.
"""

from __future__ import annotations

from collections.abc import Sequence

from .cards import KING, Card
from .perseverance import Perseverance, PerseveranceState


def kings_to_bottom(pile: tuple[Card, ...]) -> tuple[Card, ...]:
    """Kings first (in dealt order), then the other cards in their order."""
    return tuple(c for c in pile if c >> 2 == KING) + tuple(c for c in pile if c >> 2 != KING)


class PerseveranceA(Perseverance):
    id = "perseverance-a"
    name = "Perseverance A"
    summary = "Perseverance with every King moved to the bottom of its pile in the first deal."

    def deal_from(self, cards: Sequence[Card]) -> PerseveranceState:
        state = super().deal_from(cards)
        return PerseveranceState(
            tuple(kings_to_bottom(p) for p in state.piles), state.foundations
        )
