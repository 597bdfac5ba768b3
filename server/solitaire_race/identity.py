"""Who a player is: signing in with a token, or as a new player with a name.

A new player gets a random token (``TOKEN_BYTES``) once, in its `welcome`; only the token's
SHA-256 is stored. A name belongs to one player at a time. Which connection a player is on
is the gateway's business (``gateway.py``), not this module's.
"""

from __future__ import annotations

import secrets
from collections.abc import Callable
from datetime import datetime

from . import protocol as p
from .store import PlayerRecord, Store, hash_token

TOKEN_BYTES = 32  # 256-bit tokens; only their SHA-256 is stored


class Identity:
    def __init__(self, store: Store, wall_clock: Callable[[], datetime]) -> None:
        self.store = store
        self.wall_clock = wall_clock

    async def sign_in(self, name: str | None, token: str | None) -> tuple[PlayerRecord, str | None]:
        """The player a `hello` identifies, and the token of a new one (else None).
        Raises ``ProtocolError``: ``bad_token``, ``name_taken`` or ``bad_message``."""
        if name is not None:
            name = name.strip()
            if not name:
                raise p.ProtocolError(p.ErrorCode.BAD_MESSAGE, "a name cannot be blank")
        if token is not None:
            player = await self.store.player_by_token_hash(hash_token(token))
            if player is None:
                raise p.ProtocolError(p.ErrorCode.BAD_TOKEN, "unknown token: send your name without a token to get a new identity")
            if name is not None and name != player.name:
                await self._check_name_free(name, player.id)
                await self.store.rename_player(player.id, name)
                player = PlayerRecord(player.id, name, player.created_at)
            return player, None
        if name is None:
            raise p.ProtocolError(p.ErrorCode.BAD_MESSAGE, "a new player must give a name")
        await self._check_name_free(name, None)
        new_token = secrets.token_urlsafe(TOKEN_BYTES)
        return await self.store.create_player(name, hash_token(new_token), self.wall_clock()), new_token

    async def _check_name_free(self, name: str, player_id: int | None) -> None:
        holder = await self.store.player_by_name(name)
        if holder is not None and holder.id != player_id:
            raise p.ProtocolError(
                p.ErrorCode.NAME_TAKEN,
                f"the name {name!r} belongs to another player: present its token, or choose another name",
            )
