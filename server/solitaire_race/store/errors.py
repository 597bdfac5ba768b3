"""The errors the store raises, and which driver failures are storage faults.

Owns every exception the rest of the server may catch from the store, and the one place
that tells a *storage fault* (the database cannot be read or written right now: the disk
is full, an I/O error, another process held the write lock past the busy timeout, a
damaged file) from a bug (a broken constraint, bad SQL). A storage fault is not the
server's mistake and clears when the operator fixes the disk: the service answers it with
the retryable ``storage_unavailable`` and logs one line, never a traceback.
"""

from __future__ import annotations

import contextlib
import sqlite3
from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager

from sqlalchemy.exc import DBAPIError, IntegrityError, SQLAlchemyError
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker


class StoreError(Exception):
    """Base class of every error the store raises on purpose."""


class ConstraintViolation(StoreError):
    """A write broke a unique, foreign-key or check constraint; nothing was written."""


class CodeTaken(ConstraintViolation):
    """``create_race``: another race already has this join code; pick another."""


class NameTaken(ConstraintViolation):
    """``create_player``, ``rename_player``: another player has a name that looks the same
    (the same ``names.name_key``); nothing was written."""


class NotFound(StoreError, LookupError):
    """The player or race named by id does not exist."""


class RaceStateError(StoreError):
    """The race exists but is not in the state this operation needs."""


class StorageUnavailable(StoreError):
    """The database could not be read or written right now (``reason`` says why, in one
    line); nothing of the failed transaction was written. Not a bug: it clears when the
    disk does, and the next write tries again."""

    one_line_log = True  # observe.JsonFormatter: the reason says it all, a traceback nothing more

    def __init__(self, reason: str) -> None:
        super().__init__(f"storage unavailable: {reason}")
        self.reason = reason


class DatabaseUnusable(StoreError):
    """The database file cannot be served (damaged, empty, or another server's): the
    message names the file, what is wrong and what to do, for the operator."""


class DatabaseInUse(DatabaseUnusable):
    """Another ``serve`` process holds the database file's lock."""


# SQLite's primary result codes (the low byte of an extended code) that come from the
# storage, not from the statement: https://www.sqlite.org/rescode.html
_STORAGE_CODES = {
    3: "SQLITE_PERM",
    5: "SQLITE_BUSY",
    6: "SQLITE_LOCKED",
    8: "SQLITE_READONLY",
    10: "SQLITE_IOERR",
    11: "SQLITE_CORRUPT",
    13: "SQLITE_FULL",
    14: "SQLITE_CANTOPEN",
    15: "SQLITE_PROTOCOL",
    22: "SQLITE_NOLFS",
    26: "SQLITE_NOTADB",
}


def storage_fault(error: BaseException) -> str | None:
    """The one-line reason if ``error`` (the driver's, or SQLAlchemy's wrapping it) is a
    storage fault, e.g. "database or disk is full (SQLITE_FULL)"; else None."""
    driver = error.orig if isinstance(error, DBAPIError) else error
    if not isinstance(driver, sqlite3.Error):
        return None
    code = getattr(driver, "sqlite_errorcode", None)
    if code is None or code & 0xFF not in _STORAGE_CODES:
        return None
    name = getattr(driver, "sqlite_errorname", None) or _STORAGE_CODES[code & 0xFF]
    message = str(driver).split("\n", 1)[0] or "error"
    return f"{message} ({name})"


def store_error(error: SQLAlchemyError, what: str) -> StoreError:
    """What the store raises for a database failure while doing ``what``: the cause is
    ``error``, which callers see only as ``__cause__``."""
    reason = storage_fault(error)
    if reason is not None:
        translated: StoreError = StorageUnavailable(f"{what}: {reason}")
    elif isinstance(error, IntegrityError):
        translated = ConstraintViolation(f"{what}: {error.orig}")
    else:
        translated = StoreError(f"{what}: {error}")
    translated.__cause__ = error
    return translated


def translating(sessions: async_sessionmaker[AsyncSession]) -> Callable[[], AbstractAsyncContextManager[AsyncSession]]:
    """``sessions``, for reads: a storage fault inside the block surfaces as
    ``StorageUnavailable``, as it does for writes; any other error as it is."""

    @contextlib.asynccontextmanager
    async def session() -> AsyncIterator[AsyncSession]:
        try:
            async with sessions() as opened:
                yield opened
        except DBAPIError as error:
            reason = storage_fault(error)
            if reason is None:
                raise
            raise StorageUnavailable(f"database read failed: {reason}") from error

    return session
