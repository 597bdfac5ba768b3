"""The protocol's documentation is checked against reality.

- docs/protocol.schema.json validates every frame of a whole race played by real clients
  against the real server (in both directions), and every message type it defines must occur
  in that race, so the schema cannot drift from what the server really sends and accepts;
- the schema accepts and refuses the same client frames as the server's decoder;
- every JSON example in docs/protocol.md is valid, and every error code is documented.
"""

from __future__ import annotations

import json
import random
import re
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator
from websockets.exceptions import ConnectionClosed

from solitaire_race import protocol
from solitaire_race.app import App
from solitaire_race.engine import all_games, view_changes

from .conftest import TEST_SECRET, TRAFFIC
from .support import winnable_deal

DOCS = Path(__file__).resolve().parents[1] / "docs"
SCHEMA = json.loads((DOCS / "protocol.schema.json").read_text(encoding="utf-8"))
PROTOCOL_MD = (DOCS / "protocol.md").read_text(encoding="utf-8")

GAME = "cruel"
DEAL, LINE = winnable_deal(GAME, TEST_SECRET.encode())


def validator(definition: str) -> Draft202012Validator:
    schema = {"$schema": SCHEMA["$schema"], "$defs": SCHEMA["$defs"], "$ref": f"#/$defs/{definition}"}
    Draft202012Validator.check_schema(schema)
    return Draft202012Validator(schema)


CLIENT = validator("ClientMessage")
SERVER = validator("ServerMessage")


def message_definitions(union: str) -> dict[str, str]:
    """Message type -> the name of its definition, for every member of a union."""
    out = {}
    for member in SCHEMA["$defs"][union]["oneOf"]:
        name = member["$ref"].rsplit("/", 1)[1]
        out[SCHEMA["$defs"][name]["properties"]["type"]["const"]] = name
    return out


CLIENT_TYPES = message_definitions("ClientMessage")
SERVER_TYPES = message_definitions("ServerMessage")


def problems(union: str, message: Any) -> list[str]:
    """Why ``message`` is not a valid ``union`` message (empty if it is), precisely."""
    whole = CLIENT if union == "ClientMessage" else SERVER
    if whole.is_valid(message):
        return []
    types = CLIENT_TYPES if union == "ClientMessage" else SERVER_TYPES
    kind = message.get("type") if isinstance(message, dict) else None
    if kind not in types:
        return [f"not a {union} type: {kind!r}"]
    errors = validator(types[kind]).iter_errors(message)
    return [f"{'/'.join(map(str, e.absolute_path)) or '(root)'}: {e.message}" for e in errors] or ["invalid"]


# --- a whole race, every message type --------------------------------------------------


