"""Leaderboard queries at scale: ``python bench/leaderboard.py [--results N] [--db FILE|URL]``.

Creates a database with the real schema (``Store.open`` runs the Alembic migrations), fills
it with N results (default one million) shaped like real traffic, then times every board
query through the store, the same calls the websocket protocol and the HTTP API make:

- 50,000 players; 7 games; a year of daily challenges holding 40% of the results (ranked
  attempts, about 150 per challenge); the rest spread over 200,000 race deals, plus one
  popular deal with 5,000 results;
- player_stats filled from the results the way ``finish_race`` keeps it.

Prints the median and worst time of each query over repeated runs, in milliseconds.
Figures are printed, never asserted.

``--db`` is a SQLite file to create (default: a temporary one), or a PostgreSQL URL
(``postgresql+asyncpg://postgres@127.0.0.1/leaderboard_bench``): a database that does not
exist yet is created (through the server's ``postgres`` database), an empty one is used,
and one with tables in it is refused; ``--drop`` drops it at the end.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import sqlite3
import statistics
import tempfile
import time
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import databases  # bench/databases.py, beside this script
from solitaire_race.engine import all_games
from solitaire_race.names import name_key
from solitaire_race.store import Store

GAMES = list(all_games())
PLAYERS = 50_000
DAYS = 365
POPULAR_DEAL = 777
EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
START = datetime(2025, 11, 21, tzinfo=UTC)


def micros(moment: datetime) -> int:
    return (moment - EPOCH) // timedelta(microseconds=1)


Rows = list[tuple[Any, ...]]


def generate(results: int, seed: int = 1) -> tuple[Rows, Rows, Rows, Rows]:
    """Players, races, results and daily attempts, as the columns of ``fill``'s INSERTs."""
    rng = random.Random(seed)
    now = micros(START)
    players = [(i, f"player{i}", name_key(f"player{i}"), f"{i:064x}", now) for i in range(1, PLAYERS + 1)]
    days = [(START.date() + timedelta(days=d)).isoformat() for d in range(DAYS)]
    daily_taken: set[tuple[str, str, int]] = set()
    races, rows, attempts = [], [], []
    for race_id in range(1, results + 1):
        game = rng.choice(GAMES)
        player = rng.randint(1, PLAYERS)
        kind, day = "race", None
        if rng.random() < 0.4:
            day = rng.choice(days)
            if (game, day, player) not in daily_taken:
                daily_taken.add((game, day, player))
                kind = "daily"
            else:
                day = None
        if day:
            deal = hash((game, day)) & 0xFFFFFFFFFF
        else:
            deal = POPULAR_DEAL if rng.random() < 0.005 else rng.randint(1, 200_000)
        won = rng.random() < 0.35
        time_ms = rng.randint(40_000, 1_800_000) if won else rng.randint(5_000, 1_800_000)
        moves = rng.randint(30, 400)
        home = 52 if won else rng.randint(4, 51)
        finished = now + rng.randint(0, DAYS * 86_400) * 1_000_000
        races.append(
            (race_id, f"C{race_id:09d}", game, deal, 1, player, now, now, finished, "finished", 1800, kind, day)
        )
        rows.append((race_id, player, "won" if won else "stuck", 1, time_ms, moves, home, 52, "", finished,
                     game, deal, day if kind == "daily" else None, 0 if won else 1, time_ms if won else 52 - home))
        if kind == "daily":
            attempts.append((game, day, player, race_id, now))
    return players, races, rows, attempts


PLAYER_COLUMNS = ("id", "name", "name_key", "token_hash", "created_at")
RACE_COLUMNS = ("id", "code", "game", "deal_number", "private", "created_by", "created_at", "started_at", "finished_at",
                "status", "time_limit_s", "kind", "daily_date")
RESULT_COLUMNS = ("race_id", "player_id", "outcome", "rank", "time_ms", "moves", "home", "total", "move_log",
                  "finished_at", "game", "deal_number", "daily_date", "rank_class", "sort_primary")
ATTEMPT_COLUMNS = ("game", "date", "player_id", "race_id", "started_at")


