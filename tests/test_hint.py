"""Hints: the next move of a winning line, only when practising a past day's daily
challenge: never in a race, nor on today's deal (ranked attempt or replay), whose line
would otherwise be one identity's hints away from another's ranked attempt."""

from __future__ import annotations

import dataclasses
from datetime import UTC, datetime, time, timedelta
from pathlib import Path
from typing import Any

import pytest

from solitaire_race import races
from solitaire_race.app import App
from solitaire_race.engine import get_game

from .conftest import TEST_SECRET, Client, make_config
from .test_daily import WINNABLE_DAY, WallClock  # its Perseverance daily has a solution


async def test_hints_only_when_practising_a_past_day(tmp_path: Path) -> None:
    wall = WallClock(WINNABLE_DAY)
    app = await App.start(make_config(tmp_path), wall_clock=wall)
    ann, bob = await Client.connect(app), await Client.connect(app)
    try:
        await ann.hello("ann")
        await bob.hello("bob")
        await scenario(app, wall, ann, bob)
    finally:
        await ann.close()
        await bob.close()
        await app.stop()


async def scenario(app: App, wall: WallClock, ann: Client, bob: Client) -> None:
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

    # An unranked replay of today's daily: refused too (the attack of docs/fair-play.md).
    replay = await ann.request({"type": "start_daily", "game": "perseverance"})
    assert replay["daily"]["ranked"] is False and replay["daily"]["practice"] is False
    assert (await ann.request({"type": "hint"}))["code"] == "not_allowed"
    await ann.request({"type": "leave_race"})

    # Not a day ahead, nor a day with no challenge.
    day = WINNABLE_DAY.date().isoformat()
    for date, code in (((WINNABLE_DAY + timedelta(days=1)).date().isoformat(), "not_found"),
                       ((WINNABLE_DAY - timedelta(days=9)).date().isoformat(), "not_found")):
        refused = await ann.request({"type": "start_daily", "game": "perseverance", "date": date})
        assert refused["type"] == "error" and refused["code"] == code, refused

    # Not until that day's last ranked attempts are over: 30 minutes into the next day.
    midnight = datetime.combine(WINNABLE_DAY.date() + timedelta(days=1), time(), UTC)
    wall.now = midnight + timedelta(minutes=29)
    refused = await ann.request({"type": "start_daily", "game": "perseverance", "date": day})
    assert refused["type"] == "error" and refused["code"] == "not_allowed", refused
    listed = await ann.request({"type": "daily"})
    assert {c["practice_date"] for c in listed["challenges"]} == {None}

    # The next day, practising that day's deal: a legal move that is part of a winning line.
    wall.now = midnight + timedelta(minutes=30)
    listed = await ann.request({"type": "daily"})
    assert {c["practice_date"] for c in listed["challenges"] if c["game"] == "perseverance"} == {day}
    practice = await ann.request({"type": "start_daily", "game": "perseverance", "date": day})
    assert practice["daily"] == {"date": day, "ranked": False, "par": replay["daily"]["par"], "practice": True}
    assert practice["deal"] == replay["deal"]
    hint = await ann.request({"type": "hint"})
    assert hint["type"] == "hint_result" and hint["move"] and hint["message"] == "the next move of a winning line"
    game = get_game("perseverance")
    state = game.deal(practice["deal"], TEST_SECRET.encode())
    game.apply(state, game.parse_move(hint["move"]))  # legal where the player stands
    played = await ann.request({"type": "move", "moves": [hint["move"]]})
    assert played["applied"] == [hint["move"]]

    # Never ranked: the race closes with no result stored (no board, no profile counts it).
    await ann.request({"type": "resign"})
    finished = await ann.expect("race_finished")
    assert [r["outcome"] for r in finished["ranking"]] == ["resigned"]
    race = await app.store.race_by_code(practice["code"])
    assert race is not None and race.status == "finished" and await app.store.race_results(race.id) == []


async def practise_the_day_before(ann: Client, wall: WallClock, game: str) -> tuple[str, dict[str, Any]]:
    """Ann says hello on WINNABLE_DAY (its challenges are chosen and stored), and the next
    day starts the practice of that day's ``game``: the date and the ``race_started``."""
    await ann.hello("ann")
    await ann.request({"type": "daily"})
    wall.now = WINNABLE_DAY + timedelta(days=1)
    day = WINNABLE_DAY.date().isoformat()
    practice = await ann.request({"type": "start_daily", "game": game, "date": day})
    assert practice["daily"]["practice"] is True
    return day, practice


async def test_a_practice_is_still_one_after_a_restart(tmp_path: Path) -> None:
    """Whether an attempt is practice is not kept apart: an attempt of a day before the one
    it was made on is one (``Races.daily_facts``), so it keeps its hints when resumed."""
    wall = WallClock(WINNABLE_DAY)
    config = make_config(tmp_path)
    app = await App.start(config, wall_clock=wall)
    ann = await Client.connect(app)
    try:
        day, _ = await practise_the_day_before(ann, wall, "perseverance")
    finally:
        await ann.close()
        await app.stop()
    app = await App.start(config, wall_clock=wall)
    ann2 = await Client.connect(app)
    try:
        await ann2.hello(token=ann.token)
        resumed = await ann2.request({"type": "start_daily", "game": "perseverance", "date": day})
        assert resumed["type"] == "race_started" and resumed["daily"]["practice"] is True
        assert (await ann2.request({"type": "hint"}))["type"] == "hint_result"
    finally:
        await ann2.close()
        await app.stop()


async def test_a_practice_hint_where_cards_are_hidden_comes_from_the_view_alone(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Parallels hides its stock: the server's hint is chosen over layouts of the cards the
    player has not seen (solver.hint), said so in its message, and it is a legal move."""
    # The hint's node budget without its 2 s time guard: on a loaded machine the guard ended
    # the layouts' searches before any won (seen in CI), and the hint depends on the view
    # alone only while the node budget ends each search (solver.hint).
    monkeypatch.setattr(races, "HINT_BUDGET", dataclasses.replace(races.HINT_BUDGET, seconds=None))
    wall = WallClock(WINNABLE_DAY)
    app = await App.start(make_config(tmp_path), wall_clock=wall)
    ann = await Client.connect(app)
    try:
        await practise_the_day_before(ann, wall, "parallels")
        found = await ann.request({"type": "hint"})
        assert found["type"] == "hint_result" and found["move"], found  # the same view: always this hint
        assert "guesses at the hidden cards" in found["message"]
        played = await ann.request({"type": "move", "moves": [found["move"]]})
        assert played["applied"] == [found["move"]]
    finally:
        await ann.close()
        await app.stop()
