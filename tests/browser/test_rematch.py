"""A group races again together: after a race one player proposes a rematch, the other sees
the proposal on the results and joins it with one click; when both press "rematch" at once
they land in one room. The room and the results carry the series' score (best of 3)."""

from __future__ import annotations

import asyncio
from pathlib import Path

from playwright.async_api import Browser, expect

from solitaire_race.app import App

from .racer import Racer


async def both_resign(*racers: Racer) -> None:
    for racer in racers:
        await racer.wait_board("cruel")
    for racer in racers:  # two clicks: the second confirms
        await racer.page.click("#resign-btn")
        await racer.page.click("#resign-btn")
    for racer in racers:
        await expect(racer.page.locator("#results")).to_be_visible()


async def test_a_rematch_keeps_the_group_together_and_scores_the_series(
    app: App, browser: Browser, screenshots: Path
) -> None:
    ann = await Racer.open(browser, app.url)
    bob = await Racer.open(browser, app.url)
    await ann.sign_in("ann")
    await ann.page.select_option("#best-of", "3")
    code = await ann.create_race("cruel", 7)
    await expect(ann.page.locator("#room-series")).to_have_text("Best of 3 · race 1")
    await bob.page.goto(await ann.page.input_value("#room-link"))
    await bob.sign_in("bob")
    await expect(bob.page.locator("#room-players li")).to_have_count(2)
    await ann.page.click("#start-btn")
    await both_resign(ann, bob)  # ann gave up first: she is first of the two who resigned
    for racer in (ann, bob):
        await expect(racer.page.locator("#results-series")).to_have_text("Best of 3 · race 1 · ann 1 – bob 0")

    # bob proposes a rematch on a new deal; ann sees it on her results and joins with one click
    await bob.page.click("#rematch-new")
    await expect(bob.page.locator("#screen-room")).to_be_visible()
    rematch = await bob.page.locator("#room-code").get_attribute("data-code")
    assert rematch and rematch != code
    offer = ann.page.locator("#rematch-offer")
    await expect(offer).to_have_text("bob proposes a rematch on a new deal.")
    await ann.page.screenshot(path=screenshots / "rematch-proposed.png")
    await ann.page.click("#join-rematch")
    await expect(ann.page.locator("#screen-room")).to_be_visible()
    for racer in (ann, bob):
        await expect(racer.page.locator("#room-code")).to_have_attribute("data-code", rematch)
        await expect(racer.page.locator("#room-players li")).to_have_count(2)
        await expect(racer.page.locator("#room-series")).to_have_text("Best of 3 · race 2 · ann 1 – bob 0")
    await bob.page.screenshot(path=screenshots / "rematch-room.png")

    # race 2, then both press "rematch" at the same moment: one room for both
    await bob.page.click("#start-btn")
    await both_resign(bob, ann)  # bob first this time: 1-1
    for racer in (ann, bob):
        await expect(racer.page.locator("#results-series")).to_have_text("Best of 3 · race 2 · ann 1 – bob 1")
    # Both at once, each with the button their page shows then: the other's proposal may
    # already have turned theirs into "Join the rematch" (a click that waited would miss it).
    press = "(document.querySelector('#rematch-same') || document.querySelector('#join-rematch')).click()"
    await asyncio.gather(ann.page.evaluate(press), bob.page.evaluate(press))
    for racer in (ann, bob):
        await expect(racer.page.locator("#screen-room")).to_be_visible()
        await expect(racer.page.locator("#room-players li")).to_have_count(2)
        await expect(racer.page.locator("#room-series")).to_have_text("Best of 3 · race 3 · ann 1 – bob 1")
    codes = {await r.page.locator("#room-code").get_attribute("data-code") for r in (ann, bob)}
    assert len(codes) == 1 and rematch not in codes

    # the deciding race: ann wins the series
    creator = ann if await ann.page.locator("#start-btn").is_visible() else bob
    await creator.page.click("#start-btn")
    await both_resign(ann, bob)
    for racer in (ann, bob):
        await expect(racer.page.locator("#results-series")).to_have_text(
            "Best of 3 · race 3 · ann 2 – bob 1 · ann wins the series!"
        )
    await ann.page.screenshot(path=screenshots / "series-won.png")
    assert ann.errors == [] and bob.errors == []
    await ann.close()
    await bob.close()