def stats_fill(sqlite: bool) -> list[str]:
    """player_stats from the results, as finish_race would have kept it (SQLite sums a
    comparison; PostgreSQL's is a boolean, summed through CASE)."""
    won, share = ("rank_class = 0", "rank_class = 0") if sqlite else (
        "CASE WHEN rank_class = 0 THEN 1 ELSE 0 END", "CASE WHEN rank_class = 0 THEN 1.0 ELSE 0.0 END")
    return [
        "INSERT INTO player_stats (player_id, game, games, wins, win_rate, win_moves, last_win_at, best_time_ms, "
        f"best_moves, best_at) SELECT player_id, game, COUNT(*), SUM({won}), AVG({share}), "
        "COALESCE(SUM(CASE WHEN rank_class = 0 THEN moves END), 0), "
        "MAX(CASE WHEN rank_class = 0 THEN finished_at END), "
        "MIN(CASE WHEN rank_class = 0 THEN time_ms END), NULL, NULL FROM results GROUP BY player_id, game",
        # best_moves/best_at of the fastest win, as finish_race would have kept them.
        "UPDATE player_stats SET (best_moves, best_at) = (SELECT moves, finished_at FROM results r "
        "WHERE r.player_id = player_stats.player_id AND r.game = player_stats.game AND r.rank_class = 0 "
        "AND r.time_ms = player_stats.best_time_ms ORDER BY moves, finished_at LIMIT 1) WHERE best_time_ms IS NOT NULL",
    ]


def fill(path: Path, results: int, seed: int = 1, analyze: bool = True) -> None:
    """Bulk-load with the stdlib driver: the fastest honest way to reach a million rows.

    ``analyze``: end with ANALYZE. The server never runs it, so a real database has no
    planner statistics; ``--no-analyze`` measures that case."""
    players, races, rows, attempts = generate(results, seed)
    db = sqlite3.connect(path)
    db.execute("PRAGMA synchronous=OFF")

    def insert(table: str, columns: tuple[str, ...], values: Rows) -> None:
        db.executemany(f"INSERT INTO {table} ({', '.join(columns)}) VALUES ({', '.join('?' * len(columns))})", values)

    insert("players", PLAYER_COLUMNS, players)
    insert("races", RACE_COLUMNS, races)
    insert("results", RESULT_COLUMNS, rows)
    insert("daily_attempts", ATTEMPT_COLUMNS, attempts)
    for statement in stats_fill(sqlite=True):
        db.execute(statement)
    db.commit()
    if analyze:
        db.execute("ANALYZE")
    db.close()


async def fill_postgresql(url: str, results: int, seed: int = 1, analyze: bool = True) -> int:
    """``fill`` on PostgreSQL, with COPY (asyncpg's ``copy_records_to_table``); returns the
    database's size in bytes. ``results`` is always ANALYZEd (the fill needs it); with
    ``analyze``, VACUUM ANALYZE, as autovacuum leaves a server's tables; without, the rest is
    left to autovacuum, which may get to it while the queries are timed."""
    import asyncpg

    players, races, rows, attempts = generate(results, seed)
    races = [(*race[:4], bool(race[4]), *race[5:]) for race in races]  # races.private is a boolean there
    conn = await asyncpg.connect(databases.libpq_url(url))
    try:
        async with conn.transaction():
            tables = (("players", PLAYER_COLUMNS, players), ("races", RACE_COLUMNS, races),
                      ("results", RESULT_COLUMNS, rows), ("daily_attempts", ATTEMPT_COLUMNS, attempts))
            for table, columns, values in tables:
                await conn.copy_records_to_table(table, records=values, columns=list(columns))
            # Planner statistics first: without them PostgreSQL runs the correlated UPDATE
            # as a scan of the results per player (it did not finish in minutes).
            await conn.execute("ANALYZE results")
            for statement in stats_fill(sqlite=False):
                await conn.execute(statement)
        if analyze:  # and VACUUM: the visibility map lets the boards' counts read their indexes alone
            await conn.execute("VACUUM ANALYZE")
        return int(await conn.fetchval("SELECT pg_database_size(current_database())"))
    finally:
        await conn.close()


