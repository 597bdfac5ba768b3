"""The spectator page (/watch/<code>): anyone with the link sees a race's standings live, and
no card at all, then the ranking and the way to the replay; the room gives the link."""

from __future__ import annotations

import asyncio
import re
from pathlib import Path
from typing import Any

from playwright.async_api import Browser, expect

from solitaire_race.app import App
from solitaire_race.engine import get_game

from ..conftest import TEST_SECRET
from ..support import winnable_deal
from .racer import Racer
from .test_replay_page import zones
from .views import expected_zones, normalized

DEAL, LINE = winnable_deal("cruel", TEST_SECRET.encode())


async def test_a_race_is_watched_live_without_a_card(
    app: App, browser: Browser, clients: Any, screenshots: Path
) -> None:
    ann = await Racer.open(browser, app.url)
    bob = await clients("bob")
    try:
        await ann.sign_in("ann")
        code = await ann.create_race("cruel", DEAL)
        link = await ann.page.get_attribute("#room-watch", "href")
        assert link == f"{app.config.public_url}/watch/{code}"
        await bob.request({"type": "join_race", "code": code})

        watcher = await Racer.open(browser, link)  # a stranger: no name asked
        page = watcher.page
        await expect(page.locator("#watch-racers li")).to_have_count(2)
        await expect(page.locator("#watch-status")).to_have_text("Waiting for the start")
        await ann.page.click("#start-btn")
        await expect(page.locator("#watch-status")).to_have_text("Race time")
        await bob.expect("race_started")
        for i in range(0, 20, 5):
            await bob.request({"type": "move", "moves": list(LINE[i : i + 5])})
        bob_row = page.locator("#watch-racers li", has_text="bob")
        await expect(bob_row).to_have_attribute("data-moves", "20")
        assert await page.locator("[data-card], .card").count() == 0  # no card, ever
        assert not re.search(r"\b(10|[2-9JQKA])[♠♥♦♣]", await page.locator("main").inner_text())
        await page.screenshot(path=screenshots / "watch.png")

        await bob.request({"type": "resign"})
        await ann.page.click("#resign-btn")
        await ann.page.click("#resign-btn")
        await expect(page.locator("#watch-ranking tbody tr")).to_have_count(2)
        await expect(page.locator("#watch-replay")).to_have_attribute("href", f"/replay/{code}")
        assert watcher.errors == [] and ann.errors == []
    finally:
        await ann.close()


async def test_a_race_with_live_boards_is_watched_board_by_board(
    app: App, browser: Browser, clients: Any, screenshots: Path
) -> None:
    bob = await clients("bob")
    room = await bob.request({"type": "create_race", "game": "cruel", "deal": DEAL, "live_boards": True})
    code = room["race"]["code"]
    watcher = await Racer.open(browser, f"{app.url}watch/{code}")
    page = watcher.page
    try:
        board = page.locator("#watch-boards .replay-racer")
        await expect(board).to_have_count(1)
        await expect(page.locator("#watch-note")).to_contain_text("every racer's board")
        game = get_game("cruel")
        state = game.deal(DEAL, TEST_SECRET.encode())
        assert normalized(await zones(board)) == expected_zones(game.view(state))  # the deal, before the start

        await bob.request({"type": "start_race"})
        await bob.expect("race_started")
        await bob.request({"type": "move", "moves": list(LINE[:16])})
        for move in LINE[:16]:
            state = game.apply(state, game.parse_move(move))
        for _ in range(50):  # bounded: the boards come with the standings, ten times a second
            if normalized(await zones(board)) == expected_zones(game.view(state)):
                break
            await asyncio.sleep(0.1)
        assert normalized(await zones(board)) == expected_zones(game.view(state))
        await expect(page.locator("#watch-racers li", has_text="bob")).to_have_attribute("data-moves", "16")
        await page.screenshot(path=screenshots / "watch-live-boards.png", full_page=True)
        await bob.request({"type": "resign"})
        await expect(page.locator("#watch-ranking tbody tr")).to_have_count(1)
        assert watcher.errors == []
    finally:
        await watcher.close()
