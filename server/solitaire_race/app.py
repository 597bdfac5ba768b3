"""Wiring: the one place where the store, the server's parts and the transport are put together.

``App.start(config)`` opens the database (migrating it to the latest schema), builds the
server's parts (the queries, the races, identity, the connection gateway), resumes the
lobbies and races left by the last run, starts the server and returns once it listens.
With ``config.redis_url`` it is one node of a cluster (docs/cluster.md): it joins the
cluster once it listens, and adopts the races no node runs instead of resuming them all;
``App.stop()`` tells the clients to reconnect, closes the connections, then the database
(after the last move-log commit). Races and lobbies stay: the next start resumes them.
``serve(config)`` runs an App until SIGINT/SIGTERM; ``run(config)`` does so on the event
loop ``config.event_loop`` names.
"""

from __future__ import annotations

import asyncio
import gc
import logging
import signal
import sys
import time
from collections.abc import Callable
from dataclasses import replace
from datetime import UTC, datetime
from typing import Any

from . import transport
from .cluster.node import PLANNER, Cluster
from .cluster.placement import Placement
from .cluster.presence import Presence
from .config import EVENT_LOOPS, Config, loopback_only
from .confusables import prototypes
from .daily_planner import Chooser, DailyPlanner, first_candidate, solver_process
from .engine import all_games
from .gateway import Gateway, Outbox
from .identity import Identity
from .observe import Metrics
from .queries import Queries
from .race_clock import RaceClock
from .races import Races
from .recovery import recover
from .store import Store, database_name, display_url

log = logging.getLogger("solitaire_race")


class App:
    def __init__(
        self, config: Config, store: Store, planner: DailyPlanner, races: Races, gateway: Gateway,
        server: transport.Server, clock: RaceClock, placement: Placement | None = None,
        presence: Presence | None = None,
    ) -> None:
        self.config = config
        self.store = store
        self.planner = planner
        self.races = races
        self.gateway = gateway
        self.server = server
        self.clock = clock
        self.placement = placement  # these two on a node of a cluster
        self.presence = presence

    @classmethod
    async def start(
        cls, config: Config, *, wall_clock: Callable[[], datetime] | None = None, choose_daily: Chooser | None = None
    ) -> App:
        """``wall_clock`` (UTC) decides the date of daily challenges, and ``choose_daily``
        picks a day's deal (default: from ``config.daily_solver_nodes``); tests inject them."""
        cluster = None
        if config.redis_url:
            # Keys under the database's name: two clusters may share a Redis, never a database.
            cluster = Cluster.connect(
                config.redis_url, node_id=config.node_id, ttl_s=config.lease_ttl_s,
                prefix=f"solitaire:{database_name(config.db_url)}:",
            )
        # Locked to this process (checked in full first), unless it is a node of a cluster.
        store = await Store.open(config.db_url, serve=True, shared=cluster is not None)
        planner: DailyPlanner | None = None
        placement: Placement | None = None
        presence: Presence | None = None
        clock = RaceClock()
        try:
            secret = config.secret.encode("utf-8") if config.secret else await store.deal_secret()
            metrics = Metrics()
            store.commit_observer = metrics.observe_commit
            wall_clock = wall_clock or (lambda: datetime.now(UTC))
            if choose_daily is None:
                nodes = config.daily_solver_nodes
                choose_daily = solver_process(secret, nodes) if nodes > 0 else first_candidate(secret)
            games = all_games()
            planner = DailyPlanner(
                store, list(games), choose_daily, wall_clock, lead=None if cluster is None else cluster.leads(PLANNER),
                metrics=metrics,
            )
            queries = Queries(
                store=store, games=games, planner=planner, wall_clock=wall_clock, time_limit_s=config.time_limit_s,
                secret=secret,
            )
            outbox = Outbox()
            clock = RaceClock(metrics=metrics)  # server stalls are charged to no racer
            clock.start()
            races = Races(
                store=store, secret=secret, config=config, clock=clock.now, wall_clock=wall_clock,
                queries=queries, delivery=outbox, metrics=metrics,
            )
            gateway = Gateway(
                config=config, clock=time.monotonic, identity=Identity(store, wall_clock), queries=queries,
                races=races, outbox=outbox, metrics=metrics,
            )
            if cluster is None:
                await recover(races)
            else:  # the races no node runs are adopted once this node has joined (below)
                races.placement = placement = Placement(races, cluster)
                gateway.cluster = presence = Presence(
                    cluster.redis, cluster.prefix, cluster.leases.holder, cluster.redis_url
                )
            prototypes()  # the confusables data for names, read now rather than in the first hello
            races.start()
            planner.start()
            server = await transport.start(gateway, config)
            config = config.with_public_url(server.port)
            races.config = gateway.config = config
            if cluster is not None and placement is not None and presence is not None:
                await cluster.start(ws_url(config.node_url), placement.lost)
                placement.start()
                presence.start(gateway.signed_in_elsewhere)
        except BaseException:
            clock.stop()
            if placement is not None:
                await placement.close()
            if presence is not None:
                await presence.close()
            if planner is not None:
                await planner.close()
            await store.close()
            if cluster is not None:
                await cluster.close()
            raise
        return cls(config, store, planner, races, gateway, server, clock, placement, presence)

    @property
    def url(self) -> str:
        return self.config.public_url + "/"

    @property
    def ws_url(self) -> str:
        return ws_url(self.config.public_url)

    async def stop(self) -> None:
        self.races.shutdown()  # first: connections closing now leave their rooms as they are
        self.gateway.shutdown()  # tell the clients, while they are connected
        # Before the connections close: a handler waiting for a daily deal would hold up
        # wait_closed until its solver finished.
        await self.planner.close()  # stops a solver worker mid-search: the next start redoes it
        self.server.close()
        await self.server.wait_closed()
        self.clock.stop()
        if self.placement is not None:
            await self.placement.close()
        if self.presence is not None:
            await self.presence.close()
        await self.store.close()
        if self.placement is not None:  # after the last write: other nodes adopt its races now
            await self.placement.cluster.close()


