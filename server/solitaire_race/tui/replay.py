"""``solitaire-race watch CODE``: a finished race replayed in the terminal, from the server's
replay (``GET /api/replays/{code}``, docs/protocol.md ``replay_data``).

One racer's board at a time (the winner by default, ``--player`` for another), redrawn
after each move at the race's own pace times ``--speed``, with the race time, the move and
the cards home; ``--final`` prints only the last position. The views are the ones the racer
saw, rebuilt by the server's engine, so hidden cards stay hidden until turned up.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
import urllib.error
import urllib.request
from typing import Any, TextIO

from ..client.connection import http_url
from ..engine import view_changes
from ..protocol import normalize_code
from ..results import outcome_label
from .app import use_color
from .render import Style, game_name, race_time, render_view

CLEAR = "\x1b[H\x1b[2J"
MAX_PAUSE_S = 2.0  # a long think is shortened: a replay should not stall


def fetch(server: str, code: str) -> dict[str, Any]:
    """The race's replay, or SystemExit with the server's reason."""
    url = f"{http_url(server)}/api/replays/{normalize_code(code)}"
    try:
        with urllib.request.urlopen(url, timeout=10) as reply:
            return dict(json.load(reply))
    except urllib.error.HTTPError as exc:
        try:
            reason = json.load(exc)["error"]["message"]
        except (ValueError, KeyError, TypeError):
            reason = exc.reason
        raise SystemExit(f"solitaire-race watch: {reason}") from None
    except (urllib.error.URLError, OSError) as exc:
        raise SystemExit(f"solitaire-race watch: cannot reach {server}: {exc}") from None


def pick(replay: dict[str, Any], player: str | None) -> dict[str, Any]:
    racers = replay["racers"]
    if not racers:
        raise SystemExit(f"solitaire-race watch: race {replay['code']} has no stored result to replay")
    if player is None:
        return dict(racers[0])
    for r in racers:
        if r["name"].lower() == player.lower() or str(r["player_id"]) == player:
            return dict(r)
    names = ", ".join(r["name"] for r in racers)
    raise SystemExit(f"solitaire-race watch: no racer {player!r} in race {replay['code']} (racers: {names})")


def frames(replay: dict[str, Any], racer: dict[str, Any], style: Style) -> list[tuple[int, list[str]]]:
    """(race ms, lines) for the start and after each move."""
    title = f"{game_name(replay['game'])} · race {replay['code']} · {racer['name']} (#{racer['rank']})"
    view, out = racer["view"], []
    steps = racer["steps"]
    out.append((0, [title, "start", *render_view(view, style)]))
    for i, step in enumerate(steps, start=1):
        view = view_changes.apply(view, step["changes"])
        head = f"{race_time(step['at_ms'])}  move {i}/{len(steps)}: {step['move']}"
        out.append((step["at_ms"], [title, head, *render_view(view, style)]))
    return out


def watch(args: argparse.Namespace, stdout: TextIO = sys.stdout) -> int:
    replay = fetch(args.server, args.code)
    racer = pick(replay, args.player)
    shown = frames(replay, racer, Style(use_color(args, stdout)))
    if args.final:
        shown = shown[-1:]
    clear = stdout.isatty() and not args.final
    last_ms = 0
    for at_ms, lines in shown:
        if clear:
            time.sleep(min(MAX_PAUSE_S, max(0, at_ms - last_ms) / 1000 / args.speed))
            stdout.write(CLEAR)
        stdout.write("\n".join(lines) + "\n\n")
        stdout.flush()
        last_ms = at_ms
    time_text = race_time(racer["time_ms"]) if racer["time_ms"] is not None else "no time"
    stdout.write(f"{racer['name']}: {outcome_label(racer['outcome'])}, {racer['home']}/{racer['total']} home, "
                 f"{racer['moves']} moves, {time_text}\n")
    return 0
