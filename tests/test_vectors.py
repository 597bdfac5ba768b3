"""Golden vectors pin every game's first deals and move-tree sizes.

A change that alters any deal (the shuffle, the deck order, a deal layout) or any move
generation fails here, line by line. See tests/vectors/make_vectors.py.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from solitaire_race.engine import all_games

from .vectors.make_vectors import PERFT_DEPTH, SECRET, deal_lines, perft

VECTORS = Path(__file__).parent / "vectors"


def read(name: str) -> list[str]:
    return [line for line in (VECTORS / name).read_text(encoding="utf-8").splitlines() if not line.startswith("#")]


def test_every_game_has_vectors() -> None:
    pinned = {line.split()[0] for line in read("deals.txt")}
    assert pinned == set(all_games()), "a registered game has no golden deals"
    assert {line.split()[0] for line in read("perft.txt")} == set(all_games())


def test_golden_deals() -> None:
    expected = read("deals.txt")
    actual = deal_lines()
    # Not strict: a changed deal is named here, a missing or extra one by the count below.
    for want, got in zip(expected, actual, strict=False):
        assert got == want, f"deal changed: {want.split()[0]} #{want.split()[1]}"
    assert len(actual) == len(expected)


@pytest.mark.parametrize("line", read("perft.txt"), ids=lambda line: "-".join(line.split()[:2]))
def test_perft(line: str) -> None:
    game_id, number, *counts = line.split()
    game = all_games()[game_id]
    state = game.deal(int(number), SECRET)
    assert [perft(game, state, d) for d in range(1, PERFT_DEPTH + 1)] == [int(c) for c in counts]
