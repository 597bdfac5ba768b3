"""The terminal client driven in a real pseudo-terminal (pexpect) against the real server
on 127.0.0.1: a person creates a race, an opponent joins over the protocol, the person
starts it, plays a legal move by its short form and an illegal one, sees the server's
reason and the opponent's progress, opens the help, and finishes; the token is kept. A hint
is refused on today's daily deal and shown in practice of a past day's. Names and messages
with terminal escape sequences, from the real server or from a hostile one, reach the
terminal as visible, harmless text."""

from __future__ import annotations

import asyncio
import io
import json
import os
import re
import sqlite3
import stat
import sys
from datetime import timedelta
from pathlib import Path
from typing import Any

import pexpect
from websockets.asyncio.server import ServerConnection, serve

from solitaire_race.app import App
from solitaire_race.engine import IllegalMove, get_game
from solitaire_race.store import hash_token

from .conftest import TEST_SECRET, make_config
from .support import winnable_deal
from .test_daily import WINNABLE_DAY, WallClock  # its Perseverance daily has a solution

SECRET = TEST_SECRET.encode()
SGR = r"(?:\x1b\[[0-9;]*m)*"  # colour codes that may sit between parts of a line


def spawn(app: App | str, config_home: Path, *args: str, columns: int = 100) -> pexpect.spawn[str]:
    """The client in a pty, playing on ``app`` (or the server at a websocket URL)."""
    env = {**os.environ, "XDG_CONFIG_HOME": str(config_home), "TERM": "xterm-256color"}
    env.pop("NO_COLOR", None)
    return pexpect.spawn(
        sys.executable,
        ["-m", "solitaire_race.cli", "play", "--server", app if isinstance(app, str) else app.ws_url, *args],
        env=env, encoding="utf-8", dimensions=(45, columns), timeout=10,
    )


async def expect(child: pexpect.spawn[str], pattern: str | type[pexpect.EOF]) -> Any:
    """Wait for a regex in the client's output without blocking the server's event loop."""
    await asyncio.to_thread(child.expect, pattern)
    return child.match


def illegal_build(deal: int, played: list[str]) -> tuple[str, str]:
    """A pile-to-pile move that is illegal after ``played``, and the engine's reason."""
    game = get_game("cruel")
    state = game.deal(deal, SECRET)
    for move in played:
        state = game.apply(state, game.parse_move(move))
    for src in range(1, 13):
        for dst in range(1, 13):
            if src != dst and state.piles[src - 1] and state.piles[dst - 1]:
                try:
                    game.apply(state, game.parse_move(f"{src}>{dst}"))
                except IllegalMove as exc:
                    return f"{src}>{dst}", str(exc)
    raise AssertionError("no illegal move found")


