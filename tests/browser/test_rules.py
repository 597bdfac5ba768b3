"""Players first, in a real browser: every game's rules page (from the lobby and from the
board's "?") with a real position drawn by the board's own renderer, Persian Patience's
foundation order on its board, the room saying when friends on other machines cannot open
its link (and a server on every address giving one they can), the name-taken form keeping
the typed name, toasts clear of the header, and Clock's caption clear of the Kings' pile on a
phone."""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from playwright.async_api import Browser, Page, expect

from solitaire_race.app import App
from solitaire_race.config import reachable_address
from solitaire_race.engine import all_games

from ..conftest import http_json, make_config
from .racer import PHONE, Racer

CARD = re.compile(r"[A2-9TJQK][SHDC]")
BOARD_CARDS_JS = "() => [...document.querySelectorAll('#board [data-card]')].map((e) => e.dataset.card)"
BOX_JS = """(selector) => { const e = document.querySelector(selector); if (!e) return null;
  const b = e.getBoundingClientRect(); return [b.left, b.top, b.right, b.bottom]; }"""


def view_cards(node: Any) -> Counter[str]:
    """Every card code a view shows (piles, foundation tops, waste, hand)."""
    if isinstance(node, str):
        return Counter([node] if CARD.fullmatch(node) else [])
    items = node.values() if isinstance(node, dict) else node if isinstance(node, list) else []
    return sum((view_cards(item) for item in items), Counter())


def overlap(a: list[float], b: list[float]) -> bool:
    return a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]


async def box(page: Page, selector: str) -> list[float]:
    found = await page.evaluate(BOX_JS, selector)
    assert found is not None, selector
    return list(found)


async def test_every_game_has_a_rules_page_with_a_real_position(app: App, browser: Browser, screenshots: Path) -> None:
    reader = await Racer.open(browser, app.url)
    page = reader.page
    try:
        await reader.sign_in("reader")
        # from the lobby: each game's tile links to its rules
        await page.click(".game-tile:has(input[value='parallels']) .tile-rules")
        await expect(page).to_have_url(re.compile(r"/rules/parallels$"))
        for game_id in all_games():
            if page.url != app.url + f"rules/{game_id}":
                await page.goto(app.url + f"rules/{game_id}")
            status, rules = await http_json(app, f"/api/rules/{game_id}")
            assert status == 200, rules
            await expect(page.locator("#rules-text")).to_be_visible()
            titles = await page.locator("#rules-text h2").all_inner_texts()
            assert titles[:4] == [s["title"] for s in rules["sections"]][:4], (game_id, titles)
            assert "How it is won" in titles and "Par" in titles, (game_id, titles)
            # the picture: exactly the cards of the example position, drawn by the board's renderer
            assert Counter(await page.evaluate(BOARD_CARDS_JS)) == view_cards(rules["example"]["view"]), game_id
            assert len(rules["example"]["moves"]) > 0, game_id
            await expect(page.locator("#rules-caption")).to_contain_text(", ".join(rules["example"]["moves"]))
            await page.screenshot(path=screenshots / f"rules-{game_id}.png", full_page=game_id == "clock")
        persian = page.locator("#board .f-order")
        await expect(persian).to_have_text("foundations build A 7 8 9 10 J Q K")
        await expect(page.locator("#rules-controls")).not_to_contain_text("Buttons under the cards")
        # par is explained on its own anchor, which the daily's "par" links land on
        await page.goto(app.url + "rules/clock#par")
        await expect(page.locator("#rules-par")).to_contain_text("shortest winning line")
        await page.set_viewport_size(PHONE)
        await page.goto(app.url + "rules/persian-patience")
        await expect(page.locator("#board .f-order")).to_be_visible()
        await page.screenshot(path=screenshots / "rules-persian-patience-phone.png", full_page=True)
        await page.goto(app.url + "rules")
        await expect(page.locator("#rules-index li")).to_have_count(len(all_games()))
        await page.screenshot(path=screenshots / "rules-index-phone.png", full_page=True)
        assert not reader.errors, reader.errors
    finally:
        await reader.close()


async def toast_clear_of_the_header(racer: Racer, tag: str) -> None:
    """A refused move's reason, as a toast: over neither the top bar nor the race bar."""
    page = racer.page
    shown = await racer.toasts()
    await page.evaluate("import('/js/ui.js').then((ui) => ui.toast('a refused move, and why'))")
    await racer.toast(after=shown)
    await page.wait_for_timeout(200)  # its slide-in transition
    toast = await box(page, "#toast")
    for header in (".topbar", ".race-bar"):
        assert not overlap(toast, await box(page, header)), (tag, header, toast)


