"""Bot clients: players that connect, join a race and play it through the protocol.

``run_bot`` runs one bot for one race (connect, sign up, create or join, get ready or start,
play at most ``speed`` moves per second chosen by ``policy.Policy`` from the bot's own view,
wait for the ranking) and returns its ``BotResult``. ``run_bots`` runs several together:
with a join code they all join that race and say ready; without one the first bot creates a
private race, waits until the others are in, and starts it. The ``solitaire-race bot``
command (``main``) is ``run_bots`` with a printed log. A load generator can import these.
"""

from __future__ import annotations

import argparse
import asyncio
import random
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ..client.connection import DEFAULT_SERVER, KEEPALIVE_S, REQUEST_TIMEOUT_S, Connection, Disconnected
from ..client.terminal_text import safe_text
from ..engine import view_changes
from ..results import RacerOutcome, outcome_label
from .policy import Policy

Log = Callable[[str], None]
JOIN_WAIT_S = 60.0  # how long a creating bot waits for the others to join
START_WAIT_S = 3600.0  # how long a joined bot waits for someone to start the race
MAX_PLAYERS = 8
STUCK_WAIT_S = 1.0  # how long a bot with no useful move waits for the server's verdict
MAX_UNSAVED = 10  # storage_unavailable answers in a row before a bot gives up
RESUME_DELAYS_S = (0.2, 0.5, 1.0, 1.0, 2.0, 2.0, 3.0, 3.0, 5.0, 5.0)  # ~23 s: more than a node's failover


class Pacer:
    """Spaces a bot's moves so that at most ``speed`` go out per second (0: no limit).

    Pure: the caller passes the time, so the pacing is tested without a clock."""

    def __init__(self, speed: float, now: float) -> None:
        self.interval = 1.0 / speed if speed > 0 else 0.0
        self.next_at = now

    def wait(self, now: float) -> float:
        """Seconds to wait before sending the next move; books that move's slot."""
        delay = max(0.0, self.next_at - now)
        self.next_at = max(self.next_at, now) + self.interval
        return delay


class BotError(RuntimeError):
    """The server refused something a bot needs (the message says what)."""


@dataclass
class BotResult:
    """How one bot's race went; ``ranking`` is the race's (``race_finished``)."""

    name: str
    code: str
    game: str
    deal: int
    outcome: str
    moves: int
    home: int
    total: int
    rank: int | None = None
    time_ms: int | None = None
    ranking: list[dict[str, Any]] = field(default_factory=list)


def _quiet(_: str) -> None:
    pass


def _check(reply: dict[str, Any], wanted: str) -> dict[str, Any]:
    if reply.get("type") != wanted:
        raise BotError(f"{reply.get('code', reply.get('type'))}: {reply.get('message', reply)}")
    return reply


async def sign_up(conn: Connection, name: str) -> str:
    """Create a new player named ``name`` (a random suffix is added if it is taken)."""
    candidate = name
    for _ in range(5):  # bounded: a taken name gets a fresh suffix
        reply = await conn.request({"type": "hello", "name": candidate})
        if reply.get("type") == "welcome":
            return str(reply["player"]["name"])
        if reply.get("code") != "name_taken":
            _check(reply, "welcome")
        candidate = f"{name}-{random.randrange(1000, 10000)}"
    raise BotError(f"could not find a free name like {name!r}")


