"""The interactive terminal client (``solitaire-race play``): race from a terminal.

It speaks the same protocol as the browser client (docs/protocol.md) over
``client.connection``. Two parts:

- ``Terminal`` owns the terminal: on a real terminal it switches to the alternate screen
  and to cbreak mode and edits the input line itself, so that the board can be redrawn
  whenever the server says something without disturbing what is being typed (Up/Down
  recall earlier lines, ``?`` on an empty line shows the help, Ctrl-D quits); otherwise
  (input from a pipe) it reads plain lines. Everything drawn is ``render.render_screen``.
- ``PlayClient`` is the client's logic: signing in with the token kept by ``config``,
  the lobby, the room, the race, and the results; it keeps a ``render.Screen`` up to date
  from the server's messages and turns typed lines into requests (``moves.expand`` for
  moves). The server judges every move; its reason is shown when it refuses one.

Whatever a server sends is escaped as it arrives (``client.terminal_text``), and so is any
other text the client prints that it did not write itself (notices, the closing lines).
"""

from __future__ import annotations

import argparse
import asyncio
import codecs
import contextlib
import os
import random
import shutil
import signal
import sys
import termios
import tty
from collections.abc import Callable
from typing import Any, TextIO

from ..client.connection import KEEPALIVE_S, Connection, Disconnected, http_url, ws_url
from ..client.known import known_state
from ..client.terminal_text import safe_message, safe_text
from ..engine import all_games, get_game, view_changes
from .config import ClientConfig
from .moves import expand
from .render import PLAIN, Screen, Style, clock_time, prompt, race_time, render_ranking, render_screen

RECONNECT_DELAYS_S = (0.5, 1, 2, 3, 5, 5, 5, 5, 5, 5)  # bounded: about 37 s in all
ALL_HOME_ROUNDS = 30  # the `f` command asks again at most this often
MAX_NOTICES = 20
STUCK_NOTICE = "no move left can bring another card home: your game is over (stuck)"


