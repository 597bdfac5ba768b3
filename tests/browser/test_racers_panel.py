"""The live racers panel (js/opponents.js) is in the order the server ranks results in
(solitaire_race.results.rank_key): won games by time then fewer moves, then every other game
by fewer cards left, then time (a game still playing, with none, after the ended ones), then
fewer moves; ties by name then player id. Drawn in Chromium by the panel itself, and compared
with the order rank_key gives the same racers."""

from __future__ import annotations

from typing import Any

from playwright.async_api import Browser

from solitaire_race.app import App
from solitaire_race.results import rank_key

from .racer import Racer

# player id -> what the browser knows of the racer (progress, standings, the ranking)
RACERS: dict[int, dict[str, Any]] = {
    1: {"name": "amy", "outcome": "won", "time_ms": 90_000, "moves": 80, "home": 52, "total": 52},
    2: {"name": "bob", "outcome": "won", "time_ms": 90_000, "moves": 70, "home": 52, "total": 52},  # fewer moves
    3: {"name": "cat", "outcome": "won", "time_ms": 60_000, "moves": 99, "home": 52, "total": 52},  # faster
    4: {"name": "dan", "outcome": "playing", "time_ms": None, "moves": 30, "home": 30, "total": 52},
    # eve: as many cards left as dan, and a time
    5: {"name": "eve", "outcome": "resigned", "time_ms": 50_000, "moves": 40, "home": 30, "total": 52},
    6: {"name": "fay", "outcome": "stuck", "time_ms": 70_000, "moves": 50, "home": 40, "total": 52},  # fewer left
    7: {"name": "gus", "outcome": "playing", "time_ms": None, "moves": 45, "home": 40, "total": 52},
    8: {"name": "hal", "outcome": "playing", "time_ms": None, "moves": 20, "home": 40, "total": 52},  # fewer moves
    # 9 and 10, then 11 and 12, tie: by player id, as the server breaks ties (not by name)
    9: {"name": "jo", "outcome": "left", "time_ms": 20_000, "moves": 5, "home": 12, "total": 52},
    10: {"name": "ivy", "outcome": "timeout", "time_ms": 20_000, "moves": 5, "home": 12, "total": 52},
    11: {"name": "kim", "outcome": "playing", "time_ms": None, "moves": 5, "home": 12, "total": 52},
    12: {"name": "jo", "outcome": "playing", "time_ms": None, "moves": 5, "home": 12, "total": 52},
    0: {"name": "zed", "outcome": "playing", "time_ms": None, "moves": 0, "home": 0, "total": 0, "ghost": True},
}

PANEL_JS = """async (racers) => {
  const { RacersPanel } = await import('/js/opponents.js');
  const map = new Map(racers.map(([id, r]) => [id, { connected: true, ...r }]));
  const el = document.createElement('section');
  document.body.append(el);
  new RacersPanel(el, () => map).render();
  return [...el.querySelectorAll('li.racer')].map(
    (li) => [Number(li.dataset.playerId), li.querySelector('.place').textContent]);
}"""


async def test_the_racers_panel_is_in_the_servers_ranking_order(app: App, browser: Browser) -> None:
    known = {i: r for i, r in RACERS.items() if r["total"]}
    by_server = sorted(
        known,
        key=lambda i: (rank_key(known[i]["outcome"], known[i]["time_ms"], known[i]["moves"], 52 - known[i]["home"]), i),
    )
    expected = [*by_server, 0]  # a racer whose total the server has not said yet: last
    assert expected == [3, 2, 1, 6, 8, 7, 5, 4, 9, 10, 11, 12, 0]
    racer = await Racer.open(browser, app.url)
    try:
        shown = await racer.page.evaluate(PANEL_JS, list(RACERS.items()))
        assert [int(i) for i, _ in shown] == expected
        assert [place for _, place in shown] == [str(n) for n in range(1, len(RACERS) + 1)]
        # the order is the rule's, not the order the racers were told in
        shown = await racer.page.evaluate(PANEL_JS, list(reversed(RACERS.items())))
        assert [int(i) for i, _ in shown] == expected
        assert racer.errors == []
    finally:
        await racer.close()
