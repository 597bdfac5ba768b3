"""The one interpreter of a room's effects, and the room's background work.

``Room`` (sans-I/O) returns effects; ``Interpreter.run`` carries them out in order: messages to
the players in the room (through the ``Delivery``), move-log appends and results to the
store before anything that acknowledges them, who is in a lobby, stuck searches. It also
keeps each room's timer aimed at its next deadline, runs the stuck searches in slices and
flushes the standings a few times a second. The move path (``answer_move``) does what
``run`` does for a move's effects without a task: a move is answered from its log commit's
callback.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import logging
import time
import weakref
from collections.abc import Callable
from datetime import datetime
from typing import Any, Protocol

from . import protocol as p
from .observe import Metrics, event
from .room import CheckStuck, Effect, LogMoves, Played, RecordStart, Room, SaveEntrants, SaveResults, Send, Status
from .store import Fenced, RaceStateError, ResultRecord, StorageUnavailable, Store
from .stuck_checks import StuckChecks

log = logging.getLogger("solitaire_race.races")

START_ATTEMPTS = 12  # about 40 s of retries to record a race's start (RecordStart)
# A reply to a request: (player id, request id[, message type]): the first message of that
# type (any, if none) that the room sends the requester echoes the request's id.
Reply = tuple[Any, ...]


class Delivery(Protocol):
    def send(self, player_id: int, message: dict[str, Any] | str) -> None:
        """Send to the player's current connection, if any (a str is already JSON)."""

    def close(self, player_id: int, code: int, reason: str) -> None:
        """Close the player's current connection, if any, with a websocket close code."""


RACE_MOVED_MESSAGE = (
    "another server process runs this race now: "
    "join it again (join_race with its code; watch_race to watch it) to go on"
)
RACE_MOVED_CLOSE = 4003  # the close code of a fenced race's connections: reconnect, join it again
FENCED_CLOSE_DELAY_S = 0.1


