"""Names through the real server: websocket clients on 127.0.0.1, a real SQLite file and a
real PostgreSQL, the real migrations. Names with control or invisible characters are refused (``bad_name``)
and never reach another player; a name is kept in one form; names that look alike are one
name, decided by the database's unique key even when two players ask at once (and even
from two writers on one database); players stored before the rules still sign in."""

from __future__ import annotations

import asyncio
import sqlite3
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from alembic import command

from solitaire_race.app import App
from solitaire_race.store import Store, hash_token
from solitaire_race.store.migrate import alembic_config

from .conftest import ON_BOTH_DATABASES, Client, make_config
from .databases import Database

HOSTILE = "\x1b]0;pwned\x07\x1b[2J"  # sets the terminal's title, then clears the screen
REFUSED = [
    HOSTILE, "ann\x00", "bob\nbob", "bob\r", "\u202eboB", "b\u200bob", "\u2066bob\u2069", "bo\u00adb",
    "\u3164", "\u2800", "bob\ue000", "\u0301bob", "   ", "n" * 33,
]  # fmt: skip


async def players(database: Database) -> list[tuple[Any, ...]]:
    return await database.query("SELECT id, name, name_key FROM players ORDER BY id")


@ON_BOTH_DATABASES
async def test_names_with_control_or_invisible_characters_are_refused(
    app: App, clients: Any, database: Database
) -> None:
    ann = await clients("ann")
    code = (await ann.request({"type": "create_race", "game": "cruel"}))["race"]["code"]
    newcomer = await clients()
    for name in REFUSED:
        reply = await newcomer.hello(name)
        assert (reply["type"], reply["code"]) == ("error", "bad_name"), (name, reply)
        assert reply["message"].isprintable() and name not in reply["message"]
    # A rename to such a name is refused the same way, and changes nothing.
    again = await clients()
    reply = await again.hello(HOSTILE, token=ann.token)
    assert (reply["type"], reply["code"]) == ("error", "bad_name")
    assert "U+001B" in reply["message"]
    bob = await clients("bob")
    room = await bob.request({"type": "join_race", "code": code})
    assert [p["name"] for p in room["race"]["players"]] == ["ann", "bob"]
    assert [name for _, name, _ in await players(database)] == ["ann", "bob"]


@ON_BOTH_DATABASES
async def test_a_name_is_kept_in_one_form_and_look_alikes_are_one_name(
    app: App, clients: Any, database: Database
) -> None:
    ann = await clients()
    welcome = await ann.hello("  \uff41\uff4e\uff4e   B.\u3000")  # full-width, extra spaces
    assert welcome["player"]["name"] == "ann B."
    zoe = await clients()
    assert (await zoe.hello("Zo\u00eb"))["player"]["name"] == "Zo\u00eb"
    impostor = await clients()
    for lookalike, shown in [
        ("ann B.", None), ("ANN b.", "ann B."), ("\u0430nn B.", "ann B."),  # Cyrillic а
        ("ann  B.", None), ("\u0430\u0578\u0578 \u0392.", "ann B."),  # Armenian ո, Greek Β
        ("Zoe\u0308", None), ("ZO\u00cb", "Zo\u00eb"),  # decomposed ë: NFKC composes it
    ]:
        reply = await impostor.hello(lookalike)
        assert (reply["type"], reply["code"]) == ("error", "name_taken"), (lookalike, reply)
        if shown is not None:
            assert f"it looks like {shown!r}" in reply["message"]
    reply = await impostor.hello("ann\u200b B.")  # a zero-width space is no way round it
    assert reply["code"] == "bad_name"
    # A player may rename to a name that looks like its own.
    again = await clients()
    assert (await again.hello("Ann b.", token=ann.token))["player"] == {"id": ann.player["id"], "name": "Ann b."}
    assert await players(database) == [(1, "Ann b.", "ann b."), (2, "Zo\u00eb", "zoe\u0308")]


