"""A room's lobby: who is in, who is ready, and the countdown to the start (a part of
``Room``, kept in its own module; sans-I/O like the rest)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .effects import Effect, SaveEntrants, Send
from .racer import Racer
from .status import RoomError, Status


class Lobby:
    """``Room``'s lobby."""

    code: str
    status: Status
    racers: dict[int, Racer]
    max_players: int
    creator_id: int
    countdown_s: float
    start_at: float | None

    if TYPE_CHECKING:  # the rest of ``Room``, which these build on
        def _racer(self, player_id: int) -> Racer: ...
        def _require(self, status: Status, action: str) -> None: ...
        def _room_message(self) -> Send: ...
        def _to_all(self, message: dict[str, object]) -> Send: ...
        def _resume(self, racer: Racer, now: float) -> list[Effect]: ...
        def _go(self, now: float) -> list[Effect]: ...

    def join(self, player_id: int, name: str, now: float) -> list[Effect]:
        racer = self.racers.get(player_id)
        if racer is not None:  # the same player again (a new connection): resume
            racer.connected = True
            racer.gone_since = None
            racer.name = name
            return [self._room_message(), *self._resume(racer, now)]
        if self.status is not Status.LOBBY:
            raise RoomError("race_started", f"race {self.code} has already started")
        if len(self.racers) >= self.max_players:
            raise RoomError("room_full", f"race {self.code} is full ({self.max_players} players)")
        self.racers[player_id] = Racer(player_id, name)
        return [self._entrants(), self._room_message()]

    def leave(self, player_id: int, now: float) -> list[Effect]:
        """The player leaves the room (or their connection dropped)."""
        racer = self._racer(player_id)
        if self.status in (Status.LOBBY, Status.COUNTDOWN):
            return self._remove(player_id)
        racer.connected = False
        if self.status is Status.RUNNING and not racer.done:
            racer.gone_since = now  # their clock keeps running; see deadline()
        return [self._room_message()]

    def _remove(self, player_id: int) -> list[Effect]:
        """Take a player out of the lobby; an empty lobby is abandoned (the caller deletes
        the race, entrants and all), and its spectators are told so: the room, finished with
        nobody in it."""
        del self.racers[player_id]
        if not self.racers:
            self.status = Status.FINISHED
            return [self._room_message()]  # to its spectators: no racer is left
        if player_id == self.creator_id:
            self.creator_id = next(iter(self.racers))
        return [self._entrants(), self._room_message()]

    def _entrants(self) -> SaveEntrants:
        return SaveEntrants(tuple(self.racers))

    def set_ready(self, player_id: int, ready: bool, now: float) -> list[Effect]:
        racer = self._racer(player_id)
        self._require(Status.LOBBY, "ready")
        racer.ready = ready
        effects: list[Effect] = [self._room_message()]
        if len(self.racers) >= 2 and all(r.ready for r in self.racers.values()):
            effects += self._begin_countdown(now)
        return effects

    def start(self, player_id: int, now: float) -> list[Effect]:
        self._racer(player_id)
        self._require(Status.LOBBY, "start")
        if player_id != self.creator_id:
            raise RoomError("not_creator", "only the race's creator can start it")
        return self._begin_countdown(now)

    def start_now(self, player_id: int, now: float) -> list[Effect]:
        """Start at once, without a countdown (a solo daily attempt: the clock starts
        when the player receives the deal)."""
        self._racer(player_id)
        self._require(Status.LOBBY, "start")
        self.start_at = now
        return self._go(now)

    def _begin_countdown(self, now: float) -> list[Effect]:
        self.status = Status.COUNTDOWN
        self.start_at = now + self.countdown_s
        return [
            self._room_message(),
            self._to_all({"type": "countdown", "code": self.code, "starts_in_ms": round(self.countdown_s * 1000)}),
        ]
