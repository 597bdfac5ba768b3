"""The wire protocol: typed client requests, their validation, and message encoding.

Every frame is a JSON text frame: an object with a ``type``. Requests may carry an ``id``
(a string or integer) that the direct reply echoes. Errors are ``{"type": "error", "code",
"message"}`` with a stable machine-readable ``code`` (``ErrorCode``). Documented in
docs/protocol.md; the JSON Schema in docs/protocol.schema.json is checked against real
traffic by the tests.

msgspec validates incoming messages into Structs in one pass (~0.5 µs per message,
against ~4 µs for the stdlib, in the design notes the project started from).
"""

from __future__ import annotations

import enum
from typing import Annotated, Any, Literal

import msgspec

from .names import SENT_MAX_LENGTH
from .results import Board

MAX_FRAME_BYTES = 8 * 1024  # larger requests get "too_large"; see also the transport's hard cap
# Every integer a request may carry is bounded, so that none reaches SQLite (64-bit
# integers) or a JavaScript client (exact to 2^53 - 1) out of range. The HTTP API
# (http_api.py) takes the same bounds.
MAX_SAFE_INT = 2**53 - 1  # JavaScript's Number.MAX_SAFE_INTEGER
MAX_PAGE, MAX_PAGE_SIZE, MAX_MIN_GAMES = 1_000_000, 100, 10_000  # leaderboard pages

RequestId = Annotated[str, msgspec.Meta(max_length=64)] | Annotated[int, msgspec.Meta(ge=-(2**53), le=2**53)]
DealNumber = Annotated[int, msgspec.Meta(ge=0, le=MAX_SAFE_INT)]
PlayerId = Annotated[int, msgspec.Meta(ge=1, le=MAX_SAFE_INT)]
# A name as sent; names.check_name gives its stored form (1-32 characters) or a bad_name.
Name = Annotated[str, msgspec.Meta(min_length=1, max_length=SENT_MAX_LENGTH)]
Token = Annotated[str, msgspec.Meta(min_length=1, max_length=128)]
MoveText = Annotated[str, msgspec.Meta(min_length=1, max_length=32)]


class ErrorCode(str, enum.Enum):
    INVALID_JSON = "invalid_json"
    BAD_MESSAGE = "bad_message"
    UNKNOWN_TYPE = "unknown_type"
    TOO_LARGE = "too_large"
    NOT_IDENTIFIED = "not_identified"
    ALREADY_IDENTIFIED = "already_identified"
    BAD_TOKEN = "bad_token"
    NAME_TAKEN = "name_taken"
    BAD_NAME = "bad_name"
    UNKNOWN_GAME = "unknown_game"
    NO_SUCH_RACE = "no_such_race"
    ALREADY_IN_RACE = "already_in_race"
    NOT_IN_RACE = "not_in_race"
    NOT_CREATOR = "not_creator"
    RACE_STARTED = "race_started"
    ROOM_FULL = "room_full"
    RACE_NOT_RUNNING = "race_not_running"
    GAME_OVER = "game_over"
    ILLEGAL_MOVE = "illegal_move"
    BAD_NOTATION = "bad_notation"
    REPLACED = "replaced"
    BAD_REQUEST = "bad_request"
    RATE_LIMITED = "rate_limited"
    TOO_MANY_ROOMS = "too_many_rooms"
    NOT_ALLOWED = "not_allowed"
    NOT_FOUND = "not_found"
    INTERNAL_ERROR = "internal_error"
    STORAGE_UNAVAILABLE = "storage_unavailable"  # retryable: the database cannot be written now
    RACE_MOVED = "race_moved"  # another server process took the race over: join it again
    RACE_ELSEWHERE = "race_elsewhere"  # the race runs on another node: reconnect to its url, ask again


class _Request(msgspec.Struct, tag_field="type", forbid_unknown_fields=True, frozen=True, kw_only=True):
    id: RequestId | None = None


class Hello(_Request, tag="hello", frozen=True):
    """Identify: a new player gives a name; a returning one presents its token."""

    name: Name | None = None
    token: Token | None = None


class ListGames(_Request, tag="list_games", frozen=True):
    pass


class ListRaces(_Request, tag="list_races", frozen=True):
    """Public races that are still open for joining."""


class CreateRace(_Request, tag="create_race", frozen=True):
    game: Annotated[str, msgspec.Meta(max_length=32)]
    deal: DealNumber | None = None  # None: random
    private: bool = True
    time_limit_s: Annotated[int, msgspec.Meta(ge=30, le=4 * 3600)] | None = None
    best_of: Literal[3, 5, 7] | None = None  # a series of that many races (None: an open series)
    live_boards: bool = False  # spectators see every board live; its results are unranked


