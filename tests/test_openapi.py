"""docs/openapi.json is current, valid OpenAPI 3.1, and describes what the API really sends."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from jsonschema import Draft202012Validator
from openapi_spec_validator import validate

from solitaire_race.app import App

from .conftest import Client, http_json

DOCS = Path(__file__).resolve().parents[1] / "docs"
SPEC = json.loads((DOCS / "openapi.json").read_text())


def test_spec_is_generated_from_the_protocol_schema() -> None:
    import importlib.util

    spec = importlib.util.spec_from_file_location("make_openapi", DOCS / "make_openapi.py")
    module = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
    spec.loader.exec_module(module)  # type: ignore[union-attr]
    assert module.build() == SPEC, "docs/openapi.json is stale: run python docs/make_openapi.py"


def test_spec_is_valid_openapi() -> None:
    validate(SPEC)


def check(body: Any, schema: str) -> None:
    root = {"components": SPEC["components"], "$ref": f"#/components/schemas/{schema}"}
    errors = sorted(Draft202012Validator(root).iter_errors(body), key=str)
    assert not errors, f"{schema}: {errors[0].message} at {list(errors[0].absolute_path)}"


async def test_live_responses_match_the_spec(app: App, clients: Any) -> None:
    ann: Client = await clients("ann")
    await ann.request({"type": "start_daily", "game": "clock"})
    await ann.request({"type": "move", "moves": ["p", "p"]})
    await ann.request({"type": "resign"})
    await ann.expect("race_finished")
    me = ann.player["id"]  # type: ignore[index]

    cases = [
        ("/api/games", 200, "GamesBody"),
        (f"/api/daily?me={me}", 200, "DailyChallengesBody"),
        (f"/api/leaderboard/daily/clock?me={me}", 200, "LeaderboardPageBody"),
        ("/api/leaderboard/win_rate/clock?min_games=1", 200, "LeaderboardPageBody"),
        (f"/api/players/{me}", 200, "PlayerProfileBody"),
        ("/api/rules/parallels", 200, "RulesBody"),
        ("/api/rules/nope", 404, "ErrorBody"),
        ("/api/leaderboard/deal/clock", 400, "ErrorBody"),
        ("/api/leaderboard/fastest/nope", 404, "ErrorBody"),
        ("/api/leaderboard/fastest/clock?page=x", 400, "ErrorBody"),
    ]
    for path, status, schema in cases:
        got_status, body = await http_json(app, path)
        assert got_status == status, (path, body)
        check(body, schema)
    daily = (await http_json(app, f"/api/leaderboard/daily/clock?me={me}"))[1]
    assert daily["entries"][0]["name"] == "ann" and daily["me"]["rank"] == 1
