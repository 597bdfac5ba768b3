"""The terminal the client draws on and reads from.

On a real terminal it switches to the alternate screen and to cbreak mode and edits the
input line itself, so that the board can be redrawn whenever the server says something
without disturbing what is being typed (Up/Down recall earlier lines, ``?`` on an empty
line shows the help, Ctrl-D quits); otherwise (input from a pipe) it reads plain lines.
"""

from __future__ import annotations

import asyncio
import codecs
import contextlib
import os
import shutil
import termios
import tty
from collections.abc import Callable
from typing import Any, TextIO


class Terminal:
    """The terminal: draws screens, edits the input line, hands over finished lines."""

    def __init__(self, stdin: TextIO, stdout: TextIO) -> None:
        self.fd = stdin.fileno()
        self.out = stdout
        self.interactive = os.isatty(self.fd) and stdout.isatty()
        self.lines: asyncio.Queue[str] = asyncio.Queue()
        self.buffer = ""
        self.history: list[str] = []
        self._history_pos = 0
        self._decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        self._escape: str | None = None  # an escape sequence being read
        self._saved: list[Any] | None = None
        self._raw_pending = ""  # line mode: text after the last newline
        self.on_help_key: Callable[[], None] = lambda: None
        self.on_redraw_key: Callable[[], None] = lambda: None
        self.prompt = "> "

    # --- lifecycle -------------------------------------------------------------------
    def start(self) -> None:
        loop = asyncio.get_running_loop()
        if self.interactive:
            self._saved = termios.tcgetattr(self.fd)
            tty.setcbreak(self.fd)  # keys one by one, no echo; Ctrl-C still signals
            self.out.write("\x1b[?1049h\x1b[H\x1b[2J")  # the alternate screen
            self.out.flush()
        loop.add_reader(self.fd, self._readable)

    def stop(self) -> None:
        with contextlib.suppress(Exception):
            asyncio.get_running_loop().remove_reader(self.fd)
        if self._saved is not None:
            termios.tcsetattr(self.fd, termios.TCSADRAIN, self._saved)
            self._saved = None
            self.out.write("\x1b[?1049l")  # back to the normal screen
            self.out.flush()

    # --- output ------------------------------------------------------------------------
    def draw(self, lines: list[str]) -> None:
        if self.interactive:
            body = "".join(f"{line}\x1b[K\r\n" for line in lines)
            self.out.write(f"\x1b[H{body}\x1b[J{self.prompt}{self.buffer}")
        else:
            self.out.write("\n".join(lines) + "\n" + self.prompt + "\n")
        self.out.flush()

    def size(self) -> tuple[int, int | None]:
        """Columns and rows to draw for (rows unlimited when not on a terminal)."""
        if not self.interactive:
            return 80, None
        size = shutil.get_terminal_size((80, 24))
        return size.columns, size.lines

    def _redraw_input(self) -> None:
        self.out.write(f"\r\x1b[K{self.prompt}{self.buffer}")
        self.out.flush()

    # --- input -------------------------------------------------------------------------
    def _readable(self) -> None:
        try:
            data = os.read(self.fd, 4096)
        except OSError:
            data = b""
        if not data:
            asyncio.get_running_loop().remove_reader(self.fd)
            self.lines.put_nowait("quit")  # end of input
            return
        text = self._decoder.decode(data)
        if not self.interactive:
            self._raw_pending += text
            *complete, self._raw_pending = self._raw_pending.split("\n")
            for line in complete:
                self.lines.put_nowait(line.rstrip("\r"))
            return
        for ch in text:
            self._key(ch)

    def _key(self, ch: str) -> None:
        if self._escape is not None:
            self._escape += ch
            seq = self._escape
            if len(seq) == 2 and ch not in "[O":
                self._escape = None  # Esc then a key: ignore both
            elif len(seq) > 2 and "@" <= ch <= "~":
                self._escape = None
                self._sequence(seq)
            return
        if ch == "\x1b":
            self._escape = ch
        elif ch in "\r\n":
            line, self.buffer = self.buffer, ""
            if line.strip() and (not self.history or self.history[-1] != line):
                self.history.append(line)
            self._history_pos = len(self.history)
            self._redraw_input()
            self.lines.put_nowait(line)
        elif ch in "\x7f\x08":
            self.buffer = self.buffer[:-1]
            self._redraw_input()
        elif ch == "\x15":  # Ctrl-U
            self.buffer = ""
            self._redraw_input()
        elif ch == "\x17":  # Ctrl-W: the last word
            head, sep, _ = self.buffer.rstrip().rpartition(" ")
            self.buffer = head + sep
            self._redraw_input()
        elif ch == "\x04":  # Ctrl-D on an empty line
            if not self.buffer:
                self.lines.put_nowait("quit")
        elif ch == "\x0c":  # Ctrl-L
            self.on_redraw_key()
        elif ch == "?" and not self.buffer:
            self.on_help_key()
        elif ch.isprintable():
            self.buffer += ch
            self._redraw_input()

    def _sequence(self, seq: str) -> None:
        if seq[-1] in "AB" and self.history:  # Up / Down: earlier lines
            step = -1 if seq[-1] == "A" else 1
            self._history_pos = min(len(self.history), max(0, self._history_pos + step))
            self.buffer = self.history[self._history_pos] if self._history_pos < len(self.history) else ""
            self._redraw_input()
