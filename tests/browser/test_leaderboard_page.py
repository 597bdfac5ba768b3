"""The /leaderboard page in a real browser, against the real server and its JSON API."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from playwright.async_api import Browser, expect

from solitaire_race.app import App
from solitaire_race.client.known import legal_moves
from solitaire_race.engine import get_game


async def test_daily_board_pages_own_row_and_board_switch(
    app: App, clients: Any, browser: Browser, screenshots: Path
) -> None:
    players = {}
    for i in range(23):  # two pages of 20; everyone resigns without a move
        client = await clients(f"racer{i:02d}")
        await client.request({"type": "start_daily", "game": "cruel"})
        await client.request({"type": "resign"})
        await client.expect("race_finished")
        players[f"racer{i:02d}"] = client
    # The same progress ranks by the time of the resignation (a few ms apart): the board's
    # order, as the queries give it (test_leaderboards.py checks that order itself).
    board = await app.gateway.queries.leaderboard(board="daily", game="cruel", page_size=100)
    order = [entry["name"] for entry in board["entries"]]
    assert sorted(order) == sorted(players)
    me = players[order[21]].player["id"]

    page = await browser.new_page(viewport={"width": 1100, "height": 900})
    await page.goto(f"{app.url}leaderboard?game=cruel&me={me}")
    await page.wait_for_selector("#rows tr.me")
    names = await page.locator("#rows tr:not(.gap) td:nth-child(2)").all_inner_texts()
    assert names[:20] == order[:20]
    assert names[20:] == [order[21]]  # the viewer's own row, below the page
    assert await page.locator("#rows tr.me td:first-child").inner_text() == "22"
    assert "23 players" in await page.locator("#summary").inner_text()
    replay = await page.locator("#rows tr.me a.replay-link").get_attribute("href")  # each result's race, replayed
    assert replay == f"/replay/{board['entries'][21]['race_code']}"
    await page.screenshot(path=str(screenshots / "leaderboard-daily.png"))

    await page.click("#next-page")
    await page.wait_for_function("() => document.querySelector('#page-label').textContent === 'page 2 of 2'")
    names = await page.locator("#rows tr td:nth-child(2)").all_inner_texts()
    assert names == order[20:]
    assert "page=2" in page.url

    await page.click("button[data-board=win_rate]")
    await page.wait_for_function("() => document.querySelector('#summary').textContent.includes('win rate')")
    assert "No results yet" in await page.locator("#rows").inner_text()  # nobody has 10 games
    await page.fill("#min-games", "1")
    await page.dispatch_event("#min-games", "change")
    # A page of 20, and the viewer's own row below it if they rank further down there.
    win_rate = await app.gateway.queries.leaderboard(board="win_rate", game="cruel", min_games=1, viewer=me)
    rows = 20 + (win_rate["me"]["rank"] > 20)
    await page.wait_for_function(f"() => document.querySelectorAll('#rows tr:not(.gap)').length === {rows}")
    assert await page.locator("#rows tr td:nth-child(3)").first.inner_text() == "0%"

    # The app's top bar, and through it the way back to the daily challenges.
    await page.click("header.topbar a[href='/#daily']")
    await page.fill("#name", "visitor")  # this page has no identity yet: a name first
    await page.click("#signin-btn")
    await expect(page.locator("#daily-list li button[data-daily]")).to_have_count(7)
    await expect(page.locator("#daily")).to_be_in_viewport()


async def test_medals_go_only_to_results_that_earned_them(
    app: App, clients: Any, browser: Browser, screenshots: Path
) -> None:
    """Daily attempts resigned without a move rank 1-3 on the board, but earn no medal;
    one with a move made does."""
    resigned = []
    for i in range(2):
        client = await clients(f"idle{i}")
        await client.request({"type": "start_daily", "game": "cruel"})
        await client.request({"type": "resign"})
        await client.expect("race_finished")
        resigned.append(client)
    mover = await clients("mover")
    started = await mover.request({"type": "start_daily", "game": "cruel"})
    game = get_game("cruel")
    move = game.format_move(legal_moves(started["view"])[0])
    assert (await mover.request({"type": "move", "moves": [move]}))["applied"] == [move]
    await mover.request({"type": "resign"})
    await mover.expect("race_finished")

    page = await browser.new_page(viewport={"width": 1100, "height": 900})
    await page.goto(f"{app.url}leaderboard?game=cruel")
    await page.wait_for_selector("#rows tr")
    rows = page.locator("#rows tr:not(.gap)")
    by_name = {}
    for i in range(await rows.count()):
        name = await rows.nth(i).locator("td:nth-child(2)").inner_text()
        by_name[name] = await rows.nth(i).locator("td:first-child").get_attribute("class") or ""
    assert "medal" in by_name["mover"], by_name  # one move: a game played
    assert "medal" not in by_name["idle0"] and "medal" not in by_name["idle1"], by_name
    await page.screenshot(path=str(screenshots / "leaderboard-medals.png"))
