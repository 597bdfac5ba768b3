"""Fair play: a stall of the server is charged to no racer (``race_clock.py``); new
identities are limited per client address."""

from __future__ import annotations

import asyncio
import random
import re
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from solitaire_race.app import App
from solitaire_race.race_clock import RaceClock

from .conftest import ON_BOTH_DATABASES, Client, make_config
from .databases import Database
from .test_crash import DEAL, GAME, LINE, Server, connect


class Source:
    """A monotonic source the test moves by hand."""

    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_the_race_clock_leaves_stalls_out() -> None:
    source = Source()
    clock = RaceClock(source, tick_s=0.05, stall_s=0.25)
    start = clock.now()
    for _ in range(10):  # the loop turning: every reading within a tick of the last
        source.now += 0.05
        clock.now()
    assert abs(clock.now() - start - 0.5) < 1e-9 and clock.stalled == 0
    source.now += 0.2  # a busy moment, under the threshold: time as it is
    assert abs(clock.now() - start - 0.7) < 1e-9
    source.now += 18.0  # the process was stopped for 18 s
    assert abs(clock.now() - start - 0.75) < 1e-9  # only the tick the ticker would have taken counts
    assert abs(clock.stalled - 17.95) < 1e-9
    source.now += 0.05
    assert abs(clock.now() - start - 0.8) < 1e-9  # and time runs on from there


async def test_a_sigstop_of_the_server_is_charged_to_no_racer(tmp_path: Path) -> None:
    """A real SIGSTOP of the server process, mid-race: the racer still playing is not
    charged the 3 s the server was stopped, as the one who had finished was not."""
    server = Server(tmp_path / "race.sqlite3")
    server.start()
    assert server.proc is not None
    try:
        ann, bob = await connect(server), await connect(server)
        await ann.hello("ann")
        await bob.hello("bob")
        code = (await ann.request({"type": "create_race", "game": GAME, "deal": DEAL}))["race"]["code"]
        await bob.request({"type": "join_race", "code": code})
        await ann.request({"type": "start_race"})
        await ann.expect("race_started")
        await bob.expect("race_started")
        started = time.monotonic()
        assert (await bob.request({"type": "move", "moves": [LINE[0]]}))["moves"] == 1
        for at in range(0, len(LINE), 64):  # ann wins before the stall
            won = await ann.request({"type": "move", "moves": list(LINE[at : at + 64])})
        assert won["outcome"] == "won"
        server.proc.send_signal(signal.SIGSTOP)
        await asyncio.sleep(3.0)
        server.proc.send_signal(signal.SIGCONT)
        assert (await bob.request({"type": "resign"}))["type"] == "progress"
        real_ms = (time.monotonic() - started) * 1000
        ranking = {r["name"]: r for r in (await bob.expect("race_finished", timeout=10))["ranking"]}
        assert ranking["ann"]["outcome"] == "won" and ranking["bob"]["outcome"] == "resigned"
        # bob's time is the real time less the 3 s stop (within the ticker's slack).
        assert ranking["bob"]["time_ms"] < real_ms - 2_500, (ranking["bob"]["time_ms"], real_ms)
        await ann.close()
        await bob.close()
    finally:
        server.stop()


async def test_new_identities_are_limited_per_client_address(tmp_path: Path) -> None:
    """Identities are free, but not in bulk: past ``new_players_per_hour`` from one
    address, a new one is refused (rate_limited); signing in with a token is never limited."""
    app = await App.start(make_config(tmp_path, new_players_per_hour=3))
    made: list[Client] = []
    try:
        for name in ("ann", "bob", "cat"):
            client = await Client.connect(app)
            made.append(client)
            assert (await client.hello(name))["type"] == "welcome"
        extra = await Client.connect(app)
        made.append(extra)
        refused = await extra.hello("dan")
        assert refused["type"] == "error" and refused["code"] == "rate_limited", refused
        assert "new players from your address" in refused["message"]
        assert (await extra.hello(token=made[0].token))["player"]["name"] == "ann"  # a token: never limited
    finally:
        for client in made:
            await client.close()
        await app.stop()


# --- plausible play (fair_play.py) ----------------------------------------------------------

def _assess(moves: list[str], times: list[int], won: bool = True) -> Any:
    from solitaire_race.engine import get_game
    from solitaire_race.fair_play import assess

    return assess(get_game(GAME), moves, times, won, times[-1] if times else None)


