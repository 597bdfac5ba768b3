"""The cluster profile's reverse proxy for real: Debian's nginx runs deploy/nginx-cluster.conf
(the file docker-compose.yml mounts), with the nodes' addresses and its port replaced by the
test's, in front of three real nodes. Players know only the proxy's address; the client
library and the web client in Chromium follow their race to its node, and through its
failover."""

from __future__ import annotations

import asyncio
import functools
import random
import shutil
import signal
import socket
import subprocess
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from playwright.async_api import Browser, expect

from solitaire_race.client.connection import Connection

from .browser.conftest import browser  # noqa: F401  # the fixture, for the browser test
from .browser.racer import Racer, perform
from .cluster_support import (
    Node,
    closed,
    cluster,  # noqa: F401  # the fixture
    finished,
    held_by,
    id_of,
    pg,  # noqa: F401  # the fixture
    play,
    race_of_two,
    results_of,
    started,
    until,
)
from .conftest import TEST_SECRET, TIMEOUT
from .databases import Database
from .support import winnable_deal

REPO = Path(__file__).resolve().parents[1]
NGINX = shutil.which("nginx") or "/usr/sbin/nginx"
NODES = ("node1", "node2", "node3")


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class Proxy:
    """nginx on ``port`` with the compose file's configuration."""

    def __init__(self, port: int, nodes: dict[str, int], tmp: Path, skip: tuple[str, ...] = ()) -> None:
        text = (REPO / "deploy" / "nginx-cluster.conf").read_text()
        for node, node_port in nodes.items():
            if node in skip:  # taken out of the round robin (still reachable at /node/<id>/)
                text = text.replace(f"        server {node}:8765 max_fails=1 fail_timeout=5s;\n", "")
            text = text.replace(f"{node}:8765", f"127.0.0.1:{node_port}")
        text = text.replace("listen 8080;", f"listen 127.0.0.1:{port};")
        text = text.replace("/tmp/solitaire-race-nginx", str(tmp / "nginx"))
        config = tmp / "nginx.conf"
        config.write_text(text)
        self.log = tmp / "nginx.log"
        with self.log.open("w") as out:
            self.proc = subprocess.Popen(
                [NGINX, "-c", str(config), "-p", str(tmp), "-g", "daemon off;"], stdout=out, stderr=subprocess.STDOUT
            )
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            with socket.socket() as sock:
                if sock.connect_ex(("127.0.0.1", port)) == 0:
                    return
            if self.proc.poll() is not None:
                break
            time.sleep(0.05)
        raise AssertionError(f"nginx did not start:\n{self.log.read_text()}")

    def stop(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(timeout=10)


@pytest.fixture
def site(cluster: Callable[..., Node], tmp_path: Path) -> Iterator[Callable[..., tuple[str, dict[str, Node]]]]:
    """Three nodes behind nginx: returns (the site's websocket URL, the nodes by id)."""
    proxies: list[Proxy] = []

    def start(skip: tuple[str, ...] = ()) -> tuple[str, dict[str, Node]]:
        if not Path(NGINX).exists():
            pytest.fail("nginx not found: .ci/run installs Debian's nginx-light")
        port = free_port()
        base = f"http://127.0.0.1:{port}"
        # Ports chosen here: a node behind the proxy prints the site's address, not its own.
        ports = {node_id: free_port() for node_id in NODES}
        nodes = {
            node_id: cluster(node_id, "--port", str(ports[node_id]), "--public-url", base,
                             "--node-url", f"{base}/node/{node_id}", "--client-address-header", "X-Real-IP")
            for node_id in NODES
        }
        proxies.append(Proxy(port, ports, tmp_path, skip))
        return f"ws://127.0.0.1:{port}/ws", nodes

    yield start
    for proxy in proxies:
        proxy.stop()


async def owner(pg: Database, code: str, nodes: dict[str, Node]) -> Node:
    race_id = await id_of(pg, code)
    for node_id, node in nodes.items():
        if await held_by(pg, race_id, node_id):
            return node
    raise AssertionError(f"no node holds race {code}")


async def test_through_the_proxy_a_race_is_joined_and_outlives_its_node(
    site: Callable[..., tuple[str, dict[str, Node]]], pg: Database
) -> None:
    game = "perseverance"
    deal, line = winnable_deal(game, TEST_SECRET.encode())
    url, nodes = site()
    host, guest = await Connection.open(url), await Connection.open(url)
    for conn, name in ((host, "Hostess"), (guest, "Guest")):
        assert (await conn.request({"type": "hello", "name": name}))["type"] == "welcome"
    code = await race_of_two(host, guest, game, deal)
    await play(host, line[:10])
    await play(guest, line[:5])
    running = await owner(pg, code, nodes)
    running.signal(signal.SIGKILL)
    killed = time.monotonic()
    for conn in (host, guest):
        await closed(conn)
    # Back through the proxy, as after any drop: whichever node answers brings them to
    # the race, once a node has adopted it.
    for conn in (host, guest):
        for _ in range(60):  # bounded: the proxy may first pick the dead node
            try:
                await conn.reopen()
                break
            except Exception:
                await asyncio.sleep(0.25)
        assert (await conn.request({"type": "join_race", "code": code}))["type"] == "room"
    assert (await started(host))["moves"] == 10 and (await started(guest))["moves"] == 5
    await play(host, line[10:11])
    print(f"through nginx: a move acknowledged {time.monotonic() - killed:.1f} s after the SIGKILL")
    await play(host, line[11:])
    await play(guest, line[5:])
    await until(lambda: finished(pg, code), 10)
    assert await results_of(pg, code) == [("won", len(line)), ("won", len(line))]
    await host.close()
    await guest.close()


async def test_the_web_client_follows_its_race_to_its_node_and_through_its_failover(
    site: Callable[..., tuple[str, dict[str, Node]]], pg: Database, browser: Browser
) -> None:
    game = "cruel"
    deal, line = winnable_deal(game, TEST_SECRET.encode())
    # New connections reach node2 and node3 only: the race, made on node1, is elsewhere.
    url, nodes = site(skip=("node1",))
    site_url = url.replace("ws://", "http://").removesuffix("/ws")
    host = await Connection.open(f"{site_url}/node/node1/ws")
    assert (await host.request({"type": "hello", "name": "Hostess"}))["type"] == "welcome"
    code = (await host.request({"type": "create_race", "game": game, "deal": deal}))["race"]["code"]
    ann = await Racer.open(browser, f"{site_url}/join/{code}")
    await ann.sign_in("ann")
    await expect(ann.page.locator("#screen-room")).to_be_visible()
    room = await host.next_event(timeout=TIMEOUT)
    while room["type"] != "room" or len(room["race"]["players"]) < 2:
        room = await host.next_event(timeout=TIMEOUT)
    await host.request({"type": "start_race"})
    await started(host)
    # A spectator's page, reaching node2 or node3 too, follows race_elsewhere to node1.
    eve = await Racer.open(browser, f"{site_url}/watch/{code}")
    ann_row = eve.page.locator("#watch-racers li", has_text="ann")
    await expect(eve.page.locator("#watch-status")).to_have_text("Race time", timeout=10_000)
    await ann.wait_board(game)
    await perform(ann, line[0])
    await ann.expect_moves(1)
    await expect(ann_row).to_have_attribute("data-moves", "1")
    nodes["node1"].signal(signal.SIGKILL)
    # The page reconnects through the proxy (node2 or node3), which adopts the race or
    # sends it to the node that did; it shows the same game, and plays on.
    await expect(ann.page.locator("#banner")).to_contain_text("Reconnecting", timeout=10_000)
    await expect(ann.page.locator("#banner")).to_be_hidden(timeout=30_000)  # back in the race
    await ann.expect_moves(1)
    await perform(ann, line[1], after=1)
    await ann.expect_moves(2)
    # The spectator's page came back too, to wherever the race runs now, and sees the move.
    await expect(ann_row).to_have_attribute("data-moves", "2", timeout=30_000)
    await expect(eve.page.locator("#watch-error")).to_have_text("")
    race_id = await id_of(pg, code)
    moves = await pg.query("SELECT text FROM move_log WHERE race_id = ? AND kind = 'move' ORDER BY seq", race_id)
    assert [m for (m,) in moves] == list(line[:2])
    # The only errors: the browser's own lines about the socket its node's death broke.
    assert all("WebSocket" in e for e in ann.errors + eve.errors), ann.errors + eve.errors
    await eve.close()
    await ann.close()
    await host.close()



async def test_nodes_killed_again_and_again_every_race_ends_with_each_acknowledged_move_once(
    site: Callable[..., tuple[str, dict[str, Node]]], pg: Database
) -> None:
    game = "perseverance"
    deal, line = winnable_deal(game, TEST_SECRET.encode())
    url, nodes = site()
    rng = random.Random(2026)
    codes: list[str] = []
    racers: list[tuple[Connection, str]] = []
    for r in range(3):
        host, guest = await Connection.open(url), await Connection.open(url)
        for conn, who in ((host, "h"), (guest, "g")):
            assert (await conn.request({"type": "hello", "name": f"r{r}{who}"}))["type"] == "welcome"
        code = await race_of_two(host, guest, game, deal)
        racers += [(host, code), (guest, code)]
        codes.append(code)

    async def rejoin(conn: Connection, code: str, acknowledged: int) -> int:
        """Back into the race after its node died; the moves the server has for us."""
        for _ in range(200):  # bounded: ~a minute
            moves: int | None = None
            try:
                if conn.closed:
                    await conn.reopen()
                reply = await conn.request({"type": "join_race", "code": code})
                if reply["type"] == "room":
                    moves = int((await started(conn))["moves"])
            except Exception:  # its node died again meanwhile: again, after a pause
                pass
            if moves is not None:
                # Outside the try: a lost acknowledged move fails the test at once, saying so.
                assert moves >= acknowledged, f"race {code}: {acknowledged} moves acknowledged, {moves} kept"
                return moves
            await asyncio.sleep(0.25)
        raise AssertionError(f"never back in race {code}")

    async def race(conn: Connection, code: str) -> None:
        done = 0  # moves the server acknowledged, or has after a takeover
        for _ in range(2000):  # bounded
            if done == len(line):
                return
            try:
                reply = await conn.request({"type": "move", "moves": [line[done]]})
            except Exception:
                done = await rejoin(conn, code, done)
                continue
            if reply["type"] == "move_result" and reply["applied"] == [line[done]]:
                done = reply["moves"]
                await asyncio.sleep(0.05)  # about 20 moves a second: races outlive the kills
            elif reply["type"] == "move_result" or reply["code"] in ("race_moved", "not_in_race"):
                done = await rejoin(conn, code, done)  # the view the server has decides
            else:
                assert reply["code"] == "storage_unavailable", reply
                await asyncio.sleep(0.1)
        raise AssertionError(f"race {code} did not end")

    playing = [asyncio.ensure_future(race(conn, code)) for conn, code in racers]
    kills = 0
    for _ in range(3):  # a node running a race, killed at a random instant, then started again
        await asyncio.sleep(rng.uniform(0.5, 2.0))
        owners = set()
        for code in codes:
            race_id = await id_of(pg, code)
            owners |= {n for n in nodes if not await finished(pg, code) and await held_by(pg, race_id, n)}
        if not owners:
            break
        victim = nodes[rng.choice(sorted(owners))]
        victim.signal(signal.SIGKILL)
        kills += 1
        await asyncio.sleep(rng.uniform(0.0, 1.0))
        victim.start()
    await asyncio.wait_for(asyncio.gather(*playing), 120)
    # Nodes did die under running races, and their races were taken over (a race may end
    # between the choice of the node and the kill, so not one adoption per kill).
    assert kills >= 2 and sum(node.events("race_adopted") for node in nodes.values()) >= 1
    for code in codes:
        await until(functools.partial(finished, pg, code), 20)
        rows = await results_of(pg, code)
        assert rows == [("won", len(line)), ("won", len(line))], (code, rows)
        race_id = await id_of(pg, code)
        twice = await pg.query("SELECT player_id, seq FROM move_log WHERE race_id = ? GROUP BY player_id, seq "
                               "HAVING count(*) > 1", race_id)
        assert twice == []
    for conn, _ in racers:
        await conn.close()
