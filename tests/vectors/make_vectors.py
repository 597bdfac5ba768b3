"""Regenerate the golden vectors: ``python tests/vectors/make_vectors.py``.

Run this only when a change to the deals or rules is intended; the diff of the vector files
is then the review of that change. ``tests/test_vectors.py`` checks the engine against them.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from solitaire_race.engine import Game, all_games

SECRET = b"golden-vectors"
DEALS = range(5)
PERFT_DEALS = range(2)
PERFT_DEPTH = 3
HERE = Path(__file__).parent


def deal_lines() -> list[str]:
    lines = []
    for game in all_games().values():
        for n in DEALS:
            snap = game.snapshot(game.deal(n, SECRET))
            lines.append(f"{game.id} {n} {json.dumps(snap, separators=(',', ':'))}")
    return lines


def perft(game: Game[Any], state: Any, depth: int) -> int:
    """Leaf count of the move tree to ``depth`` (python-chess style)."""
    if depth == 0:
        return 1
    return sum(perft(game, game.apply(state, m), depth - 1) for m in game.legal_moves(state))


def perft_lines() -> list[str]:
    lines = []
    for game in all_games().values():
        for n in PERFT_DEALS:
            state = game.deal(n, SECRET)
            counts = [perft(game, state, d) for d in range(1, PERFT_DEPTH + 1)]
            lines.append(f"{game.id} {n} " + " ".join(map(str, counts)))
    return lines


HEADERS = {
    "deals.txt": "# game deal-number snapshot (JSON), secret 'golden-vectors'. Regenerate only on purpose.",
    "perft.txt": "# game deal-number leaf counts at depth 1 2 3, secret 'golden-vectors'.",
}


def main() -> None:
    for name, lines in (("deals.txt", deal_lines()), ("perft.txt", perft_lines())):
        (HERE / name).write_text("\n".join([HEADERS[name], *lines]) + "\n", encoding="utf-8")
        print(f"wrote {len(lines)} lines to {HERE / name}")


if __name__ == "__main__":
    main()
