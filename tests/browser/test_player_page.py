"""A player's page (/player/<id>): stats per game, best times, recent races and the daily
streak, as the API has them; every name links to it (the leaderboard's, the header's)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from playwright.async_api import Browser, expect

from solitaire_race.app import App

from ..conftest import TEST_SECRET
from ..support import winnable_deal
from .racer import Racer

DEAL, LINE = winnable_deal("cruel", TEST_SECRET.encode())


async def a_won_race_and_a_daily(client: Any) -> None:
    """``client`` wins a solo race of Cruel and gives up today's daily: two results."""
    await client.request({"type": "create_race", "game": "cruel", "deal": DEAL})
    await client.request({"type": "start_race"})
    await client.expect("race_started")
    for at in range(0, len(LINE), 64):
        reply = await client.request({"type": "move", "moves": list(LINE[at : at + 64])})
    assert reply["outcome"] == "won"
    await client.expect("race_finished")
    await client.request({"type": "leave_race"})
    assert (await client.request({"type": "start_daily", "game": "perseverance"}))["type"] == "race_started"
    await client.request({"type": "resign"})
    await client.expect("race_finished")


async def test_a_players_page_shows_their_stats_and_races(
    app: App, browser: Browser, clients: Any, screenshots: Path
) -> None:
    ann = await clients("ann")
    await a_won_race_and_a_daily(ann)
    ann_id = ann.player["id"]

    # bob opens the leaderboard of ann's deal and follows her name to her page
    bob = await Racer.open(browser, app.url)
    await bob.sign_in("bob")
    bob_id = int(await bob.page.evaluate("window.solitaireRace.me.id"))
    await expect(bob.page.locator("#who")).to_have_attribute("href", f"/player/{bob_id}")
    await bob.page.goto(f"{app.url}leaderboard?game=cruel&deal={DEAL}")
    await bob.page.click("#rows a.player-link:has-text('ann')")
    await expect(bob.page).to_have_url(f"{app.url}player/{ann_id}")
    page = bob.page
    await expect(page.locator("#player-name")).to_have_text("ann")
    await expect(page.locator("#player-summary")).to_have_text("2 races · 1 win")
    await expect(page.locator("#streak")).to_contain_text("1 day daily streak")
    cruel = page.locator("#game-stats tr[data-game='cruel'] td")
    await expect(cruel).to_have_text(["Cruel", "1", "1", "100%", await cruel.nth(4).inner_text(), str(len(LINE))])
    assert (await cruel.nth(4).inner_text()).count(":") == 1  # a time, m:ss.t
    recent = page.locator("#recent tbody tr")
    await expect(recent).to_have_count(2)
    await expect(recent.nth(0)).to_contain_text("Perseverance")
    await expect(recent.nth(0).locator("td").nth(2)).to_contain_text("daily ")
    won_time = await recent.nth(1).locator("td").nth(5).inner_text()
    await expect(recent.nth(1).locator("td")).to_have_text(
        ["today", "Cruel", f"deal {DEAL}", "1 of 1", "won", won_time, str(len(LINE)), "replay"]
    )
    await expect(page.locator("#my-page")).to_have_attribute("href", f"/player/{bob_id}")
    await page.screenshot(path=screenshots / "player-page.png", full_page=True)

    # bob's own page says it is his; an unknown player is said to be unknown
    await page.click("#my-page")
    await expect(page.locator("#player-name")).to_have_text("bob (you)")
    await expect(page.locator("#recent tbody")).to_contain_text("No races yet.")
    await page.goto(f"{app.url}player/999999")
    await expect(page.locator("#player-name")).to_have_text("No such player")
    await expect(page.locator("#error")).to_contain_text("no player 999999")
    assert bob.errors == ["Failed to load resource: the server responded with a status of 404 (Not Found)"]
    await bob.close()
