"""How the solver shares its budget among its searches (``Knowledge`` shares, ``search.py``).

The shares decide only which search finds a win first, never a verdict: a win is
replayed through the engine, and "unwinnable" comes only from a search that ran out of
positions. These tests pin the deals the shares were chosen for (bench secret, as in
``bench/solver.py``), and that the second best-first search (ties to the newest position)
keeps its answers reproducible and its lines winning.
"""

from __future__ import annotations

import pytest

from solitaire_race.engine import get_game
from solitaire_race.solver import verify
from solitaire_race.solver.knowledge import knowledge_for
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
    oldest_only.best_first_share, oldest_only.newest_first_share = 0.5, 0.0
    assert search(game, oldest_only, state, node_budget=30_000, time_budget_s=None).status == "unknown"
    runs = [search(game, knowledge_for(game), state, node_budget=30_000, time_budget_s=None) for _ in range(2)]
    found = runs[0]
    assert found.status == "won" and found.moves is not None
    assert runs[1].moves == found.moves and runs[1].nodes == found.nodes  # reproducible
    assert verify(game, state, [game.format_move(m) for m in found.moves])


def test_a_lost_position_is_still_proved_with_the_budget_shared() -> None:
    """Depth-first keeps a share, so a small lost deal is still proved unwinnable."""
    game = get_game("perseverance")
    for number in range(20):
        state = game.deal(number, BENCH)
        if search(game, knowledge_for(game), state, node_budget=100_000, time_budget_s=None).status == "unwinnable":
            return
    raise AssertionError("no Perseverance deal of 0-19 proved unwinnable within 100,000 nodes")
