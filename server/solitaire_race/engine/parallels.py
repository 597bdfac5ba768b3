"""Parallels: rows of ten; a card is free when the slot above or below it is empty.

Owns the tableau of rows, the free-card rule and the stock action (fill every gap, else deal
a new row). The deck, the foundation moves and their notation come from ``two_deck``.

The tableau is a flat tuple of slots, ten per dealt row (``slots[row * 10 + col]``, 0 for an
empty slot): rows never disappear, even when emptied. The stock is a tuple in dealing
order, ``stock[0]`` being the next card to come.

Notation (columns a-j left to right, rows numbered from 1 at the top):
- ``c2>A``  the card in column c, row 2 to its Ace foundation (built up)
- ``c2>K``  the same card to its King foundation (built down)
- ``S:A>K`` the top card of the spades Ace foundation to the spades King foundation;
  ``S:K>A`` the other way (suits S H D C)
- ``s``     the stock action: fill every empty slot, or deal a new row
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from .base import IllegalMove, Kind, Move, NotationError, ShortForms
from .cards import UNKNOWN, Card, codes, label
from .piles import TwoWayFoundations
from .two_deck import STOCK, TwoDeckGame, dealt, foundations_from_view, slot_code, slot_from_code

WIDTH = 10
COLUMNS = "abcdefghij"

_SLOT = re.compile(r"^([a-j])(\d{1,2})$")


@dataclass(frozen=True, slots=True)
class ParallelsState:
    slots: tuple[Card, ...]  # WIDTH per dealt row, top row first; 0 = empty slot
    stock: tuple[Card, ...]  # face down, next card first
    foundations: tuple[int, ...] = TwoWayFoundations.START


def slot_name(i: int) -> str:
    return f"{COLUMNS[i % WIDTH]}{i // WIDTH + 1}"


Row = tuple[Card, ...]  # WIDTH slots


def _row_view(row: Row) -> list[str | None]:
    return [slot_code(c) for c in row]


def is_free(slots: tuple[Card, ...], i: int) -> bool:
    """The slot above or below ``i`` is empty (outside the dealt rows counts as empty)."""
    return i < WIDTH or i + WIDTH >= len(slots) or not slots[i - WIDTH] or not slots[i + WIDTH]


class Parallels(TwoDeckGame[ParallelsState]):
    id = "parallels"
    name = "Parallels"
    summary = (
        "Two decks; rows of ten dealt as you choose; a card is free when the slot above or "
        "below it is empty; Aces build up, Kings down."
    )
    examples = (
        "'c2>A' (column c, row 2 to its Ace foundation), 'c2>K' (to its King foundation), "
        "'S:A>K' (the spades Ace foundation's top card to the spades King foundation) or "
        "'s' (stock: fill the gaps or deal a row)"
    )
    short_forms = ShortForms(source=r"[a-j]\d{1,2}", home="A", builds=False)

    # --- dealing -------------------------------------------------------------------
    def deal_from(self, cards: Sequence[Card]) -> ParallelsState:
        row, stock = dealt(cards, WIDTH)
        return ParallelsState(row, stock)

    # --- TwoDeckGame hooks -----------------------------------------------------------
    def foundations_of(self, state: ParallelsState) -> tuple[int, ...]:
        return state.foundations

    def with_foundations(self, state: ParallelsState, tops: tuple[int, ...]) -> ParallelsState:
        return ParallelsState(state.slots, state.stock, tops)

    def playable(self, state: ParallelsState) -> list[tuple[int, Card]]:
        slots = state.slots
        return [(i, c) for i, c in enumerate(slots) if c and is_free(slots, i)]

    # --- rules ---------------------------------------------------------------------
    def legal_moves(self, state: ParallelsState) -> list[Move]:
        moves = self.home_moves(state) + self.shift_moves(state.foundations)
        if state.stock:
            moves.append(STOCK)
        return moves

    def apply(self, state: ParallelsState, move: Move) -> ParallelsState:
        kind = move.kind
        if kind is Kind.HOME:
            slots, i = state.slots, move.src
            if not 0 <= i < len(slots):
                raise IllegalMove(self._no_slot(i, slots))
            c = slots[i]
            if not c:
                raise IllegalMove(f"slot {slot_name(i)} is empty")
            if not is_free(slots, i):
                raise IllegalMove(
                    f"{label(c)} at {slot_name(i)} is not free: {slot_name(i - WIDTH)} above "
                    f"and {slot_name(i + WIDTH)} below both hold cards"
                )
            tops = self.send_home(state.foundations, c, move.dst)
            return ParallelsState(slots[:i] + (0,) + slots[i + 1 :], state.stock, tops)
        if kind is Kind.SHIFT:
            return self.apply_shift(state, move)
        if kind is Kind.STOCK:
            self.check_bare(move)
            return self._stock(state)
        raise IllegalMove(f"{self.name} has no {kind.value} moves")

    def _stock(self, state: ParallelsState) -> ParallelsState:
        slots, stock = state.slots, state.stock
        if not stock:
            raise IllegalMove("the stock is empty (there is no redeal in Parallels)")
        gaps = [i for i, c in enumerate(slots) if not c]
        if gaps:
            filled = list(slots)
            for i, c in zip(gaps, stock, strict=False):  # top row first, left to right; a short stock leaves gaps
                filled[i] = c
            return ParallelsState(tuple(filled), stock[len(gaps) :], state.foundations)
        row = stock[:WIDTH]
        # A short last row leaves the rest of its slots as empty slots of a dealt row.
        row += (0,) * (WIDTH - len(row))
        return ParallelsState(slots + row, stock[WIDTH:], state.foundations)

    @staticmethod
    def _no_slot(i: int, slots: tuple[Card, ...]) -> str:
        rows = len(slots) // WIDTH
        where = f"slot {slot_name(i)}" if i >= 0 else f"slot {i}"
        return f"there is no {where}: the dealt rows are 1-{rows}, columns a-j"

    # --- views ---------------------------------------------------------------------
    def view_list(self, state: ParallelsState) -> tuple[str, Sequence[Row], Callable[[Row], list[str | None]]]:
        slots = state.slots
        return "rows", [slots[r : r + WIDTH] for r in range(0, len(slots), WIDTH)], _row_view

    def view_rest(self, state: ParallelsState) -> dict[str, Any]:
        slots = state.slots
        return {
            "free": [slot_name(i) for i, c in enumerate(slots) if c and is_free(slots, i)],
            "foundations": TwoWayFoundations.view(state.foundations),
            "stock_count": len(state.stock),
        }

    def from_view(self, view: dict[str, Any]) -> ParallelsState:
        slots = tuple(slot_from_code(c) for row in view["rows"] for c in row)
        return ParallelsState(slots, (UNKNOWN,) * view["stock_count"], foundations_from_view(view["foundations"]))

    def snapshot(self, state: ParallelsState) -> dict[str, Any]:
        return {**self.view(state), "stock": codes(state.stock)}

    def all_cards(self, state: ParallelsState) -> list[Card]:
        return (
            TwoWayFoundations.cards(state.foundations)
            + [c for c in state.slots if c]
            + list(state.stock)
        )

    # --- notation ------------------------------------------------------------------
    def parse_source(self, text: str, whole: str) -> int:
        m = _SLOT.match(text)
        if not m or int(m.group(2)) < 1:
            raise NotationError(
                f"{whole!r}: {text!r} is not a slot: a slot is a column letter a-j and a row "
                "number from 1, e.g. 'c2'"
            )
        return (int(m.group(2)) - 1) * WIDTH + COLUMNS.index(m.group(1))

    def source_name(self, src: int) -> str:
        return slot_name(src)
