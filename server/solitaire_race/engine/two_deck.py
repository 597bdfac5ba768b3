"""What Parallels and Patriarchs share: the deck, the foundation moves and their notation.

Both games use two decks whose starting Ace and King of each suit are already on the eight
foundations (``piles.TwoWayFoundations``). This module owns, once for both games:

- the 96-card deck that the shuffle permutes (``two_deck``);
- moving a card home and shifting a foundation's top card to the other foundation of its
  suit, with their legality checks and messages;
- the shuttle test (docs/games/rules.md, "Common to every game"): a shift of a suit is a shuttle when
  no card of that suit is playable, because shifting then cannot open anything;
- progress (cards on the foundations, out of 104);
- how a slot shows in a view: a card's code, None for an empty slot (``slot_code``);
- the notation both games have in common:
  - ``<source>>A`` / ``<source>>K``: a card to the foundation of its suit started by the
    Ace (built up) or by the King (built down); each game names its sources;
  - ``S:A>K``: the top card of the spades Ace foundation to the spades King foundation,
    ``S:K>A`` the other way (suits ``S H D C``);
  - ``s``: the stock action.

Moves: ``Move(Kind.HOME, src=<source>, dst=UP|DOWN)``, ``Move(Kind.SHIFT, src=<suit>,
dst=<side the card leaves>)``, ``Move(Kind.STOCK)``.
"""

from __future__ import annotations

import re
from abc import abstractmethod
from collections.abc import Sequence
from typing import Any, ClassVar, TypeVar

from .base import Game, IllegalMove, Kind, Move, NotationError, Outcome, Progress
from .cards import ACE, KING, SUITS, Card, code, parse_card, rank_of, standard_deck
from .piles import DOWN, UP, TwoWayFoundations

TOTAL = 104  # both decks end on the foundations
WON = (KING, ACE) * 4  # every foundation's top card once all are home
SIDES = TwoWayFoundations.NAMES  # "A" (UP), "K" (DOWN)
STOCK = Move(Kind.STOCK)


def slot_from_code(text: str | None) -> Card:
    """A view's slot back as a card (0: empty); ``slot_code``'s inverse."""
    return 0 if text is None else parse_card(text)


def foundations_from_view(foundations: list[dict[str, Any]]) -> tuple[int, ...]:
    """The two-way foundations' tops from a view's ``foundations`` entries."""
    tops = [0] * 8
    for entry in foundations:
        suit = SUITS.index(entry["suit"])
        side = UP if entry["side"] == "A" else DOWN
        tops[2 * suit + side] = rank_of(parse_card(entry["top"]))
    return tuple(tops)


def slot_code(c: Card) -> str | None:
    """A tableau slot in a view: its card's code, None when empty (0)."""
    return code(c) if c else None


_SHIFT = re.compile(r"^([shdc])\s*:\s*([ak])\s*>\s*([ak])$")
_HOME = re.compile(r"^(\w+)\s*>\s*([ak])$")

S = TypeVar("S")


def two_deck() -> list[Card]:
    """``standard_deck(copies=2)`` without the first copy's Aces and Kings: 96 cards.

    The removed cards are the ones that start the foundations. This order is part of the
    deal definition (see docs/shuffle.md).
    """
    cards = standard_deck(copies=2)
    return [c for i, c in enumerate(cards) if i >= 52 or c >> 2 not in (ACE, KING)]


def side_of(letter: str) -> int:
    return UP if letter == "a" else DOWN