async def test_a_race_in_a_terminal(app: App, clients: Any, tmp_path: Path) -> None:
    deal, line = winnable_deal("cruel", SECRET)
    first = line[0]
    config_home = tmp_path / "config"
    child = spawn(app, config_home, "--name", "ann", "--game", "cruel", "--deal", str(deal))
    try:
        code = (await expect(child, r"play --join ([BCDFGHJKMNPQRTVWXY]{6})")).group(1)

        bob = await clients("bob")
        assert (await bob.request({"type": "join_race", "code": code}))["type"] == "room"
        await expect(child, r"bob" + SGR + r"\s+" + SGR + "not ready")

        child.sendline("start")
        await bob.expect("race_started")
        await expect(child, r"Piles \(top card on the right\)")
        await expect(child, "move> ")

        # A legal move by its short form: the pile number alone.
        short = first.removesuffix(">f") if first.endswith(">f") else first
        child.sendline(short)
        await expect(child, "✓ " + SGR + re.escape(first))
        await expect(child, r"ann" + SGR + r" .*? 5/52 ")

        # An illegal move: the server's reason is shown.
        bad, reason = illegal_build(deal, [first])
        child.sendline(bad)
        await expect(child, re.escape(f"✗ {bad}: {reason}"))

        # The opponent's progress shows up as it happens.
        reply = await bob.request({"type": "move", "moves": list(line[:3])})
        assert reply["rejected"] is None
        await expect(child, r"bob" + SGR + r" .*? " + str(reply["progress"]["home"]) + "/52 .*? 3 ")

        # The help key (no Enter needed), and again to close it.
        child.send("?")
        await expect(child, "How to play Cruel")
        child.send("?")
        await expect(child, r"Piles \(top card on the right\)")

        child.sendline("resign")
        await expect(child, "you resigned")
        await bob.request({"type": "resign"})
        await expect(child, "Result")  # the ranking, then below it:
        await expect(child, "race over: you are")

        # bob asks for a rematch: the terminal says so, and `again` joins his room.
        rematch = await bob.request({"type": "rematch", "same_deal": True})
        await expect(child, "bob proposes a rematch on the same deal: type again to join")
        child.sendline("again")
        joined = await bob.expect(lambda m: m["type"] == "room" and m["race"]["code"] == rematch["race"]["code"])
        assert [p["name"] for p in joined["race"]["players"]] == ["bob", "ann"]
        await expect(child, "play --join " + rematch["race"]["code"])
        child.sendline("quit")
        await expect(child, pexpect.EOF)
    finally:
        child.close(force=True)
    assert child.exitstatus == 0

    # The identity is kept in the config directory, readable by its owner only.
    path = config_home / "solitaire-race" / "client.json"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    kept = json.loads(path.read_text())["servers"][app.ws_url]
    assert kept["name"] == "ann" and len(kept["token"]) >= 40 and "race" not in kept

    # Next time no name is needed: the client signs in with the kept token.
    again = spawn(app, config_home)
    try:
        await expect(again, " · ann · ")
        await expect(again, "Open races")
        again.sendline("quit")
        await expect(again, pexpect.EOF)
    finally:
        again.close(force=True)
    assert again.exitstatus == 0
    player = await app.store.player_by_name("ann")
    assert player is not None


async def test_quit_mid_race_and_resume(app: App, tmp_path: Path) -> None:
    """Quitting while playing keeps the race; the next start resumes it where it was."""
    config_home = tmp_path / "config"
    child = spawn(app, config_home, "--name", "cat", "--game", "clock", "--deal", "3")
    try:
        code = (await expect(child, r"play --join ([BCDFGHJKMNPQRTVWXY]{6})")).group(1)
        child.sendline("start")
        await expect(child, "move> ")
        child.sendline("")  # Enter plays in Clock
        await expect(child, "✓ " + SGR + "p")
        child.sendline("quit")
        await expect(child, "resume within a minute with  solitaire-race play --join " + code)
        await expect(child, pexpect.EOF)
    finally:
        child.close(force=True)

    back = spawn(app, config_home)
    try:
        await expect(back, "resumed race " + code)
        await expect(back, r"cat" + SGR + r" .*? 1 ")  # one move made so far
        back.sendline("leave")
        await expect(back, "left race " + code)
        back.sendline("quit")
        await expect(back, pexpect.EOF)
    finally:
        back.close(force=True)
    assert back.exitstatus == 0


async def test_reconnects_after_a_dropped_connection(app: App, tmp_path: Path) -> None:
    """A connection lost mid-race (not closed by anyone) is re-opened and the race goes on."""
    child = spawn(app, tmp_path / "config", "--name", "dan", "--game", "clock", "--deal", "4")
    try:
        await expect(child, r"play --join ([BCDFGHJKMNPQRTVWXY]{6})")
        child.sendline("start")
        await expect(child, "move> ")
        child.sendline("p")
        await expect(child, "✓ " + SGR + "p")
        for connection in list(app.server.connections):
            assert connection.transport is not None
            connection.transport.abort()  # as if the network went away
        await expect(child, "connection lost: reconnecting")
        await expect(child, "✓ " + SGR + "reconnected")
        child.sendline("p")
        await expect(child, r"dan" + SGR + r" .*? 2 ")  # the second move counted in the same game
        child.sendline("quit")
        await expect(child, pexpect.EOF)
    finally:
        child.close(force=True)


