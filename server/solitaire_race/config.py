"""Server settings: one frozen dataclass, filled from the command line and the environment.

Defaults give the embedded setup: a SQLite file under ./data/, the web client on
http://127.0.0.1:8765/ (this machine only: ``--host 0.0.0.0`` lets others in, and the join
links then name this machine's network address, or ``--public-url``).
"""

from __future__ import annotations

import ipaddress
import os
import socket
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Final

REPO_ROOT = Path(__file__).resolve().parents[2]
DEFAULT_DB_URL = "sqlite+aiosqlite:///data/solitaire-race.sqlite3"
EVENT_LOOPS = ("auto", "uvloop", "asyncio")  # Config.event_loop
SECRET_ENV = "SOLITAIRE_RACE_SECRET"


def db_url(value: str | None) -> str:
    """A command's database: --db, else $SOLITAIRE_RACE_DB, else the embedded SQLite file."""
    return value or os.environ.get("SOLITAIRE_RACE_DB") or DEFAULT_DB_URL


@dataclass(frozen=True, slots=True)
class Config:
    host: str = "127.0.0.1"
    port: int = 8765
    db_url: str = DEFAULT_DB_URL
    public_url: str = ""  # how players reach us (for join links); derived if empty
    static_dir: Path = REPO_ROOT / "client" / "web"
    secret: str | None = None  # deal secret; None: the one stored in the database
    # Search nodes per candidate when choosing a daily deal (solver.choose_daily); 0 skips
    # the solver: each day's first candidate, no par (docs/daily-and-leaderboards.md).
    daily_solver_nodes: int = 100_000
    countdown_s: float = 3.0
    time_limit_s: int = 30 * 60
    max_players: int = 8
    leave_grace_s: float = 60.0
    progress_interval_s: float = 0.1  # opponents' progress is sent at most this often
    max_frame_bytes: int = 64 * 1024  # hard cap: bigger frames close the connection (1009)
    # Abuse limits (docs/operations.md)
    rate_per_s: float = 20.0  # messages per second per connection, sustained...
    rate_burst: int = 40  # ...with bursts up to this many
    abuse_limit: int = 100  # refused messages in a row before the connection is closed
    new_players_per_hour: int = 20  # new identities per client address per hour, in bursts of as many (0: no limit)
    # Behind a reverse proxy: the request header it puts the client's address in (e.g.
    # X-Real-IP), else every client would count as the proxy. Only if the proxy sets it.
    client_address_header: str = ""
    # Implausible results (fair_play.py) are held off the public boards until reviewed.
    # Off only for load tests and development, where programs play.
    fair_play_holds: bool = True
    max_rooms_per_player: int = 3  # unfinished races a player has created
    idle_timeout_s: float = 1800.0  # a connection that sends nothing this long is closed
    handshake_timeout_s: float = 10.0  # to open a connection (request to answer), and to close one
    keepalive_s: float = 20.0  # a websocket silent this long is pinged, and failed if still silent as long again
    max_send_buffer: int = 1024 * 1024  # bytes queued for a client that does not read
    socket_send_buffer: int = 0  # SO_SNDBUF per connection; 0 keeps the kernel's autotuning
    event_loop: str = "auto"  # uvloop | asyncio | auto: uvloop where it is installed (app.loop_factory)
    # A cluster (docs/cluster.md): nodes sharing one PostgreSQL database and one Redis.
    redis_url: str | None = None  # None: one process, the database's only server
    node_id: str = ""  # this node's name in the cluster (logs, leases); host name and pid if empty
    node_url: str = ""  # how clients reach this node itself (redirects); public_url if empty
    lease_ttl_s: float = 4.0  # a node that has not renewed its races for this long loses them

    def with_public_url(self, port: int, reachable: Callable[[], str | None] | None = None) -> Config:
        """Fill ``public_url`` from the port actually bound (port 0 picks a free one). Listening
        on every address, the join links name one that other machines can reach (``reachable``,
        by default this machine's own address on its network), not 127.0.0.1."""
        public_url = self.public_url.rstrip("/")
        if not public_url:
            host = self.host
            if host in ANY_ADDRESS:  # 0.0.0.0 listens on IPv4 alone: no IPv6 address then
                host = (reachable or (lambda: reachable_address(ipv6=host != "0.0.0.0")))() or "127.0.0.1"
            host = f"[{host}]" if ":" in host else host
            public_url = f"http://{host}:{port}"
        return replace(self, public_url=public_url, port=port, node_url=self.node_url.rstrip("/") or public_url)


ANY_ADDRESS: Final = ("", "0.0.0.0", "::")  # --host values that listen on every address


def loopback_only(host: str) -> bool:
    """True when listening on ``host`` serves this machine alone (127.0.0.1, ::1, localhost)."""
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return host.lower() == "localhost"


def reachable_address(ipv6: bool = True) -> str | None:
    """This machine's address on its network, as other machines reach it, or None when it
    has none but loopback. The address the system would send from to a public address (a
    UDP "connection" only picks the route, nothing is sent; it needs a route, a default one
    on most networks). IPv4 first; IPv6 only with ``ipv6`` (a server on ``0.0.0.0`` listens
    on IPv4 alone)."""
    families = ((socket.AF_INET, "192.0.2.1"), (socket.AF_INET6, "2001:db8::1"))
    for family, target in families if ipv6 else families[:1]:
        try:
            with socket.socket(family, socket.SOCK_DGRAM) as probe:
                probe.connect((target, 9))
                address = str(probe.getsockname()[0])
        except OSError:  # no route: no such network here
            continue
        ip = ipaddress.ip_address(address)
        if not (ip.is_loopback or ip.is_link_local):
            return address
    try:
        address = socket.gethostbyname(socket.gethostname())
    except OSError:
        return None
    return None if ipaddress.ip_address(address).is_loopback else address
