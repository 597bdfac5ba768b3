"""One race room as a sans-I/O state machine: inputs in, effects out, no awaiting.

The room owns the race's life: the lobby (who is in, who is ready) and the countdown
(``lobby.py``), every racer's own game state, validation of their moves by the engine,
progress, the end of the race and its ranking; what lies beyond it (its series, its
rematch, its spectators and their live boards) is in ``beyond.py``. It never reads a
clock: every input carries ``now`` (seconds on the server's monotonic clock), and
``deadline()`` says when the room next wants ``tick``.

Every method returns a list of effects for the caller to carry out, in order:
- ``LogMoves(player_id, entries)``: append to the durable move log; it always comes before
  the messages that acknowledge those moves, so nothing acknowledged can be lost (if the
  append fails, ``log_failed``: its entries go again with the racer's next ``LogMoves``);
- ``Send(to, message)``: a protocol message (a dict) for some players;
- ``SaveResults(results)``: the race is over; persist these results, then call
  ``results_saved()``, which announces the ranking. So nothing is announced before the
  database has it;
- ``CheckStuck(player_id, moves, search)``: only a search can tell whether this racer's
  position is stuck (``Game.assess``); run the ``StuckSearch`` off the move path and
  report with ``stuck_checked``. The move is answered at once, not after the search;
- ``SaveEntrants(player_ids)``: who is in the lobby now; store it before the messages that
  follow, so a lobby survives a restart with its players (``restore_lobby``);
- ``RecordStart(player_ids)``: the race starts; store it before `race_started` goes out.
Bad requests raise ``RoomError(code, message)`` and change nothing.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from typing import Any

from ..engine import Game, IllegalMove, Move, NotationError, Outcome
from ..engine.base import StuckSearch
from ..engine.view_changes import Change
from ..results import RacerOutcome
from . import messages
from .beyond import Beyond
from .effects import CheckStuck, Effect, LogMoves, Played, RecordStart, SaveResults, Send
from .ghost import Ghost
from .lobby import Lobby
from .racer import ENDED_AS, Racer, rebuilt, seen
from .results import Result, rank, verify
from .series import Series
from .status import RoomError, Status

# Enum members ``play`` reads on every move, bound to names once (the move path's one speed
# idiom: docs/performance.md, "Enum members bound to names").
_RUNNING, _PLAYING, _WON, _STUCK = Status.RUNNING, Outcome.PLAYING, Outcome.WON, Outcome.STUCK
_STILL_PLAYING = RacerOutcome.PLAYING
MAX_MOVES_PER_MESSAGE = 64
# A racer's moves in one race: twenty times the longest winning line the solver finds (about
# 250 moves, in Patriarchs). Without a bound, moves that undo each other (3>6, 6>3) made a
# log of 64,000 moves a minute, and its replay a frame of megabytes built on the event loop.
MAX_MOVES_PER_RACER = 5_000


def parse_move(game: Game[Any], text: str) -> tuple[Move, str]:
    """A move text as the move and its canonical text (what the log keeps)."""
    move = game.parse_move(text)
    return move, game.format_move(move)


class Room(Lobby, Beyond):
    def __init__(
        self,
        *,
        race_id: int,
        code: str,
        game: Game[Any],
        deal_number: int,
        secret: bytes,
        private: bool,
        creator_id: int,
        time_limit_s: int,
        countdown_s: float,
        max_players: int,
        link: str,
        leave_grace_s: float = 60.0,
        daily: dict[str, Any] | None = None,
        fair_play: bool = True,
        series: Series | None = None,
        ghost: Ghost | None = None,
        live_boards: bool = False,
    ) -> None:
        self.race_id = race_id
        self.fair_play = fair_play  # assess each result's plausibility (fair_play.py), holding the implausible
        self.code = code
        self.game = game
        self.deal_number = deal_number
        self.private = private
        self.creator_id = creator_id  # may pass to another player if the creator leaves
        self.created_by = creator_id
        self.time_limit_s = time_limit_s
        self.countdown_s = countdown_s
        self.max_players = max_players
        self.link = link
        self.leave_grace_s = leave_grace_s
        self.daily = daily  # {"date", "ranked"} for a daily challenge attempt
        self.series = series  # its place in a series of races among friends (None: a daily attempt)
        self.ghost = ghost  # a recorded run raced against: practice, never stored (ghost.py)
        # Who watches (``watch``): sent what every racer is (standings, progress, the room,
        # the ranking) and nothing of one racer's own (race_started, move_result): no card.
        self.spectators: set[int] = set()
        self.live_boards = live_boards  # spectators see every board too (``Beyond.flush_boards``)
        self.boards_shown: dict[int, Any] = {}  # with live boards: each racer's state as spectators see it
        self._boards_dirty: dict[int, Any] = {}  # the durable states not shown yet
        self.rematch: dict[str, Any] | None = None  # once finished: the race that follows it (code, by, same_deal)
        # Racers repeat moves. A function of the game, not a method: a room holding its own
        # bound method would be a reference cycle, freed only by the garbage collector.
        self._parse = functools.lru_cache(maxsize=1024)(functools.partial(parse_move, game))
        # The progress of each racer with durable moves not yet published, captured when the
        # caller reports its LogMoves done (``logged``), so standings never show a move that
        # a crash could still lose: the racer's state, moves, outcome and end then (states
        # are immutable), made into progress only at the flush. It is coalesced into one
        # `standings` frame per flush, the same bytes for the whole room: a room of 8 costs
        # 8 sends per flush, not 7 per move.
        self._dirty: dict[int, tuple[Any, int, str | None, int | None]] = {}
        self._secret = secret
        self._first: Any = None  # the deal's first state, once dealt (``_deal``)
        self.status = Status.LOBBY
        self.racers: dict[int, Racer] = {}
        self.start_at: float | None = None  # monotonic time of the common start
        self.results: tuple[Result, ...] = ()

    # --- time ----------------------------------------------------------------------
    def deadline(self) -> float | None:
        """When the room next needs ``tick``: the start, then the time limit or the end of
        a disconnected racer's grace period, whichever comes first. In a lobby brought
        back by a restart: the end of its absent players' grace period."""
        if self.status is Status.LOBBY:
            absent = [r.gone_since + self.leave_grace_s for r in self.racers.values() if r.gone_since is not None]
            return min(absent, default=None)
        if self.start_at is None:
            return None
        if self.status is Status.COUNTDOWN:
            return self.start_at
        if self.status is Status.RUNNING:
            end = self.start_at + self.time_limit_s
            for r in self.racers.values():  # asked after every move: no lists made
                if r.gone_since is not None:
                    end = min(end, r.gone_since + self.leave_grace_s)
            if self.ghost is not None and (at_ms := self.ghost.next_ms()) is not None:
                end = min(end, self.start_at + at_ms / 1000)
            return end
        return None

    def tick(self, now: float) -> list[Effect]:
        deadline = self.deadline()
        if deadline is None or now < deadline:
            return []
        if self.status is Status.COUNTDOWN:
            return self._go(now)
        if self.status is Status.LOBBY:  # players who did not come back after a restart
            gone = [
                r.id
                for r in self.racers.values()
                if r.gone_since is not None and now >= r.gone_since + self.leave_grace_s
            ]
            left: list[Effect] = []
            for player_id in gone:
                left = self._remove(player_id)  # the last removal's effects say who is left
            return left
        effects: list[Effect] = []
        if self.ghost is not None and (news := self.ghost.due(self.elapsed_ms(now))) is not None:
            effects.append(self._to_all({"type": "progress", **news}))
        if now >= self.start_at + self.time_limit_s:  # type: ignore[operator]
            for racer in self.racers.values():
                if not racer.done:
                    self._end(racer, RacerOutcome.TIMEOUT, now)
        for racer in self.racers.values():
            if racer.gone_since is not None and now >= racer.gone_since + self.leave_grace_s:
                self._end(racer, RacerOutcome.LEFT, now)
                self._dirty.pop(racer.id, None)
                effects.append(self._log(racer, (racer.record("left", "", racer.end_ms or 0),)))
                effects.append(self._to_all(self._progress(racer)))
        if self._all_done():
            effects += self._close()
        return effects

    def _deal(self) -> Any:
        """The deal's first state, dealt once: states are immutable, so every racer, a
        restore and every replay share it."""
        if self._first is None:
            self._first = self.game.deal(self.deal_number, self._secret)
        return self._first

    def _go(self, now: float) -> list[Effect]:
        self.status = Status.RUNNING
        first = self._deal()
        view = self.game.view(first)
        for racer in self.racers.values():
            racer.state = racer.shown = first  # states are immutable: sharing the first one is safe
        if self.live_boards:
            self.boards_shown = dict.fromkeys(self.racers, first)
        # Every racer has its game before any message is built: each lists the others.
        effects: list[Effect] = [RecordStart(tuple(self.racers)), self._room_message()]
        effects += [Send((r.id,), messages.started(self, r, view, now)) for r in self.racers.values()]
        return effects

    def _resume(self, racer: Racer, now: float) -> list[Effect]:
        if self.status is Status.RUNNING:
            racer.shown = racer.state
            return [Send((racer.id,), messages.started(self, racer, self.game.view(racer.state), now))]
        if self.status is Status.FINISHED:  # and its rematch, to its racers only: a private room's code
            effects: list[Effect] = [Send((racer.id,), messages.finished(self))]
            if self.rematch is not None:
                effects.append(Send((racer.id,), {"type": "rematch_proposed", "race": self.code, **self.rematch}))
            return effects
        return []

    def restore(
        self, start_at: float, racers: Sequence[tuple[int, str, Sequence[tuple[int, str, str, int]]]], now: float
    ) -> list[Effect]:
        """Rebuild a running race from its durable log (after a crash or a restart).

        Every logged move is replayed through the engine, so a log that does not replay is
        refused (``IllegalMove``) rather than trusted. Racers come back disconnected: their
        grace period starts now. If every racer's game had ended (the process died before
        the results were saved), the race closes at once: its closing effects."""
        self.status = Status.RUNNING
        self.start_at = start_at
        first = self._deal()
        for pid, name, entries in racers:
            racer = rebuilt(self.game, first, pid, name, entries, self.code)
            if not racer.done:
                racer.gone_since = now
            self.racers[pid] = racer
        if self.live_boards:  # rebuilt from the log: durable
            self.boards_shown = {r.id: r.state for r in self.racers.values()}
        return self._close() if self._all_done() else []

    def restore_lobby(self, players: Sequence[tuple[int, str]], now: float) -> None:
        """Bring back a lobby (or an interrupted countdown, which becomes a lobby again)
        after a restart. Its players come back disconnected and not ready; each keeps their
        place for the grace period (``tick`` removes those who do not return)."""
        self.status = Status.LOBBY
        for pid, name in players:
            self.racers[pid] = Racer(pid, name, connected=False, gone_since=now)
        if self.creator_id not in self.racers and self.racers:
            self.creator_id = next(iter(self.racers))

    # --- playing -------------------------------------------------------------------
    def play(self, player_id: int, texts: Sequence[str], now: float) -> Played:
        """Apply the racer's moves in order, stopping at the first illegal one."""
        racer = self._racer(player_id)
        if self.status is not _RUNNING:
            raise RoomError("race_not_running", f"race {self.code} is not running ({self.status.value})")
        if racer.done:
            raise RoomError("game_over", f"your game is over ({racer.outcome})")
        if not 1 <= len(texts) <= MAX_MOVES_PER_MESSAGE:
            raise RoomError("bad_message", f"send 1 to {MAX_MOVES_PER_MESSAGE} moves at a time")
        if len(racer.log) + len(texts) > MAX_MOVES_PER_RACER:
            raise RoomError(
                "not_allowed", f"a racer makes at most {MAX_MOVES_PER_RACER:,} moves in a race: resign to end your game"
            )
        game, state = self.game, racer.state
        applied: list[str] = []
        rejected: dict[str, Any] | None = None
        for text in texts:
            try:
                move, formatted = self._parse(text)
                state = game.apply(state, move)
            except (IllegalMove, NotationError) as exc:
                code = "bad_notation" if isinstance(exc, NotationError) else "illegal_move"
                rejected = {"move": text, "code": code, "reason": str(exc)}
                break
            applied.append(formatted)
            racer.log.append(formatted)
        racer.state = state
        verdict = game.assess(state) if applied else _PLAYING
        if verdict is _WON or verdict is _STUCK:
            self._end(racer, ENDED_AS[verdict], now)
        progress = game.progress(state)
        at_ms = self.elapsed_ms(now)
        logged = None
        changes: list[Change] = []  # none if nothing applied: the view is as the client has it
        if applied:
            racer.last_move_ms = at_ms
            racer.times.extend([at_ms] * len(applied))  # one message: one time (fair_play.py)
            logged = self._log(racer, tuple([racer.record("move", text, at_ms) for text in applied]))
            changes = game.view_changes(racer.shown, state)
            racer.shown = state
        reply: dict[str, Any] = {
            "type": "move_result",
            "applied": applied,
            "rejected": rejected,
            "changes": changes,
            "progress": progress.to_json(),
            "moves": len(racer.log),
            "outcome": racer.outcome or _STILL_PLAYING,
            "elapsed_ms": at_ms,
        }
        # "playing" for now, if a search is to decide (stuck_checked)
        check = CheckStuck(racer.id, len(racer.log), verdict) if isinstance(verdict, StuckSearch) else None
        # Only a game that just ended can end the race. (Not `racer.done`: mypy would keep
        # it False from the check above, though _end may have set the outcome since.)
        closing = self._close() if racer.outcome is not None and self._all_done() else []
        return Played(logged, Send((racer.id,), reply), check, closing)

    def stuck_checked(self, player_id: int, moves: int, outcome: Outcome) -> list[Effect]:
        """The search asked for by ``CheckStuck`` found ``outcome``. A stuck game ends at
        the time of the move that left it so, and everyone is told at once (``progress``),
        unless the racer has moved since: their newer position has its own check."""
        racer = self.racers.get(player_id)
        if (
            outcome is not Outcome.STUCK or racer is None or racer.done
            or self.status is not Status.RUNNING or len(racer.log) != moves
        ):
            return []
        self._end_at(racer, RacerOutcome.STUCK, racer.last_move_ms)
        self._dirty.pop(racer.id, None)  # told to everyone now, below
        effects: list[Effect] = [self._to_all(self._progress(racer))]
        if self._all_done():
            effects += self._close()
        return effects

    def resync(self, player_id: int) -> None:
        """This racer's client may not have the view the room last sent (a new connection
        took over, or a reply was never delivered): their next ``move_result`` carries the
        whole view, as changes that fit any view of the game."""
        racer = self.racers.get(player_id)
        if racer is not None:
            racer.shown = None

    @property
    def has_pending_progress(self) -> bool:
        return bool(self._dirty or self._boards_dirty)

    def log_failed(self, effect: LogMoves) -> None:
        """The caller could not make ``effect`` durable (its move_result is not sent). The
        room keeps the moves, and their entries go again, first, with the racer's next
        ``LogMoves``: so a later entry is never durable without them for longer than one
        append (the log a restart replays must have no gap), and nothing is acknowledged
        before it is durable. Their client may lack the view the room last sent: the next
        ``move_result`` carries the whole view (``resync``)."""
        racer = self.racers.get(effect.player_id)
        if racer is None:
            return
        racer.unlogged = sorted([*racer.unlogged, *effect.entries])
        racer.shown = None

    def _log(self, racer: Racer, entries: tuple[tuple[int, str, str, int], ...]) -> LogMoves:
        if racer.unlogged:
            entries, racer.unlogged = (*racer.unlogged, *entries), []
        return LogMoves(racer.id, entries)

    def logged(self, effect: LogMoves) -> None:
        """The caller made ``effect`` durable: the moves in it may now be published."""
        racer = self.racers.get(effect.player_id)
        if racer is None:
            return
        for entry in effect.entries:
            if entry[1] == "move":
                self._dirty[racer.id] = seen(racer)
                if self.live_boards:
                    self._boards_dirty[racer.id] = racer.state
                return

    def flush_progress(self) -> list[Effect]:
        """One `standings` message to the room: the progress of every racer whose moves
        became durable since the last flush. The caller flushes every room a few times a
        second."""
        dirty, self._dirty = self._dirty, {}
        changed = [
            messages.progress_fields(self.game, self.racers[pid], *seen)
            for pid, seen in dirty.items()
            if pid in self.racers
        ]
        boards, self._boards_dirty = self._boards_dirty, {}
        return [
            *([self._to_all({"type": "standings", "racers": changed})] if changed else []),
            *self.flush_boards(boards),
        ]

    def resign(self, player_id: int, now: float) -> list[Effect]:
        racer = self._racer(player_id)
        if self.status is not Status.RUNNING:
            raise RoomError("race_not_running", f"race {self.code} is not running ({self.status.value})")
        if racer.done:
            raise RoomError("game_over", f"your game is over ({racer.outcome})")
        self._end(racer, RacerOutcome.RESIGNED, now)
        self._dirty.pop(racer.id, None)  # told to everyone now, below
        effects: list[Effect] = [self._log(racer, (racer.record("resign", "", racer.end_ms or 0),))]
        effects.append(self._to_all(self._progress(racer)))
        if self._all_done():
            effects += self._close()
        return effects

    def _end(self, racer: Racer, outcome: RacerOutcome, now: float) -> None:
        self._end_at(racer, outcome, self.elapsed_ms(now))

    def _end_at(self, racer: Racer, outcome: RacerOutcome, at_ms: int) -> None:
        racer.outcome = outcome
        racer.gone_since = None
        racer.end_ms = min(at_ms, self.time_limit_s * 1000)  # a late timer never adds time

    def _all_done(self) -> bool:
        return all(r.done for r in self.racers.values())

    # --- the end -------------------------------------------------------------------
    def _close(self) -> list[Effect]:
        # Everyone's final progress before the ranking. These effects follow the last
        # LogMoves, which the caller makes durable first.
        self._dirty, self._boards_dirty = {}, {}
        final = [messages.progress_fields(self.game, r) for r in self.racers.values()]
        effects: list[Effect] = [self._to_all({"type": "standings", "racers": final})]
        if self.live_boards:  # every board as it ends
            effects += self.flush_boards({r.id: r.state for r in self.racers.values()})
        self.status = Status.CLOSING
        # The moves are read through the room's parse cache: they were parsed in play.
        self.results = rank(self.game, self.racers.values(), self.fair_play, lambda text: self._parse(text)[0])
        return [*effects, SaveResults(self.results)]

    def verify(self, results: Sequence[Result]) -> None:
        """Replay every result's move log from the deal: a log that does not replay, or
        that contradicts its result, never enters the leaderboards (raises ValueError)."""
        first = self._deal()
        for r in results:
            try:  # through the room's parse cache: these moves were parsed in play
                verify(self.game, first, r, lambda text: self._parse(text)[0])
            except ValueError as exc:
                raise ValueError(f"race {self.code}: {exc}") from None

    def results_saved(self) -> list[Effect]:
        """The store has committed the results: now the ranking may be announced."""
        if self.status is not Status.CLOSING:
            raise RuntimeError("results_saved() without a pending save")
        self.status = Status.FINISHED
        return [self._room_message(), self._to_all(messages.finished(self))]

    # --- messages (built in messages.py) ---------------------------------------------
    def summary(self) -> dict[str, Any]:
        return messages.summary(self)

    def _progress(self, racer: Racer) -> dict[str, Any]:
        return {"type": "progress", **messages.progress_fields(self.game, racer)}

    def _room_message(self) -> Send:
        return self._to_all({"type": "room", "race": self.summary()})

    def _to_all(self, message: dict[str, Any]) -> Send:
        """To every racer and spectator: never a message with a racer's cards."""
        return Send((*(r.id for r in self.racers.values() if r.connected), *self.spectators), message)

    def _racer(self, player_id: int) -> Racer:
        racer = self.racers.get(player_id)
        if racer is None:
            raise RoomError("not_in_race", f"you are not in race {self.code}")
        return racer

    def _require(self, status: Status, action: str) -> None:
        if self.status is not status:
            raise RoomError("race_started", f"cannot {action}: race {self.code} is {self.status.value}")

    def elapsed_ms(self, now: float) -> int:
        """Race time at ``now``, in milliseconds from the common start."""
        return max(0, round((now - self.start_at) * 1000)) if self.start_at is not None else 0

    @property
    def open(self) -> bool:
        return self.status is Status.LOBBY
