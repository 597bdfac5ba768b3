"""The solitaire-race command: engine subcommands in-process, ``serve`` as a real process."""

from __future__ import annotations

import json
import os
import re
import signal
import sqlite3
import subprocess
import sys
import urllib.request
from pathlib import Path

import pytest

from solitaire_race.cli import main
from solitaire_race.engine import all_games, get_game

from .support import winnable_deal


def test_games_lists_every_game(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["games"]) == 0
    out = capsys.readouterr().out
    for game in all_games().values():
        assert re.search(rf"^{re.escape(game.id)}\s+{re.escape(game.name)}\s", out, re.M)


def test_deal_text_and_json(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["deal", "clock", "7", "--secret", "s", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    game = get_game("clock")
    assert data == game.snapshot(game.deal(7, b"s"))
    assert main(["deal", "clock", "7", "--secret", "s", "--view", "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == game.view(game.deal(7, b"s"))
    assert main(["deal", "perseverance", "7", "--secret", "s"]) == 0
    text = capsys.readouterr().out
    assert text.startswith("Perseverance, deal 7") and "♠" in text and "foundations: A♠ A♥ A♦ A♣" in text


def test_deal_errors(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["deal", "chess", "1"]) == 2
    assert "unknown game 'chess'" in capsys.readouterr().err
    assert main(["deal", "clock", "-5"]) == 2
    assert "deal number" in capsys.readouterr().err


def test_replay_outcomes(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    number, line = winnable_deal("cruel", b"s")
    log = tmp_path / "moves.txt"
    log.write_text("# a winning line\n" + "\n".join(line) + "\n")
    assert main(["replay", "cruel", str(number), str(log), "--secret", "s"]) == 0
    assert capsys.readouterr().out == f"won: 52/52 cards home after {len(line)} moves\n"
    log.write_text("\n".join(line[:3]) + "\n")
    assert main(["replay", "cruel", str(number), str(log), "--secret", "s"]) == 0
    assert capsys.readouterr().out.startswith("in progress: ")
    log.write_text(f"{line[0]}\n\n1>1\n")
    assert main(["replay", "cruel", str(number), str(log), "--secret", "s"]) == 1
    assert capsys.readouterr().out == "illegal move at line 3 '1>1': a pile cannot be moved onto itself\n"


def test_serve_runs_migrates_prints_url_and_stops_on_sigterm(tmp_path: Path) -> None:
    db = tmp_path / "nested" / "race.sqlite3"
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    proc = subprocess.Popen(
        [sys.executable, "-m", "solitaire_race.cli", "serve", "--port", "0", "--db", f"sqlite+aiosqlite:///{db}"],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env,
    )
    try:
        lines = []
        for _ in range(50):  # bounded: log lines may come before the URL
            line = proc.stdout.readline()  # type: ignore[union-attr]
            lines.append(line)
            match = re.search(r"open (http://127\.0\.0\.1:\d+/)", line)
            if match or not line:
                break
        assert match, "".join(lines)
        with urllib.request.urlopen(match.group(1) + "healthz", timeout=5) as r:
            assert r.read() == b"ok\n"
        proc.send_signal(signal.SIGTERM)
        out, _ = proc.communicate(timeout=20)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 0, out
    assert "stopped." in out
    with sqlite3.connect(db) as conn:
        tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
        assert {"players", "races", "results", "alembic_version"} <= tables
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"


async def test_online_backup_while_the_server_runs(tmp_path: Path) -> None:
    import asyncio

    from solitaire_race.app import App

    from .conftest import Client, make_config

    app = await App.start(make_config(tmp_path))
    try:
        ann = await Client.connect(app)
        await ann.hello("ann")
        await ann.request({"type": "start_daily", "game": "cruel"})
        await ann.request({"type": "resign"})
        await ann.expect("race_finished")
        copy = tmp_path / "backups" / "copy.sqlite3"
        code = await asyncio.to_thread(main, ["backup", str(copy), "--db", app.config.db_url])
        assert code == 0
        with sqlite3.connect(copy) as db:
            assert db.execute("SELECT name FROM players").fetchall() == [("ann",)]
            assert db.execute("SELECT outcome FROM results").fetchall() == [("resigned",)]
        assert await asyncio.to_thread(main, ["backup", str(copy), "--db", app.config.db_url]) == 2  # exists
        await ann.close()
    finally:
        await app.stop()