async def test_every_frame_of_a_whole_race_matches_the_schema(app: App, clients: Any) -> None:
    first = len(TRAFFIC)
    errors_seen: set[str] = set()

    async def refused(client: Any, message: dict[str, Any], code: str) -> dict[str, Any]:
        reply = await client.request(message)
        assert reply["type"] == "error" and reply["code"] == code, reply
        errors_seen.add(code)
        return reply

    # Before hello: ping and list_games are served, anything else is refused.
    ann = await clients()
    assert (await ann.request({"type": "ping"}))["type"] == "pong"
    games = await ann.request({"type": "list_games"})
    assert games["type"] == "games" and GAME in {g["id"] for g in games["games"]}
    await refused(ann, {"type": "list_races"}, "not_identified")

    # Identity: a name gives a token once; names are unique ignoring case.
    welcome = await ann.hello("ann")
    assert welcome["type"] == "welcome" and welcome["token"] and welcome["player"]["name"] == "ann"
    await refused(ann, {"type": "hello", "name": "ann"}, "already_identified")
    bob = await clients("bob")
    carol = await clients()
    await refused(carol, {"type": "hello", "name": "ANN"}, "name_taken")
    await refused(carol, {"type": "hello", "token": "not-a-token"}, "bad_token")
    await refused(carol, {"type": "hello"}, "bad_message")  # valid shape, but no name or token
    assert (await carol.hello("carol"))["type"] == "welcome"

    # Ids: strings and integers are echoed; null is the same as no id.
    await carol.send({"type": "ping", "id": "ping-1"})
    assert await carol.expect("pong") == {"type": "pong", "id": "ping-1"}
    await carol.send({"type": "ping", "id": None})
    assert await carol.expect("pong") == {"type": "pong"}

    # A public race: listed, joined, left.
    await refused(ann, {"type": "create_race", "game": "chess"}, "unknown_game")
    await refused(ann, {"type": "start_race"}, "not_in_race")
    created = await ann.request(
        {"type": "create_race", "game": GAME, "deal": DEAL, "private": False, "time_limit_s": 600, "best_of": 3}
    )
    assert created["type"] == "room" and created["race"]["status"] == "lobby"
    code = created["race"]["code"]
    await refused(ann, {"type": "create_race", "game": GAME}, "already_in_race")
    races = await bob.request({"type": "list_races"})
    assert races["type"] == "races" and code in {r["code"] for r in races["races"]}
    assert (await bob.request({"type": "join_race", "code": code}))["type"] == "room"
    assert (await carol.request({"type": "join_race", "code": code.lower()}))["type"] == "room"
    await refused(bob, {"type": "move", "moves": ["1>f"]}, "race_not_running")
    left = await carol.request({"type": "leave_race"})
    assert left["type"] == "left" and left["code"] == code
    await refused(carol, {"type": "join_race", "code": "BCDFGH" if code != "BCDFGH" else "CDFGHJ"}, "no_such_race")

    # A spectator: no identity needed, the race as everyone sees it.
    spectator = await clients()
    watching = await spectator.request({"type": "watch_race", "code": code})
    assert watching["type"] == "watching" and watching["race"]["code"] == code

    # Ready, start (only the creator may), countdown, race_started with each racer's view.
    ready = await ann.request({"type": "ready", "ready": True})
    assert ready["type"] == "room" and ready["race"]["players"][0]["ready"] is True
    await refused(bob, {"type": "start_race"}, "not_creator")
    assert (await ann.request({"type": "start_race"}))["type"] == "room"
    assert (await ann.expect("countdown"))["code"] == code
    started = [await c.expect("race_started") for c in (ann, bob)]
    assert started[0]["view"] == started[1]["view"] and started[0]["view"]["game"] == GAME
    await refused(carol, {"type": "join_race", "code": code}, "race_started")

    # Moves: illegal and bad notation are refused inside move_result; legal ones applied.
    bad = await bob.request({"type": "move", "moves": ["1>1"]})
    assert bad["type"] == "move_result" and bad["applied"] == [] and bad["rejected"]["code"] == "illegal_move"
    worse = await bob.request({"type": "move", "moves": ["hello"]})
    assert worse["rejected"]["code"] == "bad_notation"
    played = await ann.request({"type": "move", "moves": list(LINE[:10])})
    assert played["applied"] == list(LINE[:10]) and played["rejected"] is None
    seen = await bob.expect_progress(lambda r: r["moves"] == 10)
    assert seen["player_id"] == ann.player["id"] and seen["time_ms"] is None

    # A newer connection replaces the older one, then resumes the race where it was.
    phone = await clients()
    again = await phone.hello(token=ann.token)
    assert again["type"] == "welcome" and "token" not in again
    notice = await ann.expect("error")
    assert notice["code"] == "replaced" and "id" not in notice
    errors_seen.add("replaced")
    with pytest.raises(ConnectionClosed):
        await ann.expect("never")
    assert ann.ws.close_code == 4001
    assert (await phone.request({"type": "join_race", "code": code}))["type"] == "room"
    resumed = await phone.expect("race_started")
    # The changes in move_result, applied to the view from race_started, are the whole view.
    assert resumed["view"] == view_changes.apply(started[0]["view"], played["changes"]) and resumed["moves"] == 10
    assert bad["changes"] == [] and played["changes"]
    assert [o["name"] for o in resumed["opponents"]] == ["bob"]

    # Winning, then game over; the other resigns; the ranking is announced to both.
    won = await phone.request({"type": "move", "moves": list(LINE[10:])})
    assert won["outcome"] == "won"
    await refused(phone, {"type": "move", "moves": ["1>f"]}, "game_over")
    resigned = await bob.request({"type": "resign"})
    assert resigned["type"] == "progress" and resigned["outcome"] == "resigned"
    finished = [await c.expect("race_finished") for c in (phone, bob)]
    assert [(r["name"], r["outcome"]) for r in finished[0]["ranking"]] == [("ann", "won"), ("bob", "resigned")]
    assert finished[0] == finished[1] and finished[0]["series"]["number"] == 1

    # A rematch: the first to ask makes the room; the others are invited to it.
    rematch = await phone.request({"type": "rematch", "same_deal": False})
    assert rematch["type"] == "room" and rematch["race"]["series"]["number"] == 2
    assert (await bob.expect("rematch_proposed"))["code"] == rematch["race"]["code"]
    assert (await phone.request({"type": "leave_race"}))["type"] == "left"
    assert (await bob.request({"type": "leave_race"}))["type"] == "left"
    await refused(bob, {"type": "par_line", "game": GAME, "date": "2999-01-01"}, "not_found")
    replayed = await bob.request({"type": "replay", "code": code})
    assert replayed["type"] == "replay_data" and len(replayed["racers"]) == 2
    ghost_room = await bob.request({"type": "race_ghost", "code": code, "player_id": ann.player["id"]})
    assert ghost_room["type"] == "room" and ghost_room["race"]["max_players"] == 1
    await bob.request({"type": "start_race"})
    with_ghost = await bob.expect("race_started")
    assert [o.get("ghost") for o in with_ghost["opponents"]] == [True]
    await bob.request({"type": "resign"})
    assert (await bob.expect("race_finished"))["ghost"]["would_rank"] == 2
    assert (await bob.request({"type": "leave_race"}))["type"] == "left"
    await refused(bob, {"type": "resign"}, "not_in_race")

    # A race with live boards (unranked): its spectators get every board, then the changes.
    shown = await bob.request({"type": "create_race", "game": GAME, "deal": DEAL, "live_boards": True})
    assert shown["race"]["live_boards"] is True
    boards = await spectator.request({"type": "watch_race", "code": shown["race"]["code"]})
    assert [b["player_id"] for b in boards["boards"]] == [bob.player["id"]]
    await bob.request({"type": "start_race"})
    await bob.expect("race_started")
    assert (await bob.request({"type": "move", "moves": list(LINE[:1])}))["applied"] == list(LINE[:1])
    assert (await spectator.expect("boards"))["racers"][0]["player_id"] == bob.player["id"]
    await bob.request({"type": "resign"})
    assert (await bob.request({"type": "leave_race"}))["type"] == "left"

    # Daily challenges, leaderboards and profiles (browsable before hello too).
    guest = await clients()
    today = await guest.request({"type": "daily"})
    assert today["type"] == "daily_challenges" and "attempted" not in today["challenges"][0]
    await refused(guest, {"type": "daily", "date": "2999-01-01"}, "not_found")
    await refused(guest, {"type": "daily", "date": "2026-02-30"}, "bad_request")
    daily = await carol.request({"type": "start_daily", "game": GAME})
    assert daily["type"] == "race_started" and daily["daily"]["ranked"] is True
    await carol.request({"type": "resign"})
    assert (await carol.expect("race_finished"))["daily"]["ranked"] is True
    await refused(bob, {"type": "hint"}, "not_in_race")
    replay = await carol.request({"type": "start_daily", "game": GAME})
    assert replay["daily"]["ranked"] is False and replay["daily"]["practice"] is False
    await refused(carol, {"type": "hint"}, "not_allowed")  # no hints on today's deal
    await carol.request({"type": "leave_race"})
    # Past days' challenges (as the planner stored them then), practised: hints are answered.
    # (Yesterday's only once its last ranked attempts are over: 30 minutes after midnight.)
    yesterday, before = (date.fromisoformat(today["date"]) - timedelta(days=n) for n in (1, 2))
    for day in (yesterday, before):
        await app.store.daily_challenge(GAME, day.isoformat(), DEAL, datetime.now(UTC))
    listed = await carol.request({"type": "daily"})
    offered = yesterday.isoformat() if app.gateway.queries.practice_open(yesterday) else None
    assert {c["practice_date"] for c in listed["challenges"] if c["game"] == GAME} == {offered}
    practice = await carol.request({"type": "start_daily", "game": GAME, "date": before.isoformat()})
    assert practice["daily"]["practice"] is True and practice["daily"]["ranked"] is False
    hint = await carol.request({"type": "hint"})
    assert hint["type"] == "hint_result" and hint["message"]
    await carol.request({"type": "resign"})
    await carol.expect("race_finished")
    board = await guest.request({"type": "leaderboard", "board": "daily", "game": GAME})
    assert board["type"] == "leaderboard_page" and [e["name"] for e in board["entries"]] == ["carol"]
    deal_board = await bob.request({"type": "leaderboard", "board": "deal", "game": GAME, "deal": DEAL})
    assert [e["name"] for e in deal_board["entries"]] == ["ann", "bob"] and deal_board["me"]["name"] == "bob"
    await refused(guest, {"type": "leaderboard", "board": "deal", "game": GAME}, "bad_request")
    profile = await guest.request({"type": "profile", "player_id": welcome["player"]["id"]})
    assert profile["type"] == "player_profile" and profile["games"][0]["wins"] == 1
    await refused(guest, {"type": "profile", "player_id": 999_999}, "not_found")

    # Frames the server cannot take as a message at all (not recorded as sent messages).
    for frame, error_code in [
        ("{not json", "invalid_json"),
        ('{"type": "teleport", "id": 7}', "unknown_type"),
        ('{"type": "ping", "pad": "' + "x" * 9000 + '"}', "too_large"),
        (b"binary", "bad_message"),
    ]:
        await carol.send_raw(frame)
        reply = await carol.expect("error")
        assert reply["code"] == error_code, reply
        errors_seen.add(error_code)
    assert (await carol.request({"type": "ping"}))["type"] == "pong"

    traffic = TRAFFIC[first:]
    bad_frames = [
        (direction, message, why)
        for direction, message in traffic
        for why in [problems("ClientMessage" if direction == "in" else "ServerMessage", message)]
        if why
    ]
    assert not bad_frames, "\n".join(f"{d} {json.dumps(m)[:300]}\n    {w}" for d, m, w in bad_frames)

    sent = {m["type"] for d, m in traffic if d == "in"}
    received = {m["type"] for d, m in traffic if d == "out"}
    assert set(CLIENT_TYPES) - sent == set(), "client messages never sent"
    assert set(SERVER_TYPES) - received == set(), "server messages never received"
    assert sent <= set(CLIENT_TYPES) and received <= set(SERVER_TYPES)
    received_codes = {m["code"] for d, m in traffic if d == "out" and m["type"] == "error"}
    assert errors_seen <= received_codes and len(received_codes) >= 15
    rejected_codes = {
        m["rejected"]["code"] for d, m in traffic if d == "out" and m["type"] == "move_result" and m["rejected"]
    }
    assert rejected_codes == {"illegal_move", "bad_notation"}


