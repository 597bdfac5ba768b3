"""The board without a mouse: a whole game of each of the seven kinds won with the keyboard
alone (Tab onto the board, arrow keys between places, Enter to pick up and put down, the
games' special keys), what a screen reader is told, and axe-core's check of every screen
(lobby, room, each game's board, the results, the leaderboard page) with no violation of
any impact. Screenshots of the focus ring and of a card picked up are saved."""

from __future__ import annotations

import re
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from playwright.async_api import Browser, Page, expect

from solitaire_race.app import App
from solitaire_race.engine import get_game

from ..conftest import TEST_SECRET, make_config
from ..databases import Database
from ..support import winnable_deal
from .axe_core import fetch as fetch_axe
from .racer import MOVES_SHOWN_JS, Racer
from .test_race import an_illegal_build

SECRET = TEST_SECRET.encode()
# The first deal tried for each game: one whose winning line the test solver finds at once
# and keeps short (tests/support.py's winnable_deal starts there).
FIRST_DEAL = {
    "perseverance": 3,
    "perseverance-a": 0,
    "cruel": 1,
    "clock": 0,
    "parallels": 37,
    "patriarchs": 8,
    "persian-patience": 23,
}

# The place a move starts from and the one it goes to (data-place keys, keyboard.js), or a
# key to press. "{suit}" is the suit of the card on the source place.
def places(move: str) -> tuple[str, str | None] | str:
    if move in ("r", "s"):
        return move  # R redeals, S turns the stock: a key each
    if move == "p":
        return "Enter"  # Clock: Enter plays the card in hand, as in the terminal
    if m := re.fullmatch(r"(\d+)>(\d+|f)", move):
        return f"p{m[1]}", "f" if m[2] == "f" else f"p{m[2]}"
    if m := re.fullmatch(r"x(\d+)\.1", move):
        return f"h{m[1]}", None  # Enter on an hour exchanges for its top face-down card
    if m := re.fullmatch(r"([SHDC]):([AK])>([AK])", move):
        return f"{m[2]}:{m[1]}", f"{m[3]}:{m[1]}"
    if m := re.fullmatch(r"([a-j]\d+|[1-9]|w)>([AK])", move):
        src = m[1] if m[1][0].isalpha() and m[1] != "w" else ("waste" if m[1] == "w" else f"t{m[1]}")
        return src, f"{m[2]}:{{suit}}"
    raise AssertionError(f"no keys for {move!r}")


# The keys of one move: the fewest navigation keys (arrows, Home, End) from the focused place
# to the source, Enter, the fewest from there to the target, Enter. Found with the board's own
# rule for where a key leads (keyboard.js's `destination`), so that all are pressed without a
# round trip each. It first waits until the page shows `moves` moves (the board of the move
# before) and checks that the focus is on the place the keys before led to (`was`, if it is
# still there).
MOVE_JS = """async ({src, dst, moves, was}) => {
  """ + MOVES_SHOWN_JS + """
  await movesShown(moves);
  const {destination, NAV_KEYS} = await import('/js/keyboard.js');
  const all = [...document.querySelectorAll('#board [data-place]')];
  const placeOf = (key) => all.find((el) => el.dataset.place === key);
  const from = document.activeElement?.closest('[data-place]');
  if (!from) throw new Error('the focus is not on the board: ' + document.activeElement?.outerHTML.slice(0, 80));
  if (was && placeOf(was) && from.dataset.place !== was) throw new Error(`at ${from.dataset.place}, not ${was}`);
  const ring = !!document.querySelector('#board [data-nav=ring]');
  const path = (a, b) => {
    const way = new Map([[a, []]]);
    for (const queue = [a]; queue.length && !way.has(b); ) {
      const at = queue.shift();
      for (const key of NAV_KEYS) {
        const next = destination(at, all, key, ring);
        if (next && !way.has(next)) {
          way.set(next, [...way.get(at), key]);
          queue.push(next);
        }
      }
    }
    if (!way.has(b)) throw new Error(`the keys do not lead from ${a.dataset.place} to ${b.dataset.place}`);
    return way.get(b);
  };
  const source = placeOf(src);
  if (!source) throw new Error('no place ' + src);
  const keys = [...path(from, source), 'Enter'];
  if (dst === null) return {keys, to: src};
  const cards = source.querySelectorAll('[data-src][data-card]');
  const suit = source.dataset.card?.[1] ?? cards[cards.length - 1]?.dataset.card[1];
  const target = placeOf(dst.replace('{suit}', suit));
  if (!target) throw new Error('no place ' + dst);
  // a card put on a foundation sends the focus back to its source
  const to = ('away' in target.dataset ? source : target).dataset.place;
  return {keys: [...keys, ...path(source, target), 'Enter'], to};
}"""

