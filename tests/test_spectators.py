"""Watching a live race through the real server: a spectator (no identity needed) sees the
race's standings as they change and its ranking, and never a board or a card. Tested like
the leak tests, by capturing every frame a spectator receives in races of every game."""

from __future__ import annotations

import asyncio
import random
import re
from pathlib import Path
from typing import Any

import pytest

from solitaire_race.app import App
from solitaire_race.engine import all_games, get_game, view_changes

from .conftest import ON_BOTH_DATABASES, TEST_SECRET, Client, make_config, progress_entries
from .databases import Database
from .support import winnable_deal

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


@ON_BOTH_DATABASES
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


@pytest.mark.parametrize("game_id", sorted(all_games()))
async def test_live_boards_show_spectators_every_board_as_it_is_played(
    app: App, clients: Any, game_id: str
) -> None:
    """A race made with live boards: every spectator's boards, from ``watching`` and each
    ``boards`` after it, are the racers' own views, move after move, to the end; whoever
    started watching when. Its results are kept, unranked."""
    game = get_game(game_id)
    ann, bob = await clients(f"ann-{game_id}"), await clients(f"bob-{game_id}")
    room = await ann.request({"type": "create_race", "game": game_id, "deal": 4, "live_boards": True})
    assert room["race"]["live_boards"] is True
    code = room["race"]["code"]
    await bob.request({"type": "join_race", "code": code})
    early = await clients()
    watching = await early.request({"type": "watch_race", "code": code})
    deal = game.deal(4, SECRET)
    ids = {m["name"]: m["id"] for m in watching["race"]["players"]}
    names = (f"ann-{game_id}", f"bob-{game_id}")
    assert watching["boards"] == [{"player_id": ids[n], "view": game.view(deal)} for n in names]
    boards = {0: {b["player_id"]: b["view"] for b in watching["boards"]}}  # what each spectator shows: 0 early, 1 late
    await ann.request({"type": "start_race"})
    for racer in (ann, bob):
        await racer.expect("race_started")

    states = {ids[f"ann-{game_id}"]: deal, ids[f"bob-{game_id}"]: deal}
    rng = random.Random(11)
    late = None
    for turn in range(16):  # the two take turns at random legal moves
        name, client = (f"ann-{game_id}", ann) if turn % 2 == 0 else (f"bob-{game_id}", bob)
        pid = ids[name]
        legal = game.legal_moves(states[pid])
        if not legal:
            continue
        move = rng.choice(legal)
        reply = await client.request({"type": "move", "moves": [game.format_move(move)]})
        if reply.get("type") != "move_result":
            continue  # that game is over (found stuck)
        states[pid] = game.apply(states[pid], move)
        if turn == 7:  # a second spectator, mid-race: the boards as they are
            late = await clients()
            later = await late.request({"type": "watch_race", "code": code})
            boards[1] = {b["player_id"]: b["view"] for b in later["boards"]}
    for client in (ann, bob):
        await client.request({"type": "resign"})
    assert late is not None
    for k, watcher in ((0, early), (1, late)):
        for frame in await frames_until(watcher, "race_finished"):
            if frame["type"] == "boards":
                for entry in frame["racers"]:
                    boards[k][entry["player_id"]] = view_changes.apply(boards[k][entry["player_id"]], entry["changes"])
        assert boards[k] == {pid: game.view(state) for pid, state in states.items()}, k

    # Unranked: kept (the replay, the recent races), on no board and in no statistics.
    replay = await early.request({"type": "replay", "code": code})
    assert replay["type"] == "replay_data" and len(replay["racers"]) == 2
    board = await early.request({"type": "leaderboard", "game": game_id, "board": "deal", "deal": 4})
    assert board["entries"] == []
    profile = await ann.request({"type": "profile"})
    assert [r["code"] for r in profile["recent"]] == [code]
    assert profile["games"] == [], profile


@ON_BOTH_DATABASES
async def test_live_boards_outlive_a_restart_and_pass_to_the_rematch(tmp_path: Path, database: Database) -> None:
    """The race's live boards are stored with it: a restart brings them back (the boards
    where the racer's durable moves left them), and its rematch shows boards too."""
    game = get_game("cruel")
    deal, line = winnable_deal("cruel", SECRET)
    config = make_config(tmp_path, db_url=database.url)
    app = await App.start(config)
    ann = await Client.connect(app)
    try:
        await ann.hello("ann")
        token = ann.token
        room = await ann.request({"type": "create_race", "game": "cruel", "deal": deal, "live_boards": True})
        code = room["race"]["code"]
        await ann.request({"type": "start_race"})
        await ann.expect("race_started")
        assert (await ann.request({"type": "move", "moves": list(line[:3])}))["applied"] == list(line[:3])
    finally:
        await ann.close()
        await app.stop()
    app = await App.start(config)
    watcher, ann = await Client.connect(app), await Client.connect(app)
    try:
        watching = await watcher.request({"type": "watch_race", "code": code})
        state = game.deal(deal, SECRET)
        for move in line[:3]:
            state = game.apply(state, game.parse_move(move))
        assert watching["race"]["live_boards"] is True and watching["boards"][0]["view"] == game.view(state)
        await ann.hello(token=token)
        assert (await ann.request({"type": "join_race", "code": code}))["type"] == "room"
        await ann.expect("race_started")
        await ann.request({"type": "resign"})
        await ann.expect("race_finished")
        rematch = await ann.request({"type": "rematch", "same_deal": True})
        assert rematch["type"] == "room" and rematch["race"]["live_boards"] is True
    finally:
        await watcher.close()
        await ann.close()
        await app.stop()


@ON_BOTH_DATABASES
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


@ON_BOTH_DATABASES
async def test_spectators_of_a_lobby_everyone_left_are_told(app: App, clients: Any) -> None:
    ann = await clients("ann")
    code = (await ann.request({"type": "create_race", "game": "cruel", "deal": 1}))["race"]["code"]
    watcher = await clients()
    assert (await watcher.request({"type": "watch_race", "code": code}))["type"] == "watching"
    assert (await ann.request({"type": "leave_race"}))["type"] == "left"
    told = await watcher.expect("room")
    assert told["race"]["status"] == "finished" and told["race"]["players"] == []
    assert code not in app.races.rooms
