"""Clock: thirteen face-down piles round a dial; each turned-up card goes under its own hour.

This module owns the Clock layout (face-down and face-up cards per pile, the card in hand),
the one exchange of the fourth King, and the notation. Piles are indexed 0-12: index
``h - 1`` is hour ``h`` (A=1 ... J=11, Q=12) and index 12 is the centre, the Kings' pile
("hour 13"), so a card of rank ``r`` belongs on pile ``r - 1``.

Why only the centre can run out: a card is drawn from an hour pile only right after a card of
that rank was placed there, and an hour pile's face-down count always equals the number of
its rank not yet face up (the exchange swaps one face-down card for another, so it keeps
that). The centre starts one draw ahead (the opening turn-up), so it is empty exactly when
three Kings are face up, and play can only stop with the fourth King in hand.

Notation (hours 1-13, 13 or ``c`` = the centre):
- ``p``     play: turn up the top card of the centre (first move only), otherwise put the
  card in hand under its hour and turn up that pile's top face-down card
- ``x7.1``  exchange the fourth King in hand for hour 7's 1st face-down card from the top
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from .base import Game, IllegalMove, Kind, Move, NotationError, Progress
from .cards import UNKNOWN, Card, code, codes, label, parse_card, standard_deck
from .piles import Pile, deal_round, replace

PILES = 13
CENTRE = 12  # pile index of the centre, "hour 13"
PILE_SIZE = 4


@dataclass(frozen=True, slots=True)
class ClockState:
    down: tuple[Pile, ...]  # 13 piles of face-down cards, bottom to top
    up: tuple[Pile, ...]  # 13 piles of face-up cards, bottom to top (newest at index 0)
    hand: Card | None = None  # None before the first move and after the last card is placed
    exchanged: bool = False  # the one exchange has been used


PLAY = Move(Kind.PLAY)
_EXCHANGE = re.compile(r"^x\s*(\d{1,2}|c)\s*\.\s*(\d{1,2})$")
_NO_PILES: tuple[Pile, ...] = ((),) * PILES


def hour_name(index: int) -> str:
    return "the centre (hour 13)" if index == CENTRE else f"hour {index + 1}"


_Hour = tuple[int, int, Pile]  # what a pile's view is made of: hour, face-down count, face-up cards


def _hour_view(hour: _Hour) -> dict[str, Any]:
    number, down, up = hour
    return {"hour": number, "face_down": down, "face_up": codes(up)}


def home_pile(c: Card) -> int:
    return (c >> 2) - 1


class Clock(Game[ClockState]):
    id = "clock"
    name = "Clock"
    summary = (
        "13 face-down piles round a dial; each turned-up card goes under its hour; "
        "one exchange of the fourth King."
    )
    quick_move = "p"  # play the card in hand: the whole game is this one key but the exchange

    # --- dealing -------------------------------------------------------------------
    def deck(self) -> list[Card]:
        return standard_deck()

    def deal_from(self, cards: Sequence[Card]) -> ClockState:
        return ClockState(down=deal_round(cards, PILES), up=_NO_PILES)

    # --- rules ---------------------------------------------------------------------
    @staticmethod
    def blocked(state: ClockState) -> bool:
        """The card in hand (the fourth King) has no pile to draw from, yet cards are face down."""
        hand = state.hand
        return hand is not None and not state.down[home_pile(hand)] and any(state.down)

    def legal_moves(self, state: ClockState) -> list[Move]:
        if state.hand is None:
            return [PLAY] if state.down[CENTRE] else []
        if not self.blocked(state):
            return [PLAY]
        if state.exchanged:
            return []
        return [
            Move(Kind.EXCHANGE, i, depth)
            for i, pile in enumerate(state.down)
            for depth in range(len(pile))
        ]

    def apply(self, state: ClockState, move: Move) -> ClockState:
        if move.kind is Kind.PLAY:
            if move.src or move.dst:
                # Only the canonical PLAY is legal, so a move has one notation and one meaning.
                raise IllegalMove("'p' names no pile: the card in hand always goes to its own hour")
            return self._play(state)
        if move.kind is Kind.EXCHANGE:
            return self._exchange(state, move.src, move.dst)
        raise IllegalMove(f"{self.name} has no {move.kind.value} moves")

    def _play(self, state: ClockState) -> ClockState:
        hand, down = state.hand, state.down
        if hand is None:
            if not down[CENTRE]:
                raise IllegalMove("the game is over: every card is face up")
            # The opening move: nothing is placed, the centre's top card is turned up.
            centre = down[CENTRE]
            return ClockState(
                replace(down, {CENTRE: centre[:-1]}), state.up, centre[-1], state.exchanged
            )
        i = home_pile(hand)
        source = down[i]
        if not source and any(down):
            if state.exchanged:
                raise IllegalMove(
                    f"the fourth K ({label(hand)}) turned up again while face-down cards "
                    "remain, and the one exchange is used: the game is lost"
                )
            raise IllegalMove(
                "the fourth K cannot be played while face-down cards remain: exchange it "
                "(x<hour>.<n>) or resign"
            )
        # Placed cards go under the face-up cards already there.
        up = replace(state.up, {i: (hand,) + state.up[i]})
        if not source:
            return ClockState(down, up, None, state.exchanged)  # the last card: won
        return ClockState(replace(down, {i: source[:-1]}), up, source[-1], state.exchanged)

    def _exchange(self, state: ClockState, src: int, depth: int) -> ClockState:
        hand = state.hand
        if hand is None:
            raise IllegalMove("there is no card in hand to exchange")
        if not self.blocked(state):
            raise IllegalMove(
                "only the fourth King may be exchanged, when it turns up while face-down "
                f"cards remain; {label(hand)} is in hand: play it (p)"
            )
        if state.exchanged:
            raise IllegalMove("the one exchange has already been used")
        if not 0 <= src < PILES:
            raise IllegalMove(f"there is no hour {src + 1} (hours are 1-13, 13 = the centre)")
        pile = state.down[src]
        if not 0 <= depth < len(pile):
            if not pile:
                raise IllegalMove(f"{hour_name(src)} has no face-down cards")
            raise IllegalMove(
                f"{hour_name(src)} has only {len(pile)} face-down card"
                f"{'s' if len(pile) != 1 else ''}: choose 1-{len(pile)}"
            )
        k = len(pile) - 1 - depth  # depth counts from the top; tuples run bottom to top
        return ClockState(
            replace(state.down, {src: pile[:k] + (hand,) + pile[k + 1 :]}),
            state.up,
            pile[k],
            True,
        )

    def progress(self, state: ClockState) -> Progress:
        # The card in hand is face up but not yet on its hour, so it does not count.
        return Progress(sum(len(p) for p in state.up), 52)

    # --- views ---------------------------------------------------------------------
    def view_list(self, state: ClockState) -> tuple[str, Sequence[_Hour], Callable[[_Hour], dict[str, Any]]]:
        # A move turns one or two cards: only those hours' piles are shown again.
        hours = [(i + 1, len(down), up) for i, (down, up) in enumerate(zip(state.down, state.up, strict=True))]
        return "piles", hours, _hour_view

    def view_rest(self, state: ClockState) -> dict[str, Any]:
        return {
            "hand": None if state.hand is None else code(state.hand),
            "exchange_used": state.exchanged,
            "exchange_allowed": not state.exchanged and self.blocked(state),
        }

    def from_view(self, view: dict[str, Any]) -> ClockState:
        piles = view["piles"]
        return ClockState(
            down=tuple((UNKNOWN,) * p["face_down"] for p in piles),
            up=tuple(tuple(parse_card(c) for c in p["face_up"]) for p in piles),
            hand=None if view["hand"] is None else parse_card(view["hand"]),
            exchanged=bool(view["exchange_used"]),
        )

    def snapshot(self, state: ClockState) -> dict[str, Any]:
        out = self.view(state)
        for pile, cards in zip(out["piles"], state.down, strict=True):
            pile["face_down_cards"] = codes(cards)  # bottom to top
        return out

    def all_cards(self, state: ClockState) -> list[Card]:
        cards = [c for p in state.down for c in p] + [c for p in state.up for c in p]
        return cards if state.hand is None else cards + [state.hand]

    # --- notation ------------------------------------------------------------------
    def parse_move(self, text: str) -> Move:
        t = text.strip().lower()
        if t in ("p", "play"):
            return PLAY
        m = _EXCHANGE.match(t)
        if not m:
            raise NotationError(
                f"{text!r} is not a {self.name} move: use 'p' (play the card in hand) or "
                "e.g. 'x7.1' (exchange the fourth King for hour 7's 1st face-down card "
                "from the top)"
            )
        hour = PILES if m.group(1) == "c" else int(m.group(1))
        if not 1 <= hour <= PILES:
            raise NotationError(
                f"{text!r}: there is no hour {hour} (hours are 1-13, 13 or c = the centre)"
            )
        n = int(m.group(2))
        if not 1 <= n <= PILE_SIZE:
            raise NotationError(
                f"{text!r}: the face-down card is counted from the top, 1-{PILE_SIZE}"
            )
        return Move(Kind.EXCHANGE, hour - 1, n - 1)

    def format_move(self, move: Move) -> str:
        if move.kind is Kind.PLAY:
            return "p"
        if move.kind is Kind.EXCHANGE:
            return f"x{move.src + 1}.{move.dst + 1}"
        raise NotationError(f"{self.name} has no {move.kind.value} moves")
