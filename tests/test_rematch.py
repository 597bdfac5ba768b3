"""Rematches and series through the real server: real websockets on 127.0.0.1, each test on
a SQLite file and on a PostgreSQL database. A finished race's racers race again in one
room, whoever asks first and however many ask at once; the room carries the series' score."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from solitaire_race.app import App

from .conftest import ON_BOTH_DATABASES, TEST_SECRET, Client, make_config
from .databases import Database
from .support import winnable_deal

GAME = "cruel"
DEAL, LINE = winnable_deal(GAME, TEST_SECRET.encode())

pytestmark = ON_BOTH_DATABASES


async def race(winner: Client, *others: Client, code: str | None = None, **create: Any) -> dict[str, Any]:
    """A whole race won by ``winner`` (the others resign): created by ``winner`` unless
    ``code`` names a lobby everyone is in already. Returns the winner's race_finished."""
    if code is None:
        room = await winner.request({"type": "create_race", "game": GAME, "deal": DEAL, "private": True, **create})
        assert room["type"] == "room", room
        for other in others:
            assert (await other.request({"type": "join_race", "code": room["race"]["code"]}))["type"] == "room"
    assert (await winner.request({"type": "start_race"}))["type"] in ("room", "countdown")
    started = [await c.expect("race_started") for c in (winner, *others)]
    for at in range(0, len(LINE), 64):  # at most 64 moves a message
        reply = await winner.request({"type": "move", "moves": list(LINE[at : at + 64])})
    assert reply["outcome"] == "won" and started[0]["deal"] is not None
    for other in others:
        await other.request({"type": "resign"})
    finished = await winner.expect("race_finished")
    for other in others:
        await other.expect("race_finished")
    return finished


def score(message: dict[str, Any]) -> dict[str, int]:
    return {s["name"]: s["wins"] for s in message["series"]["score"]}


async def test_everyone_asking_at_once_lands_in_one_room(app: App, clients: Any, database: Database) -> None:
    ann, bob, cat = await clients("ann"), await clients("bob"), await clients("cat")
    finished = await race(ann, bob, cat)
    assert "series" not in finished  # a single race, nothing to tell yet

    # All three press "rematch" at the same instant, two of them for a fresh deal.
    asks = [c.request({"type": "rematch", "same_deal": same}) for c, same in ((ann, True), (bob, False), (cat, False))]
    rooms = await asyncio.gather(*asks)
    assert {r["type"] for r in rooms} == {"room"}, rooms
    assert len({r["race"]["code"] for r in rooms}) == 1
    last = max(rooms, key=lambda r: len(r["race"]["players"]))["race"]
    assert sorted(p["name"] for p in last["players"]) == ["ann", "bob", "cat"]
    assert last["series"]["number"] == 2 and score(last) == {"ann": 1, "bob": 0, "cat": 0}
    assert last["series"]["best_of"] is None and last["series"]["decided"] is False
    rows = await database.query("SELECT COUNT(*) FROM races WHERE series_number = 2")
    assert rows == [(1,)]  # the others' rooms were never made, or were taken back


async def test_a_proposal_reaches_the_others_who_join_with_its_code(app: App, clients: Any, database: Database) -> None:
    ann, bob = await clients("ann"), await clients("bob")
    first = await race(ann, bob)
    room = await bob.request({"type": "rematch", "same_deal": False})
    assert room["type"] == "room" and room["race"]["creator_id"] == bob.player["id"]
    assert room["race"]["deal"] != DEAL and room["race"]["status"] == "lobby"

    invite = await ann.expect("rematch_proposed")
    assert invite == {
        "type": "rematch_proposed", "race": first["code"], "code": room["race"]["code"],
        "by": {"id": bob.player["id"], "name": "bob"}, "same_deal": False,
    }
    joined = await ann.request({"type": "join_race", "code": invite["code"]})
    assert [p["name"] for p in joined["race"]["players"]] == ["bob", "ann"]
    assert score(joined["race"]) == {"ann": 1, "bob": 0}

    # ann can also just ask for the rematch: the same room (she is in it already).
    again = await ann.request({"type": "rematch"})
    assert again["type"] == "error" and again["code"] == "not_allowed"  # she sits in a lobby now, not a finished race
    stored = await database.query("SELECT rematch_code FROM races WHERE code = ?", first["code"])
    assert stored == [(room["race"]["code"],)]


