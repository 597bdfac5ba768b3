"""Whole races through the real server: real websockets on 127.0.0.1, a real database
(each test on a SQLite file and on a PostgreSQL database: ``ON_BOTH_DATABASES``)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from websockets.exceptions import ConnectionClosed

from solitaire_race.app import App
from solitaire_race.engine import Outcome, get_game, view_changes
from solitaire_race.races import CODE_ALPHABET

from .conftest import ON_BOTH_DATABASES, TEST_SECRET, Client, http_get, make_config
from .databases import Database
from .support import searched_line, winnable_deal

GAME = "cruel"
DEAL, LINE = winnable_deal(GAME, TEST_SECRET.encode())


pytestmark = ON_BOTH_DATABASES


async def make_race(host: Client, *guests: Client, deal: int = DEAL, game: str = GAME) -> str:
    room = await host.request({"type": "create_race", "game": game, "deal": deal, "private": True})
    assert room["type"] == "room", room
    code = room["race"]["code"]
    for guest in guests:
        joined = await guest.request({"type": "join_race", "code": code})
        assert joined["type"] == "room", joined
    return code


async def start(host: Client, *everyone: Client) -> list[dict[str, Any]]:
    reply = await host.request({"type": "start_race"})
    assert reply["type"] in ("room", "countdown"), reply
    return [await c.expect("race_started") for c in (host, *everyone)]


async def play(client: Client, moves: list[str]) -> dict[str, Any]:
    return await client.request({"type": "move", "moves": moves})


async def test_http_health_and_client_on_the_same_port(app: App) -> None:
    assert await http_get(app, "/healthz") == (200, "text/plain; charset=utf-8", "ok\n")
    status, kind, body = await http_get(app, "/")
    assert status == 200 and kind.startswith("text/html") and "<title>Solitaire Race" in body
    status, _, body = await http_get(app, "/join/BCDFGH")
    assert status == 200 and "<title>Solitaire Race" in body
    assert (await http_get(app, "/../pyproject.toml"))[0] == 404
    assert (await http_get(app, "/nope.js"))[0] == 404


async def test_identity_token_is_secret_and_hashed(app: App, clients: Any, database: Database) -> None:
    ann = await clients("ann")
    assert ann.token and len(ann.token) >= 22  # ≥128 bits of randomness, url-safe
    stored = await database.query("SELECT name, token_hash FROM players")
    assert stored == [("ann", stored[0][1])] and ann.token not in stored[0][1]
    again = await clients()
    welcome = await again.hello(token=ann.token)
    assert welcome["type"] == "welcome" and welcome["player"] == ann.player and "token" not in welcome


async def test_nobody_can_act_as_another_player(app: App, clients: Any) -> None:
    await clients("ann")
    impostor = await clients()
    for name in ("ann", "ANN"):
        reply = await impostor.hello(name)
        assert reply["type"] == "error" and reply["code"] == "name_taken"
    reply = await impostor.hello(token="x" * 43)
    assert reply["type"] == "error" and reply["code"] == "bad_token"
    reply = await impostor.request({"type": "create_race", "game": GAME})
    assert reply["code"] == "not_identified"


async def test_join_code_link_and_wrong_code(app: App, clients: Any) -> None:
    ann, bob = await clients("ann"), await clients("bob")
    room = (await ann.request({"type": "create_race", "game": GAME, "private": True}))["race"]
    assert re.fullmatch(f"[{CODE_ALPHABET}]{{6}}", room["code"])
    assert room["link"] == f"{app.config.public_url}/join/{room['code']}"
    assert room["players"] == [{"id": ann.player["id"], "name": "ann", "ready": False, "connected": True}]
    wrong = "".join(CODE_ALPHABET[(CODE_ALPHABET.index(ch) + 1) % len(CODE_ALPHABET)] for ch in room["code"])
    reply = await bob.request({"type": "join_race", "code": wrong})
    assert reply["type"] == "error" and reply["code"] == "no_such_race"
    joined = await bob.request({"type": "join_race", "code": room["code"].lower()})
    assert [p["name"] for p in joined["race"]["players"]] == ["ann", "bob"]
    seen_by_ann = await ann.expect(lambda m: m["type"] == "room" and len(m["race"]["players"]) == 2)
    assert seen_by_ann["race"]["code"] == room["code"]


async def test_two_players_race_to_the_finish(app: App, clients: Any, database: Database) -> None:
    ann, bob = await clients("ann"), await clients("bob")
    code = await make_race(ann, bob)
    refused = await bob.request({"type": "start_race"})
    assert refused["code"] == "not_creator"
    started = await start(ann, bob)
    assert started[0]["view"] == started[1]["view"]
    game = get_game(GAME)
    assert started[0]["view"] == game.view(game.deal(DEAL, TEST_SECRET.encode()))

    # An illegal move: refused with the engine's reason, nothing changes.
    bad = await play(bob, ["1>1"])
    assert bad["applied"] == [] and bad["rejected"]["code"] == "illegal_move"
    assert bad["rejected"]["reason"] == "a pile cannot be moved onto itself"
    assert bad["changes"] == [] and bad["moves"] == 0

    # Legal moves: applied, and the opponent sees the progress (not the cards).
    first = await play(ann, list(LINE[:10]))
    assert first["applied"] == list(LINE[:10]) and first["rejected"] is None
    progress = await bob.expect_progress(lambda r: r["moves"] == 10)
    assert progress["player_id"] == ann.player["id"] and progress["home"] == first["progress"]["home"]
    assert "view" not in progress

    rest = await play(ann, list(LINE[10:]))
    assert rest["outcome"] == "won" and rest["progress"]["home"] == 52
    assert (await bob.expect_progress(lambda r: r["outcome"] == "won"))["time_ms"] is not None

    after = await play(ann, ["1>f"])
    assert after["code"] == "game_over"

    await bob.request({"type": "resign"})
    finished = [await c.expect("race_finished") for c in (ann, bob)]
    ranking = finished[0]["ranking"]
    assert (
        finished[0] == finished[1] | {"id": finished[0].get("id")} or finished[0]["ranking"] == finished[1]["ranking"]
    )
    assert [(r["name"], r["rank"], r["outcome"]) for r in ranking] == [("ann", 1, "won"), ("bob", 2, "resigned")]

    # The results were in the database when the finish was announced.
    rows = await database.query(
        "SELECT p.name, r.rank, r.outcome, r.moves, r.time_ms, r.move_log FROM results r "
        "JOIN players p ON p.id = r.player_id JOIN races c ON c.id = r.race_id WHERE c.code = ? ORDER BY r.rank",
        code,
    )
    assert [(n, rk, o, m) for n, rk, o, m, _, _ in rows] == [("ann", 1, "won", len(LINE)), ("bob", 2, "resigned", 0)]
    assert rows[0][4] == ranking[0]["time_ms"] and rows[0][5].split("\n") == list(LINE)
    race = await database.query("SELECT status, game, deal_number FROM races WHERE code = ?", code)
    assert race == [("finished", GAME, DEAL)]


async def test_a_stuck_game_is_found_after_its_move_is_answered(app: App, clients: Any) -> None:
    """A position that only a search decides: the move is answered at once ("playing"),
    the search runs off the move path, and everyone then gets the racer's `progress`."""
    ann, bob = await clients("ann"), await clients("bob")
    await make_race(ann, bob)
    await start(ann, bob)
    line = searched_line(GAME, TEST_SECRET.encode(), DEAL, Outcome.STUCK)
    reply = await play(ann, line)
    assert reply["applied"] == line and reply["outcome"] == "playing"
    for client in (ann, bob):
        found = await client.expect(lambda m: m["type"] == "progress" and m["player_id"] == ann.player["id"])
        assert (found["outcome"], found["moves"]) == ("stuck", len(line)) and found["time_ms"] == reply["elapsed_ms"]
    assert (await play(ann, [line[0]]))["code"] == "game_over"
    await bob.request({"type": "resign"})
    finished = await ann.expect("race_finished")
    assert [(r["name"], r["outcome"]) for r in finished["ranking"]] == [("ann", "stuck"), ("bob", "resigned")]


