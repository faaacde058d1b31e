"""Messages between the server and the zygote: a JSON header and a payload of raw bytes.

On the wire each message is `len(header) header len(payload) payload`, the lengths as 4-byte
big-endian integers. Requests carry the snippet in the header and no payload; results carry the
child's trace, untouched, as the payload, so the zygote never parses a trace.
"""

from __future__ import annotations

import json
import socket
import struct

_LENGTH = struct.Struct(">I")
MAX_HEADER = 1 << 20  # a request holds at most a 20 KB snippet; this is generous


class ProtocolError(Exception):
    """The other side sent something that is not a message."""


def pack(header: dict, payload: bytes = b"") -> bytes:
    encoded = json.dumps(header, separators=(",", ":")).encode()
    return b"".join([_LENGTH.pack(len(encoded)), encoded, _LENGTH.pack(len(payload)), payload])


class Decoder:
    """Turns bytes as they arrive (non-blocking reads) into whole messages."""

    def __init__(self, max_payload: int) -> None:
        self.max_payload = max_payload
        self._buffer = bytearray()

    def feed(self, data: bytes) -> list[tuple[dict, bytes]]:
        self._buffer += data
        messages = []
        while True:
            message = self._take()
            if message is None:
                return messages
            messages.append(message)

    def _take(self) -> tuple[dict, bytes] | None:
        buffer = self._buffer
        if len(buffer) < 4:
            return None
        (header_size,) = _LENGTH.unpack_from(buffer, 0)
        if header_size > MAX_HEADER:
            raise ProtocolError("header too large")
        if len(buffer) < 8 + header_size:
            return None
        (payload_size,) = _LENGTH.unpack_from(buffer, 4 + header_size)
        if payload_size > self.max_payload:
            raise ProtocolError("payload too large")
        end = 8 + header_size + payload_size
        if len(buffer) < end:
            return None
        header = _header(bytes(buffer[4 : 4 + header_size]))
        payload = bytes(buffer[8 + header_size : end])
        del buffer[:end]
        return header, payload


def read(sock: socket.socket, max_payload: int) -> tuple[dict, bytes] | None:
    """One whole message from a blocking socket; None at end of stream."""
    size = _exactly(sock, 4)
    if size is None:
        return None
    (header_size,) = _LENGTH.unpack(size)
    if header_size > MAX_HEADER:
        raise ProtocolError("header too large")
    header = _header(_exactly(sock, header_size, eof_ok=False))
    (payload_size,) = _LENGTH.unpack(_exactly(sock, 4, eof_ok=False))
    if payload_size > max_payload:
        raise ProtocolError("payload too large")
    return header, _exactly(sock, payload_size, eof_ok=False)


def _exactly(sock: socket.socket, size: int, eof_ok: bool = True) -> bytes | None:
    buffer = bytearray(size)
    view = memoryview(buffer)
    got = 0
    while got < size:
        n = sock.recv_into(view[got:])
        if n == 0:
            if eof_ok and got == 0:
                return None
            raise ProtocolError("stream ended inside a message")
        got += n
    return bytes(buffer)


def _header(data: bytes) -> dict:
    try:
        header = json.loads(data)
    except ValueError as error:
        raise ProtocolError(f"bad header: {error}") from None
    if not isinstance(header, dict):
        raise ProtocolError("header is not an object")
    return header
