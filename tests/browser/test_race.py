"""Two people race one deal in two browser pages, from the lobby to the ranking: a move by
click and one by drag are accepted, an illegal move is refused with the server's reason, the
other page follows the progress, a game is won through the board, and the ranking appears."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from playwright.async_api import Browser, expect

from solitaire_race.app import App
from solitaire_race.engine import IllegalMove, get_game

from ..conftest import TEST_SECRET
from ..support import winnable_deal
from .racer import Racer, perform
from .views import expected_zones, normalized

SECRET = TEST_SECRET.encode()


def an_illegal_build(game: Any, state: Any) -> tuple[str, str]:
    """A pile-to-pile move the rules refuse now, with the engine's reason."""
    for src in range(1, 13):
        for dst in range(1, 13):
            if src == dst:
                continue
            text = f"{src}>{dst}"
            try:
                game.apply(state, game.parse_move(text))
            except IllegalMove as exc:
                return text, str(exc)
    raise AssertionError("every build is legal?")


async def player_id(racer: Racer) -> int:
    return int(await racer.page.evaluate("window.solitaireRace.me.id"))


async def test_two_pages_race_one_deal_to_the_ranking(app: App, browser: Browser, screenshots: Path) -> None:
    game = get_game("cruel")
    deal, line = winnable_deal("cruel", SECRET)
    ann = await Racer.open(browser, app.url)
    bob = await Racer.open(browser, app.url)

    # lobby: a name once, then create a race and share its link
    await expect(ann.page.locator("#screen-signin")).to_be_visible()
    await ann.page.screenshot(path=screenshots / "sign-in.png")
    await ann.sign_in("ann")
    await ann.page.screenshot(path=screenshots / "lobby.png", full_page=True)
    code = await ann.create_race("cruel", deal)
    link = await ann.page.input_value("#room-link")
    assert link == f"{app.config.public_url}/join/{code}"

    # bob follows the link, picks a name, and is in the room
    await bob.page.goto(link)
    await expect(bob.page.locator("#invite")).to_contain_text(code)
    await bob.sign_in("bob")
    await expect(bob.page.locator("#screen-room")).to_be_visible()
    for racer in (ann, bob):
        await expect(racer.page.locator("#room-players li")).to_have_count(2)
    await expect(ann.page.locator("#start-btn")).to_be_visible()
    await expect(bob.page.locator("#start-btn")).to_be_hidden()  # only the creator starts
    await ann.page.screenshot(path=screenshots / "room.png")

    # both ready: the countdown runs and the race starts on the same deal in both pages
    await ann.page.click("#ready-btn")
    await expect(bob.page.locator("#room-players li.ready")).to_have_count(1)
    await bob.page.click("#ready-btn")
    state = game.deal(deal, SECRET)
    for racer in (ann, bob):
        await racer.wait_board("cruel")
        assert normalized(await racer.zones()) == expected_zones(game.view(state))
    ann_id = await player_id(ann)
    ann_in_bobs_panel = bob.page.locator(f".racer[data-player-id='{ann_id}']")
    await expect(ann_in_bobs_panel).to_have_attribute("data-moves", "0")

    # one move by click, one by drag; the other page sees the progress
    for i, how in enumerate(("click", "drag")):
        await perform(ann, line[i], how)
        state = game.apply(state, game.parse_move(line[i]))
        await ann.expect_moves(i + 1)
    assert normalized(await ann.zones()) == expected_zones(game.view(state))
    await expect(ann_in_bobs_panel).to_have_attribute("data-moves", "2")
    await expect(ann_in_bobs_panel).to_have_attribute("data-home", str(game.progress(state).home))

    # an illegal drag: the server's reason is shown and the cards snap back
    illegal, reason = an_illegal_build(game, state)
    shown = await ann.toasts()
    await perform(ann, illegal, "drag")
    assert await ann.toast(after=shown) == reason
    await ann.expect_moves(2)
    await expect(ann.page.locator(".drag-ghost")).to_have_count(0)
    assert normalized(await ann.zones()) == expected_zones(game.view(state))

    # the rest of the winning line, through the board
    for i, move in enumerate(line[2:], start=2):
        await perform(ann, move, "drag" if i % 10 == 0 else "click", after=i)
        state = game.apply(state, game.parse_move(move))
    await ann.expect_moves(len(line))
    assert game.is_won(state)
    await expect(ann.page.locator("#race-status")).to_contain_text("You won!")
    await expect(ann.page.locator("#board .celebration")).to_contain_text("Solved!")  # a moment, then gone
    await expect(ann_in_bobs_panel).to_have_attribute("data-outcome", "won")
    await expect(bob.page.locator("#announcer")).to_contain_text("ann: won in ")  # told to a screen reader
    await expect(ann_in_bobs_panel.locator(".racer-status")).to_contain_text(":")  # a time
    await ann.page.screenshot(path=screenshots / "race-won-waiting.png")

    # bob gives up (two clicks): the race ends and both pages rank it
    await bob.page.click("#resign-btn")
    await bob.page.click("#resign-btn")
    bob_id = await player_id(bob)
    for racer in (ann, bob):
        results = racer.page.locator("#results")
        await expect(results).to_be_visible()
        rows = results.locator("tbody tr")
        await expect(rows).to_have_count(2)
        await expect(rows.nth(0)).to_have_attribute("data-player-id", str(ann_id))
        await expect(rows.nth(0).locator(".outcome")).to_have_text("won")
        await expect(rows.nth(1)).to_have_attribute("data-player-id", str(bob_id))
        await expect(rows.nth(1).locator(".outcome")).to_have_text("resigned")
        href = await results.locator("#deal-leaderboard").get_attribute("href")
        assert href == f"/leaderboard?game=cruel&deal={deal}"
    await ann.page.screenshot(path=screenshots / "end-of-race.png")

    # bob goes back to the lobby; ann follows the link to the deal's leaderboard
    await bob.page.click("text=Back to lobby")
    await expect(bob.page.locator("#screen-lobby")).to_be_visible()
    await ann.page.click("#deal-leaderboard")
    first = ann.page.locator("#rows tr").first
    await expect(first).to_contain_text("ann")
    await expect(first).to_contain_text("won")
    assert ann.errors == [] and bob.errors == []
