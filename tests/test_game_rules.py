"""The rules pages' text and picture (game_rules.py): every game has its sections, and the
picture is a real position, reached by legal moves from a real deal of the engine."""

from __future__ import annotations

from solitaire_race.engine import all_games
from solitaire_race.game_rules import EXAMPLE_DEAL, EXAMPLE_SECRET, RULES, rules_page


def test_every_game_has_its_rules_and_a_real_position() -> None:
    assert set(RULES) == set(all_games())
    for game in all_games().values():
        page = rules_page(game)
        titles = [s["title"] for s in page["sections"]]
        assert titles[0] == "Layout" and titles[1] == "Moves" and titles[-1] == "How it is won", titles
        assert len(titles) == 4 and all(s["text"] for s in page["sections"]), game.id
        assert page["summary"] == game.summary and "solver" in page["par"]
        example = page["example"]
        assert example["deal"] == EXAMPLE_DEAL and example["moves"], game.id
        state = game.deal(EXAMPLE_DEAL, EXAMPLE_SECRET)
        for move in example["moves"]:
            state = game.apply(state, game.parse_move(move))  # raises if any is illegal
        assert example["view"] == game.view(state), game.id
