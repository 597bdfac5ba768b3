"""Running the Alembic migrations from Python, and the SQLite care they need.

Owns where alembic.ini and migrations/ are found, the in-process upgrade that the server
runs from inside its event loop (Alembic's "connection sharing with asyncio" recipe), and
the foreign-key handling around a SQLite migration that ``migrations/env.py`` applies.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from alembic import command
from alembic.config import Config
from sqlalchemy import text
from sqlalchemy.engine import URL, Connection
from sqlalchemy.ext.asyncio import AsyncEngine

log = logging.getLogger(__name__)

# server/solitaire_race/store/migrate.py -> parents: store, solitaire_race, server, repo.
REPO_ROOT = Path(__file__).resolve().parents[3]
ALEMBIC_INI = REPO_ROOT / "alembic.ini"
MIGRATIONS_DIR = REPO_ROOT / "migrations"
# pg_advisory_lock's two keys while migrating: "soli" as the serve lock's (lock.py), then 2.
MIGRATION_LOCK = {"a": 0x736F6C69, "b": 2}


def alembic_config(url: str | URL) -> Config:
    """An Alembic Config for ``url`` that works from any working directory.

    Needs the repository checkout (an editable install): migrations/ is not packaged.
    """
    if not ALEMBIC_INI.is_file() or not (MIGRATIONS_DIR / "env.py").is_file():
        raise FileNotFoundError(
            f"alembic.ini and migrations/ not found under {REPO_ROOT}; "
            "the store needs the repository checkout to migrate"
        )
    if isinstance(url, URL):
        url = url.render_as_string(hide_password=False)
    config = Config(str(ALEMBIC_INI))
    config.set_main_option("script_location", str(MIGRATIONS_DIR))
    # Config values go through ConfigParser interpolation, where '%' is special.
    config.set_main_option("sqlalchemy.url", url.replace("%", "%%"))
    return config


def _upgrade(connection: Connection, config: Config, revision: str) -> None:
    config.attributes["connection"] = connection
    command.upgrade(config, revision)


async def upgrade_to_head(engine: AsyncEngine) -> None:
    """Upgrade the database behind ``engine`` to the newest revision, in this event loop.

    ``env.py`` sees ``config.attributes["connection"]`` and migrates on that connection
    instead of starting an event loop of its own. The connection is opened with
    ``connect()``, not ``begin()``, so env.py can switch SQLite foreign keys off before
    its transaction starts.
    """
    config = alembic_config(engine.url)
    async with engine.connect() as connection:
        locked = connection.dialect.name == "postgresql"
        if locked:
            # Nodes of a cluster that start together: one migrates, the others wait for it
            # and then find nothing to do. A session lock, released below (the connection
            # goes back to the pool) or when the session ends.
            await connection.execute(text("SELECT pg_advisory_lock(:a, :b)"), MIGRATION_LOCK)
            await connection.commit()
        try:
            await connection.run_sync(_upgrade, config, "head")
            await connection.commit()
        finally:
            if locked:
                await connection.rollback()
                await connection.execute(text("SELECT pg_advisory_unlock(:a, :b)"), MIGRATION_LOCK)
                await connection.commit()


# --- SQLite care, used by migrations/env.py -------------------------------------------


def _sqlite_foreign_keys(connection: Connection, on: bool) -> bool:
    """Set the foreign_keys PRAGMA; return what it was."""
    # Straight on the DBAPI connection: through SQLAlchemy, the statement would autobegin
    # a transaction, and inside one SQLite silently ignores this PRAGMA.
    cursor = connection.connection.cursor()
    try:
        cursor.execute("PRAGMA foreign_keys")
        row = cursor.fetchone()
        cursor.execute(f"PRAGMA foreign_keys={'ON' if on else 'OFF'}")
    finally:
        cursor.close()
    return bool(row and row[0])


@contextmanager
def sqlite_foreign_keys_off(connection: Connection) -> Iterator[None]:
    """Foreign keys off for the migration, back on after it (SQLite only).

    Batch mode rebuilds a table by copy, drop and rename; with foreign keys enforced, the
    drop would fail or cascade through the tables that refer to it. Alembic's batch
    documentation asks for them to be off while migrating.
    """
    if connection.dialect.name != "sqlite":
        yield
        return
    if connection.in_transaction():
        log.warning(
            "migrating on a connection already in a transaction: cannot switch SQLite "
            "foreign keys off; hand env.py a connection from engine.connect()"
        )
        yield
        return
    was_on = _sqlite_foreign_keys(connection, False)
    try:
        yield
    finally:
        if connection.in_transaction():  # only after an error; success has committed
            connection.rollback()
        _sqlite_foreign_keys(connection, was_on)


def check_sqlite_foreign_keys(connection: Connection) -> None:
    """Fail (and so roll the migration back) if it left rows breaking a foreign key."""
    if connection.dialect.name != "sqlite":
        return
    problems = connection.exec_driver_sql("PRAGMA foreign_key_check").fetchall()
    if problems:
        raise RuntimeError(f"migration left foreign key violations: {problems[:10]}")
