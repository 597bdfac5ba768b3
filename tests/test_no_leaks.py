"""No leaks and no cheating, checked on the wire of the real server.

This module owns the reliability issue's "no leaks, no cheating" checks, each made on what
really goes over real websockets (127.0.0.1) to real clients:

1. hidden cards (Clock's face-down cards, the Parallels and Patriarchs stock) never leave
   the server before they are turned up: whole races are played and every frame each client
   receives is checked against that player's server-side state at that moment;
2. tokens never reach another player nor a log record;
3. a racer can neither see nor change another racer's game, and no request can name one;
4. times come from the server clock only.

The test picks its moves from the racer's server-side state (``game.legal_moves``); the
checks are only on the frames, never on how the moves were chosen.
"""

from __future__ import annotations

import asyncio
import json
import logging
import random
import re
import time
from collections import Counter
from collections.abc import AsyncIterator, Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import msgspec
import pytest
from websockets.exceptions import ConnectionClosed

from solitaire_race import protocol
from solitaire_race.app import App
from solitaire_race.engine import Game, IllegalMove, Kind, Move, NotationError, Outcome, get_game, view_changes
from solitaire_race.engine.cards import code, codes, label, parse_card
from solitaire_race.engine.parallels import COLUMNS, WIDTH
from solitaire_race.room import Room

from .conftest import TEST_SECRET, TIMEOUT, Client, make_config, progress_entries

SECRET = TEST_SECRET.encode()
MAX_MOVES = 400  # per player and game: enough to empty every stock with this policy
MAX_FRAMES = 500  # frames read while waiting for one message

# A card code as a JSON string ("TS"), and a card as a sentence names it ("10♠").
CARD_CODE = re.compile(r'"([A2-9TJQK][SHDC])"')
CARD_LABEL = re.compile(r"(?<![0-9A-Za-z])(10|[A2-9JQK])([♠♥♦♣])")
# "it needs 5♠" names the card a foundation's top calls for, a rule, not where any card is.
NEEDS = re.compile(r"it needs (?:10|[A2-9JQK])[♠♥♦♣]")
OWN_GAME = frozenset({"move_result", "race_started"})  # the only frames that may show cards

# What each game hides, read from the full server-side snapshot.
HIDDEN: dict[str, Callable[[dict[str, Any]], list[str]]] = {
    "clock": lambda snap: [c for pile in snap["piles"] for c in pile["face_down_cards"]],
    "parallels": lambda snap: list(snap["stock"]),
    "patriarchs": lambda snap: list(snap["stock"]),
}
DEALS = {"clock": (3, 8), "parallels": (5, 6), "patriarchs": (5, 6)}


@pytest.fixture
async def app(tmp_path: Path) -> AsyncIterator[App]:
    """conftest's real server, without its per-connection rate limit in the way: these tests
    play whole games as fast as the server answers (the limit has its own tests). Standings
    go out every 10 ms instead of 100: after each move the other player waits for the one
    that shows it, and whole games of hundreds of moves would otherwise spend most of their
    time waiting (every frame is checked all the same)."""
    running = await App.start(
        make_config(tmp_path, rate_per_s=10_000.0, rate_burst=10_000, progress_interval_s=0.01)
    )
    try:
        yield running
    finally:
        await running.stop()


# --- the checker -----------------------------------------------------------------------
def visible_cards(game: Game[Any], state: Any) -> Counter[str]:
    """Every card of the state that is face up: all of them minus the hidden ones."""
    if state is None:  # not dealt yet: nothing may be shown
        return Counter()
    everything = Counter(codes(game.all_cards(state)))
    hidden = Counter(HIDDEN[game.id](game.snapshot(state)))
    assert not hidden - everything, "the snapshot hides cards the state does not have"
    return everything - hidden


def named_cards(text: str) -> set[str]:
    """Cards named in sentences ("K♠ is in hand"), as codes."""
    return {code(parse_card(rank + suit)) for rank, suit in CARD_LABEL.findall(NEEDS.sub("", text))}


