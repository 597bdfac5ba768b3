"""Write docs/openapi.json from docs/protocol.schema.json: ``python docs/make_openapi.py``.

The HTTP API returns the protocol's reply messages without ``type`` and ``id``, so its body
schemas are derived from the protocol schema, never written twice. tests/test_openapi.py
checks that the committed file is what this script writes.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

DOCS = Path(__file__).resolve().parent
# reply messages served over HTTP
BODIES = ("Games", "DailyChallenges", "LeaderboardPage", "PlayerProfile", "ReplayData")


def body(defs: dict[str, Any], name: str) -> dict[str, Any]:
    schema = copy.deepcopy(defs[name])
    for key in ("type", "id"):
        schema["properties"].pop(key, None)
        if key in schema.get("required", []):
            schema["required"].remove(key)
    schema.pop("title", None)
    return schema


def integer(field: dict[str, Any]) -> dict[str, Any]:
    """A query or path parameter's schema from a request field's: an integer, never null."""
    return {"type": "integer", **{k: field[k] for k in ("minimum", "maximum", "default") if k in field}}


def rewrite_refs(node: Any) -> Any:
    if isinstance(node, dict):
        return {
            k: (v.replace("#/$defs/", "#/components/schemas/") if k == "$ref" else rewrite_refs(v))
            for k, v in node.items()
        }
    if isinstance(node, list):
        return [rewrite_refs(v) for v in node]
    return node


def build() -> dict[str, Any]:
    defs = json.loads((DOCS / "protocol.schema.json").read_text())["$defs"]
    schemas = {name: d for name, d in defs.items() if name not in ("ClientMessage", "ServerMessage")}
    for name in BODIES:
        schemas[f"{name}Body"] = body(defs, name)
    schemas["ErrorBody"] = {
        "type": "object",
        "properties": {"error": {
            "type": "object",
            "properties": {"code": {"$ref": "#/$defs/ErrorCode"}, "message": {"type": "string"}},
            "required": ["code", "message"], "additionalProperties": False,
        }},
        "required": ["error"], "additionalProperties": False,
    }
    # HTTP only (the web client's rules pages), so written here rather than in the protocol.
    text = {"type": "string"}
    schemas["RulesBody"] = {
        "type": "object",
        "properties": {
            "game": text, "name": text, "summary": text,
            "sections": {"type": "array", "items": {
                "type": "object", "properties": {"title": text, "text": text},
                "required": ["title", "text"], "additionalProperties": False,
            }},
            "racing": text, "par": text,
            "example": {
                "type": "object",
                "properties": {
                    "deal": {"type": "integer", "minimum": 0},
                    "moves": {"type": "array", "items": text},
                    "view": {"type": "object", "description": "The player's view, as in `race_started` "
                                                              "(protocol.md, per game in docs/games/)."},
                },
                "required": ["deal", "moves", "view"], "additionalProperties": False,
            },
        },
        "required": ["game", "name", "summary", "sections", "racing", "par", "example"],
        "additionalProperties": False,
    }
    # Integer parameters take the bounds of the websocket request's fields (the server's
    # are the same, in protocol.py): written once, in the protocol schema.
    board, profile = defs["Leaderboard"]["properties"], defs["Profile"]["properties"]
    player_id = integer(profile["player_id"])

    def response(schema: str, text: str) -> dict[str, Any]:
        return {"description": text, "content": {"application/json": {"schema": {"$ref": f"#/$defs/{schema}"}}}}

    def ok(schema: str, text: str) -> dict[str, Any]:
        return {
            "200": response(schema, text),
            "400": response("ErrorBody", "A bad parameter: an integer out of its bounds or not written in ASCII "
                                         "digits, an impossible date, a `deal` board without `deal`."),
            "404": response("ErrorBody", "Unknown game, player, path, or a date not announced yet."),
            "503": response("ErrorBody", "`storage_unavailable`: the database cannot be read right now (a full disk, "
                                         "an I/O error, a damaged page); retry shortly."),
        }

    def query(name: str, schema: dict[str, Any], **more: Any) -> dict[str, Any]:
        return {"name": name, "in": "query", "required": False, **more, "schema": schema}

    date = {"type": "string", "format": "date"}
    me = query("me", player_id, description="The viewer's player id: their own entry comes back as `me` "
                                            "(leaderboards) or `attempted` (daily).")

    paths = {
        "/api/games": {"get": {
            "summary": "The games", "operationId": "games",
            "responses": ok("GamesBody", "Every game with its id, name and summary."),
        }},
        "/api/daily": {"get": {
            "summary": "Daily challenges of a date", "operationId": "daily",
            "parameters": [query("date", date, description="UTC date (default today)."), me],
            "responses": ok("DailyChallengesBody", "One challenge per game."),
        }},
        "/api/leaderboard/{board}/{game}": {"get": {
            "summary": "One page of a leaderboard", "operationId": "leaderboard",
            "description": "Boards: `deal` (needs `deal`), `daily` (`date`, default today), `fastest`, `wins`, "
                           "`win_rate` (`min_games`). Ties are broken by fewer moves, then the earlier finish.",
            "parameters": [
                {"name": "board", "in": "path", "required": True,
                 "schema": {"enum": ["deal", "daily", "fastest", "wins", "win_rate"]}},
                {"name": "game", "in": "path", "required": True, "schema": {"type": "string"}},
                query("deal", integer(board["deal"])),
                query("date", date),
                *(query(name, integer(board[name])) for name in ("min_games", "page", "page_size")),
                me,
            ],
            "responses": ok("LeaderboardPageBody", "The page, the board's total and the viewer's own entry.")}},
        "/api/rules/{game}": {"get": {
            "summary": "A game's rules", "operationId": "rules",
            "description": "The rules as players read them (the web client's `/rules/<game>` page): sections, "
                           "how races rank, what par means, and a real position to picture them: the example "
                           "deal (dealt with a fixed key of its own, never one of the server's deals) after "
                           "`moves`.",
            "parameters": [{"name": "game", "in": "path", "required": True, "schema": {"type": "string"}}],
            "responses": ok("RulesBody", "The game's rules page."),
        }},
        "/api/players/{id}": {"get": {
            "summary": "A player's profile", "operationId": "player",
            "parameters": [{"name": "id", "in": "path", "required": True, "schema": player_id}],
            "responses": ok("PlayerProfileBody", "Games played and won per game, best times, daily streak."),
        }},
        "/api/replays/par/{game}/{date}": {"get": {
            "summary": "A daily challenge's par line, as a replay", "operationId": "parLine",
            "description": "Once the day is over (`not_allowed` before: over HTTP nobody is identified; the "
                           "websocket's `par_line` shows it to those whose ranked attempt that day is over). One "
                           "racer, `par`, a move a second.",
            "parameters": [{"name": "game", "in": "path", "required": True, "schema": {"type": "string"}},
                           {"name": "date", "in": "path", "required": True, "schema": date}],
            "responses": ok("ReplayDataBody", "The par line."),
        }},
        "/api/replays/{code}": {"get": {
            "summary": "A finished race, move by move", "operationId": "replay",
            "description": "Every racer's view of the deal and each move's race time and view changes. A daily "
                           "attempt of a day still being played is refused (`not_allowed`, 400): over HTTP nobody "
                           "is identified (the websocket's `replay` shows it to those who played that day).",
            "parameters": [{"name": "code", "in": "path", "required": True,
                            "schema": {"type": "string", "pattern": "^[A-Za-z-]{1,16}$"}}],
            "responses": ok("ReplayDataBody", "The race's replay."),
        }},
    }
    doc = {
        "openapi": "3.1.0",
        "info": {
            "title": "solitaire-race HTTP API", "version": "1",
            "description": "Read-only JSON over HTTP, on the same port as the websocket (see protocol.md). "
                           "Generated by docs/make_openapi.py.",
        },
        "paths": paths,
        "components": {"schemas": schemas},
    }
    return rewrite_refs(doc)


if __name__ == "__main__":
    (DOCS / "openapi.json").write_text(json.dumps(build(), indent=2, ensure_ascii=False) + "\n")
    print("wrote docs/openapi.json")
