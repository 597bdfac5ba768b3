"""The search core: depth-first with a transposition table, safe edges first, move-order
duplicates pruned, helped by a best-first search that only looks for wins; a node budget
and a time budget.

It knows no game: keys, edges, safe edges, dead positions and scores come from a
``Knowledge`` (``knowledge.py``), the rules from the engine (``apply``, ``is_won``, and
``legal_moves`` through the knowledge).

Depth-first (``DepthFirst``), the one that can prove a deal unwinnable:

- **Transposition table.** Every position is entered once under its key and never
  searched again (the sleep-set rule below is the one exception).
- **Safe edges.** When the knowledge names a safe edge, it is the only one tried; a
  position the knowledge calls dead gets no edges.
- **Move-order duplicates** (sleep sets, P. Godefroid 1996). After edge ``a`` has been
  tried from a position, a later sibling ``b`` with a footprint disjoint from ``a``'s
  hands ``a`` down *asleep*: ``b`` then ``a`` reaches the position that ``a`` then ``b``
  already reached, so ``a`` is not tried below ``b`` until a move that touches it has been
  played. A position met again with fewer sleeping edges is searched again for exactly the
  edges that slept before and are awake now (its stored set shrinks), which keeps the search
  complete: a win is found whenever one exists, so "unwinnable" is a proof
  (``tests/test_solver.py`` compares the verdicts with a search that has none of the
  reductions).

Best-first (``BestFirst``) expands the position with the best knowledge score
(``Knowledge.best_first_score``) next (ties: the earliest). It cannot use sleep sets, so it
only helps where the knowledge says depth-first ordering is a poor guide
(``Knowledge.best_first_share``); if it runs out of
positions, that too proves the deal unwinnable (it tried every edge of every position).
A second best-first (``Knowledge.newest_first_share``) breaks ties by the newest position
instead, following a plateau down one line rather than across it, and orders by
``Knowledge.score``: the two win different deals (Persian Patience runs both).

Playouts (``Playouts``), where neither order finds wins (Parallels, Patriarchs:
``Knowledge.playout_share``): a line is played out at random (by the game's playout
model and policy, ``playouts.py``: mostly a move home when there is one) until the game
is won or stuck; then again and again from a point chosen at random on the best line so
far, keeping the new line when it ends with as many cards home or more (an iterated local
search over whole lines). Best-first fails there because its plateaus (equal cards home,
told apart by nothing) are searched breadth-first near the end of the line, where the
early choices that lost the game cannot be changed; a playout changes any choice, early
ones too.
It only looks for wins: running out proves nothing. Its random numbers come from a
generator seeded with a constant, so its answers too depend only on the node budget.

Endgames (``Endgames``), where a first deal has few positions, so its redeal few layouts
(``Knowledge.endgame``, ``Knowledge.endgame_share``: Cruel and Persian Patience, after the
first redeal): each layout gets a best-first search of its own, and they take turns in
widening passes, instead of one search spending the budget in the few its score prefers.
It only looks for wins.

Budgets: ``nodes`` counts engine moves applied (an edge of several moves counts each).
The two searches take turns in slices of nodes (sizes doubling), so results depend only on
the node budget. The time budget is only a guard: ``time.perf_counter`` is read every few
hundred edges, so a result depends on the machine only when the time budget binds before
the node budget. Use node budgets wherever the answer must be reproducible (tests, the
daily deal).
"""

from __future__ import annotations

import heapq
import random
import time
from collections.abc import Hashable
from dataclasses import dataclass
from typing import Any, Literal

from ..engine import Game, Move
from .knowledge import Edge, Footprint, Knowledge
from .playouts import model_for

Status = Literal["won", "unwinnable", "unknown"]

_NOTHING: frozenset[Any] = frozenset()
_CLOCK_EVERY = 256  # read the clock once per this many edges
_FIRST_SLICE = 2_000  # nodes in the first turn of the depth-first search
_PLAYOUT_SEED = 1  # playouts are random, but the same on every run and every machine
ENDGAME_CAP = 1_000  # nodes each endgame gets in the first pass (``Endgames``)
ENDGAME_WIDTH = 4  # endgames in the first pass


@dataclass(frozen=True, slots=True)
class Found:
    """What the search found: a status, the winning moves (engine values) when won, and the
    work done."""

    status: Status
    moves: tuple[Move, ...] | None
    nodes: int
    positions: int  # distinct position keys stored by the searches