def leaks(game: Game[Any], state: Any, raw: str) -> list[str]:
    """What is wrong with a frame sent to the player whose game is ``state``, if anything."""
    message = json.loads(raw)
    text = json.dumps(message, ensure_ascii=False)  # \u escapes or not, the same text
    shown = Counter(CARD_CODE.findall(text))
    named = named_cards(text)
    kind = message.get("type")
    if kind not in OWN_GAME:  # room, countdown, progress, race_finished, errors...
        return [f"a {kind} frame shows cards: {sorted(shown)} {sorted(named)}"] if shown or named else []
    problems = []
    others = json.dumps(message.get("opponents", []), ensure_ascii=False)
    if CARD_CODE.search(others) or CARD_LABEL.search(others):
        problems.append(f"the opponents of a {kind} frame show cards: {others}")
    visible = visible_cards(game, state)
    if extra := shown - visible:
        problems.append(f"{kind} shows cards that are not face up: {sorted(extra.elements())}")
    if unseen := named - set(visible):
        problems.append(f"{kind} names cards that are not face up: {sorted(unseen)}")
    return problems


# --- one client's side of the wire -------------------------------------------------------
@dataclass(eq=False)
class Wire:
    """A client whose every received frame is recorded and checked at once against the
    player's own server-side state (which only that player's own requests change)."""

    client: Client
    app: App
    game: Game[Any]
    player_id: int = 0
    token: str = ""
    room: Room | None = None
    raws: list[str] = field(default_factory=list)
    frames: list[dict[str, Any]] = field(default_factory=list)
    elapsed: list[int] = field(default_factory=list)  # elapsed_ms of race_started and move_result
    views: list[dict[str, Any]] = field(default_factory=list)  # the view as a client keeps it, after each
    _next_id: int = 0

    @property
    def racer(self) -> Any:
        assert self.room is not None
        return self.room.racers[self.player_id]

    def state(self) -> Any:
        if self.room is None or self.player_id not in self.room.racers:
            return None
        return self.room.racers[self.player_id].state

    async def send(self, message: dict[str, Any]) -> None:
        # Compact, as browsers' JSON.stringify writes it.
        await self.client.ws.send(json.dumps(message, separators=(",", ":")))

    async def read(self) -> dict[str, Any]:
        raw = await asyncio.wait_for(self.client.ws.recv(), TIMEOUT)
        assert isinstance(raw, str), "the server sends text frames only"
        state = self.state()
        problems = leaks(self.game, state, raw)
        assert not problems, f"{problems} in {raw}"
        message: dict[str, Any] = json.loads(raw)
        if message["type"] in OWN_GAME:
            # The frame is this very state, so the check above compared it with the right one;
            # and a client that applies each move_result's changes has exactly the server's view.
            if message["type"] == "race_started":
                view = message["view"]
            else:
                view = view_changes.apply(self.views[-1], message["changes"])
            assert view == self.game.view(state)
            self.views.append(view)
            self.elapsed.append(message["elapsed_ms"])
        self.raws.append(raw)
        self.frames.append(message)
        return message

    async def until(self, test: Callable[[dict[str, Any]], bool]) -> dict[str, Any]:
        for _ in range(MAX_FRAMES):
            message = await self.read()
            if test(message):
                return message
        raise AssertionError(f"no expected message in {MAX_FRAMES} frames")

    async def request(self, message: dict[str, Any]) -> dict[str, Any]:
        self._next_id += 1
        rid = self._next_id
        await self.send({**message, "id": rid})
        return await self.until(lambda m: m.get("id") == rid)

    async def hello(self, name: str) -> None:
        welcome = await self.request({"type": "hello", "name": name})
        assert welcome["type"] == "welcome", welcome
        self.player_id, self.token = welcome["player"]["id"], welcome["token"]

    async def drain(self) -> None:
        """Read (and check) everything sent so far: the reply to a ping comes after it."""
        assert (await self.request({"type": "ping"}))["type"] == "pong"


async def wire(app: App, clients: Any, game_id: str, name: str) -> Wire:
    w = Wire(await clients(), app, get_game(game_id))
    await w.hello(name)
    return w


