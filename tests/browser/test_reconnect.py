"""Dropped connections in a real browser: the page reconnects by itself and shows the same
game; a reload resumes it; a second tab takes the game over and the first can take it back."""

from __future__ import annotations

from playwright.async_api import Browser, expect

from solitaire_race.app import App
from solitaire_race.engine import get_game

from ..conftest import TEST_SECRET
from ..support import winnable_deal
from .racer import Racer, perform
from .views import expected_zones, normalized

SECRET = TEST_SECRET.encode()


async def the_page_reconnects_and_resumes_the_same_game(app: App, ann: Racer) -> None:
    game = get_game("cruel")
    deal, line = winnable_deal("cruel", SECRET)
    state = game.deal(deal, SECRET)
    await ann.start_solo("cruel", deal)
    for i, move in enumerate(line[:3], start=1):
        await perform(ann, move)
        await ann.expect_moves(i)
        state = game.apply(state, game.parse_move(move))

    # the server drops the connection: the page comes back on its own, same game
    before = set(app.server.connections)
    assert before
    for connection in before:
        connection.close(1000, "")
        await connection.wait_closed()
    await ann.page.wait_for_function("() => document.body.dataset.connection === 'open'")
    await expect(ann.page.locator("#banner")).to_be_hidden()
    assert set(app.server.connections).isdisjoint(before)
    await ann.expect_moves(3)
    assert normalized(await ann.zones()) == expected_zones(game.view(state))
    await perform(ann, line[3])  # and it plays on
    await ann.expect_moves(4)
    state = game.apply(state, game.parse_move(line[3]))

    # a reload resumes too (the token and the race are remembered)
    await ann.page.reload()
    await ann.wait_board("cruel")
    await ann.expect_moves(4)
    assert normalized(await ann.zones()) == expected_zones(game.view(state))


async def a_second_tab_takes_over_and_the_first_can_take_it_back(app: App, ann: Racer) -> None:
    moves = int(await ann.page.locator("#race-moves").inner_text())
    second = await ann.page.context.new_page()  # same browser profile: same player
    await second.goto(app.url)
    await expect(second.locator("#board.game-cruel .board-content > *")).to_be_visible()
    await expect(second.locator("#race-moves")).to_have_text(str(moves))
    banner = ann.page.locator("#banner")
    await expect(banner).to_contain_text("another tab")
    await banner.locator("button").click()
    await expect(banner).to_be_hidden()
    await ann.wait_board("cruel")
    await ann.expect_moves(moves)
    await expect(second.locator("#banner")).to_contain_text("another tab")


async def test_reconnecting(app: App, browser: Browser) -> None:
    ann = await Racer.open(browser, app.url)
    await ann.sign_in("ann")
    await the_page_reconnects_and_resumes_the_same_game(app, ann)
    await a_second_tab_takes_over_and_the_first_can_take_it_back(app, ann)
    assert ann.errors == []