class JoinRace(_Request, tag="join_race", frozen=True):
    code: Annotated[str, msgspec.Meta(min_length=1, max_length=16)]


class LeaveRace(_Request, tag="leave_race", frozen=True):
    pass


class Rematch(_Request, tag="rematch", frozen=True):
    """After a race: race its racers again, on the same deal or a fresh one. The first to
    ask makes the room; whoever asks after joins it (whatever deal they asked for)."""

    same_deal: bool = True
    race: Annotated[str, msgspec.Meta(min_length=1, max_length=16)] | None = None  # the finished race (see rematch)


class Ready(_Request, tag="ready", frozen=True):
    ready: bool = True


class StartRace(_Request, tag="start_race", frozen=True):
    pass


class Move(_Request, tag="move", frozen=True):
    moves: Annotated[list[MoveText], msgspec.Meta(min_length=1, max_length=64)]


class Resign(_Request, tag="resign", frozen=True):
    pass


class Ping(_Request, tag="ping", frozen=True):
    pass


GameId = Annotated[str, msgspec.Meta(max_length=32)]
IsoDate = Annotated[str, msgspec.Meta(pattern=r"^[0-9]{4}-[0-9]{2}-[0-9]{2}$")]  # ASCII digits, as the schema's


class StartDaily(_Request, tag="start_daily", frozen=True):
    """Play today's challenge of a game: ranked the first time, unranked replays after; or,
    with a past ``date``, practise that day's challenge (never ranked, hints allowed)."""

    game: GameId
    date: IsoDate | None = None


class Daily(_Request, tag="daily", frozen=True):
    """The daily challenges of a date (default: today, UTC)."""

    date: IsoDate | None = None


class Leaderboard(_Request, tag="leaderboard", frozen=True):
    board: Board
    game: GameId
    deal: DealNumber | None = None  # board "deal"
    date: IsoDate | None = None  # board "daily"
    min_games: Annotated[int, msgspec.Meta(ge=1, le=MAX_MIN_GAMES)] = 10  # board "win_rate"
    page: Annotated[int, msgspec.Meta(ge=1, le=MAX_PAGE)] = 1
    page_size: Annotated[int, msgspec.Meta(ge=1, le=MAX_PAGE_SIZE)] = 20


class Hint(_Request, tag="hint", frozen=True):
    """The next move of a winning line, in unranked practice only."""


class Profile(_Request, tag="profile", frozen=True):
    player_id: PlayerId | None = None  # default: yourself


class RaceGhost(_Request, tag="race_ghost", frozen=True):
    """Practise a finished race's deal against one of its racers' recorded run."""

    code: Annotated[str, msgspec.Meta(min_length=1, max_length=16)]
    player_id: PlayerId


class ParLine(_Request, tag="par_line", frozen=True):
    """A daily challenge's par line, as a replay (once your ranked attempt is over)."""

    game: GameId
    date: IsoDate
    token: Token | None = None  # who asks, on a connection that did not say hello (a page beside the app)


class WatchRace(_Request, tag="watch_race", frozen=True):
    """Watch a race: its standings live; every board too if the race was made with live boards."""

    code: Annotated[str, msgspec.Meta(min_length=1, max_length=16)]


class Replay(_Request, tag="replay", frozen=True):
    """A finished race, move by move, as each racer saw it."""

    code: Annotated[str, msgspec.Meta(min_length=1, max_length=16)]
    token: Token | None = None  # who asks, on a connection that did not say hello (a page beside the app)


Request = (
    Hello | ListGames | ListRaces | CreateRace | JoinRace | LeaveRace | Ready | StartRace | Move | Resign | Ping
    | StartDaily | Daily | Leaderboard | Profile | Hint | Rematch | Replay | RaceGhost | WatchRace | ParLine
)
# Requests anyone may send before saying hello: browsing and watching need no identity.
ANONYMOUS = (Hello, Ping, ListGames, Daily, Leaderboard, Profile, Replay, WatchRace, ParLine)
REQUEST_TYPES = frozenset(cls.__struct_config__.tag for cls in Request.__args__)


class ProtocolError(Exception):
    """A request that cannot be served; becomes an ``error`` message."""

    def __init__(self, code: ErrorCode, message: str, request_id: Any = None, **fields: Any) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.request_id = request_id
        self.fields = fields  # more of the error message's fields (race_elsewhere: url, race)


