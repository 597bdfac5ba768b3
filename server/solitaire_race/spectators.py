"""Watching a race: a connection that watches under its own negative id (``Gateway``),
told what every racer is told and never a racer's own cards, or, in a race with live
boards, every board (a part of ``Races``, kept in its own module; docs/protocol.md,
``watch_race``; the room's side is ``room/beyond.py``)."""

from __future__ import annotations

from collections.abc import Callable, Coroutine
from typing import Any

from . import protocol as p
from .interpreter import Delivery, Interpreter
from .room import Room, Send
from .store import Store


class Spectators:
    """``watch_race``, and who is signed in on a watching connection."""

    store: Store
    seats: dict[int, Room]
    watched_by: dict[int, int]  # a watching connection's (negative) id -> the player signed in on it
    delivery: Delivery
    interpreter: Interpreter
    clock: Callable[[], float]
    # Races' own, which this request builds on:
    _room_of: Callable[[str], Coroutine[Any, Any, Room | None]]
    _send_finished: Callable[..., Coroutine[Any, Any, None]]

    async def watch(self, spectator: int, req: p.WatchRace, player_id: int | None = None) -> None:
        """Watch a race (``spectator``: the watching connection's own negative id, see
        ``Gateway``; ``player_id``: the player signed in on it, if any): its standings as they
        change, never a card; a finished race's ranking."""
        code = p.normalize_code(req.code)
        room = await self._room_of(code)
        finished = await self.store.finished_race(code) if room is None and code else None
        if room is None and finished is None:
            raise p.ProtocolError(p.ErrorCode.NO_SUCH_RACE, f"no race with code {req.code[:16]!r}")
        watched = self.seats.pop(spectator, None)
        if watched is not None:
            watched.spectators.discard(spectator)  # one race at a time
        if room is None:
            assert finished is not None
            await self._send_finished(spectator, finished, req.id, racer=False)
            return
        self.seats[spectator] = room
        self.watch_as(spectator, player_id)
        effects = room.watch(spectator, self.clock())
        if player_id is not None and self.seats.get(player_id) is room:
            # Racing in it: its messages come as a racer's (``seated``); the answer only, here.
            for i, effect in enumerate(effects):
                if isinstance(effect, Send):
                    self.delivery.send(spectator, p.reply(effect.message, req.id) if i == 0 else effect.message)
            return
        await self.interpreter.run(room, effects, reply=(spectator, req.id))

    def watch_as(self, spectator: int, player_id: int | None) -> None:
        """The watching connection ``spectator`` is signed in as ``player_id`` (None: nobody)."""
        if player_id is None:
            self.watched_by.pop(spectator, None)
        else:
            self.watched_by[spectator] = player_id