async def test_a_rematch_left_empty_gives_way_to_a_new_one_and_spectators_never_get_its_code(
    app: App, clients: Any, database: Database
) -> None:
    ann, bob, cat = await clients("ann"), await clients("bob"), await clients("cat")
    first = await race(ann, bob, cat)
    spectator = await clients()
    assert (await spectator.request({"type": "watch_race", "code": first["code"]}))["type"] == "watching"
    made = await ann.request({"type": "rematch"})
    await ann.request({"type": "leave_race"})  # its only racer leaves: the lobby is deleted
    assert await database.query("SELECT COUNT(*) FROM races WHERE code = ?", made["race"]["code"]) == [(0,)]
    again = await bob.request({"type": "rematch"})
    assert again["type"] == "room" and again["race"]["code"] != made["race"]["code"]
    assert (await cat.request({"type": "rematch"}))["race"]["code"] == again["race"]["code"]
    # A private room's code is its racers': no spectator frame names it.
    seen = list(spectator.inbox)
    assert not any(m.get("type") == "rematch_proposed" or "rematch" in m.get("race", {}) for m in seen), seen


async def test_best_of_three_is_decided_and_the_next_rematch_starts_a_new_series(app: App, clients: Any) -> None:
    ann, bob = await clients("ann"), await clients("bob")
    first = await race(ann, bob, best_of=3)
    assert first["series"] == {
        "best_of": 3, "number": 1, "decided": False, "champion": None,
        "score": [{"player_id": ann.player["id"], "name": "ann", "wins": 1},
                  {"player_id": bob.player["id"], "name": "bob", "wins": 0}],
    }
    room = await ann.request({"type": "rematch"})
    assert room["race"]["deal"] == DEAL and room["race"]["series"]["number"] == 2
    assert (await bob.request({"type": "rematch"}))["race"]["code"] == room["race"]["code"]
    second = await race(ann, bob, code=room["race"]["code"])
    assert second["series"]["decided"] is True and second["series"]["champion"] == ann.player["id"]
    assert score(second) == {"ann": 2, "bob": 0}

    third = await bob.request({"type": "rematch"})
    assert third["race"]["series"] == {"best_of": 3, "number": 1, "decided": False, "champion": None, "score": []}


async def test_rematch_is_refused_where_it_makes_no_sense(app: App, clients: Any, database: Database) -> None:
    ann, bob = await clients("ann"), await clients("bob")
    assert (await ann.request({"type": "rematch"}))["code"] == "not_allowed"  # in no race
    room = await ann.request({"type": "create_race", "game": GAME, "deal": DEAL})
    assert (await ann.request({"type": "rematch"}))["code"] == "not_allowed"  # a lobby
    await bob.request({"type": "join_race", "code": room["race"]["code"]})
    await ann.request({"type": "start_race"})
    await ann.expect("race_started")
    assert (await bob.request({"type": "rematch"}))["code"] == "not_allowed"  # running
    bad = await ann.request({"type": "rematch", "same_deal": "yes"})
    assert bad["code"] == "bad_message"
    bad = await ann.request({"type": "create_race", "game": GAME, "best_of": 4})
    assert bad["code"] == "bad_message"
    assert await database.query("SELECT COUNT(*) FROM races") == [(1,)]  # nothing made


async def test_a_daily_attempt_has_no_rematch(app: App, clients: Any) -> None:
    dan = await clients("dan")
    started = await dan.request({"type": "start_daily", "game": GAME})
    assert started["type"] == "race_started", started
    await dan.request({"type": "resign"})
    await dan.expect("race_finished")
    refused = await dan.request({"type": "rematch"})
    assert refused["code"] == "not_allowed" and "daily" in refused["message"]


