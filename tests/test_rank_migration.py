"""Migration 0011 on both databases: results that are not wins get cards left * 2^32 +
time as their sort key (the same progress ranks by time), wins keep their time; the
downgrade gives cards left back. (Sync tests: alembic's env.py runs its own event loop.)"""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from alembic import command

from solitaire_race.results import TIME_SPAN, rank_key
from solitaire_race.store.migrate import alembic_config

from . import databases

# (player, outcome, time_ms, moves, home, rank_class, sort_primary as 0010 wrote it)
ROWS = [
    (1, "won", 60_000, 80, 52, 0, 60_000),
    (2, "stuck", 95_000, 49, 47, 1, 5),
    (3, "stuck", 80_000, 49, 47, 1, 5),
    (4, "interrupted", None, 3, 40, 1, 12),
]


@pytest.mark.parametrize("kind", databases.KINDS)
def test_sort_keys_are_recomputed_and_given_back(kind: str, tmp_path: Path) -> None:
    with databases.database(kind, tmp_path, migrated=False) as db:
        config = alembic_config(db.url)
        config.attributes["configure_logger"] = False
        command.upgrade(config, "0010")
        now = 1795000000000000
        asyncio.run(db.execute(
            "INSERT INTO players (id, name, name_key, token_hash, created_at) VALUES "
            + ", ".join(f"({p}, 'p{p}', 'p{p}', 'h{p}', {now})" for p, *_ in ROWS),
            "INSERT INTO races (id, code, game, deal_number, private, status, created_by, time_limit_s, created_at) "
            f"VALUES (1, 'BCDFGH', 'clock', 4, true, 'finished', 1, 600, {now})",
            "INSERT INTO results (race_id, player_id, outcome, rank, time_ms, moves, home, total, move_log, "
            "finished_at, game, deal_number, rank_class, sort_primary) VALUES "
            + ", ".join(
                f"(1, {p}, '{o}', {p}, {'NULL' if t is None else t}, {m}, {h}, 52, '', {now}, 'clock', 4, {c}, {s})"
                for p, o, t, m, h, c, s in ROWS
            ),
        ))

        def keys() -> list[tuple[int, int]]:
            rows = asyncio.run(db.query("SELECT player_id, sort_primary FROM results ORDER BY player_id"))
            return [(int(p), int(s)) for p, s in rows]

        command.upgrade(config, "0011")
        expected = [(p, rank_key(o, t, m, 52 - h)[1]) for p, o, t, m, h, _, _ in ROWS]
        assert keys() == expected
        assert expected[1][1] == 5 * TIME_SPAN + 95_000 and expected[3][1] == 12 * TIME_SPAN + TIME_SPAN - 1
        command.downgrade(config, "0010")
        assert keys() == [(p, s) for p, _, _, _, _, _, s in ROWS]
