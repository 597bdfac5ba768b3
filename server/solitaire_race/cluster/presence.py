"""What a cluster's nodes tell each other about players: who just signed in where, and how
many new identities each client address made.

- **Signed in.** A player signs in on one node (``signed_in``): every other node is told
  on a Redis channel, and one that holds an older connection of that player replaces it
  (``replaced``, close code 4001), as a single process does within itself. Pub/sub
  delivers to the nodes connected at that moment: a node cut off from Redis then misses
  it, and its older connection stays open until it closes by itself (it can still race:
  each connection sits in its own node's rooms).
- **New identities per address** are counted in Redis, so the limit holds across the
  cluster and not once per node (``new_identity_allowed``): a token bucket per address,
  refilled continuously, in one Lua script (atomic on the Redis server). If Redis cannot
  be reached the node counts on its own (the gateway's bucket) rather than refuse everyone.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable

from redis.asyncio import Redis
from redis.exceptions import RedisError

from ..observe import event

log = logging.getLogger("solitaire_race.cluster")

# KEYS[1]: the address's bucket. ARGV: capacity, refill per ms. Takes one token if there is
# one (1) or not (0), on the Redis server's clock (one clock for every node); the bucket
# expires once it would be full again.
_TAKE = """
local capacity = tonumber(ARGV[1])
local rate = tonumber(ARGV[2])
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
local state = redis.call('HMGET', KEYS[1], 'tokens', 'at')
local tokens = tonumber(state[1]) or capacity
local at = tonumber(state[2]) or now
tokens = math.min(capacity, tokens + math.max(0, now - at) * rate)
local allowed = 0
if tokens >= 1 then
  tokens = tokens - 1
  allowed = 1
end
redis.call('HSET', KEYS[1], 'tokens', tostring(tokens), 'at', tostring(now))
redis.call('PEXPIRE', KEYS[1], math.ceil((capacity - tokens) / rate) + 1000)
return allowed
"""


class Presence:
    """Signed-in notices and the shared count of new identities, for the node ``holder``
    (its id and run: a node ignores its own notices)."""

    def __init__(self, redis: Redis, prefix: str, holder: str, redis_url: str) -> None:
        self.redis = redis
        # The subscription waits for notices as long as there are none: a client of its
        # own, without the short socket timeout the leases' requests have (redis-py before
        # 8.1 applies that timeout to a subscription's reads too).
        self.listener_redis = Redis.from_url(redis_url)
        self.prefix = prefix
        self.holder = holder
        self.channel = f"{prefix}signed-in"
        self._take = redis.register_script(_TAKE)
        self._listener: asyncio.Task[None] | None = None

    def start(self, replace: Callable[[int], None]) -> None:
        """Call ``replace(player_id)`` whenever the player signs in on another node."""
        self._listener = asyncio.create_task(self._listen(replace))

    async def _listen(self, replace: Callable[[int], None]) -> None:
        while True:  # until close(): a lost subscription is made again
            try:
                async with self.listener_redis.pubsub() as channel:
                    await channel.subscribe(self.channel)
                    async for message in channel.listen():
                        if message.get("type") != "message":
                            continue
                        data = message["data"]
                        text = data.decode("utf-8", "replace") if isinstance(data, bytes) else str(data)
                        player, _, holder = text.partition(" ")
                        if holder != self.holder and player.isascii() and player.isdigit():
                            replace(int(player))
            except (RedisError, OSError) as exc:
                event(log, "presence_lost", logging.WARNING, reason=str(exc))
                await asyncio.sleep(1.0)
            except Exception:  # a bug: logged, and the subscription made again
                log.exception("the signed-in notices failed")
                await asyncio.sleep(1.0)

    async def signed_in(self, player_id: int) -> None:
        try:
            await self.redis.publish(self.channel, f"{player_id} {self.holder}")
        except (RedisError, OSError) as exc:
            event(log, "presence_not_told", logging.WARNING, player=player_id, reason=str(exc))

    async def new_identity_allowed(self, address: str, per_hour: int) -> bool | None:
        """Whether ``address`` may make one more identity (taking it), or None if Redis
        cannot say (the caller decides alone)."""
        try:
            key = f"{self.prefix}new-identities:{address}"
            return bool(await self._take(keys=[key], args=[per_hour, per_hour / 3_600_000]))
        except (RedisError, OSError):
            return None

    async def close(self) -> None:
        if self._listener is not None:
            self._listener.cancel()
            await asyncio.gather(self._listener, return_exceptions=True)
        await self.listener_redis.aclose()
