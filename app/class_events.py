"""A class's events reach the streams open on this server, whichever server recorded them.

A student's answer may be recorded by one server while the instructor's page streams from
another, so events go through the store (app/store/classes.py) and each server's broker hands
them to its own streams:
- on PostgreSQL, one dedicated connection per server LISTENs, and each event's transaction
  NOTIFYs it (its payload is the event), so it arrives when it commits;
- on SQLite (one machine, maybe several processes), the broker reads the events table every
  POLL_SECONDS, and only while some stream is open.
Streams are bounded, per class and per server: each holds a small queue, dropped events are
only refreshes missed (the next one redraws the whole panel).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import signal
import threading

from app.store.classes import CHANNEL, ClassStore, Event

log = logging.getLogger("gradtrace.classes")
POLL_SECONDS = 0.2
RECONNECT_SECONDS = 2.0
READY_SECONDS = 15.0  # for the listener to be listening: past it a stream is refused
QUEUE_SIZE = 32  # events waiting for one stream: past it they are dropped
MAX_STREAMS = 2000  # per server
STOPPING = "stopping"  # the server's, not the class's: its streams end without a word
PER_CLASS = {"teach": 8, "follow": 600}  # instructors' pages, and students' (a few tabs each)


class Full(RuntimeError):
    """No room for another stream: of this class's kind, or on this server."""


class Subscription:
    """One stream's place: the kinds of event it wants (and, always, the class's end and the
    server's stopping), queued for it. A student's stream wants the pace, never the answers:
    a burst of thirty answers must not crowd a pace out of its queue."""

    def __init__(self, broker: ClassEvents, class_id: str, role: str, kinds) -> None:
        self.class_id, self.role = class_id, role
        self.kinds = frozenset(kinds) | {"ended", STOPPING}
        self.queue: asyncio.Queue[Event] = asyncio.Queue(QUEUE_SIZE)
        self._broker = broker

    def close(self) -> None:
        self._broker._remove(self)


class ClassEvents:
    def __init__(self, store: ClassStore, url: str | None = None) -> None:
        """`url`: PostgreSQL's, to LISTEN on; None polls the store (SQLite)."""
        self._store, self._url = store, url
        self._streams: dict[str, set[Subscription]] = {}
        self._count = 0
        self._task: asyncio.Task | None = None
        self._ready: asyncio.Event | None = None  # set once the task hears what is written
        self._ending = False  # the server is stopping

    @property
    def open_streams(self) -> int:
        return self._count

    def room(self, class_id: str, role: str) -> bool:
        if self._ending:
            return False
        mine = sum(1 for s in self._streams.get(class_id, ()) if s.role == role)
        return self._count < MAX_STREAMS and mine < PER_CLASS[role]

    async def subscribe(self, class_id: str, role: str, kinds) -> Subscription:
        """A stream's subscription to these kinds of event, once every one written from now on
        will reach it."""
        if not self.room(class_id, role):
            raise Full(f"too many open streams for this class ({role})")
        subscription = Subscription(self, class_id, role, kinds)
        self._streams.setdefault(class_id, set()).add(subscription)
        self._count += 1
        if self._task is None or self._task.done():
            self._ready = asyncio.Event()
            follow = self._listen if self._url else self._poll
            self._task = asyncio.get_running_loop().create_task(follow(self._ready))
        try:
            await asyncio.wait_for(self._ready.wait(), READY_SECONDS)
        except TimeoutError:
            subscription.close()
            raise Full("this server cannot hear the class's events now") from None
        except BaseException:
            subscription.close()
            raise
        return subscription

    def _remove(self, subscription: Subscription) -> None:
        streams = self._streams.get(subscription.class_id)
        if streams is None or subscription not in streams:
            return
        streams.discard(subscription)
        self._count -= 1
        if not streams:
            del self._streams[subscription.class_id]

    def end_streams_on_shutdown(self) -> None:
        """uvicorn lets open answers finish before it stops, and a stream never finishes by
        itself: on the signal that stops the server, every stream here ends (the browsers
        connect again, to another server or to this one restarted). Called from the app's
        startup, inside uvicorn's own handlers, which it chains to."""
        if threading.current_thread() is not threading.main_thread():
            return  # no signals here (a test's server in a thread)
        loop = asyncio.get_running_loop()
        for number in (signal.SIGTERM, signal.SIGINT):
            previous = signal.getsignal(number)

            def handler(signum, frame, previous=previous) -> None:
                loop.call_soon_threadsafe(self.end_all)
                if callable(previous):
                    previous(signum, frame)

            signal.signal(number, handler)

    def end_all(self) -> None:
        """Every open stream here ends, and no new one starts."""
        self._ending = True
        for streams in self._streams.values():
            for subscription in streams:
                with contextlib.suppress(asyncio.QueueEmpty):
                    while subscription.queue.full():
                        subscription.queue.get_nowait()
                subscription.queue.put_nowait(Event(0, subscription.class_id, STOPPING, {}))

    async def close(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
            self._task = None

    def _deliver(self, event: Event) -> None:
        for subscription in list(self._streams.get(event.class_id, ())):
            if event.kind in subscription.kinds:
                with contextlib.suppress(asyncio.QueueFull):
                    subscription.queue.put_nowait(event)

    async def _poll(self, ready: asyncio.Event) -> None:
        """SQLite: read what was written since the last look, while anyone is listening."""
        seen = await asyncio.to_thread(self._store.last_event)
        ready.set()
        while self._count:
            await asyncio.sleep(POLL_SECONDS)
            try:
                events = await asyncio.to_thread(self._store.events_after, seen)
            except Exception:  # the file busy or gone: the next look tries again
                log.exception("reading class events failed")
                continue
            for event in events:
                seen = event.seq
                self._deliver(event)

    async def _listen(self, ready: asyncio.Event) -> None:
        """PostgreSQL: one connection LISTENing for as long as the server runs."""
        import psycopg

        while True:
            try:
                async with await psycopg.AsyncConnection.connect(self._url, autocommit=True) as db:
                    await db.execute(f"LISTEN {CHANNEL}")
                    ready.set()
                    async for notice in db.notifies():
                        event = _parsed(notice.payload)
                        if event is not None:
                            self._deliver(event)
            except asyncio.CancelledError:
                raise
            except Exception:
                log.exception("listening for class events failed: connecting again")
            await asyncio.sleep(RECONNECT_SECONDS)


def _parsed(payload: str) -> Event | None:
    try:
        found = json.loads(payload)
        return Event(int(found["seq"]), str(found["class"]), str(found["kind"]), found["data"])
    except (ValueError, KeyError, TypeError):
        return None
