"""Daily challenges, the asyncio part: choosing each day's deals ahead of time and storing them.

A game's challenge on a day is the first candidate deal the solver proves winnable, with
its par (``solver.choose_daily``). Choosing costs from milliseconds to a minute of CPU per
game, so it runs in a worker process at low priority, one at a time, and ``PLAN_AHEAD_DAYS``
ahead: the planner keeps today's challenges and those of the next two days stored,
looking again after each UTC midnight. At 00:00 UTC the new day's challenges have been in
the database for a day at least, so a day whose candidates take long cannot delay them;
announcing them costs one read.

A deal the solver did not prove winnable is never published: when no candidate is proved
(``NoProvenDeal``) or the worker fails, the day's challenge stays unprepared, the failure
is logged once, and the planner tries again ``RETRY_S`` later; meanwhile asking for it
raises ``DailyNotReady`` at once. Each choice is logged (``daily_chosen``, with the
candidates it took) and the candidates of each game's latest day are a gauge in
``/metrics`` (``solitaire_daily_candidates``).

The first insert of a (game, day) wins, so processes sharing a database agree even if their
budgets differ. In a cluster only one node chooses (``lead``: it holds the planner's
lease); the others wait for its choice in the database, and one of them takes the lease
over if that node dies. With no solver (``daily_solver_nodes = 0``: tests, or a machine that cannot
spare the CPU) a day's deal is its first candidate and has no par.
"""

from __future__ import annotations

import asyncio
import json
import logging
import sys
import time
from collections.abc import Awaitable, Callable, Sequence
from datetime import UTC, date, datetime, timedelta

from .daily import daily_deal_number, utc_day
from .observe import Metrics, event
from .solver.daily import NO_PROVEN_DEAL, DailyChoice, NoProvenDeal
from .store import DailyChallengeRecord, Store

log = logging.getLogger("solitaire_race.daily")

Chooser = Callable[[str, date], Awaitable[DailyChoice]]


class WorkerKilled(RuntimeError):
    """The solver worker was killed by a signal (the server is stopping): choose again at
    the next start rather than settle the day on an unproven deal."""


class DailyNotReady(RuntimeError):
    """The day's challenge could not be prepared (yet): it is tried again later."""


def not_ready(game: str, day: date) -> DailyNotReady:
    return DailyNotReady(f"the {game} challenge of {day} is not ready yet: try again later")


RECHECK_S = 600.0  # the planner looks again at least this often (wall clocks can jump)
RETRY_S = 600.0  # a (game, day) whose choosing failed is not tried again sooner
PLAN_AHEAD_DAYS = 2  # days after today whose challenges are kept chosen and stored
FOLLOW_S = 1.0  # a node that does not lead looks this often for the leader's choice
FOLLOW_LIMIT_S = 120.0  # and chooses itself after this long (no leader: Redis is away)


def first_candidate(secret: bytes) -> Chooser:
    """No solver: the day's first candidate deal, without a par."""

    async def choose(game: str, day: date) -> DailyChoice:
        return DailyChoice(daily_deal_number(secret, game, day), None, 1)

    return choose


def solver_process(secret: bytes, nodes: int) -> Chooser:
    """The solver in a worker process (``python -m solitaire_race.solver.daily``), one at a
    time: a search holds the GIL for seconds, which the event loop cannot spare."""
    one_at_a_time = asyncio.Semaphore(1)

    async def choose(game: str, day: date) -> DailyChoice:
        request = json.dumps({"game": game, "secret": secret.hex(), "day": day.isoformat(), "nodes": nodes}).encode()
        async with one_at_a_time:
            worker = await asyncio.create_subprocess_exec(
                sys.executable, "-m", "solitaire_race.solver.daily",
                stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
                start_new_session=True,  # a Ctrl-C meant for the server is not the worker's: close() ends it
            )
            try:
                out, err = await worker.communicate(request)
            finally:
                if worker.returncode is None:  # cancelled (the server stops): do not leave it running
                    worker.kill()
                    await worker.wait()
        if worker.returncode is not None and worker.returncode < 0:
            raise WorkerKilled(f"daily solver for {game} {day} killed by signal {-worker.returncode}")
        if worker.returncode == NO_PROVEN_DEAL:
            raise NoProvenDeal(err.decode().strip()[-500:])
        if worker.returncode != 0:
            raise RuntimeError(f"daily solver for {game} {day} exited with {worker.returncode}: {err.decode()[-500:]}")
        answer = json.loads(out)
        line = answer.get("line")
        return DailyChoice(
            int(answer["deal"]), answer["par"], int(answer["candidates"]), tuple(line) if line is not None else None,
            answer.get("par_method"),
        )

    return choose


