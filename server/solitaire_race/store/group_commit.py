"""Group commit for the move log: many small appends, one transaction per batch.

Every accepted move must be durable before it is acknowledged, but a commit per move caps
throughput at a few thousand per second (shared/design/performance.md: 5.9k rows/s with
per-row commits, 400k with batches). So appends wait for the batch they join: while one
batch commits, newly arriving rows collect, and the next commit takes them all. No timer
and no added latency when the server is idle: a lone move commits at once.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Sequence
from typing import Any

from sqlalchemy import Table, insert
from sqlalchemy.ext.asyncio import AsyncEngine


class GroupCommitter:
    def __init__(
        self, engine: AsyncEngine, table: Table, write_lock: asyncio.Lock, on_commit: Callable[[int, float], None] | None = None
    ) -> None:
        self._engine = engine
        self._write_lock = write_lock
        self._table = table
        self._pending: list[tuple[list[dict[str, Any]], asyncio.Future[None]]] = []
        self._flusher: asyncio.Task[None] | None = None
        self._on_commit = on_commit  # (rows, seconds) after each commit: metrics

    async def append(self, rows: Sequence[dict[str, Any]]) -> None:
        """Return once ``rows`` are committed; raise if their batch failed."""
        future: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._pending.append((list(rows), future))
        if self._flusher is None or self._flusher.done():
            self._flusher = asyncio.create_task(self._flush())
        await future

    async def _flush(self) -> None:
        while self._pending:
            batch, self._pending = self._pending, []
            rows = [row for rows, _ in batch for row in rows]
            started = time.perf_counter()
            try:
                async with self._write_lock, self._engine.begin() as conn:
                    await conn.execute(insert(self._table), rows)
            except Exception as exc:  # every waiter of this batch learns of it
                for _, future in batch:
                    if not future.done():
                        future.set_exception(exc)
                continue
            if self._on_commit is not None:
                self._on_commit(len(rows), time.perf_counter() - started)
            for _, future in batch:
                if not future.done():
                    future.set_result(None)

    async def drain(self) -> None:
        """Wait until everything appended so far is committed (or failed)."""
        while self._flusher is not None and not self._flusher.done():
            await asyncio.shield(self._flusher)
