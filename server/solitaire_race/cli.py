"""The ``solitaire-race`` command line: one entry point, one small function per subcommand
(``serve``'s options and configuration are in ``serve_cli.py``, ``review`` in ``review.py``).

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

from .config import SECRET_ENV, db_url
from .engine import Outcome, ReplayError, all_games, get_game, replay
from .engine.cards import label, parse_card
from .results import ALL_TIME_BOARDS, RacerOutcome, outcome_label
from .serve_cli import add_serve

DEV_SECRET = "solitaire-race-dev"


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


def _move_log(file: str) -> list[str]:
    """A move log's lines from a file, or from standard input for ``-``."""
    text = sys.stdin.read() if file == "-" else Path(file).read_text(encoding="utf-8")
    return text.splitlines()


def _illegal(exc: ReplayError) -> str:
    where = "" if exc.text in exc.reason else f" {exc.text!r}"
    return f"illegal move at line {exc.line}{where}: {exc.reason}"


def cmd_replay(args: argparse.Namespace) -> int:
    game = get_game(args.game)
    try:
        state, applied = replay(game, game.deal(args.number, _secret(args.secret)), _move_log(args.file))
    except ReplayError as exc:
        print(_illegal(exc))
        return 1
    outcome, progress = game.outcome(state), game.progress(state)
    status = "in progress" if outcome is Outcome.PLAYING else outcome.value
    print(f"{status}: {progress.home}/{progress.total} cards home after {applied} moves")
    return 0


def cmd_solve(args: argparse.Namespace) -> int:
    from .solver import solve

    game = get_game(args.game)
    result = solve(
        game,
        game.deal(args.number, _secret(args.secret)),
        node_budget=args.nodes,
        time_budget_s=args.seconds,
        shorten_budget=min(args.nodes, 200_000),
    )
    work = f"{result.nodes:,} nodes, {result.seconds:.2f} s"
    what = {
        "won": f"won in {len(result.moves or ())} moves",
        "unwinnable": "unwinnable, proved: no line wins",
        "unknown": "unknown: the budget ran out before a win or a proof",
    }[result.status]
    # The summary is a comment, so the output replays as is: ... | solitaire-race replay GAME N -
    print(f"# {game.name}, deal {args.number}: {what} ({work})")
    for move in result.moves or ():
        print(move)
    return {"won": 0, "unwinnable": 1, "unknown": 3}[result.status]


def _server_secret(db_url: str) -> bytes:
    """The deal secret a server keeps in its database (what ``serve`` deals with when
    neither --secret nor $SOLITAIRE_RACE_SECRET is given)."""
    import asyncio

    from .store import Store
    from .store.backup import sqlite_path

    try:
        path: Path | None = sqlite_path(db_url)
    except ValueError:
        path = None  # not a SQLite file: nothing to check up front
    if path is not None and not path.exists():
        # Opening it would create a database with a fresh secret: hints for other cards.
        raise FileNotFoundError(f"no database at {path}")

    async def read() -> bytes:
        store = await Store.open(db_url)
        try:
            return await store.deal_secret()
        finally:
            await store.close()

    return asyncio.run(read())


def cmd_hint(args: argparse.Namespace) -> int:
    from .solver import Budget, hint

    game = get_game(args.game)
    if args.secret or os.environ.get(SECRET_ENV) or not args.db:
        secret = _secret(args.secret)
    else:
        secret = _server_secret(args.db)
    try:
        state, applied = replay(game, game.deal(args.number, secret), _move_log(args.moves) if args.moves else [])
    except ReplayError as exc:
        print(f"solitaire-race hint: {_illegal(exc)}", file=sys.stderr)
        return 2
    after = f"after {applied} move{'' if applied == 1 else 's'}"
    outcome = game.outcome(state)
    if outcome is not Outcome.PLAYING:
        print(f"no hint: the game is over ({outcome.value}) {after}")
        return 1
    found = hint(game, state, Budget(nodes=args.nodes, seconds=args.seconds, shorten_nodes=0))
    if found.move is None:
        print(
            f"no hint: no winning line found {after} within {args.nodes:,} nodes"
            + ("" if game.full_information else f" in any of {found.layouts} layouts of the hidden cards")
            + " (the position may be lost, or need a bigger --nodes)"
        )
        return 1
    # The summary is a comment, so the output can be appended to the move log as is.
    print(f"# {game.name}, deal {args.number}, {after}: {found.describe()}")
    print(found.move)
    return 0