class Interpreter:
    def __init__(
        self, *, store: Store, delivery: Delivery, metrics: Metrics, clock: Callable[[], float],
        wall_clock: Callable[[], datetime], seated: Callable[[Room, int], bool], forget: Callable[[Room], None],
        progress_interval_s: float,
    ) -> None:
        self.store = store
        self.delivery = delivery
        self.clock = clock
        self.wall_clock = wall_clock
        self.seated = seated  # is this player (on their current connection) in this room?
        self.forget = forget  # release a finished room nobody looks at any more
        self.progress_interval_s = progress_interval_s
        # Races whose start is recorded in the store, each with the epoch this process holds
        # it under (Store.claim_race): its writes carry it, so none lands once another
        # process has taken the race over.
        self.epochs: dict[int, int] = {}
        # A cluster's lobbies: the epoch each was created or adopted at. Its start claims the
        # race only from that epoch, so a node that lost the lobby cannot start it.
        self.lobby_epochs: dict[int, int] = {}
        self._fenced: weakref.WeakSet[Room] = weakref.WeakSet()  # rooms already released as fenced
        self._starting: set[int] = set()  # races whose start is being recorded (retried) now
        self._start_tasks: set[asyncio.Task[None]] = set()  # held: the event loop keeps only weak references
        self._timers: dict[str, tuple[float, asyncio.Task[None]]] = {}
        self._stuck_checks: StuckChecks[Room] = StuckChecks()
        self._checker: asyncio.Task[None] | None = None  # runs the stuck checks, while there are any
        self._flusher: asyncio.Task[None] | None = None
        self._move_seconds = metrics.histograms["solitaire_move_seconds"]
        self._races_finished = metrics.counter("solitaire_races_finished_total")

    # --- the interpreter -------------------------------------------------------------
    async def run(self, room: Room, effects: list[Effect], reply: Reply | None = None) -> None:
        """Carry out a room's effects in order, then keep its bookkeeping (its start
        recorded, its timer, its release once finished and unwatched)."""
        for effect in effects:
            if isinstance(effect, Send):
                reply = self.send(room, effect, reply)
            elif isinstance(effect, LogMoves):
                await self._log(room, effect)  # durable before any message below acknowledges them
            elif isinstance(effect, SaveResults):
                await self._save_results(room, effect)
                await self.run(room, room.results_saved())
            elif isinstance(effect, CheckStuck):
                self.check(room, effect)
            elif isinstance(effect, SaveEntrants):
                await self._save_entrants(room, effect)
            elif isinstance(effect, RecordStart):
                await self._record_start(room, effect.player_ids)
        self.schedule(room)
        if room.status is Status.FINISHED and not room.racers:  # everyone left the lobby
            try:
                await self.store.abandon_race(room.race_id, self.lobby_epochs.get(room.race_id))
            except Fenced:
                self.fenced(room)  # another node adopted the lobby: it is that node's to end
                return
        if room.status is Status.FINISHED and not any(r.connected for r in room.racers.values()):
            self.forget(room)

    def send(self, room: Room, effect: Send, reply: Reply | None = None) -> Reply | None:
        """Send a message to those of its recipients who are in the room; the requester's
        copy echoes the request id (``reply``). Returns the reply still to be made."""
        encoded: str | None = None  # encoded once for all its recipients
        for pid in effect.to:
            if not self.seated(room, pid):
                continue
            if reply is not None and pid == reply[0] and (len(reply) < 3 or effect.message.get("type") == reply[2]):
                reply_id, reply = reply[1], None
                if reply_id is not None:
                    self.delivery.send(pid, {**effect.message, "id": reply_id})
                    continue
            if encoded is None:
                encoded = p.encode(effect.message)
            self.delivery.send(pid, encoded)
        return reply

    def answer_move(
        self, room: Room, played: Played, request_id: Any, started: float,
        answered: Callable[[Any, BaseException | None], None],
    ) -> bool:
        """The move path, for a move that did not end the race: its entries appended, then,
        from their commit's callback (no task to wake), its answer sent, its stuck check
        queued and ``answered(request_id, error)``. Returns False if nothing was applied:
        answered at once, with nothing to make durable."""
        logged = played.log
        if logged is None:
            self._answer(room, played, request_id, started)
            return False

        def committed(error: BaseException | None) -> None:
            try:
                if error is None:
                    room.logged(logged)
                    self._answer(room, played, request_id, started)
                else:
                    self._log_failed(room, logged, error)
            finally:  # whatever happened above, the connection's next frame is served
                answered(request_id, error)

        self._append(room, logged, committed)
        return True

    def _answer(self, room: Room, played: Played, request_id: Any, started: float) -> None:
        (racer_id,), message = played.answer.to, played.answer.message  # the racer's alone (Played)
        if self.seated(room, racer_id):
            if request_id is not None:
                message["id"] = request_id  # made for this racer alone: no copy needed
            self.delivery.send(racer_id, message)
        if played.check is not None:
            self.check(room, played.check)
        self.observe_move(started)

    def _log_failed(self, room: Room, effect: LogMoves, error: BaseException) -> None:
        room.log_failed(effect)  # kept for the racer's next append
        if isinstance(error, Fenced):
            self.fenced(room)

    def _append(self, room: Room, effect: LogMoves, committed: Callable[[BaseException | None], None]) -> None:
        """Hand ``effect``'s entries to the store, under the race's epoch; ``committed``
        is told how their commit went."""
        try:
            epoch = self.epochs.get(room.race_id)
            if epoch is None:
                # Its start failed to save (storage fault): a move logged now would belong to
                # a race the database holds as a lobby. Refused until the start is saved.
                if room.race_id not in self._starting:
                    task = asyncio.create_task(self._record_start(room, tuple(room.racers)))
                    self._start_tasks.add(task)
                    task.add_done_callback(self._start_tasks.discard)
                raise StorageUnavailable("the race's start is not saved yet")
            self.store.log_moves_then(room.race_id, effect.player_id, effect.entries, committed, epoch)
        except BaseException:
            room.log_failed(effect)  # not even queued: kept for the racer's next append
            raise

    async def _log(self, room: Room, effect: LogMoves) -> None:
        """Append a move's entries and return once they are durable (the room told), or
        raise (the room keeps them for the racer's next append)."""
        done: asyncio.Future[None] = asyncio.get_running_loop().create_future()

        def committed(error: BaseException | None) -> None:
            if error is None:
                room.logged(effect)
            else:
                self._log_failed(room, effect, error)
            if done.done():
                return
            if error is None:
                done.set_result(None)
            else:
                done.set_exception(error)

        self._append(room, effect, committed)
        await done

    async def _save_entrants(self, room: Room, effect: SaveEntrants) -> None:
        """Who is in the lobby; in a cluster, only while the lobby is this node's (its epoch)."""
        try:
            await self.store.set_race_entries(room.race_id, effect.player_ids, self.lobby_epochs.get(room.race_id))
        except Fenced:
            self.fenced(room)  # another node adopted the lobby: it keeps who is in it
            raise

    async def _record_start(self, room: Room, player_ids: tuple[int, ...]) -> None:
        """Record that the race runs, with whom; retried for a while (a full disk clears
        when the operator frees space). Until it is saved no move of the race is logged."""
        if room.race_id in self.epochs or room.race_id in self._starting:
            return
        self._starting.add(room.race_id)
        try:
            await self._record_start_retried(room, player_ids)
        finally:
            self._starting.discard(room.race_id)

    async def _record_start_retried(self, room: Room, player_ids: tuple[int, ...]) -> None:
        for attempt in range(START_ATTEMPTS):
            try:
                lobby_epoch = self.lobby_epochs.get(room.race_id)
                try:
                    await self.store.mark_race_started(room.race_id, self.wall_clock(), list(player_ids), lobby_epoch)
                except Fenced:
                    raise  # (a RaceStateError too) another node adopted the lobby
                except RaceStateError:
                    pass  # an attempt reported failed had committed: it is running
                epoch = await self.store.claim_race(room.race_id, lobby_epoch)
            except StorageUnavailable as exc:
                event(
                    log, "race_start_not_saved", logging.WARNING,
                    race=room.race_id, attempt=attempt + 1, reason=exc.reason,
                )
                await asyncio.sleep(min(5.0, 0.2 * 2**attempt))
                continue
            except Fenced:
                self.fenced(room)  # another node took the lobby over: it runs the race
                return
            self.lobby_epochs.pop(room.race_id, None)
            self.epochs[room.race_id] = epoch
            event(log, "race_started", race=room.race_id, code=room.code, players=list(player_ids))
            return
        raise StorageUnavailable(f"could not record the start of race {room.code}")

    def observe_move(self, started: float) -> None:
        """A move's answer is sent: from its request read to now."""
        self._move_seconds.observe(time.perf_counter() - started)

    async def _save_results(self, room: Room, effect: SaveResults) -> None:
        # A practice attempt (a past day's deal, hints allowed) or a race against a ghost is
        # never ranked: its race is closed with no result stored, so no board and no profile
        # counts it.
        practice = bool(room.daily and room.daily.get("practice")) or room.ghost is not None
        for result in () if practice else effect.results:  # re-validated by replay before any leaderboard
            room.verify((result,))
            await asyncio.sleep(0)  # a log at a time: 8 long logs would hold up moves for ~20 ms
        finished_at = self.wall_clock()
        records = [] if practice else [
            ResultRecord(
                race_id=room.race_id, player_id=r.player_id, player_name=r.name, outcome=r.outcome,
                rank=r.rank, time_ms=r.time_ms, moves=r.moves, home=r.home, total=r.total,
                move_log=r.move_log, move_times=r.move_times, finished_at=finished_at, held=r.fair_play.held,
                fair_play=json.dumps(dataclasses.asdict(r.fair_play)),  # kept for every result: the review's evidence
            )
            for r in effect.results
        ]
        for r in effect.results:
            if r.fair_play.held and not practice and not room.live_boards:  # unranked: nothing to hold
                event(log, "result_held", logging.WARNING, race=room.race_id, player=r.player_id,
                      reasons=list(r.fair_play.reasons))
        for attempt in range(5):
            try:
                try:
                    await self.store.finish_race(room.race_id, finished_at, records, self.epochs.get(room.race_id))
                except Fenced:
                    raise
                except RaceStateError:
                    # Already finished: an attempt reported failed had in fact committed.
                    stored = await self.store.race(room.race_id)
                    if attempt == 0 or stored is None or stored.status != "finished":
                        raise
                self._races_finished.inc()
                event(log, "race_finished", race=room.race_id, code=room.code,
                      ranking=[(r.player_id, r.outcome, r.time_ms) for r in effect.results])
                return
            except Fenced:
                self.fenced(room)
                raise
            except Exception:
                log.exception("saving results of race %s failed (attempt %d)", room.code, attempt + 1)
                await asyncio.sleep(0.2 * 2**attempt)
        raise RuntimeError(f"could not save the results of race {room.code}")

    # --- timers ----------------------------------------------------------------------
    def schedule(self, room: Room) -> None:
        """Keep one timer task per room, aimed at the room's next deadline."""
        if room in self._fenced:
            return  # released: another node runs it
        deadline = room.deadline()
        current = self._timers.get(room.code)
        if current is not None and current[0] == deadline and not current[1].done():
            return
        if current is not None:
            current[1].cancel()
            del self._timers[room.code]
        if deadline is not None:
            self._timers[room.code] = (deadline, asyncio.create_task(self._timer(room, deadline)))

    async def _timer(self, room: Room, deadline: float) -> None:
        await asyncio.sleep(max(0.0, deadline - self.clock()))
        self._timers.pop(room.code, None)
        try:
            await self.run(room, room.tick(self.clock()))
        except Fenced:
            pass  # its racers are told (``fenced``)
        except Exception:
            log.exception("timer of race %s failed", room.code)

    def fenced(self, room: Room) -> None:
        """Another server process took the race over (its epoch moved on): this one writes
        nothing more of it. Its racers and spectators here are told to join (or watch) it
        again, and the room is released; what the room held that was not written is the new
        owner's to replay. Once per room: the failed writes that find out may be many."""
        if room in self._fenced:
            return
        self._fenced.add(room)
        event(log, "race_fenced", logging.WARNING, race=room.race_id, code=room.code)
        message = p.encode(p.error(p.ErrorCode.RACE_MOVED, RACE_MOVED_MESSAGE))
        told = [player_id for player_id in (*room.racers, *room.spectators) if self.seated(room, player_id)]
        for player_id in told:
            self.delivery.send(player_id, message)
        self.forget(room)
        # Their connections too: this process may be one cut off from the others (paused,
        # or without Redis), so nothing more of theirs should reach it. They reconnect to
        # the site and are brought to the race's new owner. A moment later: the answer to
        # the request that found out (a task's, a loop turn or two away) goes first.
        def close() -> None:
            for player_id in told:
                self.delivery.close(player_id, RACE_MOVED_CLOSE, "race moved to another server node: reconnect")

        asyncio.get_running_loop().call_later(FENCED_CLOSE_DELAY_S, close)

    def cancel(self, room: Room) -> None:
        """The room is released: its timer and its start record go too."""
        self.epochs.pop(room.race_id, None)
        self.lobby_epochs.pop(room.race_id, None)
        timer = self._timers.pop(room.code, None)
        if timer is not None:
            timer[1].cancel()

    # --- background work -------------------------------------------------------------
    def check(self, room: Room, effect: CheckStuck) -> None:
        self._stuck_checks.add(room, room.race_id, effect.player_id, effect.moves, effect.search)
        if self._checker is None or self._checker.done():
            self._checker = asyncio.create_task(self._check_stuck())

    async def _check_stuck(self) -> None:
        # A slice of search (~1 ms), then whatever else is ready: moves are never held up
        # behind a search (stuck_checks.py).
        while self._stuck_checks:
            for room, player_id, moves, outcome in self._stuck_checks.step():
                try:
                    await self.run(room, room.stuck_checked(player_id, moves, outcome))
                except Exception:
                    log.exception("ending a stuck game in race %s failed", room.code)
            await asyncio.sleep(0)

    def start(self, rooms: Callable[[], list[Room]]) -> None:
        """Start flushing the standings of ``rooms()`` (once the event loop runs)."""
        self._flusher = asyncio.create_task(self._flush_progress(rooms))

    async def _flush_progress(self, rooms: Callable[[], list[Room]]) -> None:
        while True:
            await asyncio.sleep(self.progress_interval_s)
            for room in rooms():
                if room.has_pending_progress:
                    try:
                        await self.run(room, room.flush_progress())
                    except Exception:
                        log.exception("flushing progress of race %s failed", room.code)
                    # Moves waiting meanwhile go first: a flush of every room at once would
                    # hold them up for tens of milliseconds with a thousand racers.
                    await asyncio.sleep(0)

    def stop(self) -> None:
        """Stop the timers and the background work; a stuck check left undone is redone
        when the race resumes."""
        for task in (self._flusher, self._checker):
            if task is not None:
                task.cancel()
        for _, task in list(self._timers.values()):
            task.cancel()
        self._timers.clear()