async def test_help_wraps_between_words_at_80_columns(app: App, tmp_path: Path) -> None:
    """The help's lines longer than the terminal go on under their text, never cut inside a
    word by the terminal ("do/wn")."""
    child = spawn(app, tmp_path / "config", "--name", "ivy", columns=80)
    try:
        await expect(child, "Open races")
        child.send("?")
        # the end of one line, whatever the client writes between lines, then the next one
        # (a line break at least: the terminal's own wrapping writes none)
        between = r" *(?:\x1b\[[0-9;?]*[A-Za-z]|[\r\n])(?:\x1b\[[0-9;?]*[A-Za-z]|[\r\n ])*"
        await expect(child, "practise the daily challenge of a past DATE" + between + re.escape("(YYYY-MM-DD): unr"))
        child.sendline("quit")
        await expect(child, pexpect.EOF)
    finally:
        child.close(force=True)


async def test_daily_challenge_from_the_command_line(app: App, tmp_path: Path) -> None:
    child = spawn(app, tmp_path / "config", "--name", "eve", "--daily", "clock")
    try:
        await expect(child, r"daily challenge \d{4}-\d\d-\d\d \(ranked\)")
        child.sendline("")  # Enter plays in Clock
        await expect(child, "✓ " + SGR + "p")
        child.sendline("resign")
        await expect(child, "daily challenge over: resigned; leaderboard: http://127.0.0.1:")
        child.sendline("quit")
        await expect(child, pexpect.EOF)
    finally:
        child.close(force=True)
    assert child.exitstatus == 0


async def test_hint_refused_on_todays_deal_and_shown_in_practice_of_a_past_day(tmp_path: Path) -> None:
    wall = WallClock(WINNABLE_DAY)
    app = await App.start(make_config(tmp_path), wall_clock=wall)
    child = spawn(app, tmp_path / "config", "--name", "fay", "--daily", "perseverance")
    try:
        await expect(child, r"daily challenge 2026-11-01 \(ranked\)")
        child.sendline("hint")
        await expect(child, re.escape("✗ hints are for practising a past day's daily challenge only"))
        child.sendline("resign")
        await expect(child, "daily challenge over: resigned")

        child.sendline("daily perseverance")  # today's deal again: unranked, and no hints either
        await expect(child, r"daily challenge 2026-11-01 \(unranked replay\)")
        child.sendline("hint")
        await expect(child, re.escape("✗ hints are for practising a past day's daily challenge only"))
        child.sendline("leave")

        wall.now = WINNABLE_DAY + timedelta(days=1)  # the next day: that deal may be practised
        child.sendline("daily perseverance 2026-11-01")
        deal = int((await expect(child, r"deal (\d+) · daily challenge 2026-11-01 \(practice\)")).group(1))
        await expect(child, "hint · resign")  # offered in the line of commands
        child.sendline("hint")
        move = (await expect(child, r"hint: (\S+) \(the next move of a winning line\)")).group(1)
        game = get_game("perseverance")
        game.apply(game.deal(deal, SECRET), game.parse_move(move))  # legal where the player stands
        child.sendline(move)
        await expect(child, "✓ " + SGR + re.escape(move))
        child.sendline("quit")
        await expect(child, pexpect.EOF)
    finally:
        child.close(force=True)
        await app.stop()
    assert child.exitstatus == 0


# --- text from the server ----------------------------------------------------------------------
HOSTILE = "\x1b]0;pwned\x07\x1b[2J"  # sets the terminal's title, then clears the screen
SHOWN = re.escape("\\x1b]0;pwned\\x07\\x1b[2J")  # how the client shows it