class Terminal:
    """The terminal: draws screens, edits the input line, hands over finished lines."""

    def __init__(self, stdin: TextIO, stdout: TextIO) -> None:
        self.fd = stdin.fileno()
        self.out = stdout
        self.interactive = os.isatty(self.fd) and stdout.isatty()
        self.lines: asyncio.Queue[str] = asyncio.Queue()
        self.buffer = ""
        self.history: list[str] = []
        self._history_pos = 0
        self._decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        self._escape: str | None = None  # an escape sequence being read
        self._saved: list[Any] | None = None
        self._raw_pending = ""  # line mode: text after the last newline
        self.on_help_key: Callable[[], None] = lambda: None
        self.on_redraw_key: Callable[[], None] = lambda: None
        self.prompt = "> "

    # --- lifecycle -------------------------------------------------------------------
    def start(self) -> None:
        loop = asyncio.get_running_loop()
        if self.interactive:
            self._saved = termios.tcgetattr(self.fd)
            tty.setcbreak(self.fd)  # keys one by one, no echo; Ctrl-C still signals
            self.out.write("\x1b[?1049h\x1b[H\x1b[2J")  # the alternate screen
            self.out.flush()
        loop.add_reader(self.fd, self._readable)

    def stop(self) -> None:
        with contextlib.suppress(Exception):
            asyncio.get_running_loop().remove_reader(self.fd)
        if self._saved is not None:
            termios.tcsetattr(self.fd, termios.TCSADRAIN, self._saved)
            self._saved = None
            self.out.write("\x1b[?1049l")  # back to the normal screen
            self.out.flush()

    # --- output ------------------------------------------------------------------------
    def draw(self, lines: list[str]) -> None:
        if self.interactive:
            body = "".join(f"{line}\x1b[K\r\n" for line in lines)
            self.out.write(f"\x1b[H{body}\x1b[J{self.prompt}{self.buffer}")
        else:
            self.out.write("\n".join(lines) + "\n" + self.prompt + "\n")
        self.out.flush()

    def size(self) -> tuple[int, int | None]:
        """Columns and rows to draw for (rows unlimited when not on a terminal)."""
        if not self.interactive:
            return 80, None
        size = shutil.get_terminal_size((80, 24))
        return size.columns, size.lines

    def _redraw_input(self) -> None:
        self.out.write(f"\r\x1b[K{self.prompt}{self.buffer}")
        self.out.flush()

    # --- input -------------------------------------------------------------------------
    def _readable(self) -> None:
        try:
            data = os.read(self.fd, 4096)
        except OSError:
            data = b""
        if not data:
            asyncio.get_running_loop().remove_reader(self.fd)
            self.lines.put_nowait("quit")  # end of input
            return
        text = self._decoder.decode(data)
        if not self.interactive:
            self._raw_pending += text
            *complete, self._raw_pending = self._raw_pending.split("\n")
            for line in complete:
                self.lines.put_nowait(line.rstrip("\r"))
            return
        for ch in text:
            self._key(ch)

    def _key(self, ch: str) -> None:
        if self._escape is not None:
            self._escape += ch
            seq = self._escape
            if len(seq) == 2 and ch not in "[O":
                self._escape = None  # Esc then a key: ignore both
            elif len(seq) > 2 and "@" <= ch <= "~":
                self._escape = None
                self._sequence(seq)
            return
        if ch == "\x1b":
            self._escape = ch
        elif ch in "\r\n":
            line, self.buffer = self.buffer, ""
            if line.strip() and (not self.history or self.history[-1] != line):
                self.history.append(line)
            self._history_pos = len(self.history)
            self._redraw_input()
            self.lines.put_nowait(line)
        elif ch in "\x7f\x08":
            self.buffer = self.buffer[:-1]
            self._redraw_input()
        elif ch == "\x15":  # Ctrl-U
            self.buffer = ""
            self._redraw_input()
        elif ch == "\x17":  # Ctrl-W: the last word
            head, sep, _ = self.buffer.rstrip().rpartition(" ")
            self.buffer = head + sep
            self._redraw_input()
        elif ch == "\x04":  # Ctrl-D on an empty line
            if not self.buffer:
                self.lines.put_nowait("quit")
        elif ch == "\x0c":  # Ctrl-L
            self.on_redraw_key()
        elif ch == "?" and not self.buffer:
            self.on_help_key()
        elif ch.isprintable():
            self.buffer += ch
            self._redraw_input()

    def _sequence(self, seq: str) -> None:
        if seq[-1] in "AB" and self.history:  # Up / Down: earlier lines
            step = -1 if seq[-1] == "A" else 1
            self._history_pos = min(len(self.history), max(0, self._history_pos + step))
            self.buffer = self.history[self._history_pos] if self._history_pos < len(self.history) else ""
            self._redraw_input()


