"""Leases on the real Redis (127.0.0.1:6379), each test under a key prefix of its own,
deleted at the end."""

from __future__ import annotations

import asyncio
import secrets
from collections.abc import AsyncIterator

import pytest
from redis.asyncio import Redis

from solitaire_race.cluster.leases import Leases

REDIS_URL = "redis://127.0.0.1:6379/0"


@pytest.fixture
async def redis() -> AsyncIterator[tuple[Redis, str]]:
    client = Redis.from_url(REDIS_URL)
    prefix = f"test-{secrets.token_hex(4)}:"
    try:
        yield client, prefix
    finally:
        keys = [key async for key in client.scan_iter(match=prefix + "*")]
        if keys:
            await client.delete(*keys)
        await client.aclose()


async def test_one_holder_at_a_time(redis: tuple[Redis, str]) -> None:
    client, prefix = redis
    a, b = Leases(client, prefix, "a", 5_000), Leases(client, prefix, "b", 5_000)
    assert await a.take("race:1")
    assert await a.take("race:1")  # its own again: kept
    assert not await b.take("race:1")
    assert await a.holder_of("race:1") == await b.holder_of("race:1") == "a"
    assert await b.holder_of("race:2") is None


async def test_a_renewed_lease_outlives_its_ttl_and_a_lapsed_one_goes_to_another(redis: tuple[Redis, str]) -> None:
    client, prefix = redis
    a, b = Leases(client, prefix, "a", 1000), Leases(client, prefix, "b", 1000)
    assert await a.take("race:1") and await a.take("race:2")
    for _ in range(6):  # 1.5 s: longer than the ttl, renewed every quarter of it
        await asyncio.sleep(0.25)
        assert await a.renew(["race:1"]) == set()
    assert await a.holder_of("race:1") == "a"
    assert await a.holder_of("race:2") is None  # not renewed: lapsed
    await asyncio.sleep(1.2)  # race:1 lapses too
    assert await b.take("race:1")
    assert await a.renew(["race:1", "race:2"]) == {"race:1", "race:2"}  # lost: not taken back
    assert await b.holder_of("race:1") == "b"


async def test_only_the_holder_releases(redis: tuple[Redis, str]) -> None:
    client, prefix = redis
    a, b = Leases(client, prefix, "a", 5_000), Leases(client, prefix, "b", 5_000)
    assert await a.take("planner")
    assert not await b.release("planner")
    assert await a.holder_of("planner") == "a"
    assert await a.release("planner")
    assert await b.take("planner")


async def test_a_restarted_node_does_not_hold_what_its_last_run_held(redis: tuple[Redis, str]) -> None:
    client, prefix = redis
    first, second = Leases(client, prefix, "a", 5_000), Leases(client, prefix, "a", 5_000)
    assert await first.take("race:1")
    assert not await second.take("race:1")  # same node id, another run: wait for the lease to lapse
    assert await second.renew(["race:1"]) == {"race:1"}
