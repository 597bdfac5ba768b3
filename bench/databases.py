"""The benchmarks' PostgreSQL databases: ``--db postgresql+asyncpg://user@host/name`` names
one on a server the benchmark may create databases on (through its ``postgres`` database)."""

from __future__ import annotations

import asyncio

from sqlalchemy.engine import make_url


def is_postgresql(url: str | None) -> bool:
    return bool(url) and make_url(url or "").get_backend_name() == "postgresql"


def libpq_url(url: str) -> str:
    """asyncpg's form of a ``postgresql+asyncpg://`` URL."""
    return make_url(url).set(drivername="postgresql").render_as_string(hide_password=False)


async def _admin(url: str, sql: str, *args: object) -> object:
    import asyncpg

    maintenance = make_url(url).set(database="postgres").render_as_string(hide_password=False)
    admin = await asyncpg.connect(libpq_url(maintenance))
    try:
        return await admin.fetchval(sql, *args) if sql.startswith("SELECT") else await admin.execute(sql)
    finally:
        await admin.close()


async def create_new(url: str) -> None:
    """Create the database unless it exists; refuse one that has tables in it."""
    import asyncpg

    name = make_url(url).database
    if not await _admin(url, "SELECT 1 FROM pg_database WHERE datname = $1", name):
        await _admin(url, f'CREATE DATABASE "{name}"')
    conn = await asyncpg.connect(libpq_url(url))
    try:
        if await conn.fetchval("SELECT count(*) FROM pg_tables WHERE schemaname = 'public'"):
            raise SystemExit(f"{name} has tables already: give the benchmark a new or empty database")
    finally:
        await conn.close()


async def drop(url: str) -> None:
    await _admin(url, f'DROP DATABASE IF EXISTS "{make_url(url).database}" WITH (FORCE)')


def recreate(url: str) -> None:
    """A new, empty database under the name (dropped first: the benchmark's own)."""
    asyncio.run(drop(url))
    asyncio.run(create_new(url))
