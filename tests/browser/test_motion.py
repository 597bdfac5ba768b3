"""Cards slide to their new places after a move (motion.js), and stand still for a player who
asked for less motion (prefers-reduced-motion)."""

from __future__ import annotations

from playwright.async_api import Browser

from solitaire_race.app import App

from ..conftest import TEST_SECRET
from ..support import winnable_deal
from .racer import Racer, perform

DEAL, LINE = winnable_deal("cruel", TEST_SECRET.encode())

# Counts the cards' animations (Element.animate) from before the page's first script.
COUNT_SLIDES = """(() => {
  const animate = Element.prototype.animate;
  window.slides = [];
  Element.prototype.animate = function (keyframes, options) {
    if (this.dataset.card) window.slides.push([this.dataset.card, JSON.stringify(keyframes[0])]);
    return animate.call(this, keyframes, options);
  };
})();"""


async def slides_after_one_move(browser: Browser, app: App, motion: str) -> list[list[str]]:
    racer = await Racer.open(browser, app.url, reduced_motion=motion)
    try:
        await racer.page.context.add_init_script(COUNT_SLIDES)
        await racer.page.reload()
        await racer.sign_in(f"mover-{motion}")
        await racer.start_solo("cruel", DEAL)
        await perform(racer, LINE[0])
        await racer.expect_moves(1)
        assert racer.errors == []
        return list(await racer.page.evaluate("window.slides"))
    finally:
        await racer.close()


async def test_cards_slide_unless_less_motion_is_asked_for(app: App, browser: Browser) -> None:
    moving = await slides_after_one_move(browser, app, "no-preference")
    assert moving, "a moved card slides"
    assert all('"transform":"translate(' in frame for _, frame in moving)  # from where it was
    assert await slides_after_one_move(browser, app, "reduce") == []
