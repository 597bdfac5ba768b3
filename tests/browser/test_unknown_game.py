"""A game added to the server without a drawing in the browser still works: every page that
draws a board (the race screen, the replay, the spectator's live boards, the rules' picture)
takes its renderer from games/index.js's rendererFor, which falls back to drawing the view's
fields with every card. Here the pages are served a games/index.js that has no Cruel, as a
page would be for a game added after it was written."""

from __future__ import annotations

import asyncio
from collections import Counter
from pathlib import Path
from typing import Any

from playwright.async_api import Browser, Route, expect

from solitaire_race.app import App
from solitaire_race.engine import get_game

from ..conftest import TEST_SECRET, http_json
from ..support import winnable_deal
from .racer import DESKTOP, TIMEOUT_MS, Racer
from .test_rules import view_cards

SECRET = TEST_SECRET.encode()
DEAL, LINE = winnable_deal("cruel", SECRET)
CARDS_JS = "(root) => [...root.querySelectorAll('[data-card]')].map((e) => e.dataset.card)"


async def without_cruel(route: Route) -> None:
    """games/index.js as it is, less its Cruel renderer."""
    response = await route.fetch()
    body = await response.text()
    assert "\n  cruel,\n" in body
    await route.fulfill(response=response, body=body.replace("\n  cruel,\n", "\n"))


async def open_page(browser: Browser, url: str) -> Racer:
    context = await browser.new_context(viewport=DESKTOP, reduced_motion="reduce")
    context.set_default_timeout(TIMEOUT_MS)
    await context.route("**/js/games/index.js", without_cruel)
    page = await context.new_page()
    racer = Racer(page)
    await page.goto(url)
    return racer


def cards_of(view: dict[str, Any]) -> Counter[str]:
    return view_cards({k: v for k, v in view.items() if k != "game"})


async def test_replay_and_live_boards_of_a_game_without_a_drawing(
    app: App, browser: Browser, clients: Any, screenshots: Path
) -> None:
    game = get_game("cruel")
    start = game.deal(DEAL, SECRET)
    after = start
    for move in LINE[:8]:
        after = game.apply(after, game.parse_move(move))

    # the spectator's live boards: the deal, then the position after bob's moves
    bob = await clients("bob")
    room = await bob.request({"type": "create_race", "game": "cruel", "deal": DEAL, "live_boards": True})
    code = room["race"]["code"]
    watcher = await open_page(browser, f"{app.url}watch/{code}")
    try:
        board = watcher.page.locator("#watch-boards .replay-racer .replay-board")
        await expect(board.locator(".unknown-game")).to_contain_text("no drawing of cruel")
        assert Counter(await board.evaluate(CARDS_JS)) == cards_of(game.view(start))
        await bob.request({"type": "start_race"})
        await bob.expect("race_started")
        await bob.request({"type": "move", "moves": list(LINE[:8])})
        for _ in range(50):  # bounded: the boards come with the standings, ten times a second
            if Counter(await board.evaluate(CARDS_JS)) == cards_of(game.view(after)):
                break
            await asyncio.sleep(0.1)
        assert Counter(await board.evaluate(CARDS_JS)) == cards_of(game.view(after))
        await watcher.page.screenshot(path=screenshots / "unknown-game-watch.png", full_page=True)
        await bob.request({"type": "resign"})
        await expect(watcher.page.locator("#watch-ranking tbody tr")).to_have_count(1)
        assert watcher.errors == []
    finally:
        await watcher.close()

    # its replay: the deal at 0 moves, the position after them at the end
    viewer = await open_page(browser, f"{app.url}replay/{code}")
    try:
        page = viewer.page
        board = page.locator(".replay-racer")
        await expect(board).to_have_attribute("data-moves", "0")
        await expect(board.locator(".unknown-game")).to_be_visible()
        assert Counter(await board.locator(".replay-board").evaluate(CARDS_JS)) == cards_of(game.view(start))
        await page.locator("#replay-scrub").press("End")
        await expect(board).to_have_attribute("data-moves", "8")
        assert Counter(await board.locator(".replay-board").evaluate(CARDS_JS)) == cards_of(game.view(after))
        assert viewer.errors == []
    finally:
        await viewer.close()


async def test_the_race_screen_and_the_rules_of_a_game_without_a_drawing(app: App, browser: Browser) -> None:
    game = get_game("cruel")
    ann = await open_page(browser, app.url)
    try:
        page = ann.page
        await ann.sign_in("ann")
        await ann.start_solo("cruel", DEAL)
        await expect(page.locator("#board .unknown-game")).to_be_visible()
        assert Counter(await page.locator("#board").evaluate(CARDS_JS)) == cards_of(game.view(game.deal(DEAL, SECRET)))
        await page.click("#resign-btn")
        await page.click("#resign-btn")
        await expect(page.locator("#results")).to_be_visible()

        await page.goto(f"{app.url}rules/cruel")
        await expect(page.locator("#rules-figure")).to_be_visible()
        await expect(page.locator("#board .unknown-game")).to_be_visible()
        _, rules = await http_json(app, "/api/rules/cruel")
        assert Counter(await page.locator("#board").evaluate(CARDS_JS)) == cards_of(rules["example"]["view"])
        assert ann.errors == []
    finally:
        await ann.close()
