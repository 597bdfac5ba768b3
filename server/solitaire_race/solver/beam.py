"""A beam search for short *final* lines (lines that never redeal): where a game's last
phase is too big for the shortening's branch and bound (``shorten.py``), it finds short
lines there cheaply, to give that search a tight bound from the start.

Where every card not home goes home in exactly one move of its own (Persian Patience:
single cards move, and a card leaves the foundations never), a final line from a position
with ``left`` cards not home has ``left`` foundation moves, so its length is ``left`` plus
its other moves (*builds*): the shortest final line is the one with fewest builds. The
search goes by builds: layer ``b`` holds positions reached with ``b`` builds, each with
every position its foundation moves reach (those cost nothing), and only the ``width``
best-scoring positions of a layer (``Bounds.beam_score``) are expanded by one build. The
first layer holding a win gives the line. A position already reached with as few builds is
not entered again (by ``Bounds.final_key``: positions with the same future for final
lines), and the free moves (``Bounds.free``, each starting a shortest final line) are
played at once wherever they apply.

It is a heuristic: it finds a real line (every move is applied by the engine through
``apply``), and a wider beam is not always better (another layer's best may be cut). Only
where the width never cut a position off is it exact: it then searched every final line,
fewest builds first, so its line is the shortest final line, and a dry beam proves there
is none (``tests/test_shorten_bounds.py`` checks both against breadth-first search).
``shorten.py`` runs it from many candidate starts (``final_starts``) with growing widths.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Hashable, Iterator
from typing import Any

from ..engine import Game, Kind, Move
from .bounds import Bounds

Apply = Callable[[Any, Move], Any]


def _settle(bounds: Bounds, apply: Apply, state: Any, path: tuple[Move, ...]) -> tuple[Any, tuple[Move, ...]]:
    """Play free moves while there is one."""
    while (move := bounds.free(state)) is not None:
        state = apply(state, move)
        path += (move,)
    return state, path


def final_line(
    game: Game[Any], bounds: Bounds, start: Any, width: int, apply: Apply
) -> tuple[list[Move] | None, bool]:
    """A final line that wins from ``start`` with few builds (see the module doc), or None
    when the beam runs dry; and whether the width cut any position off (if not, a dry
    beam searched every final line: none wins). ``apply`` applies a move (and counts it)."""
    state, path = _settle(bounds, apply, start, ())
    key = bounds.final_key(state)
    layer: dict[Hashable, tuple[Any, tuple[Move, ...]]] = {key: (state, path)}
    reached: set[Hashable] = {key}  # every position entered, with as few builds as now or fewer
    cut = False
    while layer:
        frontier = list(layer.values())
        i = 0
        while i < len(frontier):  # every position the layer's foundation moves reach
            state, path = frontier[i]
            i += 1
            if game.is_won(state):
                return list(path), cut
            for move in game.legal_moves(state):
                if move.kind is Kind.HOME:
                    child, line = _settle(bounds, apply, apply(state, move), path + (move,))
                    key = bounds.final_key(child)
                    if key not in reached:
                        reached.add(key)
                        frontier.append((child, line))
        nxt: dict[Hashable, tuple[Any, tuple[Move, ...]]] = {}
        expanded = 0
        for state, path in sorted(frontier, key=lambda sp: bounds.beam_score(sp[0]), reverse=True):
            if expanded == width:
                cut = True
                break
            before = len(nxt)
            for move in bounds.final_builds(state):
                child, line = _settle(bounds, apply, apply(state, move), path + (move,))
                key = bounds.final_key(child)
                if key not in reached:
                    reached.add(key)
                    nxt[key] = (child, line)
            expanded += len(nxt) > before  # a position that leads nowhere new takes no place
        layer = nxt
    return None, cut


def final_starts(
    game: Game[Any], bounds: Bounds, line: list[Move], start: Any, apply: Apply
) -> Iterator[tuple[list[Move], Any]]:
    """Where final lines may start, each once (by ``Bounds.final_key``) with the moves that
    reach it: the layout a redeal makes from each position of ``line`` (the latest
    first), ``start`` itself, then the layout a redeal makes from each position reached
    from ``start`` without one, then with one, breadth first (the fewest moves first)."""
    redeal = Move(Kind.REDEAL)
    given: set[Hashable] = set()

    def new(state: Any) -> bool:
        key = bounds.final_key(state)
        if key in given:
            return False
        given.add(key)
        return True

    positions = [start]
    for move in line:
        positions.append(apply(positions[-1], move))
    for k in range(len(line) - 1, -1, -1):
        if redeal in game.legal_moves(positions[k]):
            after = apply(positions[k], redeal)
            if new(after):
                yield line[:k] + [redeal], after
    if new(start):
        yield [], start
    paths: dict[Any, list[Move]] = {start: []}
    queue = deque([start])
    while queue:
        state = queue.popleft()
        path = paths[state]
        for move in game.legal_moves(state):
            child = apply(state, move)
            if child in paths:
                continue
            if move.kind is Kind.REDEAL:
                if new(child):
                    yield path + [move], child
                if redeal not in game.legal_moves(child):
                    continue  # no redeal left: the position's final lines are all there is
            paths[child] = path + [move]
            queue.append(child)
