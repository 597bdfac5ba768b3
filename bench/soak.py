"""Soak: does the server hold steady over a long stretch of racing and racing again?

    python bench/soak.py [--racers 200] [--room 8] [--minutes 10] [--every 60] [--speed 4] [--moves 120] [--json FILE]

Starts ``solitaire-race serve`` (its real SQLite database, in a temporary directory) and
drives it from this process with N racers in rooms of K: each room races a random Persian
Patience deal (moves chosen from each racer's own view, ``--speed`` moves per second per
racer), and when the race ends the same connections race again at once, as players do
with "race again": the creator creates the next race and the others join it, without
``leave_race``. Every ``--every`` seconds it prints the server's resident memory, its open
file descriptors, the rooms it holds in memory (``/metrics``) and the races finished so
far; at the end, the RSS slope (least squares over the samples after the first, which
includes start-up, and over the second half alone, once the server's bounded caches
have filled: verdicts of stuck checks, SQLite's page cache) in MiB per minute, then
everyone disconnects and it prints the rooms still held a moment later (none should be:
a finished room is released once nobody looks at its result).

Loopback only; every loop is bounded by the run's deadline (and each game by ``--moves``,
after which the racer resigns: about as long as people's games).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import re
import signal
import subprocess
import sys
import tempfile
import time
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from load import raise_fd_limit, rss_bytes
from racers import GAME, SECRET, Player, Racer
from ws_client import ws_connect


def start_server(db: Path) -> tuple[subprocess.Popen[str], str, str]:
    """The race server in its own process: (process, websocket URL, HTTP base URL)."""
    cmd = [sys.executable, "-m", "solitaire_race.cli", "serve", "--port", "0", "--db", f"sqlite+aiosqlite:///{db}",
           "--secret", SECRET, "--countdown", "0", "--daily-solver-nodes", "0", "--new-players-per-hour", "0"]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
                            env={**os.environ, "PYTHONUNBUFFERED": "1"}, preexec_fn=raise_fd_limit)
    for _ in range(200):
        line = proc.stdout.readline()  # type: ignore[union-attr]
        if m := re.search(r"open (http://\S+?)/? \(websocket (ws://[^\s,]+)", line):
            return proc, m.group(2), m.group(1)
        if not line:
            break
    proc.kill()
    raise RuntimeError("the race server did not start")


def open_fds(pid: int) -> int:
    return len(os.listdir(f"/proc/{pid}/fd"))


def rooms_in_memory(http: str) -> int:
    """The server's own count of the races it holds, by ``/metrics``' solitaire_races gauge."""
    with urllib.request.urlopen(f"{http}/metrics", timeout=10) as r:
        text = r.read().decode()
    return sum(int(float(m.group(1))) for m in re.finditer(r'^solitaire_races\{status="[a-z]+"\} (\S+)$', text, re.M))


def slope_per_minute(samples: list[tuple[float, float]]) -> float:
    """Least-squares slope of (seconds, value) pairs, per minute."""
    n = len(samples)
    if n < 2:
        return float("nan")
    mean_t = sum(t for t, _ in samples) / n
    mean_v = sum(v for _, v in samples) / n
    var = sum((t - mean_t) ** 2 for t, _ in samples)
    return 60 * sum((t - mean_t) * (v - mean_v) for t, v in samples) / var if var else float("nan")


@dataclass
class Counts:
    races: int = 0
    moves: int = 0
    errors: list[str] = field(default_factory=list)


async def play_game(
    racer: Racer, rng: random.Random, interval: float, deadline: float, counts: Counts, cap: int
) -> None:
    started = await racer.wait(lambda r: r.type == "race_started")
    racer.early.clear()  # anything left over from the race before
    player = Player(started.view, rng)
    for _ in range(cap):
        await asyncio.sleep(interval * rng.uniform(0.5, 1.5))
        move = player.next_move() if time.monotonic() < deadline else None
        if move is None:
            break
        text = player.game.format_move(move)
        player.played(move)
        reply = await racer.request({"type": "move", "moves": [text]})
        if reply.type == "error" and reply.code in ("game_over", "race_not_running"):
            return  # found stuck by the server just after its last move
        if reply.type != "move_result" or reply.applied != [text]:
            counts.errors.append(f"{racer.name}: {text}: {reply.type} {reply.rejected or reply.code}")
            break
        counts.moves += 1
        if reply.outcome != "playing":
            return
    await racer.request({"type": "resign"})


async def room_loop(racers: list[Racer], seed: int, interval: float, deadline: float, counts: Counts, cap: int) -> None:
    """Race, then race again on the same connections, until the deadline."""
    rng = random.Random(seed)
    host, guests = racers[0], racers[1:]
    while time.monotonic() < deadline:
        room = await host.request({"type": "create_race", "game": GAME})  # no leave_race: straight to the next
        if room.type != "room":
            counts.errors.append(f"create_race: {room.type} {room.code}")
            return
        for guest in guests:
            await guest.request({"type": "join_race", "code": room.race["code"]})
        await host.request({"type": "start_race"})
        await asyncio.gather(
            *(play_game(r, random.Random(rng.random()), interval, deadline, counts, cap) for r in racers)
        )
        for racer in racers:
            await racer.wait(lambda r: r.type == "race_finished")
        counts.races += 1


async def soak(
    ws: str, http: str, pid: int, racers: int, room: int, minutes: float, every: float, speed: float, cap: int
) -> dict[str, Any]:
    clients = []
    for i in range(racers):
        racer = Racer(await ws_connect(ws), f"soak{i}")
        welcome = await racer.request({"type": "hello", "name": racer.name})
        assert welcome.type == "welcome", welcome
        clients.append(racer)
    counts = Counts()
    start = time.monotonic()
    deadline = start + minutes * 60
    rooms = [clients[i : i + room] for i in range(0, racers, room)]
    tasks = [asyncio.ensure_future(room_loop(r, j, 1 / speed, deadline, counts, cap)) for j, r in enumerate(rooms)]
    samples: list[dict[str, Any]] = []
    print(f"{'minute':>7}{'RSS MiB':>10}{'fds':>7}{'rooms':>7}{'races':>8}{'moves':>10}", flush=True)
    while True:
        now = time.monotonic() - start
        sample = {"t": now, "rss_mib": rss_bytes(pid) / 2**20, "fds": open_fds(pid),
                  "rooms": await asyncio.to_thread(rooms_in_memory, http), "races": counts.races, "moves": counts.moves}
        samples.append(sample)
        print(
            f"{now / 60:>7.1f}{sample['rss_mib']:>10.1f}{sample['fds']:>7}{sample['rooms']:>7}"
            f"{sample['races']:>8,}{sample['moves']:>10,}",
            flush=True,
        )
        if now >= minutes * 60:
            break
        await asyncio.sleep(min(every, max(0.0, deadline - time.monotonic())))
    await asyncio.wait(tasks, timeout=30)  # games end at the deadline: a last move and a resign each
    for racer in clients:
        racer.client.close()
    await asyncio.sleep(2.0)  # the server handles the disconnects
    left = await asyncio.to_thread(rooms_in_memory, http)
    later = [(s["t"], s["rss_mib"]) for s in samples[1:]]
    second_half = [(s["t"], s["rss_mib"]) for s in samples if s["t"] >= minutes * 30]
    result = {
        "racers": racers, "room": room, "minutes": minutes, "speed": speed, "samples": samples,
        "rss_slope_mib_per_min": slope_per_minute(later),
        "rss_slope_second_half_mib_per_min": slope_per_minute(second_half),
        "rooms_slope_per_min": slope_per_minute([(s["t"], s["rooms"]) for s in samples[1:]]),
        "rooms_after_disconnect": left, "races": counts.races, "moves": counts.moves, "errors": counts.errors[:20],
    }
    print(f"RSS slope after the first sample: {result['rss_slope_mib_per_min']:+.3f} MiB/min, "
          f"over the second half: {result['rss_slope_second_half_mib_per_min']:+.3f} MiB/min; "
          f"rooms held: slope {result['rooms_slope_per_min']:+.2f}/min, {left} once everyone left; "
          f"{counts.races:,} races, {counts.moves:,} moves, {len(counts.errors)} errors", flush=True)
    return result


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--racers", type=int, default=200)
    parser.add_argument("--room", type=int, default=8)
    parser.add_argument("--minutes", type=float, default=10.0)
    parser.add_argument("--every", type=float, default=60.0, help="seconds between samples")
    parser.add_argument("--speed", type=float, default=4.0, help="moves per second per racer")
    parser.add_argument("--moves", type=int, default=120, help="a racer resigns after this many moves")
    parser.add_argument("--json", help="write the figures to this file")
    args = parser.parse_args()
    if not (
        0 < args.minutes <= 24 * 60
        and args.every > 0
        and 0 < args.speed <= 20
        and 1 <= args.room <= 8
        and args.racers >= 1
        and args.moves >= 1
    ):
        parser.error(
            "--minutes in (0, 1440], --every > 0, --speed in (0, 20] (the server's rate limit), --room in 1..8"
        )
    raise_fd_limit()
    with tempfile.TemporaryDirectory() as tmp:
        proc, ws, http = start_server(Path(tmp) / "soak.sqlite3")
        try:
            result = asyncio.run(
                soak(ws, http, proc.pid, args.racers, args.room, args.minutes, args.every, args.speed, args.moves)
            )
        finally:
            proc.send_signal(signal.SIGTERM)
            proc.wait(timeout=30)
    if args.json:
        Path(args.json).write_text(json.dumps(result, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
