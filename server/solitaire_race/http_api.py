"""The JSON HTTP API (``/api/...``): the same data as the websocket protocol, read-only.

Routes map onto ``Queries``, which the websocket requests use too, so the two can never
disagree. Documented in docs/openapi.json.
Returns (status, JSON body); the transport turns that into an HTTP response.
"""

from __future__ import annotations

import logging
import re
from typing import Any
from urllib.parse import parse_qs

from . import protocol as p
from .observe import event
from .queries import Queries
from .results import BOARDS
from .store import StorageUnavailable

_LEADERBOARD = re.compile(rf"^/api/leaderboard/({'|'.join(BOARDS)})/([a-z0-9-]{{1,32}})$")
_PLAYER = re.compile(r"^/api/players/([^/]+)$")
_REPLAY = re.compile(r"^/api/replays/([A-Za-z-]{1,16})$")  # a code as typed: KXPMRT, kxp-mrt
_PAR_LINE = re.compile(r"^/api/replays/par/([a-z0-9-]{1,32})/([0-9]{4}-[0-9]{2}-[0-9]{2})$")
_RULES = re.compile(r"^/api/rules/([a-z0-9-]{1,32})$")
_DIGITS = re.compile(r"[0-9]{1,16}")  # ASCII only: int() would also take " 7", "+7", "1_0" and "٧"
log = logging.getLogger("solitaire_race.http_api")
_STATUS = {p.ErrorCode.NOT_FOUND: 404, p.ErrorCode.UNKNOWN_GAME: 404}


class BadQuery(ValueError):
    pass


def _number(text: str, name: str, lo: int, hi: int) -> int:
    """An integer parameter, from lo to hi (the websocket request's bounds, protocol.py)."""
    if not _DIGITS.fullmatch(text) or not lo <= int(text) <= hi:
        raise BadQuery(f"{name} must be an integer from {lo} to {hi}")
    return int(text)


def _int(query: dict[str, list[str]], name: str, default: int | None, lo: int, hi: int) -> int | None:
    values = query.get(name)
    return _number(values[0], name, lo, hi) if values else default


def _str(query: dict[str, list[str]], name: str) -> str | None:
    values = query.get(name)
    return values[0][:32] if values else None


async def handle(queries: Queries, path: str, query_string: str) -> tuple[int, dict[str, Any]]:
    query = parse_qs(query_string, keep_blank_values=False)
    try:
        me = _int(query, "me", None, 1, p.MAX_SAFE_INT)
        if path == "/api/games":
            return 200, queries.list_games()
        if path == "/api/daily":
            return 200, await queries.daily(_str(query, "date"), me)
        if m := _LEADERBOARD.match(path):
            board, game = m.groups()
            return 200, await queries.leaderboard(
                board=board,
                game=game,
                deal=_int(query, "deal", None, 0, p.MAX_SAFE_INT),
                date_text=_str(query, "date"),
                min_games=_int(query, "min_games", 10, 1, p.MAX_MIN_GAMES) or 10,
                page=_int(query, "page", 1, 1, p.MAX_PAGE) or 1,
                page_size=_int(query, "page_size", 20, 1, p.MAX_PAGE_SIZE) or 20,
                viewer=me,
            )
        if m := _RULES.match(path):
            return 200, queries.rules(m.group(1))
        if m := _PLAYER.match(path):
            return 200, await queries.profile(_number(m.group(1), "the player id", 1, p.MAX_SAFE_INT))
        if m := _PAR_LINE.match(path):  # as a replay; refused until the day is over (nobody is identified)
            return 200, await queries.par_line(m.group(1), m.group(2), None)
        if m := _REPLAY.match(path):  # no identity over HTTP: a daily still being played is refused
            return 200, await queries.replay(m.group(1), None)
        return 404, _error(p.ErrorCode.NOT_FOUND, f"no such API path: {path[:80]}")
    except BadQuery as exc:
        return 400, _error(p.ErrorCode.BAD_REQUEST, str(exc))
    except p.ProtocolError as exc:
        return _STATUS.get(exc.code, 400), _error(exc.code, exc.message)
    except StorageUnavailable as exc:  # a full disk, a damaged page: one line, no traceback
        event(log, "storage_unavailable", logging.WARNING, path=path[:80], reason=exc.reason)
        return 503, _error(p.ErrorCode.STORAGE_UNAVAILABLE, "the database cannot be read right now: try again shortly")


def _error(code: p.ErrorCode, message: str) -> dict[str, Any]:
    return {"error": {"code": code.value, "message": message}}
