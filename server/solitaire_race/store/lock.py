"""One server process per database: the lock a serving process holds on it (a SQLite
file's below; a PostgreSQL database's, ``PostgresServerLock``, at the end).

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
import socket
import sys
from pathlib import Path
from typing import Any

from .errors import DatabaseInUse

if sys.platform != "win32":  # Windows: no flock
    import fcntl

log = logging.getLogger("solitaire_race.store")


def lock_path(database: Path) -> Path:
    return database.with_name(database.name + "-server.lock")


class ServerLock:
    """The held lock; ``release()`` (or the process's end) lets the next server start."""

    def __init__(self, path: Path, fd: int | None) -> None:
        self.path = path
        self._fd = fd

    @classmethod
    def acquire(cls, database: Path) -> ServerLock:
        """Lock ``database`` for this process, or raise ``DatabaseInUse`` at once (never
        wait: the other server may run for weeks)."""
        path = lock_path(database)
        if sys.platform == "win32":
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


# --- PostgreSQL -----------------------------------------------------------------------

# pg_try_advisory_lock(int, int)'s two keys: "solitaire-race", "serve" (in pg_locks: classid,
# objid, and objsubid 2 for the two-key form). Advisory locks belong to one database, so
# servers of other databases on the same PostgreSQL server do not meet this one.
PG_LOCK_KEYS = (0x736F6C69, 1)


class PostgresServerLock:
    """One server process per PostgreSQL database, unless it runs as a node of a cluster
    (``serve --redis``: leases and fencing keep the nodes apart): a session-level
    advisory lock (``pg_try_advisory_lock``) held on a connection of its own for the
    server's life. PostgreSQL releases it when that session ends, however it ends:
    ``release()``, the process's exit, SIGKILL or a crash (the connection drops), so
    a stale lock never outlives its server. The connection's ``application_name``
    names the process, for the message a second server prints."""

    def __init__(self, engine: Any, conn: Any, database: str) -> None:
        self._engine = engine
        self._conn = conn
        self.database = database

    @classmethod
    async def acquire(cls, url: str) -> PostgresServerLock:
        """Lock the database at ``url`` for this process, or raise ``DatabaseInUse`` at
        once (never wait: the other server may run for weeks)."""
        from sqlalchemy import text
        from sqlalchemy.ext.asyncio import create_async_engine
        from sqlalchemy.pool import NullPool

        from .engines import describe, postgresql_connect_args

        name = f"solitaire-race serve, process {os.getpid()} on {socket.gethostname()}"
        engine = create_async_engine(url, poolclass=NullPool, connect_args=postgresql_connect_args(name[:63]))
        database = describe(url)
        try:
            conn = await engine.connect()
            try:
                keys = {"a": PG_LOCK_KEYS[0], "b": PG_LOCK_KEYS[1]}
                locked = await conn.scalar(text("SELECT pg_try_advisory_lock(:a, :b)"), keys)
                holder = None if locked else await conn.scalar(text(
                    "SELECT a.application_name FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid "
                    "WHERE l.locktype = 'advisory' AND l.granted AND l.classid = :a AND l.objid = :b "
                    "AND l.objsubid = 2 "
                    "AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())"
                ), keys)
                await conn.commit()  # the lock is the session's: it outlives the transaction
            except BaseException:
                await conn.close()
                raise
        except BaseException:
            await engine.dispose()
            raise
        if not locked:
            await conn.close()
            await engine.dispose()
            who = f" ({holder})" if holder else ""
            raise DatabaseInUse(
                f"the PostgreSQL database {database} is in use by another solitaire-race server{who}: "
                "one database serves one `serve` process, unless they all run as nodes of a cluster (--redis).\n"
                "Stop that server first, or give this one another --db. (The lock is PostgreSQL's advisory lock "
                "of that server's session: it is released when that process exits, however it exits.)"
            )
        lock = cls(engine, conn, database)
        lock._watch()
        return lock

    def _watch(self) -> None:
        """Say so in the log if the lock's connection drops while the server runs (the
        PostgreSQL server restarted): the lock went with it."""
        try:
            driver = self._conn.sync_connection.connection.driver_connection
            driver.add_termination_listener(self._lost)
        except Exception:  # no listener: nothing to say, nothing lost
            pass

    def _lost(self, _connection: Any) -> None:
        if self._conn is not None:
            log.warning(
                "lost the connection that held the single-server lock on %s: another `serve` could start on this "
                "database now; restart this server once PostgreSQL is back", self.database,
            )

    async def release(self) -> None:
        conn, self._conn = self._conn, None
        try:
            if conn is not None:
                await conn.close()  # the session ends: PostgreSQL releases its advisory locks
        except Exception:  # a connection already lost has released it too
            pass
        finally:
            await self._engine.dispose()