async def race(app: App, clients: Any, game_id: str, deal: int, names: Iterable[str]) -> tuple[str, list[Wire]]:
    """A started race of these players: its join code and their wires."""
    wires = [await wire(app, clients, game_id, name) for name in names]
    host = wires[0]
    room = await host.request({"type": "create_race", "game": game_id, "deal": deal})
    assert room["type"] == "room", room
    race_code = room["race"]["code"]
    for w in wires:
        w.room = app.races.rooms[race_code]
    for guest in wires[1:]:
        assert (await guest.request({"type": "join_race", "code": race_code}))["type"] == "room"
    assert (await host.request({"type": "start_race"}))["type"] == "room"
    for w in wires:
        started = await w.until(lambda m: m["type"] == "race_started")
        assert started["moves"] == 0 and started["outcome"] == "playing"
    return race_code, wires


# --- choosing moves ------------------------------------------------------------------------
def choose(game: Game[Any], state: Any, rng: random.Random) -> Move:
    """Reach deep: turn cards up and send them home; shift rarely; Clock's exchange at random."""
    moves = [m for m in game.legal_moves(state) if not game.is_shuttle(state, m)]
    by_kind: dict[Kind, list[Move]] = {}
    for m in moves:
        by_kind.setdefault(m.kind, []).append(m)
    shifts = by_kind.get(Kind.SHIFT, [])
    if shifts and rng.random() < 0.1:
        return rng.choice(shifts)
    for kind in (Kind.PLAY, Kind.EXCHANGE, Kind.HOME, Kind.STOCK, Kind.REDEAL, Kind.SHIFT):
        if kind in by_kind:
            return rng.choice(by_kind[kind])
    return moves[0]


def notations(game: Game[Any], state: Any) -> list[str]:
    """Moves a player might type in this state, legal or not."""
    if game.id == "clock":
        return ["p"] + [f"x{h}.{n}" for h in range(1, 14) for n in range(1, 5)]
    sides = [f"{s}:{a}>{b}" for s in "SHDC" for a, b in (("A", "K"), ("K", "A"))]
    if game.id == "parallels":
        rows = len(state.slots) // WIDTH
        sources = [f"{c}{r}" for r in range(1, rows + 1) for c in COLUMNS]
    else:
        sources = [*"123456789", "w"]
    return ["s", *(["r"] if game.id == "patriarchs" else []), *sides, *(f"{s}>{d}" for s in sources for d in "AK")]


def illegal(game: Game[Any], state: Any, rng: random.Random) -> str | None:
    """A move the rules refuse here, so that the reason sent back is checked too."""
    refused = []
    for text in notations(game, state):
        try:
            game.apply(state, game.parse_move(text))
        except IllegalMove:
            refused.append(text)
        except NotationError:
            pass
    return rng.choice(refused) if refused else None


def batch(game: Game[Any], state: Any, rng: random.Random, turn: int) -> tuple[list[str], str | None]:
    """The moves of one request (mostly one, some batches of three) and an illegal tail."""
    texts: list[str] = []
    for _ in range(3 if turn % 5 == 3 else 1):
        move = choose(game, state, rng)
        texts.append(game.format_move(move))
        state = game.apply(state, move)
        if game.outcome(state) is not Outcome.PLAYING:
            return texts, None
    return texts, illegal(game, state, rng) if turn % 9 == 4 else None


async def play_move(w: Wire, others: list[Wire], texts: list[str], bad: str | None) -> dict[str, Any]:
    """One move request; the others then read up to the progress it caused."""
    reply = await w.request({"type": "move", "moves": texts + ([bad] if bad else [])})
    assert reply["type"] == "move_result", reply
    assert reply["applied"] == texts, reply
    if bad is not None:
        assert reply["rejected"]["move"] == bad and reply["rejected"]["code"] == "illegal_move", reply
    for other in others:
        await other.until(
            lambda m: any(r["player_id"] == w.player_id and r["moves"] == reply["moves"] for r in progress_entries(m))
        )
    return reply


async def play_race(wires: list[Wire], rng: dict[int, random.Random], max_moves: int = MAX_MOVES) -> dict[str, Any]:
    """Both players take turns until each game is over (resigning at ``max_moves``);
    returns race_finished as the first player saw it, after every frame was read."""
    for turn in range(max_moves):
        active = [w for w in wires if not w.racer.done and len(w.racer.log) < max_moves]
        if not active:
            break
        for w in active:
            texts, bad = batch(w.game, w.racer.state, rng[w.player_id], turn)
            await play_move(w, [o for o in wires if o is not w], texts, bad)
    for w in wires:
        if not w.racer.done:
            assert (await w.request({"type": "resign"}))["outcome"] == "resigned"
    finished = [await w.until(lambda m: m["type"] == "race_finished") for w in wires]
    for w in wires:
        await w.drain()
    assert all(f == finished[0] for f in finished)
    return finished[0]


