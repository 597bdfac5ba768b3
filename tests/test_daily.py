"""Daily challenges through the real server, with the wall clock injected."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from solitaire_race import protocol as p
from solitaire_race.app import App
from solitaire_race.daily import daily_deal_number, streak
from solitaire_race.engine import get_game

from .conftest import ON_BOTH_DATABASES, TEST_SECRET, Client, http_json, make_config
from .databases import Database
from .support import held_back_chooser, solve

DAY = datetime(2026, 11, 21, 23, 59, 0, tzinfo=UTC)
WINNABLE_DAY = datetime(2026, 11, 1, 12, 0, 0, tzinfo=UTC)


class WallClock:
    def __init__(self, now: datetime) -> None:
        self.now = now

    def __call__(self) -> datetime:
        return self.now


@pytest.fixture
async def daily_app(tmp_path: Path, database: Database) -> AsyncIterator[tuple[App, WallClock]]:
    wall = WallClock(DAY)
    app = await App.start(make_config(tmp_path, db_url=database.url), wall_clock=wall)
    try:
        yield app, wall
    finally:
        await app.stop()


async def player(app: App, name: str) -> Client:
    client = await Client.connect(app)
    assert (await client.hello(name))["type"] == "welcome"
    return client


def winning_line(game_id: str, deal: int) -> list[str] | None:
    game = get_game(game_id)
    return solve(game, game.deal(deal, TEST_SECRET.encode()), budget=50_000)


async def finish(client: Client, moves: list[str] | None) -> dict[str, Any]:
    """Win with ``moves`` if given, else resign; return race_finished."""
    if moves:
        for i in range(0, len(moves), 64):
            reply = await client.request({"type": "move", "moves": moves[i : i + 64]})
            assert reply["rejected"] is None, reply
    else:
        await client.request({"type": "resign"})
    return await client.expect("race_finished")


@ON_BOTH_DATABASES
async def test_day_rollover_changes_the_deal_and_keeps_yesterday(daily_app: tuple[App, WallClock]) -> None:
    app, wall = daily_app
    ann = await player(app, "ann")
    try:
        today = await ann.request({"type": "daily"})
        assert today["type"] == "daily_challenges" and today["date"] == today["today"] == "2026-11-21"
        assert {c["game"] for c in today["challenges"]} == set(app.gateway.queries.games)
        cruel = {c["game"]: c for c in today["challenges"]}["cruel"]
        assert cruel["deal"] == daily_deal_number(TEST_SECRET.encode(), "cruel", date(2026, 11, 21))
        assert cruel["attempted"] is False

        started = await ann.request({"type": "start_daily", "game": "cruel"})
        assert started["type"] == "race_started"
        assert started["daily"] == {"date": "2026-11-21", "ranked": True, "par": None, "practice": False}
        assert started["deal"] == cruel["deal"]

        wall.now = DAY + timedelta(minutes=2)  # 00:01 UTC: a new day, a new deal
        tomorrow = await ann.request({"type": "daily"})
        new_cruel = {c["game"]: c for c in tomorrow["challenges"]}["cruel"]
        assert tomorrow["date"] == "2026-11-22" and new_cruel["deal"] != cruel["deal"]

        # The attempt that began before midnight still counts for the 21st.
        finished = await finish(ann, None)
        assert finished["daily"]["date"] == "2026-11-21"
        board = await ann.request({"type": "leaderboard", "board": "daily", "game": "cruel", "date": "2026-11-21"})
        assert [(e["name"], e["outcome"]) for e in board["entries"]] == [("ann", "resigned")]
        empty = await ann.request({"type": "leaderboard", "board": "daily", "game": "cruel"})  # today: the 22nd
        assert empty["date"] == "2026-11-22" and empty["entries"] == [] and empty["total"] == 0

        old = await ann.request({"type": "daily", "date": "2026-11-21"})
        assert {c["game"]: c for c in old["challenges"]}["cruel"]["attempted"] is True
        future = await ann.request({"type": "daily", "date": "2026-11-23"})
        assert future["type"] == "error" and future["code"] == "not_found"
        bad = await ann.request({"type": "daily", "date": "2026-02-30"})
        assert bad["type"] == "error" and bad["code"] == "bad_request"
    finally:
        await ann.close()


@ON_BOTH_DATABASES
async def test_two_players_same_daily_one_ranked_attempt_each(daily_app: tuple[App, WallClock]) -> None:
    app, wall = daily_app
    wall.now = WINNABLE_DAY  # its Cruel daily has a winning line the test solver finds
    ann, bob = await player(app, "ann"), await player(app, "bob")
    try:
        a = await ann.request({"type": "start_daily", "game": "cruel"})
        b = await bob.request({"type": "start_daily", "game": "cruel"})
        assert a["view"] == b["view"] and a["daily"]["ranked"] and b["daily"]["ranked"]
        line = winning_line("cruel", a["deal"])
        assert line is not None
        await finish(bob, None)
        await finish(ann, line)
        board = await ann.request({"type": "leaderboard", "board": "daily", "game": "cruel"})
        assert [(e["name"], e["outcome"]) for e in board["entries"]] == [("ann", "won"), ("bob", "resigned")]
        assert board["total"] == 2 and board["entries"][0]["moves"] == len(line)

        # A replay is unranked: it never reaches the daily board, whatever its result.
        again = await bob.request({"type": "start_daily", "game": "cruel"})
        assert again["daily"]["ranked"] is False
        await finish(bob, line)
        board = await bob.request({"type": "leaderboard", "board": "daily", "game": "cruel"})
        assert [(e["name"], e["outcome"]) for e in board["entries"]] == [("ann", "won"), ("bob", "resigned")]
        # ...but it is on the deal's own board, which counts every race on that deal.
        deal_board = await bob.request({"type": "leaderboard", "board": "deal", "game": "cruel", "deal": a["deal"]})
        assert deal_board["total"] == 2
        profile = await bob.request({"type": "profile"})
        assert profile["daily_streak"] == 1 and {g["game"]: g["games"] for g in profile["games"]} == {"cruel": 2}
        assert profile["games"][0]["wins"] == 1  # the unranked replay's win still counts in stats
        # The latest results, newest first: the replay (a race of one, no daily date), then the ranked attempt.
        recent = [(r["outcome"], r["daily_date"], r["rank"], r["racers"], r["deal"]) for r in profile["recent"]]
        assert recent == [("won", None, 1, 1, a["deal"]), ("resigned", a["daily"]["date"], 1, 1, a["deal"])]
    finally:
        await ann.close()
        await bob.close()


@ON_BOTH_DATABASES
async def test_disconnect_does_not_stop_the_daily_clock(daily_app: tuple[App, WallClock]) -> None:
    app, _ = daily_app
    ann = await player(app, "ann")
    first = await ann.request({"type": "start_daily", "game": "perseverance"})
    await ann.request({"type": "move", "moves": ["r"]})
    await ann.close()
    await asyncio.sleep(0.05)
    back = await Client.connect(app)
    try:
        await back.hello(token=ann.token)
        resumed = await back.request({"type": "start_daily", "game": "perseverance"})
        assert resumed["daily"]["ranked"] is True  # the same ranked attempt, resumed
        assert resumed["moves"] == 1 and resumed["elapsed_ms"] >= 50 and resumed["deal"] == first["deal"]
    finally:
        await back.close()


@ON_BOTH_DATABASES
async def test_a_new_connection_resumes_an_attempt_its_older_one_is_starting(
    daily_app: tuple[App, WallClock]
) -> None:
    """The player's start_daily on an older connection is still being served when a newer
    one signs in and sends its own: the newer one resumes the attempt the older one started,
    not `already_in_race` (whose "leave race ... first" would give the ranked attempt up)."""
    app, _ = daily_app
    games = sorted(app.races.queries.games)
    for i in range(8 * len(games)):  # the two requests meet in a few of these, in no fixed one
        game = games[i % len(games)]
        old = await player(app, f"p{i}")
        new = await Client.connect(app)
        try:
            await asyncio.gather(
                old.send({"type": "start_daily", "game": game, "id": "old"}),
                new.send({"type": "hello", "token": old.token, "id": "hello"}),
                new.send({"type": "start_daily", "game": game, "id": "new"}),
            )
            resumed = await new.expect(lambda m: m.get("id") == "new")
            assert resumed["type"] == "race_started" and resumed["daily"]["ranked"] is True, (game, resumed)
        finally:
            await old.close()
            await new.close()


@ON_BOTH_DATABASES
async def test_start_daily_is_served_one_at_a_time_per_player(tmp_path: Path, database: Database) -> None:
    """Two start_daily of one player in flight together (the older connection's request
    still being served when the newer one's arrives), here both waiting for the day's deal
    of a server just started: the second waits for the first and resumes its attempt, so
    there is one room, ranked. Served side by side, both would pass their checks before
    either made its room: two rooms, the player seated in the unranked one."""
    app = await App.start(make_config(tmp_path, db_url=database.url), wall_clock=WallClock(DAY))
    try:
        ann = await app.store.create_player("ann", "0" * 64, DAY)
        request = p.StartDaily(game="patriarchs")
        await asyncio.gather(app.races.start_daily(ann, request), app.races.start_daily(ann, request))
        rooms = [room for key, room in app.races.daily_rooms.items() if key[0] == ann.id]
        assert len(rooms) == 1 and rooms[0].daily is not None and rooms[0].daily["ranked"] is True
        assert app.races.seats[ann.id] is rooms[0]
    finally:
        await app.stop()


async def test_a_start_daily_waiting_at_shutdown_starts_no_new_choice(tmp_path: Path) -> None:
    """A player's second start_daily waits behind the first, which waits for the day's deal
    being chosen, when the server stops: the stop cancels the choice, and the second request,
    let in then, is refused rather than starting the choice (and a solver) again."""
    gate = asyncio.Event()  # never set: Patriarchs' deal is still being chosen at the stop
    held_back = held_back_chooser(TEST_SECRET.encode(), gate)
    asked: list[str] = []

    async def choose(game_id: str, day: date) -> Any:
        asked.append(game_id)
        return await held_back(game_id, day)

    app = await App.start(make_config(tmp_path), wall_clock=WallClock(DAY), choose_daily=choose)
    stopped = False
    try:
        ann = await app.store.create_player("ann", "0" * 64, DAY)
        request = p.StartDaily(game="patriarchs")
        starts = [asyncio.ensure_future(app.races.start_daily(ann, request)) for _ in range(2)]
        async with asyncio.timeout(10):
            while "patriarchs" not in asked:
                await asyncio.sleep(0.01)
        await asyncio.wait_for(app.stop(), 10)
        stopped = True
        outcomes = await asyncio.gather(*starts, return_exceptions=True)
        assert all(isinstance(o, BaseException) for o in outcomes), outcomes  # neither started an attempt
        assert asked.count("patriarchs") == 1 and not app.races.daily_rooms
    finally:
        if not stopped:
            await app.stop()


@ON_BOTH_DATABASES
async def test_todays_daily_deal_cannot_be_practised_in_a_race(daily_app: tuple[App, WallClock]) -> None:
    app, _ = daily_app
    ann = await player(app, "ann")
    try:
        deal = daily_deal_number(TEST_SECRET.encode(), "clock", DAY.date())
        reply = await ann.request({"type": "create_race", "game": "clock", "deal": deal})
        assert reply["type"] == "error" and reply["code"] == "bad_request"
    finally:
        await ann.close()


@ON_BOTH_DATABASES
async def test_http_api_answers_match_the_protocol(daily_app: tuple[App, WallClock]) -> None:
    app, _ = daily_app
    ann, bob = await player(app, "ann"), await player(app, "bob")
    try:
        for c in (ann, bob):
            await c.request({"type": "start_daily", "game": "cruel"})
            await finish(c, None)
        me = ann.player["id"]  # type: ignore[index]

        pairs: list[tuple[dict[str, Any], str]] = [
            ({"type": "daily"}, f"/api/daily?me={me}"),
            (
                {"type": "leaderboard", "board": "daily", "game": "cruel", "page_size": 1},
                f"/api/leaderboard/daily/cruel?page_size=1&me={me}",
            ),
            ({"type": "leaderboard", "board": "wins", "game": "cruel"}, f"/api/leaderboard/wins/cruel?me={me}"),
            (
                {"type": "leaderboard", "board": "win_rate", "game": "cruel", "min_games": 1},
                f"/api/leaderboard/win_rate/cruel?min_games=1&me={me}",
            ),
            ({"type": "profile", "player_id": me}, f"/api/players/{me}"),
        ]
        for request, path in pairs:
            via_ws = await ann.request(request)
            status, via_http = await http_json(app, path)
            assert status == 200
            assert {k: v for k, v in via_ws.items() if k not in ("type", "id")} == via_http, path

        assert (await http_json(app, "/api/leaderboard/fastest/chess"))[0] == 404
        assert (await http_json(app, "/api/leaderboard/deal/cruel"))[0] == 400
        assert (await http_json(app, "/api/leaderboard/wins/cruel?page=0"))[0] == 400
        assert (await http_json(app, "/api/players/999999"))[0] == 404
        assert (await http_json(app, "/api/nope"))[0] == 404
    finally:
        await ann.close()
        await bob.close()


def test_streak_counts_consecutive_days() -> None:
    today = date(2026, 11, 21)
    assert streak([], today) == 0
    assert streak(["2026-11-21", "2026-11-20", "2026-11-18"], today) == 2
    assert streak(["2026-11-20", "2026-11-19"], today) == 2  # today not played yet: still alive
    assert streak(["2026-11-19"], today) == 0
