"""Bot players: what they read off a view (``client.known``), how they choose
(``bots.policy``), and whole races they play through the real server (``bots.runner``)."""

from __future__ import annotations

import asyncio
import sys
from collections.abc import AsyncIterator
from functools import cache
from pathlib import Path
from typing import Any

import pytest

from solitaire_race.app import App
from solitaire_race.bots.policy import Policy
from solitaire_race.bots.runner import Pacer, run_bots
from solitaire_race.client.connection import http_url, ws_url
from solitaire_race.client.known import home_chain, known_state, legal_moves
from solitaire_race.engine import Kind, Outcome, all_games, get_game

from .conftest import TEST_SECRET, make_config
from .support import random_playout

SECRET = TEST_SECRET.encode()
GAMES = sorted(all_games())


def playout_states(game_id: str, deals: int = 4, steps: int = 150) -> list[Any]:
    return random_playout(game_id, SECRET, deals, steps, seed=11)


# --- what a view tells -----------------------------------------------------------------------
@pytest.mark.parametrize("game_id", GAMES)
def test_a_view_gives_exactly_the_players_legal_moves(game_id: str) -> None:
    """Rebuilt from the view alone (hidden cards as placeholders), the position has the
    same legal moves as the real one, and draws the same view."""
    game = get_game(game_id)
    for state in playout_states(game_id):
        view = game.view(state)
        assert legal_moves(view) == game.legal_moves(state)
        assert game.view(known_state(view)) == view


@pytest.mark.parametrize("game_id", GAMES)
def test_foundation_chains_read_off_a_view_are_legal(game_id: str) -> None:
    game = get_game(game_id)
    chains = 0
    for state in playout_states(game_id, deals=2):
        chain = home_chain(game.view(state))
        chains += bool(chain)
        for move in chain:
            parsed = game.parse_move(move)
            assert parsed.kind is Kind.HOME
            state = game.apply(state, parsed)  # raises if the chain were wrong
    assert chains or game_id == "clock"


def test_server_urls() -> None:
    assert ws_url("http://127.0.0.1:8765") == "ws://127.0.0.1:8765/ws"
    assert ws_url("https://race.example/join/KXPMRT") == "wss://race.example/ws"
    assert ws_url("127.0.0.1:9000") == "ws://127.0.0.1:9000/ws"
    assert ws_url("ws://127.0.0.1:9000/ws") == "ws://127.0.0.1:9000/ws"
    assert http_url("wss://race.example/ws") == "https://race.example"
    with pytest.raises(ValueError):
        ws_url("ftp://x")


# --- choosing ------------------------------------------------------------------------------------
def play_offline(game_id: str, deal: int, **options: Any) -> tuple[Outcome | str, int]:
    """A bot's game without a server: the policy sees only views, the engine judges."""
    game = get_game(game_id)
    state = game.deal(deal, SECRET)
    policy = Policy(game_id, **options)
    moves = 0
    while game.outcome(state) is Outcome.PLAYING:
        move = policy.choose(game.view(state))
        if move is None:
            return "resigned", moves
        state = game.apply(state, game.parse_move(move))  # raises if the bot chose an illegal move
        moves += 1
        assert moves <= policy.max_moves
    return game.outcome(state), moves


@cache
def policy_wins(game_id: str, tries: int = 60) -> tuple[int, int]:
    """The first deal the bot policy wins, and in how many moves."""
    for deal in range(tries):
        outcome, moves = play_offline(game_id, deal)
        if outcome is Outcome.WON:
            return deal, moves
    raise AssertionError(f"the bot policy won no {game_id} deal in {tries} tries")


@pytest.mark.parametrize("game_id", GAMES)
def test_policy_plays_legal_moves_to_the_end(game_id: str) -> None:
    for deal in (0, 1):
        # A small planning budget: this checks legality, not strength, and stays quick.
        outcome, _ = play_offline(game_id, deal, plan_budget=300)
        assert outcome in (Outcome.WON, Outcome.STUCK, "resigned")


def test_policy_prefers_foundation_moves() -> None:
    game = get_game("parallels")
    state = game.deal(1, SECRET)  # b1 holds 2♣, which fits the ♣ Ace foundation
    assert Policy("parallels").choose(game.view(state)) == "b1>A"
    clock = get_game("clock")
    assert Policy("clock").choose(clock.view(clock.deal(1, SECRET))) == "p"


def test_policy_resigns_when_nothing_is_left_and_after_its_move_cap() -> None:
    game = get_game("perseverance")
    view = game.view(game.deal(1, SECRET))
    stuck = {**view, "piles": [["2S", "3S"]] + [[]] * 11, "redeals_used": 2, "redeals_left": 0, "redeal_allowed": False}
    assert Policy("perseverance").choose(stuck) is None
    capped = Policy("cruel", max_moves=2)
    cruel = get_game("cruel")
    state = cruel.deal(1, SECRET)
    for _ in range(2):
        move = capped.choose(cruel.view(state))
        assert move is not None
        state = cruel.apply(state, cruel.parse_move(move))
    assert capped.choose(cruel.view(state)) is None


def test_clock_exchange_buries_the_king_deepest() -> None:
    game = get_game("clock")
    view = game.view(game.deal(1, SECRET))
    view = {
        **view, "hand": "KS", "exchange_allowed": True,
        "piles": [dict(p, face_down=min(p["face_down"], 2)) for p in view["piles"]],
    }
    view["piles"][6]["face_down"] = 3
    view["piles"][12]["face_down"] = 0
    assert Policy("clock").choose(view) == "x7.3"