def _duration(ms: int | None) -> str:
    if ms is None:
        return "--"
    minutes, seconds = divmod(ms / 1000, 60)
    return f"{int(minutes)}:{seconds:04.1f}"


def _vs_par(entry: Any, par: int | None) -> str:
    if par is None or entry.outcome != RacerOutcome.WON:
        return ""
    diff = entry.moves - par
    return "par" if diff == 0 else f"{diff:+d}"


def render_board(page: Any, title: str, par: int | None = None) -> str:
    """A leaderboard page as a text table (the viewer's own row added below if off-page);
    with a daily ``par``, each winner's moves against it."""
    allt = page.board in ALL_TIME_BOARDS
    head = f"{'#':>4}  {'player':<20} " + (
        f"{'wins':>5} {'games':>5} {'rate':>6} {'best':>8}"
        if allt
        else f"{'result':<11} {'time':>8} {'moves':>5} {'home':>7}"
    ) + (f" {'vs par':>6}" if par is not None else "")
    lines = [title, head]
    rows = list(page.entries) + ([page.me] if page.me and page.me not in page.entries else [])
    for e in rows:
        if allt:
            cells = f"{e.wins:>5} {e.games:>5} {e.win_rate:>6.0%} {_duration(e.time_ms):>8}"
        else:
            cells = f"{outcome_label(e.outcome):<11} {_duration(e.time_ms):>8} {e.moves:>5} {f'{e.home}/{e.total}':>7}"
            cells += f" {_vs_par(e, par):>6}" if par is not None else ""
        lines.append(f"{e.rank:>4}  {e.name:<20} {cells}")
    if not rows:
        lines.append("  (no entries yet)")
    first = (page.page - 1) * page.page_size + 1
    shown = f"{first}-{first + len(page.entries) - 1}" if page.entries else "none"
    lines.append(f"page {page.page}: {shown} of {page.total}")
    return "\n".join(lines)


def _review(args: argparse.Namespace) -> int:
    from .review import main

    return main(db_url(args.db), args.action or "list", getattr(args, "race", None),
                getattr(args, "player", None))


def cmd_leaderboard(args: argparse.Namespace) -> int:
    import asyncio
    from datetime import UTC, datetime

    from .daily import parse_day
    from .store import Store

    game = get_game(args.game)
    board = "daily" if args.daily else "deal" if args.deal is not None else args.board.replace("-", "_")
    day = None
    if args.daily:
        day = (datetime.now(UTC).date() if args.daily == "today" else parse_day(args.daily)).isoformat()

    async def fetch() -> Any:
        store = await Store.open(db_url(args.db))
        try:
            return await store.leaderboard(
                board, game.id, deal=args.deal, date=day, min_games=args.min_games,
                page=args.page, page_size=args.page_size,
            )
        finally:
            await store.close()

    page = asyncio.run(fetch())
    par = page.par
    what = {"daily": f"daily challenge of {day}", "deal": f"deal {args.deal}", "fastest": "fastest wins",
            "wins": "most wins", "win_rate": f"win rate (at least {args.min_games} games)"}[board]
    print(render_board(page, f"{game.name}: {what}" + (f" (par {par} moves)" if par is not None else ""), par))
    return 0


