"""Checking a SQLite database file before the store opens it.

Owns what counts as a file the server must not start on, and the operator's message for
each: what is wrong with which file, and how to start again. A missing file is fine (a
new database is made, as on a first start). An empty (0-byte) file is refused by every
caller: opening it would silently turn it into a fresh database and hide whatever
emptied it. The server (``thorough``) also reads the whole file with ``PRAGMA
quick_check`` before the migrations write to it: a damaged file then stops the start
with one short message instead of a traceback from deep inside Alembic.

Only the standard ``sqlite3`` module, read-only (``mode=ro``): the check never writes to
the database.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

from .errors import DatabaseUnusable

SQLITE_HEADER = b"SQLite format 3\x00"  # the first 16 bytes of every SQLite 3 database
MAX_PROBLEMS_SHOWN = 3  # lines of quick_check's report in the message


def restore_advice(path: Path) -> str:
    """How to restore ``path`` from a backup (docs/operations.md, "Backups")."""
    return (
        f"To restore your latest backup (made by `solitaire-race backup`): stop the server, move {path} "
        f"(and {path.name}-wal and {path.name}-shm, if there) out of the way, copy the backup to {path}, "
        "and start again. See docs/operations.md, \"Backups\"."
    )


def check_database_file(path: Path, *, thorough: bool) -> None:
    """Raise ``DatabaseUnusable`` with the operator's message if ``path`` holds no usable
    database; return if it does, or if it does not exist. ``thorough``: also read every
    page (``PRAGMA quick_check``: proportional to the file's size)."""
    try:
        size = path.stat().st_size
    except FileNotFoundError:
        return
    if size == 0:
        raise DatabaseUnusable(
            f"the database file {path} is empty (0 bytes): there is no database in it.\n"
            f"To start a new, empty database, delete it (rm {path}) and start again.\n"
            "If it held your races, it was emptied by accident. " + restore_advice(path)
        )
    with path.open("rb") as file:
        header = file.read(len(SQLITE_HEADER))
    if header != SQLITE_HEADER:
        raise DatabaseUnusable(
            f"the database file {path} is not a SQLite database ({size:,} bytes that do not start "
            "with SQLite's header): a wrong --db, or the file was overwritten.\n" + restore_advice(path)
        )
    if thorough:
        problems = _quick_check(path)
        if problems:
            shown = "; ".join(problems[:MAX_PROBLEMS_SHOWN]) + ("; ..." if len(problems) > MAX_PROBLEMS_SHOWN else "")
            raise DatabaseUnusable(
                f"the database file {path} is damaged (PRAGMA quick_check: {shown}).\n" + restore_advice(path)
            )


def _quick_check(path: Path) -> list[str]:
    """What ``PRAGMA quick_check`` finds wrong (nothing: an empty list). Damage bad enough
    that SQLite refuses to read the file comes as its error message."""
    try:
        db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    except sqlite3.Error as exc:
        return [str(exc)]
    try:
        rows = [row[0] for row in db.execute("PRAGMA quick_check")]
    except sqlite3.Error as exc:
        return [str(exc)]
    finally:
        db.close()
    return [] if rows == ["ok"] else rows
