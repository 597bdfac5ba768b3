"""Load benchmark: the race server against the raw websockets ceiling, in one run.

    python bench/load.py [--racers 100,1000] [--rooms 2,8] [--seconds 6] [--json FILE]

For every case (N racers connected at once, rooms of K), in separate processes:
- an **echo server** (plain ``websockets``, answers each message, nothing else), and
- the **race server** (``solitaire-race serve`` with its real SQLite database, or with
  ``--db postgresql+asyncpg://user@host/name`` a PostgreSQL database under that name, made
  anew for every run and dropped at the end; PostgreSQL's own processes are not pinned, and
  their CPU is not in the server's figure),
each pinned to CPU 0, are driven by the same **load generator** pinned to CPU 1, twice:
**saturation** (each racer sends its next message as soon as the previous one is answered)
and **paced** (2 moves per second per racer, each racer on a fixed grid with the phases
spread evenly over the half second, for both servers). Racers play real games: each computes its
moves from the view the server sent it (Persian Patience, home moves first, then builds),
one at a time, and checks every answer; rooms race again when a race ends. With
``--player solver`` the racers instead follow winning lines: before the clock starts the
generator solves the first deals until it has 8 with a line (20,000 nodes each), and every
room races on one of them (private races on a chosen deal), following its line: about
100 moves, games as long as people's, so no room restarts within a case.
Against the echo server the same racers send the same move messages and get them back.

Prints per case: moves (or messages) per second, p50/p99/max round trip, server CPU use,
the share of the window the hypervisor stole from the server's core (``steal`` in
/proc/stat: on a shared virtual machine it stalls the server for tens of milliseconds at a
time, which shows in the p99 and no code change can remove), the load generator's share of
its own core (``gen``: near 100%, the generator and not the server is the limit), server RSS per connected
racer, the races that ended before the case's deadline (a race still being played then
ends by its racers resigning, which is not counted: in a few seconds there are few), and
the ratio of the race server's moves/s to the echo server's messages/s in the same run.
``--modes`` picks saturation and/or paced rates; ``--json`` also writes the figures, to compare commits;
``--repeat R`` runs each case R times, echo and race alternating, and prints medians (the
ratio is the median of each pair's own ratio): on a shared, noisy machine one run says little.
``--loop`` picks the event loop both servers run on (default: uvloop where it is installed,
as the server does), so that the ratio compares them on one stack.

The generator's racers are ``racers.py``'s; they speak the websocket protocol directly on
asyncio (``ws_client.py``: masked frames, minimal parsing) so that it costs a few
microseconds per message: a ``websockets`` client in the same single core would saturate
before the echo server does. This module starts the servers and the generator, and reads
the figures. Loopback only; every loop is bounded by the case's time.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import resource
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from racers import SECRET, generate  # bench/racers.py: the racers the generator runs
from ws_client import ws_connect  # bench/ws_client.py

SERVER_CPU, GENERATOR_CPU = 0, 1  # the server under test gets a core to itself

# --- processes ------------------------------------------------------------------------------


def raise_fd_limit() -> None:
    _soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))


def pinned_to(cpu: int) -> Callable[[], None]:
    """A ``preexec_fn``: the child runs on ``cpu`` alone, with the raised file limit."""

    def setup() -> None:
        os.sched_setaffinity(0, {cpu})
        raise_fd_limit()

    return setup


async def echo_server() -> None:
    from websockets.asyncio.server import serve

    async def echo(ws: Any) -> None:
        async for message in ws:
            await ws.send(message)

    async with serve(echo, "127.0.0.1", 0, compression=None, max_size=2**16) as server:
        port = next(iter(server.sockets)).getsockname()[1]
        print(f"websocket ws://127.0.0.1:{port}/ws", flush=True)
        await asyncio.Event().wait()


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def stolen_seconds(cpu: int) -> float:
    """Time the hypervisor ran something else while this virtual CPU wanted to run (the
    ``steal`` column of /proc/stat): a latency no code change can remove."""
    for line in Path("/proc/stat").read_text().splitlines():
        if line.startswith(f"cpu{cpu} "):
            return int(line.split()[8]) / os.sysconf("SC_CLK_TCK")
    return 0.0


def rss_bytes(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    return 0


def start_server(
    kind: str, db: Path | str, loop: str = "auto", extra: tuple[str, ...] = ()
) -> tuple[subprocess.Popen[str], str]:
    """Start a server on ``loop`` (``solitaire_race.app.loop_factory``): both servers run
    on the same event loop, so the ratio compares them on one stack. ``db``: a SQLite file,
    or a database URL; ``extra``: more of serve's options (bench/cluster.py's nodes)."""
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    if kind == "echo":
        cmd = [sys.executable, __file__, "echo-server", loop]
    else:
        url = db if isinstance(db, str) else f"sqlite+aiosqlite:///{db}"
        cmd = [sys.executable, "-m", "solitaire_race.cli", "serve", "--port", "0", "--db", url,
               "--secret", SECRET, "--countdown", "0", "--rate-limit", "0", "--new-players-per-hour", "0",
               "--daily-solver-nodes", "0", "--no-fair-play-holds", "--loop", loop, *extra]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, env=env,
                            preexec_fn=pinned_to(SERVER_CPU))
    ws_url = websocket_url(proc)
    if ws_url is None:
        proc.kill()
        raise RuntimeError(f"the {kind} server did not start")
    return proc, ws_url


def websocket_url(proc: subprocess.Popen[str], lines: int = 200) -> str | None:
    """The websocket URL a starting server prints, read from its first ``lines`` lines of
    output (None if it never prints one: it failed to start)."""
    assert proc.stdout is not None
    for _ in range(lines):
        line = proc.stdout.readline()
        if found := re.search(r"websocket (ws://[^\s,]+)", line):
            return found.group(1)
        if not line:
            break
    return None


def warm_up(url: str) -> None:
    """One connect/disconnect: a fresh asyncio server runs at half speed until its first
    client leaves (seen in the project's first measurements; harmless if no longer so)."""
    async def once() -> None:
        client = await ws_connect(url)
        client.close()
        await asyncio.sleep(0.2)

    asyncio.run(once())


def run_case(
    kind: str,
    url: str,
    server: subprocess.Popen[str] | list[subprocess.Popen[str]],
    racers: int,
    room: int,
    seconds: float,
    rate: float | None,
    player: str = "naive",
) -> dict[str, Any]:
    """One case against ``server`` (or several, whose CPU and memory are summed: a
    cluster's nodes, with ``url`` their addresses comma-separated)."""
    servers = server if isinstance(server, list) else [server]
    args = [
        sys.executable, __file__, "generate", url, kind, str(racers), str(room), str(seconds), str(rate or 0), player,
    ]
    gen = subprocess.Popen(args, stdout=subprocess.PIPE, text=True, preexec_fn=pinned_to(GENERATOR_CPU))
    idle_rss = sum(rss_bytes(s.pid) for s in servers)
    assert gen.stdout is not None
    line = gen.stdout.readline()
    if line.strip() != "READY":
        gen.wait()
        raise RuntimeError(f"generator failed: {line}")
    busy_rss = sum(rss_bytes(s.pid) for s in servers)
    time.sleep(1.0)  # the generator's warm-up second
    cpu0, stolen0, t0 = sum(cpu_seconds(s.pid) for s in servers), stolen_seconds(SERVER_CPU), time.perf_counter()
    out, _ = gen.communicate(timeout=seconds + 600)
    cpu1, stolen1, t1 = sum(cpu_seconds(s.pid) for s in servers), stolen_seconds(SERVER_CPU), time.perf_counter()
    result: dict[str, Any] = json.loads(out.strip().splitlines()[-1])
    result["server_cpu"] = (cpu1 - cpu0) / (t1 - t0)
    result["steal"] = (stolen1 - stolen0) / (t1 - t0)
    result["rss_per_racer_kib"] = max(0, busy_rss - idle_rss) / racers / 1024
    return result


def main(argv: list[str] | None = None) -> dict[str, Any]:
    import databases  # bench/databases.py, beside this script
    from solitaire_race.config import EVENT_LOOPS

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--racers", default="100,1000")
    parser.add_argument("--rooms", default="2,8")
    parser.add_argument("--seconds", type=float, default=6.0)
    parser.add_argument("--modes", default="saturation,2", help="saturation and/or a fixed rate in moves/s per racer")
    parser.add_argument(
        "--player", choices=("naive", "solver"), default="naive",
        help="naive: home moves first, then builds, any legal move if none (a race rarely ends within a case); "
        "solver: racers follow a winning line of the deal (~100-move games, as people play them)",
    )
    parser.add_argument(
        "--repeat", type=int, default=1,
        help="run each case this many times, echo and race alternating, and print the medians "
        "(the ratio: the median of each echo/race pair's own ratio); for noisy machines",
    )
    parser.add_argument(
        "--loop", choices=EVENT_LOOPS, default="auto",
        help="the event loop both servers run on (default auto: uvloop where it is installed)",
    )
    parser.add_argument(
        "--db", help="the race server's database: a SQLite file per run (default), or a postgresql+asyncpg:// URL "
        "of a database the benchmark owns (dropped and made anew for every run, dropped at the end)",
    )
    parser.add_argument("--json", help="write the figures to this file")
    args = parser.parse_args(argv)
    if args.db and not databases.is_postgresql(args.db):
        parser.error("--db takes a postgresql+asyncpg:// URL (without it: a SQLite file per run)")
    if args.repeat < 1:
        parser.error("--repeat must be at least 1")
    try:
        modes = [
            ("saturation", None) if m == "saturation" else (f"{m} moves/s", float(m)) for m in args.modes.split(",")
        ]
    except ValueError:
        parser.error(f"--modes takes 'saturation' and/or rates in moves/s, comma-separated, not {args.modes!r}")
    if any(rate is not None and not 0 < rate <= 1000 for _, rate in modes):
        parser.error("a rate in --modes is in moves per second per racer, above 0 and at most 1000")
    cases = [(n, k) for n in map(int, args.racers.split(",")) for k in map(int, args.rooms.split(","))]
    results: dict[str, Any] = {"cases": []}
    print(
        f"{'case':<36}{'server':<7}{'per s':>9}{'p50 µs':>9}{'p99 µs':>9}{'max µs':>10}"
        f"{'cpu':>6}{'steal':>6}{'gen':>6}{'KiB/racer':>10}{'races':>7}{'ratio':>7}"
    )
    for mode, rate in modes:
        for racers, room in cases:
            runs: dict[str, list[dict[str, Any]]] = {"echo": [], "race": []}
            for _ in range(args.repeat):
                for kind in ("echo", "race"):  # alternating: both see the same spells of noise
                    with tempfile.TemporaryDirectory() as tmp:
                        if args.db and kind == "race":
                            databases.recreate(args.db)
                        server, url = start_server(kind, args.db or Path(tmp) / "load.sqlite3", args.loop)
                        try:
                            warm_up(url)
                            figures = run_case(kind, url, server, racers, room, args.seconds, rate, args.player)
                            runs[kind].append(figures)
                        finally:
                            server.send_signal(signal.SIGTERM)
                            server.wait(timeout=30)
            row: dict[str, Any] = {"mode": mode, "racers": racers, "room": room, **summarise(runs)}
            results["cases"].append(row)
            label = f"{mode}, {racers} racers, rooms of {room}"
            for kind in ("echo", "race"):
                r = row[kind]
                ratio = f"{row['ratio']:.2f}" if kind == "race" else ""
                races = f"{r['races_before_deadline']:,.0f}" if kind == "race" else ""  # race turnover within the case
                print(
                    f"{label if kind == 'echo' else '':<36}{kind:<7}"
                    f"{r['per_s']:>9,.0f}{r['p50_us']:>9,.0f}{r['p99_us']:>9,.0f}{r['max_us']:>10,.0f}"
                    f"{r['server_cpu']:>6.0%}{r['steal']:>6.1%}{r['generator_cpu']:>6.0%}"
                    f"{r['rss_per_racer_kib']:>10.1f}{races:>7}{ratio:>7}",
                    flush=True,
                )
                if r["error_count"]:
                    print(f"    {r['error_count']} errors, e.g. {r['errors'][:3]}", flush=True)
            if args.repeat > 1:
                pair_ratios = ", ".join(f"{x:.2f}" for x in row["pair_ratios"])
                print(f"    {args.repeat} runs each, medians; pair ratios {pair_ratios}", flush=True)
    if args.db:
        asyncio.run(databases.drop(args.db))
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=2))
    return results


