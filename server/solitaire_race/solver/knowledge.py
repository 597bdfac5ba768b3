"""What the solver knows about each game beyond its rules, and why each piece is sound.

The search core (``search.py``) is game-blind: it asks a ``Knowledge`` for a position's
transposition key, its edges (a move, or a short fixed sequence of moves, with the set of
places it touches), a *safe* edge if one is provably no worse than every alternative,
whether the position is provably *dead* (lost), and a score that only orders the search.
All rules come from the engine's public interface (``legal_moves``, ``apply``,
``is_won``) and the public state fields; this module only adds facts about
which positions are equivalent and which moves cannot hurt. Every claim made here is
pinned by ``tests/test_solver.py`` against a search that uses none of it.

- **Perseverance and Perseverance A** (runs move). Once the redeals are used up, every
  legal move is safe: a build puts a run on its only possible successor card (cards are
  unique, so the whole top run moves), which it leaves only to go home, and it uncovers
  the card below; a foundation move removes a card that nothing can ever be built on (its
  next-lower card is already home). Neither can block anything, and an emptied pile takes
  part in nothing once no redeal is left. So the last phase is decided by playing moves
  until none is left (one macro edge). Before the last redeal nothing is safe: a
  foundation move or a build changes the order in which the piles are gathered, hence the
  next layout. Dead positions (``piles.buried_for_good``): in the last phase, a pile where a card
  can never leave from above a lower card of its suit; with redeals left, such a burial
  among the bottom four cards of the first non-empty pile, which every redeal deals into
  pile 1 again.
- **Cruel** (single cards, unlimited earned redeals): the same first-pile burial is dead
  (a single card leaves only onto its successor, so the rule holds a fortiori). No move is
  provably safe (a card built onto its successor freezes that successor until it goes
  home, and every move changes the next redeal).
- **Persian Patience**. With both redeals used, pile order no longer matters, so positions
  are keyed by their sorted piles (a lone card moved into an empty pile is then the same
  position), and a foundation move is safe when nothing could ever be built on its card:
  it is an Ace, or both copies of both next-lower cards of the other colour are home.
  Before that, the piles' order decides the redeal and nothing is safe.
- **Clock**: no knowledge needed; the only choice is the exchange of the fourth King, and
  the search tries every face-down card for it (deepest first: a buried King turns up
  last).
- **Parallels and Patriarchs**. When a suit's two foundations meet, shifting walks the
  meeting point freely, and a card of rank r put on either of them leaves the pair at
  (r, r) whichever way it went: so meeting positions are keyed as one, lone shifts are
  never edges, and "shift as needed, then home" is one edge per card. A foundation move is
  safe only when nothing can enter the tableau any more (stock, and for Patriarchs the
  waste, empty) and the card's suit has passed its meeting point (every remaining card of
  the suit then has exactly one foundation it can go to, in a fixed order).

Footprints (for the search's move-order pruning): two edges whose footprints are disjoint
commute (each stays legal after the other, with the same effect, and the results are
equal); ``None`` means "touches everything".
"""

from __future__ import annotations

from collections.abc import Hashable
from typing import Any, Generic, TypeVar

from ..engine import Game, IllegalMove, Kind, Move
from ..engine.cards import KING, is_red
from ..engine.clock import Clock, ClockState
from ..engine.parallels import Parallels, ParallelsState
from ..engine.patriarchs import REDEAL, WASTE, Patriarchs, PatriarchsState
from ..engine.perseverance import Perseverance, PerseveranceState
from ..engine.persian import MAX_REDEALS, ORDER, PersianPatience, PersianState
from ..engine.piles import DOWN, UP
from ..engine.two_deck import STOCK, TwoDeckGame
from .piles import blockers, buried_for_good, depths

Edge = tuple[Move, ...]
Footprint = frozenset[int] | None
Step = tuple[Edge, Footprint]
S = TypeVar("S", bound=Hashable)  # a game's state: positions are keyed by it by default