def cmd_backup(args: argparse.Namespace) -> int:
    from .store.backup import UsePgDump, backup

    url = db_url(args.db)
    try:
        size = backup(url, Path(args.destination))
    except UsePgDump as exc:
        print(f"solitaire-race backup: {exc}", file=sys.stderr)
        return 2
    print(f"backed up {url} to {args.destination} ({size:,} bytes)")
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

    sol = sub.add_parser(
        "solve",
        help="search a deal for a winning line and print it (exit 0 won, 1 unwinnable, 3 unknown)",
    )
    sol.add_argument("game")
    sol.add_argument("number", type=int)
    sol.add_argument("--secret", help=secret_help)
    sol.add_argument(
        "--nodes", type=int, default=1_000_000,
        help="node budget: engine moves the search may apply, and up to 200,000 more to shorten the line found"
        " (default 1,000,000)",
    )
    sol.add_argument(
        "--seconds", type=float, default=None, help="time budget in seconds (default: none, only the node budget)"
    )
    sol.set_defaults(func=cmd_solve)

    hnt = sub.add_parser(
        "hint",
        help="the next move of a winning line from a deal after some moves (exit 0 found, 1 none, 2 bad input)",
    )
    hnt.add_argument("game")
    hnt.add_argument("number", type=int)
    hnt.add_argument(
        "--moves", metavar="FILE",
        help="the moves made so far, one per line as for replay"
        " (- for standard input; default: none, the deal as dealt)",
    )
    hnt.add_argument(
        "--secret", help=f"deal secret (default: ${SECRET_ENV}, else the one kept in --db, else the development secret)"
    )
    hnt.add_argument(
        "--db", help="database URL of a server: deal with the secret it keeps (what serve uses without --secret)"
    )
    hnt.add_argument("--nodes", type=int, default=200_000, help="node budget of the search (default 200,000)")
    hnt.add_argument(
        "--seconds", type=float, default=None, help="time budget in seconds (default: none, only the node budget)"
    )
    hnt.set_defaults(func=cmd_hint)

    add_serve(sub)

    rv = sub.add_parser(
        "review", help="results held by the fair-play assessment: list them, clear or confirm one, ban a player"
    )
    rv.add_argument("--db", help="database URL (default: $SOLITAIRE_RACE_DB, else ./data/solitaire-race.sqlite3)")
    actions = rv.add_subparsers(dest="action")
    actions.add_parser("list", help="the held results not reviewed yet, with their evidence (the default)")
    for name, meaning in (("clear", "played fairly: onto the boards"), ("confirm", "not fair: it stays off")):
        act = actions.add_parser(name, help=f"a held result {meaning}")
        act.add_argument("race", type=int, help="the race's id (as listed)")
        act.add_argument("player", type=int, help="the player's id (as listed)")
    ban = actions.add_parser("ban", help="a player off the ranked boards: every result of theirs held, now and later")
    ban.add_argument("player", type=int)
    rv.set_defaults(func=_review)

    lb = sub.add_parser("leaderboard", help="print a leaderboard from the database")
    lb.add_argument("game")
    lb.add_argument("--daily", metavar="DATE", help="the daily challenge of DATE (YYYY-MM-DD or 'today')")
    lb.add_argument("--deal", type=int, help="the board of one deal")
    lb.add_argument(
        "--board", choices=[b.replace("_", "-") for b in ALL_TIME_BOARDS], default="fastest",
        help="all-time board (default fastest)",
    )
    lb.add_argument("--min-games", type=int, default=10, help="win-rate board: minimum games (default 10)")
    lb.add_argument("--page", type=int, default=1)
    lb.add_argument("--page-size", type=int, default=20)
    lb.add_argument("--db", help="database URL (default: $SOLITAIRE_RACE_DB, else ./data/solitaire-race.sqlite3)")
    lb.set_defaults(func=cmd_leaderboard)

    bk = sub.add_parser("backup", help="copy the SQLite database while the server runs (PostgreSQL: use pg_dump)")
    bk.add_argument("destination", help="the new file to write")
    bk.add_argument("--db", help="database URL (default: $SOLITAIRE_RACE_DB, else ./data/solitaire-race.sqlite3)")
    bk.set_defaults(func=cmd_backup)

    server_help = (
        "race server, e.g. ws://127.0.0.1:8765/ws or http://host:port"
        " (default: $SOLITAIRE_RACE_SERVER, else ws://127.0.0.1:8765/ws)"
    )
    default_server = os.environ.get("SOLITAIRE_RACE_SERVER", "ws://127.0.0.1:8765/ws")
    play = sub.add_parser("play", help="race from the terminal")
    play.add_argument("--server", default=default_server, help=server_help)
    play.add_argument(
        "--name",
        help="your name (only needed the first time on a server; the token is kept in ~/.config/solitaire-race/)",
    )
    what = play.add_mutually_exclusive_group()
    what.add_argument("--join", metavar="CODE", help="join the race with this code")
    what.add_argument("--game", metavar="GAME", help="create a race of this game")
    what.add_argument("--daily", metavar="GAME", help="play today's daily challenge of this game")
    play.add_argument("--deal", type=int, help="with --game: the deal number (default random)")
    play.add_argument("--public", action="store_true", help="with --game: list the race for anyone to join")
    play.add_argument("--time-limit", type=int, metavar="SECONDS", help="with --game: the race's time limit (30-14400)")
    play.add_argument("--no-color", action="store_true", help="no colours (also: $NO_COLOR)")
    play.set_defaults(func=cmd_play)

    watch = sub.add_parser("watch", help="replay a finished race of a server in the terminal")
    watch.add_argument("code", help="the race's join code")
    watch.add_argument("--server", default=default_server, help=server_help)
    watch.add_argument("--player", help="whose board (a name or a player id; default: the winner's)")
    watch.add_argument("--speed", type=float, default=4.0, help="times the race's own pace (default 4)")
    watch.add_argument("--final", action="store_true", help="print only the last position")
    watch.add_argument("--no-color", action="store_true", help="no colours (also: $NO_COLOR)")
    watch.set_defaults(func=cmd_watch)

    bot = sub.add_parser("bot", help="bot players: join a race, or race each other")
    bot.add_argument("--server", default=default_server, help=server_help)
    bot.add_argument(
        "--join", metavar="CODE",
        help="join this race and get ready (default: the bots create a race of their own and play it)",
    )
    bot.add_argument("--count", type=int, default=1, help="how many bots, 1-8 (default 1)")
    bot.add_argument(
        "--speed", type=float, default=2.0, metavar="MOVES_PER_S",
        help="moves per second per bot (default 2; 0: as fast as the server allows)",
    )
    bot.add_argument("--game", default="cruel", help="without --join: the game (default cruel)")
    bot.add_argument("--deal", type=int, help="without --join: the deal number (default random)")
    bot.add_argument("--time-limit", type=int, metavar="SECONDS", help="without --join: the race's time limit")
    bot.add_argument("--name", default="bot", help="name prefix (default bot: bot-1234-1, bot-1234-2, ...)")
    bot.set_defaults(func=cmd_bot)
    return parser


