"""``solitaire-race serve``: its options, and the server's ``Config`` made from them (and
from the environment: ``$SOLITAIRE_RACE_DB``, ``_PUBLIC_URL``, ``_SECRET``, ``_REDIS``).
The rest of the command line is ``cli.py``."""

from __future__ import annotations

import argparse
import os
import sys
from typing import Any

from .config import EVENT_LOOPS, SECRET_ENV, db_url


def add_serve(sub: Any) -> None:
    """The ``serve`` subcommand, on ``sub`` (the main parser's subparsers)."""
    srv = sub.add_parser("serve", help="run the race server (web client included)")
    srv.add_argument("--host", help="address to listen on (default 127.0.0.1)")
    srv.add_argument("--port", type=int, help="port (default 8765; 0 picks a free one)")
    srv.add_argument("--db", help="database URL (default: $SOLITAIRE_RACE_DB, else a SQLite file in ./data/)")
    srv.add_argument(
        "--public-url",
        help="base URL players use to reach the server, for join links"
        " (default: $SOLITAIRE_RACE_PUBLIC_URL, else derived from host and port)",
    )
    srv.add_argument("--secret", help="deal secret (default: $SOLITAIRE_RACE_SECRET, else one kept in the database)")
    srv.add_argument("--countdown", type=float, help="seconds between the start of a race and the deal (default 3)")
    srv.add_argument(
        "--daily-solver-nodes", type=int, metavar="N",
        help="solver nodes per candidate daily deal (default 100000); 0: no solver, no par",
    )
    srv.add_argument(
        "--rate-limit", type=float, help="messages per second per connection (default 20; 0: no limit, for load tests)"
    )
    srv.add_argument(
        "--new-players-per-hour", type=int, metavar="N",
        help="new identities per client address per hour (default 20; 0: no limit, for load tests)",
    )
    srv.add_argument(
        "--loop", choices=EVENT_LOOPS,
        help="event loop (default auto: uvloop where it is installed, else asyncio's own)",
    )
    srv.add_argument(
        "--no-fair-play-holds", action="store_true",
        help="put every result on the boards, plausible or not (load tests, development; docs/fair-play.md)",
    )
    srv.add_argument(
        "--client-address-header", metavar="NAME",
        help="behind a reverse proxy that sets it (e.g. X-Real-IP): the header giving the client's address,"
        " for the limits per address (default: none, the connection's own address)",
    )
    srv.add_argument(
        "--redis", metavar="URL",
        help="run as one node of a cluster: the Redis the nodes share, e.g. redis://127.0.0.1:6379/0, with a"
        " PostgreSQL --db (default: $SOLITAIRE_RACE_REDIS; none: one process; docs/cluster.md)",
    )
    srv.add_argument("--node-id", help="this node's name in the cluster (default: host name and process id)")
    srv.add_argument(
        "--node-url", help="how clients reach this node itself, when races move to it (default: --public-url)"
    )
    srv.add_argument(
        "--lease-ttl", type=float, metavar="S",
        help="seconds a node keeps its races without renewing (default 4): failover takes 1-2 of these",
    )
    srv.set_defaults(func=cmd_serve)


def _rate_limit(per_s: float | None) -> dict[str, float | int | None]:
    """--rate-limit N: N messages/s with bursts of 2N; 0 lifts the limit."""
    if per_s is None:
        return {}
    if per_s == 0:
        return {"rate_per_s": 1e12, "rate_burst": 10**9}  # finite: inf * 0 would be NaN
    return {"rate_per_s": per_s, "rate_burst": max(1, int(2 * per_s))}


def cmd_serve(args: argparse.Namespace) -> int:
    import logging

    from .app import EventLoopUnavailable, configure, run
    from .config import Config
    from .observe import configure_logging

    configure_logging(logging.INFO)  # one JSON object per line on stderr
    config = configure(
        Config(),
        host=args.host,
        port=args.port,
        db_url=db_url(args.db),
        public_url=args.public_url or os.environ.get("SOLITAIRE_RACE_PUBLIC_URL"),
        secret=args.secret or os.environ.get(SECRET_ENV),
        countdown_s=args.countdown,
        daily_solver_nodes=args.daily_solver_nodes,
        **_rate_limit(args.rate_limit),
        new_players_per_hour=args.new_players_per_hour,
        event_loop=args.loop,
        redis_url=args.redis or os.environ.get("SOLITAIRE_RACE_REDIS"),
        node_id=args.node_id,
        node_url=args.node_url,
        lease_ttl_s=args.lease_ttl,
        client_address_header=args.client_address_header,
        fair_play_holds=False if args.no_fair_play_holds else None,
    )
    try:
        run(config)
    except EventLoopUnavailable as exc:
        print(f"solitaire-race serve: {exc}", file=sys.stderr)
        return 2
    return 0