# Footprint codes: piles/slots are their index; these tag the other shared places.
_SUIT = 1000  # + suit: a suit's foundation(s)
_SUPPLY = 999  # Patriarchs: the waste and the stock (the refill source)


def touched(*places: int) -> frozenset[int]:
    return frozenset(places)


class Knowledge(Generic[S]):
    """The default: every legal move is an edge, no position is keyed with another,
    nothing is safe. Always sound; subclasses add facts."""

    # How the search spends its budget: the share given to the best-first search (0: the
    # depth-first search alone), and whether depth-first tries the best-scoring child first
    # (worth the cost of scoring every child only where its move order is a poor guide).
    best_first_share: float = 0.0
    playout_share: float = 0.0  # the share of the random playouts (they only look for wins)
    playout_head_start: int = 0  # nodes the playouts get before depth-first's first turn
    shorten_by_replays: bool = False  # lines too long for the shortening's bounded search
    score_children: bool = False
    newest_first_share: float = 0.0  # a second best-first, breaking ties by the newest position
    endgame_share: float = 0.0  # the search through the last phase's starting positions

    def __init__(self, game: Game[S]) -> None:
        self.game = game

    def score(self, state: S) -> float:
        """How promising a position looks (higher is better): cards home by default."""
        return self.game.progress(state).home

    def best_first_score(self, state: S) -> float:
        """The score of the best-first search that breaks ties by the oldest position (the
        other searches order by ``score``): ``score`` unless the game has a better guide."""
        return self.score(state)

    def ordered(self, state: S) -> list[tuple[Edge, Footprint, S | None]]:
        """The edges in the order to try them, with the position each leads to when the
        ordering had to compute it (else None)."""
        steps = self.edges(state)
        if not self.score_children:
            return [(e, fp, None) for e, fp in steps]
        scored = []
        for i, (edge, fp) in enumerate(steps):
            child = state
            for move in edge:
                child = self.game.apply(child, move)
            scored.append((-self.score(child), i, edge, fp, child))
        scored.sort(key=lambda t: (t[0], t[1]))
        return [(e, fp, c) for _, _, e, fp, c in scored]

    def key(self, state: S) -> Hashable:
        """Positions with equal keys have the same future (the state itself by default).
        Returning anything but ``state`` also tells the search that move labels are not
        comparable between positions of that key (no move-order pruning there)."""
        return state

    def edges(self, state: S) -> list[Step]:
        """Every edge worth trying, best first, with its footprint."""
        return [((m,), None) for m in self.game.legal_moves(state)]

    def playout_edges(self, state: S) -> tuple[list[Edge], list[Edge]]:
        """The edges a playout chooses among: those that bring a card home, and the rest."""
        homes: list[Edge] = []
        rest: list[Edge] = []
        for edge, _ in self.edges(state):
            (homes if edge[-1].kind is Kind.HOME else rest).append(edge)
        return homes, rest

    def safe(self, state: S) -> tuple[Edge, S] | None:
        """An edge provably no worse than all others, with the position it leads to."""
        return None

    def endgame(self, state: S) -> bool:
        """Whether the position is in the game's last phase (``search.Endgames``; only
        asked where ``endgame_share`` is set)."""
        return False

    def dead(self, state: S) -> bool:
        """True only if the position provably cannot be won (checked before its edges)."""
        return False