def assert_harmless(output: str) -> None:
    """Everything the client wrote: ``HOSTILE`` never as the sequences it is. (The client
    clears the screen once itself, when it switches to the alternate screen.)"""
    assert "\x1b]0;pwned" not in output and "\x07" not in output
    assert output.count("\x1b[2J") == 1


async def test_a_hostile_name_relayed_by_the_server_is_shown_harmlessly(app: App, clients: Any, tmp_path: Path) -> None:
    """A name the rules refuse, stored by other means (a hand-edited database, another
    program) and relayed by the real server to the other racers."""
    path = app.config.db_url.removeprefix("sqlite+aiosqlite:///")
    with sqlite3.connect(path) as db:
        db.execute(
            "INSERT INTO players (name, name_key, token_hash, created_at) VALUES (?, 'hostile', ?, 0)",
            (HOSTILE, hash_token("hostile-token")),
        )
    child = spawn(app, tmp_path / "config", "--name", "ann", "--game", "cruel")
    child.logfile_read = output = io.StringIO()
    try:
        code = (await expect(child, r"play --join ([BCDFGHJKMNPQRTVWXY]{6})")).group(1)
        hostile = await clients()
        assert (await hostile.hello(token="hostile-token"))["player"]["name"] == HOSTILE
        assert (await hostile.request({"type": "join_race", "code": code}))["type"] == "room"
        await expect(child, SHOWN + SGR + r"\s+" + SGR + "not ready")
        child.sendline("quit")
        await expect(child, pexpect.EOF)
    finally:
        child.close(force=True)
    assert_harmless(output.getvalue())


async def test_a_hostile_server_cannot_drive_the_terminal(tmp_path: Path) -> None:
    """A server that puts escape sequences in every text it sends (the player's name, a
    game's summary, race codes and players, error codes and messages, the close reason):
    the client shows them all as text."""

    async def hostile(ws: ServerConnection) -> None:
        async for raw in ws:
            request = json.loads(raw)
            kind = request["type"]
            if kind == "hello":
                reply: dict[str, Any] = {"type": "welcome", "player": {"id": 1, "name": "me" + HOSTILE}, "token": "t"}
            elif kind == "list_games":
                reply = {"type": "games", "games": [{"id": "cruel", "name": "Cruel", "summary": "rules" + HOSTILE}]}
            elif kind == "list_races":
                reply = {"type": "races", "races": [
                    {"code": "BCD" + HOSTILE, "game": "cruel", "deal": 1, "players": [{"name": "racer" + HOSTILE}]}
                ]}
            else:
                reply = {"type": "error", "code": "no" + HOSTILE, "message": "refused" + HOSTILE}
            await ws.send(json.dumps({**reply, "id": request.get("id")}))
            if kind == "join_race":
                await ws.send(json.dumps({"type": "error", "code": "x", "message": "event" + HOSTILE}))
                await ws.close(4000, "bye" + HOSTILE)

    async with serve(hostile, "127.0.0.1", 0) as server:
        port = server.sockets[0].getsockname()[1]
        child = spawn(f"ws://127.0.0.1:{port}/ws", tmp_path / "config", "--name", "ann")
        child.logfile_read = output = io.StringIO()
        try:
            await expect(child, "solitaire-race" + SGR + " · me" + SHOWN)
            await expect(child, "rules" + SHOWN)
            await expect(child, "BCD" + SHOWN + ".*racer" + SHOWN)
            child.sendline("join BCDFGH")
            await expect(child, "refused" + SHOWN)
            await expect(child, "event" + SHOWN)
            await expect(child, "bye" + SHOWN + ".*reconnecting")
            await expect(child, "reconnected")
            child.sendline("quit")
            await expect(child, pexpect.EOF)
        finally:
            child.close(force=True)
    assert_harmless(output.getvalue())
