"""``solitaire-race watch CODE``: a finished race replayed in the terminal, by the real command
in its own process against the real server: the winner's board move by move, another
racer's with ``--player``, and clear words for a racer or a race that is not there."""

from __future__ import annotations

import asyncio
import subprocess
import sys
from typing import Any

from solitaire_race.app import App
from solitaire_race.engine import get_game
from solitaire_race.tui.render import render_view

from .conftest import ON_BOTH_DATABASES, TEST_SECRET
from .support import winnable_deal

SECRET = TEST_SECRET.encode()
DEAL, LINE = winnable_deal("cruel", SECRET)


async def watch(app: App, *args: str) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "solitaire_race.cli", "watch", "--server", app.ws_url, "--no-color", *args]
    return await asyncio.to_thread(subprocess.run, command, capture_output=True, text=True, timeout=60)


@ON_BOTH_DATABASES
async def test_a_finished_race_is_watched_in_the_terminal(app: App, clients: Any) -> None:
    ann, bob = await clients("ann"), await clients("bob")
    room = await ann.request({"type": "create_race", "game": "cruel", "deal": DEAL})
    code = room["race"]["code"]
    await bob.request({"type": "join_race", "code": code})
    await ann.request({"type": "start_race"})
    for c in (ann, bob):
        await c.expect("race_started")
    for i in range(0, len(LINE), 64):
        await ann.request({"type": "move", "moves": list(LINE[i : i + 64])})
    await bob.request({"type": "move", "moves": [LINE[0]]})
    await bob.request({"type": "resign"})
    await ann.expect("race_finished")

    game = get_game("cruel")
    state = game.deal(DEAL, SECRET)
    after_one = game.apply(state, game.parse_move(LINE[0]))
    for move in LINE:
        state = game.apply(state, game.parse_move(move))

    done = await watch(app, code.lower(), "--speed", "1000")  # not a terminal: every frame, no pause
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert out.count(f"Cruel · race {code} · ann (#1)") == len(LINE) + 1  # the start and each move
    assert f"move {len(LINE)}/{len(LINE)}: {LINE[-1]}" in out
    assert "\n".join(render_view(game.view(state))) in out  # the final position, as the engine has it
    assert out.rstrip().splitlines()[-1].startswith(f"ann: won, 52/52 home, {len(LINE)} moves, 0:")

    final = await watch(app, code, "--player", "bob", "--final")
    assert final.returncode == 0 and final.stdout.count("bob (#2)") == 1
    assert "\n".join(render_view(game.view(after_one))) in final.stdout
    assert "bob: resigned" in final.stdout

    nobody = await watch(app, code, "--player", "cat")
    assert nobody.returncode != 0 and f"no racer 'cat' in race {code} (racers: ann, bob)" in nobody.stderr
    missing = await watch(app, "BCDFGH")
    assert missing.returncode != 0 and "no finished race with code 'BCDFGH'" in missing.stderr
    assert "Traceback" not in nobody.stderr + missing.stderr
