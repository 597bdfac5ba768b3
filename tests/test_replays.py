"""Replays of finished races through the real server (websocket and HTTP), on SQLite and on
PostgreSQL: every game's replay ends where the racer's game ended, each step carries exactly
the view changes its move_result carried (so a hidden card shows only once turned up), at
the move's race time; and a daily still being played is replayed only to those who played it."""

from __future__ import annotations

import asyncio
import json
import random
import threading
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from solitaire_race.app import App
from solitaire_race.engine import all_games, get_game, view_changes

from .conftest import ON_BOTH_DATABASES, TEST_SECRET, Client, http_json, make_config
from .databases import Database
from .support import held_back_chooser
from .test_crash import Server, connect

pytestmark = ON_BOTH_DATABASES
SECRET = TEST_SECRET.encode()


async def random_game(
    client: Any, game_id: str, deal: int, moves: int, seed: int
) -> tuple[str, list[dict[str, Any]], Any]:
    """A solo race of random legal moves, one per message, then resigned (unless over): its
    code, the move_results received, and the final state."""
    game = get_game(game_id)
    room = await client.request({"type": "create_race", "game": game_id, "deal": deal})
    assert room["type"] == "room", room
    await client.request({"type": "start_race"})
    await client.expect("race_started")
    state, rng, replies = game.deal(deal, SECRET), random.Random(seed), []
    for _ in range(moves):
        legal = game.legal_moves(state)
        if not legal:
            break
        move = rng.choice(legal)
        reply = await client.request({"type": "move", "moves": [game.format_move(move)]})
        if reply.get("code") in ("race_not_running", "game_over"):
            break  # the search found the game stuck after the last move: the (solo) race is over
        assert reply.get("applied"), reply
        replies.append(reply)
        state = game.apply(state, move)
        if reply["outcome"] != "playing":
            break
    else:
        await client.request({"type": "resign"})
    await client.expect("race_finished")
    return room["race"]["code"], replies, state


@pytest.mark.parametrize("game_id", sorted(all_games()))
async def test_every_games_replay_is_what_the_racer_saw(app: App, clients: Any, game_id: str) -> None:
    ann = await clients(f"ann-{game_id}")
    race_code, replies, final = await random_game(ann, game_id, deal=5, moves=25, seed=3)

    stranger = await clients()  # anyone may watch a finished race, identified or not
    typed = f"{race_code[:3].lower()}-{race_code[3:].lower()}"  # as a player may type it, as for join_race
    replay = await stranger.request({"type": "replay", "code": typed})
    assert replay["type"] == "replay_data" and replay["game"] == game_id and replay["deal"] == 5
    (racer,) = replay["racers"]
    game = get_game(game_id)
    assert racer["view"] == game.view(game.deal(5, SECRET)) and racer["timed"] is True
    assert [s["move"] for s in racer["steps"]] == [r["applied"][0] for r in replies]
    # each step: the changes and the race time of its move_result, exactly
    assert [s["changes"] for s in racer["steps"]] == [r["changes"] for r in replies]
    assert [s["at_ms"] for s in racer["steps"]] == [r["elapsed_ms"] for r in replies]
    view = racer["view"]
    for step in racer["steps"]:
        view = view_changes.apply(view, step["changes"])
    assert view == game.view(final)
    assert racer["home"] == game.progress(final).home and racer["moves"] == len(replies)

    status, body = await http_json(app, f"/api/replays/{typed}")  # as typed too: case and separators ignored
    assert status == 200 and body == {k: v for k, v in replay.items() if k not in ("type", "id")}


