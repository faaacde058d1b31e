"""Drawn pages, kept in memory: a popular link is drawn once, not once per visitor.

A trace's id names immutable content (it is the hash of what is stored), so the page drawn for
(id, expanded stacks) never changes and can be kept as long as there is room. The cache is an
LRU bounded by the total size of what it holds, with single flight: requests for a key being
drawn wait for that one render instead of starting their own. A render that failed with
TooLargeToDraw is remembered too, for a while, so a hostile link costs one budget, not one per
request; RenderBusy (a transient state of the pool) is not.

A render is shared, so one visitor leaving does not stop it; but once every visitor waiting for
it has gone, and nobody else has asked for it within `abandon_after` seconds, it is cancelled
(and the worker drawing it stopped): nobody is left to see it, and a client that asks and hangs
up, over and over, would otherwise keep every worker busy. The grace keeps a flood of requests
that each hang up at once from cancelling, and starting again, the same render each time: it is
drawn once, and kept.
"""

from __future__ import annotations

import asyncio
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
        abandon_after: float = 2.0,
        size_of: Callable[[Any], int] | None = None,
    ) -> None:
        self.max_bytes = max_bytes
        self.remember_failures_for = remember_failures_for
        self.abandon_after = abandon_after
        self._size_of = size_of or text_size
        self._entries: OrderedDict[Hashable, _Entry] = OrderedDict()
        self._bytes = 0
        self._flights: dict[Hashable, _Flight] = {}
        self.renders = 0  # how many times `produce` was called (tests, /healthz)
        # asked for and kept, or not (drawn now, or waited for while drawn): /metrics
        self.hits = 0
        self.misses = 0

    @property
    def bytes(self) -> int:
        return self._bytes

    def __len__(self) -> int:
        return len(self._entries)

    async def get(self, key: Hashable, produce: Callable[[], Awaitable[Any]]) -> Any:
        entry = self._entries.get(key)
        if entry is not None and not entry.expired():
            self.hits += 1
            self._entries.move_to_end(key)
            return entry.value()
        self.misses += 1
        if entry is not None:
            self._remove(key)
        flight = self._flights.get(key)
        if flight is None:
            flight = _Flight(asyncio.ensure_future(self._produce(key, produce)))
            self._flights[key] = flight
        flight.waiting += 1
        if flight.abandon is not None:
            flight.abandon.cancel()  # asked for again in time
            flight.abandon = None
        try:
            # shielded: a visitor who leaves does not cancel the render others are waiting for
            return await asyncio.shield(flight.task)
        finally:
            flight.waiting -= 1
            if not flight.waiting and not flight.task.done():
                loop = asyncio.get_running_loop()
                flight.abandon = loop.call_later(self.abandon_after, self._abandon, key, flight)

    def _abandon(self, key: Hashable, flight: _Flight) -> None:
        """Nobody has waited for this render for a while: nobody will see it; it is stopped."""
        if flight.waiting or flight.task.done():
            return
        flight.task.cancel()
        if self._flights.get(key) is flight:
            del self._flights[key]

    @property
    def in_flight(self) -> int:
        """Renders going on now (tests, /healthz)."""
        return len(self._flights)

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
            flight = self._flights.get(key)
            if flight is not None and flight.task is asyncio.current_task():
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


class _Flight:
    __slots__ = ("abandon", "task", "waiting")

    def __init__(self, task: asyncio.Future) -> None:
        self.task = task
        self.waiting = 0  # requests awaiting it
        self.abandon: asyncio.TimerHandle | None = None  # when it is stopped, if nobody asks


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


def text_size(value: Any) -> int:
    """What a page weighs: the length of its text, which is nearly all of it (a page is a few
    large strings: its drawings and its player's JSON), plus a little for everything else.
    Counted without writing the page out again."""
    if isinstance(value, str):
        return len(value)
    if isinstance(value, dict):
        return sum(text_size(key) + text_size(item) for key, item in value.items())
    if isinstance(value, list | tuple):
        return sum(text_size(item) for item in value) + 8
    return 8