def _game_id(text: str) -> str | None:
    """A game id from an id, a unique prefix of one, or a name."""
    games = all_games()
    t = text.strip().lower()
    if t in games:
        return t
    by_name = [g for g in games.values() if g.name.lower() == t]
    if by_name:
        return by_name[0].id
    prefixed = [gid for gid in games if gid.startswith(t)]
    return prefixed[0] if len(prefixed) == 1 else None


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
        self._start_ref: float | None = None  # loop time of the race start
        self._countdown_end: float | None = None
        self._redraw_scheduled = False
        self._bots: set[asyncio.Task[Any]] = set()
        self._last_game: str | None = None
        self._last_sent = self.loop.time()

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
        if self._start_ref is not None and s.phase == "race":
            s.elapsed_ms = int((now - self._start_ref) * 1000)
        s.countdown_ms = None if self._countdown_end is None else int((self._countdown_end - now) * 1000)
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
            for task in tasks + list(self._bots):
                task.cancel()
            await asyncio.gather(*tasks, *self._bots, return_exceptions=True)
            if self.conn is not None:
                await self.conn.close()
        return self.exit_code

    def stop(self, code: int = 0) -> None:
        self.exit_code = code
        self.quit.set()

    async def _tick(self) -> None:
        while True:
            counting = self._countdown_end is not None
            await asyncio.sleep(0.2 if counting else 1.0)
            ticking = counting or (self.screen.phase == "race" and self._start_ref is not None)
            if ticking and self.term.interactive:  # a pipe gets a screen per change, not per second
                self.redraw()
            if self.loop.time() - self._last_sent > KEEPALIVE_S:  # not an idle connection
                with contextlib.suppress(Disconnected):
                    await self.request({"type": "ping"})

    async def _input(self) -> None:
        while True:
            line = await self.term.lines.get()
            try:
                await self.handle_line(line)
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
            self.on_event(event)
            self.redraw()

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
            await self.join(self.args.join)
        elif self.args.game:
            await self.create(self.args.game, self.args.deal, self.args.public)
        elif self.args.daily:
            await self.daily(self.args.daily)
        else:
            await self.refresh_races()

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
                self._countdown_end = None
            if status in ("lobby", "countdown") and s.phase not in ("room",):
                s.phase = "room"
                s.ranking = None
        elif kind == "countdown":
            self._countdown_end = self.loop.time() + m["starts_in_ms"] / 1000
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
            self._countdown_end = None
            self._start_ref = None
            self.config.update(self.url, race=None)
            mine = next((e for e in m["ranking"] if e["player_id"] == s.player_id), None)
            if mine is not None and s.race is not None and s.race.get("daily"):
                self.notice(
                    "ok", f"daily challenge over: {mine['outcome']}; leaderboard: {http_url(self.url)}/leaderboard"
                )
            elif mine is not None:
                self.notice("ok", f"race over: you are {mine['rank']} of {len(m['ranking'])}")
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
            if m["outcome"] == "stuck" and (s.me is None or s.me["outcome"] == "playing"):
                self.notice("error", STUCK_NOTICE)  # found by the server just after the move
            s.me = entry
            return
        known = s.opponents.get(m["player_id"])
        s.opponents[m["player_id"]] = entry
        if m["outcome"] != "playing" and (known is None or known["outcome"] != m["outcome"]):
            took = f" in {race_time(m['time_ms'])}" if m["outcome"] == "won" else ""
            self.notice("info", f"{m['name']}: {m['outcome']}{took}")

    def _race_started(self, m: dict[str, Any]) -> None:
        s = self.screen
        s.phase = "race"
        s.show_help = False
        s.race = {k: m[k] for k in ("code", "game", "deal", "time_limit_s")}
        if m.get("daily"):
            s.race["daily"] = m["daily"]
        self._last_game = m["game"]
        s.view = m["view"]
        progress = get_game(m["game"]).progress(known_state(m["view"]))
        s.me = {
            "player_id": s.player_id, "name": s.player_name or "you", "home": progress.home,
            "total": progress.total, "moves": m["moves"], "outcome": m["outcome"], "time_ms": None,
        }
        s.opponents = {o["player_id"]: {k: v for k, v in o.items() if k != "type"} for o in m["opponents"]}
        s.ranking = None
        self._countdown_end = None
        self._start_ref = self.loop.time() - m["elapsed_ms"] / 1000
        s.elapsed_ms = m["elapsed_ms"]
        self.config.update(self.url, race=m["code"])
        if m["elapsed_ms"] < 1000 and m["moves"] == 0:
            self.notice("ok", "Go! Type ? for how to play")

    # --- typed lines ---------------------------------------------------------------------
    async def handle_line(self, line: str) -> None:
        s = self.screen
        text = line.strip()
        low = text.lower()
        word, _, rest = low.partition(" ")
        if low in ("?", "help"):
            self.toggle_help()
            return
        if low in ("q", "quit", "exit"):
            self.stop(0)
            return
        if s.show_help and not text:
            s.show_help = False
            return
        if s.phase == "name":
            if text:
                await self.sign_up(text)
            return
        if s.phase == "race":
            await self._race_line(text, low)
            return
        if not text:
            return
        if word in ("new", "n", "create"):
            args = rest.split()
            game = args[0] if args else ""
            deal = next((int(a) for a in args[1:] if a.isdigit()), None)
            await self.create(game, deal, "public" in args[1:])
        elif word in ("join", "j"):
            await self.join(rest)
        elif word == "races" and s.phase in ("lobby", "finished"):
            await self.refresh_races()
        elif word == "daily" and rest:
            await self.daily(rest)
        elif word == "again" and s.phase == "finished" and self._last_game:
            await self.create(self._last_game, None, False)
        elif word == "leave" and s.phase in ("room", "finished"):
            await self.leave()
        elif s.phase == "room" and word in ("start", "ready", "unready", "bots", "bot"):
            await self._room_command(word, rest)
        else:
            self.notice("error", f"unknown command {text!r}: type ? for help")

    async def _race_line(self, text: str, low: str) -> None:
        s = self.screen
        if low == "resign":
            reply = await self.request({"type": "resign"})
            if reply["type"] == "error":
                self.notice("error", reply["message"])
            else:
                self.on_event(reply)
                self.notice("info", "you resigned; the ranking comes when everyone is done")
            return
        if low == "leave":
            await self.leave()
            return
        if s.me is not None and s.me["outcome"] != "playing":
            if text:
                self.notice("info", "your game is over: waiting for the others (leave or quit to go)")
            return
        if s.view is None:
            return
        if low == "hint":
            await self.hint()
            return
        expansion = expand(text, s.view)
        if expansion.note:
            self.notice("info", expansion.note)
        rounds = 0
        moves = expansion.moves
        while moves and rounds < ALL_HOME_ROUNDS:
            rounds += 1
            if not await self.send_moves(moves) or not expansion.all_home:
                return
            moves = expand("f", s.view).moves if s.me and s.me["outcome"] == "playing" else []

    async def send_moves(self, moves: list[str]) -> bool:
        """Send moves; True when every one was applied."""
        s = self.screen
        reply = await self.request({"type": "move", "moves": moves})
        if reply["type"] == "error":
            self.notice("error", reply["message"])
            return False
        if s.view is not None:  # else the race was left meanwhile
            try:
                s.view = view_changes.apply(s.view, reply["changes"])
            except ValueError:  # out of step with the server (a bug): rejoin for the whole view
                s.view = None
                if s.race is not None:
                    self.on_event(await self.request({"type": "join_race", "code": s.race["code"]}))
                return False
        assert s.me is not None
        s.me.update(
            home=reply["progress"]["home"], total=reply["progress"]["total"],
            moves=reply["moves"], outcome=reply["outcome"],
        )
        self._start_ref = self.loop.time() - reply["elapsed_ms"] / 1000
        if reply["applied"]:
            self.notice("ok", " ".join(reply["applied"]))
        rejected = reply["rejected"]
        if rejected is not None:
            self.notice("error", f"{rejected['move']}: {rejected['reason']}")
        if reply["outcome"] == "won":
            s.me["time_ms"] = reply["elapsed_ms"]
            self.notice("ok", f"You won in {race_time(reply['elapsed_ms'])}! Waiting for the others…")
        elif reply["outcome"] == "stuck":
            s.me["time_ms"] = reply["elapsed_ms"]
            self.notice("error", STUCK_NOTICE)
        return rejected is None

    async def hint(self) -> None:
        """Ask the server for the next move of a winning line; it answers only in unranked
        practice (a daily replay) and refuses in races and ranked attempts."""
        reply = await self.request({"type": "hint"})
        if reply["type"] == "error":
            self.notice("error", reply["message"])
        elif reply["move"]:
            self.notice("info", f"hint: {reply['move']} ({reply['message']})")
        else:
            self.notice("info", reply["message"])

    async def _room_command(self, word: str, rest: str) -> None:
        if word == "start":
            reply = await self.request({"type": "start_race"})
        elif word in ("ready", "unready"):
            reply = await self.request({"type": "ready", "ready": word == "ready"})
        else:
            self._start_bots(rest)
            return
        if reply["type"] == "error":
            self.notice("error", reply["message"])
        else:
            self.on_event(reply)

    def _start_bots(self, rest: str) -> None:
        """Bot opponents in this process: ``bots [N] [SPEED]`` join this room and get ready."""
        from ..bots.runner import run_bot

        room = self.screen.room
        args = rest.split()
        try:
            count = int(args[0]) if args else 1
            speed = float(args[1]) if len(args) > 1 else 2.0
        except ValueError:
            self.notice("error", "use: bots [N] [SPEED], e.g. bots 2 1.5")
            return
        if room is None or not 1 <= count <= room["max_players"] - len(room["players"]):
            self.notice("error", "there is no room for that many bots")
            return
        tag = random.randrange(1000, 10000)
        for i in range(1, count + 1):
            task = self.loop.create_task(run_bot(self.url, f"bot-{tag}-{i}", code=room["code"], speed=speed))
            self._bots.add(task)
            task.add_done_callback(self._bot_done)
        self.notice("info", f"{count} bot{'s' if count > 1 else ''} joining at {speed:g} moves/s")

    def _bot_done(self, task: asyncio.Task[Any]) -> None:
        self._bots.discard(task)
        if not task.cancelled() and task.exception() is not None:
            self.notice("error", f"a bot stopped: {task.exception()}")

    # --- lobby actions ---------------------------------------------------------------------
    async def create(self, game_text: str, deal: int | None, public: bool) -> None:
        game = _game_id(game_text)
        if game is None:
            self.notice("error", f"no game {game_text!r}: use one of {', '.join(all_games())}")
            return
        message: dict[str, Any] = {"type": "create_race", "game": game, "private": not public}
        if deal is not None:
            message["deal"] = deal
        if self.args.time_limit:
            message["time_limit_s"] = self.args.time_limit
        reply = await self.request(message)
        if reply["type"] == "error":
            self.notice("error", reply["message"])
            return
        self.screen.phase = "lobby"  # so that the room message switches to the room
        self.on_event(reply)

    async def join(self, code: str) -> None:
        if not code.strip():
            self.notice("error", "use: join CODE")
            return
        reply = await self.request({"type": "join_race", "code": code.strip()})
        if reply["type"] == "error":
            self.notice("error", reply["message"])
            return
        self.screen.phase = "lobby"
        self.on_event(reply)

    async def daily(self, game_text: str) -> None:
        game = _game_id(game_text)
        if game is None:
            self.notice("error", f"no game {game_text!r}: use one of {', '.join(all_games())}")
            return
        reply = await self.request({"type": "start_daily", "game": game})
        if reply["type"] == "error":
            if reply["code"] == "unknown_type":
                self.notice("error", "this server has no daily challenge")
            else:
                self.notice("error", reply["message"])
            return
        self.on_event(reply)

    async def refresh_races(self) -> None:
        reply = await self.request({"type": "list_races"})
        self.screen.races = reply.get("races", [])
        dailies = await self.request({"type": "daily"})
        self.screen.dailies = dailies if dailies["type"] == "daily_challenges" else None

    async def leave(self) -> None:
        reply = await self.request({"type": "leave_race"})
        if reply["type"] == "error":
            self.notice("error", reply["message"])
            return
        s = self.screen
        s.phase, s.room, s.race, s.view, s.ranking = "lobby", None, None, None, None
        s.opponents, s.me = {}, None
        self._start_ref = self._countdown_end = None
        self.config.update(self.url, race=None)
        self.notice("info", f"left race {reply['code']}")
        await self.refresh_races()

    def final_lines(self) -> list[str]:
        """What stays on the normal screen after the client stops."""
        s = self.screen
        lines = list(self.farewell)
        if s.ranking is not None:
            lines.append(f"Race {s.race['code'] if s.race else ''} result:")
            lines += render_ranking(s.ranking, s.player_id, PLAIN)
        elif s.phase == "race" and s.race is not None and s.me is not None and s.me["outcome"] == "playing":
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