class _Guard:
    """The shared budget: nodes spent so far and the time guard."""

    def __init__(self, node_budget: int, time_budget_s: float | None) -> None:
        self.node_budget = node_budget
        self.deadline = None if time_budget_s is None else time.perf_counter() + time_budget_s
        self.nodes = 0
        self._edges = 0

    def out_of_time(self) -> bool:
        self._edges += 1
        return (
            self.deadline is not None
            and self._edges % _CLOCK_EVERY == 0
            and time.perf_counter() > self.deadline
        )

    def timed_out(self) -> bool:
        return self.deadline is not None and time.perf_counter() > self.deadline


def _apply(game: Game[Any], state: Any, edge: Edge) -> Any:
    for move in edge:
        state = game.apply(state, move)
    return state


def _order(step: tuple[Edge, Footprint]) -> tuple[tuple[str, int, int], ...]:
    # A fixed order for edges that come back out of a set (sets have no stable order).
    return tuple((m.kind.value, m.src, m.dst) for m in step[0])


class _Frame:
    """One position on the depth-first stack and the edges still to try from it."""

    __slots__ = ("index", "sleep", "state", "steps", "taken")

    def __init__(
        self, state: Any, steps: list[tuple[Edge, Footprint, Any]], sleep: set[Any] | None
    ) -> None:
        self.state = state
        self.steps = steps  # (edge, footprint, the position it leads to if already known)
        self.index = 0
        self.sleep = sleep  # None: no move-order pruning below this position
        self.taken: Edge = ()


class DepthFirst:
    """A resumable depth-first search (see the module doc)."""

    def __init__(self, game: Game[Any], know: Knowledge[Any], root: Any) -> None:
        self.game = game
        self.know = know
        self.table: dict[Hashable, frozenset[Any]] = {}
        first = self._enter(root, _NOTHING)
        self.stack: list[_Frame] = [first] if first is not None else []
        self.result: Found | None = None

    def _enter(self, state: Any, sleep: frozenset[Any]) -> _Frame | None:
        know, table = self.know, self.table
        key = know.key(state)
        stable = key is state  # move labels mean the same at every position of this key
        stored = table.get(key)
        if stored is not None:
            awake = stored - sleep
            if not awake:
                return None
            # Asleep at the first visit, awake now: search those edges here too.
            kept = stored & sleep
            table[key] = kept
            todo = sorted(awake, key=_order)
            return _Frame(state, [(e, fp, None) for e, fp in todo], set(kept))
        if know.dead(state):
            table[key] = _NOTHING
            return None
        safe = know.safe(state)
        if safe is not None:
            table[key] = _NOTHING
            edge, after = safe
            return _Frame(state, [(edge, None, after)], None)
        steps = know.ordered(state)
        if not stable:
            table[key] = _NOTHING
            return _Frame(state, steps, None)
        table[key] = sleep
        return _Frame(state, [s for s in steps if (s[0], s[1]) not in sleep], set(sleep))

    def run(self, guard: _Guard, until: int) -> Found | None:
        """Search until the guard's node count reaches ``until``; a result, or None."""
        if self.result is not None:
            return self.result
        game, stack = self.game, self.stack
        while (step := _next_child(game, stack, guard, until)) is not None:
            frame, edge, fp, child = step
            if game.is_won(child):
                self.result = Found("won", _line(stack), guard.nodes, 0)
                return self.result
            child_sleep = _NOTHING
            if frame.sleep is not None:
                if fp is not None and frame.sleep:
                    child_sleep = frozenset(
                        t for t in frame.sleep if t[1] is not None and fp.isdisjoint(t[1])
                    )
                frame.sleep.add((edge, fp))
            nxt = self._enter(child, child_sleep)
            if nxt is not None:
                stack.append(nxt)
        if stack:
            return None  # the budget ran out first
        self.result = Found("unwinnable", None, guard.nodes, 0)
        return self.result


def _next_child(
    game: Game[Any], stack: list[_Frame], guard: _Guard, until: int
) -> tuple[_Frame, Edge, Footprint, Any] | None:
    """The next step of a depth-first walk on ``stack`` (frames whose edges are all tried are
    popped): its frame, with ``taken`` set to the edge, the edge, its footprint and the
    position it reaches, its nodes counted. None when the walk is over (``stack`` is empty)
    or the budget ran out first (it is not)."""
    while stack:
        frame = stack[-1]
        if frame.index == len(frame.steps):
            stack.pop()
            continue
        if guard.nodes >= until or guard.out_of_time():
            return None
        edge, fp, child = frame.steps[frame.index]
        frame.index += 1
        if child is None:
            child = _apply(game, frame.state, edge)
        guard.nodes += len(edge)
        frame.taken = edge
        return frame, edge, fp, child
    return None


