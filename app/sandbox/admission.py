"""Who runs next: at most `max_in_flight` runs at once, a bounded queue, and fairness by client.

A client is a browser session (the web app's signed cookie) or, for callers without one, their
address. Each client has at most `per_client_in_flight` runs going and `per_client_queue`
waiting. A free slot goes to the waiting client that has used the sandbox least lately (its run
time, halved every `HALF_LIFE` seconds; ties in turn), so a stream of endless loops waits
behind every classmate whose snippets take a tenth of a second, however many sessions it runs
them under.

A classroom behind one address is thirty clients, not one; but all the sessions of one address
together may have at most `per_address_queue` runs waiting, and that share is split among them:
when it is full, a session with fewer runs waiting takes the place of the newest run of the
session with the most, which is told 429. So sessions minted by the hundred hold no more places
than thirty honest ones, and never keep one of them out. Past a client's own queue, or its
address's when it holds its part of it, the answer is 429; past the shared queue 503; both say
when to retry.
"""

from __future__ import annotations

import math
import threading
import time
from collections import OrderedDict, deque
from collections.abc import Callable
from dataclasses import dataclass

from app.busy import Busy

HALF_LIFE = 600.0  # seconds: run time used ten minutes ago counts half
LEAST_CHARGE = 0.05  # seconds a run counts for from its start: starting one is never free
KEPT_USAGE = 10_000  # clients whose usage is remembered; past it, the most faded are forgotten


@dataclass(frozen=True)
class Requester:
    """Who asks for a run: the session to be fair to, and the address it came from."""

    session: str
    address: str


def _keys(client: Requester | str) -> tuple[str, str]:
    """A plain string (the command line, tests) is a client that is its own address."""
    if isinstance(client, Requester):
        return client.session, client.address
    return client, client


class SandboxBusy(Busy):
    """No room for this run now. `status_code` is 429 (this client) or 503 (everyone)."""

    reason = "sandbox"

    def __init__(self, status_code: int, retry_after: int, message: str) -> None:
        super().__init__(message)
        self.status_code = status_code
        self.retry_after = retry_after
        self.message = message


@dataclass(eq=False)
class Ticket:
    client: str
    address: str
    start: Callable[[Ticket], None]  # called (under no lock) when the run may begin
    # called (under no lock) when a waiting run loses its place to a session with fewer
    refuse: Callable[[SandboxBusy], None] | None = None
    started: bool = False
    started_at: float = 0.0


