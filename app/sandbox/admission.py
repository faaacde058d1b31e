"""Who runs next: at most `max_in_flight` runs at once, a bounded queue, and fairness by client.

A client is a browser session (the web app's signed cookie) or, for callers without one, their
address. Each client has at most `per_client_in_flight` runs going and `per_client_queue`
waiting; slots are handed out round-robin over clients with work waiting, so one client's stream
of endless loops only ever holds its own share of the slots. A classroom behind one address is
thirty clients, not one; but all the sessions of one address together may have at most
`per_address_queue` runs waiting, so minting cookies buys a flood nothing. Past a client's own
queue, or its address's, the answer is 429; past the shared queue 503; both say when to retry.
"""

from __future__ import annotations

import math
import threading
from collections import OrderedDict, deque
from collections.abc import Callable
from dataclasses import dataclass


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


class SandboxBusy(Exception):
    """No room for this run now. `status_code` is 429 (this client) or 503 (everyone)."""

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
    started: bool = False


class Admission:
    def __init__(
        self,
        max_in_flight: int,
        max_queue: int,
        per_client_in_flight: int,
        per_client_queue: int,
        typical_seconds: float,
        per_address_queue: int | None = None,
    ) -> None:
        self.max_in_flight = max_in_flight
        self.max_queue = max_queue
        self.per_client_in_flight = per_client_in_flight
        self.per_client_queue = per_client_queue
        self.per_address_queue = per_address_queue or max_queue
        self._typical = typical_seconds  # a run's usual length, for Retry-After
        self._lock = threading.Lock()
        self._running: dict[str, int] = {}
        self._queues: OrderedDict[str, deque[Ticket]] = OrderedDict()  # round-robin order
        self._waiting_by_address: dict[str, int] = {}
        self._in_flight = 0
        self._queued = 0

    def enter(self, client: Requester | str, start: Callable[[Ticket], None]) -> Ticket:
        """Start the run now, queue it, or raise SandboxBusy."""
        ticket = Ticket(*_keys(client), start)
        with self._lock:
            if self._may_start(ticket.client) and not self._queues.get(ticket.client):
                self._begin(ticket)
            else:
                self._enqueue(ticket)
        if ticket.started:
            ticket.start(ticket)
        return ticket

    def leave(self, ticket: Ticket) -> None:
        """A started run has ended: hand its slot on."""
        with self._lock:
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
        self._in_flight += 1
        self._running[ticket.client] = self._running.get(ticket.client, 0) + 1

    def _enqueue(self, ticket: Ticket) -> None:
        queue = self._queues.get(ticket.client)
        if queue is not None and len(queue) >= self.per_client_queue:
            wait = self._retry_after(len(queue) / self.per_client_in_flight)
            raise SandboxBusy(429, wait, "You have too many snippets running; try again shortly.")
        if self._waiting_by_address.get(ticket.address, 0) >= self.per_address_queue:
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

    def _dequeued(self, ticket: Ticket) -> None:
        self._queued -= 1
        left = self._waiting_by_address[ticket.address] - 1
        if left:
            self._waiting_by_address[ticket.address] = left
        else:
            del self._waiting_by_address[ticket.address]

    def _next(self) -> list[Ticket]:
        """Tickets to start now, one client at a time in turn."""
        ready = []
        progress = True
        while progress and self._in_flight < self.max_in_flight:
            progress = False
            for client in list(self._queues):
                if self._in_flight >= self.max_in_flight:
                    break
                if self._running.get(client, 0) >= self.per_client_in_flight:
                    continue
                queue = self._queues[client]
                ticket = queue.popleft()
                self._dequeued(ticket)
                if queue:
                    self._queues.move_to_end(client)  # its turn is over
                else:
                    del self._queues[client]
                self._begin(ticket)
                ready.append(ticket)
                progress = True
        return ready

    def _retry_after(self, runs_ahead: float) -> int:
        return max(1, math.ceil(runs_ahead * self._typical))