def _line(stack: list[_Frame]) -> tuple[Move, ...]:
    """The moves that lead down ``stack`` to the position last reached."""
    return tuple(m for f in stack for m in f.taken)


class BestFirst:
    """A resumable best-first search for a win: the best-scoring position is expanded next."""

    def __init__(self, game: Game[Any], know: Knowledge[Any], root: Any, newest: bool = False) -> None:
        self.game = game
        self.know = know
        # The oldest-first search follows the knowledge's best-first score, the newest-first
        # one its plain score (Persian Patience: each wins deals the other misses).
        self.score = know.score if newest else know.best_first_score
        root_key = know.key(root)
        # key -> (key of the position it was first reached from, edge); the root has None
        self.parent: dict[Hashable, tuple[Hashable, Edge] | None] = {root_key: None}
        self.heap: list[tuple[float, int, Any]] = [(-self.score(root), 0, root)]
        self.count = 0
        # Ties (equal scores) go to the oldest position, or with ``newest`` to the newest: a
        # plateau is then followed down one line (depth-first) instead of across.
        self.tie = -1 if newest else 1
        self.result: Found | None = None

    def run(self, guard: _Guard, until: int) -> Found | None:
        if self.result is not None:
            return self.result
        game, know, parent, heap, score = self.game, self.know, self.parent, self.heap, self.score
        while heap:
            if guard.nodes >= until or guard.timed_out():
                return None
            _, _, state = heapq.heappop(heap)
            if know.dead(state):
                continue
            safe = know.safe(state)
            if safe is not None:
                steps: list[tuple[Edge, Footprint, Any]] = [(safe[0], None, safe[1])]
            else:
                steps = know.ordered(state)
            key = know.key(state)
            for edge, _, child in steps:
                if child is None:
                    child = _apply(game, state, edge)
                guard.nodes += len(edge)
                child_key = know.key(child)
                if child_key in parent:
                    continue
                parent[child_key] = (key, edge)
                if game.is_won(child):
                    self.result = Found("won", self._line(child_key), guard.nodes, 0)
                    return self.result
                self.count += 1
                heapq.heappush(heap, (-score(child), self.tie * self.count, child))
        self.result = Found("unwinnable", None, guard.nodes, 0)
        return self.result

    def _line(self, key: Hashable) -> tuple[Move, ...]:
        edges: list[Edge] = []
        link = self.parent[key]
        while link is not None:
            key, edge = link
            edges.append(edge)
            link = self.parent[key]
        return tuple(m for edge in reversed(edges) for m in edge)


class Playouts:
    """A resumable iterated local search over random playouts (see the module doc); the
    playouts themselves run on the game's model (``playouts.model_for``)."""

    def __init__(self, game: Game[Any], know: Knowledge[Any], root: Any) -> None:
        self.model = model_for(game, know)
        self.rng = random.Random(_PLAYOUT_SEED)
        self.best: list[Edge] = []  # the best line so far
        self.positions = [self.model.start(root)]  # positions[i] is reached by best[:i]
        self.best_home = -1
        self.result: Found | None = None

    def run(self, guard: _Guard, until: int) -> Found | None:
        if self.result is not None:
            return self.result
        rng = self.rng
        while guard.nodes < until and not guard.timed_out():
            cut = rng.randrange(len(self.best) + 1)
            line, positions = self.best[:cut], self.positions[: cut + 1]
            spent, home, won = self.model.extend(positions[-1], rng, until - guard.nodes, line, positions)
            guard.nodes += spent
            if won:
                self.result = Found("won", tuple(m for edge in line for m in edge), guard.nodes, 0)
                return self.result
            if home >= self.best_home:  # sideways too: it keeps the search moving on a plateau
                self.best, self.positions, self.best_home = line, positions, home
        return None


