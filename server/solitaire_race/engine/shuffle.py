"""The keyed shuffle that turns (game, deal number, server secret) into a card order.

Defined entirely here and in docs/shuffle.md so that any implementation in any language
reproduces it: HMAC-SHA256 as a byte stream, unbiased integers by rejection sampling, and
a Fisher–Yates shuffle. Nothing depends on Python's ``random`` module, whose algorithms are
not promised to stay the same across versions.
"""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Sequence
from typing import TypeVar

T = TypeVar("T")

SCHEME = "solitaire-race/deal/v1"
MAX_DEAL_NUMBER = 2**53 - 1  # safe as a JSON number in every client


class ByteStream:
    """HMAC-SHA256(secret, label || "/" || counter) blocks, read as a stream of uint64s."""

    __slots__ = ("_buffer", "_counter", "_label", "_secret")

    def __init__(self, secret: bytes, label: str) -> None:
        self._secret = secret
        self._label = label.encode("utf-8")
        self._counter = 0
        self._buffer = b""

    def _next_u64(self) -> int:
        if len(self._buffer) < 8:
            block = hmac.new(
                self._secret, self._label + b"/" + self._counter.to_bytes(8, "big"), hashlib.sha256
            ).digest()
            self._counter += 1
            self._buffer += block
        value = int.from_bytes(self._buffer[:8], "big")
        self._buffer = self._buffer[8:]
        return value

    def below(self, n: int) -> int:
        """A uniform integer in [0, n), without modulo bias."""
        if n <= 0:
            raise ValueError("n must be positive")
        limit = (1 << 64) - ((1 << 64) % n)
        while True:
            x = self._next_u64()
            if x < limit:
                return x % n


def deal_label(game_id: str, deal_number: int) -> str:
    return f"{SCHEME}/{game_id}/{deal_number}"


def keyed_shuffle(items: Sequence[T], secret: bytes, label: str) -> list[T]:
    """Fisher–Yates from the last position down, j drawn uniformly from [0, i]."""
    out = list(items)
    stream = ByteStream(secret, label)
    for i in range(len(out) - 1, 0, -1):
        j = stream.below(i + 1)
        out[i], out[j] = out[j], out[i]
    return out


def check_deal_number(deal_number: int) -> int:
    if isinstance(deal_number, bool) or not isinstance(deal_number, int):
        raise ValueError(f"deal number must be an integer, not {deal_number!r}")
    if not 0 <= deal_number <= MAX_DEAL_NUMBER:
        raise ValueError(f"deal number must be between 0 and {MAX_DEAL_NUMBER}")
    return deal_number