def test_every_game_view_matches_the_schema() -> None:
    """Views of every game over random playouts (the race above only plays Cruel)."""
    any_view = validator("View")
    per_game = {}
    for member in SCHEMA["$defs"]["View"]["oneOf"]:
        name = member["$ref"].rsplit("/", 1)[1]
        game_field = SCHEMA["$defs"][name]["properties"]["game"]
        for game_id in game_field.get("enum", [game_field.get("const")]):
            per_game[game_id] = validator(name)
    assert set(per_game) == set(all_games())
    rng = random.Random(7)
    for game in all_games().values():
        for deal in range(2):
            state = game.deal(deal, TEST_SECRET.encode())
            assert any_view.is_valid(game.view(state))
            for step in range(150):
                if step % 3 == 0:
                    view = game.view(state)
                    errors = [e.message for e in per_game[game.id].iter_errors(view)]
                    assert not errors, (game.id, errors[:3])
                moves = game.legal_moves(state)
                if not moves:
                    break
                state = game.apply(state, rng.choice(moves))


# --- the schema says what the decoder says ---------------------------------------------

ACCEPTED = [
    {"type": "hello", "name": "ann"},
    {"type": "hello", "token": "t" * 128, "id": "x" * 64},
    {"type": "hello", "name": "n" * 64, "token": None},  # 64 as sent; the name rules then say 1-32
    {"type": "hello"},  # the shape is fine; the server then asks for a name or a token
    {"type": "list_games", "id": 2**53},
    {"type": "list_races", "id": -(2**53)},
    {"type": "create_race", "game": "cruel"},
    {"type": "create_race", "game": "cruel", "deal": 2**53 - 1, "private": False, "time_limit_s": 30},
    {"type": "create_race", "game": "cruel", "deal": None, "time_limit_s": 4 * 3600},
    {"type": "create_race", "game": "cruel", "best_of": 7},
    {"type": "create_race", "game": "cruel", "best_of": None},
    {"type": "rematch"},
    {"type": "rematch", "same_deal": False},
    {"type": "rematch", "race": "KXPMRT"},
    {"type": "replay", "code": "kxp-mrt"},
    {"type": "watch_race", "code": "kxp mrt"},
    {"type": "par_line", "game": "cruel", "date": "2026-11-26"},
    {"type": "race_ghost", "code": "KXPMRT", "player_id": 1},
    {"type": "join_race", "code": "bcd-fgh"},
    {"type": "leave_race"},
    {"type": "ready"},
    {"type": "ready", "ready": False, "id": None},
    {"type": "start_race"},
    {"type": "move", "moves": ["1>f"]},
    {"type": "move", "moves": ["p"] * 64},
    {"type": "resign"},
    {"type": "ping", "id": "é" * 64},
    {"type": "profile", "player_id": 2**53 - 1},
    {
        "type": "leaderboard", "board": "deal", "game": "cruel", "deal": 2**53 - 1,
        "min_games": 10_000, "page": 1_000_000, "page_size": 100,
    },
    {"type": "leaderboard", "board": "win_rate", "game": "cruel", "min_games": 1, "page": 1, "page_size": 1},
]

