"""What the solver knows about Parallels and Patriarchs (see ``knowledge.py`` for the
interface), and why each piece is sound.

When a suit's two foundations meet, shifting walks the meeting point freely, and a card of
rank r put on either of them leaves the pair at (r, r) whichever way it went: so meeting
positions are keyed as one, lone shifts are never edges, and "shift as needed, then home"
is one edge per card. A foundation move is safe only when nothing can enter the tableau
any more (stock, and for Patriarchs the waste, empty) and the card's suit has passed its
meeting point (every remaining card of the suit then has exactly one foundation it can go
to, in a fixed order). Patriarchs' nine slots are interchangeable (see
``PatriarchsKnowledge.key``). Every claim is pinned by ``tests/test_solver.py``.
"""

from __future__ import annotations

from collections.abc import Hashable

from ..engine import Kind, Move
from ..engine.cards import KING
from ..engine.parallels import Parallels, ParallelsState
from ..engine.patriarchs import REDEAL, WASTE, Patriarchs, PatriarchsState
from ..engine.piles import DOWN, UP
from ..engine.two_deck import STOCK, TwoDeckGame
from .knowledge import _SUIT, _SUPPLY, Edge, Footprint, Knowledge, S, Step, touched


def meeting(tops: tuple[int, ...], suit: int) -> bool:
    return tops[2 * suit] + 1 == tops[2 * suit + 1]


def canonical(tops: tuple[int, ...]) -> tuple[int, ...]:
    """The foundations with every meeting suit's pair as (0, 0), a value no real pair has:
    every meeting point of a suit is reachable from every other by shifts."""
    return tuple(v for s in range(4) for v in ((0, 0) if meeting(tops, s) else tops[2 * s : 2 * s + 2]))


class TwoDeckKnowledge(Knowledge[S]):
    game: TwoDeckGame[S]
    best_first_share = 0.05
    playout_share = 0.9
    shorten_by_replays = True
    score_children = True

    def key(self, state: S) -> Hashable:
        tops = self.game.foundations_of(state)
        if not any(meeting(tops, s) for s in range(4)):
            return state
        return ("meeting", self.game.with_foundations(state, canonical(tops)))

    def supply_touched(self, state: S, src: int) -> tuple[int, ...]:
        return ()

    def extra_footprint(self, kind: Kind, state: S) -> Footprint:
        """Footprint of the game's non-foundation moves."""
        return None

    def edges(self, state: S) -> list[Step]:
        game = self.game
        tops = game.foundations_of(state)
        homes: list[Step] = []
        others: list[Step] = []
        direct: set[tuple[int, int]] = set()
        for m in game.legal_moves(state):
            if m.kind is Kind.HOME:
                direct.add((m.src, m.dst))
            elif m.kind is not Kind.SHIFT:  # a lone shift is never needed (see the module doc)
                others.append(((m,), self.extra_footprint(m.kind, state)))
        for src, c in game.playable(state):
            s, r = c & 3, c >> 2
            places = touched(src, _SUIT + s, *self.supply_touched(state, src))
            if meeting(tops, s):
                homes.append((shift_then_home(tops, s, r, src), places))
                continue
            for side in (UP, DOWN):
                if (src, side) in direct:
                    homes.append(((Move(Kind.HOME, src, side),), places))
                    # Fitting both sides (Ace foundation two below the King one): either
                    # way the suit then meets, and meeting positions are one position.
                    break
        return homes + others

    def playout_edges(self, state: S) -> tuple[list[Edge], list[Edge]]:
        # ``edges`` without footprints and without asking the engine for every legal move:
        # a playout makes one step per engine move, and this is most of a step's work.
        tops = self.game.foundations_of(state)
        meets = [meeting(tops, s) for s in range(4)]
        homes: list[Edge] = []
        for src, c in self.game.playable(state):
            s, r = c & 3, c >> 2
            if meets[s]:
                homes.append(shift_then_home(tops, s, r, src))
            elif r == tops[2 * s] + 1:
                homes.append((Move(Kind.HOME, src, UP),))
            elif r == tops[2 * s + 1] - 1:
                homes.append((Move(Kind.HOME, src, DOWN),))
        return homes, self.supply_edges(state)

    def supply_edges(self, state: S) -> list[Edge]:
        """The edges that bring cards from the stock (its turn, a redeal)."""
        raise NotImplementedError

    def safe(self, state: S) -> tuple[Edge, S] | None:
        if not self.closed(state):
            return None
        game = self.game
        tops = game.foundations_of(state)
        cards = dict(game.playable(state))
        for m in game.legal_moves(state):
            if m.kind is Kind.HOME:
                s = cards[m.src] & 3
                if tops[2 * s] >= tops[2 * s + 1]:  # passed: each card left has one place
                    return (m,), game.apply(state, m)
        return None

    def closed(self, state: S) -> bool:
        """No card can enter the tableau any more."""
        raise NotImplementedError


def shift_then_home(tops: tuple[int, ...], suit: int, rank: int, src: int) -> Edge:
    """Shifts walking a meeting point until ``rank`` fits, then the foundation move; the
    shorter way (the result is the same either way)."""
    up = tops[2 * suit]
    routes = []
    if rank >= 2:
        routes.append((abs(up - (rank - 1)), rank - 1, UP))  # the Ace foundation must show rank-1
    if rank <= KING - 1:
        routes.append((abs(up - rank), rank, DOWN))  # the King foundation must show rank+1
    _, target_up, side = min(routes)
    # Shift(UP) moves the Ace foundation's top across (up - 1); Shift(DOWN) the other way.
    step = Move(Kind.SHIFT, suit, UP if up > target_up else DOWN)
    return (step,) * abs(up - target_up) + (Move(Kind.HOME, src, side),)


class ParallelsKnowledge(TwoDeckKnowledge[ParallelsState]):
    game: Parallels

    def supply_edges(self, state: ParallelsState) -> list[Edge]:
        return [(STOCK,)] if state.stock else []

    def closed(self, state: ParallelsState) -> bool:
        return not state.stock


class PatriarchsKnowledge(TwoDeckKnowledge[PatriarchsState]):
    game: Patriarchs
    # Its playouts win most deals in a few thousand nodes, in less time than the other
    # searches' first turns (4,000 nodes through the engine) take; small positions are
    # still proved lost by depth-first's first turn, which follows.
    playout_head_start = 4_000

    def supply_touched(self, state: PatriarchsState, src: int) -> tuple[int, ...]:
        # A tableau card going home is replaced from the waste or the stock; a waste card
        # going home uncovers the next waste card: both touch the supply.
        if src == WASTE or state.waste or state.stock:
            return (_SUPPLY,)
        return ()

    def extra_footprint(self, kind: Kind, state: PatriarchsState) -> Footprint:
        return touched(_SUPPLY) if kind is Kind.STOCK else None

    def key(self, state: PatriarchsState) -> Hashable:
        # The nine slots are interchangeable: every card in one may go home, a vacancy is
        # refilled in place, and no rule reads a slot's number. Two cards sent home in
        # either order fill their slots from the waste crosswise; keyed as one position.
        return (tuple(sorted(state.tableau)), state.stock, state.waste, canonical(state.foundations), state.redealt)

    def supply_edges(self, state: PatriarchsState) -> list[Edge]:
        if state.stock:
            return [(STOCK,)]
        return [(REDEAL,)] if self.game.may_redeal(state) else []

    def closed(self, state: PatriarchsState) -> bool:
        return not state.stock and not state.waste
