"""The lobby in a real browser: the name is asked once, races are joined by typed code or
from the public list, a stale token sends you back to pick a name, and the daily challenge
starts from the lobby and ends with its leaderboard link."""

from __future__ import annotations

import re
from pathlib import Path

from playwright.async_api import Browser, expect

from solitaire_race.app import App

from .racer import Racer


async def the_name_is_asked_once_and_a_stale_token_asks_again(ann: Racer) -> None:
    await ann.sign_in("ann")
    await ann.page.reload()
    await expect(ann.page.locator("#screen-lobby")).to_be_visible()
    await expect(ann.page.locator("#who")).to_have_text("ann")
    # a token the server does not know (another server's): back to the name form, name kept
    await ann.page.evaluate("localStorage.setItem('solitaireRace.token', 'not-a-real-token')")
    await ann.page.reload()
    await expect(ann.page.locator("#screen-signin")).to_be_visible()
    await expect(ann.page.locator("#name")).to_have_value("ann")
    # the name is taken (by ann's lost identity): the server says so
    await ann.page.click("#signin-btn")
    await expect(ann.page.locator("#signin-error")).not_to_be_empty()
    await ann.sign_in("ann2")


async def join_by_typed_code_and_from_the_public_list(ann: Racer, bob: Racer, cat: Racer) -> None:
    await bob.sign_in("bob")
    code = await ann.create_race("clock", 5, public=True)
    # bob types the code as someone would read it out: lower case, with a dash
    await bob.page.fill("#join-code", f"{code[:3].lower()}-{code[3:].lower()}")
    await bob.page.click("#join-form button")
    await expect(bob.page.locator("#room-code")).to_have_attribute("data-code", code)
    # cat finds it in the open races and joins from there
    await cat.sign_in("cat")
    entry = cat.page.locator("#open-races li", has_text="Clock")
    await expect(entry).to_contain_text("ann2, bob")
    await entry.locator("button").click()
    await expect(cat.page.locator("#screen-room")).to_be_visible()
    await expect(ann.page.locator("#room-players li")).to_have_count(3)
    # a code that is no race: the reason, and still in the lobby
    await ann.page.click("#leave-btn")
    await ann.page.fill("#join-code", "BCDFGH")
    shown = await ann.toasts()
    await ann.page.click("#join-form button")
    assert await ann.toast(after=shown) == "no race with code 'BCDFGH'"
    await expect(ann.page.locator("#screen-lobby")).to_be_visible()


async def the_daily_challenge_from_the_lobby(ann: Racer, screenshots: Path) -> None:
    countdown = re.compile(r"^([01]?[0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9]$")  # to midnight UTC
    await expect(ann.page.locator("#daily-next")).to_have_text(countdown)
    play = ann.page.locator("#daily-list button[data-daily='cruel']")
    await expect(play).to_have_text("Play")
    # the one ranked attempt is confirmed first: "Not now" changes nothing
    dialog = ann.page.locator("#confirm-daily")
    await play.click()
    await expect(dialog).to_be_visible()
    await expect(dialog).to_contain_text("one ranked try at today's deal")
    await ann.page.screenshot(path=screenshots / "daily-confirm.png")
    await ann.page.click("#confirm-daily-cancel")
    await expect(dialog).to_be_hidden()
    await expect(ann.page.locator("#screen-lobby")).to_be_visible()
    await expect(play).to_have_text("Play")
    await play.click()
    await ann.page.click("#confirm-daily-start")
    await ann.wait_board("cruel")
    await expect(ann.page.locator("#race-deal")).to_contain_text("ranked")
    await ann.page.click("#resign-btn")
    await ann.page.click("#resign-btn")
    results = ann.page.locator("#results")
    await expect(results).to_be_visible()
    href = await results.locator("#daily-leaderboard").get_attribute("href")
    assert href is not None and href.startswith("/leaderboard?game=cruel&board=daily&date=")
    day = href.rsplit("=", 1)[1]
    # the result to paste to friends, with the streak the attempt just made
    await expect(results.locator("#share-line")).to_have_text(
        f"Solitaire Race · Cruel daily {day} · ✗ resigned · 4/52 cards home · 1-day streak"
    )
    await ann.page.screenshot(path=screenshots / "daily-results.png")
    await ann.page.click("text=Back to lobby")
    # the ranked attempt is used: the lobby offers a replay
    await expect(play).to_have_text("Replay")
    await play.click()  # no confirmation: a replay is unranked
    await expect(ann.page.locator("#race-deal")).to_contain_text("unranked")


async def test_the_lobby(app: App, browser: Browser, screenshots: Path) -> None:
    ann, bob, cat = [await Racer.open(browser, app.url) for _ in range(3)]
    await the_name_is_asked_once_and_a_stale_token_asks_again(ann)
    await join_by_typed_code_and_from_the_public_list(ann, bob, cat)
    await the_daily_challenge_from_the_lobby(ann, screenshots)
    assert ann.errors == bob.errors == cat.errors == []
