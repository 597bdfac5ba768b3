"""The terminal client's identities: one name and secret token per server, kept on disk.

The file is ``$XDG_CONFIG_HOME/solitaire-race/client.json`` (``~/.config/...`` when the
variable is not set), readable by its owner only (0600, in a 0700 directory), because a
token is the only thing that proves who a player is (docs/protocol.md, Identity). Per
server (keyed by websocket URL) it holds the player's ``name``, ``token`` and the join code
of the race they were last playing (``race``), so a client that quits or loses its
connection can resume it.
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Any

APP_DIR = "solitaire-race"
FILE_NAME = "client.json"


def config_dir() -> Path:
    base = os.environ.get("XDG_CONFIG_HOME") or ""
    # The XDG spec says to ignore a relative path.
    root = Path(base) if os.path.isabs(base) else Path.home() / ".config"
    return root / APP_DIR


class ClientConfig:
    """Reads and writes ``client.json``; each write replaces the file atomically."""

    def __init__(self, path: Path | None = None) -> None:
        self.path = path or config_dir() / FILE_NAME

    def load(self) -> dict[str, Any]:
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return {"servers": {}}
        except (OSError, ValueError):
            return {"servers": {}}  # unreadable: start afresh rather than refuse to run
        if not isinstance(data, dict) or not isinstance(data.get("servers"), dict):
            return {"servers": {}}
        return data

    def server(self, url: str) -> dict[str, Any]:
        """What is kept for ``url``: possibly ``name``, ``token``, ``race``."""
        entry = self.load()["servers"].get(url)
        return dict(entry) if isinstance(entry, dict) else {}

    def update(self, url: str, **values: Any) -> None:
        """Set (or, with ``None``, remove) values for ``url``."""
        data = self.load()
        entry = data["servers"].setdefault(url, {})
        for key, value in values.items():
            if value is None:
                entry.pop(key, None)
            else:
                entry[key] = value
        self._write(data)

    def _write(self, data: dict[str, Any]) -> None:
        self.path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=".client-", dir=self.path.parent)
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as f:  # mkstemp creates it 0600
                json.dump(data, f, indent=2, sort_keys=True)
                f.write("\n")
            os.replace(tmp, self.path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
