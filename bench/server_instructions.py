"""Instructions per move of the whole race server, transport included, under load.

    python bench/server_instructions.py [--runs 4] [--seconds 60] [--racers 64] [--server PATH]

``bench/instructions.py`` counts the race service in-process, without sockets. This counts the
real server process (``solitaire-race serve`` on uvloop and a SQLite file, as
``bench/load.py`` runs it) under valgrind's callgrind, driven by ``bench/load.py``'s generator
at saturation (naive racers, rooms of 8, races starting again as they end): websocket frames
parsed and written, every move validated, logged and answered, stuck searches, standings,
race ends. Callgrind's instrumentation is switched on once the generator's warm-up second is
over and off when it exits, and the moves in its window are divided into the instructions.

Under callgrind the server runs ~50x slower, so work done per second of wall time (the
race clock's ticker, the standings' flush rounds, connection sweeps) weighs ~50x more per
move than at full speed, and more in a run that happens to play fewer moves: runs of one
commit differ by a few percent, so it counts ``--runs`` times (4) and prints the median,
and two commits are compared in one sitting, alternating. Kernel time (the sockets'
system calls) is not counted: it is the same per move in both.

``--server PATH``: count another checkout's server (``PATH/server`` first on the Python
path), driven by this checkout's generator, to compare two commits in one sitting, their
runs alternating. Needs ``valgrind``; a run takes about two and a half minutes. Loopback only.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))  # bench/load.py, whose generator drives the server

from load import websocket_url  # noqa: E402

SETTLE_S = 20.0  # after start-up: the planner's and migrations' work is not counted anyway, but let it end


def count(server_path: Path, seconds: float, racers: int) -> tuple[int, float]:
    """(instructions, moves) of one run of the server at ``server_path``."""
    env = {**os.environ, "PYTHONPATH": str(server_path / "server"), "PYTHONUNBUFFERED": "1"}
    with tempfile.TemporaryDirectory() as tmp:
        cmd = [
            "valgrind", "--tool=callgrind", "--instr-atstart=no", f"--callgrind-out-file={tmp}/callgrind.out",
            sys.executable, "-m", "solitaire_race.cli", "serve", "--port", "0",
            "--db", f"sqlite+aiosqlite:///{tmp}/bench.sqlite3", "--secret", "bench", "--countdown", "0",
            "--rate-limit", "0", "--daily-solver-nodes", "0", "--loop", "uvloop", *load_options(env),
        ]
        # Its log (stderr) to a file, and what it prints after its start-up line read as it
        # comes: a pipe nobody reads fills up (64 KiB) and stops the server in mid-write.
        log_path = Path(tmp) / "server.log"
        with log_path.open("w") as log_file:
            server = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=log_file, text=True, env=env)
        try:
            url = websocket_url(server, lines=400)
            if url is None:
                raise RuntimeError("the server did not start")
            assert server.stdout is not None
            threading.Thread(target=server.stdout.read, daemon=True).start()
            time.sleep(SETTLE_S)
            generator = subprocess.Popen(
                [sys.executable, str(HERE / "load.py"), "generate", url, "race", str(racers), "8", str(seconds), "0"],
                stdout=subprocess.PIPE, text=True,
            )
            assert generator.stdout is not None
            if generator.stdout.readline().strip() != "READY":
                raise RuntimeError("the generator failed")
            time.sleep(1.0)  # the generator's warm-up second
            instrument(server.pid, True)
            out, _ = generator.communicate(timeout=seconds * 10 + 600)
            instrument(server.pid, False)
            figures = json.loads(out.strip().splitlines()[-1])
            if figures["error_count"]:
                raise RuntimeError(f"the racers saw errors: {figures['errors']}")
        finally:
            server.terminate()
            server.wait(timeout=600)
        err = log_path.read_text()
        collected = re.search(r"Collected : (\d+)", err)
        if collected is None:
            raise RuntimeError(f"callgrind counted nothing:\n{err[-2000:]}")
        return int(collected.group(1)), figures["per_s"] * seconds


def load_options(env: dict[str, str]) -> list[str]:
    """The options ``bench/load.py`` serves with that this server has (an older commit's
    may lack the later ones)."""
    shown = subprocess.run([sys.executable, "-m", "solitaire_race.cli", "serve", "--help"], env=env,
                           capture_output=True, text=True, timeout=120, check=True).stdout
    wanted = (("--new-players-per-hour", "0"), ("--no-fair-play-holds",))
    return [part for option in wanted if option[0] in shown for part in option]


def instrument(pid: int, on: bool) -> None:
    cmd = ["callgrind_control", "--instr=" + ("on" if on else "off"), str(pid)]
    subprocess.run(cmd, check=True, capture_output=True, timeout=600)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=4)
    parser.add_argument("--seconds", type=float, default=60.0, help="the generator's window, per run")
    parser.add_argument("--racers", type=int, default=64, help="racers, in rooms of 8")
    parser.add_argument("--server", type=Path, default=HERE.parent, help="the checkout whose server is counted")
    args = parser.parse_args(argv)
    if shutil.which("valgrind") is None:
        print("valgrind is not installed (apt-get install valgrind): nothing counted", file=sys.stderr)
        return 2
    if args.runs < 1 or args.racers < 8:
        parser.error("at least one run, and at least 8 racers")
    runs: list[tuple[int, float]] = []
    for run in range(1, args.runs + 1):
        instructions, moves = count(args.server.resolve(), args.seconds, args.racers)
        runs.append((instructions, moves))
        print(f"run {run}: {instructions:,} instructions, {moves:,.0f} moves: {instructions / moves:,.0f} per move",
              flush=True)
    print(f"instructions per move: {statistics.median(i / m for i, m in runs):,.0f} (median of {len(runs)})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
