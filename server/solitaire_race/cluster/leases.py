"""Leases in Redis: which node holds what (a race, the daily planner), and until when.

A lease is a key whose value names its holder, with a time to live. Taking one is
``SET NX PX``; a holder renews or gives up only its own, with a script that compares the
value first, in one step on the Redis server (the pattern of Redis' documented
single-instance lock). A holder names itself with its node id and a token of this run,
so a node that restarts under the same id does not take back what its last run held.

A lease says who *should* act. It cannot stop a holder that was paused past its lease
(or cut off from Redis) from acting once it runs again: every write that matters is
fenced in the database as well (the race's epoch, docs/cluster.md).
"""

from __future__ import annotations

import secrets
from collections.abc import Sequence

from redis.asyncio import Redis

# Extend each key held by ARGV[1] to ARGV[2] ms; return the keys that it did not hold.
_RENEW = """
local lost = {}
for _, key in ipairs(KEYS) do
  if redis.call('GET', key) == ARGV[1] then
    redis.call('PEXPIRE', key, ARGV[2])
  else
    table.insert(lost, key)
  end
end
return lost
"""
# Delete KEYS[1] if ARGV[1] holds it.
_RELEASE = """
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('DEL', KEYS[1])
end
return 0
"""


class Leases:
    """The leases one node takes, under ``prefix``, each for ``ttl_ms`` from its last renewal."""

    def __init__(self, redis: Redis, prefix: str, node: str, ttl_ms: int) -> None:
        self.redis = redis
        self.prefix = prefix
        self.node = node
        self.holder = f"{node}/{secrets.token_hex(6)}"  # this run of the node
        self.ttl_ms = ttl_ms
        self._renew = redis.register_script(_RENEW)
        self._release = redis.register_script(_RELEASE)

    def key(self, name: str) -> str:
        return f"{self.prefix}lease:{name}"

    async def take(self, name: str) -> bool:
        """Hold ``name`` if no one does (True), or if this run holds it already."""
        if await self.redis.set(self.key(name), self.holder, nx=True, px=self.ttl_ms):
            return True
        return bool(await self._renew(keys=[self.key(name)], args=[self.holder, self.ttl_ms]) == [])

    async def holder_of(self, name: str) -> str | None:
        """The node holding ``name`` (its id, without the run's token), or None."""
        value = await self.redis.get(self.key(name))
        return None if value is None else text(value).split("/", 1)[0]

    async def renew(self, names: Sequence[str]) -> set[str]:
        """Extend every lease of ``names`` this run holds; return those it no longer holds
        (expired, and maybe taken by another node meanwhile)."""
        if not names:
            return set()
        lost = await self._renew(keys=[self.key(n) for n in names], args=[self.holder, self.ttl_ms])
        start = len(self.key(""))
        return {text(key)[start:] for key in lost}

    async def release(self, name: str) -> bool:
        """Give ``name`` up, if this run holds it."""
        return bool(await self._release(keys=[self.key(name)], args=[self.holder]))


def text(value: bytes | str) -> str:
    return value.decode() if isinstance(value, bytes) else value
