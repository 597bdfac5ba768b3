"""A racer in a browser page: what a person does in the web client (sign in, create or join a
race, click and drag cards), written once for every browser test."""

from __future__ import annotations

import re
from typing import Any

from playwright.async_api import Browser, Locator, Page, ViewportSize, expect

TIMEOUT_MS = 5000
DESKTOP: ViewportSize = {"width": 1366, "height": 800}
PHONE: ViewportSize = {"width": 390, "height": 844}

# Waits (frame by frame, at most 5 s) until the page shows that many moves; null: no wait.
MOVES_SHOWN_JS = """async function movesShown(moves) {
  if (moves === null) return;
  const counter = document.querySelector('#race-moves');
  const until = performance.now() + 5000;
  while (counter.textContent !== String(moves)) {
    if (performance.now() > until) throw new Error(`the page shows ${counter.textContent} moves, not ${moves}`);
    await new Promise(requestAnimationFrame);
  }
}"""


class Racer:
    def __init__(self, page: Page) -> None:
        self.page = page
        self.errors: list[str] = []
        page.on("pageerror", lambda exc: self.errors.append(str(exc)))
        page.on("console", lambda msg: self.errors.append(msg.text) if msg.type == "error" else None)

    @classmethod
    async def open(cls, browser: Browser, url: str, viewport: ViewportSize = DESKTOP, **options: Any) -> Racer:
        # A context per racer: its own localStorage, so its own identity. Cards stand still
        # (reduced motion) unless a test asks otherwise: a drag measures where a card is, and a
        # card sliding to its place (motion.js) is not there yet; test_motion.py slides them.
        options.setdefault("reduced_motion", "reduce")
        context = await browser.new_context(viewport=viewport, **options)
        context.set_default_timeout(TIMEOUT_MS)
        page = await context.new_page()
        racer = cls(page)
        await page.goto(url)
        return racer

    async def close(self) -> None:
        await self.page.context.close()

    # -- lobby and room --------------------------------------------------------------------

    async def sign_in(self, name: str) -> None:
        await self.page.fill("#name", name)
        await self.page.click("#signin-btn")
        await expect(self.page.locator("#who")).to_have_text(name)

    async def create_race(self, game: str, deal: int | None = None, public: bool = False) -> str:
        page = self.page
        await expect(page.locator("#screen-lobby")).to_be_visible()
        await page.click(f".game-tile:has(input[value='{game}'])")
        if deal is not None:
            await page.fill("#deal-number", str(deal))  # typing a number chooses "Number"
            await expect(page.locator("input[name=deal-kind][value=number]")).to_be_checked()
        if public:
            await page.uncheck("#private")
        await page.click("#create-btn")
        await expect(page.locator("#screen-room")).to_be_visible()
        code = await page.locator("#room-code").get_attribute("data-code")
        assert code and re.fullmatch(r"[A-Z]{6}", code), code
        return code

    async def start_solo(self, game: str, deal: int) -> None:
        await self.create_race(game, deal)
        await self.page.click("#start-btn")
        await self.wait_board(game)

    async def leave_race(self) -> None:
        """Resign if still playing (two clicks), then from the ranking back to the lobby."""
        page = self.page
        if await page.locator("#resign-btn").is_visible():
            await page.click("#resign-btn")
            await page.click("#resign-btn")
        await expect(page.locator("#results")).to_be_visible()
        await page.click("text=Back to lobby")
        await expect(page.locator("#screen-lobby")).to_be_visible()

    async def wait_board(self, game: str) -> None:
        await expect(self.page.locator(f"#board.game-{game} .board-content > *")).to_be_visible()

    # -- playing ---------------------------------------------------------------------------

    def board(self) -> Locator:
        return self.page.locator("#board")

    async def expect_moves(self, count: int) -> None:
        # polled every animation frame: expect() backs off to 100 ms+ between tries
        await self.page.wait_for_function(
            "n => document.querySelector('#race-moves').textContent === String(n)", arg=count, polling="raf"
        )

    async def drag(self, source: str, target: str) -> None:
        """A real pointer drag: press on the source, move in steps, release on the target."""
        (sx, sy), (tx, ty) = await self.page.evaluate(POINTS_JS, {"selectors": [source, target], "moves": None})
        mouse = self.page.mouse
        await mouse.move(sx, sy)
        await mouse.down()
        await mouse.move(tx, ty, steps=5)
        await mouse.up()

    async def zones(self, after: int | None = None) -> dict[str, list[str]]:
        """The face-up cards the page shows, by zone (pile, foundation, slot...), bottom to top;
        with ``after``, once the page shows that many moves."""
        return dict(await self.page.evaluate(ZONES_JS, after))

    async def toasts(self) -> int:
        """How many messages the page has shown so far (see ``toast``)."""
        return int(await self.page.get_attribute("#toast", "data-seq") or 0)

    async def toast(self, after: int) -> str:
        """The first message shown after the ``after``-th: what the page said to the player."""
        await self.page.wait_for_function(
            "n => Number(document.querySelector('#toast').dataset.seq || 0) > n", arg=after, polling="raf"
        )
        return await self.page.locator("#toast").inner_text()