def cmd_play(args: argparse.Namespace) -> int:
    from .tui.app import main as play_main

    return play_main(args)


def cmd_watch(args: argparse.Namespace) -> int:
    from .tui.replay import watch

    if args.speed <= 0:
        raise SystemExit("solitaire-race watch: --speed must be above 0")
    return watch(args)


def cmd_bot(args: argparse.Namespace) -> int:
    from .bots.runner import main as bot_main

    return bot_main(args)


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return int(args.func(args))
    except (KeyError, ValueError, OSError) as exc:
        message = exc.args[0] if isinstance(exc, KeyError) and exc.args else exc
        print(f"solitaire-race: {message}", file=sys.stderr)
        return 2
    except Exception as exc:
        if not _for_the_operator(exc):
            raise
        print(f"solitaire-race {args.command}: {exc}", file=sys.stderr)
        return 2


def _for_the_operator(exc: Exception) -> bool:
    """A database the command cannot use (damaged, empty, another server's) or cannot
    reach (a full disk): the message says what to do, a traceback would only bury it."""
    # Only when the store was loaded (it raised this): the engine commands never import it.
    store = sys.modules.get("solitaire_race.store")
    return store is not None and isinstance(exc, (store.DatabaseUnusable, store.StorageUnavailable))


if __name__ == "__main__":
    raise SystemExit(main())
