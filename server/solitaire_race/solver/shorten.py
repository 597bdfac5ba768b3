"""The shortening pass: a winning line made shorter, still winning, checked by the engine.

A search finds *a* win, often with detours. Three cheap rewrites, repeated while they
help and while the node budget lasts:

1. **Loops**: a position met twice on the line; the moves between go.
2. **Deletions**: each move in turn (from the end) is left out and the rest replayed; it
   stays out if the line still wins (a move label may then mean another card: the engine
   decides).
3. **Shortcuts**: from each position, every line of one or two legal moves is tried; one
   that reaches a position further along the line than its length replaces that stretch.
4. **Replays** (``Knowledge.shorten_by_replays``: Parallels and Patriarchs, whose lines of
   100-250 moves are far too long for steps 5-6): from a point chosen at random on the best
   line, a random playout (``playouts.playout_edge``) to the end; a win in fewer moves than
   the best line replaces it, after 1-3. Until the budget is spent.
5. **Beam searches** (``Bounds.beam_share``: Persian Patience, whose last phase is too big
   for step 6): short final lines (lines that never redeal again) from candidate starts,
   the deal and the layouts redeals make (``beam.py``: a beam search by builds), the
   candidates screened with a narrow beam and the better half given twice the width, again
   and again (successive halving), within that share of the budget. The best line then
   goes through 1-3.
6. **Bounded search**: a branch and bound from the start for whole lines shorter than the
   best one, split into lines that never redeal and lines that redeal again, pruned where
   the moves made plus a lower bound on the moves left (``bounds.py``) reach the best
   length, and where a position (by the knowledge's key) was already reached in as few
   moves; on lines that never redeal, a free move (``bounds.py``) is the only one tried.
   Each line it finds goes through 1-3 again and tightens the bound. Where the bounds give
   it a share (``Bounds.suffix_share``: Persian Patience), a search from the deal that does
   not end within the rest of the budget leaves that share to the same search from each
   position of the best line, the last first, the moves before it kept, down to the deal
   (a local search that never strays far from a known win).

The result is the shortest line found; when step 6 runs to its end within the budget it is
proved the shortest (``Shortened.proved``; see docs/solver.md for the games where the key
keeps distances). ``Shortened.method`` says which, with the budget. ``nodes`` counts
engine moves applied, as in the search.
"""

from __future__ import annotations

import contextlib
import math
import random
from collections.abc import Hashable, Iterator
from typing import Any, NamedTuple

from ..engine import Game, IllegalMove, Kind, Move
from .beam import final_line, final_starts
from .bounds import Bounds, bounds_for
from .knowledge import Edge, Knowledge, knowledge_for
from .playouts import playout_edge

DEFAULT_BUDGET = 200_000
_DEEPEST = 600  # no bounded search for lines longer than this (recursion depth)
_REPLAY_SEED = 2  # replays are random, but the same on every run and machine


class _Spent(Exception):
    pass


class _Capped(_Spent):
    """A step used its share of the budget."""