# --- 1. hidden cards ---------------------------------------------------------------------
def test_the_checker_catches_leaks() -> None:
    """The checker is able to fail: doctored frames with a hidden card are caught."""
    for game_id in HIDDEN:
        game = get_game(game_id)
        state = game.deal(7, SECRET)
        rng = random.Random(game_id)
        for _ in range(12):  # a few moves in: something face up, something still hidden
            state = game.apply(state, choose(game, state, rng))
        view = game.view(state)
        frame = {"type": "move_result", "view": view, "elapsed_ms": 5}
        assert leaks(game, state, json.dumps(frame)) == []
        visible = visible_cards(game, state)
        hidden = HIDDEN[game_id](game.snapshot(state))
        secret = next(c for c in hidden if not visible[c])
        caught = leaks(game, state, json.dumps({**frame, "view": {**view, "peek": secret}}))
        assert caught and secret in caught[0]
        said = label(parse_card(secret))
        caught = leaks(game, state, json.dumps({**frame, "rejected": {"reason": f"{said} is next"}}))
        assert caught and secret in caught[0]
        shown_code = CARD_CODE.search(json.dumps(view))
        assert shown_code is not None
        progress = {"type": "progress", "player_id": 2, "name": "bob", "card": shown_code.group(1)}
        assert leaks(game, state, json.dumps(progress))
        started = {"type": "race_started", "view": view, "elapsed_ms": 0, "opponents": [progress]}
        assert leaks(game, state, json.dumps(started))
        assert leaks(game, None, json.dumps(frame)), "nothing may be shown before the deal"
        if game_id != "clock":
            # Two decks: a stock card whose twin is face up (and shown) is still a leak.
            shown = Counter(CARD_CODE.findall(json.dumps(view)))
            twin = next(c for c in hidden if 0 < visible[c] == shown[c])
            assert leaks(game, state, json.dumps({**frame, "view": {**view, "peek": twin}}))


@pytest.mark.parametrize("game_id,deal", [(g, d) for g, deals in DEALS.items() for d in deals])
async def test_hidden_cards_never_leave_the_server(app: App, clients: Any, game_id: str, deal: int) -> None:
    _, wires = await race(app, clients, game_id, deal, ("alice", "bob"))
    rng = {w.player_id: random.Random(f"{game_id}/{deal}/{w.player_id}") for w in wires}
    finished = await play_race(wires, rng)

    for w in wires:
        kinds = {m["type"] for m in w.frames}
        expected = {"welcome", "room", "countdown", "race_started", "move_result", "standings", "race_finished", "pong"}
        assert expected <= kinds, kinds
        assert w.elapsed == sorted(w.elapsed), "elapsed_ms went back"
        results = [m for m in w.frames if m["type"] == "move_result"]
        assert any(m["rejected"] for m in results), "no refused move: reasons were not checked"
        if game_id == "clock":
            assert w.racer.outcome in ("won", "stuck"), "a whole Clock game is at most 53 moves"
        else:
            # Every stock card was turned up (and checked) before the game ended.
            assert any(v["stock_count"] == 0 for v in w.views), "the stock was never emptied"
    assert {r["player_id"] for r in finished["ranking"]} == {w.player_id for w in wires}


# --- 2. tokens ---------------------------------------------------------------------------
def token_pieces(token: str, size: int = 16) -> list[str]:
    """Every 16-character piece of a token (96 bits): a logged fragment is a leak too."""
    return [token[i : i + size] for i in range(len(token) - size + 1)]


def record_text(record: logging.LogRecord) -> str:
    """The message as formatted, and every attribute a handler could write (args, extras)."""
    text = f"{record.getMessage()} {vars(record)!r}"
    if record.exc_info:
        text += logging.Formatter().formatException(record.exc_info)
    return text


