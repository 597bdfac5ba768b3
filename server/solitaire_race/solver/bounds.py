"""Lower bounds on the moves still needed to win, and moves that cost nothing to play
first: what the shortening's bounded search (``shorten.py``) knows about each game.

The search splits every line at its phase boundary: from a position a winning line either
redeals again (*redealing* lines) or never does (*final* lines), and the search looks
for each kind separately. Final lines are where the games give strong facts:

- ``remaining(state, final)`` is a lower bound on the length of every winning line of
  that kind from ``state`` (admissible: never more than the shortest such line), or
  ``None`` when there is no such line at all (a final line with a card that can never
  leave from above a lower card of its suit; a redealing line with no redeal left).
- ``free(state)`` is a move that starts some shortest *final* line from ``state`` (when
  any final line wins): the search plays it and tries nothing else there.

Every claim is argued in docs/solver.md ("Shortening and par"), and
``tests/test_shorten_bounds.py`` checks the bounds against exhaustive searches on small
positions. The default (any game) is the plain bound, the cards not yet home (each needs
a move of its own), with no split and no free move.
"""

from __future__ import annotations

import functools
from collections.abc import Hashable
from typing import Any

from ..engine import Game, Kind, Move
from ..engine.cards import is_red
from ..engine.perseverance import Perseverance, PerseveranceState
from ..engine.persian import MAX_REDEALS, ORDER, PersianPatience, PersianState
from .piles import blockers, buried_for_good

_HEIGHT_BY_RANK = tuple(ORDER.index(r) + 1 if r in ORDER else 0 for r in range(14))


class Bounds:
    """Any game: the cards not yet home; lines are not split; nothing is free."""

    split = False  # whether lines are searched as final and redealing separately
    # Whether the search tries a position's children by their bounds (lowest first) rather
    # than in the knowledge's order (moves home first): measured per game (docs/solver.md).
    order_children = False
    # The share of the bounded search's budget kept, when the search from the deal does not
    # end within the rest, for searches from the best line's own positions, the last first
    # (``shorten._Shortener.suffixes``): measured per game (docs/solver.md).
    suffix_share = 0.0
    # The share of the budget (after the rewrites) for the beam searches for final lines
    # (``beam.py``, ``shorten._Shortener.beams``) before the branch and bound (0: none), and
    # the width of their first round: measured per game (docs/solver.md).
    beam_share = 0.0
    beam_width = 10
    beam_screen = 0.75  # the share of that share for the first round (every candidate)

    def __init__(self, game: Game[Any]) -> None:
        self.game = game

    def not_home(self, state: Any) -> int:
        progress = self.game.progress(state)
        return progress.total - progress.home

    def remaining(self, state: Any, final: bool | None) -> int | None:
        """A lower bound on the moves of a winning line from ``state`` (``final``: one that
        never redeals; False: one that does; None: any), or None: no such line wins."""
        return self.not_home(state)

    def free(self, state: Any) -> Move | None:
        """A move that starts a shortest final line from ``state``, if one is known."""
        return None

    # The beam search's hooks (only where ``beam_share`` is set).
    def final_key(self, state: Any) -> Hashable:
        """Positions with equal keys have the same final lines (the state by default)."""
        key: Hashable = state
        return key

    def final_builds(self, state: Any) -> list[Move]:
        """The moves other than foundation moves and redeals that final lines need tried."""
        return [m for m in self.game.legal_moves(state) if m.kind not in (Kind.HOME, Kind.REDEAL)]

    def beam_score(self, state: Any) -> tuple[int, ...]:
        """How promising a position looks for a short final line (higher is better)."""
        return (self.game.progress(state).home,)


class PerseveranceBounds(Bounds):
    """The Perseverance family (Cruel too): one deck, cards unique, built down by suit."""

    game: Perseverance
    split = True
    order_children = True
    # A guard for deals whose search from the deal gets stuck (10 deals: Perseverance A 7
    # gets 63 with it, 77 without; the means move by 0.1-0.4 moves).
    suffix_share = 0.3

    def remaining(self, state: PerseveranceState, final: bool | None) -> int | None:
        left = 52 - sum(state.foundations)  # the engine's progress: the foundations' ranks, of 52
        if final is False:
            if not self.game.may_redeal(state) and self.game.max_redeals is not None:
                return None  # a redealing line needs a redeal left (Cruel always earns one)
            return left + 1
        if final is None:
            return left
        extra = 0
        single = not self.game.runs_move
        for pile in state.piles:
            builds = pile_builds(pile, single)
            if builds is None:
                return None
            extra += builds
        return left + extra

    def free(self, state: PerseveranceState) -> Move | None:
        found = state.foundations
        for i, pile in enumerate(state.piles):
            if pile and found[pile[-1] & 3] + 1 == pile[-1] >> 2:
                return Move(Kind.HOME, i)
        return None


