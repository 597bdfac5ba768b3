"""What the player types, turned into requests: the lobby's commands (``new``, ``join``,
``daily``, ``again``, ``leave``...), the room's (``start``, ``ready``, ``bots``) and the
race's (moves in the game's notation and their short forms, ``f``, ``hint``, ``resign``).

``PlayClient`` (``app.py``) hands every typed line to its ``Commands``.
"""

from __future__ import annotations

import random
from typing import TYPE_CHECKING, Any

from ..engine import all_games, view_changes
from ..results import RacerOutcome
from .moves import expand
from .render import race_time

if TYPE_CHECKING:
    import asyncio

    from .app import PlayClient

ALL_HOME_ROUNDS = 30  # the `f` command asks again at most this often
STUCK_NOTICE = "no move left can bring another card home: your game is over (stuck)"


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


class Commands:
    """A client's typed lines, as requests."""

    def __init__(self, client: PlayClient) -> None:
        self.client = client

    async def handle_line(self, line: str) -> None:
        s = self.client.screen
        text = line.strip()
        low = text.lower()
        word, _, rest = low.partition(" ")
        if low in ("?", "help"):
            self.client.toggle_help()
            return
        if low in ("q", "quit", "exit"):
            self.client.stop(0)
            return
        if s.show_help and not text:
            s.show_help = False
            return
        if s.phase == "name":
            if text:
                await self.client.sign_up(text)
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
            game_text, _, date = rest.partition(" ")
            await self.daily(game_text, date.strip() or None)
        elif word == "again" and s.phase == "finished":
            await self.rematch(same_deal=rest.strip().lower() != "new")
        elif word == "leave" and s.phase in ("room", "finished"):
            await self.leave()
        elif s.phase == "room" and word in ("start", "ready", "unready", "bots", "bot"):
            await self._room_command(word, rest)
        else:
            self.client.notice("error", f"unknown command {text!r}: type ? for help")

    async def _race_line(self, text: str, low: str) -> None:
        s = self.client.screen
        if low == "resign":
            reply = await self.client.request({"type": "resign"})
            if reply["type"] == "error":
                self.client.notice("error", reply["message"])
            else:
                self.client.on_event(reply)
                self.client.notice("info", "you resigned; the ranking comes when everyone is done")
            return
        if low == "leave":
            await self.leave()
            return
        if s.me is not None and s.me["outcome"] != RacerOutcome.PLAYING:
            if text:
                self.client.notice("info", "your game is over: waiting for the others (leave or quit to go)")
            return
        if s.view is None:
            return
        if low == "hint":
            await self.hint()
            return
        expansion = expand(text, s.view)
        if expansion.note:
            self.client.notice("info", expansion.note)
        rounds = 0
        moves = expansion.moves
        while moves and rounds < ALL_HOME_ROUNDS:
            rounds += 1
            if not await self.send_moves(moves) or not expansion.all_home:
                return
            moves = expand("f", s.view).moves if s.me and s.me["outcome"] == RacerOutcome.PLAYING else []

    async def send_moves(self, moves: list[str]) -> bool:
        """Send moves; True when every one was applied."""
        s = self.client.screen
        reply = await self.client.request({"type": "move", "moves": moves})
        if reply["type"] == "error":
            self.client.notice("error", reply["message"])
            return False
        if s.view is not None:  # else the race was left meanwhile
            try:
                s.view = view_changes.apply(s.view, reply["changes"])
            except ValueError:  # out of step with the server (a bug): rejoin for the whole view
                s.view = None
                if s.race is not None:
                    self.client.on_event(await self.client.request({"type": "join_race", "code": s.race["code"]}))
                return False
        assert s.me is not None
        s.me.update(
            home=reply["progress"]["home"], total=reply["progress"]["total"],
            moves=reply["moves"], outcome=reply["outcome"],
        )
        self.client.start_ref = self.client.loop.time() - reply["elapsed_ms"] / 1000
        if reply["applied"]:
            self.client.notice("ok", " ".join(reply["applied"]))
        rejected = reply["rejected"]
        if rejected is not None:
            self.client.notice("error", f"{rejected['move']}: {rejected['reason']}")
        if reply["outcome"] == RacerOutcome.WON:
            s.me["time_ms"] = reply["elapsed_ms"]
            self.client.notice("ok", f"You won in {race_time(reply['elapsed_ms'])}! Waiting for the others…")
        elif reply["outcome"] == RacerOutcome.STUCK:
            s.me["time_ms"] = reply["elapsed_ms"]
            self.client.notice("error", STUCK_NOTICE)
        return rejected is None

    async def hint(self) -> None:
        """Ask the server for the next move of a winning line; it answers only when
        practising a past day's daily challenge, and refuses in races and on today's deal."""
        reply = await self.client.request({"type": "hint"})
        if reply["type"] == "error":
            self.client.notice("error", reply["message"])
        elif reply["move"]:
            self.client.notice("info", f"hint: {reply['move']} ({reply['message']})")
        else:
            self.client.notice("info", reply["message"])

    async def _room_command(self, word: str, rest: str) -> None:
        if word == "start":
            reply = await self.client.request({"type": "start_race"})
        elif word in ("ready", "unready"):
            reply = await self.client.request({"type": "ready", "ready": word == "ready"})
        else:
            self._start_bots(rest)
            return
        if reply["type"] == "error":
            self.client.notice("error", reply["message"])
        else:
            self.client.on_event(reply)

    def _start_bots(self, rest: str) -> None:
        """Bot opponents in this process: ``bots [N] [SPEED]`` join this room and get ready."""
        from ..bots.runner import run_bot

        room = self.client.screen.room
        args = rest.split()
        try:
            count = int(args[0]) if args else 1
            speed = float(args[1]) if len(args) > 1 else 2.0
        except ValueError:
            self.client.notice("error", "use: bots [N] [SPEED], e.g. bots 2 1.5")
            return
        if room is None or not 1 <= count <= room["max_players"] - len(room["players"]):
            self.client.notice("error", "there is no room for that many bots")
            return
        tag = random.randrange(1000, 10000)
        client = self.client
        for i in range(1, count + 1):
            task = client.loop.create_task(run_bot(client.url, f"bot-{tag}-{i}", code=room["code"], speed=speed))
            self.client.bots.add(task)
            task.add_done_callback(self._bot_done)
        self.client.notice("info", f"{count} bot{'s' if count > 1 else ''} joining at {speed:g} moves/s")

    def _bot_done(self, task: asyncio.Task[Any]) -> None:
        self.client.bots.discard(task)
        if not task.cancelled() and task.exception() is not None:
            self.client.notice("error", f"a bot stopped: {task.exception()}")

    # --- lobby actions ---------------------------------------------------------------------
    async def create(self, game_text: str, deal: int | None, public: bool) -> None:
        game = _game_id(game_text)
        if game is None:
            self.client.notice("error", f"no game {game_text!r}: use one of {', '.join(all_games())}")
            return
        message: dict[str, Any] = {"type": "create_race", "game": game, "private": not public}
        if deal is not None:
            message["deal"] = deal
        if self.client.args.time_limit:
            message["time_limit_s"] = self.client.args.time_limit
        reply = await self.client.request(message)
        if reply["type"] == "error":
            self.client.notice("error", reply["message"])
            return
        self.client.screen.phase = "lobby"  # so that the room message switches to the room
        self.client.on_event(reply)

    async def join(self, code: str) -> None:
        if not code.strip():
            self.client.notice("error", "use: join CODE")
            return
        reply = await self.client.request({"type": "join_race", "code": code.strip()})
        if reply["type"] == "error":
            self.client.notice("error", reply["message"])
            return
        self.client.screen.phase = "lobby"
        self.client.on_event(reply)

    async def daily(self, game_text: str, date: str | None = None) -> None:
        """Today's challenge of the game, or practice of a past day's (``date``)."""
        game = _game_id(game_text)
        if game is None:
            self.client.notice("error", f"no game {game_text!r}: use one of {', '.join(all_games())}")
            return
        request: dict[str, Any] = {"type": "start_daily", "game": game}
        if date is not None:
            request["date"] = date
        reply = await self.client.request(request)
        if reply["type"] == "error":
            if reply["code"] == "unknown_type":
                self.client.notice("error", "this server has no daily challenge")
            else:
                self.client.notice("error", reply["message"])
            return
        self.client.on_event(reply)

    async def refresh_races(self) -> None:
        reply = await self.client.request({"type": "list_races"})
        self.client.screen.races = reply.get("races", [])
        dailies = await self.client.request({"type": "daily"})
        self.client.screen.dailies = dailies if dailies["type"] == "daily_challenges" else None

    async def rematch(self, same_deal: bool) -> None:
        """Race this race's racers again: the room another racer made already, or a new one
        that they are invited to (docs/protocol.md, rematch)."""
        reply = await self.client.request({"type": "rematch", "same_deal": same_deal})
        if reply["type"] == "error":
            self.client.notice("error", reply["message"])
            return
        self.client.screen.phase = "lobby"  # so that the room message switches to the room
        self.client.on_event(reply)

    async def leave(self) -> None:
        reply = await self.client.request({"type": "leave_race"})
        if reply["type"] == "error":
            self.client.notice("error", reply["message"])
            return
        s = self.client.screen
        s.phase, s.room, s.race, s.view, s.ranking = "lobby", None, None, None, None
        s.opponents, s.me = {}, None
        self.client.start_ref = self.client.countdown_end = None
        self.client.config.update(self.client.url, race=None)
        self.client.notice("info", f"left race {reply['code']}")
        await self.refresh_races()
