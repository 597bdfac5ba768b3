"""Every game's board in a real browser: it shows exactly the server's view (face-up cards by
pile, slot, hour, waste and foundation), and moves of every kind made on it by click and by
drag reach the server as the intended move. Screenshots of each board are saved for review."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from playwright.async_api import Browser

from solitaire_race.app import App
from solitaire_race.engine import Game, Kind, get_game

from ..conftest import TEST_SECRET
from .racer import PHONE, Racer, perform
from .views import expected_zones, gesture, normalized

SECRET = TEST_SECRET.encode()
GAMES = ["perseverance", "perseverance-a", "cruel", "clock", "parallels", "patriarchs", "persian-patience"]
# one game per layout on the phone: Perseverance A and Cruel are drawn as Perseverance is
PHONE_GAMES = ["perseverance", "clock", "parallels", "patriarchs", "persian-patience"]
DEAL = 7
MOVES_PER_GAME = 5


# after every kind has been played once, moves that make progress first, redeals last
PREFERENCE = [Kind.HOME, Kind.PLAY, Kind.BUILD, Kind.STOCK, Kind.SHIFT, Kind.EXCHANGE, Kind.REDEAL]


def pick_move(game: Game[Any], state: Any, step: int, used: set[Kind]) -> str:
    """A legal move, trying kinds not played yet first so that every kind is exercised."""
    moves = game.legal_moves(state)
    assert moves, "no legal move left"
    fresh = [m for m in moves if m.kind not in used]
    candidates = fresh or moves
    best = min(PREFERENCE.index(m.kind) for m in candidates)
    pool = [m for m in candidates if PREFERENCE.index(m.kind) == best]
    return game.format_move(pool[step % len(pool)])


async def play_moves(racer: Racer, game_id: str, screenshots: Path) -> None:
    game = get_game(game_id)
    state = game.deal(DEAL, SECRET)
    assert normalized(await racer.zones()) == expected_zones(game.view(state)), game_id
    used: set[Kind] = set()
    for step in range(MOVES_PER_GAME):
        move = pick_move(game, state, step, used)
        used.add(game.parse_move(move).kind)
        how = "drag" if step % 2 and gesture(move)[1] is not None else "click"
        await perform(racer, move, how)
        state = game.apply(state, game.parse_move(move))
        zones = await racer.zones(after=step + 1)
        assert normalized(zones) == expected_zones(game.view(state)), (game_id, move, how)
    await racer.page.screenshot(path=screenshots / f"board-{game_id}.png")


async def test_every_board_shows_the_view_and_takes_clicks_and_drags(
    app: App, browser: Browser, screenshots: Path
) -> None:
    racer = await Racer.open(browser, app.url)
    await racer.sign_in("ann")
    for game_id in GAMES:
        await racer.start_solo(game_id, DEAL)
        await play_moves(racer, game_id, screenshots)
        await racer.leave_race()
    assert racer.errors == []


async def test_every_board_fits_a_phone(app: App, browser: Browser, screenshots: Path) -> None:
    racer = await Racer.open(browser, app.url, viewport=PHONE, is_mobile=True, has_touch=True)
    await racer.sign_in("bob")
    await racer.page.screenshot(path=screenshots / "phone-lobby.png", full_page=True)
    for game_id in PHONE_GAMES:
        game = get_game(game_id)
        state = game.deal(DEAL, SECRET)
        await racer.start_solo(game_id, DEAL)
        assert normalized(await racer.zones()) == expected_zones(game.view(state)), game_id
        # nothing sticks out sideways: no horizontal scrolling on a phone
        width = await racer.page.evaluate("document.documentElement.scrollWidth")
        assert width <= PHONE["width"], (game_id, width)
        # a move by tapping works on a touch screen
        move = game.format_move(game.legal_moves(state)[0])
        source, target = gesture(move)
        picked = racer.board().locator(source).last
        await picked.tap()
        if target is not None:
            code = await picked.get_attribute("data-card") or "?"
            await racer.board().locator(target.replace("{suit}", code[1])).last.tap()
        await racer.expect_moves(1)
        state = game.apply(state, game.parse_move(move))
        assert normalized(await racer.zones()) == expected_zones(game.view(state)), game_id
        await racer.page.screenshot(path=screenshots / f"phone-{game_id}.png", full_page=True)
        await racer.leave_race()
    assert racer.errors == []
