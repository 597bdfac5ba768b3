"""The stuck checks the service runs off the move path (stuck_checks.py), fed directly."""

from __future__ import annotations

from typing import Any

from solitaire_race.engine import Outcome, get_game
from solitaire_race.engine.base import Game, StuckSearch
from solitaire_race.stuck_checks import StuckChecks

from .support import random_playout

SECRET = b"stuck-checks"


def searched_positions(game_id: str) -> list[Any]:
    """Positions only a search decides, the slowest (most positions searched) first."""
    game = get_game(game_id)
    playout = random_playout(game_id, SECRET, deals=40, steps=200, seed=3)
    states = [s for s in playout if isinstance(game.assess(s), StuckSearch)]
    return sorted(set(states), key=lambda s: -len(run_whole(game, s)[1].seen))


def search_of(game: Game[Any], state: Any) -> StuckSearch[Any]:
    search = game.assess(state)
    assert isinstance(search, StuckSearch)
    return search


def run_whole(game: Game[Any], state: Any) -> tuple[Outcome, Any]:
    search = search_of(game, state)
    outcome = search.run(10**6)
    assert outcome is not None
    return outcome, search


def drain(checks: StuckChecks[str], limit: int = 100_000) -> list[tuple[str, int, int, Outcome]]:
    verdicts: list[tuple[str, int, int, Outcome]] = []
    for _ in range(limit):
        if not checks:
            return verdicts
        verdicts += checks.step()
    raise AssertionError("the checks did not finish")


def test_every_check_gets_the_engines_verdict_in_slices() -> None:
    game = get_game("persian-patience")
    positions = searched_positions(game.id)[:12]
    assert {game.outcome(s) for s in positions} == {Outcome.STUCK, Outcome.PLAYING}  # both verdicts covered
    checks: StuckChecks[str] = StuckChecks(slice_positions=5)
    for player, state in enumerate(positions):
        checks.add("room", race_id=1, player_id=player, moves=10, search=search_of(game, state))
    verdicts = drain(checks)
    expected = [(pid, game.outcome(s)) for pid, s in enumerate(positions)]
    assert sorted((pid, outcome) for _, pid, _, outcome in verdicts) == expected
    # Round robin in slices: the quickest searches finish first, not in the order added
    # (the positions were added slowest first).
    sizes = [len(run_whole(game, s)[1].seen) for s in positions]
    assert sizes[0] == max(sizes) > sizes[verdicts[0][1]]
    assert sizes[verdicts[-1][1]] == max(sizes)


def test_a_newer_position_replaces_the_older_check() -> None:
    game = get_game("persian-patience")
    first, second = searched_positions(game.id)[:2]
    checks: StuckChecks[str] = StuckChecks(slice_positions=5)
    checks.add("room", race_id=1, player_id=7, moves=10, search=search_of(game, first))
    checks.add("room", race_id=1, player_id=7, moves=11, search=search_of(game, second))
    checks.add("other", race_id=2, player_id=7, moves=10, search=search_of(game, first))  # another race: its own
    verdicts = drain(checks)
    assert sorted((owner, moves) for owner, _, moves, _ in verdicts) == [("other", 10), ("room", 11)]


def test_decided_positions_are_remembered() -> None:
    game = get_game("persian-patience")
    (state, *_) = searched_positions(game.id)
    checks: StuckChecks[str] = StuckChecks(slice_positions=5)
    checks.add("room", race_id=1, player_id=1, moves=3, search=search_of(game, state))
    steps = 0
    while checks:
        checks.step()
        steps += 1
    assert steps > 1  # the slowest position takes several slices the first time...
    checks.add("room", race_id=1, player_id=2, moves=5, search=search_of(game, state))
    assert checks.step() == [("room", 2, 5, game.outcome(state))]  # ...and none the second
    assert not checks