def test_a_line_sent_in_two_messages_is_held_whatever_its_time() -> None:
    half = len(LINE) // 2
    held = _assess(list(LINE), [130] * half + [218] * (len(LINE) - half))  # the attack of issue 22
    assert held.held and held.evidence["largest_batch"] > 2
    assert any("in one message" in reason for reason in held.reasons)
    assert any("won in 0.2 s" in reason for reason in held.reasons)


def test_one_move_per_message_faster_than_a_person_is_held() -> None:
    times = [1500 + 40 * i for i in range(len(LINE))]  # 25 messages a second
    held = _assess(list(LINE), times)
    assert held.held and any("faster than a person" in reason for reason in held.reasons)


def test_play_at_a_persons_pace_is_not_held() -> None:
    rng = random.Random(5)
    at, times = 2500, []
    for _ in LINE:
        at += rng.randint(250, 1500)  # a click or two per move
        times.append(at)
    found = _assess(list(LINE), times)
    assert not found.held and found.reasons == (), found


def test_moves_home_sent_together_are_a_persons_too() -> None:
    """The terminal client's "f" sends every move home at once; a few of those bursts in a
    game at a person's pace are not a program's."""
    from solitaire_race.engine import Kind, get_game

    game = get_game(GAME)
    home = [m for m in LINE if game.parse_move(m).kind is Kind.HOME]
    others = [m for m in LINE if game.parse_move(m).kind is not Kind.HOME]
    assert len(home) >= 6 and len(others) >= 10
    moves = others + home  # (an order for the assessment only: it reads kinds and times)
    times = [2000 + 700 * i for i in range(len(others))]
    times += [times[-1] + 700] * len(home)  # all home in one message
    found = _assess(moves, times, won=False)
    assert not found.held, found
    assert found.evidence["largest_batch"] == 1  # the burst home counts none


def test_a_win_in_less_time_than_reading_the_layout_takes_is_held() -> None:
    times = [300 + 130 * i for i in range(len(LINE))]  # 7.7 moves a second: won within 10 s
    found = _assess(list(LINE), times)
    assert found.held and found.reasons == (found.reasons[0],) and "reading the layout" in found.reasons[0]
    assert not _assess(list(LINE), times, won=False).held  # the same pace, not a win: no rule broken


# --- held results, on the real server ----------------------------------------------------

async def _review_cli(app: App, *args: str, code: int = 0) -> str:
    done = await asyncio.to_thread(
        subprocess.run, [sys.executable, "-m", "solitaire_race.cli", "review", "--db", app.config.db_url, *args],
        capture_output=True, text=True, timeout=60, check=False,
    )
    assert done.returncode == code, done.stderr
    assert "Traceback" not in done.stderr
    return done.stdout if code == 0 else done.stderr


