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
``apply``), never a proof, and a wider beam is not always better (another layer's best may
be cut). ``shorten.py`` runs it with several widths from the positions after the best
line's redeals, and keeps what is shorter.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
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


def final_line(game: Game[Any], bounds: Bounds, start: Any, width: int, apply: Apply) -> list[Move] | None:
    """A final line that wins from ``start`` with few builds (see the module doc), or None
    when the beam runs dry. ``apply`` applies a move (and counts it)."""
    state, path = _settle(bounds, apply, start, ())
    key = bounds.final_key(state)
    layer: dict[Hashable, tuple[Any, tuple[Move, ...]]] = {key: (state, path)}
    reached: set[Hashable] = {key}  # every position entered, with as few builds as now or fewer
    while layer:
        frontier = list(layer.values())
        i = 0
        while i < len(frontier):  # every position the layer's foundation moves reach
            state, path = frontier[i]
            i += 1
            if game.is_won(state):
                return list(path)
            for move in game.legal_moves(state):
                if move.kind is Kind.HOME:
                    child, line = _settle(bounds, apply, apply(state, move), path + (move,))
                    key = bounds.final_key(child)
                    if key not in reached:
                        reached.add(key)
                        frontier.append((child, line))
        best = sorted(frontier, key=lambda sp: bounds.beam_score(sp[0]), reverse=True)[:width]
        nxt: dict[Hashable, tuple[Any, tuple[Move, ...]]] = {}
        for state, path in best:
            for move in bounds.final_builds(state):
                child, line = _settle(bounds, apply, apply(state, move), path + (move,))
                key = bounds.final_key(child)
                if key not in reached:
                    reached.add(key)
                    nxt[key] = (child, line)
        layer = nxt
    return None
