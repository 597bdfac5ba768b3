"""Where races run in a cluster: each on the node holding its lease, adopted when that node dies.

``Placement`` is ``Races.placement`` on a node of a cluster. A race is placed on the node
that creates it (``placed``: the node takes its lease before anyone can join). A request
for a race this node does not run (``find``) is answered with ``race_elsewhere`` and the
URL of the node that runs it: the client reconnects there and asks again (the pattern of
Colyseus' seat reservations; docs/cluster.md says why not relaying frames). A race no
node holds is an orphan: its node died, or stopped. Whoever finds it first, a request for
it or this node's periodic look (``adopt_orphans``, every half lease, adopting what it
saw orphaned twice), takes its lease and resumes it from the database
(``recovery.recover``): the move log replayed, the race clock placed on the stored start,
the epoch raised so that the old owner, if it is only paused, writes nothing more.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Iterator
from typing import Any

from redis.exceptions import RedisError

from .. import protocol as p
from ..observe import event
from ..races import Races
from ..recovery import recover
from ..room import Room, Status
from ..store import OpenRaceRecord, RaceRecord, StorageUnavailable
from .node import Cluster, race_lease

log = logging.getLogger("solitaire_race.cluster")

ELSEWHERE_MESSAGE = "race {code} runs on another server node: reconnect to {url} and ask again"
LOBBY_LIST_S = 1.0  # the public lobby list is read from the database at most this often
MOVING_MESSAGE = "race {code} is moving to another server node (its node stopped): try again in a few seconds"


@contextlib.contextmanager
def redis_reached() -> Iterator[None]:
    """A request that needs the cluster's Redis fails as storage unavailable when it cannot
    be reached: a clear error the client may retry, as for a database that cannot."""
    try:
        yield
    except (RedisError, OSError) as exc:
        raise StorageUnavailable(f"the cluster's Redis cannot be reached: {exc}") from None


class Placement:
    def __init__(self, races: Races, cluster: Cluster) -> None:
        self.races = races
        self.cluster = cluster
        self._adopting: dict[int, asyncio.Task[None]] = {}  # one adoption per race at a time
        self._looker: asyncio.Task[None] | None = None
        self._releases: set[asyncio.Task[None]] = set()
        self._orphans: set[int] = set()  # the races no node held at the last look
        self._sighted: dict[int, float] = {}  # race id -> when a request first found it with no lease
        self._stored_lobbies: tuple[float, list[OpenRaceRecord]] | None = None  # (read at, lobbies)
        cluster.still_ours = self.still_ours

    async def placed(self, race_id: int) -> None:
        with redis_reached():
            held = await self.cluster.hold(race_lease(race_id))
        if not held:  # a new race's id is new: only a broken Redis could say otherwise
            raise StorageUnavailable(f"race {race_id} is held by another node")

    async def unplaced(self, race_id: int) -> None:
        """A race made here and dropped before it opened: its lease goes at once."""
        await self.cluster.release(race_lease(race_id))

    async def held_elsewhere(self, race_id: int) -> bool:
        with redis_reached():
            holder, url = await self.cluster.owner_url(race_lease(race_id))
        return holder is not None and url is not None and holder != self.cluster.node_id

    async def find(self, race: RaceRecord) -> Room:
        room = self.races.rooms.get(race.code)
        if room is not None:
            return room
        name = race_lease(race.id)
        with redis_reached():
            holder, url = await self.cluster.owner_url(name)
            if holder is not None:
                self._sighted.pop(race.id, None)
            elif self._confirmed_orphan(race.id):
                await self._adopt(race.id)
                room = self.races.rooms.get(race.code)
                if room is not None:
                    return room
                holder, url = await self.cluster.owner_url(name)  # another node was faster
                if holder is None:  # adopted and already closed (its games had all ended), or gone
                    raise p.ProtocolError(
                        p.ErrorCode.NO_SUCH_RACE, f"race {race.code} has just finished: join it again"
                    )
        if holder is None or url is None or holder == self.cluster.node_id:
            # Its node stopped renewing (it died; its lease runs out within the time to
            # live), or this node's last run held it: asked again, it will be adopted.
            raise p.ProtocolError(p.ErrorCode.RACE_ELSEWHERE, MOVING_MESSAGE.format(code=race.code),
                                  url=None, race=race.code)
        raise p.ProtocolError(p.ErrorCode.RACE_ELSEWHERE, ELSEWHERE_MESSAGE.format(code=race.code, url=url),
                              url=url, race=race.code)

    def _confirmed_orphan(self, race_id: int) -> bool:
        """Whether the race has been seen with no lease for half a lease or more: after a
        restart of Redis (empty) its owner takes the lease back within a third of one, so
        a race is never moved for that. The first sighting answers "moving"."""
        now = asyncio.get_running_loop().time()
        first = self._sighted.setdefault(race_id, now)
        if len(self._sighted) > 10_000:  # bounded: old sightings are dropped
            self._sighted = {r: t for r, t in self._sighted.items() if now - t < self.cluster.ttl_ms / 1000}
        return now - first >= self.cluster.ttl_ms / 2000 or race_id in self._orphans

    async def still_ours(self, name: str) -> bool:
        """A lease this node found lapsed: still rightly its own if it runs the race and the
        race's epoch in the database is the one it claimed (no node adopted it since)."""
        if not name.startswith("race:"):
            return True  # the daily planner's: no epoch, and choosing twice is harmless
        race_id = int(name.removeprefix("race:"))
        room = next((r for r in self.races.rooms.values() if r.race_id == race_id), None)
        interpreter = self.races.interpreter
        known = interpreter.epochs.get(race_id, interpreter.lobby_epochs.get(race_id))
        if room is None or known is None:
            return False
        record = await self.races.store.race(race_id)
        return record is not None and record.epoch == known

    async def _adopt(self, race_id: int) -> None:
        """Take the lease of a race no node holds and resume it here (once, however many ask)."""
        task = self._adopting.get(race_id)
        if task is None:
            task = self._adopting[race_id] = asyncio.create_task(self._take_over(race_id))
            task.add_done_callback(lambda _: self._adopting.pop(race_id, None))
        await asyncio.shield(task)

    async def _take_over(self, race_id: int) -> None:
        if not await self.cluster.hold(race_lease(race_id)):
            return  # another node was faster
        self._sighted.pop(race_id, None)
        try:
            await recover(self.races, only={race_id})
        except BaseException:
            # Not resumed here (the database failed, or this node stops): let another try.
            await self.cluster.release(race_lease(race_id))
            raise
        room = next((r for r in self.races.rooms.values() if r.race_id == race_id), None)
        event(log, "race_adopted", race=race_id, node=self.cluster.node_id,
              status=room.status.value if room else "closed")
        if room is None:  # closed at once (or gone): nothing here to hold
            await self.cluster.release(race_lease(race_id))

    def forgotten(self, room: Room) -> None:
        task = asyncio.create_task(self.cluster.release(race_lease(room.race_id)))
        self._releases.add(task)
        task.add_done_callback(self._releases.discard)

    async def lobbies(self) -> list[dict[str, Any]]:
        """Every node's public lobbies, from the database (``set_race_entries`` keeps who is
        in them), read at most once a ``LOBBY_LIST_S`` (every lobby page asks); the ones
        here as this node knows them now, with who is ready."""
        now = asyncio.get_running_loop().time()
        if self._stored_lobbies is None or now - self._stored_lobbies[0] >= LOBBY_LIST_S:
            self._stored_lobbies = (now, await self.races.store.open_races())
        rooms = self.races.rooms
        out = [room.summary() for room in rooms.values() if not room.private and room.open]  # this node's, now
        for lobby in self._stored_lobbies[1]:
            race = lobby.race
            if race.code not in rooms and not race.private and race.kind == "race":
                out.append(self.races.stored_summary(race, lobby.players))
        return out

    def lost(self, names: set[str]) -> None:
        """The renewal found these leases taken by another node: this node runs none of
        those races any more (their racers are told ``race_moved``)."""
        for room in list(self.races.rooms.values()):
            if race_lease(room.race_id) in names and room.status is not Status.FINISHED:
                self.races.interpreter.fenced(room)

    def start(self) -> None:
        self._looker = asyncio.create_task(self._look_forever())

    async def _look_forever(self) -> None:
        while True:
            try:
                await self.adopt_orphans()
            except (RedisError, OSError, StorageUnavailable) as exc:
                event(log, "orphan_look_failed", logging.WARNING, reason=str(exc))
            except Exception:
                log.exception("looking for orphaned races failed")
            await asyncio.sleep(self.cluster.ttl_ms / 2000)

    async def adopt_orphans(self) -> list[int]:
        """Adopt every unfinished race no node holds; return their ids."""
        candidates = {
            race_lease(race.id): race.id for race in await self.races.store.unfinished_races()
            if race.code not in self.races.rooms
            # A daily attempt claimed but never started is left as it is (recovery.py).
            and not (race.kind == "daily" and race.status == "open")
        }
        orphans = {candidates[name] for name in await self.cluster.orphans(candidates.keys())}
        # Adopted when seen orphaned twice, half a lease apart: a lease that is missing
        # only because Redis restarted (empty) is back by then, taken again by its holder
        # at its next renewal (every third of a lease), and the race stays where it runs.
        confirmed, self._orphans = orphans & self._orphans, orphans
        for race_id in sorted(confirmed):
            await self._adopt(race_id)
        return sorted(confirmed)

    async def close(self) -> None:
        tasks = [t for t in (self._looker, *self._adopting.values()) if t is not None]
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, *self._releases, return_exceptions=True)
