"""Drawn pages, kept in memory: a popular link is drawn once, not once per visitor.

A trace's id names immutable content (it is the hash of what is stored), so the page drawn for
(id, expanded stacks) never changes and can be kept as long as there is room. The cache is an
LRU bounded by the total size of what it holds, with single flight: requests for a key being
drawn wait for that one render instead of starting their own. A render that failed with
TooLargeToDraw is remembered too, for a while, so a hostile link costs one budget, not one per
request; RenderBusy (a transient state of the pool) is not.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Hashable
from typing import Any

from app.render_pool import TooLargeToDraw

FAILURE_BYTES = 64  # what a remembered failure counts for, besides its reason


class PageCache:
    """`await cache.get(key, produce)`: the value for `key`, made by `await produce()` once."""

    def __init__(
        self,
        max_bytes: int = 64 * 1024 * 1024,
        *,
        remember_failures_for: float = 300.0,
        size_of: Callable[[Any], int] | None = None,
    ) -> None:
        self.max_bytes = max_bytes
        self.remember_failures_for = remember_failures_for
        self._size_of = size_of or json_size
        self._entries: OrderedDict[Hashable, _Entry] = OrderedDict()
        self._bytes = 0
        self._flights: dict[Hashable, asyncio.Future] = {}
        self.renders = 0  # how many times `produce` was called (tests, /healthz)

    @property
    def bytes(self) -> int:
        return self._bytes

    def __len__(self) -> int:
        return len(self._entries)

    async def get(self, key: Hashable, produce: Callable[[], Awaitable[Any]]) -> Any:
        entry = self._entries.get(key)
        if entry is not None and not entry.expired():
            self._entries.move_to_end(key)
            return entry.value()
        if entry is not None:
            self._remove(key)
        flight = self._flights.get(key)
        if flight is None:
            flight = asyncio.ensure_future(self._produce(key, produce))
            self._flights[key] = flight
        # shielded: a visitor who leaves does not cancel the render others are waiting for
        return await asyncio.shield(flight)

    async def _produce(self, key: Hashable, produce: Callable[[], Awaitable[Any]]) -> Any:
        self.renders += 1
        try:
            value = await produce()
        except TooLargeToDraw as failure:
            until = time.monotonic() + self.remember_failures_for
            size = FAILURE_BYTES + len(failure.reason)
            self._store(key, _Entry(failure=failure, size=size, until=until))
            raise
        else:
            self._store(key, _Entry(result=value, size=self._size_of(value)))
            return value
        finally:
            del self._flights[key]

    def _store(self, key: Hashable, entry: _Entry) -> None:
        if entry.size > self.max_bytes:
            return  # bigger than the whole cache: served, not kept
        self._entries[key] = entry
        self._bytes += entry.size
        while self._bytes > self.max_bytes:
            oldest = next(iter(self._entries))
            self._remove(oldest)

    def _remove(self, key: Hashable) -> None:
        self._bytes -= self._entries.pop(key).size


class _Entry:
    __slots__ = ("failure", "result", "size", "until")

    def __init__(
        self,
        *,
        size: int,
        result: Any = None,
        failure: TooLargeToDraw | None = None,
        until: float | None = None,
    ) -> None:
        self.result, self.failure, self.size, self.until = result, failure, size, until

    def expired(self) -> bool:
        return self.until is not None and time.monotonic() > self.until

    def value(self) -> Any:
        if self.failure is not None:
            raise TooLargeToDraw(self.failure.reason)
        return self.result


def json_size(value: Any) -> int:
    """What a page weighs: the length of its JSON (its strings dominate its memory)."""
    return len(json.dumps(value, separators=(",", ":")))
