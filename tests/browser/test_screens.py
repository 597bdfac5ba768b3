"""What the client keeps and runs behind the screens: each screen's repeating timers run only
while it is shown (the lobby's race refresh, next-day countdown and daily retry, the room's
countdown, the race clock), the connection's check runs only while the connection is not
stopped (taken over by another tab), and the keys older versions stored are moved to the one key style on first load."""

from __future__ import annotations

import asyncio
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

from playwright.async_api import Browser, expect

from solitaire_race.app import App

from ..conftest import TEST_SECRET, make_config
from ..support import held_back_chooser, winnable_deal
from .racer import DESKTOP, TIMEOUT_MS, Racer

SECRET = TEST_SECRET.encode()

# Counts the page's intervals (and its timeouts by delay) from before its first script runs.
TIMERS_JS = """(() => {
  const intervals = new Map(), timeouts = new Map();
  const { setInterval, clearInterval, setTimeout, clearTimeout } = window;
  window.setInterval = (fn, ms, ...args) => {
    const id = setInterval(fn, ms, ...args);
    intervals.set(id, ms);
    return id;
  };
  window.setTimeout = (fn, ms, ...args) => {
    const id = setTimeout((...a) => {
      timeouts.delete(id);
      return typeof fn === 'function' ? fn(...a) : undefined;
    }, ms, ...args);
    timeouts.set(id, ms);
    return id;
  };
  window.clearInterval = (id) => { intervals.delete(id); timeouts.delete(id); clearInterval(id); };
  window.clearTimeout = (id) => { intervals.delete(id); timeouts.delete(id); clearTimeout(id); };
  window.timers = () => ({ intervals: [...intervals.values()].sort((a, b) => a - b),
                           timeouts: [...timeouts.values()].sort((a, b) => a - b) });
})();"""

RACES_REFRESH_MS = 5000  # lobby.js
NEXT_DAY_MS = 1000  # lobby.js: the countdown to the next daily
DAILY_RETRY_MS = 5000  # lobby.js (no other timer of the page waits 5 s)
CLOCK_TICK_MS = 100  # race.js
WATCH_MS = 1000  # connection.js: the connection's own check, while the connection is not stopped
BACKOFF_MS = [250, 500, 1000, 2000, 4000, 8000]  # connection.js: the waits before a reconnection
LOBBY = sorted([WATCH_MS, NEXT_DAY_MS, RACES_REFRESH_MS])


async def intervals(racer: Racer, expected: list[int]) -> None:
    """Wait (a moment at most) until the page's running intervals are these delays."""
    await racer.page.wait_for_function(
        "expected => JSON.stringify(window.timers().intervals) === JSON.stringify(expected)", arg=expected
    )


async def test_each_screen_stops_its_timers_when_it_is_left(tmp_path: Path, browser: Browser) -> None:
    gate = asyncio.Event()  # today's Patriarchs deal is still being chosen: the lobby asks again
    app = await App.start(make_config(tmp_path), choose_daily=held_back_chooser(SECRET, gate))
    context = await browser.new_context(viewport=DESKTOP)
    context.set_default_timeout(TIMEOUT_MS)
    await context.add_init_script(TIMERS_JS)
    page = await context.new_page()
    ann = Racer(page)
    try:
        await page.goto(app.url)
        await ann.sign_in("ann")
        await expect(page.locator("#daily-list li[data-game=patriarchs] .preparing")).to_be_visible()
        await intervals(ann, LOBBY)
        assert DAILY_RETRY_MS in (await page.evaluate("timers()"))["timeouts"]

        # the room: no lobby timers left behind
        deal, _ = winnable_deal("cruel", SECRET)
        await ann.create_race("cruel", deal)
        await intervals(ann, [WATCH_MS])
        assert DAILY_RETRY_MS not in (await page.evaluate("timers()"))["timeouts"]

        # the race: only its clock (the room's countdown is over), and the clock runs
        await page.click("#start-btn")
        await ann.wait_board("cruel")
        await intervals(ann, [CLOCK_TICK_MS, WATCH_MS])
        shown = await page.locator("#race-timer").inner_text()
        await expect(page.locator("#race-timer")).not_to_have_text(shown)

        # back in the lobby: the clock is stopped, the lobby's refresh runs again
        await ann.leave_race()
        await intervals(ann, LOBBY)
        await expect(page.locator("#daily-list li[data-game=patriarchs] .preparing")).to_be_visible()
        await page.wait_for_function(f"() => window.timers().timeouts.includes({DAILY_RETRY_MS})")

        # the daily, once chosen, needs no retry any more
        gate.set()
        await expect(page.locator("#daily-list li[data-game=patriarchs] button")).to_have_text("Play", timeout=10_000)
        await page.wait_for_function(f"() => !window.timers().timeouts.includes({DAILY_RETRY_MS})")
        await intervals(ann, LOBBY)
        assert ann.errors == []
    finally:
        gate.set()
        await context.close()
        await app.stop()