# Zones by game family: piles (data-pile), slots (data-slot), Clock hours (data-hour), the
# card in hand, the waste, and all foundations together; of one board element.
BOARD_ZONES_JS = """board => {
  const zones = {};
  const add = (zone, el) => (zones[zone] ||= []).push(el.dataset.card);
  for (const el of board.querySelectorAll('[data-card]')) {
    const pile = el.closest('[data-pile]'), slot = el.closest('[data-slot]'), hour = el.closest('[data-hour]');
    if (el.dataset.slot) add('s:' + el.dataset.slot, el);
    else if (slot) add('s:' + slot.dataset.slot, el);
    else if (pile) add('p' + pile.dataset.pile, el);
    else if (hour) add('h' + hour.dataset.hour, el);
    else if (el.closest('.hand')) add('hand', el);
    else if (el.closest('.waste')) add('waste', el);
    else add('f', el);
  }
  return zones;
}"""
# The race screen's board, once the page shows that many moves (null: at once).
ZONES_JS = """async moves => {
  """ + MOVES_SHOWN_JS + """
  await movesShown(moves);
  return (""" + BOARD_ZONES_JS + """)(document.querySelector('#board'));
}"""


async def perform(racer: Racer, move: str, how: str = "click", after: int | None = None) -> None:
    """Make a move (canonical notation) the way a player would: click the source then the
    target, or drag it ("drag"); moves without a target are one click or tap. With ``after``,
    first wait until the page shows that many moves (the board of the previous move)."""
    from .views import gesture

    source, target = gesture(move)
    selectors = [s for s in (source, target) if s]
    points = await racer.page.evaluate(POINTS_JS, {"selectors": selectors, "moves": after})
    mouse = racer.page.mouse
    if how == "drag" and len(points) == 2:
        (sx, sy), (tx, ty) = points
        await mouse.move(sx, sy)
        await mouse.down()
        await mouse.move(tx, ty, steps=5)
        await mouse.up()
        return
    for x, y in points:
        await mouse.click(x, y)  # real mouse clicks where a player would click


# Where to click each selector on the board: a point where the element is really on top (cards
# overlap in fans). "{suit}" in a selector is the suit of the first element's card. With
# "moves", it first waits (every frame, bounded by the caller's timeout) for that move count.
POINTS_JS = """async ({selectors, moves}) => {
  """ + MOVES_SHOWN_JS + """
  await movesShown(moves);
  let suit = '';
  return selectors.map((raw, i) => {
    const sel = raw.replace('{suit}', suit);
    const all = document.querySelectorAll('#board ' + sel);
    if (!all.length) throw new Error('nothing on the board matches ' + sel);
    const el = all[all.length - 1];
    if (i === 0) suit = (el.dataset.card || '?')[1];
    el.scrollIntoView({block: 'nearest'});
    const r = el.getBoundingClientRect();
    const points = [
      [r.width / 2, Math.min(r.height / 2, 14)], [r.width / 2, r.height / 2],
      [6, 10], [6, r.height / 2], [r.width - 6, 10],
    ];
    for (const [dx, dy] of points) {
      const x = r.left + dx, y = r.top + dy;
      const hit = document.elementFromPoint(x, y);
      if (hit && (el === hit || el.contains(hit))) return [x, y];
    }
    throw new Error('no visible point of ' + sel);
  });
}"""
