"""Daily deals chosen by the solver, a day ahead, and stored (daily_planner.py).

The planner's own test runs the real worker process (``python -m solitaire_race.solver.daily``)
on a real SQLite file; the rest of the suite runs with the solver off (conftest.make_config).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
from collections.abc import AsyncIterator
from datetime import UTC, date, datetime, timedelta
from pathlib import Path

import pytest

from solitaire_race import daily_planner
from solitaire_race.app import App
from solitaire_race.daily import daily_deal_number
from solitaire_race.daily_planner import (
    PLAN_AHEAD_DAYS,
    DailyNotReady,
    DailyPlanner,
    WorkerKilled,
    first_candidate,
    solver_process,
)
from solitaire_race.engine import get_game
from solitaire_race.observe import Metrics
from solitaire_race.solver import CANDIDATES, DailyChoice, NoProvenDeal, budget_for, choose_daily, verify
from solitaire_race.store import Store

from .conftest import TEST_SECRET, Client, http_json, make_config
from .support import SMALL_DAILY_NODES, held_back_chooser
from .support import solve as support_solve
from .test_daily import WallClock

SECRET = TEST_SECRET.encode()
NODES = SMALL_DAILY_NODES  # the test checks the wiring and the determinism, not the search
GAMES = ["clock", "perseverance-a"]
EVENING = datetime(2026, 11, 21, 23, 59, 0, tzinfo=UTC)


async def test_deals_are_chosen_a_day_ahead_proven_winnable_and_stored(tmp_path: Path) -> None:
    store = await Store.open(f"sqlite+aiosqlite:///{tmp_path / 'daily.sqlite3'}")
    wall = WallClock(EVENING)
    metrics = Metrics()
    planner = DailyPlanner(store, GAMES, solver_process(SECRET, NODES), wall, metrics=metrics)
    try:
        today = date(2026, 11, 21)
        days = [today + timedelta(days=ahead) for ahead in range(PLAN_AHEAD_DAYS + 1)]
        await asyncio.wait_for(planner.prepare(today), 120)
        assert planner.chosen == len(GAMES) * len(days)
        # How many candidates each game's latest day took: in the log's event and in /metrics.
        for game_id in GAMES:
            tried = choose_daily(game_id, SECRET, days[-1], budget_for(NODES)).candidates
            assert f'solitaire_daily_candidates{{game="{game_id}"}} {tried}' in metrics.render()
        for day in days:
            for game_id in GAMES:
                stored = await store.find_daily_challenge(game_id, day.isoformat())
                assert stored is not None and stored.par is not None
                # The worker's answer is the pure function's: every process agrees.
                chosen = choose_daily(game_id, SECRET, day, budget_for(NODES))
                assert (stored.deal_number, stored.par) == (chosen.deal, chosen.par)
                # And the deal is won, by the tests' own small solver, independently.
                game = get_game(game_id)
                line = support_solve(game, game.deal(stored.deal_number, SECRET), budget=200_000)
                assert line is not None and verify(game, game.deal(stored.deal_number, SECRET), line)

        # Midnight: the days ahead are read, not chosen again; only the newest day is chosen.
        wall.now = EVENING + timedelta(minutes=2)
        tomorrow = days[1]
        before = await store.find_daily_challenge("clock", tomorrow.isoformat())
        assert await planner.challenge("clock", tomorrow) == before
        await planner.prepare(tomorrow)  # what the planner does after midnight
        assert planner.chosen == len(GAMES) * (len(days) + 1)
    finally:
        await planner.close()
        await store.close()


def solver_workers() -> list[int]:
    """Our child processes running the daily solver (from /proc: Linux)."""
    found = []
    for entry in Path("/proc").iterdir():
        try:
            stat = (entry / "stat").read_text()
            cmdline = (entry / "cmdline").read_bytes()
        except (OSError, ValueError):
            continue
        ppid = int(stat.rsplit(")", 1)[1].split()[1])
        if ppid == os.getpid() and b"solitaire_race.solver.daily" in cmdline:
            found.append(int(entry.name))
    return found


async def test_a_stopped_planner_kills_its_worker(tmp_path: Path) -> None:
    store = await Store.open(f"sqlite+aiosqlite:///{tmp_path / 'daily.sqlite3'}")
    # Patriarchs at a large budget takes long enough to be mid-search when stopped.
    planner = DailyPlanner(store, ["patriarchs"], solver_process(SECRET, 1_000_000), WallClock(EVENING))
    try:
        planner.start()
        async with asyncio.timeout(10):
            while not solver_workers():
                await asyncio.sleep(0.05)
    finally:
        await asyncio.wait_for(planner.close(), 10)
    assert not solver_workers()
    assert await store.find_daily_challenge("patriarchs", "2026-11-21") is None
    assert planner.chosen == 0
    await store.close()


async def test_listing_shows_games_still_being_prepared(tmp_path: Path) -> None:
    """A fresh server: one game's deal is still being chosen. The listing does not wait for
    it, start_daily does, and the other games (one with a real par) are playable."""
    gate = asyncio.Event()
    choose = held_back_chooser(SECRET, gate)
    wall = WallClock(datetime(2026, 11, 21, 12, 0, tzinfo=UTC))
    app = await App.start(make_config(tmp_path), wall_clock=wall, choose_daily=choose)
    ann = await Client.connect(app)
    try:
        await ann.hello("ann")
        listing = {c["game"]: c for c in (await ann.request({"type": "daily"}))["challenges"]}
        assert listing["patriarchs"] == {
            "game": "patriarchs", "name": "Patriarchs", "deal": None, "par": None, "preparing": True,
            "practice_date": None, "attempted": False,
        }
        clock = choose_daily("clock", SECRET, date(2026, 11, 21), budget_for(NODES))
        clock_deal, clock_par = clock.deal, clock.par
        assert listing["clock"]["deal"] == clock_deal and listing["clock"]["par"] == clock_par is not None
        assert "preparing" not in listing["cruel"]

        await ann.send({"type": "start_daily", "game": "patriarchs", "id": 900})
        await asyncio.sleep(0.3)
        assert not [m for m in ann.inbox if m.get("id") == 900]  # waiting for the deal
        gate.set()
        started = await ann.expect(lambda m: m.get("id") == 900)
        assert started["type"] == "race_started"
        assert started["deal"] == daily_deal_number(SECRET, "patriarchs", date(2026, 11, 21))
        await ann.request({"type": "resign"})
        await ann.expect("race_finished")

        listing = {c["game"]: c for c in (await ann.request({"type": "daily"}))["challenges"]}
        assert listing["patriarchs"]["deal"] == started["deal"] and "preparing" not in listing["patriarchs"]

        # The daily board carries the par beside the moves; no board for days not announced.
        board = await ann.request({"type": "leaderboard", "board": "daily", "game": "clock"})
        assert board["par"] == clock_par
        status, page = await http_json(app, "/api/leaderboard/daily/clock")
        assert status == 200 and page["par"] == clock_par
        future = await ann.request({"type": "leaderboard", "board": "daily", "game": "clock", "date": "2026-11-22"})
        assert future["type"] == "error" and future["code"] == "not_found"
    finally:
        gate.set()
        await ann.close()
        await app.stop()


@contextlib.asynccontextmanager
async def failing_planner(tmp_path: Path, error: Exception) -> AsyncIterator[tuple[DailyPlanner, Store, list[date]]]:
    """A planner for Clock whose solver always fails with ``error``; the days it was asked."""
    store = await Store.open(f"sqlite+aiosqlite:///{tmp_path / 'daily.sqlite3'}")
    asked: list[date] = []

    async def failing(game_id: str, day: date) -> DailyChoice:
        asked.append(day)
        raise error

    planner = DailyPlanner(store, ["clock"], failing, WallClock(EVENING))
    try:
        yield planner, store, asked
    finally:
        await planner.close()
        await store.close()


async def test_a_failing_solver_publishes_nothing_and_is_tried_again_later(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    day = date(2026, 11, 21)
    async with failing_planner(tmp_path, RuntimeError("daily solver for clock exited with 1")) as (
        planner, store, asked,
    ):
        with pytest.raises(DailyNotReady, match="the clock challenge of 2026-11-21 is not ready yet"):
            await planner.challenge("clock", day)
        assert await store.find_daily_challenge("clock", "2026-11-21") is None  # no unproven deal
        # Asked again at once: refused at once, the solver not run again (the lobby asks often).
        with pytest.raises(DailyNotReady):
            await planner.challenge("clock", day)
        assert await planner.ready(["clock"], day, 1.0) == {"clock": None}  # listed as preparing
        assert asked == [day]
        monkeypatch.setattr(daily_planner, "RETRY_S", 0.0)  # the retry time has passed
        with pytest.raises(DailyNotReady):
            await planner.challenge("clock", day)
        assert asked == [day, day]


async def test_no_proven_candidate_is_one_log_line_and_no_challenge(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """The real worker with a budget too small to prove any candidate: it says so and exits
    with its own status; the planner logs one line (no traceback) and stores nothing."""
    store = await Store.open(f"sqlite+aiosqlite:///{tmp_path / 'daily.sqlite3'}")
    planner = DailyPlanner(store, ["cruel"], solver_process(SECRET, 1), WallClock(EVENING))
    try:
        with caplog.at_level(logging.ERROR, logger="solitaire_race.daily"), pytest.raises(DailyNotReady):
            await asyncio.wait_for(planner.challenge("cruel", date(2026, 11, 21)), 120)
        errors = [r for r in caplog.records if r.levelno >= logging.ERROR]
        assert len(errors) == 1 and errors[0].exc_info is None
        assert f"no cruel candidate of 2026-11-21 was proved winnable ({CANDIDATES} tried" in errors[0].getMessage()
        assert await store.find_daily_challenge("cruel", "2026-11-21") is None
    finally:
        await planner.close()
        await store.close()


async def test_start_daily_on_a_day_not_ready_is_refused_and_changes_nothing(tmp_path: Path) -> None:
    async def failing(game_id: str, day: date) -> DailyChoice:
        raise NoProvenDeal(f"no {game_id} candidate of {day} was proved winnable")

    app = await App.start(make_config(tmp_path), wall_clock=WallClock(EVENING), choose_daily=failing)
    ann = await Client.connect(app)
    try:
        welcome = await ann.hello("ann")
        # Ann sits in a race she has finished: a refused start_daily must not take her out.
        await ann.request({"type": "create_race", "game": "cruel", "deal": 1})
        await ann.request({"type": "start_race"})
        await ann.expect("race_started")
        await ann.request({"type": "resign"})
        await ann.expect("race_finished")
        finished_room = app.races.seats[welcome["player"]["id"]]
        refused = await ann.request({"type": "start_daily", "game": "clock"})
        assert refused["type"] == "error" and refused["code"] == "not_found"
        assert "the clock challenge of 2026-11-21 is not ready yet" in refused["message"]
        assert (await ann.request({"type": "ping"}))["type"] == "pong"  # the connection goes on
        assert app.races.seats[welcome["player"]["id"]] is finished_room
        assert await app.store.find_daily_challenge("clock", "2026-11-21") is None
    finally:
        await ann.close()
        await app.stop()


async def test_a_killed_worker_settles_nothing_and_a_failure_lists_as_preparing(tmp_path: Path) -> None:
    killed = WorkerKilled("daily solver for clock killed by signal 15")
    async with failing_planner(tmp_path, killed) as (planner, store, _):
        # Stopped by a signal (the server is stopping): no unproven deal is settled for the day.
        with pytest.raises(WorkerKilled):
            await planner.challenge("clock", date(2026, 11, 21))
        assert await store.find_daily_challenge("clock", "2026-11-21") is None
        # A listing does not fail with it: the game shows as still being prepared.
        assert await planner.ready(["clock"], date(2026, 11, 21), 1.0) == {"clock": None}


async def test_stopping_does_not_wait_for_a_daily_deal_being_chosen(tmp_path: Path) -> None:
    gate = asyncio.Event()  # never set: Patriarchs is still being chosen when the server stops
    app = await App.start(make_config(tmp_path), choose_daily=held_back_chooser(SECRET, gate))
    ann = await Client.connect(app)
    try:
        await ann.hello("ann")
        await ann.send({"type": "start_daily", "game": "patriarchs", "id": 1})
        await asyncio.sleep(0.2)
    finally:
        await asyncio.wait_for(app.stop(), 10)
        await ann.close()
    store = await Store.open(make_config(tmp_path).db_url)
    try:
        assert await store.find_daily_challenge("patriarchs", app.gateway.queries.today().isoformat()) is None
    finally:
        await store.close()


async def test_a_worker_killed_by_someone_else_stops_only_its_own_game(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """The OOM killer or an operator's kill: that game is tried again at the next look, and
    the planner goes on with the others (its loop does not end)."""
    store = await Store.open(f"sqlite+aiosqlite:///{tmp_path / 'daily.sqlite3'}")
    plain = first_candidate(SECRET)

    async def choose(game_id: str, day: date) -> DailyChoice:
        if game_id == "clock":
            raise WorkerKilled(f"daily solver for clock {day} killed by signal 9")
        return await plain(game_id, day)

    planner = DailyPlanner(store, ["clock", "cruel"], choose, WallClock(EVENING))
    try:
        with caplog.at_level(logging.ERROR, logger="solitaire_race.daily"):
            await asyncio.wait_for(planner.prepare(date(2026, 11, 21)), 60)
        assert planner.chosen == PLAN_AHEAD_DAYS + 1  # every day of cruel
        assert await store.find_daily_challenge("clock", "2026-11-21") is None
        assert any("preparing the clock challenge of 2026-11-21 failed" in r.getMessage() for r in caplog.records)
    finally:
        await planner.close()
        await store.close()