class TwoDeckGame(Game[S]):
    """Rules shared by the games played onto ``TwoWayFoundations`` from two decks.

    A subclass says where its foundations are (``foundations_of`` / ``with_foundations``),
    which cards may go home now (``playable``), and how its card sources are written
    (``parse_source`` / ``source_name``).
    """

    examples: ClassVar[str]  # the notation examples quoted in NotationError messages

    # --- what the subclass provides -------------------------------------------------
    @abstractmethod
    def foundations_of(self, state: S) -> tuple[int, ...]: ...

    @abstractmethod
    def with_foundations(self, state: S, tops: tuple[int, ...]) -> S: ...

    @abstractmethod
    def playable(self, state: S) -> list[tuple[int, Card]]:
        """(source, card) for every card that may go to a foundation if it fits."""

    @abstractmethod
    def parse_source(self, text: str, whole: str) -> int:
        """The ``src`` of a card source written ``text``; raises ``NotationError``."""

    @abstractmethod
    def source_name(self, src: int) -> str: ...

    # --- dealing and progress -------------------------------------------------------
    def deck(self) -> list[Card]:
        return two_deck()

    def progress(self, state: S) -> Progress:
        return Progress(TwoWayFoundations.count(self.foundations_of(state)), TOTAL)

    def is_won(self, state: S) -> bool:
        # All 26 cards of a suit are home only with its Ace foundation up to the King and
        # its King foundation down to the Ace: one comparison (the solver asks every move).
        return self.foundations_of(state) == WON

    # --- foundation moves -----------------------------------------------------------
    def home_moves(self, state: S) -> list[Move]:
        tops = self.foundations_of(state)
        fits = TwoWayFoundations.fits
        return [
            Move(Kind.HOME, src, side)
            for src, c in self.playable(state)
            for side in (UP, DOWN)
            if fits(tops, c, side)
        ]

    @staticmethod
    def shift_moves(tops: tuple[int, ...]) -> list[Move]:
        moves: list[Move] = []
        for suit in range(4):
            if TwoWayFoundations.meeting(tops, suit):
                if tops[2 * suit] != ACE:
                    moves.append(Move(Kind.SHIFT, suit, UP))
                if tops[2 * suit + 1] != KING:
                    moves.append(Move(Kind.SHIFT, suit, DOWN))
        return moves

    @staticmethod
    def send_home(tops: tuple[int, ...], c: Card, side: int) -> tuple[int, ...]:
        """The foundations after ``c`` goes to foundation ``side`` of its suit."""
        if side not in (UP, DOWN):
            raise IllegalMove(f"there is no foundation {side!r}: it is A or K")
        if not TwoWayFoundations.fits(tops, c, side):
            raise TwoWayFoundations.refuse(tops, c, side)
        return TwoWayFoundations.add(tops, c, side)

    def apply_shift(self, state: S, move: Move) -> S:
        if not 0 <= move.src < 4:
            raise IllegalMove(f"there is no suit {move.src!r}")
        if move.dst not in (UP, DOWN):
            raise IllegalMove(f"there is no foundation {move.dst!r}: it is A or K")
        tops = TwoWayFoundations.shift(self.foundations_of(state), move.src, move.dst)
        return self.with_foundations(state, tops)

    @staticmethod
    def check_bare(move: Move) -> None:
        """Stock and redeal moves carry no addresses; refuse one that does."""
        if move.src or move.dst:
            raise IllegalMove(
                f"a {move.kind.value} move has no source or destination "
                f"(got src={move.src!r}, dst={move.dst!r})"
            )

    def is_shuttle(self, state: S, move: Move) -> bool:
        # Shifts are undoable while the foundations meet, so one only matters once a card of
        # its suit could use the rank it exposes; with no such card it opens nothing.
        if move.kind is not Kind.SHIFT:
            return False
        return not any(c & 3 == move.src for _, c in self.playable(state))

    def outcome(self, state: S) -> Outcome:
        # Every move that is not a shuttle is productive here: a card home, the stock, a
        # redeal, or a shift toward a playable card of its suit, which a few more shifts
        # bring home (meeting foundations accept every rank). So no search is needed.
        if self.is_won(state):
            return Outcome.WON
        moves = self.legal_moves(state)
        return Outcome.PLAYING if any(not self.is_shuttle(state, m) for m in moves) else Outcome.STUCK

    # --- notation -------------------------------------------------------------------
    def parse_other(self, t: str) -> Move | None:
        """Hook for a game's extra moves (lower-cased, stripped text)."""
        return None

    def format_other(self, move: Move) -> str | None:
        return None

    def parse_move(self, text: str) -> Move:
        t = text.strip().lower()
        if t in ("s", "stock"):
            return STOCK
        other = self.parse_other(t)
        if other is not None:
            return other
        m = _SHIFT.match(t)
        if m:
            if m.group(2) == m.group(3):
                raise NotationError(
                    f"{text!r}: a shift goes from one foundation of a suit to the other, "
                    "e.g. 'S:A>K' or 'S:K>A'"
                )
            return Move(Kind.SHIFT, SUITS.index(m.group(1).upper()), side_of(m.group(2)))
        m = _HOME.match(t)
        if m:
            return Move(Kind.HOME, self.parse_source(m.group(1), text), side_of(m.group(2)))
        raise NotationError(f"{text!r} is not a {self.name} move: use e.g. {self.examples}")

    def format_move(self, move: Move) -> str:
        if move.kind is Kind.STOCK:
            return "s"
        if move.kind is Kind.HOME:
            return f"{self.source_name(move.src)}>{SIDES[move.dst]}"
        if move.kind is Kind.SHIFT:
            return f"{SUITS[move.src]}:{SIDES[move.dst]}>{SIDES[1 - move.dst]}"
        other = self.format_other(move)
        if other is None:
            raise NotationError(f"{self.name} has no {move.kind.value} moves")
        return other


def dealt(cards: Sequence[Card], n: int) -> tuple[tuple[Card, ...], tuple[Card, ...]]:
    """The first ``n`` cards (dealt face up) and the rest (the stock, next card first)."""
    return tuple(cards[:n]), tuple(cards[n:])
