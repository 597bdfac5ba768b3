"""Cluster benchmark: one node on SQLite, one on PostgreSQL, and clusters of nodes on
PostgreSQL and Redis, under the same load; then failover and capacity.

    python bench/cluster.py [--racers 1000] [--rooms 8] [--seconds 6] [--setups sqlite,pg,1,2,3,1/2]
                            [--repeat 3] [--spread]
                            [--routing 50] [--failovers 10] [--failover-rooms 100]
                            [--capacity 250,500,1000,1500,2000,3000,4000,6000,8000]
                            [--db postgresql+asyncpg://postgres@127.0.0.1/solitaire_bench_cluster]
                            [--redis redis://127.0.0.1:6379/0] [--json FILE]

**Scaling** (``--setups``): ``sqlite`` is one ``serve`` on a SQLite file, ``pg`` one on
PostgreSQL (a single process: no Redis), ``N`` a cluster of N nodes (``serve --redis``)
on PostgreSQL, and ``1/N`` one cluster node carrying what each node of an N-node cluster
carries (its share of the rooms): what a node costs per move at that load, with nothing
shared. Every node is pinned to CPU 0 and bench/load.py's load generator to CPU 1,
with the rooms spread over the nodes (each room's racers all on one node, as they end up
once the redirect has brought them there): at saturation, and at 2 moves/s per racer.
``--repeat`` rounds measure every setup once each, round-robin (which runs first
alternates); the table has the medians. Prints moves per second, the server CPU per move
(all nodes together; PostgreSQL's own processes are not counted), p50/p99 round trips,
memory per racer (all nodes), and for clusters the **efficiency**: moves per server
CPU-second against one cluster node's (from the medians; in brackets the lowest and
highest of the rounds' own ratios). On a machine with one core for the nodes, N nodes
share it: this measures what the cluster costs per move, not how far it scales out.
``--spread`` pins node *i* to CPU *i* mod the CPU count instead (the generator stays on
CPU 1): nodes on cores of their own, where the machine has them.

**Failover** (``--failovers``): two nodes; ``--failover-rooms`` rooms of two racers on one
node, every racer following a winning line, a move every 2 s (after a takeover its next
move goes at once). The node is killed (SIGKILL) and its racers
reconnect to the other (as they would through the proxy), which adopts each room on its
first request; then the dead node is started again, and the next round kills the node that
now holds the rooms. Prints, per round, the time from the kill until every room has
acknowledged a move again, and the acknowledged moves lost (a racer's move count after
the takeover below the moves the server had acknowledged to it).

**Routing** (``--routing``): what the redirect costs, against what relaying frames over
Redis would. Joins of a race on node 0 made directly there, and through node 1 (which
answers ``race_elsewhere``; the client library reconnects to node 0, signs in again and
joins); and a Redis PUBLISH reaching a subscriber, the hop a relay would add twice to
every move (there and back). Medians and p99s.

**Capacity** (``--capacity``): one cluster node on PostgreSQL, 2 moves/s per racer in
rooms of 8, stepping the racers up until the p99 crosses 50 ms (or the node no longer
answers the moves asked for): the p99 at each step, and for each of 5 ms and 50 ms the
largest step before the p99 first crossed it.

The PostgreSQL database under ``--db`` is the benchmark's: dropped and made anew for each
setup, dropped at the end; the Redis keys are under that database's name. Loopback only,
every loop bounded in count and time. Nothing is asserted.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import databases  # bench/databases.py
import load  # bench/load.py: the load generator, and its server processes
from racers import GAME, SOLVED_DEALS, Player, solved_deals  # bench/racers.py: the generator's racers

DEFAULT_DB = "postgresql+asyncpg://postgres@127.0.0.1:5432/solitaire_bench_cluster"
DEFAULT_REDIS = "redis://127.0.0.1:6379/0"
LEASE_TTL_S = 4.0  # the default (serve --lease-ttl)
MOVE_EVERY_S = 2.0  # a failover racer's pace


def fresh(db: str, redis: str) -> None:
    """A new, empty database, and no Redis keys left under its name (a killed node's
    leases would name races of the new database's ids)."""
    from redis.asyncio import Redis

    from solitaire_race.store import database_name

    async def clean() -> None:
        client = Redis.from_url(redis)
        try:
            keys = [key async for key in client.scan_iter(match=f"solitaire:{database_name(db)}:*")]
            if keys:
                await client.delete(*keys)
        finally:
            await client.aclose()

    databases.recreate(db)
    asyncio.run(clean())


def start_nodes(
    setup: str, db: str, redis: str, tmp: Path, spread: bool = False
) -> list[tuple[subprocess.Popen[str], str]]:
    """``setup``'s servers: ``sqlite``, ``pg``, ``N`` cluster nodes, or ``1/N`` (one cluster
    node, which carries a share of the racers: ``racers_of``)."""
    if setup == "sqlite":
        return [load.start_server("race", tmp / "bench.sqlite3")]
    fresh(db, redis)
    if setup == "pg":
        return [load.start_server("race", db)]
    count = 1 if "/" in setup else int(setup)
    nodes = [load.start_server("race", db, extra=("--redis", redis, "--node-id", f"n{i}")) for i in range(count)]
    if spread:  # started on CPU 0 like every server (load.start_server); node i moves to CPU i
        cpus = os.cpu_count() or 1
        for i, (proc, _) in enumerate(nodes):
            os.sched_setaffinity(proc.pid, {i % cpus})
    return nodes


def racers_of(setup: str, racers: int, room: int) -> int:
    """The racers a setup carries: all of them, or for ``1/N`` what the busiest node of N
    carries (whole rooms, spread as evenly as they go)."""
    if "/" not in setup:
        return racers
    rooms = -(-racers // room)
    return -(-rooms // int(setup.split("/")[1])) * room


def stop(nodes: list[tuple[subprocess.Popen[str], str]]) -> None:
    for proc, _ in nodes:
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
    for proc, _ in nodes:
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=10)


def scaling(args: argparse.Namespace) -> list[dict[str, Any]]:
    """Every setup under each load, ``--repeat`` rounds, round-robin (a round measures every
    setup once, so the machine's slow spells fall on all of them): the medians, and the
    efficiency from them."""
    setups = args.setups.split(",")
    loads = (("saturation", None), ("2 moves/s", 2.0))
    runs: dict[tuple[str, str], list[dict[str, Any]]] = {(s, label): [] for s in setups for label, _ in loads}
    for round_no in range(1, args.repeat + 1):
        order = setups if round_no % 2 else setups[::-1]  # which runs first alternates
        for setup in order:
            for label, rate in loads:
                with tempfile.TemporaryDirectory() as tmp:
                    nodes = start_nodes(setup, args.db, args.redis, Path(tmp), args.spread)
                    try:
                        urls = ",".join(url for _, url in nodes)
                        for _, url in nodes:
                            load.warm_up(url)
                        racers = racers_of(setup, args.racers, args.rooms)
                        r = load.run_case("race", urls, [p for p, _ in nodes], racers, args.rooms, args.seconds, rate)
                    finally:
                        stop(nodes)
                r["per_cpu"] = r["per_s"] / r["server_cpu"] if r["server_cpu"] else float("nan")
                runs[(setup, label)].append(r)
                if args.repeat > 1:
                    print(f"  round {round_no}: {setup} at {label}: {r['per_s']:,.0f} moves/s, "
                          f"{1e6 / r['per_cpu']:,.0f} µs cpu/move, p99 {r['p99_us']:,.0f} µs", flush=True)
                if r["error_count"]:
                    print(f"    {r['error_count']} errors, e.g. {r['errors'][:3]}", flush=True)
    print(f"{'setup':<10}{'load':<14}{'moves/s':>9}{'µs cpu/move':>12}{'p50 µs':>9}{'p99 µs':>9}"
          f"{'KiB/racer':>10}{'efficiency':>11}  (medians of {args.repeat})", flush=True)
    rows: list[dict[str, Any]] = []
    for label, _ in loads:
        one = runs.get(("1", label))
        for setup in setups:
            done = runs[(setup, label)]
            med = load.medians(done)
            efficiency = (med["per_cpu"] / statistics.median(r["per_cpu"] for r in one)
                          if one and setup.isdigit() else None)
            # Each round's own ratio too: the spread says how far one run can be trusted.
            ratios = ([r["per_cpu"] / o["per_cpu"] for r, o in zip(done, one, strict=True)]
                      if one and setup.isdigit() else [])
            row = {**med, "setup": setup, "load": label, "racers": racers_of(setup, args.racers, args.rooms),
                   "cpu_us_per_move": 1e6 / med["per_cpu"], "efficiency": efficiency,
                   "efficiency_rounds": ratios, "runs": done}
            rows.append(row)
            eff = f"{efficiency:.2f}" if efficiency is not None else ""
            spread = f"  ({min(ratios):.2f}-{max(ratios):.2f})" if len(ratios) > 1 and setup != "1" else ""
            name = f"{setup} ({row['racers']})" if "/" in setup else setup
            print(f"{name:<10}{label:<14}{med['per_s']:>9,.0f}{row['cpu_us_per_move']:>12,.0f}{med['p50_us']:>9,.0f}"
                  f"{med['p99_us']:>9,.0f}{med['rss_per_racer_kib']:>10.1f}{eff:>11}{spread}", flush=True)
    return rows


# --- failover ------------------------------------------------------------------------------


class Mover:
    """One racer of the failover benchmark: a room's player, moving every ``MOVE_EVERY_S``."""

    def __init__(self, conn: Any, code: str, view: dict[str, Any], rng: random.Random, line: list[str]) -> None:
        self.conn, self.code, self.rng, self.line = conn, code, rng, line
        self.player = Player(view, rng, line)
        self.acked = 0  # moves the server acknowledged
        self.lost = 0
        self.back_at: float | None = None  # when a move was acknowledged after the last kill
        self.over = False  # its game ended (won, or found stuck): it moves no more

    async def run(self, stop_at: float) -> None:
        from solitaire_race.client.connection import Disconnected

        while time.perf_counter() < stop_at and not self.over:
            move = self.player.next_move()
            if move is None:
                self.over = True
                return
            text = self.player.game.format_move(move)
            try:
                reply = await self.conn.request({"type": "move", "moves": [text]})
            except Disconnected:
                await asyncio.sleep(0.05)
                continue
            if reply["type"] == "move_result" and reply["applied"] == [text]:
                self.player.played(move)
                self.acked = reply["moves"]
                if self.back_at is None:
                    self.back_at = time.perf_counter()
                if reply["outcome"] != "playing":
                    self.over = True
                    return
            elif reply["type"] == "error" and reply["code"] in ("game_over", "race_not_running"):
                self.over = True  # found stuck by the server, or the race ended
                return
            await asyncio.sleep(MOVE_EVERY_S)

    async def move_to(self, url: str) -> None:
        """The node died: to ``url``, back into the room; count what the takeover lost."""
        for _ in range(100):  # bounded: the other node adopts the room within the lease
            try:
                await self.conn.move_to(url)
                reply = await self.conn.request({"type": "join_race", "code": self.code})
                if reply["type"] != "room":
                    await asyncio.sleep(0.2)
                    continue
                while True:
                    event = await self.conn.next_event(timeout=10)
                    if event["type"] == "race_started":
                        break
                self.lost += max(0, self.acked - event["moves"])
                # On from the position as the server has it: its move count is our place in the line.
                self.player = Player(event["view"], self.rng, self.line[event["moves"]:])
                self.acked = event["moves"]
                return
            except Exception:
                await asyncio.sleep(0.2)
        raise RuntimeError(f"race {self.code} did not come back")


async def failover_rounds(args: argparse.Namespace, urls: list[str], restart: Any) -> list[dict[str, Any]]:
    from solitaire_race.client.connection import Connection

    rng = random.Random(1)
    # Winning lines (~100 moves): at a move every 2 s no game ends within ten rounds.
    pool = solved_deals(SOLVED_DEALS)
    movers: list[Mover] = []
    owner = 0
    for room in range(args.failover_rooms):
        host, guest = await Connection.open(urls[owner]), await Connection.open(urls[owner])
        for conn, who in ((host, "h"), (guest, "g")):
            await conn.request({"type": "hello", "name": f"fo-{room}-{who}"})
        deal, line = pool[room % len(pool)]
        reply = await host.request({"type": "create_race", "game": GAME, "deal": deal})
        code = reply["race"]["code"]
        await guest.request({"type": "join_race", "code": code})
        await host.request({"type": "start_race"})
        for conn in (host, guest):
            while (event := await conn.next_event(timeout=10))["type"] != "race_started":
                pass
            movers.append(Mover(conn, code, event["view"], rng, line))
    rounds = []
    for round_no in range(1, args.failovers + 1):
        stop_at = time.perf_counter() + 3600
        running = [asyncio.ensure_future(m.run(stop_at)) for m in movers]
        await asyncio.sleep(2 * MOVE_EVERY_S + 0.5)  # moving
        for m in movers:
            m.back_at = None
        killed_at = time.perf_counter()
        restart(owner, kill=True)
        owner = 1 - owner
        for task in running:
            task.cancel()
        await asyncio.gather(*running, return_exceptions=True)
        await asyncio.gather(*(m.move_to(urls[owner]) for m in movers))
        running = [asyncio.ensure_future(m.run(stop_at)) for m in movers]
        deadline = time.perf_counter() + 60
        while time.perf_counter() < deadline and any(m.back_at is None for m in movers if not m.over):
            await asyncio.sleep(0.1)
        for task in running:
            task.cancel()
        await asyncio.gather(*running, return_exceptions=True)
        rooms: dict[str, float] = {}
        still = {m.code for m in movers if not m.over}  # rooms with a game still going
        for m in movers:
            if m.back_at is not None and m.code in still:
                rooms[m.code] = max(rooms.get(m.code, 0.0), m.back_at - killed_at)
        lost = sum(m.lost for m in movers)
        # A room that never moved again within the minute is the worst of all: it has no time.
        worst = max(rooms.values(), default=None) if len(rooms) == len(still) else None
        median = statistics.median(rooms.values()) if rooms else None
        rounds.append({"round": round_no, "rooms": len(still), "rooms_back": len(rooms), "worst_s": worst,
                       "median_s": median, "lost": lost})
        last = "never, for some" if len(rooms) < len(still) else f"the last {worst or 0:.1f} s after the kill"
        print(f"round {round_no:>2}: {len(rooms)} of {len(still)} rooms moving again, {last} "
              f"(median {median or 0:.1f} s); acknowledged moves lost: {lost}", flush=True)
        restart(1 - owner, kill=False)  # the dead node comes back, empty
    for m in movers:
        await m.conn.close()
    return rounds


def failover(args: argparse.Namespace) -> list[dict[str, Any]]:
    fresh(args.db, args.redis)
    nodes = [load.start_server("race", args.db, extra=("--redis", args.redis, "--node-id", f"n{i}")) for i in (0, 1)]
    urls = [url for _, url in nodes]
    ports = [url.rsplit(":", 1)[1].split("/")[0] for url in urls]

    def restart(i: int, kill: bool) -> None:
        proc = nodes[i][0]
        if kill:
            proc.kill()
            proc.wait(timeout=10)
            return
        # On its old port: the other node's racers were told its address.
        nodes[i] = load.start_server("race", args.db, extra=("--redis", args.redis, "--node-id", f"n{i}",
                                                              "--port", ports[i]))

    try:
        print(f"failover: {args.failover_rooms} rooms of 2 on one of two nodes, a move every {MOVE_EVERY_S:g} s "
              "per racer, "
              f"lease {LEASE_TTL_S:g} s", flush=True)
        return asyncio.run(failover_rounds(args, urls, restart))
    finally:
        stop(nodes)


async def routing_rounds(urls: list[str], redis: str, count: int) -> dict[str, Any]:
    from redis.asyncio import Redis

    from solitaire_race.client.connection import Connection

    host = await Connection.open(urls[0])
    await host.request({"type": "hello", "name": "route-host"})
    times: dict[str, list[float]] = {"direct": [], "redirected": []}
    for i in range(count):
        for how, url in (("direct", urls[0]), ("redirected", urls[1])):
            guest = await Connection.open(url)
            await guest.request({"type": "hello", "name": f"route-{how[0]}{i}"})
            code = (await host.request({"type": "create_race", "game": GAME}))["race"]["code"]
            started = time.perf_counter()
            reply = await guest.request({"type": "join_race", "code": code})
            times[how].append(time.perf_counter() - started)
            assert reply["type"] == "room", reply
            await guest.close()
            await host.request({"type": "leave_race"})
    await host.close()
    publisher, subscriber = Redis.from_url(redis), Redis.from_url(redis)
    channel = subscriber.pubsub()
    await channel.subscribe("solitaire-bench:relay")
    await channel.get_message(timeout=1)
    hops = []
    for _ in range(count * 20):
        sent = time.perf_counter()
        await publisher.publish("solitaire-bench:relay", "x" * 120)  # about a move's size
        while (message := await channel.get_message(timeout=1)) is None or message["type"] != "message":
            pass
        hops.append(time.perf_counter() - sent)
    await channel.aclose()  # type: ignore[no-untyped-call]  # redis-py: untyped
    await publisher.aclose()
    await subscriber.aclose()
    times["relay hop"] = hops
    out = {}
    for how, values in times.items():
        values.sort()
        out[how] = {"p50_ms": values[len(values) // 2] * 1e3, "p99_ms": values[int(len(values) * 0.99)] * 1e3}
        print(f"  {how:<11} p50 {out[how]['p50_ms']:6.2f} ms   p99 {out[how]['p99_ms']:6.2f} ms", flush=True)
    return out


def routing(args: argparse.Namespace) -> dict[str, Any]:
    fresh(args.db, args.redis)
    nodes = [load.start_server("race", args.db, extra=("--redis", args.redis, "--node-id", f"n{i}")) for i in (0, 1)]
    try:
        print(f"routing: {args.routing} joins each way; a relay hop {args.routing * 20} times", flush=True)
        return asyncio.run(routing_rounds([url for _, url in nodes], args.redis, args.routing))
    finally:
        stop(nodes)


def capacity(args: argparse.Namespace) -> dict[str, Any]:
    steps = [int(n) for n in args.capacity.split(",")]
    under: dict[str, int | None] = {"5ms": None, "50ms": None}
    crossed: set[str] = set()
    rows = []
    print("capacity: one cluster node on PostgreSQL, 2 moves/s per racer, rooms of 8", flush=True)
    for racers in steps:
        with tempfile.TemporaryDirectory() as tmp:
            nodes = start_nodes("1", args.db, args.redis, Path(tmp))
            try:
                load.warm_up(nodes[0][1])
                r = load.run_case("race", nodes[0][1], nodes[0][0], racers, 8, args.seconds, 2.0)
            finally:
                stop(nodes)
        rows.append({"racers": racers, **r})
        print(f"  {racers:>6} racers: {r['per_s']:>7,.0f} moves/s, p50 {r['p50_us']:>7,.0f} µs, "
              f"p99 {r['p99_us']:>8,.0f} µs, cpu {r['server_cpu']:.0%}", flush=True)
        keeping_up = r["per_s"] >= 1.9 * racers  # the moves asked for, nearly all answered
        for bound, limit in (("5ms", 5000), ("50ms", 50000)):
            if r["p99_us"] < limit and keeping_up and bound not in crossed:
                under[bound] = racers
            elif bound not in crossed:
                crossed.add(bound)  # the largest step before the first crossing counts
        if r["p99_us"] >= 50000 or not keeping_up:
            break  # past both bounds: the steps above would only take longer to say so
    print(f"  racers per node at a p99 under 5 ms: {under['5ms']}; under 50 ms: {under['50ms']}", flush=True)
    return {"steps": rows, "under": under}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--racers", type=int, default=1000)
    parser.add_argument("--rooms", type=int, default=8)
    parser.add_argument("--seconds", type=float, default=6.0)
    parser.add_argument("--setups", default="sqlite,pg,1,2,3,1/2",
                        help="sqlite, pg, cluster sizes, 1/N: one node with a node's share of N (empty: none)")
    parser.add_argument("--repeat", type=int, default=3, help="rounds of the scaling setups (medians)")
    parser.add_argument("--spread", action="store_true",
                        help="a cluster's node i on CPU i mod the CPU count, not every node on CPU 0")
    parser.add_argument("--failovers", type=int, default=10, help="failover rounds (0: none)")
    parser.add_argument("--failover-rooms", type=int, default=100)
    parser.add_argument("--routing", type=int, default=50, help="joins each way for the routing figures (0: none)")
    parser.add_argument("--capacity", default="250,500,1000,1500,2000,3000,4000,6000,8000",
                        help="racer counts to step up through, until the p99 crosses 50 ms (empty: none)")
    parser.add_argument("--db", default=DEFAULT_DB, help="a PostgreSQL database the benchmark owns")
    parser.add_argument("--redis", default=DEFAULT_REDIS)
    parser.add_argument("--json", help="write the figures to this file")
    args = parser.parse_args()
    if not databases.is_postgresql(args.db):
        parser.error("--db takes a postgresql+asyncpg:// URL")
    load.raise_fd_limit()
    results: dict[str, Any] = {}
    try:
        if args.setups:
            results["scaling"] = scaling(args)
        if args.routing > 0:
            results["routing"] = routing(args)
        if args.failovers > 0:
            results["failover"] = failover(args)
        if args.capacity:
            results["capacity"] = capacity(args)
    finally:
        asyncio.run(databases.drop(args.db))
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=2, default=str))
    return 0


if __name__ == "__main__":
    sys.exit(main())