@ON_BOTH_DATABASES
async def test_the_attacks_are_held_off_the_boards_and_an_operator_reviews_them(
    tmp_path: Path, database: Database
) -> None:
    from .test_daily import WINNABLE_DAY, WallClock, player, winning_line

    config = make_config(tmp_path, fair_play_holds=True, db_url=database.url)
    app = await App.start(config, wall_clock=WallClock(WINNABLE_DAY))
    ann, bob = await player(app, "ann"), await player(app, "bob")
    try:
        started = await ann.request({"type": "start_daily", "game": "cruel"})
        line = winning_line("cruel", started["deal"])
        assert line is not None and len(line) > 20
        # The attack of issue 22: a line found elsewhere, sent in two messages.
        half = len(line) // 2
        for part in (line[:half], line[half:]):
            assert (await ann.request({"type": "move", "moves": part}))["rejected"] is None
        mine = (await ann.expect("race_finished"))["ranking"][0]
        assert mine["outcome"] == "won" and mine["held"] is True  # its owner sees it, marked as held
        # Its variant: one move a message, as fast as the server's rate limit lets a program.
        assert (await bob.request({"type": "start_daily", "game": "cruel"}))["deal"] == started["deal"]
        for move in line:
            assert (await bob.request({"type": "move", "moves": [move]}))["rejected"] is None
            await asyncio.sleep(0.055)  # 18 messages a second: under the limit of 20
        assert (await bob.expect("race_finished"))["ranking"][0]["held"] is True

        async def board(kind: str) -> list[str]:
            asked = {"type": "leaderboard", "board": kind, "game": "cruel"}
            page = await ann.request({**asked, "deal": started["deal"]} if kind == "deal" else asked)
            return [e["name"] for e in page["entries"]]

        assert await board("daily") == [] and await board("deal") == [] and await board("fastest") == []
        held_profile = await ann.request({"type": "profile"})
        assert held_profile["games"] == [] and held_profile["recent"] == []  # neither stats nor a recent race

        listed = await _review_cli(app)
        assert "ann" in listed and "in one message" in listed and "bob" in listed and "faster than a person" in listed
        found = {name: re.search(rf"race (\d+) \(\w+, daily [\d-]+\) player (\d+) {name}:", listed)
                 for name in ("ann", "bob")}
        race = {name: int(m.group(1)) for name, m in found.items() if m}
        ids = {name: int(m.group(2)) for name, m in found.items() if m}
        assert set(race) == {"ann", "bob"}, listed
        await _review_cli(app, "clear", str(race["bob"]), str(ids["bob"]))  # say a person can: on the boards
        assert await board("daily") == ["bob"] and await board("fastest") == ["bob"]
        await _review_cli(app, "confirm", str(race["ann"]), str(ids["ann"]))
        assert "no held results to review" in await _review_cli(app)
        assert await board("daily") == ["bob"]
        # A ban holds every result of the player, and their next ones; none can be cleared.
        assert "1 results held" in await _review_cli(app, "ban", str(ids["bob"]))
        assert await board("daily") == [] and await board("fastest") == []
        refused = await _review_cli(app, "clear", str(race["bob"]), str(ids["bob"]), code=2)
        assert "banned" in refused or "confirmed" in refused
        assert await board("daily") == []
        # Unknown ids are said plainly.
        assert "no player 999" in await _review_cli(app, "ban", "999", code=2)
        assert "no held result" in await _review_cli(app, "clear", "999", "999", code=2)
    finally:
        await ann.close()
        await bob.close()
        await app.stop()


@ON_BOTH_DATABASES
async def test_a_win_at_a_persons_pace_goes_on_the_board(tmp_path: Path, database: Database) -> None:
    from .test_daily import WINNABLE_DAY, WallClock, player, winning_line

    config = make_config(tmp_path, fair_play_holds=True, db_url=database.url)
    app = await App.start(config, wall_clock=WallClock(WINNABLE_DAY))
    ann = await player(app, "ann")
    try:
        started = await ann.request({"type": "start_daily", "game": "cruel"})
        line = winning_line("cruel", started["deal"])
        assert line is not None
        pause = max(0.16, 10.5 / len(line))  # gaps over 120 ms, the game over 10 s: a fast person
        for move in line:
            assert (await ann.request({"type": "move", "moves": [move]}))["rejected"] is None
            await asyncio.sleep(pause)
        assert (await ann.expect("race_finished"))["ranking"][0]["held"] is False
        page = await ann.request({"type": "leaderboard", "board": "daily", "game": "cruel"})
        assert [e["name"] for e in page["entries"]] == ["ann"]
    finally:
        await ann.close()
        await app.stop()


def test_a_few_moves_typed_on_one_line_are_a_persons_and_a_flood_is_not() -> None:
    from solitaire_race.engine import Kind, get_game

    game = get_game(GAME)
    others = [m for m in LINE if game.parse_move(m).kind is not Kind.HOME][:14]
    assert len(others) == 14
    at, times = 3000, []
    for i in range(len(others)):  # two messages of 3 a second apart, and so on: a person typing
        at += 1000 if i % 3 == 0 else 0
        times.append(at)
    assert not _assess(others, times, won=False).held
    flood = _assess(others, [3000] * 7 + [4000 + 800 * i for i in range(7)], won=False)
    assert flood.held and flood.evidence["largest_batch"] == 7


def test_a_one_key_game_is_not_held_for_its_pace() -> None:
    """Clock is played with one key (its quick move): a key held down is not a program."""
    from solitaire_race.engine import get_game
    from solitaire_race.fair_play import assess

    clock = get_game("clock")
    assert clock.quick_move == "p"
    found = assess(clock, ["p"] * 60, [500 + 30 * i for i in range(60)], True, 500 + 30 * 59)
    assert not found.held, found
    assert assess(clock, ["p"] * 60, [500] * 60, True, 500).held  # sixty in one message still is