@ON_BOTH_DATABASES
async def test_two_players_racing_for_look_alike_names_get_one_of_them(
    app: App, clients: Any, database: Database
) -> None:
    # Case alone first: the server used to read, then write, and let both through.
    pairs = [("dave", "DAVE"), ("eve", "eve"), ("fay", "Fay"), ("ann", "\u0430nn"), ("carol", "\uff43arol")]
    for one, other in pairs:
        first, second = await clients(), await clients()
        replies = await asyncio.gather(first.hello(one), second.hello(other))
        assert sorted(r["type"] for r in replies) == ["error", "welcome"], (one, other, replies)
        assert next(r for r in replies if r["type"] == "error")["code"] == "name_taken"
    assert len(await players(database)) == len(pairs)


async def test_two_writers_on_one_database_give_a_name_once(tmp_path: Path) -> None:
    """Two stores writing one database file at once (one SQLite file serves one server, but
    the database's word must not depend on that): neither can check the other's memory,
    only the unique name key stops the second look-alike."""
    url = f"sqlite+aiosqlite:///{tmp_path / 'race.sqlite3'}"
    one, two = await Store.open(url), await Store.open(url)
    now = datetime.now(UTC)
    try:
        for i, (name, lookalike) in enumerate([("ann", "\u0430nn"), ("bob", "B0B"), ("carol", "CAROL")]):
            made = await asyncio.gather(
                one.create_player(name, hash_token(f"a{i}"), now),
                two.create_player(lookalike, hash_token(f"b{i}"), now),
                return_exceptions=True,
            )
            assert sorted(type(m).__name__ for m in made) == ["NameTaken", "PlayerRecord"], made
        with sqlite3.connect(tmp_path / "race.sqlite3") as db:
            assert db.execute("SELECT count(*) FROM players").fetchone() == (3,)
    finally:
        await one.close()
        await two.close()


async def test_players_named_before_the_rules_still_sign_in_with_their_tokens(tmp_path: Path) -> None:
    """A database of the previous version, with names the rules now refuse or that look
    alike: the server upgrades it (migration 0008) and each player signs in with its
    token, under a name the rules accept, which is what the others see."""
    path = tmp_path / "race.sqlite3"
    config = alembic_config(f"sqlite+aiosqlite:///{path}")
    config.attributes["configure_logger"] = False
    await asyncio.to_thread(command.upgrade, config, "0007")  # env.py runs a loop of its own
    stored = {1: "ann", 2: "Ann", 3: "bob" + HOSTILE, 4: "\u200b\u202e", 5: "\u0430nn"}
    with sqlite3.connect(path) as db:
        db.executemany(
            "INSERT INTO players (id, name, token_hash, created_at) VALUES (?, ?, ?, 1795000000000000)",
            [(pid, name, hash_token(f"token-{pid}")) for pid, name in stored.items()],
        )
    app = await App.start(make_config(tmp_path))
    made: list[Client] = []
    try:
        names = {}
        for pid in stored:
            client = await Client.connect(app)
            made.append(client)
            welcome = await client.hello(token=f"token-{pid}")
            assert welcome["type"] == "welcome" and welcome["player"]["id"] == pid, welcome
            names[pid] = welcome["player"]["name"]
        assert names == {1: "ann", 2: "Ann #2", 3: "bob]0;pwned[2J", 4: "player #4", 5: "\u0430nn #5"}
        host, guest = made[2], made[1]  # bob, with the escape sequence gone, hosts Ann #2
        code = (await host.request({"type": "create_race", "game": "cruel"}))["race"]["code"]
        room = await guest.request({"type": "join_race", "code": code})
        assert [p["name"] for p in room["race"]["players"]] == ["bob]0;pwned[2J", "Ann #2"]
        # The later look-alike can choose another name, not the older player's.
        renamed = await Client.connect(app)
        made.append(renamed)
        assert (await renamed.hello("ANN", token="token-2"))["code"] == "name_taken"
        assert (await renamed.hello("Annie", token="token-2"))["player"]["name"] == "Annie"
    finally:
        for client in made:
            await client.close()
        await app.stop()

