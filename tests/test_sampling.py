"""Hints where cards are hidden (Clock, Parallels, Patriarchs): layouts of the hidden cards
look exactly like the player's view, and a hint depends on that view alone.

The leak check is the one that matters: two positions that differ only in cards the player
cannot see get the same hint, so a hint can never tell a hidden card. Positions come from
random games of real deals (fixed seeds), as in the solver's tests.
"""

from __future__ import annotations

import random
from collections import Counter

import pytest

from solitaire_race.engine import Outcome, all_games, get_game
from solitaire_race.engine.cards import UNKNOWN
from solitaire_race.solver import HINT_LAYOUTS, Budget, hint
from solitaire_race.solver.sampling import layouts, seeded, unseen

from .conftest import TEST_SECRET
from .support import random_playout

SECRET = TEST_SECRET.encode()
HIDDEN = sorted(g for g, game in all_games().items() if not game.full_information)


def test_the_games_that_hide_cards() -> None:
    assert HIDDEN == ["clock", "parallels", "patriarchs"]


@pytest.mark.parametrize("game_id", HIDDEN)
def test_a_layout_shows_the_players_view_and_holds_the_deck(game_id: str) -> None:
    game = get_game(game_id)
    rng = random.Random(7)
    differed = 0
    for state in random_playout(game_id, SECRET, deals=3, steps=60, seed=1)[::7]:
        view = game.view(state)
        known = game.from_view(view)
        hidden = sum(1 for c in game.all_cards(known) if c == UNKNOWN)
        assert len(unseen(game, known)) == hidden
        first, second = layouts(game, known, 2, rng)
        for layout in (first, second):
            assert game.view(layout) == view  # the same to the player's eyes
            assert Counter(game.all_cards(layout)) == Counter(game.all_cards(state))  # the same cards
            assert UNKNOWN not in game.all_cards(layout)
        differed += first != second
    assert differed > 0  # the hidden cards are dealt at random


@pytest.mark.parametrize("game_id", HIDDEN)
def test_a_hint_depends_on_the_view_alone(game_id: str) -> None:
    """The real position and another one with the same view but other hidden cards: the same
    hint. And the hinted move is legal where the player stands."""
    game = get_game(game_id)
    budget = Budget(nodes=3_000, shorten_nodes=0)
    moves = 0
    for state in random_playout(game_id, SECRET, deals=2, steps=40, seed=3)[::20]:
        if game.outcome(state) is not Outcome.PLAYING:
            continue
        view = game.view(state)
        (other,) = layouts(game, game.from_view(view), 1, random.Random(99))
        assert game.view(other) == view
        found = hint(game, state, budget)
        assert hint(game, other, budget) == found
        assert found.layouts == HINT_LAYOUTS and 0 <= found.wins <= HINT_LAYOUTS
        if found.move is not None:
            game.apply(state, game.parse_move(found.move))  # legal in the real position
            moves += 1
    assert moves > 0


def test_layouts_are_the_same_for_the_same_view() -> None:
    game = get_game("parallels")
    view = game.view(game.deal(5, SECRET))
    known = game.from_view(view)
    assert layouts(game, known, 3, seeded(view)) == layouts(game, known, 3, seeded(view))


def test_a_parallels_hint_finds_a_winning_first_move_in_most_layouts() -> None:
    """Parallels hides only the stock's order: from the deal, most layouts are won, and the
    hint's move is one they agree on."""
    game = get_game("parallels")
    found = hint(game, game.deal(3, SECRET), Budget(nodes=20_000, shorten_nodes=0))
    assert found.move is not None and found.wins >= HINT_LAYOUTS // 2, found
    assert found.describe().startswith(f"the first move of a winning line in {found.wins} of {HINT_LAYOUTS}")
