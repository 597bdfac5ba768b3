"""Facts about one pile of a Perseverance-family or Persian Patience position, read by the
knowledge (``knowledge.py``): how many of its cards lie above a lower card of their suit
and how deep each card lies (scores), and whether one of them can never leave (a proof of loss; see
``buried_for_good``)."""

from __future__ import annotations

import functools
from typing import Any

from ..engine.cards import KING


@functools.lru_cache(maxsize=1 << 16)  # a move changes one or two piles: most are seen before
def blockers(pile: tuple[int, ...], height: Any = None) -> int:
    """How many cards of the pile lie above a lower card of their suit (they must move
    away before that card can go home). ``height`` maps a rank to its place in the
    foundation order (identity by default)."""
    count = 0
    lowest = [99, 99, 99, 99]
    for c in pile:
        h = c >> 2 if height is None else height[c >> 2]
        s = c & 3
        if lowest[s] < h:
            count += 1
        elif h < lowest[s]:
            lowest[s] = h
    return count


@functools.lru_cache(maxsize=1 << 16)
def depths(pile: tuple[int, ...]) -> dict[int, int]:
    """Per card in the pile, how many cards lie on it (the shallower copy's, for a card that
    is there twice)."""
    found: dict[int, int] = {}
    top = len(pile) - 1
    for i, c in enumerate(pile):
        found[c] = top - i  # later (higher) copies overwrite: they are shallower
    return found


def buried_for_good(pile: tuple[int, ...]) -> bool:
    """Without a redeal, some card of this pile can never go home.

    A card y above a lower card x of its suit must leave the pile before x can go home, and
    it cannot go home before x. It can only leave with the unit that moves onto the card
    one above the unit's bottom card b, where b is the bottom of the same-suit run that
    holds y (a higher bottom would have its target right below it, in this pile). If b is
    a King (nothing is one above it), or b's target lies below b in this pile (it cannot be
    uncovered while b is there), y never leaves, so x never goes home.
    """
    for j in range(len(pile) - 1, 0, -1):
        y = pile[j]
        k = j
        while k > 0 and pile[k - 1] == pile[k] + 4:
            k -= 1
        b = pile[k]
        below = pile[:k]
        if (b >> 2 == KING or b + 4 in below) and any(c & 3 == y & 3 and c < y for c in below):
            return True
    return False


def stuck_single(pile: tuple[int, ...]) -> bool:
    """Where only single cards move (Cruel) and the pile keeps these cards together for
    good: some card of it can never go home.

    A card y above a lower card x of its suit must leave the pile before x can go home, and
    cannot go home itself first; a single card leaves only for the foundation or onto its
    successor y + 4. If y is a King, or y + 4 lies below y in this pile (it cannot be a top
    card while y is above it), y never leaves, so x never goes home. (``buried_for_good``
    asks this of the bottom of y's run, which moves as a unit where runs move; with single
    cards y itself must move, so this finds every burial that one finds, and more.)
    """
    for j in range(len(pile) - 1, 0, -1):
        y = pile[j]
        below = pile[:j]
        if (y >> 2 == KING or y + 4 in below) and any(c & 3 == y & 3 and c < y for c in below):
            return True
    return False
