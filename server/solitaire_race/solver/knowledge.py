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
- **Cruel** (single cards, unlimited earned redeals): a first-pile burial is dead too,
  judged for single cards (``piles.stuck_single``: the card over a lower one of its suit
  must itself go onto its successor, so it is stuck when that lies below it, or when it
  is a King). No move is provably safe (a card built onto its successor freezes that
  successor until it goes home, and every move changes the next redeal).
- **Persian Patience**. With both redeals used, pile order no longer matters, so positions
  are keyed by their sorted piles (a lone card moved into an empty pile is then the same
  position), and a foundation move is safe when nothing could ever be built on its card:
  it is an Ace, or both copies of both next-lower cards of the other colour are home.
  Before that, the piles' order decides the redeal and nothing is safe.
- **Clock**: no knowledge needed; the only choice is the exchange of the fourth King, and
  the search tries every face-down card for it (deepest first: a buried King turns up
  last).
- **Parallels and Patriarchs**: in ``two_deck_knowledge.py``.

Footprints (for the search's move-order pruning): two edges whose footprints are disjoint
commute (each stays legal after the other, with the same effect, and the results are
equal); ``None`` means "touches everything".
"""

from __future__ import annotations

import functools
from collections.abc import Hashable
from typing import Any, Generic, TypeVar

from ..engine import Game, IllegalMove, Kind, Move
from ..engine.cards import KING, is_red
from ..engine.clock import Clock, ClockState
from ..engine.parallels import Parallels
from ..engine.patriarchs import Patriarchs
from ..engine.perseverance import Perseverance, PerseveranceState
from ..engine.persian import MAX_REDEALS, ORDER, PersianPatience, PersianState
from .piles import blockers, buried_for_good, depths, stuck_single

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
    endgame_share: float = 0.0  # the search through the endgames (``endgame``)

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
        """Whether the position is past the phase whose positions ``search.Endgames`` walks
        (only asked where ``endgame_share`` is set); the first such positions are its
        endgames."""
        return False

    def dead(self, state: S) -> bool:
        """True only if the position provably cannot be won (checked before its edges)."""
        return False


# --- the Perseverance family ---------------------------------------------------------------------
class PerseveranceKnowledge(Knowledge[PerseveranceState]):
    game: Perseverance

    def __init__(self, game: Perseverance) -> None:
        super().__init__(game)
        if not game.runs_move:  # Cruel: long games, where guided searches find wins sooner
            # and random playouts find some that they miss. Its lost deals are proved within
            # a few hundred nodes (the first-pile burial), so depth-first needs little.
            self.best_first_share = 0.1
            self.playout_share = 0.4
            self.endgame_share = 0.4
            self.score_children = True
        else:  # some wins lie far down depth-first's order (Perseverance 164, 165: 2k and 40k
            # nodes so, unknown at 300k without); small shares keep proofs cheap (1.4x nodes)
            self.best_first_share = 0.15
            self.playout_share = 0.15

    def score(self, state: PerseveranceState) -> float:
        found, piles = state.foundations, state.piles
        score = 4 * sum(found) - sum(map(blockers, piles))
        if not self.game.runs_move:
            # Cruel: minus how deep each suit's next card lies (a card leaves a pile only
            # from its top, one at a time).
            pile_depths = [depths(p) for p in piles if p]
            for s, rank in enumerate(found):
                if rank < KING:
                    c = (rank + 1) << 2 | s
                    score -= next(d[c] for d in pile_depths if c in d)
        return score

    def endgame(self, state: PerseveranceState) -> bool:
        # Cruel: its first deal has a few dozen positions, and the search through the
        # layouts of the first redeal (``search.Endgames``) wins deals the others do not.
        return state.redeals >= 1

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
        return (buried_for_good if self.game.runs_move else stuck_single)(first[:4])


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


# Per suit, the suits of the other colour (a suit is a card's low bits).
_OTHER_COLOUR = tuple(tuple(t for t in range(4) if is_red(t) != is_red(s)) for s in range(4))


@functools.lru_cache(maxsize=1 << 16)  # a move changes one or two piles: most are seen before
def _blockers(pile: tuple[int, ...]) -> int:
    return blockers(pile, _HEIGHT_BY_RANK)


class PersianKnowledge(Knowledge[PersianState]):
    game: PersianPatience
    # Two best-first searches with different scores and ties win different deals, and the
    # endgame search the deals whose few winnable endgames the others never reach
    # (bench/solver.py, docs/solver.md).
    best_first_share = 0.25
    newest_first_share = 0.15
    endgame_share = 0.5
    score_children = True

    def score(self, state: PersianState) -> float:
        # Redeals are scarce: a position reached without one is worth a few cards more.
        return 4 * sum(state.foundations) - sum(map(_blockers, state.piles)) - 5 * state.redeals

    def best_first_score(self, state: PersianState) -> float:
        # Also: how deep the cards the foundations take next lie (each counted once, at its
        # shallower copy), and redeals dearer. It wins most of the deals the other score
        # leaves to long searches, and loses a few it wins: each guides one best-first.
        found, nxt = state.foundations, _NEXT_CARD
        wanted = {nxt[i >> 1][found[i]] for i in range(8) if found[i] < 8}
        pile_depths = [depths(p) for p in state.piles if p]
        buried = 0
        for c in wanted:  # every card not home lies in a pile
            least = 99
            for d in pile_depths:
                if c in d and d[c] < least:
                    least = d[c]
            buried += least
        return 4 * sum(found) - sum(map(_blockers, state.piles)) - 20 * state.redeals - 2 * buried

    @staticmethod
    def last_phase(state: PersianState) -> bool:
        return state.redeals >= MAX_REDEALS

    def endgame(self, state: PersianState) -> bool:
        # After the first redeal: each endgame's search then chooses the second redeal too.
        return state.redeals >= 1

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
            h = _HEIGHT_BY_RANK[c >> 2]
            s = c & 3
            lo, hi = found[2 * s], found[2 * s + 1]
            if lo + 1 != h and hi + 1 != h:
                continue  # it does not go home now
            # The cards that could go on c: the next-lower rank in the other colour.
            if h > 1 and any(min(found[2 * t], found[2 * t + 1]) < h - 1 for t in _OTHER_COLOUR[s]):
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


def knowledge_for(game: Game[Any]) -> Knowledge[Any]:
    from .two_deck_knowledge import ParallelsKnowledge, PatriarchsKnowledge  # they build on this module

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

