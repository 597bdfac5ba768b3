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


def test_the_cluster_profile_runs_three_nodes_that_the_proxy_reaches_each_by_its_id() -> None:
    """Every node's command parses as `serve` options; each has its own id, and a public
    address under the proxy's `/node/<id>/`, which nginx routes to that node's port; all
    share the database and Redis the compose file starts (docs/cluster.md)."""
    compose = yaml.safe_load((ROOT / "docker-compose.yml").read_text())
    nginx = (ROOT / "deploy" / "nginx-cluster.conf").read_text()
    services = compose["services"]
    nodes = {name: s for name, s in services.items() if name.startswith("node")}
    assert sorted(nodes) == ["node1", "node2", "node3"]
    for name, service in nodes.items():
        assert service["profiles"] == ["cluster"] and service["depends_on"] == ["postgres", "redis"]
        command = [str(part) for part in service["command"]]
        assert command[:2] == ["solitaire-race", "serve"]
        args = build_parser().parse_args(command[1:])
        assert args.node_id == name and args.host == "0.0.0.0"
        assert args.node_url == f"http://localhost:8080/node/{name}"
        assert re.search(rf"location /node/{name}/ {{ proxy_pass http://{name}/; }}", nginx)
        assert re.search(rf"upstream {name} {{ server {name}:{args.port}; }}", nginx)
        assert re.search(rf"^\s+server {name}:{args.port}\b", nginx, re.M)  # in the shared upstream
        env = service["environment"]
        assert env["SOLITAIRE_RACE_DB"].startswith("postgresql+asyncpg://") and "@postgres:" in env["SOLITAIRE_RACE_DB"]
        assert env["SOLITAIRE_RACE_REDIS"].startswith("redis://redis:")
    proxy = services["proxy"]
    assert "./deploy/nginx-cluster.conf:/etc/nginx/nginx.conf:ro" in proxy["volumes"]
    assert proxy["ports"] == ["8080:8080"] and re.search(r"listen 8080\b", nginx)
