"""Crash recovery for real: the server process is killed with SIGKILL mid-race.

Every move the server acknowledged must still be applied after the restart, exactly once;
a move that was in flight (sent, never acknowledged) may be applied or not, never twice.
"""

from __future__ import annotations

import asyncio
import os
import re
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

from solitaire_race.engine import get_game

from .conftest import ON_BOTH_DATABASES, TEST_SECRET, Client
from .databases import Database
from .support import winnable_deal

GAME = "cruel"
DEAL, LINE = winnable_deal(GAME, TEST_SECRET.encode())


class Server:
    """``solitaire-race serve`` in its own process, on a free port and a given database (a
    SQLite file, or a database URL); ``options`` are more of serve's options."""

    def __init__(self, db: Path | str, *options: str) -> None:
        self.db = db
        self.db_url = f"sqlite+aiosqlite:///{db}" if isinstance(db, Path) else db
        self.options = options
        self.proc: subprocess.Popen[str] | None = None
        self.url = ""
        self.output: list[str] = []  # what it printed (standard output and error) until the URL

    @property
    def file(self) -> Path:
        """The SQLite file it serves."""
        assert isinstance(self.db, Path), self.db
        return self.db

    def start(self) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "solitaire_race.cli", "serve", "--port", "0", "--secret", TEST_SECRET,
             "--db", self.db_url, "--daily-solver-nodes", "0", *self.options],
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env={**os.environ, "PYTHONUNBUFFERED": "1"},
        )
        self.output = []
        for _ in range(100):  # bounded: a few log lines come before the URL
            line = self.proc.stdout.readline()  # type: ignore[union-attr]
            self.output.append(line)
            if match := re.search(r"websocket (ws://[^\s,]+)", line):
                self.url = match.group(1)
                return
            if not line:
                break
        raise AssertionError("the server did not start:\n" + "".join(self.output))

    def rest_of_output(self) -> str:
        """Everything it printed after the URL, once it has exited."""
        assert self.proc is not None and self.proc.poll() is not None
        return self.proc.stdout.read()  # type: ignore[union-attr]

    def kill(self) -> None:
        assert self.proc is not None
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait(timeout=10)

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.proc.kill()


class Endpoint:
    def __init__(self, url: str) -> None:
        self.ws_url = url


async def connect(server: Server) -> Client:
    return await Client.connect(Endpoint(server.url))  # type: ignore[arg-type]


def replayed_view(moves: list[str]) -> dict[str, Any]:
    game = get_game(GAME)
    state = game.deal(DEAL, TEST_SECRET.encode())
    for text in moves:
        state = game.apply(state, game.parse_move(text))
    return game.view(state)


@ON_BOTH_DATABASES
async def test_sigkill_mid_race_loses_no_acknowledged_move(database: Database) -> None:
    server = Server(database.path or database.url)
    server.start()
    racers: list[Client] = []
    try:
        for name in ("ann", "bob", "cat"):
            client = await connect(server)
            await client.hello(name)
            racers.append(client)
        room = await racers[0].request({"type": "create_race", "game": GAME, "deal": DEAL})
        code = room["race"]["code"]
        for guest in racers[1:]:
            await guest.request({"type": "join_race", "code": code})
        await racers[0].request({"type": "start_race"})
        for client in racers:
            await client.expect("race_started")

        # Each racer plays a different number of moves, one acknowledged move at a time,
        # all three at once.
        acked: dict[str, list[str]] = {"ann": [], "bob": [], "cat": []}

        async def play(client: Client, name: str, count: int) -> None:
            for text in LINE[:count]:
                reply = await client.request({"type": "move", "moves": [text]})
                assert reply["applied"] == [text]
                acked[name].append(text)

        await asyncio.gather(play(racers[0], "ann", 30), play(racers[1], "bob", 17), play(racers[2], "cat", 5))
        # One move in flight: sent, not acknowledged when the server dies.
        await racers[1].send({"type": "move", "moves": [LINE[17]], "id": "in-flight"})
        server.kill()
    finally:
        for client in racers:
            client.ws.transport.abort()  # the server is gone: no closing handshake to wait for

    server.start()  # the same database
    try:
        tokens = {c.player["name"]: c.token for c in racers}  # type: ignore[index]
        for name, moves in acked.items():
            client = await connect(server)
            try:
                await client.hello(token=tokens[name])
                await client.request({"type": "join_race", "code": code})
                resumed = await client.expect("race_started")
                if name == "bob" and resumed["moves"] == len(moves) + 1:
                    moves = moves + [LINE[17]]  # the in-flight move made it to disk: fine, once
                assert resumed["moves"] == len(moves), name
                assert resumed["view"] == replayed_view(moves), name
                if name == "ann":  # the game goes on from there, to the win
                    rest = LINE[len(moves):]
                    for i in range(0, len(rest), 64):
                        reply = await client.request({"type": "move", "moves": list(rest[i : i + 64])})
                        assert reply["rejected"] is None
                    assert reply["outcome"] == "won" and reply["moves"] == len(LINE)
            finally:
                await client.close()
    finally:
        server.stop()
