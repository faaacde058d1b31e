"""Who is at the far end: the connection's peer, unless the peer is a trusted reverse proxy.

Runs are queued fairly per client address, so the address must not be something a client can
choose. X-Forwarded-For is a list each proxy appends its own peer to; everything left of the
entry our nearest trusted proxy added is whatever the client wrote, so it is read right to
left and the first entry that is not itself a trusted proxy is the client. uvicorn's
ProxyHeadersMiddleware does the same, but trusts 127.0.0.1 by default; with `proxy_headers`
off in `gradtrace serve`, this module is the only one that reads these headers, and only for
the proxies in Settings.trusted_proxies (none unless configured).

Every per-address limit (queues, quotas, connections, the store's shares) is keyed by
`limit_key`: an IPv4 address as it is, an IPv6 address by its /64, because one IPv6 client is
routinely handed a whole /64 and could otherwise take a fresh quota from each of 2^64 addresses.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterable, Sequence

Network = ipaddress.IPv4Network | ipaddress.IPv6Network


def client_address(
    peer: str | None, forwarded_for: Iterable[str], trusted_proxies: Sequence[Network]
) -> str:
    """The client's address, given the connection's peer and the X-Forwarded-For header's
    values (a header sent twice counts as one list, in order)."""
    if peer is None:
        return "unknown"
    if not is_trusted(peer, trusted_proxies):
        return peer
    entries = [entry.strip() for value in forwarded_for for entry in value.split(",")]
    for entry in reversed(entries):
        address = _address(entry)
        if address is None:
            # a proxy we trust would not have written this: whatever is left of it is unknown
            break
        if not is_trusted(address, trusted_proxies):
            return address
    # every entry was a trusted proxy (or none was usable): the nearest of them is the client
    return peer


def limit_key(address: str) -> str:
    """What a per-address limit counts by: the address itself, or an IPv6 address's /64
    (2001:db8:1:1::/64 for 2001:db8:1:1::2). Anything else (a test client's name) as it is."""
    parsed = _parsed(address)
    if isinstance(parsed, ipaddress.IPv6Address):
        return str(ipaddress.IPv6Network((parsed, 64), strict=False))
    return address if parsed is None else str(parsed)


def client_scheme(
    peer: str | None,
    forwarded_proto: str | None,
    own_scheme: str,
    trusted_proxies: Sequence[Network],
) -> str:
    """The scheme the client used: a trusted proxy that ends TLS says so in X-Forwarded-Proto."""
    if peer is None or forwarded_proto is None or not is_trusted(peer, trusted_proxies):
        return own_scheme
    # a chain of proxies may list one per hop; the one next to us wrote the right-most
    scheme = forwarded_proto.split(",")[-1].strip().lower()
    return scheme if scheme in ("http", "https") else own_scheme


def is_trusted(address: str, trusted_proxies: Sequence[Network]) -> bool:
    """Whether `address` (a plain address, an IPv4-mapped one read as IPv4) is one of the
    trusted proxies: its X-Forwarded-For is believed, and its connections are not capped."""
    parsed = _parsed(address)
    return parsed is not None and any(parsed in network for network in trusted_proxies)


def _address(entry: str) -> str | None:
    """An X-Forwarded-For entry as a plain address, or None if it is not one. Some proxies
    add the port: 192.0.2.1:5000, [2001:db8::1]:5000."""
    if entry.startswith("["):
        entry = entry[1:].partition("]")[0]
    elif entry.count(":") == 1:
        entry = entry.partition(":")[0]
    parsed = _parsed(entry)
    return None if parsed is None else str(parsed)


def _parsed(text: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    try:
        address = ipaddress.ip_address(text)
    except ValueError:
        return None  # a name (TestClient's "testclient"), a port, garbage
    # a dual-stack socket reports an IPv4 peer as ::ffff:a.b.c.d
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        return address.ipv4_mapped
    return address
