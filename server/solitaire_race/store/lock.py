"""One server process per SQLite file: the lock a serving process holds on its database.

A starting server treats every race in the file as its own: it deletes the open lobbies and
resumes the running races. A second server on the same file would take over the first
one's races while it still serves them, and the two would write conflicting results. So
``serve`` takes an exclusive ``flock`` on a lock file beside the database
(``<database>-server.lock``) before it reads anything, and holds it until it exits.

Why a file of its own rather than the database: SQLite locks the database with POSIX
(fcntl) locks, and a process that closes *any* descriptor of that file loses all of them;
on NFS, flock is emulated with the same kind of lock and would block SQLite's readers.
A separate file cannot disturb SQLite's locking. Why flock: the kernel releases it when
the process ends, however it ends (SIGKILL, a crash), so a stale lock never outlives its
server; the file itself stays (deleting it would let two processes lock two different
files of the same name). Only ``serve`` locks: ``backup``, ``leaderboard`` and ``hint
--db`` read the database as SQLite allows beside a writer.
"""

from __future__ import annotations

import logging
import os
from pathlib import Path

from .errors import DatabaseInUse

try:
    import fcntl
except ImportError:  # Windows: no flock
    fcntl = None  # type: ignore[assignment]

log = logging.getLogger("solitaire_race.store")


def lock_path(database: Path) -> Path:
    return database.with_name(database.name + "-server.lock")


class ServerLock:
    """The held lock; ``release()`` (or the process's end) lets the next server start."""

    def __init__(self, path: Path, fd: int | None) -> None:
        self.path = path
        self._fd = fd

    @classmethod
    def acquire(cls, database: Path) -> "ServerLock":
        """Lock ``database`` for this process, or raise ``DatabaseInUse`` at once (never
        wait: the other server may run for weeks)."""
        path = lock_path(database)
        if fcntl is None:
            log.warning("no flock on this platform: nothing stops a second server on %s", database)
            return cls(path, None)
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)  # not inherited by child processes (PEP 446)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.pread(fd, 64, 0).decode("ascii", "replace").strip()
            os.close(fd)
            raise DatabaseInUse(
                f"the database file {database} is in use by another solitaire-race server"
                f"{f' (process {holder})' if holder.isdigit() else ''}: one SQLite file serves one `serve` process.\n"
                f"Stop that server first, or give this one another --db. (The lock, {path}, is "
                "released when that process exits, however it exits.)"
            ) from None
        except BaseException:
            os.close(fd)
            raise
        # Who holds it, for the message a second server prints; informative only.
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()}\n".encode("ascii"), 0)
        return cls(path, fd)

    def release(self) -> None:
        if self._fd is not None:
            os.close(self._fd)  # closing the only descriptor releases the flock
            self._fd = None
