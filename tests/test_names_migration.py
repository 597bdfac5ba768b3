"""Migration 0008 on a real SQLite file at 0007 holding names that look alike or that the
rules now refuse, with races, results and moves that refer to the players: upgrade,
downgrade, upgrade again. (Sync tests: alembic's env.py runs its own event loop.)"""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from alembic import command

from solitaire_race.store.migrate import alembic_config

HOSTILE = "\x1b]0;pwned\x07\x1b[2J"
STORED = [
    (1, "ann"),
    (2, "Ann"),  # the same name as 1's, ignoring case: the old check missed it in a race
    (3, "\u0430nn"),  # Cyrillic а
    (4, "bob" + HOSTILE),
    (5, "\u200b"),
    (6, "\uff43arol"),  # full-width c
    (7, "Zoe\u0308"),
    (8, "ZO\u00cb"),
]
AFTER = [
    (1, "ann", "ann"),
    (2, "Ann #2", "ann #2"),
    (3, "\u0430nn #3", "ann #3"),
    (4, "bob]0;pwned[2J", "bob]o;pwned[2j"),
    (5, "player #5", "player #5"),
    (6, "carol", "carol"),
    (7, "Zo\u00eb", "zoe\u0308"),
    (8, "ZO\u00cb #8", "zoe\u0308 #8"),
]


def test_name_keys_are_computed_for_stored_players_and_made_unique(tmp_path: Path) -> None:
    path = tmp_path / "m.sqlite3"
    config = alembic_config(f"sqlite+aiosqlite:///{path}")
    config.attributes["configure_logger"] = False
    command.upgrade(config, "0007")
    with sqlite3.connect(path) as db:
        db.executemany(
            "INSERT INTO players (id, name, token_hash, created_at) VALUES (?, ?, ?, 1795000000000000)",
            [(pid, name, f"{pid:064x}") for pid, name in STORED],
        )
        db.execute(
            "INSERT INTO races"
            " (id, code, game, deal_number, private, status, created_by, time_limit_s, created_at, log_from)"
            " VALUES (1, 'BCDFGH', 'cruel', 1, 1, 'running', 2, 600, 1795000000000000, 1)"
        )
        db.executemany("INSERT INTO race_entries (race_id, player_id) VALUES (1, ?)", [(2,), (4,)])
        db.execute(
            "INSERT INTO move_log (race_id, player_id, seq, kind, text, at_ms) VALUES (1, 4, 0, 'move', '1>f', 5)"
        )

    def table(sql: str) -> list[tuple[object, ...]]:
        with sqlite3.connect(path) as db:
            return db.execute(sql).fetchall()

    def players_sql() -> str:
        return str(table("SELECT sql FROM sqlite_master WHERE type = 'table' AND name = 'players'")[0][0])

    def indexes() -> set[str]:
        rows = table("SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'players'")
        return {str(name) for (name,) in rows}

    def others_intact() -> None:
        with sqlite3.connect(path) as db:
            db.execute("PRAGMA foreign_keys = ON")
            assert db.execute("PRAGMA foreign_key_check").fetchall() == []
            assert db.execute("SELECT created_by FROM races").fetchall() == [(2,)]
            assert db.execute("SELECT player_id FROM race_entries ORDER BY player_id").fetchall() == [(2,), (4,)]
            assert db.execute("SELECT player_id, text FROM move_log").fetchall() == [(4, "1>f")]
            tokens = db.execute("SELECT id, token_hash FROM players ORDER BY id").fetchall()
            assert tokens == [(pid, f"{pid:064x}") for pid, _ in STORED]

    command.upgrade(config, "0008")
    assert table("SELECT id, name, name_key FROM players ORDER BY id") == AFTER
    assert "CONSTRAINT uq_players_name_key UNIQUE (name_key)" in players_sql()
    assert "ix_players_name" not in indexes()
    others_intact()
    with sqlite3.connect(path) as db:
        for key in ("ann", None):  # unique, and never missing
            with pytest.raises(sqlite3.IntegrityError):
                db.execute(
                    "INSERT INTO players (name, name_key, token_hash, created_at) VALUES ('x', ?, 'h', 0)", (key,)
                )

    command.downgrade(config, "0007")
    assert "name_key" not in players_sql()
    assert "ix_players_name" in indexes()
    kept = [(pid, name) for pid, name, _ in AFTER]  # as 0008 made them
    assert table("SELECT id, name FROM players ORDER BY id") == kept
    others_intact()

    command.upgrade(config, "head")  # again: the names are valid and distinct now, so they stay
    assert table("SELECT id, name, name_key FROM players ORDER BY id") == AFTER
    others_intact()


def test_an_empty_database_upgrades_and_downgrades(tmp_path: Path) -> None:
    config = alembic_config(f"sqlite+aiosqlite:///{tmp_path / 'm.sqlite3'}")
    config.attributes["configure_logger"] = False
    command.upgrade(config, "0008")
    command.downgrade(config, "0007")
    command.upgrade(config, "0008")


def test_the_sql_only_mode_says_why_it_cannot_run_0008(tmp_path: Path) -> None:
    config = alembic_config(f"sqlite+aiosqlite:///{tmp_path / 'm.sqlite3'}")
    config.attributes["configure_logger"] = False
    with pytest.raises(RuntimeError, match="not with --sql"):
        command.upgrade(config, "0007:0008", sql=True)
