"""Perseverance: twelve face-up piles built down by suit, runs move, two redeals.

Also the base of its family: ``perseverance_a`` (Kings to the bottom in the first deal) and
``cruel`` (single cards only, redeals whenever a card went home since the last deal)
override only what differs.

Notation (piles numbered 1-12):
- ``3>f``  the top card of pile 3 to its foundation (``3f`` is accepted too)
- ``3>7``  the unit from pile 3 whose bottom card fits on pile 7's top card; in
  Perseverance that is a single card or a same-suit run (the target decides how many)
- ``r``    redeal
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from .base import Game, IllegalMove, Kind, Move, Progress, ShortForms, require_unused
from .cards import ACE, Card, code, codes, label, parse_card, rank_of, standard_deck
from .piles import (
    REDEAL,
    Pile,
    PileNotation,
    SuitFoundations,
    all_home,
    deal_in_chunks,
    pile_at,
    redeal_rest_source,
    replace,
    top_run,
)

PILES = 12
PILE_SIZE = 4


@dataclass(frozen=True, slots=True)
class PerseveranceState:
    piles: tuple[Pile, ...]  # 12 piles, bottom to top
    foundations: tuple[int, ...]  # top rank per suit; every game starts with the Aces
    redeals: int = 0  # redeals used
    homed_since_deal: bool = False  # a card went home since the last (re)deal (Cruel)




class Perseverance(Game[PerseveranceState]):
    id = "perseverance"
    name = "Perseverance"
    summary = "12 open piles built down in suit; runs move as a unit; two redeals."
    productive_test_is_exact = True  # a home move or a redeal: both checked in full
    full_information = True
    short_forms = ShortForms(source=r"1[0-2]|[1-9]", home="f", builds=True)
    max_redeals: int | None = 2  # None: unlimited
    runs_move = True

    # --- dealing -------------------------------------------------------------------
    def deck(self) -> list[Card]:
        return [c for c in standard_deck() if c >> 2 != ACE]

    def deal_from(self, cards: Sequence[Card]) -> PerseveranceState:
        return PerseveranceState(
            piles=deal_in_chunks(cards, PILE_SIZE, PILES), foundations=(ACE,) * 4
        )

    # --- rules ---------------------------------------------------------------------
    def may_redeal(self, state: PerseveranceState) -> bool:
        return self.max_redeals is None or state.redeals < self.max_redeals

    def _redeal_refusal(self, state: PerseveranceState) -> str:
        return f"no redeals left (all {self.max_redeals} used)"

    def legal_moves(self, state: PerseveranceState) -> list[Move]:
        piles, found = state.piles, state.foundations
        moves: list[Move] = []
        tops: dict[Card, int] = {}
        for i, pile in enumerate(piles):
            if pile:
                tops[pile[-1]] = i
                if found[pile[-1] & 3] + 1 == pile[-1] >> 2:
                    moves.append(Move(Kind.HOME, i))
        for i, pile in enumerate(piles):
            if not pile:
                continue
            unit = top_run(pile) if self.runs_move else 1
            for c in pile[-unit:]:
                target = tops.get(c + 4)
                if target is not None:
                    moves.append(Move(Kind.BUILD, i, target))
        if self.may_redeal(state) and any(piles):
            moves.append(REDEAL)
        return moves

    def has_productive_move(self, state: PerseveranceState) -> bool:
        if self.may_redeal(state) and any(state.piles):
            return True
        found = state.foundations
        return any(pile and found[pile[-1] & 3] + 1 == pile[-1] >> 2 for pile in state.piles)

    def apply(self, state: PerseveranceState, move: Move) -> PerseveranceState:
        kind = move.kind
        if kind is Kind.HOME:
            require_unused(move, src=True)
            pile = pile_at(state.piles, move.src)
            c = pile[-1]
            if not SuitFoundations.accepts(state.foundations, c):
                raise SuitFoundations.refuse(state.foundations, c)
            return PerseveranceState(
                replace(state.piles, {move.src: pile[:-1]}),
                SuitFoundations.add(state.foundations, c),
                state.redeals,
                True,
            )
        if kind is Kind.BUILD:
            return self._build(state, move.src, move.dst)
        if kind is Kind.REDEAL:
            require_unused(move)
            if not self.may_redeal(state):
                raise IllegalMove(self._redeal_refusal(state))
            if not any(state.piles):
                raise IllegalMove("there are no cards left to redeal")
            gathered = [c for pile in state.piles for c in pile]
            return PerseveranceState(
                deal_in_chunks(gathered, PILE_SIZE, PILES),
                state.foundations,
                state.redeals + 1,
                False,
            )
        raise IllegalMove(f"{self.name} has no {kind.value} moves")

    def _build(self, state: PerseveranceState, src: int, dst: int) -> PerseveranceState:
        source = pile_at(state.piles, src)
        pile_at(state.piles, dst, nonempty=False)  # it exists
        if src == dst:
            raise IllegalMove("a pile cannot be moved onto itself")
        target = state.piles[dst]
        if not target:
            raise IllegalMove(f"pile {dst + 1} is empty, and an emptied pile stays empty")
        needed = target[-1] - 4  # same suit, one rank lower
        run = top_run(source)
        unit = run if self.runs_move else 1
        movable = source[-unit:]
        if needed not in movable:
            raise IllegalMove(self._build_refusal(source, run, target[-1], needed))
        count = len(source) - source.index(needed, len(source) - unit)
        return PerseveranceState(
            replace(state.piles, {src: source[:-count], dst: target + source[-count:]}),
            state.foundations,
            state.redeals,
            state.homed_since_deal,
        )

    def _build_refusal(self, source: Pile, run: int, onto: Card, needed: Card) -> str:
        top = source[-1]
        if (onto >> 2) == ACE:
            return f"nothing can go on {label(onto)}"
        if not self.runs_move and needed in source[-run:]:
            return (
                f"only single cards move in {self.name}: {label(top)} cannot go on "
                f"{label(onto)}: needs {label(needed)}"
            )
        if run > 1 and self.runs_move:
            return (
                f"{label(source[-run])}..{label(top)} cannot go on {label(onto)}: "
                f"needs {label(needed)}"
            )
        return f"{label(top)} cannot go on {label(onto)}: needs {label(needed)}"

    is_won = staticmethod(all_home)

    def progress(self, state: PerseveranceState) -> Progress:
        return Progress(SuitFoundations.count(state.foundations), 52)

    # --- views ---------------------------------------------------------------------
    def view_list(self, state: PerseveranceState) -> tuple[str, Sequence[Pile], Callable[[Pile], list[str]]]:
        return "piles", state.piles, codes  # bottom to top

    view_rest_source = staticmethod(redeal_rest_source)

    def view_rest(self, state: PerseveranceState) -> dict[str, Any]:
        return {
            "foundations": [code(t * 4 + s) for s, t in enumerate(state.foundations)],
            "redeals_used": state.redeals,
            "redeals_left": None if self.max_redeals is None else self.max_redeals - state.redeals,
            "redeal_allowed": self.may_redeal(state) and any(state.piles),
        }

    def from_view(self, view: dict[str, Any]) -> PerseveranceState:
        return PerseveranceState(
            piles=tuple(tuple(parse_card(c) for c in pile) for pile in view["piles"]),
            foundations=tuple(rank_of(parse_card(c)) for c in view["foundations"]),
            redeals=view["redeals_used"],
            # Only Cruel reads this flag, and there a redeal is allowed exactly when it is set
            # (the piles are never all empty while the game goes on).
            homed_since_deal=bool(view["redeal_allowed"]),
        )

    def snapshot(self, state: PerseveranceState) -> dict[str, Any]:
        return self.view(state)  # nothing is hidden in this family

    def all_cards(self, state: PerseveranceState) -> list[Card]:
        return SuitFoundations.cards(state.foundations) + [c for p in state.piles for c in p]

    # --- notation ------------------------------------------------------------------
    @functools.cached_property
    def _notation(self) -> PileNotation:
        return PileNotation(self.name, PILES, "its foundation")

    def parse_move(self, text: str) -> Move:
        return self._notation.parse(text)

    def format_move(self, move: Move) -> str:
        return self._notation.format(move)