async def test_a_daily_being_played_is_replayed_only_to_who_played_it(app: App, clients: Any) -> None:
    ann, bob, cat = await clients("ann"), await clients("bob"), await clients("cat")
    started = await ann.request({"type": "start_daily", "game": "cruel"})
    cruel = get_game("cruel")
    first = cruel.legal_moves(cruel.deal(started["deal"], SECRET))[0]
    assert (await ann.request({"type": "move", "moves": [cruel.format_move(first)]}))["applied"]
    await ann.request({"type": "resign"})
    finished = await ann.expect("race_finished")
    code = finished["code"]

    refused = await bob.request({"type": "replay", "code": code})
    assert (refused["type"], refused["code"]) == ("error", "not_allowed") and "still being played" in refused["message"]
    status, body = await http_json(app, f"/api/replays/{code}")
    assert status == 400 and body["error"]["code"] == "not_allowed"
    assert (await ann.request({"type": "replay", "code": code}))["type"] == "replay_data"  # her own

    # cat's own ranked attempt: while it runs, ann's replay would be its solution; once over, she may watch
    await cat.request({"type": "start_daily", "game": "cruel"})
    running = await cat.request({"type": "replay", "code": code})
    assert running["code"] == "not_allowed"
    await cat.request({"type": "resign"})
    await cat.expect("race_finished")
    # a page beside the app asks with cat's token, on a connection that said no hello: no takeover
    page = await clients()
    by_token = await page.request({"type": "replay", "code": code, "token": cat.token})
    assert by_token["type"] == "replay_data"
    assert (await page.request({"type": "replay", "code": code, "token": "nobody"}))["code"] == "bad_token"
    allowed = await cat.request({"type": "replay", "code": code})
    assert allowed["type"] == "replay_data" and allowed["daily_date"] == started["daily"]["date"]
    assert [s["move"] for s in allowed["racers"][0]["steps"]] != [] and allowed["racers"][0]["outcome"] == "resigned"


async def test_only_finished_races_are_replayed(app: App, clients: Any) -> None:
    ann = await clients("ann")
    room = await ann.request({"type": "create_race", "game": "cruel", "deal": 1})
    code = room["race"]["code"]
    for asked in (code, "BCDFGH"):
        reply = await ann.request({"type": "replay", "code": asked})
        assert reply["type"] == "error" and reply["code"] == "not_found", reply
    assert (await http_json(app, f"/api/replays/{code}"))[0] == 404
    assert (await http_json(app, "/api/replays/1234"))[0] == 404  # not a code at all
    bad = await ann.request({"type": "replay", "code": ""})
    assert bad["code"] == "bad_message"


async def test_the_daily_par_line_is_replayed_once_the_ranked_attempt_is_made(
    tmp_path: Path, database: Database
) -> None:
    gate = asyncio.Event()
    gate.set()
    app = await App.start(make_config(tmp_path, db_url=database.url), choose_daily=held_back_chooser(SECRET, gate))
    try:
        bob = await Client.connect(app)
        await bob.hello("bob")
        today = app.gateway.queries.today().isoformat()
        challenge = (await bob.request({"type": "daily"}))["challenges"]
        par = next(c["par"] for c in challenge if c["game"] == "clock")
        ask = {"type": "par_line", "game": "clock", "date": today}
        refused = await bob.request(ask)
        assert refused["code"] == "not_allowed" and "ranked attempt" in refused["message"]
        status, body = await http_json(app, f"/api/replays/par/clock/{today}")
        assert status == 400 and body["error"]["code"] == "not_allowed"  # nobody is identified over HTTP

        await bob.request({"type": "start_daily", "game": "clock"})
        assert (await bob.request(ask))["code"] == "not_allowed"  # not while the attempt runs
        await bob.request({"type": "resign"})
        await bob.expect("race_finished")
        line = await bob.request(ask)
        assert line["type"] == "replay_data" and line["code"] is None and line["daily_date"] == today
        (racer,) = line["racers"]
        assert (racer["name"], racer["player_id"], racer["timed"], racer["moves"]) == ("par", 0, False, par)
        game = get_game("clock")
        view = racer["view"]
        for step in racer["steps"]:
            view = view_changes.apply(view, step["changes"])
        final = game.deal(line["deal"], SECRET)
        for step in racer["steps"]:
            final = game.apply(final, game.parse_move(step["move"]))
        assert game.is_won(final) and view == game.view(final)  # the par line wins, in par moves
        none = await bob.request({"type": "par_line", "game": "cruel", "date": today})
        assert none["code"] == "not_found"  # its first candidate, chosen without the solver: no line kept
        await bob.close()
    finally:
        await app.stop()