async def test_eight_players_receive_identical_layouts(app: App, clients: Any) -> None:
    players = [await clients(f"p{i}") for i in range(8)]
    await make_race(players[0], *players[1:], game="clock", deal=12345)
    started = await start(players[0], *players[1:])
    views = [s["view"] for s in started]
    assert all(v == views[0] for v in views)
    assert all(p["face_down"] == 4 for p in views[0]["piles"])  # hidden cards stay hidden
    assert len(started[0]["opponents"]) == 7


async def test_all_ready_starts_the_race(app: App, clients: Any) -> None:
    ann, bob = await clients("ann"), await clients("bob")
    await make_race(ann, bob)
    await ann.request({"type": "ready", "ready": True})
    await bob.request({"type": "ready", "ready": True})
    countdown = await ann.expect("countdown")
    assert countdown["starts_in_ms"] == 50
    assert (await ann.expect("race_started"))["view"] == (await bob.expect("race_started"))["view"]


async def test_moves_for_a_race_you_are_not_in(app: App, clients: Any) -> None:
    ann, bob, eve = await clients("ann"), await clients("bob"), await clients("eve")
    code = await make_race(ann, bob)
    await start(ann, bob)
    late = await eve.request({"type": "join_race", "code": code})
    assert late["code"] == "race_started"
    reply = await play(eve, [LINE[0]])
    assert reply["code"] == "not_in_race"