class Endgames:
    """A resumable search for a win through the endgames, the first positions of a later
    phase (``Knowledge.endgame``): a depth-first walk over the positions before it finds
    them one by one, each gets a best-first search of its own (``BestFirst``, with the
    knowledge's keys and safe edges), and the searches take turns in passes: pass k gives
    the first ``ENDGAME_WIDTH * 2**k`` endgames found ``ENDGAME_CAP * 2**k`` nodes each in
    all. Where there are few endgames, this spreads the budget over them instead of one
    search sinking it into the first, or the best-scoring, few. It only looks for wins."""

    def __init__(self, game: Game[Any], know: Knowledge[Any], root: Any) -> None:
        self.game = game
        self.know = know
        self.seen: set[Hashable] = {know.key(root)}
        self.walk: list[_Frame] = [_Frame(root, know.ordered(root), None)]  # positions before the endgames
        self.endgame_keys: set[Hashable] = set()
        # Each endgame: its search, the nodes it has had, and the moves that reach it.
        self.open: list[tuple[BestFirst, list[int], tuple[Move, ...]]] = []
        self.cap, self.width, self.index = ENDGAME_CAP, ENDGAME_WIDTH, 0
        self.result: Found | None = None

    def _find_endgame(self, guard: _Guard, until: int) -> bool | Found | None:
        """Walk on to the next new endgame: True when one was added, False when there are no
        more, None when the budget ran out first, a win when the walk met one."""
        game, know, walk = self.game, self.know, self.walk
        while (step := _next_child(game, walk, guard, until)) is not None:
            child = step[3]
            if game.is_won(child):
                return Found("won", _line(walk), guard.nodes, 0)
            key = know.key(child)
            if know.endgame(child):
                if key not in self.endgame_keys:
                    self.endgame_keys.add(key)
                    self.open.append((BestFirst(game, know, child), [0], _line(walk)))
                    return True
            elif key not in self.seen:
                self.seen.add(key)
                if not know.dead(child):
                    walk.append(_Frame(child, know.ordered(child), None))
        return None if walk else False  # the budget ran out first, or no endgame is left

    def run(self, guard: _Guard, until: int) -> Found | None:
        if self.result is not None:
            return self.result
        while guard.nodes < until and not guard.timed_out():
            if self.index >= min(self.width, len(self.open)):
                more = self._find_endgame(guard, until) if self.index < self.width else False
                if isinstance(more, Found):
                    self.result = more
                    return more
                if more is None:
                    return None
                if not more:  # the pass is over: keep the endgames not yet decided
                    self.open = [e for e in self.open if e[0].result is None]
                    if not self.open and not self.walk:
                        return None  # every endgame searched to its end: nothing more to do
                    self.cap, self.width, self.index = 2 * self.cap, 2 * self.width, 0
                continue
            best, spent, prefix = self.open[self.index]
            if best.result is None and spent[0] < self.cap:
                before = guard.nodes
                found = best.run(guard, min(until, guard.nodes + self.cap - spent[0]))
                spent[0] += guard.nodes - before
                if found is not None and found.status == "won":
                    assert found.moves is not None
                    self.result = Found("won", prefix + found.moves, guard.nodes, 0)
                    return self.result
                if found is None and spent[0] < self.cap:
                    return None  # the turn is over, not this endgame's share
            self.index += 1
        return None


def search(
    game: Game[Any], know: Knowledge[Any], root: Any, *, node_budget: int, time_budget_s: float | None
) -> Found:
    """Depth-first, taking turns with best-first (oldest or newest first on ties) and the
    playouts when the knowledge gives them a share of the budget (``best_first_share``,
    ``newest_first_share``, ``playout_share``); the playouts
    first get a head start where the knowledge gives them one (``playout_head_start``)."""
    if game.is_won(root):
        return Found("won", (), 0, 1)
    guard = _Guard(node_budget, time_budget_s)
    dfs = DepthFirst(game, know, root)
    bfs = BestFirst(game, know, root) if know.best_first_share > 0 else None
    newest = BestFirst(game, know, root, newest=True) if know.newest_first_share > 0 else None
    playouts = Playouts(game, know, root) if know.playout_share > 0 else None
    endgames = Endgames(game, know, root) if know.endgame_share > 0 else None
    helpers: list[tuple[BestFirst | Playouts | Endgames | None, float]] = [
        (bfs, know.best_first_share), (newest, know.newest_first_share), (playouts, know.playout_share),
        (endgames, know.endgame_share),
    ]
    dfs_share = 1 - sum(share for _, share in helpers)
    slice_ = _FIRST_SLICE
    found: Found | None = None
    if playouts is not None and know.playout_head_start:
        found = playouts.run(guard, min(node_budget, know.playout_head_start))
    while found is None:
        found = dfs.run(guard, min(node_budget, guard.nodes + slice_))
        for helper, share in helpers:
            if found is None and helper is not None:
                found = helper.run(guard, min(node_budget, guard.nodes + int(slice_ * share / dfs_share)))
        if found is None and (guard.nodes >= node_budget or guard.timed_out()):
            found = Found("unknown", None, guard.nodes, 0)
        slice_ *= 2
    positions = len(dfs.table) + sum(len(b.parent) for b in (bfs, newest) if b)
    positions += len(playouts.positions) if playouts else 0
    if endgames:
        positions += len(endgames.seen) + sum(len(e[0].parent) for e in endgames.open)
    return Found(found.status, found.moves, guard.nodes, positions)
