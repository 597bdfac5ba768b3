"""What a move-log commit costs SQLite, in the server's schema and in a baseline layout.

    python bench/move_log.py [--racers 1000] [--commits 600] [--batches 1,8,60,230]

Every accepted move is appended to ``move_log`` and committed before it is acknowledged;
moves of one loop turn share a commit (``store/writer.py``): about one row per commit at 2
moves/s per racer, 60–250 at saturation with 1,000 racers. This writes such commits the
way the writer does (one multi-row INSERT through the sqlite3 driver, WAL, synchronous=
NORMAL, foreign keys on, no automatic checkpoint) with the racers' moves in random order,
into two databases of one run:

- ``journal``: the schema the server runs, made by its own migrations (since 0006: a
  rowid table, appended at its end);
- ``clustered``: the baseline, migration 0005's table clustered on (race, player, seq),
  where every racer's entries sit at their own place in the B-tree.

It prints, per batch size and layout, the CPU per row and per commit and the bytes each
commit adds to the WAL, and the journal's CPU as a ratio of the baseline's.
"""

from __future__ import annotations

import argparse
import json
import random
import sqlite3
import tempfile
import time
from pathlib import Path
from typing import Any

from alembic import command

from solitaire_race.names import name_key
from solitaire_race.store.migrate import alembic_config
from solitaire_race.store.store import MOVE_LOG_COLUMNS

RACERS_PER_RACE = 8
CLUSTERED = """CREATE TABLE move_log (
    race_id INTEGER NOT NULL REFERENCES races (id), player_id INTEGER NOT NULL REFERENCES players (id),
    seq INTEGER NOT NULL, kind VARCHAR(8) NOT NULL CHECK (kind IN ('move', 'resign', 'left')),
    text VARCHAR(64) NOT NULL, at_ms INTEGER NOT NULL,
    PRIMARY KEY (race_id, player_id, seq)
) WITHOUT ROWID"""


def prepare(path: Path, layout: str, racers: int) -> sqlite3.Connection:
    """A database with the server's schema, its races and players; ``clustered`` swaps in
    the baseline move_log."""
    config = alembic_config(f"sqlite+aiosqlite:///{path}")
    config.attributes["configure_logger"] = False
    command.upgrade(config, "head")
    db = sqlite3.connect(path, isolation_level=None)
    db.execute("PRAGMA journal_mode=WAL")
    db.execute("PRAGMA synchronous=NORMAL")
    db.execute("PRAGMA wal_autocheckpoint=0")
    if layout == "clustered":
        db.execute("DROP TABLE move_log")
        db.execute(CLUSTERED)
    db.execute("BEGIN")
    db.executemany(
        "INSERT INTO players (id, name, name_key, token_hash, created_at) VALUES (?, ?, ?, ?, 0)",
        [(p, f"p{p}", name_key(f"p{p}"), f"{p:064x}") for p in range(1, racers + 1)],
    )
    db.executemany(
        "INSERT INTO races (id, code, game, deal_number, private, status, created_by, time_limit_s, created_at, kind) "
        "VALUES (?, ?, 'persian-patience', 1, 1, 'running', ?, 600, 0, 'race')",
        [(r, f"R{r:05d}", r * RACERS_PER_RACE) for r in range(1, racers // RACERS_PER_RACE + 2)],
    )
    db.execute("COMMIT")
    db.execute("PRAGMA foreign_keys=ON")
    return db


def commits(db: sqlite3.Connection, path: Path, racers: int, batch: int, count: int, seed: int) -> dict[str, float]:
    """``count`` commits of ``batch`` moves each, after as many to warm up: CPU and WAL."""
    rnd = random.Random(seed)
    seqs = [0] * racers
    row = "(" + ", ".join("?" * len(MOVE_LOG_COLUMNS)) + ")"
    sql = f"INSERT INTO move_log ({', '.join(MOVE_LOG_COLUMNS)}) VALUES {', '.join([row] * batch)}"

    def one() -> None:
        params: list[Any] = []
        for _ in range(batch):
            p = rnd.randrange(racers)
            params += (p // RACERS_PER_RACE + 1, p + 1, seqs[p], "move", "7>f", 1234)
            seqs[p] += 1
        db.execute("BEGIN")
        db.execute(sql, params)
        db.execute("COMMIT")

    for _ in range(count):
        one()
    db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    wal = Path(f"{path}-wal")
    before, started = wal.stat().st_size, time.process_time()
    for _ in range(count):
        one()
    cpu = time.process_time() - started
    return {
        "us_per_row": cpu / (count * batch) * 1e6,
        "us_per_commit": cpu / count * 1e6,
        "wal_kib_per_commit": (wal.stat().st_size - before) / count / 1024,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--racers", type=int, default=1000)
    parser.add_argument("--commits", type=int, default=600, help="measured commits per case (as many warm up first)")
    parser.add_argument("--batches", default="1,8,60,230", help="moves per commit")
    parser.add_argument("--json", help="write the figures to this file")
    args = parser.parse_args(argv)
    try:
        batches = [int(b) for b in args.batches.split(",")]
    except ValueError:
        parser.error(f"--batches takes numbers separated by commas, not {args.batches!r}")
    if args.racers < RACERS_PER_RACE or args.commits < 1 or not batches or min(batches) < 1 or max(batches) > 1000:
        parser.error(f"need --racers >= {RACERS_PER_RACE}, --commits >= 1 and batches of 1 to 1,000")
    out: list[dict[str, Any]] = []
    print(
        f"{'moves/commit':>12} {'layout':>10} {'µs/row':>8} {'µs/commit':>10} {'WAL KiB/commit':>15} {'CPU ratio':>10}"
    )
    for batch in batches:
        figures = {}
        for layout in ("clustered", "journal"):
            with tempfile.TemporaryDirectory() as tmp:
                path = Path(tmp) / "log.sqlite3"
                db = prepare(path, layout, args.racers)
                try:
                    figures[layout] = commits(db, path, args.racers, batch, args.commits, seed=batch)
                finally:
                    db.close()
        for layout, f in figures.items():
            ratio = f["us_per_row"] / figures["clustered"]["us_per_row"]
            print(
                f"{batch:>12} {layout:>10} {f['us_per_row']:>8.1f} {f['us_per_commit']:>10.0f}"
                f" {f['wal_kib_per_commit']:>15.1f} {ratio:>10.2f}"
            )
            out.append({"batch": batch, "layout": layout, **f, "cpu_ratio": ratio})
    if args.json:
        Path(args.json).write_text(json.dumps(out, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
