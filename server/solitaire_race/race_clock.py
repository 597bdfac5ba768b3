"""The race clock: the server's monotonic time, less the time the server itself stalled.

A race is timed on the server, so a stall of the server (its event loop blocked, the
process paused by the system, a disk write hanging the loop) would be charged to every
racer still playing, and not to those who had finished: an 18 s SIGSTOP added 18 s to the
players still racing. This clock leaves stalls out for everyone alike: a ticker task
marks every ``tick_s`` that the loop is turning; a reading that finds the last mark older
than ``stall_s`` counts the excess as a stall and does not advance by it. The first
reading after a stall (a move, a timer, or the ticker itself) accounts for it, so no
message is ever timed with the stall in it. Rooms, timers and deadlines all run on this
clock; the gateway's rate limits keep real time. docs/fair-play.md states the rule.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable

from .observe import Metrics, event

log = logging.getLogger("solitaire_race.race_clock")

TICK_S = 0.05  # the ticker's period
STALL_S = 0.25  # a gap longer than this between ticks is a stall of the server


class RaceClock:
    """``now()`` is the time in seconds; ``start`` the ticker once the loop runs. Those who
    read it are given ``now``, a plain callable (a bound method is called for less than an
    instance's ``__call__``, on every move)."""

    def __init__(
        self, source: Callable[[], float] = time.monotonic, *, tick_s: float = TICK_S, stall_s: float = STALL_S,
        metrics: Metrics | None = None,
    ) -> None:
        self.source = source
        self.tick_s = tick_s
        self.stall_s = stall_s
        self.stalled = 0.0  # seconds of stalls left out so far
        self._mark = source()  # the last time the loop was seen turning
        self._ticker: asyncio.Task[None] | None = None
        self._stalls = metrics.counter("solitaire_stalls_total") if metrics else None
        self._stalled_seconds = metrics.counter("solitaire_stalled_seconds_total") if metrics else None

    def now(self) -> float:
        now = self.source()
        gap = now - self._mark
        if gap > self.stall_s:
            stall = gap - self.tick_s  # the ticker would have marked the loop within a tick
            self.stalled += stall
            if self._stalls is not None and self._stalled_seconds is not None:
                self._stalls.inc()
                self._stalled_seconds.inc(stall)
            event(log, "server_stall", logging.WARNING, seconds=round(stall, 3))
        self._mark = now
        return now - self.stalled

    def start(self) -> None:
        self._ticker = asyncio.get_running_loop().create_task(self._tick())

    async def _tick(self) -> None:
        while True:
            await asyncio.sleep(self.tick_s)
            self.now()

    def stop(self) -> None:
        if self._ticker is not None:
            self._ticker.cancel()
