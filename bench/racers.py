"""The load generator's racers (bench/load.py runs them, in a process of its own): each
connects with the small websocket client (ws_client.py), plays real games from the views
the server sends (Persian Patience: home moves first, then builds; or winning lines of
solved deals), paced on a fixed grid or at saturation, and its round trips are counted;
``generate`` runs a case's racers and returns its figures."""

from __future__ import annotations

import asyncio
import math
import os
import random
import time
from typing import Any

import msgspec

from ws_client import WsClient, ws_connect  # bench/ws_client.py

GAME = "persian-patience"
SECRET = "bench"  # the race server's deal secret here: a solver player deals the same cards
MOVES_PER_GAME = 300  # a racer resigns after this many moves
SOLVED_DEALS = 8  # --player solver: the rooms share this many solved deals


class Reply(msgspec.Struct):
    type: str
    id: Any = None
    applied: list[str] | None = None
    rejected: Any = None
    outcome: str | None = None
    view: Any = None
    race: Any = None
    code: str | None = None


decode_reply = msgspec.json.Decoder(Reply).decode
encode = msgspec.json.Encoder().encode


class Stats:
    def __init__(self) -> None:
        self.rtts: list[float] = []
        self.errors: list[str] = []
        self.window = (0.0, 0.0)
        self.moves_in_window = 0
        self.races_finished = 0  # every race a room finished, those ended at the deadline too
        self.races_before_deadline = 0  # ...and those whose every racer was done before it

    def record(self, sent: float, received: float) -> None:
        if self.window[0] <= sent and received <= self.window[1]:
            self.rtts.append(received - sent)
            self.moves_in_window += 1


class Racer:
    def __init__(self, client: WsClient, name: str) -> None:
        self.client = client
        self.name = name
        self.next_id = 0
        self.early: list[Reply] = []  # messages read while waiting for something else

    async def request(self, message: dict[str, Any]) -> Reply:
        self.next_id += 1
        rid = self.next_id
        self.client.send(encode({**message, "id": rid}))
        return await self.wait(lambda r: r.id == rid)

    async def wait(self, match: Any) -> Reply:
        for i, reply in enumerate(self.early):
            if match(reply):
                return self.early.pop(i)
        while True:
            reply = decode_reply(await self.client.recv())
            if match(reply):
                return reply
            if reply.type not in ("progress", "standings", "room", "countdown"):  # ignored traffic
                self.early.append(reply)


class Player:
    """Chooses each next move from the racer's own position, rebuilt once from the view the
    server sent (Persian Patience shows every card): home moves first, then builds that
    are not pointless shuttles. One move at a time, so no racer computes a whole game
    up front while the others wait."""

    def __init__(self, view: dict[str, Any], rng: random.Random, line: list[str] | None = None) -> None:
        from solitaire_race.client.known import known_state
        from solitaire_race.engine import Kind, get_game

        self.game = get_game(view["game"])
        self.state = known_state(view)
        self.rng = rng
        self.home, self.build = Kind.HOME, Kind.BUILD
        self.line = list(line or ())  # a winning line to follow (``--player solver``)

    def next_move(self) -> Any:
        game, state = self.game, self.state
        if self.line:
            return game.parse_move(self.line.pop(0))
        legal = game.legal_moves(state)
        if not legal:
            return None
        home = [m for m in legal if m.kind is self.home]
        build = [m for m in legal if m.kind is self.build and not game.is_shuttle(state, m)]
        return self.rng.choice(home or build or legal)

    def played(self, move: Any) -> None:
        self.state = self.game.apply(self.state, move)


class Pacer:
    """A paced racer moves on a fixed grid, at epoch + phase + k * interval. Phases are spread
    evenly over one interval (racer i of n: i/n of it), for the echo and the race server
    alike, so both see the same smooth arrivals; a late reply skips to the next slot rather
    than catching up in a burst. With no interval (saturation) it never waits."""

    def __init__(self, epoch: float, interval: float | None, phase: float) -> None:
        self.epoch, self.interval, self.phase = epoch, interval, phase
        self.slot = -1  # the last slot used

    async def wait(self) -> None:
        if self.interval:
            now = time.perf_counter()
            # Never the same slot twice: uvloop's timers (whole milliseconds) can wake a
            # little early, and a reply within that margin would otherwise send again in
            # the slot just used (measured: 2,600 messages/s instead of 2,000).
            self.slot = max(self.slot + 1, math.ceil((now - self.epoch - self.phase) / self.interval))
            await asyncio.sleep(max(0.0, self.epoch + self.phase + self.slot * self.interval - now))


async def set_up_race(racers: list[Racer], deal: int | None = None) -> int:
    """Create a race (on ``deal``, else a random one), have everyone join, start it; its
    deal number."""
    host, guests = racers[0], racers[1:]
    room = await host.request({"type": "create_race", "game": GAME, **({} if deal is None else {"deal": deal})})
    code = room.race["code"]
    for guest in guests:
        await guest.request({"type": "join_race", "code": code})
    await host.request({"type": "start_race"})
    return int(room.race["deal"])


def solved_deals(count: int, secret: str = SECRET, time_budget_s: float = 0.5) -> list[tuple[int, list[str]]]:
    """``--player solver``: the first ``count`` deals with a winning line found in 20,000
    nodes (about 70% of deals, 0.25 s each), with their lines: games of ~100 moves played
    through to a win as a person would. Found before the clock
    starts; every room races on one of them, again and again. A generous
    ``time_budget_s`` leaves only the node budget, so every machine finds the same lines."""
    from solitaire_race.engine import get_game
    from solitaire_race.solver import solve

    game = get_game(GAME)
    pool: list[tuple[int, list[str]]] = []
    for deal in range(20 * count):  # bounded: ~30% of deals have no line in budget
        cards = game.deal(deal, secret.encode())
        result = solve(game, cards, node_budget=20_000, time_budget_s=time_budget_s, shorten_budget=0)
        if result.moves:
            pool.append((deal, list(result.moves)))
            if len(pool) == count:
                break
    return pool