async def test_a_stopped_connection_leaves_no_timer_running(app: App, browser: Browser) -> None:
    context = await browser.new_context(viewport=DESKTOP)
    context.set_default_timeout(TIMEOUT_MS)
    await context.add_init_script(TIMERS_JS)
    first = Racer(await context.new_page())
    try:
        await first.page.goto(app.url)
        await first.sign_in("ann")
        await intervals(first, LOBBY)

        # a second tab of the same browser takes the player over: the first one's connection
        # stops, and with it its check (the lobby's own timers are the lobby's)
        second = Racer(await context.new_page())
        await second.page.goto(app.url)
        await expect(second.page.locator("#who")).to_have_text("ann")
        await expect(first.page.locator("#banner")).to_contain_text("another tab")
        await intervals(first, [NEXT_DAY_MS, RACES_REFRESH_MS])
        assert await first.page.evaluate("document.body.dataset.connection") == "stopped"
        waiting = (await first.page.evaluate("timers()"))["timeouts"]
        assert not set(waiting) & set(BACKOFF_MS), waiting  # and no reconnection waits to come back

        # taken back: the check runs again there, and stops in the other tab
        await first.page.locator("#banner button").click()
        await expect(second.page.locator("#banner")).to_contain_text("another tab")
        await intervals(first, LOBBY)
        await intervals(second, [NEXT_DAY_MS, RACES_REFRESH_MS])
        assert first.errors == [] and second.errors == []
    finally:
        await context.close()


async def test_the_old_player_id_key_is_moved_and_still_marks_your_row(app: App, browser: Browser) -> None:
    ann = await Racer.open(browser, app.url)
    try:
        await ann.sign_in("ann")
        await ann.page.click("#daily-list button[data-daily='cruel']")
        await ann.page.click("#confirm-daily-start")  # the ranked attempt, confirmed
        await ann.wait_board("cruel")
        await ann.page.click("#resign-btn")
        await ann.page.click("#resign-btn")
        await expect(ann.page.locator("#results")).to_be_visible()
        me = await ann.page.evaluate("window.solitaireRace.me.id")
        stored = await ann.page.evaluate("Object.fromEntries(Object.entries(localStorage))")
        assert set(stored) == {
            "solitaireRace.token", "solitaireRace.name", "solitaireRace.playerId", "solitaireRace.race"
        }
        assert stored["solitaireRace.playerId"] == str(me)

        # as an older version left it: the id under "playerId"
        await ann.page.evaluate(
            "id => { localStorage.removeItem('solitaireRace.playerId'); localStorage.setItem('playerId', id); }",
            str(me),
        )
        await ann.page.goto(f"{app.url}leaderboard?game=cruel&board=daily")
        await expect(ann.page.locator("#rows tr.me")).to_contain_text("ann")
        assert "me" not in parse_qs(urlsplit(ann.page.url).query)  # from storage, not from the address
        moved = await ann.page.evaluate(
            "[localStorage.getItem('playerId'), localStorage.getItem('solitaireRace.playerId')]"
        )
        assert moved == [None, str(me)]

        # the client still knows who this browser is
        await ann.page.goto(app.url)
        await expect(ann.page.locator("#who")).to_have_text("ann")
        assert ann.errors == []
    finally:
        await ann.close()