FOCUSED_JS = "document.activeElement.closest('[data-place]')?.dataset.place"

AXE_JS = """async () => {
  const result = await axe.run(document, {resultTypes: ['violations']});
  return result.violations.map((v) => ({id: v.id, impact: v.impact, help: v.help,
    nodes: v.nodes.slice(0, 3).map((n) => `${n.target.join(' ')}: ${n.any[0]?.message ?? ''}`)}));
}"""


async def axe_violations(page: Page, where: str, seen: dict[str, Any]) -> None:
    """Run axe-core on the page as it is; record what it finds (serious and critical fail)."""
    if not await page.evaluate("typeof axe !== 'undefined'"):
        await page.add_script_tag(path=str(fetch_axe()))
    violations = await page.evaluate(AXE_JS)
    seen[where] = violations


async def play_by_keyboard(racer: Racer, game_id: str, deal: int, line: tuple[str, ...], screenshots: Path) -> int:
    """Win the game by keyboard; the number of keys pressed."""
    page = racer.page
    keyboard = page.keyboard
    # Tab from the race bar reaches the board (after the game's buttons): one Tab stop on it
    await page.focus("#resign-btn")
    for _ in range(3):
        await keyboard.press("Tab")
        if await page.evaluate("!!document.activeElement.closest('#board [data-place]')"):
            break
    assert await page.evaluate(FOCUSED_JS) is not None, "Tab does not reach the board"
    assert await page.locator('#board [data-place][tabindex="0"]').count() == 1
    if game_id == "clock":  # no card is picked up in Clock: its focus ring is seen here
        await page.screenshot(path=screenshots / "keyboard-clock-focus.png")
    was = None
    presses = 0
    if game_id == "cruel":
        # an illegal move by keyboard: refused, and the server's reason is said (the toast is an alert)
        illegal, reason = an_illegal_build(get_game(game_id), get_game(game_id).deal(deal, SECRET))
        shown = await racer.toasts()
        src, dst = (f"p{n}" for n in illegal.split(">"))
        plan = await page.evaluate(MOVE_JS, {"src": src, "dst": dst, "moves": 0, "was": None})
        for key in plan["keys"]:
            await keyboard.press(key)
        assert await racer.toast(after=shown) == reason
        assert await page.get_attribute("#toast", "role") == "alert"
        was = plan["to"]
    for i, move in enumerate(line):
        step = places(move)
        if isinstance(step, str):
            # a key of its own, once the board of the move before is shown: what a key does may
            # depend on it (S on Patriarchs' empty stock redeals), and a player's keys come
            # slower than the server's limit of moves per second
            await page.evaluate(f"async () => {{ {MOVES_SHOWN_JS}; await movesShown({i}); }}")
            await keyboard.press(step)
            presses += 1
            was = None  # a redeal or the stock may take the place away and bring it back
            continue
        source, target = step
        plan = await page.evaluate(MOVE_JS, {"src": source, "dst": target, "moves": i, "was": was})
        was = plan["to"]
        if i == 0 and target is not None:
            await first_pick(page, game_id, plan["keys"], screenshots)
            presses += len(plan["keys"]) + 2  # and Escape, Enter
            continue
        for key in plan["keys"]:
            await keyboard.press(key)
        presses += len(plan["keys"])
    await racer.expect_moves(len(line))
    await expect(page.locator("#announcer")).to_contain_text("You won!")
    return presses