# --- the Perseverance family ---------------------------------------------------------------------
class PerseveranceKnowledge(Knowledge[PerseveranceState]):
    game: Perseverance

    def __init__(self, game: Perseverance) -> None:
        super().__init__(game)
        if not game.runs_move:  # Cruel: long games, where a guided search finds wins sooner
            # and random playouts find the wins both orders miss (bench/solver.py: of the 14
            # deals in 200 left unknown in 2 s with best-first at half, 11 won in 2 s).
            self.best_first_share = 0.3
            self.playout_share = 0.4
            self.score_children = True
        else:  # some wins lie far down depth-first's order (Perseverance 164, 165: 2k and 40k
            # nodes so, unknown at 300k without); small shares keep proofs cheap (1.4x nodes)
            self.best_first_share = 0.15
            self.playout_share = 0.15

    def score(self, state: PerseveranceState) -> float:
        return 4 * sum(state.foundations) - sum(map(blockers, state.piles))

    def last_phase(self, state: PerseveranceState) -> bool:
        limit = self.game.max_redeals
        return limit is not None and state.redeals >= limit

    def edges(self, state: PerseveranceState) -> list[Step]:
        piles = state.piles
        homes: list[Step] = []
        builds: list[Step] = []
        redeal: list[Step] = []
        for m in self.game.legal_moves(state):
            if m.kind is Kind.HOME:
                homes.append(((m,), touched(m.src, _SUIT + (piles[m.src][-1] & 3))))
            elif m.kind is Kind.BUILD:
                builds.append(((m,), touched(m.src, m.dst)))
            else:
                redeal.append(((m,), None))
        return homes + builds + redeal

    def safe(self, state: PerseveranceState) -> tuple[Edge, PerseveranceState] | None:
        if not (self.game.runs_move and self.last_phase(state)):
            return None
        return play_out(self.game, state)

    def dead(self, state: PerseveranceState) -> bool:
        if self.last_phase(state):
            return any(map(buried_for_good, state.piles))
        # Redeals left: the first non-empty pile starts the gathered sequence, and nothing
        # can ever come before it (emptied piles stay empty). A burial among its bottom
        # four cards never changes (those cards cannot move) and every redeal deals those
        # four cards into pile 1 again, bottom first: lost for good.
        first = next((p for p in state.piles if p), ())
        return buried_for_good(first[:4])


def play_out(game: Game[S], state: S) -> tuple[Edge, S] | None:
    """Play legal moves (never a redeal) until none is left: the last phase of a game
    where every such move is safe. Moves listed together are tried one after the other; one
    that an earlier one made illegal is skipped (any legal move is as good)."""
    moves: list[Move] = []
    while True:
        legal = [m for m in game.legal_moves(state) if m.kind is not Kind.REDEAL]
        if not legal:
            break
        for m in legal:
            try:
                state = game.apply(state, m)
            except IllegalMove:
                continue
            moves.append(m)
    return (tuple(moves), state) if moves else None


# --- Persian Patience ------------------------------------------------------------------------------
# Per rank, the height of a foundation holding it (A = 1 ... K = 8).
_HEIGHT = {r: i + 1 for i, r in enumerate(ORDER)}
_HEIGHT_BY_RANK = tuple(_HEIGHT.get(r, 0) for r in range(14))
# Per suit and foundation height h, the code of the card that goes on it next (-1: full).
_NEXT_CARD = tuple(tuple((ORDER[h] << 2 | s) if h < len(ORDER) else -1 for h in range(9)) for s in range(4))


