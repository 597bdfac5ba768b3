"""The websocket transport: the only module that imports ``websockets``.

One port serves both: websocket connections at ``/ws`` (each frame handed to the
``RaceService``), and plain HTTP through the server's ``process_request`` hook: ``/healthz``,
the JSON API under ``/api/`` (``http_api``), and the static browser client under
``client/web/`` (``/`` and ``/join/<code>`` serve its ``index.html``, ``/leaderboard`` its
``leaderboard.html``).
"""

from __future__ import annotations

import json
import logging
import mimetypes
from http import HTTPStatus
from pathlib import Path
from typing import Any

from websockets.asyncio.server import Server, ServerConnection, broadcast, serve
from websockets.datastructures import Headers
from websockets.exceptions import ConnectionClosed
from websockets.http11 import Request, Response

from . import http_api, protocol
from .config import Config
from .service import RaceService

log = logging.getLogger("solitaire_race.transport")

WS_PATH = "/ws"


class WebSocketPeer:
    """A ``Peer`` over a websockets connection. Sends never block: ``broadcast`` writes
    straight to the transport, so one slow client cannot hold up a room."""

    __slots__ = ("connection",)

    def __init__(self, connection: ServerConnection) -> None:
        self.connection = connection

    def send(self, message: dict[str, Any]) -> None:
        broadcast((self.connection,), protocol.encode(message), text=True)

    def close(self, code: int, reason: str) -> None:
        import asyncio

        asyncio.get_running_loop().create_task(self.connection.close(code, reason))


class HttpSite:
    """Answers plain HTTP requests: health check, JSON API, the browser client's files."""

    PAGES = {"/": "/index.html", "/leaderboard": "/leaderboard.html"}

    def __init__(self, root: Path, service: RaceService) -> None:
        self.root = root.resolve()
        self.service = service

    async def __call__(self, connection: ServerConnection, request: Request) -> Response | None:
        path, _, query = request.path.partition("?")
        if path == WS_PATH:
            return None  # let the websocket handshake proceed
        if path == "/healthz":
            return self._response(HTTPStatus.OK, b"ok\n", "text/plain; charset=utf-8")
        if path.startswith("/api/"):
            status, data = await http_api.handle(self.service, path, query)
            body = json.dumps(data, ensure_ascii=False).encode("utf-8")
            return self._response(HTTPStatus(status), body, "application/json; charset=utf-8")
        path = "/index.html" if path.startswith("/join/") else self.PAGES.get(path, path)
        file = (self.root / path.lstrip("/")).resolve()
        if not file.is_relative_to(self.root) or not file.is_file():
            return self._response(HTTPStatus.NOT_FOUND, b"not found\n", "text/plain; charset=utf-8")
        kind = mimetypes.guess_type(file.name)[0] or "application/octet-stream"
        if kind.startswith("text/") or kind in ("application/javascript", "application/json"):
            kind += "; charset=utf-8"
        return self._response(HTTPStatus.OK, file.read_bytes(), kind)

    @staticmethod
    def _response(status: HTTPStatus, body: bytes, content_type: str) -> Response:
        headers = Headers(
            [
                ("Content-Type", content_type),
                ("Content-Length", str(len(body))),
                ("Cache-Control", "no-cache"),
                ("X-Content-Type-Options", "nosniff"),
            ]
        )
        return Response(status.value, status.phrase, headers, body)


async def start(service: RaceService, config: Config) -> Server:
    """Start serving; the caller closes the returned server."""

    async def handler(connection: ServerConnection) -> None:
        session = service.connect(WebSocketPeer(connection))
        try:
            async for frame in connection:
                await service.handle(session, frame)
        except ConnectionClosed:
            pass
        finally:
            await service.disconnect(session)

    return await serve(
        handler,
        config.host,
        config.port,
        process_request=HttpSite(config.static_dir, service),
        compression=None,  # small messages: deflate costs more than it saves (docs/performance)
        max_size=config.max_frame_bytes,
        server_header="solitaire-race",
    )


def bound_port(server: Server) -> int:
    return int(next(iter(server.sockets)).getsockname()[1])
