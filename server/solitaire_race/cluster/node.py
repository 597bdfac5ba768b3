"""This node's place in a cluster: its registration, what it owns, and where the rest lives.

Nodes share one PostgreSQL database (everything durable) and one Redis (who owns what,
right now). A node registers the URL clients reach it at (``node:<id>``), and holds a
lease (``leases.py``) on every race it runs and on the daily planner's job. One task
renews all of them together, every third of the lease's time to live; what it finds
lost (it was paused past the lease, or cut off from Redis, and another node took over)
is handed to ``on_lost`` at once, and the database's fencing (the race's epoch) refuses
any write the node still tries. Redis keeps nothing on disk: after a restart of Redis
every lease is gone, and each holder simply takes its own back at the next renewal,
unless another node took one first.

A race's owner is found from its lease: the holder's registration gives its URL
(``owner_url``). A race no node holds is an orphan (its node died): any node may adopt
it (``orphans``, then ``hold``) and resume it from the move log (docs/cluster.md).
"""

from __future__ import annotations

import asyncio
import logging
import os
import socket
from collections.abc import Awaitable, Callable, Collection

from redis.asyncio import Redis
from redis.exceptions import RedisError

from ..observe import event
from .leases import Leases, text

log = logging.getLogger("solitaire_race.cluster")

PLANNER = "daily-planner"  # the lease of the job that chooses each day's daily challenges


class ClusterUnavailable(ConnectionError):
    """The cluster's Redis cannot be reached at start: the node does not join."""


def race_lease(race_id: int) -> str:
    return f"race:{race_id}"


def default_node_id() -> str:
    return f"{socket.gethostname()}-{os.getpid()}"


class Cluster:
    """One node's registration and leases, under the Redis key prefix ``prefix``."""

    def __init__(self, redis: Redis, *, node_id: str, ttl_s: float, prefix: str = "solitaire:") -> None:
        self.redis = redis
        self.node_id = node_id
        self.prefix = prefix
        self.ttl_ms = max(300, int(ttl_s * 1000))
        self.leases = Leases(redis, prefix, node_id, self.ttl_ms)
        self.url = ""  # set by start(), once the node listens
        self.redis_url = ""  # the Redis it was connected to (connect)
        self.held: set[str] = set()  # the leases this run holds (as far as it knows)
        # Whether a lease this node finds lapsed (not taken by another) is still rightly its
        # own: it may take it back (a race's epoch unchanged in the database). Placement's.
        self.still_ours: Callable[[str], Awaitable[bool]] | None = None
        self._renewer: asyncio.Task[None] | None = None

    @classmethod
    def connect(cls, redis_url: str, *, node_id: str, ttl_s: float, prefix: str = "solitaire:") -> Cluster:
        # A short socket timeout: a Redis that hangs must not hold up a join or a renewal
        # past the lease it protects.
        timeout = max(0.2, ttl_s / 4)
        redis = Redis.from_url(redis_url, socket_timeout=timeout, socket_connect_timeout=timeout)
        cluster = cls(redis, node_id=node_id or default_node_id(), ttl_s=ttl_s, prefix=prefix)
        cluster.redis_url = redis_url
        return cluster

    def _node_key(self, node_id: str) -> str:
        return f"{self.prefix}node:{node_id}"

    async def start(self, url: str, on_lost: Callable[[set[str]], None]) -> None:
        """Register at ``url`` and keep everything held renewed until ``close``."""
        self.url = url
        try:
            await self.redis.set(self._node_key(self.node_id), url, px=self.ttl_ms)
        except (RedisError, OSError) as exc:
            raise ClusterUnavailable(f"cannot reach the cluster's Redis: {exc}") from None
        self._renewer = asyncio.create_task(self._renew_forever(on_lost))
        event(log, "node_joined", node=self.node_id, url=url)

    async def _renew_forever(self, on_lost: Callable[[set[str]], None]) -> None:
        while True:
            await asyncio.sleep(self.ttl_ms / 3000)
            try:
                lost = await self.renew()
                if lost:
                    event(log, "leases_lost", logging.WARNING, node=self.node_id, leases=sorted(lost))
                    on_lost(lost)
            except (RedisError, OSError) as exc:
                # Not fatal: the next renewal may get through before the leases run out;
                # if it does not, the leases are lost and the database fences this node.
                event(log, "lease_renewal_failed", logging.WARNING, node=self.node_id, reason=str(exc))
            except Exception:  # a bug: logged, and the renewals go on (a dead renewer loses every lease)
                log.exception("renewing the leases failed")

    async def renew(self) -> set[str]:
        """Renew the registration and every lease held; return the leases lost."""
        await self.redis.set(self._node_key(self.node_id), self.url, px=self.ttl_ms)
        names = sorted(self.held)
        lost = await self.leases.renew(names) & self.held  # not those given up meanwhile
        # A lease no one holds any more (it lapsed, or Redis restarted empty) is taken back if
        # it is still rightly ours: no node adopted the race meanwhile (its epoch unchanged).
        for name in sorted(lost):
            if (self.still_ours is None or await self.still_ours(name)) and await self.leases.take(name):
                lost.discard(name)
        self.held -= lost
        return lost

    async def hold(self, name: str) -> bool:
        """Take the lease ``name`` if no node holds it (or this run does already)."""
        if await self.leases.take(name):
            self.held.add(name)
            return True
        return False

    def leads(self, name: str) -> Callable[[], Awaitable[bool]]:
        """Asks whether this node holds ``name`` (taking it if no one does): False while
        Redis cannot be reached."""

        async def held() -> bool:
            try:
                return await self.hold(name)
            except (RedisError, OSError):
                return False

        return held

    async def release(self, name: str) -> None:
        """Give up ``name`` (a finished race): quietly, if Redis cannot be reached now (the
        lease then simply runs out)."""
        self.held.discard(name)
        try:
            await self.leases.release(name)
        except (RedisError, OSError) as exc:
            event(log, "lease_release_failed", logging.WARNING, lease=name, reason=str(exc))

    async def owner_url(self, name: str) -> tuple[str | None, str | None]:
        """(node id, URL) of the node holding ``name``: (None, None) if none does, and
        (id, None) if its holder no longer renews its registration (it died: the lease
        runs out within the time to live)."""
        holder = await self.leases.holder_of(name)
        if holder is None:
            return None, None
        url = await self.redis.get(self._node_key(holder))
        return holder, None if url is None else text(url)

    async def orphans(self, names: Collection[str]) -> set[str]:
        """Those of ``names`` that no node holds."""
        if not names:
            return set()
        ordered = list(names)
        values = await self.redis.mget([self.leases.key(n) for n in ordered])
        return {name for name, value in zip(ordered, values, strict=True) if value is None}

    async def close(self) -> None:
        """Stop renewing and give everything up (a clean stop: the races stay in the
        database, and other nodes adopt them at once instead of after the lease)."""
        if self._renewer is not None:
            self._renewer.cancel()
            await asyncio.gather(self._renewer, return_exceptions=True)
        try:
            for name in list(self.held):
                await self.leases.release(name)
            await self.redis.delete(self._node_key(self.node_id))
        except (RedisError, OSError) as exc:
            event(log, "cluster_leave_failed", logging.WARNING, node=self.node_id, reason=str(exc))
        self.held.clear()
        await self.redis.aclose()
