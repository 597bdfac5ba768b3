"""The load generator's websocket client (bench/load.py, flood.py, soak.py): just enough of
RFC 6455 on asyncio (masked frames, minimal parsing) that it costs a few microseconds per
message. A ``websockets`` client on the generator's single core would saturate before the
echo server does. Loopback only."""

from __future__ import annotations

import asyncio
import base64
import collections
import os
import re
import struct


def read_frame(buf: bytearray, pos: int) -> tuple[int, bytes, int] | None:
    """The server frame at ``pos`` of ``buf`` (unmasked, as servers send them): its opcode,
    its payload and where the next one starts; None until it has arrived whole."""
    if len(buf) - pos < 2:
        return None
    opcode, length, start = buf[pos] & 0x0F, buf[pos + 1] & 0x7F, pos + 2
    if length == 126:
        if len(buf) - pos < 4:
            return None
        length, start = struct.unpack_from("!H", buf, pos + 2)[0], pos + 4
    elif length == 127:
        if len(buf) - pos < 10:
            return None
        length, start = struct.unpack_from("!Q", buf, pos + 2)[0], pos + 10
    if len(buf) < start + length:
        return None
    return opcode, bytes(buf[start : start + length]), start + length


class WsClient(asyncio.Protocol):
    """Just enough of RFC 6455 for a load generator: text frames out, text frames in
    (unmasked, as servers send them), pongs for pings, and the close frame.

    Client frames must be masked; the mask key is all zeros, which the protocol allows
    and which makes masking free (XOR with zero). Fine on loopback, where no proxy needs
    protecting from crafted frames."""

    MASK = b"\x00\x00\x00\x00"

    def __init__(self) -> None:
        self.transport: asyncio.Transport | None = None
        self.buffer = bytearray()
        self.handshake: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self.inbox: collections.deque[bytes] = collections.deque()
        self.waiter: asyncio.Future[None] | None = None
        self.closed = False

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]

    def _deliver(self, payload: bytes) -> None:
        self.inbox.append(payload)
        if self.waiter is not None and not self.waiter.done():
            self.waiter.set_result(None)

    def data_received(self, data: bytes) -> None:
        self.buffer += data
        if not self.handshake.done():
            end = self.buffer.find(b"\r\n\r\n")
            if end < 0:
                return
            status = bytes(self.buffer[:end]).split(b"\r\n", 1)[0]
            del self.buffer[: end + 4]
            if b" 101 " not in status:
                self.handshake.set_exception(ConnectionError(status.decode(errors="replace")))
                return
            self.handshake.set_result(None)
        buf = self.buffer
        pos = 0
        while (frame := read_frame(buf, pos)) is not None:
            opcode, payload, pos = frame
            if opcode == 0x1:
                self._deliver(payload)
            elif opcode == 0x9:
                self._frame(0xA, payload)
            elif opcode == 0x8:
                self.closed = True
                self._deliver(b"")
        del buf[:pos]

    def connection_lost(self, exc: Exception | None) -> None:
        self.closed = True
        self._deliver(b"")
        if not self.handshake.done():
            self.handshake.set_exception(ConnectionError("connection lost during the handshake"))

    def _frame(self, opcode: int, payload: bytes) -> None:
        n = len(payload)
        if n < 126:
            head = bytes((0x80 | opcode, 0x80 | n))
        elif n < 65536:
            head = bytes((0x80 | opcode, 0x80 | 126)) + struct.pack("!H", n)
        else:
            head = bytes((0x80 | opcode, 0x80 | 127)) + struct.pack("!Q", n)
        assert self.transport is not None
        self.transport.write(head + self.MASK + payload)

    def send(self, payload: bytes) -> None:
        self._frame(0x1, payload)

    async def recv(self) -> bytes:
        while not self.inbox:
            self.waiter = asyncio.get_running_loop().create_future()
            await self.waiter
        message = self.inbox.popleft()
        if not message and self.closed:
            raise ConnectionError("closed")
        return message

    def close(self) -> None:
        if self.transport is not None and not self.transport.is_closing():
            self._frame(0x8, struct.pack("!H", 1000))
            self.transport.close()


async def ws_connect(url: str) -> WsClient:
    m = re.fullmatch(r"ws://([^:/]+):(\d+)(/.*)", url)
    assert m, url
    host, port, path = m.group(1), int(m.group(2)), m.group(3)
    loop = asyncio.get_running_loop()
    _, client = await loop.create_connection(WsClient, host, port)
    key = base64.b64encode(os.urandom(16)).decode()
    request = (
        f"GET {path} HTTP/1.1\r\nHost: {host}:{port}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
        f"Sec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n\r\n"
    )
    assert client.transport is not None
    client.transport.write(request.encode())
    await client.handshake
    return client
