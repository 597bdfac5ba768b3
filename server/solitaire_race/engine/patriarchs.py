"""Patriarchs: a 3 by 3 tableau kept full from the waste and stock, and one redeal.

Owns the tableau, its automatic refill, the stock and waste, and the redeal. The deck, the
foundation moves and their notation come from ``two_deck``.

The tableau is a tuple of nine slots, row by row (slot 1 top left, slot 9 bottom right),
0 for an empty slot. The stock is a tuple in dealing order, ``stock[0]`` being the next
card to turn; the waste is a tuple bottom to top, ``waste[-1]`` its top card. A redeal
turns the waste over, so the new stock is the waste tuple unchanged: the first card put on
the waste is the first to come again.

Notation (``Move.src`` is the slot number minus one, 9 for the waste):
- ``5>A``   the card in slot 5 to its Ace foundation (built up); ``5>K`` to its King
  foundation (built down)
- ``w>K``   the top waste card to its King foundation (``w>A`` likewise)
- ``S:A>K`` the top card of the spades Ace foundation to the spades King foundation;
  ``S:K>A`` the other way (suits S H D C)
- ``s``     turn the top stock card onto the waste
- ``r``     the one redeal
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from .base import IllegalMove, Kind, Move, NotationError, ShortForms
from .cards import UNKNOWN, Card, code, codes, parse_card
from .piles import TwoWayFoundations
from .two_deck import STOCK, TwoDeckGame, dealt, foundations_from_view, slot_code, slot_from_code

SLOTS = 9
WASTE = 9  # Move.src of the waste
REDEAL = Move(Kind.REDEAL)


@dataclass(frozen=True, slots=True)
class PatriarchsState:
    tableau: tuple[Card, ...]  # 9 slots row by row; 0 = empty (only once stock and waste are)
    stock: tuple[Card, ...]  # face down, next card first
    waste: tuple[Card, ...] = ()  # bottom to top
    foundations: tuple[int, ...] = TwoWayFoundations.START
    redealt: bool = False


class Patriarchs(TwoDeckGame[PatriarchsState]):
    id = "patriarchs"
    name = "Patriarchs"
    summary = (
        "Two decks; a 3 by 3 tableau refilled from the waste or stock; Aces build up, Kings "
        "down; one redeal."
    )
    examples = (
        "'5>A' (slot 5 to its Ace foundation), 'w>K' (the waste card to its King "
        "foundation), 'S:A>K' (the spades Ace foundation's top card to the spades King "
        "foundation), 's' (turn a stock card) or 'r' (redeal)"
    )
    short_forms = ShortForms(source=r"[1-9w]", home="A", builds=False)

    # --- dealing -------------------------------------------------------------------
    def deal_from(self, cards: Sequence[Card]) -> PatriarchsState:
        tableau, stock = dealt(cards, SLOTS)
        return PatriarchsState(tableau, stock)

    # --- TwoDeckGame hooks -----------------------------------------------------------
    def foundations_of(self, state: PatriarchsState) -> tuple[int, ...]:
        return state.foundations

    def with_foundations(self, state: PatriarchsState, tops: tuple[int, ...]) -> PatriarchsState:
        return PatriarchsState(state.tableau, state.stock, state.waste, tops, state.redealt)

    def playable(self, state: PatriarchsState) -> list[tuple[int, Card]]:
        out = [(i, c) for i, c in enumerate(state.tableau) if c]
        if state.waste:
            out.append((WASTE, state.waste[-1]))
        return out

    # --- rules ---------------------------------------------------------------------
    @staticmethod
    def may_redeal(state: PatriarchsState) -> bool:
        return not state.redealt and not state.stock and bool(state.waste)

    def legal_moves(self, state: PatriarchsState) -> list[Move]:
        moves = self.home_moves(state) + self.shift_moves(state.foundations)
        if state.stock:
            moves.append(STOCK)
        if self.may_redeal(state):
            moves.append(REDEAL)
        return moves

    def apply(self, state: PatriarchsState, move: Move) -> PatriarchsState:
        kind = move.kind
        if kind is Kind.HOME:
            return self._home(state, move.src, move.dst)
        if kind is Kind.SHIFT:
            return self.apply_shift(state, move)
        if kind is Kind.STOCK:
            self.check_bare(move)
            if not state.stock:
                raise IllegalMove(self._empty_stock(state))
            return PatriarchsState(
                state.tableau,
                state.stock[1:],
                state.waste + state.stock[:1],
                state.foundations,
                state.redealt,
            )
        if kind is Kind.REDEAL:
            self.check_bare(move)
            if state.redealt:
                raise IllegalMove("the one redeal is already used")
            if state.stock:
                n = len(state.stock)
                raise IllegalMove(
                    f"a redeal is only allowed once the stock is empty ({n} "
                    f"card{'' if n == 1 else 's'} left)"
                )
            if not state.waste:
                raise IllegalMove("the waste is empty: there is nothing to redeal")
            # Turning the waste over makes its bottom card the next one to come.
            return PatriarchsState(state.tableau, state.waste, (), state.foundations, True)
        raise IllegalMove(f"{self.name} has no {kind.value} moves")

    def _home(self, state: PatriarchsState, src: int, side: int) -> PatriarchsState:
        tableau, stock, waste = state.tableau, state.stock, state.waste
        if src == WASTE:
            if not waste:
                raise IllegalMove("the waste is empty")
            tops = self.send_home(state.foundations, waste[-1], side)
            return PatriarchsState(tableau, stock, waste[:-1], tops, state.redealt)
        if not 0 <= src < SLOTS:
            raise IllegalMove(f"there is no slot {src + 1} (slots are 1-{SLOTS}, w the waste)")
        c = tableau[src]
        if not c:
            raise IllegalMove(f"slot {src + 1} is empty")
        tops = self.send_home(state.foundations, c, side)
        # The vacancy is filled within the same move: waste top first, else the stock.
        if waste:
            fill, waste = waste[-1], waste[:-1]
        elif stock:
            fill, stock = stock[0], stock[1:]
        else:
            fill = 0
        return PatriarchsState(
            tableau[:src] + (fill,) + tableau[src + 1 :], stock, waste, tops, state.redealt
        )

    @staticmethod
    def _empty_stock(state: PatriarchsState) -> str:
        if state.redealt:
            return "the stock is empty and the one redeal is used"
        if state.waste:
            return "the stock is empty: redeal with 'r' to turn the waste over"
        return "the stock and the waste are both empty"

    # --- views ---------------------------------------------------------------------
    def view_list(self, state: PatriarchsState) -> tuple[str, Sequence[Card], Callable[[Card], str | None]]:
        return "tableau", state.tableau, slot_code

    def view_rest(self, state: PatriarchsState) -> dict[str, Any]:
        waste = state.waste
        return {
            "waste_top": code(waste[-1]) if waste else None,
            "waste_count": len(waste),
            "stock_count": len(state.stock),
            "foundations": TwoWayFoundations.view(state.foundations),
            "redeal_used": state.redealt,
            "redeal_allowed": self.may_redeal(state),
        }

    def from_view(self, view: dict[str, Any]) -> PatriarchsState:
        waste: tuple[Card, ...] = ()
        if view["waste_count"]:
            waste = (UNKNOWN,) * (view["waste_count"] - 1) + (parse_card(view["waste_top"]),)
        return PatriarchsState(
            tableau=tuple(slot_from_code(c) for c in view["tableau"]),
            stock=(UNKNOWN,) * view["stock_count"],
            waste=waste,
            foundations=foundations_from_view(view["foundations"]),
            redealt=bool(view["redeal_used"]),
        )

    def snapshot(self, state: PatriarchsState) -> dict[str, Any]:
        return {**self.view(state), "waste": codes(state.waste), "stock": codes(state.stock)}

    def all_cards(self, state: PatriarchsState) -> list[Card]:
        return (
            TwoWayFoundations.cards(state.foundations)
            + [c for c in state.tableau if c]
            + list(state.waste)
            + list(state.stock)
        )

    # --- notation ------------------------------------------------------------------
    def parse_other(self, t: str) -> Move | None:
        return REDEAL if t in ("r", "redeal") else None

    def format_other(self, move: Move) -> str | None:
        return "r" if move.kind is Kind.REDEAL else None

    def parse_source(self, text: str, whole: str) -> int:
        if text == "w":
            return WASTE
        if len(text) == 1 and "1" <= text <= "9":
            return int(text) - 1
        raise NotationError(
            f"{whole!r}: {text!r} is not a card source: use a slot 1-{SLOTS} (row by row) "
            "or w (the waste)"
        )

    def source_name(self, src: int) -> str:
        return "w" if src == WASTE else str(src + 1)