async def token_race(app: App, clients: Any, caplog: pytest.LogCaptureFixture) -> tuple[list[Wire], list[str]]:
    """A whole Clock race at DEBUG, with a reconnect by token that replaces a connection.

    Returns every wire (the replaced one included) and both tokens."""
    caplog.set_level(logging.DEBUG)
    for name in ("websockets", "websockets.server", "websockets.client"):
        caplog.set_level(logging.DEBUG, logger=name)
    race_code, wires = await race(app, clients, "clock", DEALS["clock"][0], ("alice", "bob"))
    alice, bob = wires
    rng = {w.player_id: random.Random(w.player_id) for w in wires}
    for turn in range(3):
        for w in wires:
            texts, bad = batch(w.game, w.racer.state, rng[w.player_id], turn)
            await play_move(w, [o for o in wires if o is not w], texts, bad)
    # Bob again, from a new connection: hello by token (no id, as short as it gets).
    bob2 = Wire(await clients(), app, bob.game, player_id=bob.player_id, room=bob.room)
    await bob2.send({"type": "hello", "token": bob.token})
    welcome = await bob2.until(lambda m: m["type"] == "welcome")
    assert welcome["player"]["id"] == bob.player_id and "token" not in welcome
    replaced = await bob.until(lambda m: m["type"] == "error")
    assert replaced["code"] == "replaced"
    with pytest.raises(ConnectionClosed):
        for _ in range(MAX_FRAMES):
            await bob.read()
    await bob2.request({"type": "join_race", "code": race_code})
    await bob2.until(lambda m: m["type"] == "race_started")
    await play_race([alice, bob2], rng)
    return [alice, bob, bob2], [alice.token, bob.token]


async def test_tokens_reach_only_their_owner(app: App, clients: Any, caplog: pytest.LogCaptureFixture) -> None:
    wires, tokens = await token_race(app, clients, caplog)
    for w in wires:
        for raw, message in zip(w.raws, w.frames, strict=True):
            for token in tokens:
                if token in raw:
                    assert token == w.token and message["type"] == "welcome", f"a token in {raw}"
    for w in (wires[0], wires[1]):  # each token went out once, in its owner's first welcome
        assert sum(w.token in raw for raw in w.raws) == 1

    # Every log record but the websockets library's own frame dumps (see the next test);
    # this includes the server's, the store's, and the test client's.
    records = [r for r in caplog.records if not r.name.startswith("websockets")]
    assert any(r.name.startswith(("solitaire_race", "aiosqlite")) for r in records), "the capture saw no server log"
    for record in records:
        text = record_text(record)
        for token in tokens:
            assert not any(piece in text for piece in token_pieces(token)), f"token in log: {record.name}: {text}"


async def test_tokens_stay_out_of_the_websockets_debug_log(
    app: App, clients: Any, caplog: pytest.LogCaptureFixture
) -> None:
    _, tokens = await token_race(app, clients, caplog)
    # The capture does see the library's DEBUG frame dumps: the test client's own are there.
    assert any(r.name == "websockets.client" and "TEXT" in r.getMessage() for r in caplog.records)
    for record in (r for r in caplog.records if r.name.startswith("websockets.server")):
        text = record_text(record)
        for token in tokens:
            assert not any(piece in text for piece in token_pieces(token)), f"token in log: {record.name}: {text}"


# --- 3. nobody else's game -----------------------------------------------------------------
PLAYERISH = re.compile(r"player|racer|user|target|opponent|token|who|owner|behalf")
GAME_ACTIONS = ("move", "resign", "ready", "start_race", "leave_race", "start_daily")


def test_no_request_can_name_another_players_game() -> None:
    fields = {
        cls.__struct_config__.tag: {f.name for f in msgspec.structs.fields(cls)}
        for cls in protocol.Request.__args__
    }
    assert fields["move"] == {"id", "moves"}
    assert fields["resign"] == {"id"}
    for action in GAME_ACTIONS:
        assert not any(PLAYERISH.search(f) for f in fields[action]), (action, fields[action])
    # Only identity (your own token, also proving who asks for a replay or a par line on a
    # page beside the app), public profiles and a ghost name a player at all: a ghost is a
    # run of a finished race, whose replay the player may see (test_ghosts.py).
    naming = {tag for tag, names in fields.items() if any(PLAYERISH.search(f) for f in names)}
    assert naming == {"hello", "profile", "race_ghost", "replay", "par_line"}, naming


