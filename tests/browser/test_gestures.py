"""Gestures on the board: a refused move shows the server's reason (the engine's sentence)
and changes nothing, whatever the gesture; a double click sends a card home; Clock's blocked
fourth King is refused, then exchanged by drag; a drop the notation cannot express (the card
in hand on another hour) is explained and not sent."""

from __future__ import annotations

from typing import Any

from playwright.async_api import Browser, expect

from solitaire_race.app import App
from solitaire_race.engine import IllegalMove, Kind, get_game

from ..conftest import TEST_SECRET
from .racer import Racer, perform
from .views import expected_zones, normalized

SECRET = TEST_SECRET.encode()
FIRST_DEAL = 11


def refusal(game: Any, state: Any, candidates: list[str]) -> tuple[str, str]:
    """The first candidate move the engine refuses, with its reason."""
    for text in candidates:
        try:
            game.apply(state, game.parse_move(text))
        except IllegalMove as exc:
            return text, str(exc)
    raise AssertionError(f"all of {candidates} are legal")


def deal_with_a_card_to_send_home(game: Any) -> int:
    for deal in range(FIRST_DEAL, FIRST_DEAL + 50):
        if any(m.kind is Kind.HOME for m in game.legal_moves(game.deal(deal, SECRET))):
            return deal
    raise AssertionError(f"no {game.id} deal with a card to send home")


def home_source(game_id: str, move: str) -> str:
    """The data-src of the card a home move takes: pile p3, slot c2, tableau t5, waste w."""
    src = move.split(">")[0]
    if game_id in ("perseverance", "perseverance-a", "cruel", "persian-patience"):
        return f"p{src}"
    return f"t{src}" if game_id == "patriarchs" and src != "w" else src


BUILDS_12 = [f"{a}>{b}" for a in range(1, 13) for b in range(1, 13) if a != b]
BUILDS_8 = [f"{a}>{b}" for a in range(1, 9) for b in range(1, 9) if a != b]
CASES = [  # game, candidate refused moves, gesture
    ("cruel", BUILDS_12, "click"),
    ("perseverance", BUILDS_12, "drag"),
    ("persian-patience", BUILDS_8, "drag"),
    ("parallels", ["S:A>K", "H:K>A"], "drag"),  # a foundation shift, dragged
    ("patriarchs", ["D:K>A"], "click"),
]


async def refusals_and_double_clicks(racer: Racer) -> None:
    for game_id, candidates, how in CASES:
        game = get_game(game_id)
        deal = deal_with_a_card_to_send_home(game)
        state = game.deal(deal, SECRET)
        await racer.start_solo(game_id, deal)
        move, reason = refusal(game, state, candidates)
        shown = await racer.toasts()
        await perform(racer, move, how)
        assert await racer.toast(after=shown) == reason, (game_id, move)
        await expect(racer.page.locator(".drag-ghost")).to_have_count(0)  # snapped back
        await racer.expect_moves(0)
        assert normalized(await racer.zones()) == expected_zones(game.view(state)), game_id
        # a double click sends a card home (for two-way foundations, the side it fits)
        home = next(m for m in game.legal_moves(state) if m.kind is Kind.HOME)
        await racer.board().locator(f"[data-src='{home_source(game_id, game.format_move(home))}']").last.dblclick()
        after = game.view(game.apply(state, home))
        assert normalized(await racer.zones(after=1)) == expected_zones(after), (game_id, game.format_move(home))
        await racer.leave_race()


def clock_deal_with_an_early_exchange() -> tuple[int, int]:
    """A deal whose fourth King turns up early with face-down cards left: (deal, plays)."""
    game = get_game("clock")
    for deal in range(400):
        state = game.deal(deal, SECRET)
        for plays in range(20):
            moves = game.legal_moves(state)
            if moves and moves[0].kind is Kind.EXCHANGE:
                return deal, plays
            state = game.apply(state, game.parse_move("p"))
    raise AssertionError("no early exchange in 400 deals")


def hour_of(code: str) -> int:
    return {"A": 1, "T": 10, "J": 11, "Q": 12, "K": 13}.get(code[0]) or int(code[0])


async def clock_hours_and_the_exchange(racer: Racer) -> None:
    game = get_game("clock")
    deal, plays = clock_deal_with_an_early_exchange()
    state = game.deal(deal, SECRET)
    await racer.start_solo("clock", deal)
    await perform(racer, "p")  # a tap on the centre turns up the first card
    state = game.apply(state, game.parse_move("p"))
    hand = game.view(state)["hand"]
    right = hour_of(hand)
    wrong = right % 12 + 1
    await racer.zones(after=1)
    # dropped on another hour: explained, nothing sent
    shown = await racer.toasts()
    await racer.drag("[data-src='hand']", f"[data-dst='h{wrong}']")
    toast = await racer.toast(after=shown)
    rank = "10" if hand[0] == "T" else hand[0]
    assert toast.startswith(rank) and "goes under" in toast, toast
    assert (f"hour {right}" if right < 13 else "the centre") in toast, toast
    await racer.expect_moves(1)
    # dropped on its own hour it is played
    await racer.drag("[data-src='hand']", f"[data-dst='h{right}']")
    state = game.apply(state, game.parse_move("p"))
    assert normalized(await racer.zones(after=2)) == expected_zones(game.view(state))
    # tap on until the fourth King is blocked: placing it is refused, then a drag exchanges it
    for done in range(2, plays):
        await perform(racer, "p", after=done)
        state = game.apply(state, game.parse_move("p"))
    await racer.expect_moves(plays)
    assert game.view(state)["exchange_allowed"]
    _, reason = refusal(game, state, ["p"])
    shown = await racer.toasts()
    await racer.page.click("button[data-move='p']")
    assert await racer.toast(after=shown) == reason
    exchange = game.format_move(game.legal_moves(state)[-1])
    await perform(racer, exchange, "drag")
    state = game.apply(state, game.parse_move(exchange))
    assert normalized(await racer.zones(after=plays + 1)) == expected_zones(game.view(state))
    await racer.leave_race()


async def test_gestures_on_the_boards(app: App, browser: Browser) -> None:
    racer = await Racer.open(browser, app.url)
    await racer.sign_in("ann")
    await refusals_and_double_clicks(racer)
    await clock_hours_and_the_exchange(racer)
    assert racer.errors == []
