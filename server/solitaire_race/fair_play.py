"""Fair-play assessment of a result from its move times: could a person have played it?

Pure: a function of the game, the racer's moves with the race time each was received at
(``at_ms``; moves sent in one message share one time) and the result. A result judged
implausible is **held**: stored, shown to its owner marked as held, kept off every public
board until an operator clears it (``solitaire-race review``; docs/fair-play.md, which
gives the figures the thresholds rest on). The rules:

- **Many moves in one message.** The web client sends one move per message; a person at
  the terminal client may type a few on one line, and its "f" sends every move home at
  once (moves home do not count). More than ``MAX_BATCH`` other moves in one message is a
  program.
- **Faster than a person.** At least ``MIN_MESSAGES`` messages, and more than half of
  the gaps between them shorter than ``MIN_GAP_MS``.
- **A win in less time than reading the layout takes.** A win in under ``MIN_WIN_MS``.

The two rules of pace do not apply to a game played with one key (its ``quick_move``:
Clock's play is forced, and a key held down repeats faster than any threshold).
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from .engine import Game, Kind, Move, NotationError

MAX_BATCH = 6  # moves in one message that are not moves home
MIN_GAP_MS = 120  # a gap between two of a person's messages is longer than this...
MIN_MESSAGES = 10  # ...in most gaps of a game of at least this many messages
MIN_WIN_MS = 10_000  # no one reads a layout and wins it faster


@dataclass(frozen=True, slots=True)
class Assessment:
    """``held``: implausible, kept off the public boards; ``reasons``: the rules it broke,
    one sentence each; ``evidence``: the figures they were judged on."""

    held: bool
    reasons: tuple[str, ...] = ()
    evidence: dict[str, Any] = field(default_factory=dict)


PLAUSIBLE = Assessment(False)


def assess(
    game: Game[Any], moves: Sequence[str], times_ms: Sequence[int], won: bool, time_ms: int | None,
    parse: Callable[[str], Move] | None = None,
) -> Assessment:
    """``moves`` in the order played, ``times_ms[i]`` the race time ``moves[i]`` came at;
    ``parse`` reads a move (the game's own by default; a room passes its parse cache)."""
    if not moves:
        return PLAUSIBLE
    parse = parse or game.parse_move
    messages: list[tuple[int, int]] = []  # (at_ms, moves in it that are not moves home)
    for text, at in zip(moves, times_ms, strict=True):
        home = _is_home(parse, text)
        if messages and messages[-1][0] == at:
            messages[-1] = (at, messages[-1][1] + (not home))
        else:
            messages.append((at, int(not home)))
    gaps = [b[0] - a[0] for a, b in itertools.pairwise(messages)]
    fast = sum(1 for gap in gaps if gap < MIN_GAP_MS)
    batch = max(count for _, count in messages)
    evidence = {
        "moves": len(moves), "messages": len(messages), "largest_batch": batch,
        "fast_gaps": fast, "gaps": len(gaps), "median_gap_ms": sorted(gaps)[len(gaps) // 2] if gaps else None,
        "first_move_ms": times_ms[0], "time_ms": time_ms,
    }
    reasons = []
    if batch > MAX_BATCH:
        reasons.append(f"{batch} moves (not counting moves home) in one message: a person's client sends one")
    paced = game.quick_move is None  # (a one-key game: no pace rules)
    if paced and len(messages) >= MIN_MESSAGES and fast * 2 > len(gaps):
        reasons.append(f"{fast} of {len(gaps)} gaps between messages under {MIN_GAP_MS} ms: faster than a person plays")
    if paced and won and time_ms is not None and time_ms < MIN_WIN_MS:
        reasons.append(f"won in {time_ms / 1000:.1f} s: less than reading the layout takes ({MIN_WIN_MS // 1000} s)")
    return Assessment(bool(reasons), tuple(reasons), evidence)


def _is_home(parse: Callable[[str], Move], text: str) -> bool:
    try:
        return parse(text).kind is Kind.HOME
    except NotationError:
        return False