async def test_board_help_foundation_order_toasts_and_clock_caption_clear(
    app: App, browser: Browser, screenshots: Path
) -> None:
    racer = await Racer.open(browser, app.url)
    page = racer.page
    try:
        await racer.sign_in("helper")
        await racer.start_solo("persian-patience", 3)
        await expect(page.locator("#board .f-order")).to_have_text("foundations build A 7 8 9 10 J Q K")
        await page.click("#help-btn")
        await expect(page.locator("#race-help")).to_be_visible()
        await expect(page.locator("#race-rules-link")).to_have_attribute("href", "/rules/persian-patience")
        await expect(page.locator("#race-controls")).to_contain_text("A, 7, 8, 9, 10, J, Q, K")
        await toast_clear_of_the_header(racer, "desktop")
        await page.screenshot(path=screenshots / "help-and-toast-persian.png")
        assert not racer.errors, racer.errors
    finally:
        await racer.close()

    # on a phone: Clock's caption beside the card in hand stays off the Kings' pile
    racer = await Racer.open(browser, app.url, viewport=PHONE, is_mobile=True, has_touch=True)
    page = racer.page
    try:
        await racer.sign_in("clockwatcher")
        await racer.start_solo("clock", 5)  # Kings go under the centre from the 4th move on
        for moves in range(1, 11):
            await page.click("#board [data-move='p']")
            await racer.expect_moves(moves)
            if await page.locator(".hand .caption").count() == 0:
                break  # the game is over
            caption, centre = await box(page, ".hand .caption"), await box(page, ".hour.centre")
            assert not overlap(caption, centre), (moves, caption, centre)
        await toast_clear_of_the_header(racer, "phone")
        await page.screenshot(path=screenshots / "clock-caption-and-toast-phone.png")
        assert not racer.errors, racer.errors
    finally:
        await racer.close()


async def test_the_room_says_when_friends_cannot_open_the_link(
    app: App, tmp_path: Path, browser: Browser, screenshots: Path
) -> None:
    ann = await Racer.open(browser, app.url)
    other = await Racer.open(browser, app.url, viewport=PHONE)
    try:
        await ann.sign_in("Ann")
        # the name is taken: what to do, in words, and the typed name stays to be changed
        await other.page.fill("#name", "ANN")
        await other.page.click("#signin-btn")
        await expect(other.page.locator("#signin-error")).to_contain_text("choose another, or sign in on the device")
        await expect(other.page.locator("#signin-error")).not_to_contain_text("token")
        await expect(other.page.locator("#name")).to_have_value("ANN")
        await other.page.screenshot(path=screenshots / "signin-name-taken-phone.png")

        # served on 127.0.0.1: the link is this computer's, and the room says how to let friends in
        await ann.create_race("cruel")
        notice = ann.page.locator("#room-local")
        await expect(notice).to_be_visible()
        await expect(notice).to_contain_text("--host 0.0.0.0")
        await expect(ann.page.locator("#room-link")).to_have_value(re.compile(r"^http://127\.0\.0\.1:\d+/join/[A-Z]{6}$"))
        await ann.page.screenshot(path=screenshots / "room-local-link.png")
        # reached by another name (a proxy, a forwarded port), the page shares that name instead
        share = await ann.page.evaluate(
            "import('/js/invite.js').then((m) => m.shareableLink('http://127.0.0.1:8765/join/KXPMRT', "
            "'http://192.0.2.9:8080/join/KXPMRT'))"
        )
        assert share == {"url": "http://192.0.2.9:8080/join/KXPMRT", "local": False}
    finally:
        await ann.close()
        await other.close()

    # served on every address: the link names this machine's network address, and no notice
    address = reachable_address()
    if address is None:
        return  # no network here: nothing but this computer could join anyway
    everywhere = await App.start(make_config(tmp_path / "all", host="0.0.0.0"))
    try:
        assert urlsplit(everywhere.url).hostname == address
        bob = await Racer.open(browser, everywhere.url)
        try:
            await bob.sign_in("bob")
            code = await bob.create_race("clock")
            await expect(bob.page.locator("#room-link")).to_have_value(f"{everywhere.config.public_url}/join/{code}")
            await expect(bob.page.locator("#room-local")).to_be_hidden()
            await bob.page.screenshot(path=screenshots / "room-network-link.png")
        finally:
            await bob.close()
    finally:
        await everywhere.stop()