async def timed(fn: Callable[[], Awaitable[Any]], runs: int) -> tuple[float, float]:
    await fn()  # warm the page cache and statement cache
    times = []
    for _ in range(runs):
        t = time.perf_counter()
        await fn()
        times.append((time.perf_counter() - t) * 1000)
    return statistics.median(times), max(times)


async def measure(url: str, runs: int) -> dict[str, tuple[float, float]]:
    store = await Store.open(url)
    try:
        game = "cruel"
        day = (START.date() + timedelta(days=200)).isoformat()
        daily = await store.leaderboard("daily", game, date=day, page_size=100)
        viewer = daily.entries[-1].player_id if daily.entries else None
        fastest = await store.leaderboard("fastest", game, page=200, page_size=100)
        deep_viewer = fastest.entries[-1].player_id if fastest.entries else None
        queries: dict[str, Callable[[], Awaitable[Any]]] = {
            "daily board, page 1 + own rank": lambda: store.leaderboard("daily", game, date=day, viewer=viewer),
            "deal board (5k results), page 1 + own rank": lambda: store.leaderboard(
                "deal", game, deal=POPULAR_DEAL, viewer=viewer
            ),
            "deal board (typical deal), page 1": lambda: store.leaderboard("deal", game, deal=12345),
            "fastest, page 1 + own rank (deep)": lambda: store.leaderboard("fastest", game, viewer=deep_viewer),
            "fastest, page 100": lambda: store.leaderboard("fastest", game, page=100),
            "most wins, page 1 + own rank (deep)": lambda: store.leaderboard("wins", game, viewer=deep_viewer),
            "win rate >= 3 games, page 1 + own rank": lambda: store.leaderboard(
                "win_rate", game, min_games=3, viewer=deep_viewer
            ),
            "profile": lambda: store.profile(deep_viewer or 1),
        }
        return {name: await timed(fn, runs) for name, fn in queries.items()}
    finally:
        await store.close()


async def prepare(url: str) -> None:
    store = await Store.open(url)  # the real schema, through the real migrations
    await store.close()


def main(argv: list[str] | None = None) -> dict[str, tuple[float, float]]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--results", type=int, default=1_000_000)
    parser.add_argument("--runs", type=int, default=30)
    parser.add_argument("--db", help="SQLite file to create (default: a temporary one), or a postgresql+asyncpg:// URL "
                        "of a new or empty database (created if missing)")
    parser.add_argument("--drop", action="store_true", help="PostgreSQL: drop the database at the end")
    parser.add_argument("--json", help="also write the figures (ms) to this file")
    parser.add_argument(
        "--no-analyze", action="store_true", help="no ANALYZE after the fill, as on a server's database"
    )
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        postgresql = databases.is_postgresql(args.db)
        if postgresql:
            url = args.db
            asyncio.run(databases.create_new(url))
        else:
            path = Path(args.db) if args.db else Path(tmp) / "leaderboard-bench.sqlite3"
            path.unlink(missing_ok=True)
            url = f"sqlite+aiosqlite:///{path}"
        try:
            asyncio.run(prepare(url))
            t = time.perf_counter()
            if postgresql:
                size = asyncio.run(fill_postgresql(url, args.results, analyze=not args.no_analyze))
            else:
                fill(path, args.results, analyze=not args.no_analyze)
                size = path.stat().st_size
            print(f"filled {args.results:,} results in {time.perf_counter() - t:.1f} s ({size / 1e6:.0f} MB)")
            figures = asyncio.run(measure(url, args.runs))
        finally:
            if postgresql and args.drop:
                asyncio.run(databases.drop(url))
    print(f"{'query':<46}{'median ms':>10}{'max ms':>9}")
    for name, (median, worst) in figures.items():
        print(f"{name:<46}{median:>10.2f}{worst:>9.2f}")
    if args.json:
        figures_ms = {k: {"median_ms": m, "max_ms": w} for k, (m, w) in figures.items()}
        Path(args.json).write_text(json.dumps(figures_ms, indent=2))
    return figures


if __name__ == "__main__":
    main()
