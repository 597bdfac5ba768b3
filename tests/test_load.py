"""A small run of the load generator (bench/load.py) against the real server: correctness
only (every move answered and applied, no errors, results recorded), never timings."""

from __future__ import annotations

import importlib.util
import sqlite3
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from solitaire_race.app import App

from .conftest import make_config

BENCH = Path(__file__).resolve().parents[1] / "bench" / "load.py"
INSTRUCTIONS = BENCH.with_name("instructions.py")
sys.path.insert(0, str(BENCH.parent))  # the benchmark's modules import each other by name
spec = importlib.util.spec_from_file_location("bench_load", BENCH)
load = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
sys.modules["bench_load"] = load
spec.loader.exec_module(load)  # type: ignore[union-attr]
racers = sys.modules["racers"]  # bench/racers.py, imported by load: the racers and their pacing


@pytest.fixture
async def open_app(tmp_path: Path) -> AsyncIterator[App]:
    app = await App.start(make_config(tmp_path, countdown_s=0, rate_per_s=1e12, rate_burst=10**9))
    try:
        yield app
    finally:
        await app.stop()


@pytest.mark.parametrize("room", [2, 8])
async def test_fifty_racers_play_whole_races(open_app: App, room: int) -> None:
    result: dict[str, Any] = await racers.generate(
        open_app.ws_url, "race", 50, room, seconds=2.0, rate=None, warmup=0.2
    )
    assert result["error_count"] == 0, result["errors"]
    assert result["samples"] > 100 and result["races_finished"] >= 50 // room
    assert 0 <= result["races_before_deadline"] <= result["races_finished"]
    db = Path(open_app.config.db_url.split("///", 1)[1])
    with sqlite3.connect(db) as conn:
        finished = conn.execute("SELECT count(*) FROM races WHERE status = 'finished'").fetchone()[0]
        incomplete = conn.execute(
            "SELECT count(*) FROM races r WHERE r.status = 'finished' AND "
            "(SELECT count(*) FROM results x WHERE x.race_id = r.id) != "
            "(SELECT count(*) FROM race_entries e WHERE e.race_id = r.id)"
        ).fetchone()[0]
        logged = conn.execute("SELECT count(*) FROM move_log WHERE kind = 'move'").fetchone()[0]
    assert finished >= result["races_finished"] and incomplete == 0  # a result for every racer
    assert logged >= result["samples"]  # every acknowledged move is in the durable log


async def test_solver_players_follow_winning_lines_to_wins(tmp_path: Path) -> None:
    # The generator deals with the bench server's secret to find its lines.
    app = await App.start(make_config(tmp_path, secret=racers.SECRET, countdown_s=0, rate_per_s=1e12, rate_burst=10**9))
    try:
        # Six rooms on the generator's solved deals, following their lines.
        result: dict[str, Any] = await racers.generate(
            app.ws_url, "race", 48, 8, seconds=3.0, rate=None, player="solver", warmup=0.2
        )
    finally:
        await app.stop()
    assert result["error_count"] == 0, result["errors"]  # every move of every line accepted
    assert result["solved_deals"] == racers.SOLVED_DEALS
    db = Path(app.config.db_url.split("///", 1)[1])
    with sqlite3.connect(db) as conn:
        won = conn.execute("SELECT count(*) FROM results WHERE outcome = 'won'").fetchone()[0]
    assert won >= 8  # a room with a line played it through: all 8 racers won


async def test_the_echo_baseline_gets_every_message_back() -> None:
    from websockets.asyncio.server import serve

    async def echo(ws: Any) -> None:
        async for message in ws:
            await ws.send(message)

    async with serve(echo, "127.0.0.1", 0, compression=None) as server:
        port = next(iter(server.sockets)).getsockname()[1]
        result = await racers.generate(f"ws://127.0.0.1:{port}/ws", "echo", 10, 2, seconds=0.5, rate=None, warmup=0.1)
    assert result["error_count"] == 0 and result["samples"] > 10


def test_repeated_runs_are_summarised_by_medians_and_pair_ratios() -> None:
    def run(per_s: float, p99: float) -> dict[str, Any]:
        return {"per_s": per_s, "p99_us": p99, "races_finished": 3, "error_count": 0, "errors": []}

    runs = {
        "echo": [run(10_000, 900), run(20_000, 500), run(16_000, 700)],
        "race": [run(4_000, 9_000), run(9_000, 5_000), run(4_800, 7_000)],
    }
    out = load.summarise(runs)
    assert out["echo"]["per_s"] == 16_000 and out["race"]["p99_us"] == 7_000
    assert out["pair_ratios"] == [0.4, 0.45, 0.3]
    assert out["ratio"] == 0.4  # the median pair, not 4,800 / 16,000
    assert out["runs"] is runs and out["race"]["error_count"] == 0


async def test_a_paced_racer_never_uses_a_slot_twice() -> None:
    """Even when the reply comes back before the slot's time is over (or a timer wakes a
    little early), the next message waits for the next slot: 2 moves/s means 2."""
    import time

    interval = 0.05
    pacer = racers.Pacer(time.perf_counter(), interval, 0.0)
    await pacer.wait()  # the first slot from now
    first = pacer.slot
    await pacer.wait()  # at once again: the next slot, not the same one a second time
    await pacer.wait()
    assert pacer.slot == first + 2
    assert time.perf_counter() - pacer.epoch >= (first + 2) * interval - 0.002  # timers: whole ms


async def test_the_instruction_count_harness_plays_every_line_through(tmp_path: Path) -> None:
    """bench/instructions.py's counted run (here without valgrind): every racer of every
    room wins by its line, so the moves it divides by were all played."""
    spec = importlib.util.spec_from_file_location("bench_instructions", INSTRUCTIONS)
    bench = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
    spec.loader.exec_module(bench)  # type: ignore[union-attr]
    lines = bench.winning_lines(2)
    assert len(lines) == 2 and all(line for _, line in lines)
    played = await bench.play(3, lines, str(tmp_path))  # the third room reuses the first line
    assert played == bench.RACERS * (2 * len(lines[0][1]) + len(lines[1][1]))


def test_the_server_instruction_count_serves_as_the_load_benchmark_does() -> None:
    """bench/server_instructions.py starts the server with the load benchmark's options that
    it has: without them this checkout's server would refuse the generator's new players
    past 20 an hour (and hold results), and the count would stop at its first error."""
    path = BENCH.with_name("server_instructions.py")
    spec = importlib.util.spec_from_file_location("bench_server_instructions", path)
    bench = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
    spec.loader.exec_module(bench)  # type: ignore[union-attr]
    env = {"PYTHONPATH": str(BENCH.parents[1] / "server"), "PATH": "/usr/bin:/bin"}
    assert bench.load_options(env) == ["--new-players-per-hour", "0", "--no-fair-play-holds"]
