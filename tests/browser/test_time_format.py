"""Times read the same everywhere: js/format.js's formatTime at its boundaries (cut to the
tenth, never rounded up), its formatCountdown (the lobby's countdown to the next daily,
h:mm:ss cut to the second) at its boundaries and in the lobby itself, and one race's times
as the race screen (clock, racers panel, ranking) and the leaderboard page show them, each
racer finishing at a chosen millisecond."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from playwright.async_api import Browser, expect

from solitaire_race.app import App

from ..conftest import TEST_SECRET
from ..support import winnable_deal
from .racer import Racer

SECRET = TEST_SECRET.encode()

# milliseconds → what every page shows
SHOWN = {
    0: "0:00.0",
    999: "0:00.9",
    11_953: "0:11.9",
    59_949: "0:59.9",
    59_950: "0:59.9",
    59_960: "0:59.9",
    59_999: "0:59.9",
    60_000: "1:00.0",
    3_599_999: "59:59.9",
    3_600_000: "1:00:00",
}


async def test_format_time_at_its_boundaries(app: App, browser: Browser) -> None:
    racer = await Racer.open(browser, app.url)
    try:
        shown = await racer.page.evaluate(
            """async (values) => {
              const { formatTime } = await import('/js/format.js');
              return values.map((ms) => formatTime(ms));
            }""",
            [*SHOWN, 1999.7, 3_661_000, 36_000_000, None],
        )
        assert shown == [*SHOWN.values(), "0:01.9", "1:01:01", "10:00:00", "—"]
        assert racer.errors == []
    finally:
        await racer.close()


# milliseconds left → the countdown to the next daily
COUNTDOWN = {
    -5: "0:00:00",
    0: "0:00:00",
    999: "0:00:00",
    1000: "0:00:01",
    59_999: "0:00:59",
    61_000: "0:01:01",
    3_599_999: "0:59:59",
    3_600_000: "1:00:00",
    86_399_999: "23:59:59",
    86_400_000: "24:00:00",
}


async def test_format_countdown_at_its_boundaries_and_in_the_lobby(app: App, browser: Browser) -> None:
    context = await browser.new_context()
    try:
        page = await context.new_page()
        # the page's clock stands at 21:47:57.400 UTC: 2:12:02.6 to midnight, shown cut
        await page.clock.set_fixed_time(datetime(2026, 11, 26, 21, 47, 57, 400_000, tzinfo=UTC))
        racer = Racer(page)
        await page.goto(app.url)
        shown = await page.evaluate(
            """async (values) => {
              const { formatCountdown } = await import('/js/format.js');
              return values.map((ms) => formatCountdown(ms));
            }""",
            list(COUNTDOWN),
        )
        assert shown == list(COUNTDOWN.values())
        await racer.sign_in("ann")
        await expect(page.locator("#daily-next")).to_have_text("2:12:02")
        assert racer.errors == []
    finally:
        await context.close()


async def test_the_race_screen_and_the_leaderboard_show_the_same_times(
    app: App, clients: Any, browser: Browser, monkeypatch: pytest.MonkeyPatch, screenshots: Path
) -> None:
    deal, line = winnable_deal("cruel", SECRET)
    # The server's clock runs until the race starts, then stands where the test puts it: each
    # racer's game ends at the millisecond chosen for it.
    frozen: list[float] = []
    real = app.races.clock
    for part in (app.races, app.races.interpreter):  # the races' clock, and their timers'
        monkeypatch.setattr(part, "clock", lambda: frozen[-1] if frozen else real())

    wins = [11_953, 59_949, 59_950, 59_960, 59_999, 60_000, 3_599_999]  # 7 racers + ann: a full room
    racers = [await clients(f"t{ms}") for ms in wins]
    creator = racers[0]
    created = await creator.request({"type": "create_race", "game": "cruel", "deal": deal, "time_limit_s": 2 * 3600})
    code = created["race"]["code"]
    for client in racers[1:]:
        assert (await client.request({"type": "join_race", "code": code}))["type"] == "room"

    ann = await Racer.open(browser, f"{app.url}join/{code}")
    try:
        await ann.sign_in("ann")
        await expect(ann.page.locator("#room-players li")).to_have_count(len(wins) + 1)
        await creator.request({"type": "start_race"})
        await ann.wait_board("cruel")
        for client in racers:
            await client.expect("race_started")
        start = app.races.rooms[code].start_at
        assert start is not None

        for client, ms in zip(racers, wins, strict=True):
            frozen.append(start + ms / 1000)
            for i in range(0, len(line), 64):
                reply = await client.request({"type": "move", "moves": list(line[i : i + 64])})
                assert reply["rejected"] is None, reply
            assert reply["outcome"] == "won" and reply["elapsed_ms"] == ms
        frozen.append(start + 3600)  # ann gives up at one hour
        await ann.page.click("#resign-btn")
        await ann.page.click("#resign-btn")

        # the race screen: ann's clock, the ranking and the racers panel
        results = ann.page.locator("#results")
        await expect(results).to_be_visible()
        await expect(ann.page.locator("#race-timer")).to_have_text(SHOWN[3_600_000])
        await expect(results.locator("h2")).to_have_text("Race over: you are #8")
        rows = results.locator("tbody tr")
        await expect(rows).to_have_count(len(wins) + 1)
        ranking = [
            (await row.locator(".name").inner_text(), await row.locator(".time").inner_text())
            for row in await rows.all()
        ]
        assert ranking == [(f"t{ms}", SHOWN[ms]) for ms in wins] + [("ann", SHOWN[3_600_000])]
        for client, ms in zip(racers, wins, strict=True):
            status = ann.page.locator(f".racer[data-player-id='{client.player['id']}'] .racer-status")
            await expect(status).to_contain_text(f"won · {SHOWN[ms]} · ")
        await ann.page.screenshot(path=screenshots / "race-times.png")

        # the leaderboard page, from the ranking's link: the same times (ann's is no win)
        await ann.page.click("#deal-leaderboard")
        board_rows = ann.page.locator("#rows tr")
        await expect(board_rows).to_have_count(len(wins) + 1)
        headers = await ann.page.locator("#head th").all_inner_texts()
        name, time = headers.index("Player"), headers.index("Time")
        board = [
            ((cells := await row.locator("td").all_inner_texts())[name], cells[time]) for row in await board_rows.all()
        ]
        assert board == [(f"t{ms}", SHOWN[ms]) for ms in wins] + [("ann", "—")]
        await ann.page.screenshot(path=screenshots / "leaderboard-deal-times.png")
        assert ann.errors == []
    finally:
        await ann.close()


async def test_a_held_result_is_marked_so_in_the_ranking(app: App, browser: Browser) -> None:
    """A result held for fair-play review (docs/fair-play.md) says so on the race screen."""
    racer = await Racer.open(browser, app.url)
    try:
        rows = await racer.page.evaluate(
            """async (message) => {
              const { renderResults } = await import('/js/results.js');
              const { state } = await import('/js/state.js');
              state.me = { id: 1, name: 'ann' };
              const el = document.createElement('div');
              document.body.append(el);
              renderResults(el, message, {}, null);
              return [...el.querySelectorAll('tbody tr')].map((tr) => tr.querySelector('.outcome').textContent);
            }""",
            {"type": "race_finished", "code": "BCDFGH", "game": "cruel", "deal": 1, "ranking": [
                {"player_id": 1, "name": "ann", "rank": 1, "outcome": "won", "time_ms": 200, "moves": 68,
                 "home": 52, "total": 52, "held": True},
                {"player_id": 2, "name": "bob", "rank": 2, "outcome": "resigned", "time_ms": 900, "moves": 3,
                 "home": 4, "total": 52, "held": False},
            ]},
        )
        assert rows == ["won · held for review", "resigned"], rows
        assert racer.errors == []
    finally:
        await racer.close()