async def test_a_racer_cannot_see_or_change_another_racers_game(app: App, clients: Any) -> None:
    game_id = "parallels"
    race_code, (ann, bob) = await race(app, clients, game_id, DEALS[game_id][0], ("ann", "bob"))
    game = ann.game
    first_view = bob.frames[-1]["view"]  # bob's race_started
    bob_state, bob_snapshot = bob.racer.state, game.snapshot(bob.racer.state)
    rng = random.Random(1)

    for turn in range(30):
        texts, bad = batch(game, ann.racer.state, rng, turn)
        await play_move(ann, [bob], texts, bad)
    # Ann tries to address Bob's game: every such field is refused, and nothing changes.
    legal = game.format_move(choose(game, ann.racer.state, rng))
    ann_moves = len(ann.racer.log)
    for name, value in (("player_id", bob.player_id), ("player", bob.player_id), ("target", bob.player_id),
                        ("racer", "bob"), ("code", race_code)):
        for request in ({"type": "move", "moves": [legal]}, {"type": "resign"}):
            reply = await ann.request({**request, name: value})
            assert reply["type"] == "error" and reply["code"] == "bad_message", reply
            assert "unknown field" in reply["message"] and name in reply["message"], reply
    assert len(ann.racer.log) == ann_moves and not ann.racer.done

    assert bob.racer.state is bob_state and game.snapshot(bob.racer.state) == bob_snapshot
    assert bob.racer.log == [] and not bob.racer.done
    assert ann.racer.state != bob_state
    await bob.request({"type": "join_race", "code": race_code})
    again = await bob.until(lambda m: m["type"] == "race_started")
    assert again["view"] == first_view and again["moves"] == 0 and again["outcome"] == "playing"
    assert [o["player_id"] for o in again["opponents"]] == [ann.player_id]

    # And the other way round: Bob's moves leave Ann's game as it was.
    ann_state, ann_view = ann.racer.state, game.view(ann.racer.state)
    for turn in range(10):
        texts, bad = batch(game, bob.racer.state, rng, turn)
        await play_move(bob, [ann], texts, bad)
    assert ann.racer.state is ann_state
    await ann.request({"type": "join_race", "code": race_code})
    again = await ann.until(lambda m: m["type"] == "race_started")
    assert again["view"] == ann_view and again["moves"] == ann_moves


# --- 4. the server's clock only --------------------------------------------------------------
async def test_times_come_only_from_the_server_clock(app: App, clients: Any) -> None:
    _, wires = await race(app, clients, "clock", DEALS["clock"][1], ("ann", "bob"))
    ann, bob = wires
    room = ann.room
    assert room is not None and room.start_at is not None
    for name in ("time_ms", "elapsed_ms", "at_ms", "now", "start_at"):
        reply = await ann.request({"type": "move", "moves": ["p"], name: 1})
        assert reply["type"] == "error" and reply["code"] == "bad_message", reply
        assert "unknown field" in reply["message"] and f"`{name}`" in reply["message"], reply
        reply = await ann.request({"type": "resign", name: 0})
        assert reply["code"] == "bad_message", reply
    assert ann.racer.log == [] and not ann.racer.done

    rng = random.Random(4)
    for turn in range(MAX_MOVES):
        if ann.racer.done:
            break
        texts, bad = batch(ann.game, ann.racer.state, rng, turn)
        before = time.monotonic()
        reply = await play_move(ann, [bob], texts, bad)
        after = time.monotonic()
        # Stamped by the server's clock between the request and the reply (ms, rounded).
        assert (before - room.start_at) * 1000 - 1 <= reply["elapsed_ms"] <= (after - room.start_at) * 1000 + 1
    assert ann.racer.done and ann.elapsed == sorted(ann.elapsed) and len(ann.elapsed) > 2
    assert (await bob.request({"type": "resign"}))["type"] == "progress"
    finished = await ann.until(lambda m: m["type"] == "race_finished")
    times = {r["player_id"]: r["time_ms"] for r in finished["ranking"]}
    assert times[ann.player_id] == ann.racer.end_ms == ann.elapsed[-1]
    assert times[bob.player_id] == bob.racer.end_ms >= ann.elapsed[-1]
