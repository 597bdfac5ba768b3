"""Cards as small integers, and their text forms.

A card is an ``int``: ``rank * 4 + suit``, rank 1 (Ace) to 13 (King), suit 0..3 in the
order spades, hearts, diamonds, clubs. Ints keep states hashable and moves cheap; the
encoding makes "next higher card of the same suit" simply ``card + 4``.

Text forms: ``code`` is the compact ASCII form used on the wire and in vectors ("AS",
"TH", "KC"); ``label`` is the human form used in messages ("A♠", "10♥", "K♣").
"""

from __future__ import annotations

from collections.abc import Iterable

Card = int

SUITS = "SHDC"
SUIT_SYMBOLS = "♠♥♦♣"
SUIT_NAMES = ("spades", "hearts", "diamonds", "clubs")
RANKS = "A23456789TJQK"  # index + 1 is the rank
RANK_LABELS = ("A", "2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K")

ACE = 1
KING = 13


def card(rank: int, suit: int) -> Card:
    return rank * 4 + suit


# A card nobody can see (``Game.from_view``): rank 15 exists in no game, so it fits no
# foundation (built up to 13 at most, down to 1 at least) and no tableau pile.
UNKNOWN: Card = card(15, 0)


def rank_of(c: Card) -> int:
    return c >> 2


def suit_of(c: Card) -> int:
    return c & 3


def is_red(c: Card) -> bool:
    return (c & 3) in (1, 2)


def code(c: Card) -> str:
    """ASCII code, e.g. ``"TS"`` for the ten of spades."""
    return RANKS[(c >> 2) - 1] + SUITS[c & 3]


def label(c: Card) -> str:
    """Human label, e.g. ``"10♠"``."""
    return RANK_LABELS[(c >> 2) - 1] + SUIT_SYMBOLS[c & 3]


def suit_label(suit: int) -> str:
    return SUIT_SYMBOLS[suit]


def parse_card(text: str) -> Card:
    """Parse ``"TS"``, ``"10S"``, ``"10♠"`` or ``"ts"``; raise ValueError otherwise."""
    t = text.strip().upper()
    for symbol, letter in zip(SUIT_SYMBOLS, SUITS, strict=True):
        t = t.replace(symbol, letter)
    if t.startswith("10"):
        t = "T" + t[2:]
    if len(t) != 2 or t[0] not in RANKS or t[1] not in SUITS:
        raise ValueError(f"not a card: {text!r} (expected e.g. 'AS', 'TH', '10♥')")
    return card(RANKS.index(t[0]) + 1, SUITS.index(t[1]))


# Every code, by card int: views are built on every move, so this is a lookup, not a format.
_CODES = (None,) * 4 + tuple(RANKS[(c >> 2) - 1] + SUITS[c & 3] for c in range(4, 56))  # no rank 0: None


def codes(cards: Iterable[Card]) -> list[str]:
    return [_CODES[c] for c in cards]  # type: ignore[misc]  # an invalid card raises IndexError


def standard_deck(copies: int = 1, ranks: Iterable[int] = range(1, 14)) -> list[Card]:
    """The unshuffled deck: for each copy, suits in S H D C order, ranks ascending.

    This order is part of the deal definition (see docs/shuffle.md): changing it changes
    every deal.
    """
    rank_list = list(ranks)
    return [card(r, s) for _ in range(copies) for s in range(4) for r in rank_list]
