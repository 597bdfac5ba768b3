"""Hints in a real browser: the Hint button is offered only when practising a past day's
daily challenge (not in a race, not on today's deal, ranked or replayed), and there it
shows a move the engine accepts, marks where it starts on the board, and the move can be
played from there."""

from __future__ import annotations

import re
from datetime import timedelta
from pathlib import Path

from playwright.async_api import Browser, expect

from solitaire_race.app import App
from solitaire_race.engine import get_game

from ..conftest import TEST_SECRET, make_config
from ..test_daily import WINNABLE_DAY, WallClock  # its Perseverance daily has a solution
from .racer import Racer, perform


async def test_the_hint_button_only_when_practising_a_past_day(
    tmp_path: Path, browser: Browser, screenshots: Path
) -> None:
    wall = WallClock(WINNABLE_DAY)
    app = await App.start(make_config(tmp_path), wall_clock=wall)
    ann = await Racer.open(browser, app.url)
    page = ann.page
    hint = page.locator("#hint-btn")
    try:
        await ann.sign_in("ann")

        # A race: no button (the server refuses hints there).
        await ann.start_solo("cruel", 1)
        await expect(hint).to_be_hidden()
        await ann.leave_race()

        # The ranked daily attempt: none either.
        play = page.locator("#daily-list button[data-daily='perseverance']")
        await play.click()
        await page.click("#confirm-daily-start")
        await ann.wait_board("perseverance")
        await expect(page.locator("#race-deal")).to_contain_text("ranked")
        await expect(hint).to_be_hidden()
        await ann.leave_race()

        # Today's deal replayed, unranked: no button either (its line would be one identity's
        # hints away from another's ranked attempt).
        await expect(play).to_have_text("Replay")
        await play.click()
        await ann.wait_board("perseverance")
        await expect(page.locator("#race-deal")).to_contain_text("replay, unranked")
        await expect(hint).to_be_hidden()
        await ann.leave_race()

        # The next day, practising that day's deal: the button, and a move the engine
        # accepts where the player stands.
        wall.now = WINNABLE_DAY + timedelta(days=1)
        await page.reload()
        practise = page.locator("#daily-list button[data-practice='perseverance']")
        await practise.click()
        await ann.wait_board("perseverance")
        await expect(page.locator("#race-deal")).to_contain_text(f"daily {WINNABLE_DAY.date()} · practice")
        await expect(hint).to_be_visible()
        deal = int((await page.locator("#race-deal").get_attribute("title") or "").removeprefix("deal "))
        shown = await ann.toasts()
        await hint.click()
        said = re.fullmatch(r"Hint: (\S+) \(the next move of a winning line\)", await ann.toast(after=shown))
        assert said, await page.locator("#toast").inner_text()
        move = said[1]
        game = get_game("perseverance")
        game.apply(game.deal(deal, TEST_SECRET.encode()), game.parse_move(move))  # legal

        # Marked on the board: the source pile (or the Redeal button) and the target.
        source = page.locator("#board .hint-from")
        await expect(source).to_have_count(1)
        if pile := re.match(r"(\d+)>", move):
            await expect(source).to_have_attribute("data-pile", pile[1])
            target = "f" if move.endswith(">f") else f"p{move.split('>')[1]}"
            await expect(page.locator("#board .hint-to")).to_have_attribute("data-dst", target)
        await page.screenshot(path=screenshots / "hint.png")

        # Played from the board as hinted: accepted, and the marks go with the old board.
        await perform(ann, move)
        await ann.expect_moves(1)
        await expect(page.locator("#board .hint-from")).to_have_count(0)
        assert ann.errors == []
    finally:
        await ann.close()
        await app.stop()