class _Shortener:
    def __init__(self, game: Game[Any], start: Any, line: tuple[Move, ...], budget: int) -> None:
        self.game = game
        self.start = start
        self.budget = budget
        self.nodes = 0
        self.best = list(line)  # the shortest winning line so far
        self.cap = budget  # where the current step's share of the budget ends

    def charge(self) -> None:
        """Count a node of the budget; ``_Spent`` once it is gone."""
        if self.nodes >= self.budget:
            raise _Spent
        if self.nodes >= self.cap:
            raise _Capped
        self.nodes += 1

    @contextlib.contextmanager
    def share(self, fraction: float) -> Iterator[None]:
        """Run a step on ``fraction`` of what is left of the current step's share: it ends
        quietly once that is spent (``_Capped``), and the current share is restored."""
        outer = self.cap
        self.cap = self.nodes + int(fraction * (outer - self.nodes))
        try:
            yield
        except _Capped:
            pass
        finally:
            self.cap = outer

    def apply(self, state: Any, move: Move) -> Any:
        self.charge()
        return self.game.apply(state, move)

    def positions(self, line: list[Move]) -> list[Any]:
        states = [self.start]
        for move in line:
            states.append(self.game.apply(states[-1], move))  # a known-good line: not charged
        return states

    def wins_from(self, state: Any, rest: list[Move]) -> int | None:
        """How many moves of ``rest`` win from ``state`` (it may win early), or None."""
        if self.game.is_won(state):
            return 0
        for i, move in enumerate(rest):
            try:
                state = self.apply(state, move)
            except IllegalMove:
                return None
            if self.game.is_won(state):
                return i + 1
        return None

    def cut_loops(self, line: list[Move]) -> list[Move]:
        states = self.positions(line)
        last = {s: k for k, s in enumerate(states)}
        out: list[Move] = []
        i = 0
        while i < len(line):
            if last[states[i]] > i:
                i = last[states[i]]  # skip to the last time this position occurs
                continue
            out.append(line[i])
            i += 1
        return out

    def shortcuts(self, line: list[Move]) -> list[Move]:
        states = self.positions(line)
        index = {s: k for k, s in enumerate(states)}  # the last occurrence wins
        i = 0
        out = list(line)
        while i < len(states) - 1:
            best: tuple[int, list[Move]] | None = None
            frontier: list[tuple[Any, list[Move]]] = [(states[i], [])]
            for depth in (1, 2):
                nxt: list[tuple[Any, list[Move]]] = []
                for state, path in frontier:
                    for move in self.game.legal_moves(state):
                        after = self.apply(state, move)
                        j = index.get(after)
                        if j is not None and j - i > depth and (best is None or j > best[0]):
                            best = (j, path + [move])
                        nxt.append((after, path + [move]))
                if best is not None:
                    break
                frontier = nxt
            if best is not None:
                j, path = best
                out = out[:i] + path + out[j:]
                states = self.positions(out)
                index = {s: k for k, s in enumerate(states)}
            i += 1
        return out

    def deletions(self, line: list[Move]) -> list[Move]:
        states = self.positions(line)
        i = len(line) - 1
        while i >= 0:
            rest = line[i + 1 :]
            used = self.wins_from(states[i], rest)
            if used is not None:
                line = line[:i] + rest[:used]
                states = self.positions(line)
                i = min(i, len(line)) - 1
                continue
            i -= 1
        return line

    def beams(self, bounds: Bounds) -> None:
        """Step 5, the beam searches (module doc, ``beam.py``), until the step's share of the
        budget is spent: final lines from candidate starts (``beam.final_starts``), by
        successive halving. A share of it (``bounds.beam_screen``) goes to the first round:
        each candidate in turn with a beam of ``bounds.beam_width``; then the better half of those (by the line
        each gave; ties, and beams that ran dry: in the order tried) with twice the width,
        and so on, the last one with the width doubled again and again. A line shorter
        than the best replaces it; a candidate whose beam searched every final line (the
        width cut nothing) is dropped: its line, if any, is its shortest final one."""
        pool: list[tuple[list[Move], Any]] = []
        width = bounds.beam_width
        tried: list[tuple[float, int]] = []
        with self.share(bounds.beam_screen):  # the first round
            for prefix, start in final_starts(self.game, bounds, self.best, self.start, self.apply):
                pool.append((prefix, start))
                self._beam(bounds, prefix, start, width, tried, len(pool) - 1)
        while tried:
            pool = [pool[i] for _, i in sorted(tried)[: max(1, len(tried) // 2)]]
            width *= 2
            tried = []
            for i, (prefix, start) in enumerate(pool):
                self._beam(bounds, prefix, start, width, tried, i)

    def _beam(
        self, bounds: Bounds, prefix: list[Move], start: Any, width: int, tried: list[tuple[float, int]], i: int
    ) -> None:
        """One candidate's beam search (``beams``): its result appended to ``tried``."""
        least = bounds.remaining(start, True)
        if least is None or len(prefix) + least >= len(self.best):
            return  # no final line from there, or none shorter than the best
        tail, cut = final_line(self.game, bounds, start, width, self.apply)
        if tail is not None and len(prefix) + len(tail) < len(self.best):
            self.best = prefix + tail
        if cut:  # else the beam searched every final line from there: a wider one finds no other
            # A beam that ran dry ranks last: a wider one may get through.
            tried.append((math.inf if tail is None else len(prefix) + len(tail), i))

    def suffixes(self, know: Knowledge[Any], bounds: Bounds) -> None:
        """Step 6's second part (module doc): the branch and bound from each position of
        the best line, the last first, down to the deal, until the budget is spent. The
        positions reached are shared: each search that ended searched every line below them
        within a bound no tighter than now. Returns only when the search from the deal
        ended too (then no line is shorter than ``self.best``)."""
        reached: dict[Hashable, int] = {}
        i = len(self.best) - 1
        while i >= 0:
            self.bounded(know, bounds, i, reached)
            i = min(i, len(self.best)) - 1

    def bounded(
        self, know: Knowledge[Any], bounds: Bounds, root: int = 0, reached: dict[Hashable, int] | None = None
    ) -> None:
        """Step 6 (module doc): branch and bound from the best line's position ``root`` (the
        moves before it kept) for lines shorter than ``self.best``, which it replaces
        (rewritten) with each one it finds. Returns only when it has searched every line
        from there (then none is shorter than ``self.best``)."""
        game = self.game
        reached = {} if reached is None else reached
        path: list[Move] = self.best[:root]
        start = self.positions(path)[-1]
        bound = len(self.best)  # only lines shorter than this are looked for

        def walk(state: Any, depth: int, final: bool | None) -> None:
            nonlocal bound
            if game.is_won(state):
                self.best = list(path)
                bound = depth
                self.best = self.rewrite(self.best)
                bound = len(self.best)
                return
            if final is None and bounds.split:
                # The lines that never redeal, and those that redeal again: the kind with the
                # lower bound first (ties: final lines, whose bounds prune more).
                kinds = [(bounds.remaining(state, kind), not kind, kind) for kind in (True, False)]
                for _, _, kind in sorted((k for k in kinds if k[0] is not None), key=lambda k: k[:2]):
                    walk(state, depth, kind)
                return
            least = bounds.remaining(state, final)
            if least is None or depth + least >= bound:
                return
            key = (know.key(state), final)
            if reached.get(key, bound) <= depth:
                return
            reached[key] = depth
            if know.dead(state):
                return
            free = bounds.free(state) if final else None
            if free is not None:
                edges: list[Edge] = [(free,)]
            else:
                edges = [e for e, _ in know.edges(state) if not (final and e[-1].kind is Kind.REDEAL)]
            children = []
            for i, edge in enumerate(edges):
                child = state
                for move in edge:
                    child = self.apply(child, move)
                # After the redeal a redealing line was looking for, either kind may follow.
                mode = None if edge[-1].kind is Kind.REDEAL else final
                least = bounds.remaining(child, mode)
                if least is not None:
                    children.append((len(edge) + least, i, edge, child, mode))
            if bounds.order_children:  # the most promising first: the lowest bound on the line
                children.sort(key=lambda c: c[:2])
            for _, _, edge, child, mode in children:
                path.extend(edge)
                walk(child, depth + len(edge), mode)
                del path[len(path) - len(edge) :]

        walk(start, root, None)

    def replays(self, know: Knowledge[Any], line: list[Move]) -> list[Move]:
        """Step 4 (module doc), until the budget is spent; the shortest line found."""
        rng = random.Random(_REPLAY_SEED)
        states = self.positions(line)
        try:
            while len(line) > 1:  # a line of one move has nothing shorter to find
                self.charge()  # every replay costs a node: one that plays nothing too
                cut = rng.randrange(len(line))
                tried, state = line[:cut], states[cut]
                while not self.game.is_won(state) and len(tried) < len(line) - 1:
                    edge = playout_edge(know, state, rng)
                    if edge is None:
                        break
                    for move in edge:
                        state = self.apply(state, move)
                    tried += edge
                if self.game.is_won(state) and len(tried) < len(line):
                    line = self.rewrite(tried)
                    states = self.positions(line)
        except _Spent:
            pass
        return line

    def rewrite(self, line: list[Move]) -> list[Move]:
        while True:
            before = len(line)
            line = self.cut_loops(line)
            line = self.deletions(line)
            line = self.shortcuts(line)
            if len(line) >= before:
                return line


class Shortened(NamedTuple):
    """A shortened line, the nodes spent, and how it was found (``method``, in words, for
    the logs): ``proved`` when the bounded search ran to its end, so no line is shorter."""

    line: tuple[Move, ...]
    nodes: int
    proved: bool
    method: str


def shorten(game: Game[Any], start: Any, line: tuple[Move, ...], budget: int = DEFAULT_BUDGET) -> Shortened:
    """A line at most as long as ``line`` that also wins from ``start`` (see the module doc)."""
    worker = _Shortener(game, start, line, budget)
    know = knowledge_for(game)
    bounds = bounds_for(game)
    proved = False
    try:
        worker.best = worker.rewrite(worker.best)
        if know.shorten_by_replays:
            worker.best = worker.replays(know, worker.best)  # spends the whole budget
        if len(worker.best) <= _DEEPEST:
            if bounds.beam_share:
                with worker.share(bounds.beam_share):
                    worker.beams(bounds)
                worker.best = worker.rewrite(worker.best)
            if not bounds.suffix_share:
                worker.bounded(know, bounds)
                proved = True
            else:
                worker.cap = worker.nodes + int((1 - bounds.suffix_share) * (budget - worker.nodes))
                try:
                    worker.bounded(know, bounds)
                    proved = True
                except _Capped:
                    worker.cap = budget
                    worker.suffixes(know, bounds)
                    proved = True
    except _Spent:
        pass  # every step kept a winning line: the best so far stands
    if proved:
        method = f"proved shortest: the bounded search ended after {worker.nodes:,} of {budget:,} nodes"
    else:
        how = "random replays" if know.shorten_by_replays else "rewrites and the bounded search"
        if bounds.beam_share and not know.shorten_by_replays:
            how = "rewrites, beam searches and the bounded search"
        method = f"shortest found by {how} within {budget:,} nodes (not proved shortest)"
    return Shortened(tuple(worker.best), worker.nodes, proved, method)