class Bot:
    """One bot player on its own connection."""

    def __init__(self, conn: Connection, name: str, speed: float, log: Log, policy_options: dict[str, Any]) -> None:
        self.conn = conn
        self.name = name
        self.speed = speed
        self.log = log
        self.policy_options = policy_options
        self.room: dict[str, Any] | None = None

    async def create(self, game: str, deal: int | None, time_limit_s: int | None) -> dict[str, Any]:
        message: dict[str, Any] = {"type": "create_race", "game": game, "private": True}
        if deal is not None:
            message["deal"] = deal
        if time_limit_s is not None:
            message["time_limit_s"] = time_limit_s
        self.room = _check(await self.conn.request(message), "room")["race"]
        return self.room

    async def join(self, code: str) -> dict[str, Any]:
        self.room = _check(await self.conn.request({"type": "join_race", "code": code}), "room")["race"]
        reply = await self.conn.request({"type": "ready", "ready": True})
        if reply.get("code") != "race_started":  # the creator may start before we say ready
            _check(reply, "room")
        return self.room

    async def start_when_joined(self, players: int) -> None:
        """As the creator: wait until ``players`` are in the room, then start the race."""
        assert self.room is not None
        async with asyncio.timeout(JOIN_WAIT_S):
            while len(self.room["players"]) < players:
                event = await self.conn.next_event(keepalive_s=KEEPALIVE_S)
                if event["type"] == "room":
                    self.room = event["race"]
                elif event["type"] == "closed":
                    raise Disconnected(event["reason"])
        _check(await self.conn.request({"type": "start_race"}), "room")

    async def wait_start(self) -> dict[str, Any]:
        async with asyncio.timeout(START_WAIT_S):
            while True:
                event = await self.conn.next_event(keepalive_s=KEEPALIVE_S)
                if event["type"] == "race_started":
                    return event
                if event["type"] == "room":
                    self.room = event["race"]
                elif event["type"] == "closed":
                    raise Disconnected(event["reason"])

    async def _verdict(self, wait_s: float) -> str:
        """This bot's outcome if the server ends its game within ``wait_s`` (a `progress`
        about it), else "playing". Other events stay queued for the caller."""
        kept: list[dict[str, Any]] = []
        outcome: str = RacerOutcome.PLAYING
        try:
            async with asyncio.timeout(wait_s):
                while outcome == RacerOutcome.PLAYING:
                    event = await self.conn.next_event()
                    kept.append(event)
                    if event["type"] == "progress" and event["name"] == self.name:
                        outcome = event["outcome"]
                    elif event["type"] in ("race_finished", "closed"):
                        break
        except TimeoutError:
            pass
        while not self.conn.events.empty():  # keep the arrival order
            kept.append(self.conn.events.get_nowait())
        for event in kept:
            self.conn.events.put_nowait(event)
        return outcome

    async def resume(self, code: str, why: str) -> dict[str, Any]:
        """Back to race ``code`` after the connection dropped or the race moved to another
        server node (``race_moved``): through the server the bot first reached, which
        brings it to the race wherever it runs now. Returns the race's ``race_started``
        (the view as the server has it) or ``race_finished``."""
        self.log(f"{self.name}: {why}: back to race {code}")
        for delay in RESUME_DELAYS_S:
            await asyncio.sleep(delay)
            try:
                if self.conn.closed:
                    await self.conn.reopen()
                reply = await self.conn.request({"type": "join_race", "code": code})
                if reply["type"] != "room":
                    if reply.get("code") in ("storage_unavailable", "race_moved"):
                        continue
                    raise BotError(f"cannot go back to race {code}: {reply.get('message')}")
                while True:
                    event = await self.conn.next_event(timeout=REQUEST_TIMEOUT_S)
                    if event["type"] in ("race_started", "race_finished"):
                        return event
                    if event["type"] == "closed":
                        break
            except (Disconnected, TimeoutError):
                continue
        raise Disconnected(f"could not go back to race {code}: {why}")

    async def play(self, started: dict[str, Any]) -> BotResult:
        """Play the game from ``race_started`` to its end, then wait for the ranking."""
        conn, loop = self.conn, asyncio.get_running_loop()
        view, outcome, moves = started["view"], started["outcome"], started["moves"]
        result = BotResult(self.name, started["code"], started["game"], started["deal"], outcome, moves, 0, 0)
        policy = Policy(started["game"], **self.policy_options)
        pacer = Pacer(self.speed, loop.time())
        finished: dict[str, Any] | None = None
        self.log(f"{self.name}: race {started['code']} started ({started['game']}, deal {started['deal']})")
        unsaved = 0  # storage_unavailable answers in a row
        while outcome == RacerOutcome.PLAYING and finished is None:
            lost = None
            while not conn.events.empty():  # the race may end meanwhile (time limit)
                event = conn.events.get_nowait()
                if event["type"] == "race_finished":
                    finished = event
                elif event["type"] == "closed":
                    lost = event["reason"]
                elif event["type"] == "error" and event.get("code") == "race_moved":
                    lost = event["message"]
            if finished is None and lost is not None:
                back = await self.resume(result.code, lost)
                if back["type"] == "race_finished":
                    finished = back
                else:
                    view, outcome, moves = back["view"], back["outcome"], back["moves"]
                continue
            if finished is not None:
                break
            move = policy.choose(view)
            if move is None:
                # The server may be finding this game stuck (it searches after answering
                # the move): give it a moment before resigning.
                outcome = await self._verdict(STUCK_WAIT_S)
                if outcome == RacerOutcome.PLAYING:
                    reply = await conn.request({"type": "resign"})
                    outcome = RacerOutcome.RESIGNED if reply.get("type") == "progress" else "over"
                    self.log(f"{self.name}: nothing useful left, resigned")
                break
            delay = pacer.wait(loop.time())
            if delay > 0:
                await asyncio.sleep(delay)
            try:
                reply = await conn.request({"type": "move", "moves": [move]})
            except Disconnected as exc:
                conn.events.put_nowait({"type": "closed", "reason": str(exc)})  # resumed above
                continue
            if reply["type"] == "error":
                if reply["code"] in ("game_over", "race_not_running"):  # found stuck, or the time is up
                    outcome = "over"
                    break
                if reply["code"] in ("race_moved", "storage_unavailable"):
                    # Not acknowledged: the race (as the server has it) comes back with resume;
                    # a server that cannot save for long is given up on.
                    unsaved = unsaved + 1 if reply["code"] == "storage_unavailable" else 0
                    if unsaved > MAX_UNSAVED:
                        raise BotError(f"{self.name}: the server cannot save moves: {reply['message']}")
                    conn.events.put_nowait({"type": "error", "code": "race_moved", "message": reply["message"]})
                    continue
                raise BotError(f"{reply['code']}: {reply['message']}")
            if reply["rejected"] is not None:
                # The view said it was legal: a disagreement with the server is a bug here.
                raise BotError(f"{self.name}: server refused {move}: {reply['rejected']['reason']}")
            unsaved = 0
            view = view_changes.apply(view, reply["changes"])
            outcome, moves = reply["outcome"], reply["moves"]
            result.home, result.total = reply["progress"]["home"], reply["progress"]["total"]
        result.outcome, result.moves = outcome, moves
        if outcome != RacerOutcome.PLAYING:
            self.log(f"{self.name}: {outcome_label(outcome)} after {moves} moves")
        while finished is None:
            event = await conn.next_event(timeout=started["time_limit_s"] + 60.0, keepalive_s=KEEPALIVE_S)
            if event["type"] == "race_finished":
                finished = event
            elif event["type"] == "closed" or (event["type"] == "error" and event.get("code") == "race_moved"):
                back = await self.resume(result.code, event.get("reason") or event["message"])
                finished = back if back["type"] == "race_finished" else None
        result.ranking = finished["ranking"]
        for entry in result.ranking:
            if entry["name"] == self.name:
                result.rank, result.outcome, result.time_ms = entry["rank"], entry["outcome"], entry["time_ms"]
                result.moves, result.home, result.total = entry["moves"], entry["home"], entry["total"]
        return result


