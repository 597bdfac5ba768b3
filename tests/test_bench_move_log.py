"""The move-log benchmark runs against the schema the migrations make (a small run; its
figures are not checked: benchmarks print, tests check correctness)."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parent.parent / "bench" / "move_log.py"
spec = importlib.util.spec_from_file_location("bench_move_log", BENCH)
move_log = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
spec.loader.exec_module(move_log)  # type: ignore[union-attr]


def test_both_layouts_take_every_commit(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "figures.json"
    assert move_log.main(["--racers", "16", "--commits", "5", "--batches", "1,3", "--json", str(out)]) == 0
    figures = json.loads(out.read_text())
    assert [(f["batch"], f["layout"]) for f in figures] == [
        (1, "clustered"), (1, "journal"), (3, "clustered"), (3, "journal")
    ]
    assert all(f["wal_kib_per_commit"] > 0 and f["us_per_row"] > 0 for f in figures)
    assert "journal" in capsys.readouterr().out


def test_bad_batches_are_refused_with_a_message(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_:
        move_log.main(["--batches", "1,many"])
    assert exit_.value.code == 2
    assert "--batches takes numbers" in capsys.readouterr().err