@functools.lru_cache(maxsize=1 << 16)  # a move changes one or two piles: most are seen before
def pile_builds(pile: tuple[int, ...], single: bool) -> int | None:
    """Perseverance family, final lines: the builds this pile needs at least (its cards
    above a lower card of their suit with ``single`` cards moving, else 1 if it has any),
    or None when one of them can never leave (``buried_for_good``)."""
    if buried_for_good(pile):
        return None
    count = blockers(pile)
    return count if single else min(count, 1)


@functools.lru_cache(maxsize=1 << 16)
def locked(pile: tuple[int, ...]) -> int:
    """Persian Patience: how many cards of the pile lie above *both* copies of some lower
    card of their suit (neither foundation of the suit can reach them first)."""
    count = 0
    seen: set[int] = set()
    doubled = [99, 99, 99, 99]  # per suit, the lowest height whose two copies lie below
    for c in pile:
        h, s = _HEIGHT_BY_RANK[c >> 2], c & 3
        if doubled[s] < h:
            count += 1
        if c in seen:
            doubled[s] = min(doubled[s], h)
        seen.add(c)
    return count


class PersianBounds(Bounds):
    game: PersianPatience
    split = True
    # Its last phase is too big for the search from the deal (10 deals: pars 8.1 moves over
    # the old shortening's at 2M nodes with this, 10.5 without).
    suffix_share = 0.3
    beam_share = 0.6

    def remaining(self, state: PersianState, final: bool | None) -> int | None:
        left = 64 - sum(state.foundations)  # the engine's progress: the foundations' heights, of 64
        if final is False:
            return None if state.redeals >= MAX_REDEALS else left + 1
        if final is None:
            return left
        return left + sum(map(locked, state.piles))

    def free(self, state: PersianState) -> Move | None:
        found = state.foundations
        for i, pile in enumerate(state.piles):
            if not pile:
                continue
            c = pile[-1]
            h, s = _HEIGHT_BY_RANK[c >> 2], c & 3
            if found[2 * s] + 1 != h:
                continue  # both foundations of the suit must be ready for it (docs/solver.md)
            if h > 1:
                # The cards that could go on c: the next-lower rank in the other colour.
                others = [t for t in range(4) if is_red(t) != is_red(s)]  # a suit is a card's low bits
                if any(found[2 * t] < h - 1 for t in others):  # [2t] is the lower foundation
                    continue  # a card could still be built on it
            return Move(Kind.HOME, i)
        return None

    def final_key(self, state: PersianState) -> Hashable:
        # Without a redeal, pile order matters to nothing (docs/solver.md).
        return (tuple(sorted(state.piles)), state.foundations)

    def final_builds(self, state: PersianState) -> list[Move]:
        # One empty target per source will do, and never for a lone card (pile order).
        piles = state.piles
        moves: list[Move] = []
        moved_to_empty: set[int] = set()
        for m in self.game.legal_moves(state):
            if m.kind is not Kind.BUILD:
                continue
            if piles[m.dst]:
                moves.append(m)
            elif len(piles[m.src]) > 1 and m.src not in moved_to_empty:
                moved_to_empty.add(m.src)
                moves.append(m)
        return moves

    def beam_score(self, state: PersianState) -> tuple[int, ...]:
        # Cards home, then the fewest cards above a lower card of their suit.
        return (sum(state.foundations), -sum(blockers(p, _HEIGHT_BY_RANK) for p in state.piles))


def bounds_for(game: Game[Any]) -> Bounds:
    if isinstance(game, Perseverance):
        return PerseveranceBounds(game)
    if isinstance(game, PersianPatience):
        return PersianBounds(game)
    return Bounds(game)
