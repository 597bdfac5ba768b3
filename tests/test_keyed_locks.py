"""keyed_locks.KeyedLocks: one holder per key at a time, in turn; nothing kept after."""

from __future__ import annotations

import asyncio

from solitaire_race.keyed_locks import KeyedLocks


async def test_holders_of_one_key_take_turns_and_other_keys_do_not_wait() -> None:
    locks = KeyedLocks()
    order: list[str] = []

    async def hold(key: str, name: str) -> None:
        async with locks.hold(key):
            order.append(f"{name} in")
            await asyncio.sleep(0.01)
            order.append(f"{name} out")

    await asyncio.gather(hold("a", "first"), hold("a", "second"), hold("b", "other"))
    assert order.index("first out") < order.index("second in")  # one at a time, in turn
    assert order.index("other in") < order.index("first out")  # another key does not wait
    assert len(locks) == 0  # a key nobody holds or awaits is forgotten


async def test_a_holder_that_fails_lets_the_next_in_and_is_forgotten() -> None:
    locks = KeyedLocks()

    async def fail() -> None:
        async with locks.hold(1):
            await asyncio.sleep(0)
            raise ValueError("refused")

    async def succeed() -> str:
        async with locks.hold(1):
            return "served"

    results = await asyncio.gather(fail(), succeed(), return_exceptions=True)
    assert isinstance(results[0], ValueError) and results[1] == "served"
    assert len(locks) == 0


async def test_a_waiter_cancelled_while_waiting_leaves_nothing_behind() -> None:
    locks = KeyedLocks()
    entered = asyncio.Event()
    release = asyncio.Event()

    async def holder() -> None:
        async with locks.hold("k"):
            entered.set()
            await release.wait()

    async def waiter() -> None:
        async with locks.hold("k"):
            raise AssertionError("a cancelled waiter never holds the lock")

    first = asyncio.ensure_future(holder())
    await entered.wait()
    second = asyncio.ensure_future(waiter())
    await asyncio.sleep(0)  # the waiter now waits for the lock
    second.cancel()
    await asyncio.gather(second, return_exceptions=True)
    release.set()
    await first
    assert len(locks) == 0
