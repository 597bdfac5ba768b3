"""The gateway's per-connection scheduler (``FrameQueue``): one test per invariant of its
docstring, then the same guarantees through the real server."""

from __future__ import annotations

import asyncio
import json
from typing import Any

from solitaire_race.app import App
from solitaire_race.gateway import INBOX_HIGH, INBOX_LOW, FrameQueue

from .conftest import Client


class ReadingPeer:
    """What the queue asks of a connection: whether to read."""

    def __init__(self) -> None:
        self.reading = True
        self.changes: list[bool] = []

    def pause_reading(self) -> None:
        self.reading = False
        self.changes.append(False)

    def resume_reading(self) -> None:
        self.reading = True
        self.changes.append(True)

    def send(self, message: Any) -> None: ...

    def close(self, code: int, reason: str) -> None: ...

    def refuse(self, code: int, reason: str) -> None: ...


class Server:
    """Serves frames like the gateway: some at once, some held until ``finish``."""

    def __init__(self, held: set[str], brings: dict[str, str] | None = None) -> None:
        self.held = held
        # A frame whose reply brings the client's next one at once: pushed while it is served.
        self.brings = brings or {}
        self.served: list[str] = []
        self.being_served: list[str] = []
        self.serving = False
        self.queue: FrameQueue | None = None

    def __call__(self, frame: str | bytes) -> bool:
        assert self.queue is not None and not self.being_served and not self.serving, "two frames served at once"
        self.served.append(str(frame))
        if frame in self.brings:
            self.serving = True
            self.queue.push(self.brings[str(frame)])
            self.serving = False
        if frame in self.held:
            self.being_served.append(str(frame))
            return True  # finished later: finish() calls done()
        return False

    def finish(self) -> None:
        assert self.queue is not None
        self.being_served.pop()
        self.queue.done()


def make(held: set[str], brings: dict[str, str] | None = None) -> tuple[FrameQueue, Server, ReadingPeer]:
    server, peer = Server(held, brings), ReadingPeer()
    queue = server.queue = FrameQueue(server, peer)
    return queue, server, peer


def test_one_frame_at_a_time() -> None:
    queue, server, _ = make({"a", "b"})
    queue.push("a")
    queue.push("b")
    queue.push("c")
    assert server.served == ["a"] and queue.busy  # b and c wait while a is held
    server.finish()
    assert server.served == ["a", "b"] and queue.busy  # b is held in turn: c still waits
    server.finish()
    assert server.served == ["a", "b", "c"] and not queue.busy


def test_a_frame_pushed_while_one_is_served_waits_for_it() -> None:
    """One at a time even when a reply brings the client's next frame at once (a client
    answering from its receive callback): the next is served after, never inside, the one
    being served, whether that one finishes at once (a) or later (b)."""
    queue, server, _ = make({"b"}, brings={"a": "b", "b": "c"})
    queue.push("a")
    assert server.served == ["a", "b"] and queue.busy  # b, held, came after a; c waits for it
    server.finish()
    assert server.served == ["a", "b", "c"] and not queue.busy


def test_waiting_frames_are_served_in_arrival_order() -> None:
    queue, server, _ = make({"0"})
    for i in range(10):
        queue.push(str(i))
    server.finish()
    assert server.served == [str(i) for i in range(10)]


def test_reading_stops_past_high_and_resumes_at_low() -> None:
    queue, server, peer = make({"first"})
    queue.push("first")
    for i in range(INBOX_HIGH - 1):
        queue.push(str(i))
    assert peer.reading  # one short of the mark
    queue.push("last")
    peer = peer  # mypy keeps peer.reading narrowed across the call above: forget it
    assert not peer.reading and peer.changes == [False]
    queue.push("more")  # still paused, not paused twice
    assert peer.changes == [False]
    server.finish()  # everything waiting is served at once (none held): reading resumes on the way
    peer = peer  # mypy keeps peer.reading narrowed across the call above: forget it
    assert peer.reading and peer.changes == [False, True]
    assert len(server.served) == INBOX_HIGH + 2 and INBOX_LOW < INBOX_HIGH


def test_no_waiting_frame_is_served_after_close() -> None:
    queue, server, _ = make({"a"})
    queue.push("a")
    queue.push("b")
    queue.close()
    queue.push("c")
    server.finish()
    assert server.served == ["a"]


async def test_drained_waits_for_everything_served() -> None:
    queue, server, _ = make({"a", "b"})
    await queue.drained()  # nothing to wait for
    queue.push("a")
    queue.push("b")
    waiter = asyncio.ensure_future(queue.drained())
    await asyncio.sleep(0)
    server.finish()
    await asyncio.sleep(0)
    assert not waiter.done()  # b is being served now
    server.finish()
    await asyncio.wait_for(waiter, 1)


async def test_pipelined_moves_and_requests_are_answered_in_order(app: App) -> None:
    """Through the real server: requests sent back to back, some awaiting the store, some
    a log commit, are answered in the order sent."""
    ann = await Client.connect(app)
    await ann.hello("ann")
    frames = [{"type": "ping", "id": 0}, {"type": "create_race", "game": "cruel", "deal": 5, "id": 1},
              {"type": "ping", "id": 2}, {"type": "start_race", "id": 3}, {"type": "ping", "id": 4}]
    for frame in frames:
        await ann.ws.send(json.dumps(frame))
    ids: list[int] = []
    async with asyncio.timeout(5):
        while len(ids) < len(frames):
            message = json.loads(await ann.ws.recv())
            if "id" in message:
                ids.append(message["id"])
    assert ids == [0, 1, 2, 3, 4]
    await ann.close()
