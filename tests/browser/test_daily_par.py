"""Daily challenges in the browser: a game whose deal is still being chosen shows as
preparing and becomes playable by itself; the par shows in the lobby and on the daily board
beside each winner's moves."""

from __future__ import annotations

import asyncio
from pathlib import Path

from playwright.async_api import Browser, expect

from solitaire_race.app import App
from solitaire_race.engine import get_game
from solitaire_race.solver import budget_for, choose_daily, solve

from ..conftest import TEST_SECRET, Client, make_config
from ..support import SMALL_DAILY_NODES, held_back_chooser
from .racer import Racer

SECRET = TEST_SECRET.encode()


async def test_preparing_then_playable_and_par_on_the_board(
    tmp_path: Path, browser: Browser, screenshots: Path
) -> None:
    gate = asyncio.Event()
    app = await App.start(make_config(tmp_path), choose_daily=held_back_chooser(SECRET, gate))
    ann = await Racer.open(browser, app.url)
    bob = await Client.connect(app)
    try:
        await ann.sign_in("ann")
        patriarchs = ann.page.locator("#daily-list li[data-game=patriarchs]")
        await expect(patriarchs.locator(".preparing")).to_have_text("preparing…")
        await expect(patriarchs.locator("button")).to_have_count(0)
        clock = ann.page.locator("#daily-list li[data-game=clock]")
        today = app.gateway.queries.today()
        chosen = choose_daily("clock", SECRET, today, budget_for(SMALL_DAILY_NODES))
        deal, par = chosen.deal, chosen.par
        assert par is not None
        await expect(clock.locator(".daily-name")).to_contain_text(f"par {par}")

        gate.set()  # the lobby asks again by itself (every 5 s while something is preparing)
        await expect(patriarchs.locator("button")).to_have_text("Play", timeout=10_000)

        # bob wins today's Clock challenge; the board shows his moves against the par
        await bob.hello("bob")
        started = await bob.request({"type": "start_daily", "game": "clock"})
        assert started["deal"] == deal
        rules = get_game("clock")
        line = solve(rules, rules.deal(deal, SECRET)).moves
        assert line is not None
        for i in range(0, len(line), 64):
            assert (await bob.request({"type": "move", "moves": list(line[i : i + 64])}))["rejected"] is None
        await bob.expect("race_finished")

        await ann.page.goto(f"{app.url}leaderboard?game=clock&board=daily")
        await expect(ann.page.locator("#summary")).to_contain_text(f"par {par} moves")
        headers = await ann.page.locator("#head th").all_inner_texts()
        assert f"vs par {par}" in headers
        cells = await ann.page.locator("#rows tr:first-child td").all_inner_texts()
        diff = len(line) - par
        assert cells[headers.index("Moves")] == str(len(line))
        vs_par = "par" if diff == 0 else f"+{diff}" if diff > 0 else f"−{-diff}"
        assert cells[headers.index(f"vs par {par}")] == vs_par
        await ann.page.screenshot(path=str(screenshots / "leaderboard-daily-par.png"))
        assert not ann.errors, ann.errors
    finally:
        gate.set()
        await bob.close()
        await ann.close()
        await app.stop()


async def test_a_daily_started_while_its_deal_is_prepared_says_so_and_then_starts(
    tmp_path: Path, browser: Browser, screenshots: Path
) -> None:
    gate = asyncio.Event()
    app = await App.start(make_config(tmp_path), choose_daily=held_back_chooser(SECRET, gate))
    ann = await Racer.open(browser, app.url)
    try:
        await ann.sign_in("ann")
        page = ann.page
        await expect(page.locator("#daily-list li[data-game=patriarchs] .preparing")).to_be_visible()
        # Today's daily from the create form: confirmed, then it waits for its deal, and says so.
        await page.click(".game-tile:has(input[value='patriarchs'])")
        await page.check("input[name=deal-kind][value=daily]")
        await page.click("#create-btn")
        await page.click("#confirm-daily-start")
        await expect(page.locator("#toast")).to_have_text(
            "Preparing today's Patriarchs deal: it starts as soon as it is ready…"
        )
        await page.screenshot(path=str(screenshots / "daily-preparing.png"))
        gate.set()
        await ann.wait_board("patriarchs")
        await expect(page.locator("#race-deal")).to_contain_text("ranked")
        assert not ann.errors, ann.errors
    finally:
        gate.set()
        await ann.close()
        await app.stop()
