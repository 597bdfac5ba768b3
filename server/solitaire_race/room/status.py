"""A room's status and its refusals: the vocabulary ``room.py`` and its parts share."""

from __future__ import annotations

import enum


class Status(str, enum.Enum):
    LOBBY = "lobby"
    COUNTDOWN = "countdown"
    RUNNING = "running"
    CLOSING = "closing"  # over; results being saved
    FINISHED = "finished"


class RoomError(Exception):
    """A request the room refuses; ``code`` is the protocol's stable error code."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
