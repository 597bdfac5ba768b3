"""Text a server sent, made harmless to print on a terminal.

A terminal obeys what it prints: ESC starts a sequence that can clear the screen, move the
cursor, set the window title or, on some terminals, answer back as if typed; a carriage
return or backspace overwrites what is shown; bidirectional controls reorder it;
zero-width characters hide text; a lone surrogate cannot even be encoded and would stop
the client. The server refuses such names (``names.py``), but a client must not rely on
the server it was pointed at: everything a server sends goes through ``safe_message`` as
it arrives (``Connection(transform=...)``), so the terminal client (``tui/``) and the bots
only ever hold and print safe text.

``safe_text`` writes each such character as a visible escape instead, as Python would:
``\\x1b``, ``\\u202e``, ``\\U000e0001``. Every other character is kept, so the result is
the text itself whenever it was harmless; applied twice, it changes nothing more.
"""

from __future__ import annotations

import unicodedata
from typing import Any

# Control (Cc), format (Cf), surrogate (Cs), private-use (Co) and unassigned (Cn) code
# points, and the line and paragraph separators (Zl, Zp).
UNSAFE_CATEGORIES = frozenset({"Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp"})


def _escape(char: str) -> str:
    point = ord(char)
    if point < 0x100:
        return f"\\x{point:02x}"
    return f"\\u{point:04x}" if point < 0x10000 else f"\\U{point:08x}"


def safe_text(text: str) -> str:
    """``text`` with every character that could act on a terminal written as an escape."""
    if text.isprintable():  # the usual case: no control, format or unassigned character
        return text
    return "".join(_escape(c) if unicodedata.category(c) in UNSAFE_CATEGORIES else c for c in text)


def safe_message(value: Any) -> Any:
    """A decoded JSON message with ``safe_text`` applied to every string in it, keys too."""
    if isinstance(value, str):
        return safe_text(value)
    if isinstance(value, dict):
        return {safe_text(k) if isinstance(k, str) else k: safe_message(v) for k, v in value.items()}
    if isinstance(value, list):
        return [safe_message(v) for v in value]
    return value
