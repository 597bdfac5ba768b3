"""Fair play: a stall of the server is charged to no racer (``race_clock.py``); new
identities are limited per client address."""

from __future__ import annotations

import asyncio
import signal
import time
from pathlib import Path

from solitaire_race.app import App
from solitaire_race.race_clock import RaceClock

from .conftest import Client, make_config
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
    start = clock()
    for _ in range(10):  # the loop turning: every reading within a tick of the last
        source.now += 0.05
        clock()
    assert abs(clock() - start - 0.5) < 1e-9 and clock.stalled == 0
    source.now += 0.2  # a busy moment, under the threshold: time as it is
    assert abs(clock() - start - 0.7) < 1e-9
    source.now += 18.0  # the process was stopped for 18 s
    assert abs(clock() - start - 0.75) < 1e-9  # only the tick the ticker would have taken counts
    assert abs(clock.stalled - 17.95) < 1e-9
    source.now += 0.05
    assert abs(clock() - start - 0.8) < 1e-9  # and time runs on from there


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
