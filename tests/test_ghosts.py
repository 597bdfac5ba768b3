"""Races against a ghost through the real server, on SQLite and on PostgreSQL: the ghost's
progress arrives at the race times its moves were recorded at, the race is never ranked, a
restart keeps the ghost, and today's daily runs are ghosts only for who played that day."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Any

from solitaire_race.app import App

from .conftest import ON_BOTH_DATABASES, TEST_SECRET, Client, make_config
from .databases import Database
from .support import winnable_deal

pytestmark = ON_BOTH_DATABASES
DEAL, LINE = winnable_deal("cruel", TEST_SECRET.encode())
# A ghost's progress is told when the race's clock reaches the recorded time: never before it,
# and at most LATE_MS after it on a busy test machine. The test reads the race's start off
# race_started's elapsed_ms when it arrives, so a late delivery of race_started makes the
# start look later: EARLY_MS (the clocks' granularity) is widened by the start request's
# round trip, which bounds that delay.
EARLY_MS, LATE_MS = 15, 250


async def recorded_win(ann: Client, pauses_s: float = 0.3) -> dict[str, Any]:
    """ann wins a solo race in three messages, ``pauses_s`` apart: her race_finished."""
    await ann.request({"type": "create_race", "game": "cruel", "deal": DEAL})
    await ann.request({"type": "start_race"})
    await ann.expect("race_started")
    thirds = [LINE[: len(LINE) // 3], LINE[len(LINE) // 3 : 2 * len(LINE) // 3], LINE[2 * len(LINE) // 3 :]]
    for i, part in enumerate(thirds):
        if i:
            await asyncio.sleep(pauses_s)
        await ann.request({"type": "move", "moves": list(part)})
    finished = await ann.expect("race_finished")
    await ann.request({"type": "leave_race"})
    return finished


async def test_the_ghost_keeps_its_recorded_pace_and_the_race_is_never_ranked(
    app: App, clients: Any, database: Database
) -> None:
    ann, bob = await clients("ann"), await clients("bob")
    recorded = await recorded_win(ann)
    replay = await bob.request({"type": "replay", "code": recorded["code"]})
    times = [s["at_ms"] for s in replay["racers"][0]["steps"]]

    typed = f"{recorded['code'][:3]} {recorded['code'][3:].lower()}"  # read as join_race reads a code
    room = await bob.request({"type": "race_ghost", "code": typed, "player_id": ann.player["id"]})
    assert room["type"] == "room" and room["race"]["deal"] == DEAL and room["race"]["max_players"] == 1
    asked = time.monotonic()
    await bob.request({"type": "start_race"})
    started = await bob.expect("race_started")
    began = time.monotonic() - started["elapsed_ms"] / 1000
    early = EARLY_MS + (began - asked) * 1000  # race_started's delivery took at most this
    assert started["opponents"] == [{
        "type": "progress", "player_id": 0, "name": "ann", "home": 4, "total": 52, "moves": 0,
        "outcome": "playing", "time_ms": None, "ghost": True,
    }]
    seen: list[tuple[float, dict[str, Any]]] = []
    while not seen or seen[-1][1]["outcome"] == "playing":
        message = await bob.expect(lambda m: m["type"] == "progress" and m.get("ghost"), timeout=5)
        seen.append(((time.monotonic() - began) * 1000, message))
    # Each message at the time of the last move it tells, and the moves in their recorded groups.
    for arrived, message in seen:
        told = message["moves"]
        due = times[told - 1] if message["outcome"] == "playing" else recorded["ranking"][0]["time_ms"]
        assert due - early <= arrived <= due + LATE_MS, (told, due, arrived, early)
    assert [m["moves"] for _, m in seen][-1] == len(LINE) and seen[-1][1]["outcome"] == "won"
    assert seen[-1][1]["home"] == 52 and seen[-1][1]["time_ms"] == recorded["ranking"][0]["time_ms"]
    assert len({m["moves"] for _, m in seen}) >= 3  # three recorded messages, three steps at least

    await bob.request({"type": "resign"})
    finished = await bob.expect("race_finished")
    assert finished["ghost"] == {
        "code": recorded["code"], "player_id": ann.player["id"], "name": "ann", "outcome": "won",
        "time_ms": recorded["ranking"][0]["time_ms"], "moves": len(LINE), "home": 52, "total": 52,
        "would_rank": 2, "of": 2, "board": "race", "date": None,
    }
    # Practice: nothing stored, on no board and in no profile.
    stored = await database.query(
        "SELECT COUNT(*) FROM results r JOIN races c ON c.id = r.race_id WHERE c.code = ?", room["race"]["code"]
    )
    assert stored == [(0,)]
    assert (await bob.request({"type": "profile"}))["games"] == []
    board = await bob.request({"type": "leaderboard", "board": "deal", "game": "cruel", "deal": DEAL})
    assert [e["name"] for e in board["entries"]] == ["ann"]
    # Watched once its room is released, from the store: still a race of one.
    assert (await bob.request({"type": "leave_race"}))["type"] == "left"
    watched = await bob.request({"type": "watch_race", "code": room["race"]["code"]})
    assert watched["type"] == "room" and watched["race"]["max_players"] == 1, watched


async def test_whose_runs_may_be_ghosts(app: App, clients: Any) -> None:
    ann, bob, cat = await clients("ann"), await clients("bob"), await clients("cat")
    recorded = await recorded_win(ann, pauses_s=0)
    missing = await bob.request({"type": "race_ghost", "code": recorded["code"], "player_id": cat.player["id"]})
    assert missing["code"] == "not_found" and "has no result in race" in missing["message"]
    assert (await bob.request({"type": "race_ghost", "code": "BCDFGH", "player_id": 1}))["code"] == "not_found"

    # Today's daily: ann's run is a ghost only for who has made their own ranked attempt.
    await ann.request({"type": "start_daily", "game": "cruel"})
    await ann.request({"type": "resign"})
    daily = await ann.expect("race_finished")
    await ann.request({"type": "leave_race"})
    refused = await bob.request({"type": "race_ghost", "code": daily["code"], "player_id": ann.player["id"]})
    assert refused["code"] == "not_allowed" and "still being played" in refused["message"]
    await cat.request({"type": "start_daily", "game": "cruel"})
    await cat.request({"type": "resign"})
    await cat.expect("race_finished")
    await cat.request({"type": "leave_race"})
    allowed = await cat.request({"type": "race_ghost", "code": daily["code"], "player_id": ann.player["id"]})
    assert allowed["type"] == "room"  # on today's deal, which a plain create_race refuses
    await cat.request({"type": "start_race"})
    await cat.expect("race_started")
    await cat.request({"type": "resign"})
    ranked = (await cat.expect("race_finished"))["ghost"]
    # ranked on the day's board (ann's and cat's own attempts), not in ann's race of one
    assert (ranked["board"], ranked["date"], ranked["of"]) == ("daily", daily["daily"]["date"], 3)


async def test_a_ghost_race_keeps_its_ghost_through_a_restart(tmp_path: Path, database: Database) -> None:
    app = await App.start(make_config(tmp_path, db_url=database.url))
    ann, bob = await Client.connect(app), await Client.connect(app)
    await ann.hello("ann")
    await bob.hello("bob")
    assert ann.player is not None
    recorded = await recorded_win(ann, pauses_s=0)
    typed = f"{recorded['code'][:3]} {recorded['code'][3:].lower()}"  # read as join_race reads a code
    room = await bob.request({"type": "race_ghost", "code": typed, "player_id": ann.player["id"]})
    await app.stop()

    app = await App.start(make_config(tmp_path, db_url=database.url))
    try:
        back = await Client.connect(app)
        await back.hello(token=bob.token)
        assert (await back.request({"type": "join_race", "code": room["race"]["code"]}))["type"] == "room"
        await back.request({"type": "start_race"})
        started = await back.expect("race_started")
        assert [o["name"] for o in started["opponents"] if o.get("ghost")] == ["ann"]
        await back.request({"type": "resign"})
        assert (await back.expect("race_finished"))["ghost"]["name"] == "ann"
        assert (await back.request({"type": "rematch"}))["code"] == "not_allowed"  # practice: no series
        await back.close()
    finally:
        await app.stop()


async def test_a_ghost_starts_with_the_cards_its_deal_starts_with(app: App, clients: Any) -> None:
    """Before its first move a ghost has the cards home that the deal starts with (Cruel
    deals its aces home: 4), as the racer beside it does, not 0; and a run that made no move
    is shown with them too."""
    ann, bob = await clients("ann"), await clients("bob")
    await ann.request({"type": "create_race", "game": "cruel", "deal": DEAL})
    await ann.request({"type": "start_race"})
    await ann.expect("race_started")
    await ann.request({"type": "resign"})  # a run of no move: 4 cards home, as dealt
    recorded = await ann.expect("race_finished")
    assert recorded["ranking"][0]["home"] == 4
    await ann.request({"type": "leave_race"})

    await bob.request({"type": "race_ghost", "code": recorded["code"], "player_id": ann.player["id"]})
    await bob.request({"type": "start_race"})
    started = await bob.expect("race_started")
    ghost = started["opponents"][0]
    assert (ghost["home"], ghost["moves"]) == (4, 0), ghost
    watched = await (await clients()).request({"type": "watch_race", "code": started["code"]})
    assert [r["home"] for r in watched["racers"]] == [4, 4], watched
    await bob.request({"type": "resign"})
    finished = await bob.expect("race_finished")
    assert (finished["ghost"]["home"], finished["ghost"]["moves"]) == (4, 0), finished["ghost"]
