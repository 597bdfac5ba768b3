"""The databases the tests run on: a SQLite file in the test's temporary directory, or a
PostgreSQL database of its own on the local server, made for the test and dropped after it.

PostgreSQL is the one at ``$SOLITAIRE_RACE_TEST_PG`` (default
``postgresql://postgres@127.0.0.1:5432/postgres``: the machine's, trust authentication;
started before the tests run, here and on CI). Each test gets ``solitaire_test_<random>``,
copied from a template migrated once per run (``CREATE DATABASE ... TEMPLATE``: 0.1 s,
where migrating a new database takes 0.3-0.4 s). Dropping one takes PostgreSQL about a
second (a checkpoint), so drops go to a thread of their own while the next tests run; the
run waits for the last of them at its end (``finish``).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import os
import re
import secrets
import sqlite3
import threading
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TypeVar

import asyncpg

T = TypeVar("T")
KINDS = ("sqlite", "postgresql")
ADMIN_URL = os.environ.get("SOLITAIRE_RACE_TEST_PG", "postgresql://postgres@127.0.0.1:5432/postgres")
PREFIX = "solitaire_test_"

_worker = concurrent.futures.ThreadPoolExecutor(max_workers=1, thread_name_prefix="pg-admin")
_dropper = concurrent.futures.ThreadPoolExecutor(max_workers=1, thread_name_prefix="pg-drop")
_drops: list[concurrent.futures.Future[None]] = []
_template: str | None = None
_template_lock = threading.Lock()


def _admin_here(work: Callable[[asyncpg.Connection], Awaitable[T]]) -> T:
    """Run ``work`` on a connection to the server's ``postgres`` database, on a new event
    loop in this thread."""

    async def run() -> T:
        conn = await asyncpg.connect(ADMIN_URL)
        try:
            return await work(conn)
        finally:
            await conn.close()

    return asyncio.run(run())


def _admin(work: Callable[[asyncpg.Connection], Awaitable[T]]) -> T:
    """``_admin_here`` from any thread, whether or not an event loop runs there."""
    try:
        return _worker.submit(_admin_here, work).result()
    except OSError as exc:
        raise RuntimeError(
            f"the tests' PostgreSQL server at {ADMIN_URL} cannot be reached ({exc}): start it (trust "
            "authentication for the postgres user), or name another with $SOLITAIRE_RACE_TEST_PG"
        ) from exc


def sqlalchemy_url(database: str) -> str:
    """The store's URL of a database on the test server (``postgresql+asyncpg://``)."""
    base = ADMIN_URL.rsplit("/", 1)[0].replace("postgresql://", "postgresql+asyncpg://", 1)
    return f"{base}/{database}"


def _dsn(database: str) -> str:
    return ADMIN_URL.rsplit("/", 1)[0] + "/" + database


def _make_template() -> str:
    """A database at the migrations' head that every test database is copied from."""
    global _template
    with _template_lock:
        if _template is None:
            from solitaire_race.store import Store

            name = f"{PREFIX}template_{secrets.token_hex(4)}"
            _admin(lambda conn: conn.execute(f'CREATE DATABASE "{name}"'))

            async def migrate() -> None:
                store = await Store.open(sqlalchemy_url(name))
                await store.close()

            _worker.submit(asyncio.run, migrate()).result()
            _template = name
        return _template


def create_postgresql_database() -> str:
    """A new database at the migrations' head; its name."""
    template = _make_template()
    name = f"{PREFIX}{secrets.token_hex(6)}"
    _admin(lambda conn: conn.execute(f'CREATE DATABASE "{name}" TEMPLATE "{template}"'))
    return name


def create_empty_postgresql_database() -> str:
    """A new database with nothing in it (for the migrations themselves)."""
    name = f"{PREFIX}{secrets.token_hex(6)}"
    _admin(lambda conn: conn.execute(f'CREATE DATABASE "{name}"'))
    return name


