"""Watching a live race through the real server: a spectator (no identity needed) sees the
race's standings as they change and its ranking, and never a board or a card. Tested like
the leak tests, by capturing every frame a spectator receives in races of every game."""

from __future__ import annotations

import asyncio
import random
import re
from typing import Any

import pytest

from solitaire_race.app import App
from solitaire_race.engine import all_games, get_game

from .conftest import TEST_SECRET, progress_entries

SECRET = TEST_SECRET.encode()
CARD = re.compile(r"^[2-9TJQKA][SHDC]$")
BOARD_KEYS = {"view", "changes", "opponents", "piles", "tableau", "foundations", "waste", "waste_top", "hand", "stock",
              "steps"}


def leaks(node: Any, path: str = "") -> list[str]:
    """Every place in a frame that carries a card or a board."""
    found = []
    if isinstance(node, dict):
        for key, value in node.items():
            if key in BOARD_KEYS:
                found.append(f"{path}.{key}")
            found += leaks(value, f"{path}.{key}")
    elif isinstance(node, list):
        for i, value in enumerate(node):
            found += leaks(value, f"{path}[{i}]")
    elif isinstance(node, str) and CARD.match(node):
        found.append(f"{path} = {node!r}")
    return found


async def frames_until(watcher: Any, kind: str) -> list[dict[str, Any]]:
    """Every frame the watcher receives, up to and including the first of ``kind``."""
    seen = list(watcher.inbox)
    watcher.inbox.clear()
    while not any(m.get("type") == kind for m in seen):
        seen.append(await watcher._read())
    return seen


@pytest.mark.parametrize("game_id", sorted(all_games()))
async def test_a_spectator_sees_the_standings_and_never_a_card(app: App, clients: Any, game_id: str) -> None:
    ann, bob = await clients(f"ann-{game_id}"), await clients(f"bob-{game_id}")
    room = await ann.request({"type": "create_race", "game": game_id, "deal": 3})
    code = room["race"]["code"]
    await bob.request({"type": "join_race", "code": code})
    watcher = await clients()  # anyone: no hello
    watching = await watcher.request({"type": "watch_race", "code": code.lower()})
    assert watching["type"] == "watching" and watching["race"]["status"] == "lobby" and watching["elapsed_ms"] is None
    assert [r["name"] for r in watching["racers"]] == [f"ann-{game_id}", f"bob-{game_id}"]

    await ann.request({"type": "start_race"})
    started = [await c.expect("race_started") for c in (ann, bob)]
    game, rng = get_game(game_id), random.Random(7)
    state = game.deal(3, SECRET)
    assert started[0]["view"] == game.view(state)
    played = 0
    for _ in range(12):  # ann plays random legal moves; the watcher is told of them
        legal = game.legal_moves(state)
        if not legal:
            break
        move = rng.choice(legal)
        reply = await ann.request({"type": "move", "moves": [game.format_move(move)]})
        if reply.get("type") != "move_result":
            break  # her game ended (found stuck after the move before)
        state, played = game.apply(state, move), played + 1
        if reply["outcome"] != "playing":
            break
    told: list[dict[str, Any]] = []
    if played:  # in standings, or in a progress if the search found her game stuck meanwhile
        seen = await watcher.expect(lambda m: any(r["moves"] == played for r in progress_entries(m)))
        told.append(seen)
        assert [r["name"] for r in progress_entries(seen) if r["moves"] == played] == [f"ann-{game_id}"]
    for racer in (ann, bob):
        await racer.request({"type": "resign"})
    frames = told + await frames_until(watcher, "race_finished")
    ranking = frames[-1]["ranking"]
    assert sorted(r["name"] for r in ranking) == [f"ann-{game_id}", f"bob-{game_id}"]
    assert {m["type"] for m in [watching, *frames]} <= {"watching", "room", "countdown", "standings", "progress",
                                                     "race_finished"}
    problems = [leak for m in [watching, *frames] for leak in leaks(m)]
    assert not problems, problems


