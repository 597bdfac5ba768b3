"""The board uses the screen: on a 1280x860 window the wide boards (12, 10 and 8 columns)
take the whole width, the racers moving to a strip above them, and their cards grow with
it; Clock and Patriarchs, as tall as wide, keep the racers beside them and fill the height."""

from __future__ import annotations

from pathlib import Path

from playwright.async_api import Browser, ViewportSize, expect

from solitaire_race.app import App

from .racer import Racer

WINDOW: ViewportSize = {"width": 1280, "height": 860}


async def test_boards_fill_a_laptop_window(app: App, browser: Browser, screenshots: Path) -> None:
    racer = await Racer.open(browser, app.url, viewport=WINDOW)
    page = racer.page
    try:
        await racer.sign_in("wide")
        for game, strip in [("perseverance", True), ("parallels", True), ("persian-patience", True),
                            ("clock", False), ("patriarchs", False)]:
            await racer.start_solo(game, 7)
            board = await page.locator("#board").bounding_box()
            racers = await page.locator("#racers").bounding_box()
            card = await page.locator("#board .card").first.bounding_box()
            content = await page.locator("#board .board-content > *").first.bounding_box()
            assert board and racers and card and content
            if strip:  # the racers above the board, the board across the window, big cards
                assert racers["y"] + racers["height"] <= board["y"], game
                assert board["width"] >= 0.95 * (WINDOW["width"] - 24), game
                assert card["width"] >= 90, (game, card["width"])
            else:  # beside it, and the board's drawing takes most of the height below the bars
                assert racers["x"] >= board["x"] + board["width"], game
                assert content["height"] >= 0.6 * WINDOW["height"], (game, content["height"])
            await page.screenshot(path=screenshots / f"laptop-{game}.png")
            await racer.leave_race()
            await expect(page.locator("#screen-lobby")).to_be_visible()
        assert racer.errors == []
    finally:
        await racer.close()