REFUSED = [
    [1, 2],
    "ping",
    {},
    {"id": 1},
    {"type": "teleport"},
    {"type": 3},
    {"type": "welcome", "player": {"id": 1, "name": "ann"}},  # a server message
    {"type": "ping", "extra": 1},
    {"type": "hello", "name": "ann", "admin": True},
    {"type": "hello", "name": ""},
    {"type": "hello", "name": "n" * 65},
    {"type": "hello", "token": ""},
    {"type": "hello", "token": "t" * 129},
    {"type": "ping", "id": "x" * 65},
    {"type": "ping", "id": 2**53 + 1},
    {"type": "ping", "id": True},
    {"type": "ping", "id": 1.5},
    {"type": "ping", "id": [1]},
    {"type": "create_race"},
    {"type": "create_race", "game": "g" * 33},
    {"type": "create_race", "game": "cruel", "deal": -1},
    {"type": "create_race", "game": "cruel", "deal": 2**53},
    {"type": "create_race", "game": "cruel", "deal": "7"},
    {"type": "create_race", "game": "cruel", "private": None},
    {"type": "create_race", "game": "cruel", "time_limit_s": 29},
    {"type": "create_race", "game": "cruel", "time_limit_s": 4 * 3600 + 1},
    {"type": "create_race", "game": "cruel", "best_of": 1},
    {"type": "create_race", "game": "cruel", "best_of": 4},
    {"type": "create_race", "game": "cruel", "best_of": "3"},
    {"type": "rematch", "same_deal": None},
    {"type": "rematch", "same_deal": 1},
    {"type": "rematch", "code": "BCDFGH"},
    {"type": "replay"},
    {"type": "watch_race", "code": ""},
    {"type": "par_line", "game": "cruel"},
    {"type": "par_line", "game": "cruel", "date": "26.11.2026"},
    {"type": "race_ghost", "code": "KXPMRT"},
    {"type": "race_ghost", "code": "KXPMRT", "player_id": 0},
    {"type": "replay", "code": ""},
    {"type": "replay", "code": "B" * 17},
    {"type": "join_race"},
    {"type": "join_race", "code": ""},
    {"type": "join_race", "code": "B" * 17},
    {"type": "ready", "ready": "yes"},
    {"type": "ready", "ready": None},
    {"type": "move"},
    {"type": "move", "moves": "1>f"},
    {"type": "move", "moves": []},
    {"type": "move", "moves": ["p"] * 65},
    {"type": "move", "moves": [""]},
    {"type": "move", "moves": ["m" * 33]},
    {"type": "move", "moves": [7]},
    {"type": "create_race", "game": "cruel", "deal": 2**64},
    {"type": "profile", "player_id": 0},
    {"type": "profile", "player_id": 2**53},
    {"type": "profile", "player_id": 2**63},  # past SQLite's integers
    {"type": "leaderboard", "board": "deal", "game": "cruel", "deal": 2**53},
    {"type": "leaderboard", "board": "wins", "game": "cruel", "page": 0},
    {"type": "leaderboard", "board": "wins", "game": "cruel", "page": 1_000_001},
    {"type": "leaderboard", "board": "wins", "game": "cruel", "page_size": 101},
    {"type": "leaderboard", "board": "win_rate", "game": "cruel", "min_games": 10_001},
]


