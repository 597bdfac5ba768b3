"""Persian Patience: 64 cards (no 2s to 6s) in eight open piles, built down in alternating
colours, single cards only, two redeals.

The rank order is A, 7, 8, 9, 10, J, Q, K: the Ace sits just below the 7, so an Ace may go
on a 7 and a 7 on an 8, ... a Q on a K; a King goes on nothing but an empty pile. An empty
pile takes any single card. Eight foundations, two per suit, are built up in that order.

This module owns the rank order, the paired foundations (stored canonically, see
``PersianState``), building, the redeal (piles gathered left to right, each from its top
card down, then dealt one card at a time across the eight piles) and the shuttle rule (a
lone card moved into an empty pile opens nothing).

Notation (piles numbered 1-8):
- ``3>f``  the top card of pile 3 to a foundation of its suit (``3f`` is accepted too)
- ``3>5``  the top card of pile 3 onto pile 5
- ``r``    redeal
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from .base import Game, IllegalMove, Kind, Move, Progress, ShortForms, require_unused
from .cards import (
    ACE,
    KING,
    RANK_LABELS,
    Card,
    card,
    code,
    codes,
    is_red,
    label,
    parse_card,
    rank_of,
    standard_deck,
    suit_label,
)
from .piles import REDEAL, Pile, PileNotation, all_home, deal_round, pile_at, redeal_rest_source, replace

PILES = 8
MAX_REDEALS = 2
ORDER: tuple[int, ...] = (ACE, 7, 8, 9, 10, 11, 12, KING)  # foundation order, low to high
TOTAL = 64

# Indexed by rank: a foundation's height once this card is on it (A = 1 ... K = 8), 0 for
# the stripped ranks; and the rank a card builds onto (0 for the King: only empty piles).
_HEIGHT: tuple[int, ...] = tuple(ORDER.index(r) + 1 if r in ORDER else 0 for r in range(14))
_NEXT_UP: tuple[int, ...] = tuple(
    ORDER[ORDER.index(r) + 1] if r in ORDER and r != KING else 0 for r in range(14)
)


@dataclass(frozen=True, slots=True)
class PersianState:
    piles: tuple[Pile, ...]  # 8 piles, bottom to top
    # Per suit s, the heights of its two foundations at [2s] and [2s + 1], smaller first:
    # which of two same-suit foundations got a card does not matter, so equal positions
    # are equal states. Height h means the first h ranks of ORDER are on it (0 = empty).
    foundations: tuple[int, ...] = (0,) * 8
    redeals: int = 0  # redeals used




def _home(found: tuple[int, ...], c: Card) -> tuple[int, ...] | None:
    """The foundations with ``c`` added, or None when neither foundation of its suit fits."""
    i = 2 * (c & 3)
    h = _HEIGHT[c >> 2]
    lo, hi = found[i], found[i + 1]
    if lo + 1 == h:
        lo = h
        if lo > hi:
            lo, hi = hi, lo
    elif hi + 1 == h:
        hi = h
    else:
        return None
    return found[:i] + (lo, hi) + found[i + 2 :]


def _homes(found: tuple[int, ...], c: Card) -> bool:
    """Whether ``c`` can go home now (``_home`` is not None), without making the tuple."""
    i, h = 2 * (c & 3), _HEIGHT[c >> 2] - 1
    return found[i] == h or found[i + 1] == h


def _fits(c: Card, onto: Card) -> bool:
    return _NEXT_UP[c >> 2] == onto >> 2 and is_red(c) != is_red(onto)


# Made once, because legal moves are listed for every position the stuck search visits:
# per card, the cards it may be built onto; and the moves themselves (immutable values).
_ONTO: tuple[frozenset[Card], ...] = tuple(
    frozenset(o for o in range(4, 56) if _fits(c, o)) if c >= 4 else frozenset() for c in range(56)
)
# Per suit, the code of a foundation's top card by its height (None for an empty one).
_TOP_CODES: tuple[tuple[str | None, ...], ...] = tuple(
    (None, *(code(card(r, s)) for r in ORDER)) for s in range(4)
)
_HOME_MOVES: tuple[Move, ...] = tuple(Move(Kind.HOME, i) for i in range(PILES))
_BUILD_MOVES: tuple[tuple[Move, ...], ...] = tuple(
    tuple(Move(Kind.BUILD, i, j) for j in range(PILES)) for i in range(PILES)
)


def gather(piles: Sequence[Pile]) -> list[Card]:
    """The redeal pick-up: piles left to right, each from its top card to its bottom card."""
    return [c for pile in piles for c in reversed(pile)]


class PersianPatience(Game[PersianState]):
    id = "persian-patience"
    name = "Persian Patience"
    summary = (
        "64 cards without 2s to 6s in 8 open piles; build down in alternate colours; "
        "two redeals."
    )
    productive_test_is_exact = True  # a home move or a redeal: both checked in full
    full_information = True
    short_forms = ShortForms(source=r"[1-8]", home="f", builds=True)

    # --- dealing -------------------------------------------------------------------
    def deck(self) -> list[Card]:
        return standard_deck(copies=2, ranks=ORDER)

    def deal_from(self, cards: Sequence[Card]) -> PersianState:
        return PersianState(piles=deal_round(cards, PILES))

    # --- rules ---------------------------------------------------------------------
    def legal_moves(self, state: PersianState) -> list[Move]:
        piles, found = state.piles, state.foundations
        tops = [pile[-1] if pile else 0 for pile in piles]  # 0: an empty pile
        moves = [_HOME_MOVES[i] for i, c in enumerate(tops) if c and _homes(found, c)]
        for i, c in enumerate(tops):
            if c:
                onto, row = _ONTO[c], _BUILD_MOVES[i]
                moves += [row[j] for j, top in enumerate(tops) if j != i and (not top or top in onto)]
        if state.redeals < MAX_REDEALS and any(piles):
            moves.append(REDEAL)
        return moves

    def has_productive_move(self, state: PersianState) -> bool:
        if state.redeals < MAX_REDEALS and any(state.piles):
            return True
        found = state.foundations
        for pile in state.piles:  # noqa: SIM110 - a plain loop: docs/performance.md, "Design decisions"
            if pile and _homes(found, pile[-1]):
                return True
        return False

    def apply(self, state: PersianState, move: Move) -> PersianState:
        kind = move.kind
        if kind is Kind.HOME:
            require_unused(move, src=True)
            pile = pile_at(state.piles, move.src)
            c = pile[-1]
            found = _home(state.foundations, c)
            if found is None:
                raise self._home_refusal(state.foundations, c)
            return PersianState(
                replace(state.piles, {move.src: pile[:-1]}), found, state.redeals
            )
        if kind is Kind.BUILD:
            return self._build(state, move.src, move.dst)
        if kind is Kind.REDEAL:
            require_unused(move)
            if state.redeals >= MAX_REDEALS:
                raise IllegalMove(f"no redeals left (all {MAX_REDEALS} used)")
            if not any(state.piles):
                raise IllegalMove("there are no cards left to redeal")
            return PersianState(
                deal_round(gather(state.piles), PILES), state.foundations, state.redeals + 1
            )
        raise IllegalMove(f"{self.name} has no {kind.value} moves")

    def _build(self, state: PersianState, src: int, dst: int) -> PersianState:
        source = pile_at(state.piles, src)
        pile_at(state.piles, dst, nonempty=False)  # it exists
        if src == dst:
            raise IllegalMove("a card cannot be moved onto its own pile")
        target = state.piles[dst]
        c = source[-1]
        if target and target[-1] not in _ONTO[c]:
            raise IllegalMove(self._build_refusal(c, target[-1]))
        return PersianState(
            replace(state.piles, {src: source[:-1], dst: target + (c,)}),
            state.foundations,
            state.redeals,
        )

    @staticmethod
    def _build_refusal(c: Card, onto: Card) -> str:
        if onto >> 2 == ACE:
            return f"nothing can go on {label(onto)}"
        if c >> 2 == KING:
            return f"{label(c)} cannot go on {label(onto)}: a King goes only onto an empty pile"
        colour = "black" if is_red(onto) else "red"
        needed = RANK_LABELS[ORDER[ORDER.index(onto >> 2) - 1] - 1]
        return f"{label(c)} cannot go on {label(onto)}: needs a {colour} {needed}"

    @staticmethod
    def _home_refusal(found: tuple[int, ...], c: Card) -> IllegalMove:
        s = c & 3
        heights = sorted({found[2 * s], found[2 * s + 1]} - {len(ORDER)})
        if not heights:
            return IllegalMove(f"both {suit_label(s)} foundations are complete")
        needed = " or ".join(label(card(ORDER[h], s)) for h in heights)
        return IllegalMove(
            f"{label(c)} cannot go to a foundation: the {suit_label(s)} foundations need {needed}"
        )

    def is_shuttle(self, state: PersianState, move: Move) -> bool:
        # A lone card moved into an empty pile only renumbers the piles.
        return (
            move.kind is Kind.BUILD
            and 0 <= move.src < PILES
            and 0 <= move.dst < PILES
            and len(state.piles[move.src]) == 1
            and not state.piles[move.dst]
        )

    is_won = staticmethod(all_home)

    def progress(self, state: PersianState) -> Progress:
        return Progress(sum(state.foundations), TOTAL)

    # --- views ---------------------------------------------------------------------
    def view_list(self, state: PersianState) -> tuple[str, Sequence[Pile], Callable[[Pile], list[str]]]:
        return "piles", state.piles, codes  # bottom to top

    view_rest_source = staticmethod(redeal_rest_source)

    def view_rest(self, state: PersianState) -> dict[str, Any]:
        found = state.foundations
        return {
            # per suit S, H, D, C: the higher foundation first; None for an empty one
            "foundations": [_TOP_CODES[i >> 1][found[i ^ 1]] for i in range(8)],
            "redeals_used": state.redeals,
            "redeals_left": MAX_REDEALS - state.redeals,
            "redeal_allowed": state.redeals < MAX_REDEALS and any(state.piles),
        }

    def from_view(self, view: dict[str, Any]) -> PersianState:
        heights: list[int] = []
        found = view["foundations"]  # per suit, the higher foundation first
        for s in range(4):
            pair = [0 if c is None else ORDER.index(rank_of(parse_card(c))) + 1 for c in found[2 * s : 2 * s + 2]]
            heights += sorted(pair)
        return PersianState(
            piles=tuple(tuple(parse_card(c) for c in pile) for pile in view["piles"]),
            foundations=tuple(heights),
            redeals=view["redeals_used"],
        )

    def snapshot(self, state: PersianState) -> dict[str, Any]:
        return self.view(state)  # every card is face up

    def all_cards(self, state: PersianState) -> list[Card]:
        homed = [card(r, i // 2) for i, h in enumerate(state.foundations) for r in ORDER[:h]]
        return homed + [c for p in state.piles for c in p]

    # --- notation ------------------------------------------------------------------
    @functools.cached_property
    def _notation(self) -> PileNotation:
        return PileNotation(self.name, PILES, "a foundation")

    def parse_move(self, text: str) -> Move:
        return self._notation.parse(text)

    def format_move(self, move: Move) -> str:
        return self._notation.format(move)

