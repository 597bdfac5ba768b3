"""Every daily challenge is proven winnable: a month of days in every game, at the budget the
server's planner gives each candidate (``solver.DAILY_NODES``).

The planner publishes only a candidate the solver proved winnable (``choose_daily`` raises
``NoProvenDeal`` after ``CANDIDATES`` without one), so a day with none would have no
challenge at all. The shortening pass is left out here: it sets the par of the deal chosen
and never which deal is chosen (that is decided by the search alone). Two worker processes
share the games, as the machine has two cores.
"""

from __future__ import annotations

import multiprocessing
from concurrent.futures import ProcessPoolExecutor
from datetime import date, timedelta

from solitaire_race.engine import all_games
from solitaire_race.solver import CANDIDATES, DAILY_NODES, Budget, choose_daily

from .conftest import TEST_SECRET

DAYS = [date(2027, 1, 1) + timedelta(days=k) for k in range(30)]


def candidates_per_day(game_id: str) -> list[int]:
    """How many candidates each day of the month took until one was proved winnable."""
    budget = Budget(nodes=DAILY_NODES, shorten_nodes=0)
    return [choose_daily(game_id, TEST_SECRET.encode(), day, budget).candidates for day in DAYS]


def test_every_day_of_a_month_has_a_proven_deal_in_every_game() -> None:
    games = sorted(all_games())
    with ProcessPoolExecutor(2, mp_context=multiprocessing.get_context("spawn")) as pool:
        months = {game_id: pool.submit(candidates_per_day, game_id) for game_id in games}
        tried = {game_id: month.result(timeout=900) for game_id, month in months.items()}
    for game_id, candidates in tried.items():
        assert len(candidates) == len(DAYS) and all(1 <= n <= CANDIDATES for n in candidates), (game_id, candidates)