async def test_a_rematch_lobby_keeps_its_series_through_a_restart(tmp_path: Path, database: Database) -> None:
    app = await App.start(make_config(tmp_path, db_url=database.url))
    ann, bob = await Client.connect(app), await Client.connect(app)
    await ann.hello("ann")
    await bob.hello("bob")
    first = await race(ann, bob, best_of=5)
    room = await ann.request({"type": "rematch"})
    await app.stop()

    app = await App.start(make_config(tmp_path, db_url=database.url))  # the same database
    try:
        back = await Client.connect(app)
        await back.hello(token=bob.token)
        # The finished race, asked for again, names its rematch; the lobby came back with its series.
        old = await back.request({"type": "join_race", "code": first["code"]})
        assert old["race"]["rematch"] == {"code": room["race"]["code"]}
        assert (await back.expect("race_finished"))["series"]["score"] == first["series"]["score"]
        joined = await back.request({"type": "join_race", "code": room["race"]["code"]})
        assert joined["race"]["series"] == {**room["race"]["series"]} and score(joined["race"]) == {"ann": 1, "bob": 0}
        await back.close()
    finally:
        await app.stop()


async def test_a_rematch_of_a_race_whose_room_was_released(app: App, clients: Any) -> None:
    """Everyone left the finished race (or the server restarted): asked with its code, the
    rematch is made from the database, and the others find it when they come back."""
    ann, bob = await clients("ann"), await clients("bob")
    first = await race(ann, bob, best_of=3)
    for c in (ann, bob):
        await c.request({"type": "leave_race"})
    assert first["code"] not in app.races.rooms  # released
    refused = await ann.request({"type": "rematch"})  # without the code: nothing to go by
    assert refused["code"] == "not_allowed"
    made = await ann.request({"type": "rematch", "race": first["code"], "same_deal": True})
    assert made["type"] == "room" and made["race"]["deal"] == DEAL
    assert made["race"]["series"]["number"] == 2 and score(made["race"]) == {"ann": 1, "bob": 0}
    back = await bob.request({"type": "join_race", "code": first["code"]})  # the finished race, from the store
    assert back["race"]["rematch"] == {"code": made["race"]["code"]}
    joined = await bob.request({"type": "rematch", "race": first["code"]})
    assert joined["race"]["code"] == made["race"]["code"]
    stranger = await clients("cat")
    assert (await stranger.request({"type": "rematch", "race": first["code"]}))["code"] == "not_allowed"


async def test_a_rematch_asked_from_another_race_is_refused_and_makes_nothing(
    app: App, clients: Any, database: Database
) -> None:
    """Asked with a race's code by a racer who sits in a lobby (or a running race), the
    rematch is refused before it is made: no lobby is left behind, created by someone who is
    not in it, which the other racers would join and could never start."""
    ann, bob = await clients("ann"), await clients("bob")
    first = await race(ann, bob)
    await ann.request({"type": "leave_race"})
    lobby = await ann.request({"type": "create_race", "game": GAME, "deal": DEAL + 1})
    refused = await ann.request({"type": "rematch", "race": first["code"]})
    assert refused["type"] == "error" and refused["code"] == "already_in_race", refused
    assert await database.query("SELECT COUNT(*) FROM races WHERE series_number = 2") == [(0,)]
    made = await bob.request({"type": "rematch"})  # bob's own rematch: he makes it, and can start it
    assert made["type"] == "room" and made["race"]["creator_id"] == bob.player["id"], made
    assert (await bob.request({"type": "start_race"}))["type"] == "room"
    assert (await ann.request({"type": "leave_race"}))["code"] == lobby["race"]["code"]



async def test_a_rematch_is_of_the_race_it_names(app: App, clients: Any) -> None:
    """A racer sitting in one finished race who asks for the rematch of another, by its code,
    gets that one's; and the racers still in its room are invited, as whenever its room is in
    memory."""
    ann, bob, cat = await clients("ann"), await clients("bob"), await clients("cat")
    first = await race(ann, bob)
    await ann.request({"type": "leave_race"})
    await race(ann, cat)  # ann now sits in this finished race
    made = await ann.request({"type": "rematch", "race": first["code"]})
    assert made["type"] == "room", made
    assert score(made["race"]) == {"ann": 1, "bob": 0}, made  # the first race's series, not the second's
    invite = await bob.expect("rematch_proposed")  # bob still sits in the first race's room
    assert invite["race"] == first["code"] and invite["code"] == made["race"]["code"]
    assert not any(m.get("type") == "rematch_proposed" for m in cat.inbox)