@pytest.mark.parametrize("message", ACCEPTED, ids=lambda m: json.dumps(m)[:40])
def test_the_schema_accepts_what_the_server_accepts(message: dict[str, Any]) -> None:
    protocol.decode(json.dumps(message))
    assert problems("ClientMessage", message) == []


@pytest.mark.parametrize("message", REFUSED, ids=lambda m: json.dumps(m)[:40])
def test_the_schema_refuses_what_the_server_refuses(message: Any) -> None:
    with pytest.raises(protocol.ProtocolError) as refusal:
        protocol.decode(json.dumps(message))
    assert refusal.value.code in (protocol.ErrorCode.BAD_MESSAGE, protocol.ErrorCode.UNKNOWN_TYPE)
    assert not CLIENT.is_valid(message)


async def test_an_id_out_of_range_is_not_echoed(app: App, clients: Any) -> None:
    """A request whose integer id is beyond ±2^53 is refused without an id: no client could
    match it exactly (JavaScript's numbers stop there), as the document and the schema say."""
    ann = await clients()
    for rid in (2**53 + 1, -(2**53) - 1, 2**63):
        await ann.send({"type": "ping", "id": rid})
        refused = await ann.expect("error")
        assert refused["code"] == "bad_message" and "id" not in refused, refused
        assert not SERVER.is_valid({"type": "error", "code": "bad_message", "message": "x", "id": rid})
    assert "gets that integer echoed" not in (DOCS / "protocol.md").read_text(encoding="utf-8")


