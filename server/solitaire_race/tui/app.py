"""The interactive terminal client (``solitaire-race play``): race from a terminal.

It speaks the same protocol as the browser client (docs/protocol.md) over
``client.connection``. Two parts:

- ``Terminal`` (``terminal.py``) owns the terminal: it draws what ``render.render_screen``
  makes and edits the input line;
- ``PlayClient`` (here) is the client's logic: signing in with the token kept by
  ``config``, the lobby, the room, the race, and the results; it keeps a ``render.Screen``
  up to date from the server's messages, and turns typed lines into requests
  (``commands.py``; ``moves.expand`` for moves). The server judges every move; its
  reason is shown when it refuses one.

Whatever a server sends is escaped as it arrives (``client.terminal_text``), and so is any
other text the client prints that it did not write itself (notices, the closing lines).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import signal
import sys
from typing import Any, TextIO

from ..client.connection import KEEPALIVE_S, Connection, Disconnected, http_url, ws_url
from ..client.known import known_state
from ..client.terminal_text import safe_message, safe_text
from ..engine import get_game
from ..results import RacerOutcome, outcome_label
from .commands import STUCK_NOTICE, Commands
from .config import ClientConfig
from .render import PLAIN, Screen, Style, clock_time, prompt, race_time, render_ranking, render_screen
from .terminal import Terminal

RECONNECT_DELAYS_S = (0.5, 1, 2, 3, 5, 5, 5, 5, 5, 5)  # bounded: about 37 s in all
MAX_NOTICES = 20


class PlayClient:
    """The client's logic: from the server's messages to the screen, from lines to requests."""

    def __init__(self, args: argparse.Namespace, term: Terminal, config: ClientConfig, style: Style) -> None:
        self.args = args
        self.url = ws_url(args.server)
        self.term = term
        self.config = config
        self.style = style
        self.screen = Screen(server=self.url)
        self.conn: Connection | None = None
        self.loop = asyncio.get_running_loop()
        self.quit = asyncio.Event()
        self.exit_code = 0
        self.farewell: list[str] = []
        self.start_ref: float | None = None  # loop time of the race start
        self.countdown_end: float | None = None
        self._redraw_scheduled = False
        self.bots: set[asyncio.Task[Any]] = set()
        self._last_sent = self.loop.time()
        self.commands = Commands(self)

    # --- drawing -------------------------------------------------------------------------
    def redraw(self) -> None:
        """Draw soon (several changes in one loop step give one drawing)."""
        if not self._redraw_scheduled:
            self._redraw_scheduled = True
            self.loop.call_soon(self._draw)

    def _draw(self) -> None:
        self._redraw_scheduled = False
        s = self.screen
        now = self.loop.time()
        if self.start_ref is not None and s.phase == "race":
            s.elapsed_ms = int((now - self.start_ref) * 1000)
        s.countdown_ms = None if self.countdown_end is None else int((self.countdown_end - now) * 1000)
        self.term.prompt = prompt(s)
        width, height = self.term.size()
        self.term.draw(render_screen(s, self.style, width, height))

    def notice(self, kind: str, text: str) -> None:
        self.screen.notices.append((kind, safe_text(text)))  # may quote an exception's text
        del self.screen.notices[:-MAX_NOTICES]
        self.redraw()

    def toggle_help(self) -> None:
        self.screen.show_help = not self.screen.show_help
        self.redraw()

    # --- running -------------------------------------------------------------------------
    async def run(self) -> int:
        self.term.on_help_key = self.toggle_help
        self.term.on_redraw_key = self.redraw
        self.redraw()
        try:
            self.conn = await Connection.open(self.url, transform=safe_message)
        except Disconnected as exc:
            self.farewell.append(f"solitaire-race play: {exc}")
            return 1
        tasks = [
            self.loop.create_task(self._events()),
            self.loop.create_task(self._input()),
            self.loop.create_task(self._tick()),
        ]
        try:
            await self._sign_in()
            await self.quit.wait()
        except Disconnected as exc:
            self.farewell.append(f"solitaire-race play: {exc}")
            self.exit_code = 1
        finally:
            for task in tasks + list(self.bots):
                task.cancel()
            await asyncio.gather(*tasks, *self.bots, return_exceptions=True)
            if self.conn is not None:
                await self.conn.close()
        return self.exit_code

    def stop(self, code: int = 0) -> None:
        self.exit_code = code
        self.quit.set()

    async def _tick(self) -> None:
        while True:
            counting = self.countdown_end is not None
            await asyncio.sleep(0.2 if counting else 1.0)
            ticking = counting or (self.screen.phase == "race" and self.start_ref is not None)
            if ticking and self.term.interactive:  # a pipe gets a screen per change, not per second
                self.redraw()
            if self.loop.time() - self._last_sent > KEEPALIVE_S:  # not an idle connection
                with contextlib.suppress(Disconnected):
                    await self.request({"type": "ping"})

    async def _input(self) -> None:
        while True:
            line = await self.term.lines.get()
            try:
                await self.commands.handle_line(line)
            except Disconnected as exc:
                self.notice("error", f"not sent: {exc}")  # the events task reconnects
            self.redraw()

    async def _events(self) -> None:
        while True:
            assert self.conn is not None
            event = await self.conn.next_event()
            if event["type"] == "closed":
                if not await self._reconnect(event["reason"]):
                    return
                continue
            if event["type"] == "error" and event.get("code") == "race_moved":
                await self._rejoin()  # another server node runs the race now: to it, unnoticed
                continue
            self.on_event(event)
            self.redraw()

    async def _rejoin(self) -> None:
        """Back into the race on screen, wherever it runs now (the connection follows it)."""
        code = (self.screen.race or self.screen.room or {}).get("code")
        if not code:
            return
        try:
            reply = await self.request({"type": "join_race", "code": code})
        except Disconnected:
            return  # the events task reconnects, and joins it then
        if reply["type"] == "room":
            self.on_event(reply)  # a running race's state follows as race_started
        else:
            self.notice("error", reply.get("message", "the race is gone"))

    async def request(self, message: dict[str, Any]) -> dict[str, Any]:
        if self.conn is None or self.conn.closed:
            raise Disconnected("not connected")
        self._last_sent = self.loop.time()
        reply = await self.conn.request(message)
        self.redraw()  # whatever the caller does with the reply is drawn in the same step
        return reply

    # --- identity ------------------------------------------------------------------------
    async def _sign_in(self) -> None:
        stored = self.config.server(self.url)
        token, wanted = stored.get("token"), self.args.name
        if token:
            hello: dict[str, Any] = {"type": "hello", "token": token}
            if wanted and wanted != stored.get("name"):
                hello["name"] = wanted
            reply = await self.request(hello)
            if reply["type"] == "error" and reply["code"] in ("name_taken", "bad_name"):
                self.notice("error", reply["message"])
                reply = await self.request({"type": "hello", "token": token})
            if reply["type"] == "welcome":
                await self._welcomed(reply)
                return
            if reply["code"] != "bad_token":
                self.farewell.append(f"solitaire-race play: {reply['message']}")
                self.stop(1)
                return
            self.config.update(self.url, token=None, race=None)
            self.notice("info", "this server no longer knows the identity kept for it: choose a name")
            wanted = wanted or stored.get("name")
        if wanted:
            await self.sign_up(wanted)
        else:
            self.screen.phase = "name"
            self.notice("info", "Welcome! Choose the name other racers will see.")

    async def sign_up(self, name: str) -> None:
        reply = await self.request({"type": "hello", "name": name})
        if reply["type"] == "welcome":
            self.config.update(self.url, name=reply["player"]["name"], token=reply["token"])
            await self._welcomed(reply)
        else:
            self.screen.phase = "name"
            self.notice("error", f"{reply['message']}: choose another name")

    async def _welcomed(self, reply: dict[str, Any]) -> None:
        player = reply["player"]
        self.screen.player_id, self.screen.player_name = player["id"], player["name"]
        self.config.update(self.url, name=player["name"])
        games = await self.request({"type": "list_games"})
        self.screen.games = games.get("games", [])
        self.screen.phase = "lobby"
        if await self._resume():
            if self.args.join or self.args.game or self.args.daily:
                self.notice("info", "you were still in this race, so it was resumed instead")
            return
        if self.args.join:
            await self.commands.join(self.args.join)
        elif self.args.game:
            await self.commands.create(self.args.game, self.args.deal, self.args.public)
        elif self.args.daily:
            await self.commands.daily(self.args.daily)
        else:
            await self.commands.refresh_races()

    async def _resume(self) -> bool:
        """Back into the race this player was racing when the client last stopped."""
        code = self.config.server(self.url).get("race")
        if not code:
            return False
        reply = await self.request({"type": "join_race", "code": code})
        if reply["type"] != "room":
            self.config.update(self.url, race=None)
            return False
        self.on_event(reply)
        self.notice("info", f"resumed race {code}")
        return True

    async def _reconnect(self, reason: str) -> bool:
        """After a lost connection: sign in again and resume the race, a few times."""
        if self.quit.is_set():
            return False
        self.notice("error", f"{reason}: reconnecting…")
        token = self.config.server(self.url).get("token")
        for delay in RECONNECT_DELAYS_S:
            await asyncio.sleep(delay)
            try:
                conn = await Connection.open(self.url, timeout=5, transform=safe_message)
                self.conn = conn
                reply = await conn.request({"type": "hello", "token": token}) if token else {"type": "error"}
                if reply["type"] != "welcome":
                    break
                code = (self.screen.race or self.screen.room or {}).get("code")
                if code and self.screen.phase in ("room", "race"):
                    joined = await conn.request({"type": "join_race", "code": code})
                    if joined["type"] == "room":
                        self.on_event(joined)  # a running race's state follows as race_started
                    else:
                        self.screen.phase = "lobby"
            except Disconnected:
                continue  # lost again at once: try again after the next pause
            self.notice("ok", "reconnected")
            return True
        code = (self.screen.race or {}).get("code")
        hint = ""
        if code and self.screen.phase == "race":
            hint = f" (resume within a minute: solitaire-race play --join {code})"
        self.farewell.append(f"solitaire-race play: {reason}{hint}")
        self.stop(1)
        return False

    # --- server messages -----------------------------------------------------------------
    def on_event(self, m: dict[str, Any]) -> None:
        s = self.screen
        kind = m["type"]
        if kind == "room":
            s.room = m["race"]
            status = s.room["status"]
            if status == "lobby":
                self.countdown_end = None
            if status in ("lobby", "countdown") and s.phase not in ("room",):
                s.phase = "room"
                s.ranking = None
        elif kind == "countdown":
            self.countdown_end = self.loop.time() + m["starts_in_ms"] / 1000
        elif kind == "race_started":
            self._race_started(m)
        elif kind == "progress":
            self._progress(m)
        elif kind == "standings":  # the racers who moved since the last one, a few times a second
            for racer in m["racers"]:
                self._progress(racer)
        elif kind == "race_finished":
            s.phase = "finished"
            s.ranking = m["ranking"]
            if s.race is None or s.race["code"] != m["code"]:  # finished while we were away
                limit = (s.room or {}).get("time_limit_s")
                s.race = {"code": m["code"], "game": m["game"], "deal": m["deal"], "time_limit_s": limit}
                s.view = None
            self.countdown_end = None
            self.start_ref = None
            self.config.update(self.url, race=None)
            mine = next((e for e in m["ranking"] if e["player_id"] == s.player_id), None)
            if mine is not None and s.race is not None and s.race.get("daily"):
                over = outcome_label(mine["outcome"])
                self.notice("ok", f"daily challenge over: {over}; leaderboard: {http_url(self.url)}/leaderboard")
            elif mine is not None:
                self.notice("ok", f"race over: you are {mine['rank']} of {len(m['ranking'])}")
        elif kind == "rematch_proposed" and s.phase == "finished":
            deal = "the same deal" if m["same_deal"] else "a new deal"
            self.notice("info", f"{m['by']['name']} proposes a rematch on {deal}: type again to join")
        elif kind == "error":
            if m.get("code") == "replaced":
                self.farewell.append("solitaire-race play: you signed in somewhere else, so this client stopped")
                self.stop(1)
            else:
                self.notice("error", m.get("message", m.get("code", "error")))

    def _progress(self, m: dict[str, Any]) -> None:
        s = self.screen
        entry = {k: m[k] for k in ("player_id", "name", "home", "total", "moves", "outcome", "time_ms")}
        if m["player_id"] == s.player_id:
            if m["outcome"] == RacerOutcome.STUCK and (s.me is None or s.me["outcome"] == RacerOutcome.PLAYING):
                self.notice("error", STUCK_NOTICE)  # found by the server just after the move
            s.me = entry
            return
        known = s.opponents.get(m["player_id"])
        s.opponents[m["player_id"]] = entry
        if m["outcome"] != RacerOutcome.PLAYING and (known is None or known["outcome"] != m["outcome"]):
            took = f" in {race_time(m['time_ms'])}" if m["outcome"] == RacerOutcome.WON else ""
            self.notice("info", f"{m['name']}: {outcome_label(m['outcome'])}{took}")

    def _race_started(self, m: dict[str, Any]) -> None:
        s = self.screen
        s.phase = "race"
        s.show_help = False
        s.race = {k: m[k] for k in ("code", "game", "deal", "time_limit_s")}
        if m.get("daily"):
            s.race["daily"] = m["daily"]
        s.view = m["view"]
        progress = get_game(m["game"]).progress(known_state(m["view"]))
        s.me = {
            "player_id": s.player_id, "name": s.player_name or "you", "home": progress.home,
            "total": progress.total, "moves": m["moves"], "outcome": m["outcome"], "time_ms": None,
        }
        s.opponents = {o["player_id"]: {k: v for k, v in o.items() if k != "type"} for o in m["opponents"]}
        s.ranking = None
        self.countdown_end = None
        self.start_ref = self.loop.time() - m["elapsed_ms"] / 1000
        s.elapsed_ms = m["elapsed_ms"]
        self.config.update(self.url, race=m["code"])
        if m["elapsed_ms"] < 1000 and m["moves"] == 0:
            self.notice("ok", "Go! Type ? for how to play")

    def final_lines(self) -> list[str]:
        """What stays on the normal screen after the client stops."""
        s = self.screen
        lines = list(self.farewell)
        if s.ranking is not None:
            lines.append(f"Race {s.race['code'] if s.race else ''} result:")
            lines += render_ranking(s.ranking, s.player_id, PLAIN)
        elif s.phase == "race" and s.race is not None and s.me is not None and s.me["outcome"] == RacerOutcome.PLAYING:
            lines.append(
                f"You left race {s.race['code']} while playing ({clock_time(s.elapsed_ms)}): "
                f"resume within a minute with  solitaire-race play --join {s.race['code']}"
            )
        return lines


def use_color(args: argparse.Namespace, stdout: TextIO) -> bool:
    if args.no_color or os.environ.get("NO_COLOR"):
        return False
    return stdout.isatty()


async def _main(args: argparse.Namespace) -> tuple[int, list[str]]:
    term = Terminal(sys.stdin, sys.stdout)
    client = PlayClient(args, term, ClientConfig(), Style(use_color(args, sys.stdout)))
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        loop.add_signal_handler(sig, client.stop, 0)
    loop.add_signal_handler(signal.SIGWINCH, client.redraw)
    term.start()
    try:
        code = await client.run()
    finally:
        term.stop()
    return code, client.final_lines()


def main(args: argparse.Namespace) -> int:
    """``solitaire-race play``."""
    if args.deal is not None and not args.game:
        print("solitaire-race play: --deal needs --game", file=sys.stderr)
        return 2
    try:
        ws_url(args.server)
    except ValueError as exc:
        print(f"solitaire-race play: {exc}", file=sys.stderr)
        return 2
    code, lines = asyncio.run(_main(args))
    for line in lines:
        print(safe_text(line))
    return code
