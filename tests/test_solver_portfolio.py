"""How the solver shares its budget among its searches (``Knowledge`` shares, ``search.py``).

The shares decide only which search finds a win first, never a verdict: a win is
replayed through the engine, and "unwinnable" comes only from a search that ran out of
positions. These tests pin the deals the shares were chosen for (bench secret, as in
``bench/solver.py``), and that the searches they add (the second best-first search, ties
to the newest position; the endgame search) and the scores keep their answers reproducible
and their lines winning.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from solitaire_race.engine import get_game
from solitaire_race.solver import verify
from solitaire_race.solver.knowledge import Knowledge, knowledge_for
from solitaire_race.solver.piles import blockers
from solitaire_race.solver.search import search

BENCH = b"bench"


@pytest.mark.parametrize("number", [164, 165])
def test_perseverance_deals_won_only_far_down_depth_first_order_are_won(number: int) -> None:
    game = get_game("perseverance")
    state = game.deal(number, BENCH)
    depth_first_only = knowledge_for(game)
    depth_first_only.best_first_share = depth_first_only.playout_share = 0.0
    assert search(game, depth_first_only, state, node_budget=60_000, time_budget_s=None).status == "unknown"
    found = search(game, knowledge_for(game), state, node_budget=60_000, time_budget_s=None)
    assert found.status == "won" and found.moves is not None
    assert verify(game, state, [game.format_move(m) for m in found.moves])


def test_persian_newest_first_best_first_wins_a_deal_the_others_leave_unknown() -> None:
    game = get_game("persian-patience")
    state = game.deal(83, BENCH)
    oldest_only = knowledge_for(game)
    oldest_only.best_first_share, oldest_only.newest_first_share, oldest_only.endgame_share = 0.5, 0.0, 0.0
    assert search(game, oldest_only, state, node_budget=30_000, time_budget_s=None).status == "unknown"
    runs = [search(game, knowledge_for(game), state, node_budget=30_000, time_budget_s=None) for _ in range(2)]
    found = runs[0]
    assert found.status == "won" and found.moves is not None
    assert runs[1].moves == found.moves and runs[1].nodes == found.nodes  # reproducible
    assert verify(game, state, [game.format_move(m) for m in found.moves])


def won_only_with(game_id: str, number: int, nodes: int, without: Callable[[Knowledge[Any]], None]) -> None:
    """Deal ``number`` is unknown within ``nodes`` when ``without`` takes something from the
    knowledge, and won (reproducibly, by a line that replays) with all of it."""
    game = get_game(game_id)
    state = game.deal(number, BENCH)
    lesser = knowledge_for(game)
    without(lesser)
    assert search(game, lesser, state, node_budget=nodes, time_budget_s=None).status == "unknown"
    runs = [search(game, knowledge_for(game), state, node_budget=nodes, time_budget_s=None) for _ in range(2)]
    found = runs[0]
    assert found.status == "won" and found.moves is not None
    assert runs[1].moves == found.moves and runs[1].nodes == found.nodes
    assert verify(game, state, [game.format_move(m) for m in found.moves])


def no_endgames(know: Knowledge[Any]) -> None:
    know.endgame_share = 0.0


def test_persian_best_first_score_with_the_next_cards_depth_wins_a_deal() -> None:
    def plain_score(know: Knowledge[Any]) -> None:
        know.best_first_score = know.score  # type: ignore[method-assign]

    won_only_with("persian-patience", 19, 20_000, plain_score)


@pytest.mark.parametrize(("game_id", "number", "nodes"), [("persian-patience", 4, 40_000), ("cruel", 163, 50_000)])
def test_the_endgame_search_wins_a_deal_the_others_leave_unknown(game_id: str, number: int, nodes: int) -> None:
    won_only_with(game_id, number, nodes, no_endgames)


def test_cruel_playouts_win_a_deal_the_others_leave_unknown() -> None:
    def no_playouts(know: Knowledge[Any]) -> None:
        know.playout_share = 0.0

    won_only_with("cruel", 221, 40_000, no_playouts)


def test_cruel_score_with_the_next_cards_depth_wins_a_deal() -> None:
    def plain_score(know: Knowledge[Any]) -> None:
        know.score = lambda state: 4 * sum(state.foundations) - sum(map(blockers, state.piles))  # type: ignore[method-assign]

    won_only_with("cruel", 34, 20_000, plain_score)


def test_a_lost_position_is_still_proved_with_the_budget_shared() -> None:
    """Depth-first keeps a share, so a small lost deal is still proved unwinnable."""
    game = get_game("perseverance")
    for number in range(20):
        state = game.deal(number, BENCH)
        if search(game, knowledge_for(game), state, node_budget=100_000, time_budget_s=None).status == "unwinnable":
            return
    raise AssertionError("no Perseverance deal of 0-19 proved unwinnable within 100,000 nodes")