async def test_a_refused_request_leaves_a_racer_in_the_finished_race(app: App, clients: Any) -> None:
    """A racer in a finished race whose create_race, race_ghost or join_race is refused is
    still in that race: the others see no change, and the racer's rematch is still theirs to
    ask for. (Each used to take the racer out of the finished room before it was refused.)"""
    ann, bob, cat, dan = await clients("ann"), await clients("bob"), await clients("cat"), await clients("dan")
    first = await race(ann, bob)
    bob.inbox.clear()  # the race's own messages: race_finished was its last
    running = await cat.request({"type": "create_race", "game": GAME, "deal": DEAL + 1})
    await cat.request({"type": "start_race"})
    await cat.expect("race_started")
    full = await dan.request({"type": "create_race", "game": GAME, "deal": DEAL + 2})
    for i in range(app.config.max_players - 1):
        other = await clients(f"guest{i}")
        assert (await other.request({"type": "join_race", "code": full["race"]["code"]}))["type"] == "room"
    refusals = [
        ({"type": "create_race", "game": "no-such-game"}, "unknown_game"),
        ({"type": "race_ghost", "code": "BBBBBB", "player_id": bob.player["id"]}, "not_found"),
        ({"type": "race_ghost", "code": first["code"], "player_id": 999_999}, "not_found"),
        ({"type": "join_race", "code": running["race"]["code"]}, "race_started"),
        ({"type": "join_race", "code": full["race"]["code"]}, "room_full"),
    ]
    for request, code in refusals:
        refused = await ann.request(request)
        assert refused["type"] == "error" and refused["code"] == code, (request, refused)
    with pytest.raises(TimeoutError):  # ann never left: bob's room does not change
        await bob.expect("room", timeout=0.3)
    made = await ann.request({"type": "rematch"})
    assert made["type"] == "room", made
    assert (await bob.expect("rematch_proposed"))["code"] == made["race"]["code"]


async def test_a_rematch_that_ran_without_you_is_not_made_again(app: App, clients: Any, database: Database) -> None:
    """The rematch ran (and finished) without one of the first race's racers: their rematch is
    refused (`race_started`), not made a second time as a second race of the same number in
    the series, which the first race would then name as its rematch instead."""
    ann, bob, cat = await clients("ann"), await clients("bob"), await clients("cat")
    first = await race(ann, bob, cat)
    made = await bob.request({"type": "rematch"})
    assert (await cat.request({"type": "rematch"}))["race"]["code"] == made["race"]["code"]
    await race(bob, cat, code=made["race"]["code"])
    refused = await ann.request({"type": "rematch"})  # ann stayed in the first race's room
    assert refused["type"] == "error" and refused["code"] == "race_started", refused
    assert await database.query("SELECT COUNT(*) FROM races WHERE series_number = 2") == [(1,)]
    stored = await database.query("SELECT rematch_code FROM races WHERE code = ?", first["code"])
    assert stored == [(made["race"]["code"],)]
    await ann.request({"type": "leave_race"})
    refused = await ann.request({"type": "rematch", "race": first["code"]})  # from the database: the same
    assert refused["type"] == "error" and refused["code"] == "race_started", refused


async def test_everyone_asking_at_once_for_a_released_race_lands_in_one_room(app: App, clients: Any) -> None:
    """As when its room is in memory: the racers of a finished race that everyone left ask for
    its rematch by its code at the same instant, and all land in the one room made."""
    for round_ in range(3):
        players = [await clients(f"{name}{round_}") for name in ("ann", "bob", "cat")]
        first = await race(*players)
        for c in players:
            await c.request({"type": "leave_race"})
        rooms = await asyncio.gather(
            *[c.request({"type": "rematch", "race": first["code"], "same_deal": i == 0}) for i, c in enumerate(players)]
        )
        assert [r["type"] for r in rooms] == ["room"] * 3, rooms
        assert len({r["race"]["code"] for r in rooms}) == 1, rooms