def drop_postgresql_database(name: str, wait: bool = False) -> None:
    """Drop ``name`` (its connections too: a test's server may have died holding some)."""
    future = _dropper.submit(_admin_here, lambda conn: conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
    _drops.append(future)
    if wait:
        future.result()


def finish() -> None:
    """Wait for the drops, then drop the template (at the end of the run: conftest's
    ``pytest_sessionfinish``)."""
    global _template
    for future in _drops:
        future.result()
    _drops.clear()
    with _template_lock:
        if _template is not None:
            name, _template = _template, None
            _admin(lambda conn: conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))


class Database:
    """One test's database: its store URL, and plain SQL on it from the side, as another
    program would run it (``?`` parameters on both: made ``$1, $2 ...`` for asyncpg)."""

    def __init__(self, kind: str, url: str, path: Path | None = None, name: str | None = None) -> None:
        self.kind = kind
        self.url = url
        self.path = path  # the SQLite file
        self.name = name  # the PostgreSQL database

    @property
    def is_postgresql(self) -> bool:
        return self.kind == "postgresql"

    def __repr__(self) -> str:
        return f"Database({self.kind}: {self.url})"

    async def query(self, sql: str, *args: Any) -> list[tuple[Any, ...]]:
        if self.path is not None:
            with sqlite3.connect(self.path) as db:
                return db.execute(sql, args).fetchall()
        conn = await asyncpg.connect(_dsn(self.name or ""))
        try:
            return [tuple(row) for row in await conn.fetch(_numbered(sql), *args)]
        finally:
            await conn.close()

    async def execute(self, *statements: str) -> None:
        """Run each statement (no parameters), each committed."""
        if self.path is not None:
            with sqlite3.connect(self.path) as db:
                for sql in statements:
                    db.execute(sql)
            return
        conn = await asyncpg.connect(_dsn(self.name or ""))
        try:
            for sql in statements:
                await conn.execute(sql)
        finally:
            await conn.close()

    async def fail_inserts(self, table: str, name: str, message: str, sqlstate: str = "P0001") -> None:
        """A trigger that makes every insert into ``table`` fail with ``message`` (a real
        failure of the database, not a mock); on PostgreSQL with the error code
        ``sqlstate`` (53100: a full disk, as PostgreSQL reports it)."""
        if self.path is not None:
            raise_it = f"SELECT RAISE(ABORT, '{message}')"
            await self.execute(f"CREATE TRIGGER {name} BEFORE INSERT ON {table} BEGIN {raise_it}; END")
            return
        await self.execute(
            f"CREATE FUNCTION {name}() RETURNS trigger LANGUAGE plpgsql AS "
            f"$$BEGIN RAISE EXCEPTION '{message}' USING ERRCODE = '{sqlstate}'; END$$",
            f"CREATE TRIGGER {name} BEFORE INSERT ON {table} FOR EACH ROW EXECUTE FUNCTION {name}()",
        )

    async def drop_trigger(self, table: str, name: str) -> None:
        if self.path is not None:
            await self.execute(f"DROP TRIGGER {name}")
        else:
            await self.execute(f"DROP TRIGGER {name} ON {table}", f"DROP FUNCTION {name}()")


def _numbered(sql: str) -> str:
    count = iter(range(1, 1000))
    return re.sub(r"\?", lambda _: f"${next(count)}", sql)


@contextmanager
def database(kind: str, tmp_path: Path, *, migrated: bool = True) -> Iterator[Database]:
    """A test's database of ``kind``, dropped afterwards (SQLite's file goes with
    ``tmp_path``). ``migrated``: at the migrations' head (else empty: a new file, or a
    database with no tables)."""
    if kind == "sqlite":
        path = tmp_path / "race.sqlite3"
        yield Database(kind, f"sqlite+aiosqlite:///{path}", path=path)
        return
    if kind != "postgresql":
        raise ValueError(f"unknown database kind {kind!r}")
    name = create_postgresql_database() if migrated else create_empty_postgresql_database()
    try:
        yield Database(kind, sqlalchemy_url(name), name=name)
    finally:
        drop_postgresql_database(name)
