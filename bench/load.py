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

The generator speaks the websocket protocol directly on asyncio (masked frames, minimal
parsing) so that it costs a few microseconds per message: a ``websockets`` client in the
same single core would saturate before the echo server does. Loopback only; every loop is
bounded by the case's time.
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import collections
import json
import math
import os
import random
import re
import resource
import signal
import statistics
import struct
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import msgspec

GAME = "persian-patience"
SECRET = "bench"  # the race server's deal secret here: a solver player deals the same cards
MOVES_PER_GAME = 300  # a racer resigns after this many moves
SERVER_CPU, GENERATOR_CPU = 0, 1  # the server under test gets a core to itself
SOLVED_DEALS = 8  # --player solver: the rooms share this many solved deals


# --- a small, fast websocket client -------------------------------------------------------


def read_frame(buf: bytearray, pos: int) -> tuple[int, bytes, int] | None:
    """The server frame at ``pos`` of ``buf`` (unmasked, as servers send them): its opcode,
    its payload and where the next one starts; None until it has arrived whole."""
    if len(buf) - pos < 2:
        return None
    opcode, length, start = buf[pos] & 0x0F, buf[pos + 1] & 0x7F, pos + 2
    if length == 126:
        if len(buf) - pos < 4:
            return None
        length, start = struct.unpack_from("!H", buf, pos + 2)[0], pos + 4
    elif length == 127:
        if len(buf) - pos < 10:
            return None
        length, start = struct.unpack_from("!Q", buf, pos + 2)[0], pos + 10
    if len(buf) < start + length:
        return None
    return opcode, bytes(buf[start : start + length]), start + length


class WsClient(asyncio.Protocol):
    """Just enough of RFC 6455 for a load generator: text frames out, text frames in
    (unmasked, as servers send them), pongs for pings, and the close frame.

    Client frames must be masked; the mask key is all zeros, which the protocol allows
    and which makes masking free (XOR with zero). Fine on loopback, where no proxy needs
    protecting from crafted frames."""

    MASK = b"\x00\x00\x00\x00"

    def __init__(self) -> None:
        self.transport: asyncio.Transport | None = None
        self.buffer = bytearray()
        self.handshake: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self.inbox: collections.deque[bytes] = collections.deque()
        self.waiter: asyncio.Future[None] | None = None
        self.closed = False

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]

    def _deliver(self, payload: bytes) -> None:
        self.inbox.append(payload)
        if self.waiter is not None and not self.waiter.done():
            self.waiter.set_result(None)

    def data_received(self, data: bytes) -> None:
        self.buffer += data
        if not self.handshake.done():
            end = self.buffer.find(b"\r\n\r\n")
            if end < 0:
                return
            status = bytes(self.buffer[:end]).split(b"\r\n", 1)[0]
            del self.buffer[: end + 4]
            if b" 101 " not in status:
                self.handshake.set_exception(ConnectionError(status.decode(errors="replace")))
                return
            self.handshake.set_result(None)
        buf = self.buffer
        pos = 0
        while (frame := read_frame(buf, pos)) is not None:
            opcode, payload, pos = frame
            if opcode == 0x1:
                self._deliver(payload)
            elif opcode == 0x9:
                self._frame(0xA, payload)
            elif opcode == 0x8:
                self.closed = True
                self._deliver(b"")
        del buf[:pos]

    def connection_lost(self, exc: Exception | None) -> None:
        self.closed = True
        self._deliver(b"")
        if not self.handshake.done():
            self.handshake.set_exception(ConnectionError("connection lost during the handshake"))

    def _frame(self, opcode: int, payload: bytes) -> None:
        n = len(payload)
        if n < 126:
            head = bytes((0x80 | opcode, 0x80 | n))
        elif n < 65536:
            head = bytes((0x80 | opcode, 0x80 | 126)) + struct.pack("!H", n)
        else:
            head = bytes((0x80 | opcode, 0x80 | 127)) + struct.pack("!Q", n)
        assert self.transport is not None
        self.transport.write(head + self.MASK + payload)

    def send(self, payload: bytes) -> None:
        self._frame(0x1, payload)

    async def recv(self) -> bytes:
        while not self.inbox:
            self.waiter = asyncio.get_running_loop().create_future()
            await self.waiter
        message = self.inbox.popleft()
        if not message and self.closed:
            raise ConnectionError("closed")
        return message

    def close(self) -> None:
        if self.transport is not None and not self.transport.is_closing():
            self._frame(0x8, struct.pack("!H", 1000))
            self.transport.close()


async def ws_connect(url: str) -> WsClient:
    m = re.fullmatch(r"ws://([^:/]+):(\d+)(/.*)", url)
    assert m, url
    host, port, path = m.group(1), int(m.group(2)), m.group(3)
    loop = asyncio.get_running_loop()
    _, client = await loop.create_connection(WsClient, host, port)
    key = base64.b64encode(os.urandom(16)).decode()
    request = (
        f"GET {path} HTTP/1.1\r\nHost: {host}:{port}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
        f"Sec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n\r\n"
    )
    assert client.transport is not None
    client.transport.write(request.encode())
    await client.handshake
    return client


# --- racers ---------------------------------------------------------------------------------


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


def summarise(runs: dict[str, list[dict[str, Any]]]) -> dict[str, Any]:
    """One case's figures from its runs (``runs[kind][i]``, the i-th echo and race runs made
    back to back): per server the median of each figure, and the ratio as the median of the
    pairs' own ratios, since a pair shares the machine's mood of the moment."""
    out: dict[str, Any] = {"runs": runs}
    for kind, results in runs.items():
        merged = dict(results[0])
        for key, value in results[0].items():
            if isinstance(value, (int, float)) and not isinstance(value, bool):
                merged[key] = statistics.median(r[key] for r in results)
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
