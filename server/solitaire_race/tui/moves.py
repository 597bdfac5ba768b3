"""Turning what a person types into the moves the client sends: short forms, expanded.

The server is the judge of every move: anything typed in a game's notation
(``docs/games/``) is sent as it is, and the server's reason is shown when it refuses. The
client only expands a few short forms, reading the player's own view (``client.known``)
and what each game declares of its notation (``Game.short_forms``, ``Game.quick_move``).
What is typed, in which games, and what is sent (the table in ``docs/terminal.md``):

- a pile number alone (``3``), in the Perseverance family and Persian Patience: ``3>f`` if
  its top card goes home, else ``3>N`` for the one pile it fits; if it fits several piles,
  nothing is sent and the choices are listed; if it has no move, ``3>f`` (the server says why).
- a source alone (``c2``, ``5``, ``w``), in Parallels and Patriarchs: ``c2>A`` or ``c2>K``,
  whichever foundation the card fits; both: nothing sent, the choices listed; neither:
  ``c2>A`` (the server says why).
- Enter on an empty line, in Clock (a game's ``quick_move``): ``p``.
- ``f``, in every game but Clock: every foundation move there is now, in one message (the
  client repeats while more appear).
- ``3>f, 9>f``, in every game: several moves in one message, in order, each sent as typed
  (short forms are for a move typed alone, since each later move starts from a position the
  client has not seen yet).

A bare number is a pile only when it is one (1-12, or 1-8 in Persian Patience), so ``12`` is
pile 12 in Perseverance, but ``35`` is still ``3>5`` in Persian Patience.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from ..client.known import home_chain, legal_moves
from ..engine import Kind, get_game

MAX_MOVES = 64  # moves per `move` message (docs/protocol.md)


@dataclass(frozen=True)
class Expansion:
    """What to send for one line of input, and what to tell the player about it."""

    moves: list[str] = field(default_factory=list)  # empty: send nothing
    note: str | None = None  # the expansion made, or why nothing is sent
    all_home: bool = False  # the ``f`` command: the client asks again after each result


def _one(text: str, view: dict[str, Any]) -> tuple[str | None, str | None]:
    """One move's text after expansion, and a note; (None, note) when ambiguous."""
    game = get_game(view["game"])
    forms = game.short_forms
    t = text.strip().lower()
    if forms is None or not re.fullmatch(forms.source, t):
        return text.strip(), None
    kinds = (Kind.HOME, Kind.BUILD) if forms.builds else (Kind.HOME,)
    mine = [m for m in legal_moves(view) if m.kind in kinds and game.source_text(m) == t]
    homes = [game.format_move(m) for m in mine if m.kind is Kind.HOME]
    if len(homes) == 1:
        return homes[0], None
    if homes:
        return None, f"{t} fits both foundations: type {' or '.join(homes)}"
    builds = [game.format_move(m) for m in mine]
    if len(builds) == 1:
        return builds[0], None
    if builds:
        targets = [b.split(">", 1)[1] for b in builds]
        return None, f"pile {t} fits on piles {', '.join(targets)}: type {' or '.join(builds)}"
    return f"{t}>{forms.home}", None  # no move from there: the server says why


def expand(text: str, view: dict[str, Any]) -> Expansion:
    """The moves to send for ``text`` typed while playing ``view``."""
    stripped = text.strip()
    if not stripped:
        quick = get_game(view["game"]).quick_move
        return Expansion([quick]) if quick else Expansion()
    if stripped.lower() in ("f", "home"):
        chain = home_chain(view, MAX_MOVES)
        if not chain:
            return Expansion(note="no card can go to a foundation now")
        return Expansion(chain, all_home=True)
    parts = [p.strip() for p in re.split(r"[,;]", stripped) if p.strip()]
    if len(parts) > MAX_MOVES:
        return Expansion(note=f"at most {MAX_MOVES} moves at once")
    if len(parts) > 1:
        return Expansion(parts)
    move, note = _one(parts[0], view)
    return Expansion([move] if move is not None else [], note)
