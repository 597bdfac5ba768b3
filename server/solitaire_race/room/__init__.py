"""One race room as a sans-I/O state machine (``room.py``), the effects it returns
(``effects.py``), its racers (``racer.py``) and its results (``results.py``)."""

from .effects import CheckStuck, Effect, LogMoves, Played, RecordStart, SaveEntrants, SaveResults, Send
from .ghost import GHOST_ID, Ghost
from .racer import Racer
from .results import Result
from .room import MAX_MOVES_PER_MESSAGE, Room, RoomError, Status
from .series import BEST_OF, Score, Series

__all__ = [
    "BEST_OF",
    "GHOST_ID",
    "MAX_MOVES_PER_MESSAGE",
    "CheckStuck",
    "Effect",
    "Ghost",
    "LogMoves",
    "Played",
    "Racer",
    "RecordStart",
    "Result",
    "Room",
    "RoomError",
    "SaveEntrants",
    "SaveResults",
    "Score",
    "Send",
    "Series",
    "Status",
]
