"""One race room as a sans-I/O state machine (``room.py``, its status in ``status.py``), the
effects it returns (``effects.py``), its racers (``racer.py``) and its results
(``results.py``); beyond its race (``beyond.py``): its series (``series.py``), rematch and
spectators; the recorded run it may be raced against (``ghost.py``)."""

from .effects import CheckStuck, Effect, LogMoves, Played, RecordStart, SaveEntrants, SaveResults, Send
from .ghost import GHOST_ID, Ghost
from .racer import Racer
from .results import Result
from .room import MAX_MOVES_PER_MESSAGE, MAX_MOVES_PER_RACER, Room
from .series import BEST_OF, Score, Series
from .status import RoomError, Status

__all__ = [
    "BEST_OF",
    "GHOST_ID",
    "MAX_MOVES_PER_MESSAGE",
    "MAX_MOVES_PER_RACER",
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
