"""Instructions per move, counted: an A/B measure that a noisy machine cannot move.

    python bench/instructions.py [--rooms 4,8] [--deals 8] [--runs 3] [--without-stuck-checks] [--play-only]

CPU time per move varied by a third between identical runs on the shared machines this
project runs on (docs/performance.md), which hides any change under ~10%. Valgrind's
callgrind counts the instructions a process executes instead, which does not depend on
what else the machine is doing. This runs the race server's gateway and races in-process (real rooms, real
store on a temporary SQLite file, peers that encode every message as the transport does,
no sockets) with 8 racers per room following winning lines of Persian Patience, every room
at once, once per ``--rooms`` value under callgrind, and prints the instructions per move
from the difference between the runs (start-up, imports and migrations cancel out). Each
racer's next move is handed to ``Gateway.receive`` when its ``move_result`` is sent,
as the transport hands over frames: the path a move takes in the server, at saturation.

Needs ``valgrind`` (``apt-get install valgrind``); a count takes a minute or two (callgrind
runs Python ~100x slower), and it counts ``--runs`` times (3) and prints the median. The
stuck searches run in the event loop's idle turns, and how many there are depends on when
the database's threads answer: counts vary by up to 10%. ``--without-stuck-checks``
counts everything else, to within 0.05%: the way to judge a change of a percent or two.
``--play-only`` counts only the racing, from the first moves to the last race's end,
with callgrind's instrumentation switched on and off around it (``callgrind_control``):
each run plays the larger ``--rooms`` count only (no difference needed), and none of the
set-up (hello, create, join, start) is counted: the part of a move the load benchmark's goal case measures, where races
are set up before the clock starts. Compare two commits by running it in each checkout,
or this script with ``PYTHONPATH`` set to the other checkout's ``server/``. The lines
are found before counting with a node budget only (no time budget), so every run and
every machine plays the same moves.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from solitaire_race.gateway import Session

HERE = Path(__file__).resolve().parent
GAME = "persian-patience"
SECRET = "bench-instructions"
RACERS = 8


def winning_lines(count: int) -> list[tuple[int, list[str]]]:
    """The first ``count`` deals with a winning line in 20,000 solver nodes, and the lines:
    the load benchmark's solver player's deals, with no time budget to make them vary."""
    if str(HERE) not in sys.path:
        sys.path.insert(0, str(HERE))
    from racers import solved_deals

    return solved_deals(count, secret=SECRET, time_budget_s=600)


class RacingPeer:
    """A racer's connection: encodes what it is sent, as ``transport.WebSocketPeer`` does,
    and hands the gateway the racer's next move as soon as a ``move_result`` arrives (a
    racer at saturation; the transport delivers frames the same way, from a callback)."""

    __slots__ = ("finished", "frames", "gateway", "played", "session")

    def __init__(self, gateway: Any) -> None:
        self.gateway = gateway
        self.session: Any = None
        self.frames: list[str] = []
        self.played = 0
        self.finished: asyncio.Future[None] | None = None

    def send(self, message: dict[str, Any] | str) -> None:
        from solitaire_race import protocol

        if isinstance(message, str):
            return  # encoded once for the whole room: never a move_result
        protocol.encode_utf8(message)
        if message["type"] != "move_result" or self.finished is None:
            return
        self.played += 1
        if self.played < len(self.frames):
            self.gateway.receive(self.session, self.frames[self.played])
        elif not self.finished.done():
            self.finished.set_result(None)

    def close(self, code: int, reason: str) -> None:
        pass

    def refuse(self, code: int, reason: str) -> None:
        pass

    def pause_reading(self) -> None:
        pass

    def resume_reading(self) -> None:
        pass


async def play(
    rooms: int, lines: list[tuple[int, list[str]]], db_dir: str, stuck_checks: bool = True, play_only: bool = False
) -> int:
    """Every room races on its line, all at once; returns the number of moves played.
    ``play_only``: callgrind instruments only the racing (``instrument``)."""
    from solitaire_race.app import App, tune_gc
    from solitaire_race.config import Config
    from solitaire_race.room import Status

    config = Config(
        host="127.0.0.1", port=0, db_url=f"sqlite+aiosqlite:///{db_dir}/bench.sqlite3", secret=SECRET,
        countdown_s=0, daily_solver_nodes=0, rate_per_s=1e12, rate_burst=10**9, new_players_per_hour=0,
        # No standings during the count: they are sent per room and per 0.1 s of wall time,
        # not per move, so under callgrind's ~100x slowdown they would count time, not moves.
        progress_interval_s=3600.0,
        fair_play_holds=False,  # as bench/load.py serves: its bots' pace would be held
    )
    app = await App.start(config)
    thresholds = gc.get_threshold()
    gateway = app.gateway
    # Nothing that runs by the wall clock may be counted: under callgrind a run lasts ~100
    # times longer, and a busier machine longer still, so work done per second would count
    # time and load, not moves. So the day's challenges are all chosen before the count
    # (the planner starts on them with the server), and the race clock's ticker, which marks
    # the loop turning 20 times a second (race_clock.py), is stopped, its stall accounting
    # with it: every reading of the clock, the work a move does, still counts.
    await app.planner.prepare(app.races.queries.today())
    app.clock.stop()
    app.clock.stall_s = float("inf")
    if not stuck_checks:
        # A measuring device, not a server setting: no stuck check is queued, so none runs.
        app.races.interpreter.check = lambda *check: None  # type: ignore[method-assign]
    try:
        tune_gc()  # the collector as ``serve`` sets it, or its collections count as the moves' work
        racers: list[tuple[Session, RacingPeer]] = []
        for r in range(rooms):
            seated: list[tuple[Session, RacingPeer]] = []
            for i in range(RACERS):
                peer = RacingPeer(gateway)
                session = peer.session = gateway.connect(peer)
                await gateway.handle(session, json.dumps({"type": "hello", "name": f"r{r}p{i}"}))
                seated.append((session, peer))
            host = seated[0][0]
            deal, line = lines[r % len(lines)]
            create = {"type": "create_race", "game": GAME, "deal": deal, "private": True}
            await gateway.handle(host, json.dumps(create))
            assert host.player is not None, "hello failed"
            room = app.races.seats.get(host.player.id)
            assert room is not None, "create_race failed"
            for session, _ in seated[1:]:
                await gateway.handle(session, json.dumps({"type": "join_race", "code": room.code}))
            await gateway.handle(host, json.dumps({"type": "start_race"}))
            frames = [json.dumps({"type": "move", "id": k, "moves": [move]}) for k, move in enumerate(line)]
            for session, peer in seated:
                peer.frames = frames
                racers.append((session, peer))
        await asyncio.sleep(0.05)  # the countdown of 0 s: every race running

        raced = {app.races.seats[s.player.id] for s, _ in racers if s.player is not None}
        if play_only:
            instrument(True)
        loop = asyncio.get_running_loop()
        finished: list[asyncio.Future[None]] = []
        for session, peer in racers:  # every racer's first move; the replies bring the rest
            peer.finished = done = loop.create_future()
            finished.append(done)
            gateway.receive(session, peer.frames[0])
        await asyncio.wait_for(asyncio.gather(*finished), 3600)
        for _ in range(100_000):  # and the races' ends: results verified, saved and announced
            if all(room.status is Status.FINISHED for room in raced):
                break
            await asyncio.sleep(0)
        if play_only:
            instrument(False)
        # Every line played through: a refused move would have been counted as a move.
        seats = app.races.seats
        outcomes = {
            seats[s.player.id].racers[s.player.id].outcome for s, _ in racers if s.player and s.player.id in seats
        }
        if outcomes != {"won"} or len(racers) != rooms * RACERS:
            raise RuntimeError(f"the lines were not all won: {outcomes}")
        return sum(len(peer.frames) for _, peer in racers)
    finally:
        await app.stop()
        gc.unfreeze()  # the caller's collector as it was (a test calls this in its own process)
        gc.set_threshold(*thresholds)


def instrument(on: bool) -> None:
    """Switch callgrind's instrumentation of this process on or off (``--play-only``)."""
    cmd = ["callgrind_control", "--instr=" + ("on" if on else "off"), str(os.getpid())]
    subprocess.run(cmd, check=True, capture_output=True, timeout=600)


