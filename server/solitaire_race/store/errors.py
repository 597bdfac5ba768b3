"""The errors the store raises, and which driver failures are storage faults.

Owns every exception the rest of the server may catch from the store, and the one place
that tells a *storage fault* (the database cannot be read or written right now: the disk
is full, an I/O error, another process held the write lock past the busy timeout, a
damaged file; on PostgreSQL also the server unreachable, shut down or out of connections)
from a bug (a broken constraint, bad SQL). A storage fault is not the
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


class Fenced(RaceStateError):
    """The race was claimed by another owner (its epoch moved on, ``Store.claim_race``):
    this process may no longer write to it. Nothing of the write was stored."""

    one_line_log = True


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


# PostgreSQL's SQLSTATEs (https://www.postgresql.org/docs/current/errcodes-appendix.html)
# that come from the server's state, not from the statement, by class (two characters) or
# code; the name is the condition's, for the one-line reason. Constraint violations
# (class 23: 23505 unique_violation, 23503 foreign_key_violation, 23514 check_violation)
# are not among them: they are ConstraintViolation, the statement's fault.
_PG_STORAGE_CLASSES = {
    "08": "connection_exception",
    "53": "insufficient_resources",
    "58": "system_error",
}
_PG_STORAGE_CODES = {
    "08000": "connection_exception",
    "08003": "connection_does_not_exist",
    "08006": "connection_failure",
    "25006": "read_only_sql_transaction",  # a standby, or default_transaction_read_only
    "53100": "disk_full",
    "53200": "out_of_memory",
    "53300": "too_many_connections",
    "55000": "object_not_in_prerequisite_state",  # a database not accepting connections now (maintenance)
    "55P03": "lock_not_available",  # lock_timeout
    "57014": "query_canceled",  # statement_timeout, or an operator's pg_cancel_backend
    "57P01": "admin_shutdown",  # the server is shutting down, or pg_terminate_backend
    "57P02": "crash_shutdown",
    "57P03": "cannot_connect_now",  # starting up, or in recovery
    "58030": "io_error",
    "XX001": "data_corrupted",
    "XX002": "index_corrupted",
}


def _postgres_fault(driver: BaseException, error: BaseException) -> str | None:
    """``storage_fault`` for asyncpg's errors (raw, or as SQLAlchemy's asyncpg dialect
    adapts them: the same ``sqlstate``) and for the socket's."""
    code = getattr(driver, "sqlstate", None) or getattr(driver.__cause__, "sqlstate", None)
    message = (str(driver).split("\n", 1)[0] or type(driver).__name__).strip()
    if isinstance(code, str):
        name = _PG_STORAGE_CODES.get(code) or _PG_STORAGE_CLASSES.get(code[:2])
        return None if name is None else f"{message} (PostgreSQL {code} {name})"
    cause = driver.__cause__ if driver.__cause__ is not None else driver
    if isinstance(cause, OSError):  # refused, unreachable, timed out (TimeoutError is an OSError)
        return f"cannot reach the PostgreSQL server: {message or type(cause).__name__}"
    lost = isinstance(error, DBAPIError) and error.connection_invalidated
    if lost or "connection is closed" in message or type(cause).__name__ == "ConnectionDoesNotExistError":
        return f"the connection to PostgreSQL was lost: {message}"
    return None


def storage_fault(error: BaseException) -> str | None:
    """The one-line reason if ``error`` (the driver's, or SQLAlchemy's wrapping it) is a
    storage fault, e.g. "database or disk is full (SQLITE_FULL)", or on PostgreSQL
    "could not extend file ...: No space left on device (PostgreSQL 53100 disk_full)";
    else None."""
    driver = error.orig if isinstance(error, DBAPIError) else error
    if not isinstance(driver, sqlite3.Error):
        if driver is None or type(driver).__module__.startswith(("asyncpg", "sqlalchemy.dialects.postgresql")) or (
            isinstance(driver, OSError)
        ):
            return None if driver is None else _postgres_fault(driver, error)
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
        except (DBAPIError, OSError) as error:  # OSError: asyncpg could not connect (refused, timed out)
            reason = storage_fault(error)
            if reason is None:
                raise
            raise StorageUnavailable(f"database read failed: {reason}") from error

    return session
