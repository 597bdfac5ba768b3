"""Connection honesty: the network goes silent under an open websocket (a relay on loopback
stops forwarding without closing anything). The page notices by itself (its ping and its
move go unanswered), says so, refuses moves while offline, and once the network is back it
reconnects and the race goes on from the server's position."""

from __future__ import annotations

import asyncio
import contextlib
from pathlib import Path
from urllib.parse import urlsplit

from playwright.async_api import Browser, expect

from solitaire_race.app import App

from ..conftest import TEST_SECRET
from ..support import winnable_deal
from .racer import Racer, perform

DEAL, LINE = winnable_deal("cruel", TEST_SECRET.encode())


class Relay:
    """A TCP relay from a loopback port to the server's. ``silent``: bytes in either direction
    are dropped, and connections are neither refused nor closed (a network that vanished)."""

    def __init__(self, target: int) -> None:
        self.target = target
        self.silent = False
        self.tasks: set[asyncio.Task[None]] = set()
        self.server: asyncio.Server | None = None

    async def start(self) -> int:
        self.server = await asyncio.start_server(self._client, "127.0.0.1", 0)
        return int(self.server.sockets[0].getsockname()[1])

    async def _client(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        up_reader, up_writer = await asyncio.open_connection("127.0.0.1", self.target)
        pumps = [self._pump(reader, up_writer), self._pump(up_reader, writer)]
        tasks = [asyncio.ensure_future(p) for p in pumps]
        self.tasks.update(tasks)
        await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
        for t in tasks:
            t.cancel()
        for w in (writer, up_writer):
            w.close()

    async def _pump(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        while data := await reader.read(65536):
            if not self.silent:
                writer.write(data)
                await writer.drain()

    async def stop(self) -> None:
        for task in self.tasks:
            task.cancel()
        if self.server is not None:
            self.server.close()
            with contextlib.suppress(Exception):
                await self.server.wait_closed()


async def test_a_silent_network_is_noticed_said_and_recovered_from(
    app: App, browser: Browser, screenshots: Path
) -> None:
    relay = Relay(int(urlsplit(app.url).port or 0))
    port = await relay.start()
    racer = await Racer.open(browser, f"http://127.0.0.1:{port}/")
    page = racer.page
    try:
        await racer.sign_in("ann")
        await racer.start_solo("cruel", DEAL)
        await perform(racer, LINE[0])
        await racer.expect_moves(1)

        # The network goes silent: the next move is sent and never answered.
        relay.silent = True
        shown = await racer.toasts()
        await perform(racer, LINE[1])
        # Noticed within ANSWER_MS (5 s) and a check (1 s).
        await page.wait_for_function(
            "n => Number(document.querySelector('#toast').dataset.seq || 0) > n", arg=shown, timeout=12_000
        )
        assert "dropped before the server answered" in await page.locator("#toast").inner_text()
        await expect(page.locator("#banner")).to_contain_text("Connection lost")
        await expect(page.locator("body")).not_to_have_attribute("data-connection", "open")
        await page.screenshot(path=screenshots / "offline.png")

        # Offline, a move is refused at once, and said to be.
        shown = await racer.toasts()
        await perform(racer, LINE[1])
        assert await racer.toast(after=shown) == "Offline: that move was not sent. Reconnecting…"
        await racer.expect_moves(1)

        # The network is back: the page reconnects by itself and the race goes on where the
        # server has it (the unanswered move never reached it).
        relay.silent = False
        await expect(page.locator("body")).to_have_attribute("data-connection", "open", timeout=15_000)
        await expect(page.locator("#banner")).to_be_hidden(timeout=10_000)
        await racer.wait_board("cruel")
        await racer.expect_moves(1)
        await perform(racer, LINE[1])
        await racer.expect_moves(2)
        assert racer.errors == [], racer.errors
    finally:
        await racer.close()
        await relay.stop()