async def test_watching_a_finished_race_a_missing_one_and_leaving(app: App, clients: Any) -> None:
    ann = await clients("ann")
    room = await ann.request({"type": "create_race", "game": "cruel", "deal": 1})
    code = room["race"]["code"]
    watcher = await clients("watcher")  # identified or not: the same
    assert (await watcher.request({"type": "watch_race", "code": code}))["type"] == "watching"
    assert app.races.rooms[code].spectators == {-next(iter(s.id for s in app.gateway.outbox.online.values()
                                                           if s.player and s.player.name == "watcher"))}
    await ann.request({"type": "start_race"})
    await ann.expect("race_started")
    await ann.request({"type": "resign"})
    assert (await watcher.expect("race_finished"))["ranking"][0]["name"] == "ann"
    soon = await clients()  # while its room is still in memory (ann is in it): the ranking too
    assert (await soon.request({"type": "watch_race", "code": code}))["race"]["status"] == "finished"
    assert (await soon.expect("race_finished"))["ranking"][0]["name"] == "ann"
    await ann.request({"type": "leave_race"})  # the room is released: from now on, the store answers

    later = await clients()
    again = await later.request({"type": "watch_race", "code": code})  # finished: its ranking, from the store
    assert again["type"] == "room" and again["race"]["status"] == "finished"
    assert (await later.expect("race_finished"))["ranking"][0]["outcome"] == "resigned"
    missing = await later.request({"type": "watch_race", "code": "BCDFGH"})
    assert missing["type"] == "error" and missing["code"] == "no_such_race"

    # A spectator that goes is no longer told anything.
    room = await ann.request({"type": "create_race", "game": "cruel", "deal": 2})
    second = room["race"]["code"]
    goer = await clients()
    assert (await goer.request({"type": "watch_race", "code": second}))["type"] == "watching"
    assert len(app.races.rooms[second].spectators) == 1
    assert (await goer.request({"type": "watch_race", "code": code}))["type"] == "room"  # the finished one
    assert app.races.rooms[second].spectators == set()  # one race at a time: the first is no longer watched
    assert (await goer.request({"type": "watch_race", "code": second}))["type"] == "watching"
    await goer.close()
    for _ in range(100):  # the server notices the close within a moment
        if not app.races.rooms[second].spectators:
            break
        await asyncio.sleep(0.02)
    assert app.races.rooms[second].spectators == set()


async def test_a_connection_that_races_in_the_race_it_watches_gets_each_message_once(
    app: App, clients: Any
) -> None:
    """Watch a lobby, then join it on the same connection (or watch the race you race in):
    the room's messages come once, as to a racer, not a second time as to a spectator."""
    ann, bob = await clients("ann"), await clients("bob")
    room = await ann.request({"type": "create_race", "game": "cruel", "deal": 1})
    code = room["race"]["code"]
    assert (await bob.request({"type": "watch_race", "code": code}))["type"] == "watching"
    assert (await bob.request({"type": "join_race", "code": code}))["type"] == "room"
    watched = await ann.request({"type": "watch_race", "code": code})  # the creator watches her own race
    assert watched["type"] == "watching" and len(watched["racers"]) == 2
    await ann.request({"type": "start_race"})
    for racer in (ann, bob):
        await racer.expect("race_started")
        assert (await racer.request({"type": "resign"}))["type"] == "progress"
    for racer in (ann, bob):
        seen = await frames_until(racer, "race_finished")
        await asyncio.sleep(0.2)  # a second copy would be on its way
        seen += racer.inbox
        racer.inbox.clear()
        kinds = [m["type"] for m in seen if m["type"] in ("room", "countdown", "race_finished")]
        statuses = [m["race"]["status"] for m in seen if m["type"] == "room"]
        assert kinds.count("countdown") == 1 and kinds.count("race_finished") == 1, kinds
        assert statuses.count("running") == 1 and statuses.count("finished") == 1, statuses