async def test_a_takeover_gets_the_whole_view_in_its_first_move_result(app: App, clients: Any) -> None:
    """A new connection that takes a race over may not have the replies the old one got:
    its first move_result's changes are every field whole, so they fit any view."""
    game = get_game(GAME)
    ann, bob = await clients("ann"), await clients("bob")
    await make_race(ann, bob)
    await start(ann, bob)
    await play(ann, list(LINE[:3]))
    phone = await clients()
    assert (await phone.hello(token=ann.token))["type"] == "welcome"  # no join_race
    reply = await play(phone, [LINE[3]])
    assert reply["type"] == "move_result" and {len(change) for change in reply["changes"]} == {2}
    state = game.deal(DEAL, TEST_SECRET.encode())
    for text in LINE[:4]:
        state = game.apply(state, game.parse_move(text))
    assert view_changes.apply({}, reply["changes"]) == game.view(state)
    assert len((await play(phone, [LINE[4]]))["changes"]) < len(game.view(state))  # then compact again


async def test_reconnect_with_token_resumes_the_game(app: App, clients: Any) -> None:
    ann, bob = await clients("ann"), await clients("bob")
    code = await make_race(ann, bob)
    first = (await start(ann, bob))[0]["view"]
    before = await play(ann, list(LINE[:5]))
    await ann.close()
    away = await bob.expect(lambda m: m["type"] == "room" and not m["race"]["players"][0]["connected"])
    assert away["race"]["status"] == "running"
    back = await clients()
    await back.hello(token=ann.token)
    resumed = await back.request({"type": "join_race", "code": code})
    started = await back.expect("race_started")
    assert started["view"] == view_changes.apply(first, before["changes"])
    assert resumed["type"] == "room" and started["moves"] == 5


async def test_newer_connection_replaces_the_older(app: App, clients: Any) -> None:
    ann = await clients("ann")
    second = await clients()
    await second.hello(token=ann.token)
    notice = await ann.expect("error")
    assert notice["code"] == "replaced"
    with pytest.raises(ConnectionClosed):
        await ann.expect("never")
    assert ann.ws.close_code == 4001
    assert (await second.request({"type": "ping"}))["type"] == "pong"


async def test_graceful_restart_resumes_running_races(tmp_path: Path, database: Database) -> None:
    app = await App.start(make_config(tmp_path, db_url=database.url))
    ann, bob = await Client.connect(app), await Client.connect(app)
    await ann.hello("ann")
    await bob.hello("bob")
    code = await make_race(ann, bob)
    first = (await start(ann, bob))[0]["view"]
    before = await play(ann, list(LINE[:7]))
    await app.stop()
    with pytest.raises(ConnectionClosed):
        await ann.expect("never")
    assert ann.ws.close_code == 1012 and "reconnect" in (ann.ws.close_reason or "")
    assert await database.query("SELECT status FROM races WHERE code = ?", code) == [("running",)]

    app = await App.start(make_config(tmp_path, db_url=database.url))  # same database file
    back = await Client.connect(app)
    try:
        await back.hello(token=ann.token)
        await back.request({"type": "join_race", "code": code})
        resumed = await back.expect("race_started")
        assert resumed["view"] == view_changes.apply(first, before["changes"]) and resumed["moves"] == 7
        assert resumed["elapsed_ms"] >= before["elapsed_ms"]  # the race clock kept running
        rest = await play(back, list(LINE[7:40]))
        assert rest["applied"] == list(LINE[7:40])
        won = await play(back, list(LINE[40:]))
        assert won["outcome"] == "won"
    finally:
        await back.close()
        await app.stop()
    rows = await database.query(
        "SELECT r.outcome FROM results r JOIN races c ON c.id = r.race_id WHERE c.code = ?", code
    )
    assert rows == []  # bob has not finished: the race is still running, no results yet
    logged = await database.query(
        "SELECT count(*) FROM move_log m JOIN races c ON c.id = m.race_id WHERE c.code = ?", code
    )
    assert logged == [(len(LINE),)]  # every move once: nothing lost, nothing duplicated


