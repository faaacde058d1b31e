"""Whom X-Forwarded-For and X-Forwarded-Proto are believed from: trusted proxies only."""

from __future__ import annotations

import pytest

from app.client_address import client_address, client_scheme, limit_key
from app.config import Networks

LOCAL_PROXY = Networks("127.0.0.1")
TWO_HOPS = Networks("127.0.0.1,10.0.0.0/8")


def test_without_trusted_proxies_the_peer_is_the_client():
    assert client_address("127.0.0.1", ["203.0.113.9"], ()) == "127.0.0.1"


def test_forwarded_for_from_an_untrusted_peer_is_ignored():
    assert client_address("198.51.100.7", ["203.0.113.9"], LOCAL_PROXY) == "198.51.100.7"


def test_forwarded_for_from_a_trusted_proxy_names_the_client():
    assert client_address("127.0.0.1", ["203.0.113.9"], LOCAL_PROXY) == "203.0.113.9"


def test_entries_the_client_wrote_itself_are_ignored():
    # the client sent "X-Forwarded-For: 192.0.2.1, 192.0.2.2"; nginx appended its peer
    forwarded = ["192.0.2.1, 192.0.2.2, 203.0.113.9"]
    assert client_address("127.0.0.1", forwarded, LOCAL_PROXY) == "203.0.113.9"


def test_a_chain_of_trusted_proxies_is_walked_to_the_first_untrusted_entry():
    forwarded = ["192.0.2.1, 203.0.113.9, 10.1.2.3"]
    assert client_address("127.0.0.1", forwarded, TWO_HOPS) == "203.0.113.9"


def test_a_header_sent_twice_counts_as_one_list_in_order():
    forwarded = ["192.0.2.1", "203.0.113.9"]
    assert client_address("127.0.0.1", forwarded, LOCAL_PROXY) == "203.0.113.9"


@pytest.mark.parametrize(
    "entry, client",
    [("203.0.113.9:5123", "203.0.113.9"), ("[2001:db8::9]:5123", "2001:db8::9")],
)
def test_an_entry_with_a_port_is_its_address(entry, client):
    assert client_address("127.0.0.1", [entry], LOCAL_PROXY) == client


@pytest.mark.parametrize("forwarded", [["unknown"], ["203.0.113.9, garbage"], [""], []])
def test_a_malformed_entry_stops_the_walk_at_the_proxy(forwarded):
    # whatever is left of an entry no proxy of ours wrote is the client's to choose
    assert client_address("127.0.0.1", forwarded, LOCAL_PROXY) == "127.0.0.1"


def test_a_dual_stack_peer_is_matched_as_ipv4():
    assert client_address("::ffff:127.0.0.1", ["203.0.113.9"], LOCAL_PROXY) == "203.0.113.9"


def test_a_peer_that_is_not_an_address_is_never_a_proxy():
    assert client_address("testclient", ["203.0.113.9"], Networks("0.0.0.0/0")) == "testclient"


def test_no_peer_at_all_is_unknown():
    assert client_address(None, ["203.0.113.9"], LOCAL_PROXY) == "unknown"


def test_the_scheme_is_believed_from_a_trusted_proxy_only():
    assert client_scheme("127.0.0.1", "https", "http", LOCAL_PROXY) == "https"
    assert client_scheme("198.51.100.7", "https", "http", LOCAL_PROXY) == "http"
    assert client_scheme("127.0.0.1", "gopher", "http", LOCAL_PROXY) == "http"
    assert client_scheme("127.0.0.1", None, "http", LOCAL_PROXY) == "http"


@pytest.mark.parametrize(
    ("address", "key"),
    [
        ("203.0.113.9", "203.0.113.9"),
        ("2001:db8:1:1::1", "2001:db8:1:1::/64"),
        ("2001:db8:1:1:ffff:ffff:ffff:ffff", "2001:db8:1:1::/64"),
        ("2001:db8:1:2::1", "2001:db8:1:2::/64"),
        ("::ffff:203.0.113.9", "203.0.113.9"),
        ("testclient", "testclient"),
    ],
)
def test_limits_count_an_ipv6_client_by_its_64(address, key):
    assert limit_key(address) == key
