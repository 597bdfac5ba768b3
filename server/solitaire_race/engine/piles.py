"""Pile rules that more than one game shares, written once.

- Tableau piles are tuples of cards, bottom to top.
- ``SuitFoundations``: one foundation per suit built up from the Ace (Perseverance family).
- ``TwoWayFoundations``: per suit, one foundation up from an Ace and one down from a King,
  with top cards shifting between them when they meet (Parallels, Patriarchs).
- Pile-level helpers for dealing in chunks and replacing piles inside a tuple.
- ``PileNotation``: the move notation of games played between numbered piles.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from .base import IllegalMove, Kind, Move, NotationError
from .cards import ACE, KING, Card, card, code, label, suit_label, suit_of

Pile = tuple[Card, ...]


def replace(piles: tuple[Pile, ...], changes: dict[int, Pile]) -> tuple[Pile, ...]:
    """A copy of ``piles`` with some piles replaced (indices already checked by the caller)."""
    out = list(piles)  # 3x faster than a generator over every pile: this runs on every move
    for i, pile in changes.items():
        out[i] = pile
    return tuple(out)


def deal_in_chunks(cards: Sequence[Card], size: int, piles: int) -> tuple[Pile, ...]:
    """Pile 1 gets the first ``size`` cards (the last of them on top), and so on.

    The result always has ``piles`` entries; unused ones are empty.
    """
    dealt = [tuple(cards[i : i + size]) for i in range(0, len(cards), size)]
    if len(dealt) > piles:
        raise ValueError(f"{len(cards)} cards do not fit {piles} piles of {size}")
    return tuple(dealt) + ((),) * (piles - len(dealt))


def deal_round(cards: Sequence[Card], piles: int) -> tuple[Pile, ...]:
    """One card at a time across the piles, left to right; later cards land on top."""
    return tuple(tuple(cards[i::piles]) for i in range(piles))


def pile_error(number: int) -> IllegalMove:
    return IllegalMove(f"pile {number} is empty")


def pile_at(piles: tuple[Pile, ...], index: int, *, nonempty: bool = True) -> Pile:
    """The pile at a 0-based index, refusing one that does not exist (or is empty)."""
    if not 0 <= index < len(piles):
        raise IllegalMove(f"there is no pile {index + 1} (piles are 1-{len(piles)})")
    pile = piles[index]
    if nonempty and not pile:
        raise pile_error(index + 1)
    return pile


def all_home(state: Any) -> bool:
    """``Game.is_won`` of games whose every card is in a pile or home: no card in a pile.
    The server asks after every move and the solver at every node; ``progress`` would
    count the foundations."""
    return not any(state.piles)


def redeal_rest_source(state: Any) -> tuple[Any, ...]:
    """``Game.view_rest_source`` of games whose other view fields come from the foundations,
    the redeals used and whether any card is left in the piles (Persian Patience, the
    Perseverance family): a build, most moves, leaves it equal."""
    return (state.foundations, state.redeals, any(state.piles))


def top_run(pile: Pile) -> int:
    """Length of the same-suit, descending-by-one run at the top of ``pile``."""
    n = 1
    while n < len(pile) and pile[-n - 1] == pile[-n] + 4:
        n += 1
    return n if pile else 0


class SuitFoundations:
    """Four foundations, one per suit, built up from Ace to King.

    Stored as the top rank per suit (a tuple of four ints), 0 meaning empty.
    """

    @staticmethod
    def accepts(tops: tuple[int, ...], c: Card) -> bool:
        return tops[c & 3] + 1 == c >> 2

    @staticmethod
    def add(tops: tuple[int, ...], c: Card) -> tuple[int, ...]:
        s = c & 3
        return tops[:s] + (tops[s] + 1,) + tops[s + 1 :]

    @staticmethod
    def refuse(tops: tuple[int, ...], c: Card) -> IllegalMove:
        s = suit_of(c)
        if tops[s] >= KING:
            return IllegalMove(f"the {suit_label(s)} foundation is complete")
        return IllegalMove(
            f"{label(c)} cannot go to the foundation: the {suit_label(s)} foundation needs "
            f"{label(card(tops[s] + 1, s))}"
        )

    @staticmethod
    def count(tops: tuple[int, ...]) -> int:
        return sum(tops)

    @staticmethod
    def cards(tops: tuple[int, ...]) -> list[Card]:
        return [card(r, s) for s in range(4) for r in range(1, tops[s] + 1)]


UP, DOWN = 0, 1  # which foundation of a suit: the one started by the Ace, or by the King


class TwoWayFoundations:
    """Per suit, an Ace foundation built up and a King foundation built down.

    Stored as a tuple of 8 ints: ``tops[2 * suit + UP]`` is the up foundation's top rank
    (1 = just its starting Ace) and ``tops[2 * suit + DOWN]`` the down foundation's (13 =
    just its starting King). The starting Ace and King never move.
    """

    START: tuple[int, ...] = (ACE, KING) * 4
    NAMES = ("A", "K")  # in notation: the Ace foundation, the King foundation

    @staticmethod
    def fits(tops: tuple[int, ...], c: Card, side: int) -> bool:
        s2 = 2 * (c & 3)
        if side == UP:
            return tops[s2] + 1 == c >> 2
        return tops[s2 + 1] - 1 == c >> 2

    @staticmethod
    def add(tops: tuple[int, ...], c: Card, side: int) -> tuple[int, ...]:
        i = 2 * (c & 3) + side
        return tops[:i] + (tops[i] + (1 if side == UP else -1),) + tops[i + 1 :]

    @classmethod
    def refuse(cls, tops: tuple[int, ...], c: Card, side: int) -> IllegalMove:
        s = suit_of(c)
        top = tops[2 * s + side]
        name = f"the {suit_label(s)} {'Ace' if side == UP else 'King'} foundation"
        if (side == UP and top >= KING) or (side == DOWN and top <= ACE):
            return IllegalMove(f"{label(c)} cannot go home: {name} is complete")
        needed = card(top + 1 if side == UP else top - 1, s)
        return IllegalMove(f"{label(c)} cannot go to {name}: it needs {label(needed)}")

    @staticmethod
    def meeting(tops: tuple[int, ...], suit: int) -> bool:
        """The two foundations of ``suit`` meet: top cards may shift between them."""
        return tops[2 * suit] + 1 == tops[2 * suit + 1]

    @classmethod
    def shift(cls, tops: tuple[int, ...], suit: int, frm: int) -> tuple[int, ...]:
        """Move the top card of foundation ``frm`` of ``suit`` to the other one."""
        up, down = tops[2 * suit], tops[2 * suit + 1]
        sym = suit_label(suit)
        if not cls.meeting(tops, suit):
            raise IllegalMove(
                f"the {sym} foundations do not meet (Ace foundation at "
                f"{label(card(up, suit))}, King foundation at {label(card(down, suit))})"
            )
        if frm == UP:
            if up == ACE:
                raise IllegalMove(f"the starting A{sym} never moves")
            up, down = up - 1, down - 1
        else:
            if down == KING:
                raise IllegalMove(f"the starting K{sym} never moves")
            up, down = up + 1, down + 1
        i = 2 * suit
        return tops[:i] + (up, down) + tops[i + 2 :]

    @staticmethod
    def count(tops: tuple[int, ...]) -> int:
        return sum(tops[2 * s] + 14 - tops[2 * s + 1] for s in range(4))

    @staticmethod
    def cards(tops: tuple[int, ...]) -> list[Card]:
        out: list[Card] = []
        for s in range(4):
            out += [card(r, s) for r in range(1, tops[2 * s] + 1)]
            out += [card(r, s) for r in range(tops[2 * s + 1], KING + 1)]
        return out

    @staticmethod
    def view(tops: tuple[int, ...]) -> list[dict[str, object]]:
        return [
            {"suit": "SHDC"[s], "side": side_name, "top": code(card(tops[2 * s + side], s))}
            for s in range(4)
            for side, side_name in ((UP, "A"), (DOWN, "K"))
        ]



_PILE_MOVE = re.compile(r"^(\d{1,2})\s*(?:>|-|\s)?\s*(f|\d{1,2})$")
REDEAL = Move(Kind.REDEAL)


class PileNotation:
    """``3>f`` (pile 3 home), ``3>7`` (pile 3 onto pile 7), ``r`` (redeal); piles from 1.

    Also accepted: ``3f``, ``3-7``, ``3 7``, ``redeal``, any case. ``format`` always writes
    the first forms, so ``parse(format(m)) == m``."""

    def __init__(self, game_name: str, piles: int, home: str) -> None:
        self.game_name = game_name
        self.piles = piles
        self.help = f"use e.g. '3>f' (pile 3 to {home}), '3>5' (pile 3 onto pile 5) or 'r' (redeal)"

    def parse(self, text: str) -> Move:
        t = text.strip().lower()
        if t in ("r", "redeal"):
            return REDEAL
        m = _PILE_MOVE.match(t)
        if not m:
            raise NotationError(f"{text!r} is not a {self.game_name} move: {self.help}")
        src = self._pile(int(m.group(1)), text)
        if m.group(2) == "f":
            return Move(Kind.HOME, src)
        return Move(Kind.BUILD, src, self._pile(int(m.group(2)), text))

    def _pile(self, n: int, text: str) -> int:
        if not 1 <= n <= self.piles:
            raise NotationError(f"{text!r}: there is no pile {n} (piles are 1-{self.piles})")
        return n - 1

    def format(self, move: Move) -> str:
        if move.kind is Kind.REDEAL:
            return "r"
        if move.kind is Kind.HOME:
            return f"{move.src + 1}>f"
        if move.kind is Kind.BUILD:
            return f"{move.src + 1}>{move.dst + 1}"
        raise NotationError(f"{self.game_name} has no {move.kind.value} moves")