class EventLoopUnavailable(RuntimeError):
    """``event_loop="uvloop"`` where uvloop is not installed."""


def ws_url(http_url: str) -> str:
    """The websocket address of the server at ``http_url``."""
    return http_url.replace("http", "ws", 1) + transport.WS_PATH


def loop_factory(name: str) -> tuple[str, Callable[[], asyncio.AbstractEventLoop]]:
    """The event loop to serve on, by name, and a factory for it. uvloop (libuv, in C)
    serves each message with less of the core than asyncio's own loop: at 2 moves/s per
    racer with 1,000 racers, 8% less CPU per move and a p99 of 4.4-4.8 ms instead of
    7.8-10.2 ms (docs/performance.md, "Design decisions"). ``auto``: uvloop where it is
    installed (it does not exist for Windows), else asyncio's."""
    if name not in EVENT_LOOPS:
        raise ValueError(f"unknown event loop {name!r}: choose one of {', '.join(EVENT_LOOPS)}")
    if name != "asyncio":
        try:
            import uvloop
        except ImportError:
            if name == "uvloop":
                raise EventLoopUnavailable(
                    "uvloop is not installed (pip install uvloop), or use the asyncio loop"
                ) from None
        else:
            return "uvloop", uvloop.new_event_loop
    return "asyncio", asyncio.new_event_loop


def run(config: Config) -> None:
    """Serve until SIGINT/SIGTERM on the event loop ``config.event_loop`` names."""
    name, factory = loop_factory(config.event_loop)
    with asyncio.Runner(loop_factory=factory) as runner:
        runner.run(serve(config, loop_name=name))


def tune_gc() -> None:
    """The collector's settings for serving, applied once start-up is done."""
    # Full collections re-scan every tracked object; the ones made at startup (modules,
    # SQLAlchemy, the engine) never die, and scanning them cost ~15-50 ms pauses under
    # load. Freeze them out of the scans. Each connection waiting for its next frame holds
    # ~25 fresh objects (websockets' receive chain), so a young collection with 1,000
    # racers took 10-35 ms and came every ~4 s at a threshold of 10,000; the server makes
    # almost no cyclic garbage (refcounting frees it all), and at 100,000 none came in 100 s.
    # The price: closed connections' cycles wait longer: over 15,000 connects the RSS levels
    # off 12-14 MiB higher (1.6 MiB at 10,000), a ceiling, not growth per racer.
    gc.collect()
    gc.freeze()
    gc.set_threshold(100_000, 10, 10)


async def serve(config: Config, loop_name: str = "asyncio") -> None:
    # Threads that do I/O for the event loop (aiosqlite, checkpoints) need the GIL for a
    # moment now and then; Python's default 5 ms switch interval makes them wait that long
    # behind a busy loop, which shows directly in move latency.
    sys.setswitchinterval(0.001)
    # Before anything else: a SIGTERM that comes while the server starts stops it cleanly
    # once it has started, instead of killing it.
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    app = await App.start(config)
    tune_gc()
    print(
        f"solitaire-race is running: open {app.url}"
        f" (websocket {app.ws_url}, database {display_url(config.db_url)}, event loop {loop_name})",
        flush=True,
    )
    if loopback_only(config.host):
        print(
            f"listening on {config.host} only: friends on other machines cannot open its join links;"
            " to let them in, serve with --host 0.0.0.0 (and --public-url if they reach it by another name)",
            flush=True,
        )
    try:
        await stop.wait()
    finally:
        print("shutting down: running races resume at the next start...", flush=True)
        await app.stop()
        print("stopped.", flush=True)


def configure(base: Config, **overrides: Any) -> Config:
    return replace(base, **{k: v for k, v in overrides.items() if v is not None})