_decoder: msgspec.json.Decoder[Request] = msgspec.json.Decoder(Request)
_encoder = msgspec.json.Encoder()


def normalize_code(text: str) -> str:
    """A race code as a player may type it (``kxp-mrt``, ``KXP MRT``) as it is stored: upper
    case, letters and digits only. Every request that names a race reads its code so."""
    return "".join(ch for ch in text.upper() if ch.isalnum())


def decode(frame: str | bytes) -> Request:
    """Parse and validate one frame; raise ``ProtocolError`` with the right code."""
    # A character is at most 4 UTF-8 bytes: only encode when the length leaves a doubt.
    size = len(frame)
    if size > MAX_FRAME_BYTES or (
        isinstance(frame, str) and size * 4 > MAX_FRAME_BYTES and len(frame.encode("utf-8")) > MAX_FRAME_BYTES
    ):
        raise ProtocolError(ErrorCode.TOO_LARGE, f"message larger than {MAX_FRAME_BYTES} bytes")
    if isinstance(frame, bytes):
        raise ProtocolError(ErrorCode.BAD_MESSAGE, "send JSON in text frames, not binary frames")
    try:
        return _decoder.decode(frame)
    except msgspec.ValidationError as exc:
        raise _explain(frame, str(exc)) from None
    except msgspec.DecodeError:
        raise ProtocolError(ErrorCode.INVALID_JSON, "the message is not valid JSON") from None
    except RecursionError:  # e.g. the tag looked for past a field nested thousands deep
        raise _too_deep() from None


def _too_deep() -> ProtocolError:
    # msgspec raises RecursionError past the interpreter's recursion limit (about 1,000
    # levels): no message of the protocol nests more than a few.
    return ProtocolError(ErrorCode.BAD_MESSAGE, "the message is nested too deeply")


def _explain(frame: str, detail: str) -> ProtocolError:
    """Turn msgspec's validation error into the most useful protocol error."""
    try:
        raw = msgspec.json.decode(frame)
    except msgspec.MsgspecError:  # valid JSON that msgspec still cannot hold, e.g. 1e400
        return ProtocolError(ErrorCode.BAD_MESSAGE, f"the message cannot be read: {detail}")
    except RecursionError:  # the typed decoder stopped at the first level; this one goes down
        return _too_deep()
    if not isinstance(raw, dict):
        return ProtocolError(ErrorCode.BAD_MESSAGE, "a message must be a JSON object with a 'type'")
    rid = raw.get("id")
    if not _valid_id(rid):
        rid = None
    kind = raw.get("type")
    if not isinstance(kind, str):
        return ProtocolError(ErrorCode.BAD_MESSAGE, "a message needs a string field 'type'", rid)
    if kind not in REQUEST_TYPES:
        known = ", ".join(sorted(REQUEST_TYPES))
        return ProtocolError(ErrorCode.UNKNOWN_TYPE, f"unknown message type {kind[:40]!r}; known: {known}", rid)
    return ProtocolError(ErrorCode.BAD_MESSAGE, f"bad {kind} message: {detail}", rid)


class _IdOnly(msgspec.Struct):
    id: Any = None


_id_decoder = msgspec.json.Decoder(_IdOnly)


def peek_id(frame: str | bytes) -> Any:
    """The request id of a frame that will not be served (e.g. rate-limited), if readable."""
    if len(frame) > MAX_FRAME_BYTES:
        return None
    try:
        rid = _id_decoder.decode(frame).id
    except (msgspec.MsgspecError, UnicodeDecodeError, RecursionError):
        return None
    return rid if _valid_id(rid) else None


def _valid_id(rid: Any) -> bool:
    """The ids a reply may echo: the same range the decoder accepts."""
    if isinstance(rid, bool):
        return False
    if isinstance(rid, int):
        return -(2**53) <= rid <= 2**53
    return isinstance(rid, str) and len(rid) <= 64


def encode(message: dict[str, Any]) -> str:
    return _encoder.encode(message).decode("utf-8")


def encode_utf8(message: dict[str, Any]) -> bytes:
    """``encode`` as the UTF-8 bytes a text frame carries: no round trip through ``str``."""
    return _encoder.encode(message)


def reply(message: dict[str, Any], request_id: Any) -> dict[str, Any]:
    """``message`` as the reply to a request: with its ``id``, if it had one."""
    return message if request_id is None else {**message, "id": request_id}


def error(code: ErrorCode | str, message: str, request_id: Any = None, **fields: Any) -> dict[str, Any]:
    return reply({"type": "error", "code": ErrorCode(code).value, "message": message, **fields}, request_id)
