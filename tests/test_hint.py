"""Hints: the next move of a winning line, in unranked practice only (never in a race or a
ranked daily attempt)."""

from __future__ import annotations

from pathlib import Path

from solitaire_race.app import App
from solitaire_race.engine import get_game

from .conftest import TEST_SECRET, Client, make_config
from .test_daily import WINNABLE_DAY, WallClock  # its Perseverance daily has a solution


async def test_hints_only_in_unranked_practice(tmp_path: Path) -> None:
    app = await App.start(make_config(tmp_path), wall_clock=WallClock(WINNABLE_DAY))
    ann, bob = await Client.connect(app), await Client.connect(app)
    try:
        await ann.hello("ann")
        await bob.hello("bob")
        await scenario(ann, bob)
    finally:
        await ann.close()
        await bob.close()
        await app.stop()


async def scenario(ann: Client, bob: Client) -> None:
    assert (await ann.request({"type": "hint"}))["code"] == "not_in_race"

    # A race: refused.
    room = await ann.request({"type": "create_race", "game": "cruel", "deal": 1})
    await bob.request({"type": "join_race", "code": room["race"]["code"]})
    await ann.request({"type": "start_race"})
    await ann.expect("race_started")
    refused = await ann.request({"type": "hint"})
    assert refused["type"] == "error" and refused["code"] == "not_allowed"
    for c in (ann, bob):
        await c.request({"type": "leave_race"})

    # The ranked daily attempt: refused.
    ranked = await ann.request({"type": "start_daily", "game": "perseverance"})
    assert ranked["daily"]["ranked"] is True
    assert (await ann.request({"type": "hint"}))["code"] == "not_allowed"
    await ann.request({"type": "resign"})
    await ann.expect("race_finished")

    # An unranked replay of the daily: a legal move that is part of a winning line.
    replay = await ann.request({"type": "start_daily", "game": "perseverance"})
    assert replay["daily"]["ranked"] is False
    hint = await ann.request({"type": "hint"})
    assert hint["type"] == "hint_result" and hint["move"] and hint["message"] == "the next move of a winning line"
    game = get_game("perseverance")
    state = game.deal(replay["deal"], TEST_SECRET.encode())
    game.apply(state, game.parse_move(hint["move"]))  # legal where the player stands
    played = await ann.request({"type": "move", "moves": [hint["move"]]})
    assert played["applied"] == [hint["move"]]
