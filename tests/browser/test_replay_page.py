"""The replay page (/replay/<code>): a finished race's boards side by side, played back on the
race clock: play, pause, a move back and forth, the scrubber; every board at every point is
the engine's view of that racer's position; reached from the end of a race."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from playwright.async_api import Browser, expect

from solitaire_race.app import App
from solitaire_race.engine import get_game

from ..conftest import TEST_SECRET, make_config
from ..support import held_back_chooser, winnable_deal
from .racer import BOARD_ZONES_JS, Racer
from .views import expected_zones, normalized

SECRET = TEST_SECRET.encode()
DEAL, LINE = winnable_deal("cruel", SECRET)


async def test_a_race_is_replayed_side_by_side(app: App, browser: Browser, clients: Any, screenshots: Path) -> None:
    ann, bob = await clients("ann"), await clients("bob")
    room = await ann.request({"type": "create_race", "game": "cruel", "deal": DEAL})
    code = room["race"]["code"]
    await bob.request({"type": "join_race", "code": code})
    await ann.request({"type": "start_race"})
    for c in (ann, bob):
        await c.expect("race_started")
    for i in range(0, len(LINE), 16):  # a few messages, so the moves have several times
        await ann.request({"type": "move", "moves": list(LINE[i : i + 16])})
        await asyncio.sleep(0.03)  # each message its own race time, even on a fast machine
    await bob.request({"type": "move", "moves": [LINE[0]]})
    await bob.request({"type": "resign"})
    await ann.expect("race_finished")

    viewer = await Racer.open(browser, f"{app.url}replay/{code.lower()}")
    page = viewer.page
    try:
        boards = page.locator(".replay-racer")
        await expect(boards).to_have_count(2)
        game = get_game("cruel")
        first = game.deal(DEAL, SECRET)
        ann_board, bob_board = boards.nth(0), boards.nth(1)
        await expect(ann_board).to_have_attribute("data-moves", "0")
        assert normalized(await zones(ann_board)) == expected_zones(game.view(first))

        # a move forward: bob's first move comes after ann's first sixteen
        await page.click("#replay-step")
        await expect(ann_board).to_have_attribute("data-moves", "16")
        state = first
        for move in LINE[:16]:
            state = game.apply(state, game.parse_move(move))
        assert normalized(await zones(ann_board)) == expected_zones(game.view(state))
        await page.click("#replay-back")
        await expect(ann_board).to_have_attribute("data-moves", "0")

        # played at 16x to the end: ann's board is won, bob's shows his one move and resignation
        await page.select_option("#replay-speed", "16")
        await page.click("#replay-play")
        await expect(ann_board).to_have_attribute("data-moves", str(len(LINE)), timeout=15_000)
        await expect(page.locator("#replay-play")).to_have_text("▶ Play", timeout=15_000)  # stopped at the end
        await expect(bob_board.locator(".replay-status")).to_contain_text("resigned")
        for move in LINE[16:]:
            state = game.apply(state, game.parse_move(move))
        assert normalized(await zones(ann_board)) == expected_zones(game.view(state))
        await page.screenshot(path=screenshots / "replay.png", full_page=True)

        # the scrubber, back to the start
        await page.locator("#replay-scrub").fill("0")
        await expect(ann_board).to_have_attribute("data-moves", "0")

        # race ann's run as a ghost: a practice race whose racers panel has her, at her pace
        await ann_board.locator("a.race-ghost").click()
        await viewer.sign_in("cat")
        await expect(page.locator("#screen-room")).to_be_visible()
        await page.click("#start-btn")
        await viewer.wait_board("cruel")
        ghost = page.locator("#racers .racer.ghost")
        await expect(ghost).to_contain_text("ann (ghost)")
        await expect(ghost).to_have_attribute("data-outcome", "won")  # her whole run took a moment
        await page.screenshot(path=screenshots / "ghost-race.png")
        await page.click("#resign-btn")
        await page.click("#resign-btn")
        await expect(page.locator("#results-ghost")).to_contain_text("Against ann's run (won in")
        # third of three: after ann's win and bob's resignation, who had made a move
        await expect(page.locator("#results-ghost")).to_contain_text(f"you would have been #3 of 3 in race {code}")
        assert viewer.errors == []
    finally:
        await viewer.close()


async def zones(board: Any) -> dict[str, list[str]]:
    """A replay board's zones, read as the race screen's are."""
    return dict(await board.locator(".replay-board").evaluate(BOARD_ZONES_JS))


async def test_the_daily_par_line_opens_after_the_ranked_attempt(tmp_path: Path, browser: Browser) -> None:
    gate = asyncio.Event()
    gate.set()
    app = await App.start(make_config(tmp_path), choose_daily=held_back_chooser(SECRET, gate))
    ann = await Racer.open(browser, app.url)
    try:
        page = ann.page
        await ann.sign_in("ann")
        await page.click("#daily-list button[data-daily='clock']")
        await page.click("#confirm-daily-start")
        await ann.wait_board("clock")
        await page.click("#resign-btn")
        await page.click("#resign-btn")
        link = page.locator("#results #par-line")
        await expect(link).to_contain_text("Watch the par line (")
        par = int((await link.inner_text()).split("(")[1].split()[0])
        async with page.context.expect_page() as opened:
            await link.click()
        replay = await opened.value
        board = replay.locator(".replay-racer")
        await expect(board).to_have_count(1)
        await expect(board.locator("h2")).to_contain_text("par")
        await replay.locator("#replay-scrub").press("End")  # the scrubber to the end of the line
        await expect(board).to_have_attribute("data-moves", str(par))
        await expect(board.locator(".replay-status")).to_contain_text("won")
        assert ann.errors == []
    finally:
        await ann.close()
        await app.stop()
