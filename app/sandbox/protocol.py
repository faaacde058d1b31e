"""What travels between the server, the zygote and a child, and in which form.

Two kinds of connection, so that the zygote never holds anyone's code, output or trace:

- The control socket (server ↔ zygote, AF_UNIX SOCK_SEQPACKET): one small JSON object per
  packet, nothing else. The server sends bare commands, `{"op": "run" | "probe", "id", ...}`
  with exactly one descriptor attached (the run's channel, SCM_RIGHTS), or `{"op": "kill",
  "id"}`; the zygote answers `ready`, then one `ended` per run (exit code, signal, CPU time,
  memory) or `refused`. Packets keep their boundaries, so there is no framing to get wrong.
- A run's channel (server ↔ child, an AF_UNIX SOCK_STREAM socketpair made per run): the
  server writes the request into its end before handing the other end to the zygote, the
  child reads it after hardening itself, writes its trace back as JSON and exits; the trace
  ends where the stream does. The request is `length` (4 bytes, big-endian) then JSON.
"""

from __future__ import annotations

import json
import os
import socket
import struct

# How a child that wrote no trace says why: its exit code, which the zygote reports.
EXIT_SETUP_FAILED = 120
EXIT_INTERNAL = 121
EXIT_NO_MEMORY = 122

MAX_PACKET = 1 << 16  # a command or a report is a few hundred bytes; this is generous
_LENGTH = struct.Struct(">I")
# JSON escapes a character in at most 6 bytes per UTF-8 byte ("\u0001" for b"\x01")
_ESCAPED = 6
_REQUEST_SLACK = 64  # the object around the code: {"code": ...}


class ProtocolError(Exception):
    """The other side sent something that is not a message."""


# ***** the control socket *****


def send_packet(sock: socket.socket, message: dict, fd: int | None = None) -> None:
    data = json.dumps(message, separators=(",", ":")).encode()
    if fd is None:
        sock.send(data)
    else:
        socket.send_fds(sock, [data], [fd])


def parse_packet(data: bytes) -> dict:
    try:
        message = json.loads(data)
    except ValueError as error:
        raise ProtocolError(f"bad packet: {error}") from None
    if not isinstance(message, dict):
        raise ProtocolError("a packet is not an object")
    return message


# ***** a run's channel *****


def request_limit(max_source_bytes: int) -> int:
    """The most a child reads as its request: the longest snippet, escaped, and framing."""
    return _LENGTH.size + _ESCAPED * max_source_bytes + _REQUEST_SLACK


def pack_request(code: str) -> bytes:
    encoded = json.dumps({"code": code}, separators=(",", ":")).encode("ascii")
    return _LENGTH.pack(len(encoded)) + encoded


def read_request(fd: int, limit: int) -> str:
    """The code the server wrote on channel `fd` (blocking), reading at most `limit` bytes."""
    (size,) = _LENGTH.unpack(_exactly(fd, _LENGTH.size))
    if _LENGTH.size + size > limit:
        raise ProtocolError(f"a request of {size:,} bytes is larger than any snippet")
    request = parse_packet(_exactly(fd, size))
    code = request.get("code")
    if not isinstance(code, str):
        raise ProtocolError("the request has no code")
    return code


def _exactly(fd: int, size: int) -> bytes:
    parts, got = [], 0
    while got < size:
        data = os.read(fd, size - got)
        if not data:
            raise ProtocolError("the channel ended inside the request")
        parts.append(data)
        got += len(data)
    return b"".join(parts)