async def run_bot(
    server: str = DEFAULT_SERVER,
    name: str = "bot",
    *,
    code: str | None = None,
    game: str = "cruel",
    deal: int | None = None,
    speed: float = 2.0,
    players: int = 1,
    time_limit_s: int | None = None,
    on_created: Callable[[str], None] | None = None,
    log: Log = _quiet,
    policy_options: dict[str, Any] | None = None,
) -> BotResult:
    """Run one bot for one race.

    With ``code`` the bot joins that race and says ready; otherwise it creates a race of
    ``game`` (and ``deal``), reports the join code to ``on_created``, waits until ``players``
    are in the room and starts it. ``speed`` caps its moves per second (0: no cap).
    """
    conn = await Connection.open(server)
    try:
        bot = Bot(conn, await sign_up(conn, name), speed, log, policy_options or {})
        if code is not None:
            room = await bot.join(code)
            log(f"{bot.name}: joined race {room['code']} ({room['game']}, deal {room['deal']}), ready")
        else:
            room = await bot.create(game, deal, time_limit_s)
            log(f"{bot.name}: created race {room['code']} ({room['game']}, deal {room['deal']})")
            if on_created is not None:
                on_created(room["code"])
            await bot.start_when_joined(players)
        return await bot.play(await bot.wait_start())
    finally:
        await conn.close()


