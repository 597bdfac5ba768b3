"""The daily's helpers in js/daily.js, in the browser that runs them: the result line a
player pastes to friends (a win against par, above, at and below it; a loss; a streak), the
moves against par as the share line and the leaderboard both write them (format.js's vsPar),
the time to the next day's challenges (midnight UTC; the countdown's format is
test_time_format.py's), and which start is the ranked attempt."""

from __future__ import annotations

from playwright.async_api import Browser

from solitaire_race.app import App

from .racer import Racer

LINES_JS = """async () => {
  const { shareLine, msToNextDay } = await import('/js/daily.js');
  const { vsPar } = await import('/js/format.js');
  const finished = { game: 'cruel' };
  const day = { date: '2026-11-26', par: 60 };
  const won = (moves) => ({ outcome: 'won', time_ms: 192_400, moves, home: 52, total: 52 });
  return {
    over: shareLine(finished, day, won(68), 3),
    at: shareLine(finished, day, won(60), 0),
    under: shareLine(finished, day, won(58), 1),
    noPar: shareLine(finished, { date: '2026-11-26', par: null }, won(70), 0),
    lost: shareLine(finished, day, { outcome: 'stuck', time_ms: 9000, moves: 12, home: 20, total: 52 }, 2),
    vsPar: [[68, 60], [60, 60], [58, 60], [1, 100]].map(([moves, par]) => vsPar(moves, par)),
    beforeMidnight: msToNextDay(Date.parse('2026-11-26T23:59:59.500Z')),
    atMidnight: msToNextDay(Date.parse('2026-11-27T00:00:00.000Z')),
  };
}"""


async def test_the_share_line_and_the_countdown(app: App, browser: Browser) -> None:
    racer = await Racer.open(browser, app.url)
    try:
        await racer.sign_in("ann")  # the games' names are known from then on
        got = await racer.page.evaluate(LINES_JS)
        head = "Solitaire Race · Cruel daily 2026-11-26 · ✓ solved in 3:12.4"
        assert got["over"] == f"{head} · 68 moves (par 60, +8) · 3-day streak"
        assert got["at"] == f"{head} · 60 moves (par 60)"
        assert got["under"].endswith("· 58 moves (par 60, −2) · 1-day streak")
        assert got["noPar"].endswith("· 70 moves")
        assert got["lost"] == "Solitaire Race · Cruel daily 2026-11-26 · ✗ stuck · 20/52 cards home · 2-day streak"
        assert got["vsPar"] == ["+8", "par", "−2", "−99"]  # a minus sign, not a hyphen
        assert got["beforeMidnight"] == 500 and got["atMidnight"] == 86_400_000
        assert racer.errors == []
    finally:
        await racer.close()