@pytest.mark.parametrize("game_id", ["parallels", "patriarchs"])
def test_a_bot_with_layouts_plans_on_them_from_its_view_and_plays_legal_moves(game_id: str) -> None:
    """``hidden_solve_calls``: the bot follows solver lines of layouts of its hidden cards;
    each call is one layout, and every move it makes is legal in the real game."""
    game = get_game(game_id)
    state = game.deal(0, SECRET)
    policy = Policy(game_id, hidden_solve_calls=4, solve_budget=3_000)
    for _ in range(400):
        if game.outcome(state) is not Outcome.PLAYING:
            break
        move = policy.choose(game.view(state))
        if move is None:
            break
        state = game.apply(state, game.parse_move(move))  # raises if the bot chose an illegal move
    assert policy._solver_calls == 4


def test_pacer_caps_moves_per_second() -> None:
    pacer = Pacer(4.0, now=100.0)
    assert pacer.wait(100.0) == 0.0  # the first move goes at once
    assert pacer.wait(100.0) == pytest.approx(0.25)
    assert pacer.wait(100.1) == pytest.approx(0.4)  # slots are booked one after the other
    assert pacer.wait(101.0) == 0.0  # after a pause nothing is owed
    assert pacer.wait(101.1) == pytest.approx(0.15)
    free = Pacer(0, now=0.0)
    assert [free.wait(0.0) for _ in range(5)] == [0.0] * 5


# --- whole races through the server ---------------------------------------------------------------
@pytest.fixture
async def fast_app(tmp_path: Path) -> AsyncIterator[App]:
    """The real server with its per-connection message budget lifted, so that whole bot
    races at full speed stay quick (the budget itself: ``test_bots_keep_to_the_rate_limit``)."""
    running = await App.start(make_config(tmp_path, rate_per_s=100_000.0, rate_burst=100_000))
    try:
        yield running
    finally:
        await running.stop()


async def results_of(app: App, code: str) -> list[Any]:
    race = await app.store.race_by_code(code)
    assert race is not None
    return await app.store.race_results(race.id)


@pytest.mark.parametrize("game_id", GAMES)
async def test_two_bots_race_a_deal_they_can_win_and_both_win(fast_app: App, game_id: str) -> None:
    app = fast_app
    deal, moves = policy_wins(game_id)
    results = await asyncio.wait_for(run_bots(app.ws_url, 2, game=game_id, deal=deal, speed=0), 60)
    assert len(results) == 2 and results[0].code == results[1].code
    for result in results:
        assert result.outcome == "won" and result.moves == moves and result.home == result.total
    ranking = results[0].ranking
    assert sorted(e["rank"] for e in ranking) == [1, 2]
    assert {e["name"] for e in ranking} == {r.name for r in results}
    saved = await results_of(app, results[0].code)
    assert sorted((r.outcome, r.moves) for r in saved) == [("won", moves), ("won", moves)]


async def test_bots_join_a_persons_race_and_race_to_the_end(app: App, clients: Any) -> None:
    ann = await clients("ann")
    room = (await ann.request({"type": "create_race", "game": "cruel", "deal": 0}))["race"]
    bots = asyncio.ensure_future(run_bots(app.ws_url, 2, code=room["code"], speed=50))
    for _ in range(20):  # bounded: room updates as the bots join and get ready
        update = await ann.expect("room")
        if len(update["race"]["players"]) == 3 and all(p["ready"] for p in update["race"]["players"][1:]):
            break
    assert len(update["race"]["players"]) == 3
    assert (await ann.request({"type": "start_race"}))["type"] == "room"
    await ann.expect("race_started")
    await ann.request({"type": "resign"})
    finished = await ann.expect("race_finished", timeout=30)
    results = await asyncio.wait_for(bots, 30)
    assert [e["name"] for e in finished["ranking"] if e["name"] != "ann"] != []
    assert {r.name for r in results} <= {e["name"] for e in finished["ranking"]}
    assert all(r.outcome in ("won", "stuck", "resigned") and r.rank is not None for r in results)
    assert len(await results_of(app, room["code"])) == 3


async def test_bots_keep_to_the_rate_limit(app: App) -> None:
    """Unpaced bots run into the server's message budget; they slow down and finish."""
    deal, moves = policy_wins("clock")
    assert moves > app.config.rate_burst  # more moves than the burst allows at once
    results = await asyncio.wait_for(run_bots(app.ws_url, 1, game="clock", deal=deal, speed=0), 60)
    assert results[0].outcome == "won" and results[0].moves == moves


async def test_bot_command(fast_app: App) -> None:
    app = fast_app
    deal, moves = policy_wins("clock")
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "solitaire_race.cli", "bot", "--server", app.ws_url.replace("ws://", "http://").removesuffix("/ws"),
        "--count", "2", "--game", "clock", "--deal", str(deal), "--speed", "0", "--name", "robo",
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT,
    )
    out, _ = await asyncio.wait_for(proc.communicate(), 60)
    text = out.decode()
    assert proc.returncode == 0, text
    assert "created race" in text and "joined race" in text
    ranked = [line for line in text.splitlines() if line.strip().startswith(("1.", "2."))]
    assert len(ranked) == 2 and all("won" in line and f"{moves} moves" in line and "robo-" in line for line in ranked)