async def run_bots(
    server: str = DEFAULT_SERVER,
    count: int = 1,
    *,
    code: str | None = None,
    game: str = "cruel",
    deal: int | None = None,
    speed: float = 2.0,
    prefix: str = "bot",
    time_limit_s: int | None = None,
    log: Log = _quiet,
    policy_options: dict[str, Any] | None = None,
) -> list[BotResult]:
    """Run ``count`` bots, each its own player (``<prefix>-<4 digits>-<n>``), in one race."""
    if not 1 <= count <= MAX_PLAYERS:
        raise ValueError(f"--count must be 1-{MAX_PLAYERS}, got {count}")
    tag = random.randrange(1000, 10000)
    names = [f"{prefix}-{tag}-{i}" for i in range(1, count + 1)]
    common: dict[str, Any] = {"speed": speed, "log": log, "policy_options": policy_options}
    if code is not None:
        return list(await asyncio.gather(*(run_bot(server, n, code=code, **common) for n in names)))
    created: asyncio.Future[str] = asyncio.get_running_loop().create_future()
    creator = asyncio.ensure_future(
        run_bot(
            server, names[0], game=game, deal=deal, players=count, time_limit_s=time_limit_s,
            on_created=created.set_result, **common,
        )
    )
    try:
        # The others join once the race exists; if the creator fails first, so does this.
        first: list[asyncio.Future[Any]] = [creator, created]
        await asyncio.wait(first, return_when=asyncio.FIRST_COMPLETED)
        if not created.done():
            return [await creator]
        others = [run_bot(server, n, code=created.result(), **common) for n in names[1:]]
        return list(await asyncio.gather(creator, *others))
    except BaseException:
        creator.cancel()
        raise


def _format_time(ms: int | None) -> str:
    if ms is None:
        return "-"
    return f"{ms // 60000}:{ms // 1000 % 60:02d}.{ms % 1000 // 100}"


def main(args: argparse.Namespace) -> int:
    """``solitaire-race bot``: run the bots, print what they do and the final ranking."""

    def log(line: str) -> None:
        print(safe_text(line), flush=True)  # names and reasons come from the server

    try:
        results = asyncio.run(
            run_bots(
                args.server, args.count, code=args.join, game=args.game, deal=args.deal,
                speed=args.speed, prefix=args.name, time_limit_s=args.time_limit, log=log,
            )
        )
    except KeyboardInterrupt:
        return 130
    except (Disconnected, BotError, TimeoutError) as exc:
        print(f"solitaire-race bot: {safe_text(str(exc))}", flush=True)
        return 1
    ranking = results[0].ranking if results else []
    print(f"race {results[0].code} finished:" if results else "no race", flush=True)
    for entry in ranking:
        print(safe_text(
            f"  {entry['rank']:>2}. {entry['name']:<20} {outcome_label(entry['outcome']):<11} "
            f"{entry['home']:>3}/{entry['total']:<3} {entry['moves']:>4} moves  {_format_time(entry['time_ms'])}"
        ), flush=True)
    return 0