class DailyPlanner:
    """Knows each day's challenges: stored ones, or chosen now (once, however many ask)."""

    def __init__(
        self, store: Store, games: Sequence[str], choose: Chooser, wall_clock: Callable[[], datetime],
        lead: Callable[[], Awaitable[bool]] | None = None, metrics: Metrics | None = None,
    ) -> None:
        self.store = store
        self.lead = lead  # in a cluster: whether this node is (or now becomes) the one that chooses
        self.games = list(games)
        self.choose = choose
        self.wall_clock = wall_clock
        self.chosen = 0  # challenges this process chose and stored
        self.candidates: dict[str, tuple[date, int]] = {}  # game -> its latest day chosen here, candidates tried
        self._jobs: dict[tuple[str, date], asyncio.Task[DailyChallengeRecord]] = {}
        self._failed: dict[tuple[str, date], float] = {}  # when choosing failed (time.monotonic)
        self._task: asyncio.Task[None] | None = None
        self._closed = False  # close(): no new choice is started (a request still waiting would)
        if metrics is not None:
            metrics.gauge(
                "solitaire_daily_candidates",
                "Candidate deals tried to find the latest day's proven deal, by game (this process's choices).",
                lambda: [({"game": g}, n) for g, (_, n) in sorted(self.candidates.items())],
            )

    async def challenge(self, game: str, day: date) -> DailyChallengeRecord:
        """``game``'s challenge on ``day``, waiting for it to be chosen if need be."""
        found = await self.store.find_daily_challenge(game, day.isoformat())
        if found is not None:
            return found
        key = (game, day)
        job = self._jobs.get(key)
        if job is None:
            if self._closed:  # the server is stopping: its next start chooses
                raise not_ready(game, day)
            failed = self._failed.get(key)
            if failed is not None and time.monotonic() - failed < RETRY_S:
                raise not_ready(game, day)
            job = self._jobs[key] = asyncio.create_task(self._choose_and_store(game, day))
            job.add_done_callback(lambda _: self._jobs.pop(key, None))
        # One caller giving up (a closed connection) must not cancel the others' wait.
        return await asyncio.shield(job)

    async def ready(self, games: Sequence[str], day: date, wait_s: float) -> dict[str, DailyChallengeRecord | None]:
        """The challenges of ``games`` on ``day`` that are chosen within ``wait_s``; None for
        the ones still being prepared (they go on being prepared)."""
        asks = {g: asyncio.ensure_future(self.challenge(g, day)) for g in games}
        await asyncio.wait(asks.values(), timeout=wait_s)
        out: dict[str, DailyChallengeRecord | None] = {}
        for game, ask in asks.items():
            if ask.done() and not ask.cancelled() and ask.exception() is None:
                out[game] = ask.result()
            elif ask.done():  # failed (logged where) or stopped: tried again at the next ask
                out[game] = None
            else:
                ask.cancel()  # only this wait: the shielded job goes on
                out[game] = None
        return out

    async def _choose_and_store(self, game: str, day: date) -> DailyChallengeRecord:
        key = (game, day)
        found = await self.store.find_daily_challenge(game, day.isoformat())
        waited = 0.0
        # Another node chooses: its choice lands in the database. Not forever: if no node
        # leads (Redis is away), this one chooses too; the first insert wins.
        while found is None and self.lead is not None and waited < FOLLOW_LIMIT_S and not await self.lead():
            await asyncio.sleep(FOLLOW_S)
            waited += FOLLOW_S
            found = await self.store.find_daily_challenge(game, day.isoformat())
        if found is not None:  # stored between the caller's look and this job's start
            return found
        try:
            choice = await self.choose(game, day)
        except WorkerKilled:
            raise
        except Exception as exc:
            self._failed[key] = time.monotonic()
            if isinstance(exc, NoProvenDeal):  # measured to be next to impossible: said, not a crash
                log.error("no proven %s deal for %s: %s; trying again later", game, day, exc)
            else:
                log.exception("choosing the %s challenge of %s failed; trying again later", game, day)
            raise not_ready(game, day) from exc
        self._failed.pop(key, None)
        record = await self.store.daily_challenge(
            game, day.isoformat(), choice.deal, self.wall_clock(), par=choice.par, par_line=choice.line
        )
        self.chosen += 1
        latest = self.candidates.get(game)
        if latest is None or latest[0] <= day:
            self.candidates[game] = (day, choice.candidates)
        event(
            log, "daily_chosen", game=game, day=day.isoformat(), deal=record.deal_number, par=record.par,
            candidates=choice.candidates, par_method=choice.par_method,
        )
        return record

    def start(self) -> None:
        """Prepare the challenges of today and the days ahead now, and again after each midnight."""
        self._task = asyncio.create_task(self._run())

    async def prepare(self, today: date) -> None:
        """Make sure the challenges of today and ``PLAN_AHEAD_DAYS`` after it are stored,
        the nearest day first."""
        self._failed = {key: at for key, at in self._failed.items() if key[1] >= today}  # past days: done
        for ahead in range(PLAN_AHEAD_DAYS + 1):
            day = today + timedelta(days=ahead)
            for game in self.games:
                try:
                    await self.challenge(game, day)
                except DailyNotReady:
                    pass  # logged where it failed; tried again at the next look
                except Exception:  # a killed worker (not by us), the store: the next look tries again
                    log.exception("preparing the %s challenge of %s failed; trying again later", game, day)

    async def _run(self) -> None:
        while True:
            if self.lead is not None and not await self.lead():
                await asyncio.sleep(FOLLOW_S)
                continue
            now = self.wall_clock()
            await self.prepare(utc_day(now))
            now = self.wall_clock().astimezone(UTC)
            midnight = datetime.combine(now.date() + timedelta(days=1), datetime.min.time(), tzinfo=UTC)
            await asyncio.sleep(min(RECHECK_S, max(1.0, (midnight - now).total_seconds() + 1)))

    async def close(self) -> None:
        self._closed = True
        tasks = [t for t in (self._task, *self._jobs.values()) if t is not None]
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