async def race_room(
    racers: list[Racer], pacers: list[Pacer], stats: Stats, deadline: float, rng: random.Random,
    pool: list[tuple[int, list[str]]], first: int,
) -> None:
    """Play the race set up before, then race again and again until the deadline. With a
    ``pool`` of solved deals, every race is on the next one (from ``first``) and the racers
    follow its line; without, each race has a random deal and the naive player."""
    races = 0
    while True:
        line = pool[(first + races) % len(pool)][1] if pool else None

        async def play(racer: Racer, pacer: Pacer, line: list[str] | None) -> None:
            started = await racer.wait(lambda m: m.type == "race_started")
            player = Player(started.view, rng, line)
            await pacer.wait()
            for _ in range(MOVES_PER_GAME):
                move = player.next_move()
                if move is None or time.perf_counter() >= deadline:
                    break
                text = player.game.format_move(move)
                player.played(move)
                sent = time.perf_counter()
                reply = await racer.request({"type": "move", "moves": [text]})
                if reply.type == "error" and reply.code in ("game_over", "race_not_running"):
                    return  # the server found this game stuck a moment after answering its last move
                stats.record(sent, time.perf_counter())
                if reply.type != "move_result" or reply.applied != [text]:
                    stats.errors.append(f"{racer.name}: {text}: {reply.type} {reply.rejected or reply.code}")
                    break
                if reply.outcome != "playing":
                    return
                await pacer.wait()
            await racer.request({"type": "resign"})

        await asyncio.gather(*(play(r, p, line) for r, p in zip(racers, pacers, strict=True)))
        ended_by_itself = time.perf_counter() < deadline
        for racer in racers:
            await racer.wait(lambda r: r.type == "race_finished")
        for racer in racers:
            await racer.request({"type": "leave_race"})
        stats.races_finished += 1
        stats.races_before_deadline += ended_by_itself
        races += 1
        if time.perf_counter() >= deadline - 0.5:
            return
        await set_up_race(racers, pool[(first + races) % len(pool)][0] if pool else None)


async def echo_racer(racer: Racer, pacer: Pacer, stats: Stats, deadline: float) -> None:
    message = {"type": "move", "moves": ["3>f"]}
    await pacer.wait()
    while time.perf_counter() < deadline:
        sent = time.perf_counter()
        reply = await racer.request(message)
        stats.record(sent, time.perf_counter())
        if reply.type != "move":
            stats.errors.append(f"echo: {reply.type}")
        await pacer.wait()


async def generate(
    url: str,
    kind: str,
    racers: int,
    room_size: int,
    seconds: float,
    rate: float | None,
    player: str = "naive",
    warmup: float = 1.0,
) -> dict[str, Any]:
    stats = Stats()
    clients: list[Racer] = []
    urls = url.split(",")  # several servers (bench/cluster.py's nodes): rooms go round them
    for i in range(racers):
        client = await ws_connect(urls[i // room_size % len(urls)])
        racer = Racer(client, f"load{os.getpid()}-{i}")
        if kind == "race":
            welcome = await racer.request({"type": "hello", "name": racer.name[:32]})
            assert welcome.type == "welcome", welcome
        clients.append(racer)
    interval = 1.0 / rate if rate else None
    rooms = [clients[i : i + room_size] for i in range(0, racers, room_size)]
    pool = solved_deals(SOLVED_DEALS) if kind == "race" and player == "solver" else []
    if kind == "race":  # every room's first race is ready before the clock starts
        await asyncio.gather(*(set_up_race(r, pool[j % len(pool)][0] if pool else None) for j, r in enumerate(rooms)))
    now = time.perf_counter()
    stats.window = (now + warmup, now + warmup + seconds)
    deadline = stats.window[1]
    print("READY", flush=True)  # the parent samples the server's CPU and memory from here
    pacers = [Pacer(now, interval, (interval or 0) * i / racers) for i in range(racers)]

    async def own_cpu() -> float:
        """This generator's share of its core over the window: near 100%, it is the limit."""
        await asyncio.sleep(stats.window[0] - time.perf_counter())
        cpu0 = time.process_time()
        await asyncio.sleep(stats.window[1] - time.perf_counter())
        return (time.process_time() - cpu0) / seconds

    generator_cpu = asyncio.ensure_future(own_cpu())
    if kind == "race":
        await asyncio.gather(
            *(
                race_room(r, pacers[j * room_size : (j + 1) * room_size], stats, deadline, random.Random(j), pool, j)
                for j, r in enumerate(rooms)
            )
        )
    else:
        await asyncio.gather(*(echo_racer(r, p, stats, deadline) for r, p in zip(clients, pacers, strict=True)))
    for racer in clients:
        racer.client.close()
    rtts = sorted(stats.rtts)

    def pct(q: float) -> float:
        return rtts[min(len(rtts) - 1, int(q * len(rtts)))] * 1e6 if rtts else float("nan")

    return {
        "per_s": stats.moves_in_window / seconds,
        "p50_us": pct(0.50), "p99_us": pct(0.99), "max_us": rtts[-1] * 1e6 if rtts else float("nan"),
        "samples": len(rtts), "errors": stats.errors[:20], "error_count": len(stats.errors),
        "races_finished": stats.races_finished,
        "races_before_deadline": stats.races_before_deadline,
        "solved_deals": len(pool),  # --player solver: the deals with a line the rooms race on
        "generator_cpu": await generator_cpu,
    }
