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
from types import SimpleNamespace

import pytest

from solitaire_race.cli import main, render_board
from solitaire_race.config import SECRET_ENV
from solitaire_race.engine import all_games, get_game, replay
from solitaire_race.solver import solve

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


def hint_of(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str]:
    """Run ``solitaire-race hint ARGS``: its exit code, and the move it printed (or its sentence)."""
    code = main(["hint", *args])
    out = capsys.readouterr().out.splitlines()
    return code, out[-1] if out else ""


def test_leaderboard_shows_outcome_labels() -> None:
    """A leaderboard row says "out of time" for a timed-out game, as the browser does."""
    entry = SimpleNamespace(rank=1, name="ann", outcome="timeout", time_ms=600_000, moves=12, home=9, total=52)
    page = SimpleNamespace(board="deal", entries=[entry], me=None, page=1, page_size=20, total=1)
    row = render_board(page, "Cruel: deal 1").splitlines()[2]
    assert row == "   1  ann                  out of time  10:00.0    12    9/52"


def test_hint_followed_move_by_move_wins_the_deal(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Every printed move is legal where the log stands, and following them wins: each is the
    next move of a winning line. The output appends to the log as it is (a comment, a move)."""
    number, line = winnable_deal("cruel", b"s")
    log = tmp_path / "moves.txt"
    log.write_text("")
    for played in range(len(line) * 2):  # bounded: a hint that led nowhere would loop
        code = main(["hint", "cruel", str(number), "--moves", str(log), "--secret", "s"])
        out = capsys.readouterr().out
        if code == 1:
            assert out == f"no hint: the game is over (won) after {played} moves\n"
            break
        assert code == 0, out
        comment, _ = out.splitlines()
        after = f"after {played} move{'' if played == 1 else 's'}"
        assert comment == f"# Cruel, deal {number}, {after}: the next move of a winning line"
        with log.open("a") as f:
            f.write(out)
    else:
        raise AssertionError("the hints did not lead to a win")
    assert main(["replay", "cruel", str(number), str(log), "--secret", "s"]) == 0
    assert capsys.readouterr().out.startswith("won: 52/52 cards home")


def test_hint_from_standard_input_is_part_of_a_win(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import io

    game = get_game("perseverance")
    number, line = winnable_deal("perseverance", b"s")
    monkeypatch.setattr("sys.stdin", io.StringIO("\n".join(line[:10]) + "\n"))
    code, move = hint_of(capsys, "perseverance", str(number), "--moves", "-", "--secret", "s")
    assert code == 0
    state, _ = replay(game, game.deal(number, b"s"), [*line[:10], move])  # legal after the log
    assert solve(game, state, node_budget=200_000, shorten_budget=0).won  # and still winnable


def test_hint_errors_and_positions_without_a_hint(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    number, line = winnable_deal("cruel", b"s")
    log = tmp_path / "moves.txt"
    log.write_text(f"{line[0]}\n# a comment\n1>1\n")
    assert main(["hint", "cruel", str(number), "--moves", str(log), "--secret", "s"]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err == "solitaire-race hint: illegal move at line 3 '1>1': a pile cannot be moved onto itself\n"

    # Clock hides its face-down cards: the hint is chosen over layouts of them (docs/solver.md).
    assert main(["hint", "clock", "3", "--secret", "s"]) == 0
    comment, move = capsys.readouterr().out.splitlines()
    assert comment.startswith("# Clock, deal 3, after 0 moves: the first move of a winning line in ")
    assert move == "p"  # Clock's one move before the exchange
    assert hint_of(capsys, "cruel", str(number), "--secret", "s", "--nodes", "10") == (
        1,
        "no hint: no winning line found after 0 moves within 10 nodes"
        " (the position may be lost, or need a bigger --nodes)",
    )
    assert main(["hint", "cruel", str(number), "--moves", str(tmp_path / "missing.txt")]) == 2
    assert "missing.txt" in capsys.readouterr().err
    assert main(["hint", "chess", "1"]) == 2
    assert "unknown game 'chess'" in capsys.readouterr().err


def test_hint_deals_with_the_secret_a_server_database_keeps(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import asyncio

    from solitaire_race.store import Store

    monkeypatch.delenv(SECRET_ENV, raising=False)
    url = f"sqlite+aiosqlite:///{tmp_path / 'race.sqlite3'}"

    async def server_secret() -> bytes:
        store = await Store.open(url)  # what a first `serve` on this database does
        try:
            return await store.deal_secret()
        finally:
            await store.close()

    secret = asyncio.run(server_secret())  # random: a new database makes a new one
    game = get_game("cruel")
    number, line = winnable_deal("cruel", secret)
    # Near the end of a known win, so that the hint is found whatever the random deal: the
    # moves replay only with the database's secret, and the hint must fit that position.
    played = tmp_path / "played.txt"
    played.write_text("\n".join(line[:-8]) + "\n")
    code, move = hint_of(capsys, "cruel", str(number), "--db", url, "--moves", str(played))
    assert code == 0
    state = game.deal(number, secret)
    for text in line[:-8]:
        state = game.apply(state, game.parse_move(text))
    state = game.apply(state, game.parse_move(move))
    assert solve(game, state, node_budget=200_000, shorten_budget=0).won

    missing = tmp_path / "nowhere.sqlite3"
    assert main(["hint", "cruel", "1", "--db", f"sqlite+aiosqlite:///{missing}"]) == 2
    assert capsys.readouterr().err == f"solitaire-race: no database at {missing}\n"
    assert not missing.exists()


@pytest.mark.parametrize(("loop_args", "loop"), [([], "uvloop"), (["--loop", "asyncio"], "asyncio")])
def test_serve_runs_migrates_prints_url_and_stops_on_sigterm(tmp_path: Path, loop_args: list[str], loop: str) -> None:
    db = tmp_path / "nested" / "race.sqlite3"
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    proc = subprocess.Popen(
        [
            sys.executable, "-m", "solitaire_race.cli", "serve",
            "--port", "0", "--db", f"sqlite+aiosqlite:///{db}", *loop_args,
        ],
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
        assert f"event loop {loop})" in lines[-1]
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


def test_event_loops_by_name() -> None:
    """uvloop where it is installed (a dependency everywhere but Windows), asyncio's own on
    request; an unknown name is refused by the library and by the command line."""
    import asyncio

    import uvloop

    from solitaire_race.app import loop_factory

    for name, expected, kind in [
        ("auto", "uvloop", uvloop.Loop),
        ("uvloop", "uvloop", uvloop.Loop),
        ("asyncio", "asyncio", asyncio.BaseEventLoop),
    ]:
        chosen, factory = loop_factory(name)
        loop = factory()
        try:
            assert chosen == expected and isinstance(loop, kind)
            assert not isinstance(loop, uvloop.Loop) or expected == "uvloop"
        finally:
            loop.close()
    with pytest.raises(ValueError, match="unknown event loop 'tokio'"):
        loop_factory("tokio")
    with pytest.raises(SystemExit) as exit_:
        main(["serve", "--loop", "tokio"])
    assert exit_.value.code == 2


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


async def test_async_tests_run_on_the_servers_default_loop() -> None:
    """conftest's loop factories: uvloop, as ``serve`` runs by default (not asyncio's loop
    by mistake: a fallback would go unnoticed otherwise)."""
    import asyncio

    import uvloop

    assert isinstance(asyncio.get_running_loop(), uvloop.Loop)