async def test_a_race_of_racers_at_the_move_bound_is_replayed_and_raced_as_a_ghost(database: Database) -> None:
    """A race can hold tens of thousands of moves: eight racers of 5,000 moves each, the most
    a racer may make (Persian Patience's 3>6 and 6>3 undo each other, 64 to a message); the
    5,001st is refused. Its replay and a ghost of it are rebuilt move by move by the engine,
    in a worker thread (next test), while a real ``serve`` process goes on answering everyone
    else: the longest ping wait meanwhile is printed (it was 1.5 s for 64,000 moves when the
    engine's work ran on the event loop; a timing is not asserted on a shared machine)."""
    server = Server(database.url, "--rate-limit", "0")
    server.start()
    try:
        racers = [await connect(server) for _ in range(8)]
        bob = await connect(server)
        for i, racer in enumerate(racers):
            await racer.hello(f"racer{i}")
        await bob.hello("bob")
        ann = racers[0]
        room = await ann.request({"type": "create_race", "game": "persian-patience", "deal": 0})
        code = room["race"]["code"]
        for racer in racers[1:]:
            assert (await racer.request({"type": "join_race", "code": code}))["type"] == "room"
        await ann.request({"type": "start_race"})
        for racer in racers:
            await racer.expect("race_started")

        async def shuffle(racer: Any) -> None:  # 5,000 moves: 3>6, then 78 x 64, then 7 more
            assert (await racer.request({"type": "move", "moves": ["3>6"]}))["applied"] == ["3>6"]
            for moves in [["6>3", "3>6"] * 32] * 78 + [["6>3", "3>6"] * 3 + ["6>3"]]:
                reply = await racer.request({"type": "move", "moves": moves})
                assert reply["rejected"] is None, reply
            refused = await racer.request({"type": "move", "moves": ["3>6"]})
            assert refused["type"] == "error" and refused["code"] == "not_allowed", refused

        await asyncio.gather(*(shuffle(racer) for racer in racers))
        for racer in racers:
            await racer.request({"type": "resign"})
        await ann.expect("race_finished", timeout=30)
        await ann.request({"type": "leave_race"})

        waits: list[float] = []
        stop = asyncio.Event()

        async def ping() -> None:
            loop = asyncio.get_running_loop()
            while not stop.is_set():
                asked = loop.time()
                assert (await bob.request({"type": "ping"}))["type"] == "pong"
                waits.append(loop.time() - asked)
                await asyncio.sleep(0.005)

        def get(path: str) -> tuple[int, Any]:
            base = server.url.replace("ws://", "http://").removesuffix("/ws")
            with urllib.request.urlopen(base + path, timeout=30) as response:
                return response.status, json.loads(response.read())

        pinging = asyncio.create_task(ping())
        await asyncio.sleep(0.1)
        status, replay = await asyncio.to_thread(get, f"/api/replays/{code}")
        assert status == 200 and [r["moves"] for r in replay["racers"]] == [5_000] * 8
        assert ann.player is not None
        ghost = await ann.request({"type": "race_ghost", "code": code, "player_id": ann.player["id"]})
        assert ghost["type"] == "room", ghost
        await asyncio.sleep(0.1)
        stop.set()
        await pinging
        print(f"the longest ping wait while a 40,000-move race was replayed: {max(waits):.3f} s")
        for racer in (*racers, bob):
            await racer.close()
    finally:
        server.stop()


async def test_replays_and_ghosts_are_rebuilt_off_the_event_loop(
    app: App, clients: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The engine's work on a whole finished race (up to 8 racers of 5,000 moves) runs in a
    worker thread, never on the event loop's thread: the loop keeps serving everyone."""
    from solitaire_race import ghosts, replays

    threads: list[int] = []
    real_build, real_homes = replays.build, ghosts._homes

    def build(*args: Any) -> Any:  # the real function, noting the thread it runs on
        threads.append(threading.get_ident())
        return real_build(*args)

    def homes(*args: Any) -> Any:
        threads.append(threading.get_ident())
        return real_homes(*args)

    monkeypatch.setattr(replays, "build", build)  # the module queries.py calls it from
    monkeypatch.setattr(ghosts, "_homes", homes)
    ann = await clients("ann")
    code, _, _ = await random_game(ann, "cruel", deal=5, moves=10, seed=3)
    assert (await ann.request({"type": "replay", "code": code}))["type"] == "replay_data"
    assert ann.player is not None
    ghost = await ann.request({"type": "race_ghost", "code": code, "player_id": ann.player["id"]})
    assert ghost["type"] == "room", ghost
    assert len(threads) == 2 and threading.get_ident() not in threads  # the loop runs on this test's thread
