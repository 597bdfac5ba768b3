"""The ``solitaire-race`` command line: one entry point, one small function per subcommand.

Subcommands that need the server or the database import them lazily, so that the engine
commands start fast and work without them.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from .engine import Outcome, ReplayError, all_games, get_game, replay
from .engine.cards import label, parse_card

DEV_SECRET = "solitaire-race-dev"
SECRET_ENV = "SOLITAIRE_RACE_SECRET"


def _secret(value: str | None) -> bytes:
    return (value or os.environ.get(SECRET_ENV) or DEV_SECRET).encode("utf-8")


_CODE = re.compile(r"^[A2-9TJQK][SHDC]$")


def _human(value: Any) -> str:
    """Card codes as labels, lists joined by spaces, nulls as dashes."""
    if isinstance(value, str) and _CODE.match(value):
        return label(parse_card(value))
    if value is None:
        return "--"
    if isinstance(value, list):
        return " ".join(_human(v) for v in value)
    if isinstance(value, dict):
        return ", ".join(f"{k}={_human(v)}" for k, v in value.items())
    return str(value)


def render_layout(data: dict[str, Any]) -> str:
    """A readable, game-independent text form of a view or snapshot."""
    lines: list[str] = []
    for key, value in data.items():
        if key == "game":
            continue
        if isinstance(value, list) and value and isinstance(value[0], (list, dict)):
            lines.append(f"{key}:")
            lines += [f"  {i:>2}: {_human(item)}" for i, item in enumerate(value, start=1)]
        else:
            lines.append(f"{key}: {_human(value)}")
    return "\n".join(lines)


def cmd_games(args: argparse.Namespace) -> int:
    for game in all_games().values():
        print(f"{game.id:<18} {game.name:<18} {game.summary}")
    return 0


def cmd_deal(args: argparse.Namespace) -> int:
    game = get_game(args.game)
    state = game.deal(args.number, _secret(args.secret))
    data = game.view(state) if args.view else game.snapshot(state)
    if args.json:
        print(json.dumps(data, ensure_ascii=False))
    else:
        print(f"{game.name}, deal {args.number}{' (player view)' if args.view else ''}")
        print(render_layout(data))
    return 0


def cmd_replay(args: argparse.Namespace) -> int:
    game = get_game(args.game)
    text = sys.stdin.read() if args.file == "-" else Path(args.file).read_text(encoding="utf-8")
    try:
        state, applied = replay(game, game.deal(args.number, _secret(args.secret)), text.splitlines())
    except ReplayError as exc:
        where = "" if exc.text in exc.reason else f" {exc.text!r}"
        print(f"illegal move at line {exc.line}{where}: {exc.reason}")
        return 1
    outcome, progress = game.outcome(state), game.progress(state)
    status = "in progress" if outcome is Outcome.PLAYING else outcome.value
    print(f"{status}: {progress.home}/{progress.total} cards home after {applied} moves")
    return 0


def cmd_serve(args: argparse.Namespace) -> int:
    import asyncio
    import logging

    from .app import configure, serve
    from .config import Config

    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s %(message)s")
    config = configure(
        Config(),
        host=args.host,
        port=args.port,
        db_url=args.db or os.environ.get("SOLITAIRE_RACE_DB"),
        public_url=args.public_url or os.environ.get("SOLITAIRE_RACE_PUBLIC_URL"),
        secret=args.secret or os.environ.get(SECRET_ENV),
    )
    asyncio.run(serve(config))
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="solitaire-race", description="Race friends on the same solitaire deal."
    )
    sub = parser.add_subparsers(dest="command", required=True)

    sub.add_parser("games", help="list the games and their ids").set_defaults(func=cmd_games)

    secret_help = f"deal secret (default: ${SECRET_ENV}, else the development secret)"
    deal = sub.add_parser("deal", help="print a deal's layout")
    deal.add_argument("game")
    deal.add_argument("number", type=int)
    deal.add_argument("--secret", help=secret_help)
    deal.add_argument("--json", action="store_true", help="print JSON")
    deal.add_argument("--view", action="store_true", help="only what a player sees")
    deal.set_defaults(func=cmd_deal)

    rep = sub.add_parser("replay", help="replay a move log (one move per line) on a deal")
    rep.add_argument("game")
    rep.add_argument("number", type=int)
    rep.add_argument("file", help="move log file, or - for standard input")
    rep.add_argument("--secret", help=secret_help)
    rep.set_defaults(func=cmd_replay)

    srv = sub.add_parser("serve", help="run the race server (web client included)")
    srv.add_argument("--host", help="address to listen on (default 127.0.0.1)")
    srv.add_argument("--port", type=int, help="port (default 8765; 0 picks a free one)")
    srv.add_argument("--db", help="database URL (default: $SOLITAIRE_RACE_DB, else a SQLite file in ./data/)")
    srv.add_argument("--public-url", help="base URL players use to reach the server, for join links (default: $SOLITAIRE_RACE_PUBLIC_URL, else derived from host and port)")
    srv.add_argument("--secret", help="deal secret (default: $SOLITAIRE_RACE_SECRET, else one kept in the database)")
    srv.set_defaults(func=cmd_serve)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return int(args.func(args))
    except (KeyError, ValueError, OSError) as exc:
        message = exc.args[0] if isinstance(exc, KeyError) and exc.args else exc
        print(f"solitaire-race: {message}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    raise SystemExit(main())
