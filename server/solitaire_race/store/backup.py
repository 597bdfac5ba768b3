"""Online backup of a SQLite database: a consistent copy taken while the server runs.

SQLite's backup API copies the database page by page under its own locking, so the copy
is a valid snapshot even with WAL and a live writer; copying the file with ``cp`` is not.
A PostgreSQL database is backed up with PostgreSQL's own ``pg_dump`` (a consistent
snapshot too, taken beside the running server): ``backup`` says so, with the command.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

from sqlalchemy.engine import make_url


class UsePgDump(ValueError):
    """``backup`` of a PostgreSQL database: the message gives the pg_dump command."""


def pg_dump_advice(url: str) -> str:
    parsed = make_url(url)
    libpq = parsed.set(drivername="postgresql")._replace(password=None).render_as_string(hide_password=False)
    password = " (its password from PGPASSWORD or ~/.pgpass)" if parsed.password else ""
    return (
        f"{parsed.render_as_string(hide_password=True)} is a PostgreSQL database: back it up with PostgreSQL's "
        f"pg_dump, which takes a consistent snapshot while the server runs, e.g.\n"
        f"  pg_dump --format=custom --file=DEST.dump '{libpq}'{password}\n"
        "and restore it into an empty database with pg_restore (docs/operations.md, \"Backups\"). "
        "solitaire-race backup copies SQLite database files."
    )


def sqlite_path(url: str) -> Path:
    parsed = make_url(url)
    if parsed.get_backend_name() == "postgresql":
        raise UsePgDump(pg_dump_advice(url))
    if parsed.get_backend_name() != "sqlite" or not parsed.database or parsed.database == ":memory:":
        raise ValueError(f"online backup needs a SQLite file database, not {url!r}")
    return Path(parsed.database)


def backup(url: str, destination: Path, pages_per_step: int = 1024) -> int:
    """Copy the database at ``url`` to ``destination`` (which must not exist); return its
    size in bytes. Steps of ``pages_per_step`` pages let the server write in between."""
    source_path = sqlite_path(url)
    if not source_path.exists():
        raise FileNotFoundError(f"no database at {source_path}")
    if destination.exists():
        raise FileExistsError(f"{destination} exists: choose a new file")
    destination.parent.mkdir(parents=True, exist_ok=True)
    source = sqlite3.connect(f"file:{source_path}?mode=ro", uri=True)
    target = sqlite3.connect(destination)
    try:
        source.backup(target, pages=pages_per_step)
        ok = target.execute("PRAGMA integrity_check").fetchone()[0]
        if ok != "ok":
            raise RuntimeError(f"the copy failed its integrity check: {ok}")
    finally:
        target.close()
        source.close()
    return destination.stat().st_size
