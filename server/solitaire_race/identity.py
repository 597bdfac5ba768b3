"""Who a player is: signing in with a token, or as a new player with a name.

A new player gets a random token (``TOKEN_BYTES``) once, in its `welcome`; only the token's
SHA-256 is stored. A name is checked and normalised by the name rules (``names.py``) and
belongs to one player at a time, look-alikes included: the store's unique name key decides,
so two players asking at once cannot both get it. Which connection a player is on is the
gateway's business (``gateway.py``), not this module's.
"""

from __future__ import annotations

import secrets
from collections.abc import Callable
from datetime import datetime

from . import names
from . import protocol as p
from .store import NameTaken, PlayerRecord, Store, hash_token

TOKEN_BYTES = 32  # 256-bit tokens; only their SHA-256 is stored


class Identity:
    def __init__(self, store: Store, wall_clock: Callable[[], datetime]) -> None:
        self.store = store
        self.wall_clock = wall_clock

    async def sign_in(self, name: str | None, token: str | None) -> tuple[PlayerRecord, str | None]:
        """The player a `hello` identifies, and the token of a new one (else None).
        Raises ``ProtocolError``: ``bad_name``, ``bad_token``, ``name_taken`` or ``bad_message``."""
        try:
            name = None if name is None else names.check_name(name)
        except names.BadName as exc:
            raise p.ProtocolError(p.ErrorCode.BAD_NAME, str(exc)) from None
        if token is not None:
            player = await self.store.player_by_token_hash(hash_token(token))
            if player is None:
                raise p.ProtocolError(
                    p.ErrorCode.BAD_TOKEN, "unknown token: send your name without a token to get a new identity"
                )
            if name is not None and name != player.name:
                try:
                    await self.store.rename_player(player.id, name)
                except NameTaken:
                    raise await self._name_taken(name) from None
                player = PlayerRecord(player.id, name, player.created_at)
            return player, None
        if name is None:
            raise p.ProtocolError(p.ErrorCode.BAD_MESSAGE, "a new player must give a name")
        new_token = secrets.token_urlsafe(TOKEN_BYTES)
        try:
            return await self.store.create_player(name, hash_token(new_token), self.wall_clock()), new_token
        except NameTaken:
            raise await self._name_taken(name) from None

    async def who(self, token: str) -> PlayerRecord:
        """The player a token names, without signing in (a page beside the app, on a
        connection of its own, proving who asks): ``bad_token`` if none."""
        player = await self.store.player_by_token_hash(hash_token(token))
        if player is None:
            raise p.ProtocolError(p.ErrorCode.BAD_TOKEN, "unknown token")
        return player

    async def _name_taken(self, name: str) -> p.ProtocolError:
        """The error for a name the store refused: it looks like another player's name.
        Names are checked, so ``!r`` shows them as they are."""
        holder = await self.store.player_by_name(name)
        like = "" if holder is None or holder.name == name else f" (it looks like {holder.name!r})"
        return p.ProtocolError(
            p.ErrorCode.NAME_TAKEN,
            # Said to people (the browser shows it under the name it leaves typed): what to do.
            f"the name {name!r} is taken{like}: choose another, or sign in on the device that created it",
        )