class PersianKnowledge(Knowledge[PersianState]):
    game: PersianPatience
    # Two best-first searches with different scores and ties win different deals, and the
    # endgame search the deals whose few winnable endgames the others never reach
    # (bench/solver.py, docs/solver.md).
    best_first_share = 0.3
    newest_first_share = 0.15
    endgame_share = 0.4
    score_children = True

    def score(self, state: PersianState) -> float:
        # Redeals are scarce: a position reached without one is worth a few cards more.
        heights = _HEIGHT_BY_RANK
        return (
            4 * sum(state.foundations)
            - sum(blockers(p, heights) for p in state.piles)
            - 5 * state.redeals
        )

    def best_first_score(self, state: PersianState) -> float:
        # Also: how deep the cards the foundations take next lie (each counted once, at its
        # shallower copy), and redeals dearer. It wins most of the deals the other score
        # leaves to long searches, and loses a few it wins: each guides one best-first.
        found, nxt = state.foundations, _NEXT_CARD
        wanted = {nxt[i >> 1][found[i]] for i in range(8) if found[i] < 8}
        pile_depths = [depths(p) for p in state.piles if p]
        buried = 0
        for c in wanted:  # every card not home lies in a pile
            buried += min(d.get(c, 99) for d in pile_depths)
        return (
            4 * sum(found)
            - sum(blockers(p, _HEIGHT_BY_RANK) for p in state.piles)
            - 20 * state.redeals
            - 2 * buried
        )

    @staticmethod
    def last_phase(state: PersianState) -> bool:
        return state.redeals >= MAX_REDEALS

    def endgame(self, state: PersianState) -> bool:
        return self.last_phase(state)

    def key(self, state: PersianState) -> Hashable:
        if self.last_phase(state):
            return (tuple(sorted(state.piles)), state.foundations)
        return state

    def edges(self, state: PersianState) -> list[Step]:
        piles = state.piles
        last = self.last_phase(state)
        homes: list[Step] = []
        builds: list[Step] = []
        to_empty: list[Step] = []
        redeal: list[Step] = []
        seen_empty: set[int] = set()
        for m in self.game.legal_moves(state):
            if m.kind is Kind.HOME:
                homes.append(((m,), touched(m.src, _SUIT + (piles[m.src][-1] & 3))))
            elif m.kind is Kind.BUILD:
                step: Step = ((m,), touched(m.src, m.dst))
                if piles[m.dst]:
                    builds.append(step)
                elif not last:
                    to_empty.append(step)  # the pile a card lands in decides the redeal
                elif len(piles[m.src]) > 1 and m.src not in seen_empty:
                    # Pile order is irrelevant now: one empty target per source will do,
                    # and a lone card moving to an empty pile changes nothing.
                    seen_empty.add(m.src)
                    to_empty.append(step)
            else:
                redeal.append(((m,), None))
        return homes + builds + to_empty + redeal

    def safe(self, state: PersianState) -> tuple[Edge, PersianState] | None:
        if not self.last_phase(state):
            return None
        found = state.foundations
        for i, pile in enumerate(state.piles):
            if not pile:
                continue
            c = pile[-1]
            h = _HEIGHT[c >> 2]
            s = c & 3
            lo, hi = found[2 * s], found[2 * s + 1]
            if lo + 1 != h and hi + 1 != h:
                continue  # it does not go home now
            if h > 1:
                # The cards that could go on c: the next-lower rank in the other colour.
                others = [t for t in range(4) if is_red(t) != is_red(s)]  # a suit is a card's low bits
                if any(min(found[2 * t], found[2 * t + 1]) < h - 1 for t in others):
                    continue
            move = Move(Kind.HOME, i)
            return (move,), self.game.apply(state, move)
        return None


# --- Clock ---------------------------------------------------------------------------------------------
class ClockKnowledge(Knowledge[ClockState]):
    game: Clock

    def edges(self, state: ClockState) -> list[Step]:
        moves = self.game.legal_moves(state)
        # Exchanges: the deepest face-down card first (the King then turns up last).
        moves.sort(key=lambda m: (m.kind is Kind.EXCHANGE, -m.dst, -len(state.down[m.src])))
        return [((m,), None) for m in moves]


# --- Parallels and Patriarchs -----------------------------------------------------------------
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


def knowledge_for(game: Game[Any]) -> Knowledge[Any]:
    if isinstance(game, Perseverance):
        return PerseveranceKnowledge(game)
    if isinstance(game, PersianPatience):
        return PersianKnowledge(game)
    if isinstance(game, Clock):
        return ClockKnowledge(game)
    if isinstance(game, Parallels):
        return ParallelsKnowledge(game)
    if isinstance(game, Patriarchs):
        return PatriarchsKnowledge(game)
    return Knowledge(game)

