"""A room's life beyond one race and one process: finished rooms are released, finished
races are answered from the store, and lobbies and closing races survive a restart.

Real server (in-process ``App`` or a real ``serve`` process), real websockets on
127.0.0.1, real databases: each test on a SQLite file and on a PostgreSQL database.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from websockets.exceptions import ConnectionClosed

from solitaire_race.app import App

from .conftest import ON_BOTH_DATABASES, TEST_SECRET, Client, make_config
from .databases import Database
from .support import winnable_deal
from .test_crash import Server, connect

GAME = "cruel"
DEAL, LINE = winnable_deal(GAME, TEST_SECRET.encode())


pytestmark = ON_BOTH_DATABASES


async def await_hello(client: Client, name: str) -> Client:
    await client.hello(name)
    return client


async def create(host: Client, *guests: Client) -> str:
    room = await host.request({"type": "create_race", "game": GAME, "deal": DEAL, "private": True})
    assert room["type"] == "room", room
    for guest in guests:
        joined = await guest.request({"type": "join_race", "code": room["race"]["code"]})
        assert joined["type"] == "room", joined
    return str(room["race"]["code"])


async def race_to_the_end(host: Client, *guests: Client) -> str:
    """A whole race: created, started, every racer resigns; its code once it finished."""
    code = await create(host, *guests)
    await host.request({"type": "start_race"})
    for racer in (host, *guests):
        await racer.expect("race_started")
    for racer in (host, *guests):
        assert (await racer.request({"type": "resign"}))["type"] == "progress"
    for racer in (host, *guests):
        await racer.expect("race_finished")
    return code


async def test_finished_rooms_are_released_when_their_racers_move_on(tmp_path: Path, database: Database) -> None:
    app = await App.start(make_config(tmp_path, db_url=database.url))
    ann, bob = await Client.connect(app), await Client.connect(app)
    try:
        await ann.hello("ann")
        await bob.hello("bob")
        codes = []
        for _ in range(5):  # race again on the same connections, never sending leave_race
            codes.append(await race_to_the_end(ann, bob))
        # Only the last finished race is held: both racers are still looking at its result.
        assert list(app.races.rooms) == [codes[-1]]
        await ann.close()
        await bob.close()
        for _ in range(100):  # bounded: the server handles the two disconnects
            if not app.races.rooms:
                break
            await asyncio.sleep(0.02)
        assert app.races.rooms == {} and app.races.interpreter.epochs == {}

        # A released race is answered from the store: room, then the ranking.
        back = await Client.connect(app)
        await back.hello(token=ann.token)
        room = await back.request({"type": "join_race", "code": codes[0]})
        assert room["type"] == "room" and room["race"]["status"] == "finished"
        finished = await back.expect("race_finished")
        assert finished["code"] == codes[0] and {r["name"] for r in finished["ranking"]} == {"ann", "bob"}
        assert [r["rank"] for r in finished["ranking"]] == [1, 2]
        # ...and only to its racers.
        cat = await Client.connect(app)
        await cat.hello("cat")
        assert (await cat.request({"type": "join_race", "code": codes[0]}))["code"] == "no_such_race"
        await back.close()
        await cat.close()
    finally:
        await app.stop()


async def test_a_finished_race_is_answered_after_a_restart(tmp_path: Path, database: Database) -> None:
    app = await App.start(make_config(tmp_path, db_url=database.url))
    ann, bob = await Client.connect(app), await Client.connect(app)
    await ann.hello("ann")
    await bob.hello("bob")
    code = await create(ann, bob)
    await ann.request({"type": "start_race"})
    await ann.expect("race_started")
    await bob.expect("race_started")
    for at in range(0, len(LINE), 64):  # at most 64 moves a message
        reply = await ann.request({"type": "move", "moves": list(LINE[at : at + 64])})
    assert reply["outcome"] == "won"
    await bob.request({"type": "resign"})
    expected = (await ann.expect("race_finished"))["ranking"]
    await app.stop()

    app = await App.start(make_config(tmp_path, db_url=database.url))  # the same database file
    try:
        back = await Client.connect(app)
        await back.hello(token=bob.token)
        assert (await back.request({"type": "join_race", "code": code.lower()}))["race"]["status"] == "finished"
        assert (await back.expect("race_finished"))["ranking"] == expected
        await back.close()
    finally:
        await app.stop()


async def test_lobbies_and_countdowns_survive_a_restart(tmp_path: Path, database: Database) -> None:
    config = make_config(tmp_path, db_url=database.url, countdown_s=30.0)
    app = await App.start(config)
    ann, bob, cat = [await Client.connect(app) for _ in range(3)]
    for client, name in ((ann, "ann"), (bob, "bob"), (cat, "cat")):
        await client.hello(name)
    lobby = await create(ann, bob)
    counting = await create(cat)
    assert (await cat.request({"type": "start_race"}))["type"] == "room"
    await cat.expect("countdown")
    await app.stop()
    for client in (ann, bob, cat):
        with pytest.raises(ConnectionClosed):
            await client.expect("never")
        assert client.ws.close_code == 1012

    app = await App.start(config)
    try:
        assert set(app.races.rooms) == {lobby, counting}
        ann2 = await Client.connect(app)
        await ann2.hello(token=ann.token)
        room = (await ann2.request({"type": "join_race", "code": lobby}))["race"]
        assert room["status"] == "lobby" and room["creator_id"] == ann.player["id"]  # type: ignore[index]
        assert [(p["name"], p["connected"]) for p in room["players"]] == [("ann", True), ("bob", False)]
        # The interrupted countdown is a lobby again: its creator starts it anew.
        cat2 = await Client.connect(app)
        await cat2.hello(token=cat.token)
        assert (await cat2.request({"type": "join_race", "code": counting}))["race"]["status"] == "lobby"
        # bob comes back too, and the race runs with both.
        bob2 = await Client.connect(app)
        await bob2.hello(token=bob.token)
        assert len((await bob2.request({"type": "join_race", "code": lobby}))["race"]["players"]) == 2
        for client in (ann2, bob2):
            await client.request({"type": "ready", "ready": True})
        for client in (ann2, bob2):
            await client.expect("countdown")
        for client in (ann2, bob2, cat2):
            await client.close()
    finally:
        await app.stop()


async def test_a_restored_lobby_lets_go_of_players_who_do_not_return(tmp_path: Path, database: Database) -> None:
    config = make_config(tmp_path, db_url=database.url, leave_grace_s=1.5)
    app = await App.start(config)
    ann, bob = await Client.connect(app), await Client.connect(app)
    await ann.hello("ann")
    await bob.hello("bob")
    lobby = await create(ann, bob)
    alone = await create(await await_hello(await Client.connect(app), "cat"))
    await app.stop()

    app = await App.start(config)
    try:
        back = await Client.connect(app)
        await back.hello(token=bob.token)
        await back.request({"type": "join_race", "code": lobby})
        # ann does not come back: after the grace period bob has the lobby, as its creator.
        room = await back.expect(lambda m: m.get("type") == "room" and len(m["race"]["players"]) == 1)
        assert room["race"]["creator_id"] == bob.player["id"]  # type: ignore[index]
        entries = "SELECT e.player_id FROM race_entries e JOIN races r ON r.id = e.race_id WHERE r.code = ?"
        assert await database.query(entries, lobby) == [
            (bob.player["id"],)  # type: ignore[index]
        ]
        for _ in range(200):  # bounded: nobody came back to cat's lobby, so it is deleted
            if not await database.query("SELECT id FROM races WHERE code = ?", alone):
                break
            await asyncio.sleep(0.05)
        assert await database.query("SELECT id FROM races WHERE code = ?", alone) == [] and alone not in app.races.rooms
        await back.close()
    finally:
        await app.stop()


async def test_a_race_whose_racers_were_all_done_closes_at_once_after_a_crash(database: Database) -> None:
    """The process dies between the last racer's final log entry and the results commit."""
    server = Server(database.path or database.url)
    server.start()
    racers: list[Client] = []
    try:
        for name in ("ann", "bob"):
            client = await connect(server)
            await client.hello(name)
            racers.append(client)
        ann, bob = racers
        code = await create(ann, bob)
        await ann.request({"type": "start_race"})
        await ann.expect("race_started")
        await bob.expect("race_started")
        assert (await ann.request({"type": "move", "moves": list(LINE[:5])}))["moves"] == 5
        # A real failure of the database holds the results back: the process dies before they commit.
        await database.fail_inserts("results", "hold", "held")
        assert (await ann.request({"type": "resign"}))["type"] == "progress"
        assert (await bob.request({"type": "resign"}))["type"] == "progress"
        server.kill()
    finally:
        for client in racers:
            client.ws.transport.abort()
    assert await database.query("SELECT status FROM races WHERE code = ?", code) == [("running",)]
    await database.drop_trigger("results", "hold")

    server.start()
    try:
        back = await connect(server)
        await back.hello(token=racers[0].token)
        room = await back.request({"type": "join_race", "code": code})
        assert room["race"]["status"] == "finished", room
        finished = await back.expect("race_finished")
        assert [(r["name"], r["outcome"], r["moves"]) for r in finished["ranking"]] == [
            ("ann", "resigned", 5), ("bob", "resigned", 0)
        ]
        results = "SELECT count(*) FROM results r JOIN races c ON c.id = r.race_id WHERE c.code = ?"
        assert await database.query(results, code) == [(2,)]
        await back.close()
    finally:
        server.stop()


async def test_a_lobby_survives_a_crash(database: Database) -> None:
    server = Server(database.path or database.url)
    server.start()
    ann = await connect(server)
    try:
        await ann.hello("ann")
        code = await create(ann)
        server.kill()
    finally:
        ann.ws.transport.abort()
    server.start()
    try:
        back = await connect(server)
        await back.hello(token=ann.token)
        room = await back.request({"type": "join_race", "code": code})
        assert room["type"] == "room" and room["race"]["status"] == "lobby"
        assert [p["name"] for p in room["race"]["players"]] == ["ann"]
        assert (await back.request({"type": "start_race"}))["type"] == "room"
        await back.close()
    finally:
        server.stop()