def test_the_schema_is_not_vacuous_for_server_messages() -> None:
    good = {"type": "pong", "id": 1}
    assert SERVER.is_valid(good)
    assert not SERVER.is_valid({"type": "pong", "id": 1, "extra": True})
    assert not SERVER.is_valid({"type": "error", "message": "no code"})
    assert not SERVER.is_valid({"type": "error", "code": "teapot", "message": "unknown code"})
    assert not SERVER.is_valid({"type": "countdown", "code": "BCDFGH", "starts_in_ms": -1})
    assert not SERVER.is_valid({"type": "hello", "name": "ann"})  # a client message
    card_view = {"game": "patriarchs", "tableau": ["1S"] + [None] * 8, "waste_top": None, "waste_count": 0,
                 "stock_count": 0, "foundations": [], "redeal_used": False, "redeal_allowed": False}
    assert not validator("View").is_valid(card_view)


# --- docs/protocol.md -------------------------------------------------------------------

EXAMPLES = re.findall(r"```json\n(.*?)```", PROTOCOL_MD, flags=re.DOTALL)


def test_every_example_in_the_protocol_doc_is_valid() -> None:
    assert len(EXAMPLES) >= len(CLIENT_TYPES) + len(SERVER_TYPES)
    types = set()
    for text in EXAMPLES:
        message = json.loads(text)
        kind = message.get("type")
        union = "ClientMessage" if kind in CLIENT_TYPES else "ServerMessage"
        assert problems(union, message) == [], (text, problems(union, message))
        if union == "ClientMessage":
            protocol.decode(json.dumps(message))  # the server takes it, too
        types.add(kind)
    assert types == set(CLIENT_TYPES) | set(SERVER_TYPES), "every message type has an example"


def test_every_error_code_is_documented() -> None:
    codes = {c.value for c in protocol.ErrorCode}
    assert set(SCHEMA["$defs"]["ErrorCode"]["enum"]) == codes
    table = PROTOCOL_MD.split("\n## Error codes\n", 1)[1].split("\n## ", 1)[0]
    documented = re.findall(r"^\| `([a-z_]+)` \|", table, flags=re.MULTILINE)
    assert len(documented) == len(set(documented))
    assert set(documented) == codes, f"error table vs ErrorCode: {sorted(set(documented) ^ codes)}"
    assert set(CLIENT_TYPES) == protocol.REQUEST_TYPES


def test_the_requests_served_before_hello_are_documented() -> None:
    identity = PROTOCOL_MD.split("\n## Identity\n", 1)[1].split("\n## ", 1)[0]
    item = re.search(r"^4\. Until `welcome`, only (.*?) are served", identity, flags=re.MULTILINE | re.DOTALL)
    assert item, "docs/protocol.md, Identity, item 4"
    documented = set(re.findall(r"`([a-z_]+)`", item.group(1)))
    assert documented == {cls.__struct_config__.tag for cls in protocol.ANONYMOUS}
    errors = PROTOCOL_MD.split("\n## Error codes\n", 1)[1]
    row = re.search(r"^\| `not_identified` \| anything but ([^(|]*)", errors, flags=re.MULTILINE)
    assert row and set(re.findall(r"`([a-z_]+)`", row.group(1))) == documented
