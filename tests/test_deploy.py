"""The deployment files run the command the README documents."""

from __future__ import annotations

import re
from pathlib import Path

import yaml

from solitaire_race.cli import build_parser

ROOT = Path(__file__).resolve().parents[1]


def test_compose_runs_the_documented_serve_command() -> None:
    readme = (ROOT / "README.md").read_text()
    makefile = (ROOT / "Makefile").read_text()
    assert re.search(r"^make run$", readme, re.M), "README's run command"
    assert re.search(r"^run:.*\n\t\$\(VENV\)/bin/solitaire-race serve\b", makefile, re.M)
    assert "solitaire-race serve" in readme

    compose = yaml.safe_load((ROOT / "docker-compose.yml").read_text())
    server = compose["services"]["server"]
    command = [str(part) for part in server["command"]]
    assert command[:2] == ["solitaire-race", "serve"]
    args = build_parser().parse_args(command[1:])  # only options `serve` really has
    assert args.host == "0.0.0.0" and args.port == 8765

    # The SQLite file is on a named volume, mounted where --db points.
    db_dir = str(Path(args.db.split("///", 1)[1]).parent)
    volume, _, mount = server["volumes"][0].partition(":")
    assert mount == db_dir and volume in compose["volumes"]
    assert server["ports"] == ["8765:8765"]


def test_dockerfile_runs_the_same_command() -> None:
    dockerfile = (ROOT / "Dockerfile").read_text()
    cmd = re.search(r"^CMD (\[.*\])$", dockerfile, re.M)
    assert cmd and cmd.group(1).startswith('["solitaire-race", "serve"')
    for needed in ("migrations", "client", "server", "alembic.ini"):
        assert re.search(rf"^COPY .*\b{re.escape(needed)}\b", dockerfile, re.M), needed