async def first_pick(page: Page, game_id: str, keys: list[str], screenshots: Path) -> None:
    """The first move's keys, with a look at the way: the card picked up is shown and told,
    Escape puts it back, Enter picks it up again, and the focus on the target is seen."""
    pick = keys.index("Enter")
    for key in keys[: pick + 1]:
        await page.keyboard.press(key)
    picked = page.locator("#board [data-place][aria-pressed=true]")
    await expect(picked).to_have_count(1)
    await expect(page.locator("#announcer")).to_contain_text("Picked up")
    await page.screenshot(path=screenshots / f"keyboard-{game_id}-picked.png")
    await page.keyboard.press("Escape")
    await expect(picked).to_have_count(0)
    for key in keys[pick:-1]:
        await page.keyboard.press(key)
    await page.screenshot(path=screenshots / f"keyboard-{game_id}-target.png")
    await page.keyboard.press("Enter")
    # the move made is said: which card went from where to where
    await expect(page.locator("#announcer")).to_have_text(re.compile(r".+ from .+ (to|onto) .+\."))


async def race_by_keyboard(
    browser: Browser, url: str, game_id: str, screenshots: Path, found: dict[str, Any], first: bool
) -> tuple[Racer, float, int]:
    """One racer wins a solo race of `game_id` by keyboard; the first one also has the lobby,
    the room and the results checked by axe."""
    deal, line = winnable_deal(game_id, SECRET, first=FIRST_DEAL[game_id])
    # the page's strict Content-Security-Policy would refuse the injected axe script
    racer = await Racer.open(browser, url, bypass_csp=True)
    page = racer.page
    await racer.sign_in(f"kb-{game_id}"[:32])
    if first:
        await axe_violations(page, "lobby", found)
    await racer.create_race(game_id, deal)
    if first:
        await axe_violations(page, "room", found)
    await page.click("#start-btn")
    await racer.wait_board(game_id)
    await axe_violations(page, f"board {game_id}", found)
    started = time.monotonic()
    presses = await play_by_keyboard(racer, game_id, deal, line, screenshots)
    took = time.monotonic() - started
    await expect(page.locator("#results")).to_be_visible()
    # the keyboard goes on from the ranking, which covers the board
    await expect(page.locator("#results").locator("a, button").first).to_be_focused()
    if first:
        await axe_violations(page, "results", found)
        await page.screenshot(path=screenshots / "keyboard-results.png")
    return racer, took, presses


@pytest.fixture
async def quick_app(tmp_path: Path, database: Database) -> AsyncIterator[App]:
    """The server, with its limit of messages per second raised: the test makes its moves
    (its keys each wait for the move before) faster than anyone plays."""
    running = await App.start(make_config(tmp_path, db_url=database.url, rate_per_s=1000.0, rate_burst=1000))
    try:
        yield running
    finally:
        await running.stop()


async def test_every_game_won_by_keyboard_and_axe_finds_nothing(
    quick_app: App, browser: Browser, screenshots: Path
) -> None:
    app = quick_app
    found: dict[str, Any] = {}
    # one game after another (a page each): at once they only contend for the machine
    results = [await race_by_keyboard(browser, app.url, g, screenshots, found, not i) for i, g in enumerate(FIRST_DEAL)]
    racer = results[0][0]
    await racer.page.click("#deal-leaderboard")
    await racer.page.wait_for_selector("#rows tr")
    await axe_violations(racer.page, "leaderboard", found)
    spent = {g: (round(t, 1), n) for g, (_, t, n) in zip(FIRST_DEAL, results, strict=True)}
    print("keyboard games (seconds, keys):", spent)
    for where, violations in found.items():
        for v in violations:
            print(f"axe {where}: {v['impact']} {v['id']}: {v['help']} {v['nodes']}")
    # None of any impact: the moderate ones too (each screen's level-one heading, heading order).
    violations = {w: [v["id"] for v in vs] for w, vs in found.items() if vs}
    assert not violations, violations
    for r, _, _ in results:
        assert r.errors == []
