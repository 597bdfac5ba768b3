"""The whole performance picture in one command: ``python bench/run.py [--quick] [--json DIR]``.

Runs, in order: the engine benchmark (bench/engine.py), the solver benchmark
(bench/solver.py, when present), the bots against the solver (bench/bots.py), the
leaderboard benchmark at one million results (bench/leaderboard.py), the move-log commit
benchmark (bench/move_log.py), the load benchmark against the raw websockets ceiling
(bench/load.py), the flood benchmark (bench/flood.py), the cluster benchmark
(bench/cluster.py: needs the local PostgreSQL and Redis) and the soak (bench/soak.py:
memory over ten minutes of racing).

``--quick`` runs smaller versions of each (a few minutes in all). Every benchmark prints
its own figures; nothing is asserted.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="smaller runs")
    parser.add_argument("--json", metavar="DIR", help="also write each benchmark's figures as JSON here")
    args = parser.parse_args()
    out = Path(args.json) if args.json else None
    if out:
        out.mkdir(parents=True, exist_ok=True)
    steps: list[tuple[str, list[str]]] = [
        ("engine", ["engine.py", "--deals", "10" if args.quick else "40"]),
        ("solver", ["solver.py", "--deals", "20" if args.quick else "200"]),
        ("bots", ["bots.py", "--deals", "5" if args.quick else "20"]),
        ("leaderboard", ["leaderboard.py", "--results", "100000" if args.quick else "1000000"]),
        ("move_log", ["move_log.py", "--commits", "100" if args.quick else "600"]),
        ("load", ["load.py", *(["--racers", "100", "--rooms", "2,8", "--seconds", "3"] if args.quick else [])]),
        ("cluster", ["cluster.py", *(["--racers", "200", "--seconds", "3", "--setups", "sqlite,pg,1,2", "--repeat", "1",
                                      "--routing", "10", "--failovers", "2", "--failover-rooms", "20",
                                      "--capacity", "200,400"] if args.quick else [])]),
        ("soak", ["soak.py", *(["--racers", "40", "--minutes", "1", "--every", "15"] if args.quick else [])]),
        ("flood", ["flood.py", "--seconds", "2" if args.quick else "5"]),
    ]
    failed = 0
    for name, cmd in steps:
        script = HERE / cmd[0]
        if not script.exists():
            print(f"== {name}: {script.name} not present, skipped\n")
            continue
        extra = ["--json", str(out / f"{name}.json")] if out else []
        print(f"== {name}: python bench/{' '.join(cmd)}", flush=True)
        started = time.perf_counter()
        code = subprocess.call([sys.executable, str(script), *cmd[1:], *extra])
        status = "done" if code == 0 else f"FAILED ({code})"
        print(f"== {name}: {status} in {time.perf_counter() - started:.0f} s\n", flush=True)
        failed += code != 0
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