class Admission:
    def __init__(
        self,
        max_in_flight: int,
        max_queue: int,
        per_client_in_flight: int,
        per_client_queue: int,
        typical_seconds: float,
        per_address_queue: int | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.max_in_flight = max_in_flight
        self.max_queue = max_queue
        self.per_client_in_flight = per_client_in_flight
        self.per_client_queue = per_client_queue
        self.per_address_queue = per_address_queue or max_queue
        self._typical = typical_seconds  # a run's usual length, for Retry-After
        self._clock = clock
        self._usage: dict[str, tuple[float, float]] = {}  # client: (seconds used, as of when)
        self._lock = threading.Lock()
        self._running: dict[str, int] = {}
        self._queues: OrderedDict[str, deque[Ticket]] = OrderedDict()  # round-robin order
        self._waiting_by_address: dict[str, int] = {}
        self._in_flight = 0
        self._queued = 0

    def enter(
        self,
        client: Requester | str,
        start: Callable[[Ticket], None],
        refuse: Callable[[SandboxBusy], None] | None = None,
    ) -> Ticket:
        """Start the run now, queue it, or raise SandboxBusy. `refuse` is how a queued run is
        told it lost its place to a fairer claim (without it, it never does)."""
        ticket = Ticket(*_keys(client), start, refuse)
        displaced = None
        with self._lock:
            if self._may_start(ticket.client) and not self._queues.get(ticket.client):
                self._begin(ticket)
            else:
                displaced = self._enqueue(ticket)
        if displaced is not None:
            displaced.refuse(
                SandboxBusy(
                    429,
                    self._retry_after(self.per_address_queue / self.max_in_flight),
                    "Your address has many snippets waiting, and this browser the most of them: "
                    "yours gave its place to a classmate's. Try again shortly.",
                )
            )
        if ticket.started:
            ticket.start(ticket)
        return ticket

    def leave(self, ticket: Ticket) -> None:
        """A started run has ended: hand its slot on."""
        with self._lock:
            elapsed = self._clock() - ticket.started_at
            self._charge(ticket.client, max(elapsed - LEAST_CHARGE, 0.0))
            self._in_flight -= 1
            self._running[ticket.client] -= 1
            if not self._running[ticket.client]:
                del self._running[ticket.client]
            ready = self._next()
        for waiting in ready:
            waiting.start(waiting)

    def cancel(self, ticket: Ticket) -> bool:
        """Drop a run still waiting (its caller went away); False if it has started."""
        with self._lock:
            if ticket.started:
                return False
            queue = self._queues.get(ticket.client)
            if queue is not None and ticket in queue:
                queue.remove(ticket)
                self._dequeued(ticket)
                if not queue:
                    del self._queues[ticket.client]
            return True

    def stats(self) -> dict:
        with self._lock:
            return {"in_flight": self._in_flight, "queued": self._queued}

    def _may_start(self, client: str) -> bool:
        return (
            self._in_flight < self.max_in_flight
            and self._running.get(client, 0) < self.per_client_in_flight
        )

    def _begin(self, ticket: Ticket) -> None:
        ticket.started = True
        ticket.started_at = self._clock()
        # charged as it starts, so a client's runs in flight count before they end
        self._charge(ticket.client, LEAST_CHARGE)
        self._in_flight += 1
        self._running[ticket.client] = self._running.get(ticket.client, 0) + 1

    def _enqueue(self, ticket: Ticket) -> Ticket | None:
        """Queue the ticket; returns a waiting ticket that gave it its place, if one did."""
        queue = self._queues.get(ticket.client)
        if queue is not None and len(queue) >= self.per_client_queue:
            wait = self._retry_after(len(queue) / self.per_client_in_flight)
            raise SandboxBusy(429, wait, "You have too many snippets running; try again shortly.")
        displaced = None
        if self._waiting_by_address.get(ticket.address, 0) >= self.per_address_queue:
            displaced = self._displace(ticket, len(queue or ()))
            if displaced is None:
                wait = self._retry_after(self.per_address_queue / self.max_in_flight)
                raise SandboxBusy(
                    429, wait, "Too many snippets are waiting from your address; try again shortly."
                )
        if self._queued >= self.max_queue:
            wait = self._retry_after(self._queued / self.max_in_flight)
            raise SandboxBusy(503, wait, "The server is busy running snippets; try again shortly.")
        self._queues.setdefault(ticket.client, deque()).append(ticket)
        self._queued += 1
        self._waiting_by_address[ticket.address] = (
            self._waiting_by_address.get(ticket.address, 0) + 1
        )
        return displaced

    def _displace(self, ticket: Ticket, waiting: int) -> Ticket | None:
        """The newest waiting run of the session of this address with the most waiting, taken
        out of the queue, if that session has at least two more waiting than this one will."""
        most = None
        for client, queue in self._queues.items():
            ours = queue[0].address == ticket.address and queue[-1].refuse is not None
            if ours and (most is None or len(queue) > len(self._queues[most])):
                most = client
        if most is None or len(self._queues[most]) < waiting + 2:
            return None
        queue = self._queues[most]
        displaced = queue.pop()
        self._dequeued(displaced)
        if not queue:
            del self._queues[most]
        return displaced

    def _dequeued(self, ticket: Ticket) -> None:
        self._queued -= 1
        left = self._waiting_by_address[ticket.address] - 1
        if left:
            self._waiting_by_address[ticket.address] = left
        else:
            del self._waiting_by_address[ticket.address]

    def _next(self) -> list[Ticket]:
        """Tickets to start now: each time, the waiting client that has used least lately (the
        first in turn among equals) that may start one more."""
        ready = []
        now = self._clock()
        while self._in_flight < self.max_in_flight:
            able = [c for c in self._queues if self._running.get(c, 0) < self.per_client_in_flight]
            if not able:
                break
            client = min(able, key=lambda c: self._used(c, now))
            queue = self._queues[client]
            ticket = queue.popleft()
            self._dequeued(ticket)
            if queue:
                self._queues.move_to_end(client)  # its turn is over
            else:
                del self._queues[client]
            self._begin(ticket)
            ready.append(ticket)
        return ready

    def _used(self, client: str, now: float) -> float:
        """The client's run time, each second weighed by how long ago it was used."""
        used, when = self._usage.get(client, (0.0, now))
        return used * 0.5 ** ((now - when) / HALF_LIFE)

    def _charge(self, client: str, seconds: float) -> None:
        now = self._clock()
        self._usage[client] = (self._used(client, now) + seconds, now)
        if len(self._usage) > KEPT_USAGE:
            faded = sorted(self._usage, key=lambda c: self._used(c, now))
            for forgotten in faded[: len(faded) // 10]:  # a tenth at a time: rarely
                del self._usage[forgotten]

    def _retry_after(self, runs_ahead: float) -> int:
        return max(1, math.ceil(runs_ahead * self._typical))