def medians(results: list[dict[str, Any]]) -> dict[str, Any]:
    """The first run's figures, each number the median of the runs' (bench/cluster.py too)."""
    merged = dict(results[0])
    for key, value in results[0].items():
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            merged[key] = statistics.median(r[key] for r in results)
    return merged


def summarise(runs: dict[str, list[dict[str, Any]]]) -> dict[str, Any]:
    """One case's figures from its runs (``runs[kind][i]``, the i-th echo and race runs made
    back to back): per server the median of each figure, and the ratio as the median of the
    pairs' own ratios, since a pair shares the machine's mood of the moment."""
    out: dict[str, Any] = {"runs": runs}
    for kind, results in runs.items():
        merged = medians(results)
        merged["errors"] = [e for r in results for e in r.get("errors", [])][:20]
        merged["error_count"] = sum(r.get("error_count", 0) for r in results)
        out[kind] = merged
    pairs = zip(runs["echo"], runs["race"], strict=True)  # main() makes them in pairs
    out["pair_ratios"] = [r["per_s"] / e["per_s"] if e["per_s"] else float("nan") for e, r in pairs]
    out["ratio"] = statistics.median(out["pair_ratios"])
    return out


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "echo-server":
        from solitaire_race.app import loop_factory

        with asyncio.Runner(loop_factory=loop_factory(sys.argv[2] if len(sys.argv) > 2 else "auto")[1]) as runner:
            runner.run(echo_server())
    elif len(sys.argv) > 1 and sys.argv[1] == "generate":
        url, kind, racers, room, seconds, rate = sys.argv[2:8]
        player = sys.argv[8] if len(sys.argv) > 8 else "naive"
        from solitaire_race.app import loop_factory

        # Saturation: the generator on the fastest loop there is (on asyncio's it was the
        # limit for the echo server on uvloop: 96% of its core, the server's 87%). Paced:
        # on asyncio's, whose timers keep the racers' phases spread; uvloop's fire on a
        # whole-millisecond grid, so arrivals came in clumps (commits of 1.5-1.9 moves
        # instead of 1.2, p50 0.85-1.24 ms instead of 0.61-0.63 ms, measured).
        with asyncio.Runner(loop_factory=loop_factory("asyncio" if float(rate) else "auto")[1]) as runner:
            figures = runner.run(
                generate(url, kind, int(racers), int(room), float(seconds), float(rate) or None, player)
            )
        print(json.dumps(figures))
    else:
        main()
