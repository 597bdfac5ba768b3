"""Making the database engines, and how every connection is set up (SQLite or PostgreSQL).

Used by ``Store.open`` and by ``migrations/env.py``, so the command line, the migrations
and the server see identically configured connections.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from sqlalchemy import Engine, create_engine, event
from sqlalchemy.engine import URL, Connection, make_url
from sqlalchemy.ext.asyncio import AsyncEngine, create_async_engine
from sqlalchemy.pool import ConnectionPoolEntry, NullPool

BUSY_TIMEOUT_MS = 5_000  # how long a write waits for another process's lock (the writer's too)
PG_CONNECT_TIMEOUT_S = 10  # asyncpg's default is 60 s: a server that cannot be reached says so sooner
APPLICATION_NAME = "solitaire-race"  # pg_stat_activity.application_name of every connection


def sqlite_file(url: URL) -> Path | None:
    """The file behind a SQLite URL, or None for memory databases and other backends."""
    if url.get_backend_name() != "sqlite":
        return None
    database = url.database or ""
    if database in ("", ":memory:") or database.startswith("file:"):
        return None
    return Path(database)


def is_postgresql(url: str | URL) -> bool:
    return make_url(url).get_backend_name() == "postgresql"


def describe(url: str | URL) -> str:
    """The URL for messages and logs: without its password."""
    return make_url(url).render_as_string(hide_password=True)


def database_name(url: str | URL) -> str:
    """The database's name (a cluster's nodes share their Redis keys by it)."""
    parsed = make_url(url)
    return f"{parsed.host or ''}:{parsed.port or ''}/{parsed.database or ''}"


def ensure_sqlite_directory(url: str | URL) -> None:
    """Create the parent directory of a SQLite database file, so connecting can create it."""
    path = sqlite_file(make_url(url))
    if path is not None:
        path.parent.mkdir(parents=True, exist_ok=True)


def _on_sqlite_connect(dbapi_connection: Any, connection_record: ConnectionPoolEntry) -> None:
    # Stop the sqlite3 driver's own (legacy) transaction handling, which skips BEGIN
    # before DDL and SELECT; _on_sqlite_begin emits BEGIN instead, so DDL (migrations)
    # and reads are really transactional. See SQLAlchemy's "Transactions with SQLite and
    # the sqlite3 driver". PRAGMAs then run here in autocommit, outside any transaction,
    # which journal_mode and foreign_keys need.
    dbapi_connection.isolation_level = None
    cursor = dbapi_connection.cursor()
    try:
        cursor.execute("PRAGMA journal_mode=WAL")  # readers don't block the writer
        cursor.execute("PRAGMA foreign_keys=ON")  # off by default in SQLite, per connection
        cursor.execute("PRAGMA synchronous=NORMAL")  # safe with WAL; fsync at checkpoints
        cursor.execute(f"PRAGMA busy_timeout={BUSY_TIMEOUT_MS}")
    finally:
        cursor.close()


def _on_sqlite_begin(connection: Connection) -> None:
    connection.exec_driver_sql("BEGIN")


def make_writer_engine(url: str | URL) -> Engine:
    """The synchronous engine of the one writer (``writer.py``): the sqlite3 driver on
    the same file, set up like every other connection."""
    parsed = make_url(url)
    if parsed.get_backend_name() != "sqlite" or sqlite_file(parsed) is None:
        raise ValueError(f"the store needs a SQLite database file, not {parsed.render_as_string(hide_password=True)!r}")
    # Used on the event loop and, while another process holds the lock, the writer thread:
    # never both at once.
    engine = create_engine(
        parsed.set(drivername="sqlite"), poolclass=NullPool, connect_args={"check_same_thread": False}
    )
    event.listen(engine, "connect", _on_sqlite_connect)
    event.listen(engine, "begin", _on_sqlite_begin)
    return engine


def postgresql_connect_args(application_name: str = APPLICATION_NAME) -> dict[str, Any]:
    """asyncpg's connection arguments for every PostgreSQL connection of the store.

    JIT compilation is off: the store's statements are short (a leaderboard page reads a
    few index ranges), and on a large table the planner's cost estimate can switch JIT on,
    which then spends tens of milliseconds compiling what runs in one."""
    return {
        "timeout": PG_CONNECT_TIMEOUT_S,
        "server_settings": {"application_name": application_name, "jit": "off"},
    }


def make_engine(url: str | URL, **kwargs: Any) -> AsyncEngine:
    """An AsyncEngine for ``url``, with the per-connection SQLite setup when it is SQLite.

    Used by ``Store.open`` and by ``migrations/env.py``, so the command line and the server
    see identically configured connections. ``kwargs`` go to ``create_async_engine``.

    On PostgreSQL (``postgresql+asyncpg://``) reads run at REPEATABLE READ: like a SQLite
    read transaction, a read of several statements sees one snapshot. (The writer's
    connection runs at READ COMMITTED: ``pg_writer.py``.)
    """
    if is_postgresql(url):
        kwargs.setdefault("connect_args", postgresql_connect_args())
        kwargs.setdefault("isolation_level", "REPEATABLE READ")
    engine = create_async_engine(url, **kwargs)
    if engine.dialect.name == "sqlite":
        event.listen(engine.sync_engine, "connect", _on_sqlite_connect)
        event.listen(engine.sync_engine, "begin", _on_sqlite_begin)
    return engine