async def test_a_move_whose_log_write_fails_is_not_acknowledged_and_is_logged_with_the_next(
    tmp_path: Path, database: Database
) -> None:
    app = await App.start(make_config(tmp_path, db_url=database.url))
    ann = await Client.connect(app)
    await ann.hello("ann")
    code = await make_race(ann)
    await start(ann)
    assert (await play(ann, list(LINE[:3])))["applied"] == list(LINE[:3])
    await database.fail_inserts("move_log", "full_disk", "disk full")  # a real failure: every append aborts
    failed = await play(ann, [LINE[3]])
    assert failed["type"] == "error" and failed["code"] == "internal_error"
    await database.drop_trigger("move_log", "full_disk")
    after = await play(ann, [LINE[4]])
    assert after["applied"] == [LINE[4]] and after["moves"] == 5  # the room kept the failed move
    assert any(change[0] == "game" for change in after["changes"])  # the whole view: the client missed one
    seqs = "SELECT m.seq FROM move_log m JOIN races c ON c.id = m.race_id WHERE c.code = ? ORDER BY m.id"
    assert await database.query(seqs, code) == [(0,), (1,), (2,), (3,), (4,)]  # went again, first, with the next move
    await app.stop()

    app = await App.start(make_config(tmp_path, db_url=database.url))  # so the log replays: the race resumes
    back = await Client.connect(app)
    try:
        await back.hello(token=ann.token)
        await back.request({"type": "join_race", "code": code})
        resumed = await back.expect("race_started")
        assert resumed["moves"] == 5
        assert (await play(back, [LINE[5]]))["applied"] == [LINE[5]]
    finally:
        await back.close()
        await app.stop()


async def test_abandoned_lobby_is_removed(app: App, clients: Any, database: Database) -> None:
    ann = await clients("ann")
    code = await make_race(ann)
    assert await database.query("SELECT status FROM races WHERE code = ?", code) == [("open",)]
    assert (await ann.request({"type": "leave_race"}))["type"] == "left"
    assert await database.query("SELECT status FROM races WHERE code = ?", code) == []
    again = await ann.request({"type": "join_race", "code": code})
    assert again["code"] == "no_such_race"


async def test_disconnected_racer_is_left_after_the_configured_grace(tmp_path: Path, database: Database) -> None:
    app = await App.start(make_config(tmp_path, db_url=database.url, leave_grace_s=0.2))
    ann, bob = await Client.connect(app), await Client.connect(app)
    try:
        await ann.hello("ann")
        await bob.hello("bob")
        await make_race(ann, bob)
        await start(ann, bob)
        await play(ann, list(LINE[:40]))
        assert (await play(ann, list(LINE[40:])))["outcome"] == "won"
        await bob.close()  # bob vanishes mid-race; the room must not wait 30 minutes
        finished = await ann.expect("race_finished")
        assert [(r["name"], r["outcome"]) for r in finished["ranking"]] == [("ann", "won"), ("bob", "left")]
    finally:
        await ann.close()
        await app.stop()


async def test_a_race_that_cannot_resume_is_closed_and_the_others_resume(tmp_path: Path, database: Database) -> None:
    """A running race whose log does not replay (here an illegal move written into it) is
    closed without results at the next start, and logged; the server starts, and the other
    race resumes where it was."""
    app = await App.start(make_config(tmp_path, db_url=database.url))
    ann, bob = await Client.connect(app), await Client.connect(app)
    await ann.hello("ann")
    await bob.hello("bob")
    good = await make_race(ann)
    await start(ann)
    await play(ann, list(LINE[:5]))
    bad = await make_race(bob)
    await start(bob)
    await play(bob, list(LINE[:3]))
    await app.stop()
    await database.query(  # the log of bob's race, corrupted
        "UPDATE move_log SET text = '9>9' WHERE seq = 1 AND race_id = (SELECT id FROM races WHERE code = ?)", bad
    )

    app = await App.start(make_config(tmp_path, db_url=database.url))
    back = await Client.connect(app)
    try:
        races = await database.query("SELECT code, status FROM races ORDER BY id")
        assert races == [(good, "running"), (bad, "finished")]
        assert await database.query("SELECT count(*) FROM results") == [(0,)]
        await back.hello(token=ann.token)
        await back.request({"type": "join_race", "code": good})
        assert (await back.expect("race_started"))["moves"] == 5
        gone = await back.request({"type": "join_race", "code": bad})
        assert gone["code"] == "no_such_race"
    finally:
        await back.close()
        await app.stop()