def counted(rooms: int, lines_file: Path, stuck_checks: bool, play_only: bool = False) -> tuple[int, int]:
    """(instructions, moves) of one run under callgrind."""
    cmd = [
        "valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null",
        *(["--instr-atstart=no"] if play_only else []),
        sys.executable, __file__, "play", str(rooms), str(lines_file), "checks" if stuck_checks else "no-checks",
        "play-only" if play_only else "all",
    ]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=3600, check=False)
    found = re.search(r"Collected : (\d+)", done.stderr)
    moves = re.search(r"^moves (\d+)$", done.stdout, flags=re.MULTILINE)
    if done.returncode != 0 or not found or not moves:
        raise RuntimeError(f"the counted run failed:\n{done.stdout[-2000:]}\n{done.stderr[-2000:]}")
    return int(found.group(1)), int(moves.group(1))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rooms", default="4,8", help="two room counts: the difference makes the per-move figure")
    parser.add_argument("--deals", type=int, default=8, help="deals with winning lines to race on")
    parser.add_argument("--runs", type=int, default=3, help="count this many times and print the median: "
                        "the stuck searches run in the loop's idle turns, whose number depends on the "
                        "timing of the database's threads, so single counts vary by a few percent")
    parser.add_argument("--without-stuck-checks", action="store_true",
                        help="leave the stuck searches out (no check is queued): the rest of the work "
                        "per move, counted to within 0.05%%, to judge a change of a percent or two")
    parser.add_argument("--play-only", action="store_true",
                        help="count only the racing (instrumentation switched on at the first moves, off "
                        "after the last race's end), in runs of the larger --rooms count only")
    args = parser.parse_args(argv)
    if shutil.which("valgrind") is None:
        print("valgrind is not installed (apt-get install valgrind): nothing counted", file=sys.stderr)
        return 2
    counts = sorted(set(map(int, args.rooms.split(","))))
    if len(counts) != 2 or counts[0] < 1:
        parser.error("--rooms takes two different room counts, e.g. 1,2")
    if args.runs < 1:
        parser.error("--runs must be at least 1")
    small, large = counts
    started = time.perf_counter()
    per_move: list[float] = []
    with tempfile.TemporaryDirectory() as tmp:
        lines_file = Path(tmp) / "lines.json"
        lines_file.write_text(json.dumps(winning_lines(args.deals)))
        for run in range(1, args.runs + 1):
            # One after the other: side by side, a busier machine would delay the database's
            # threads, and with them how many idle turns the stuck searches get.
            checks = not args.without_stuck_checks
            if args.play_only:  # nothing but the racing counted: no difference needed
                i_large, m_large = counted(large, lines_file, checks, play_only=True)
                per_move.append(i_large / m_large)
                print(f"run {run}: rooms {large}, racing only: {i_large:,} instructions, {m_large:,} moves; "
                      f"per move {per_move[-1]:,.0f}")
                continue
            i_small, m_small = counted(small, lines_file, checks)
            i_large, m_large = counted(large, lines_file, checks)
            per_move.append((i_large - i_small) / (m_large - m_small))
            print(f"run {run}: rooms {small}: {i_small:,} instructions, {m_small:,} moves; "
                  f"rooms {large}: {i_large:,}, {m_large:,} moves; per move {per_move[-1]:,.0f}")
    print(f"instructions per move: {statistics.median(per_move):,.0f} (median of {len(per_move)}; "
          f"{min(per_move):,.0f}-{max(per_move):,.0f})   ({time.perf_counter() - started:.0f} s)")
    return 0


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "play":
        with tempfile.TemporaryDirectory() as db_dir:
            lines = json.loads(Path(sys.argv[3]).read_text())
            checks, play_only = sys.argv[4] == "checks", sys.argv[5] == "play-only"
            played = asyncio.run(play(int(sys.argv[2]), lines, db_dir, stuck_checks=checks, play_only=play_only))
        print(f"moves {played}")
    else:
        sys.exit(main())
