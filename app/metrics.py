"""What the server counts, for Prometheus to read at /metrics (docs/deploying.md lists them).

Every metric is defined here, named `gradtrace_*` with its unit in its name. Each app gets a
registry of its own, not prometheus_client's global one: a test makes many apps, and each must
count from zero. Counters and histograms are moved where things happen (one dictionary lookup
and an addition: nothing on a hot path waits); levels (queues, sizes, cache hits) are read from
their owners only when /metrics is asked, by `Levels`.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator
from typing import Any

from prometheus_client import CollectorRegistry, Counter, Histogram, disable_created_metrics
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily
from prometheus_client.exposition import CONTENT_TYPE_LATEST, generate_latest

log = logging.getLogger("gradtrace.metrics")
# a `_created` timestamp beside every counter doubles what is scraped, for nothing Prometheus
# needs (it sees a restart as a counter going down)
disable_created_metrics()

CONTENT_TYPE = CONTENT_TYPE_LATEST

# seconds: a run is milliseconds to its 5 s wall limit, a page 10 ms to its 4 s budget, an
# export up to its 60 s budget; a request all of these, or a cached page in a millisecond
FAST = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0)
SLOW = (0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 20.0, 40.0, 60.0, 120.0)
STORE = (0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.5, 1.0, 5.0)


class Metrics:
    """One app's metrics, in its own registry."""

    def __init__(self) -> None:
        self.registry = registry = CollectorRegistry()
        self.http_requests = Counter(
            "gradtrace_http_requests_total",
            "HTTP requests answered, by method, route template and status code",
            ["method", "route", "status"],
            registry=registry,
        )
        self.http_seconds = Histogram(
            "gradtrace_http_request_duration_seconds",
            "Time from a request's arrival to the end of its answer, by method and route",
            ["method", "route"],
            buckets=FAST,
            registry=registry,
        )
        self.runs = Counter(
            "gradtrace_runs_total",
            "Snippets run in the sandbox, by how they ended (app/sandbox/statuses.py)",
            ["status"],
            registry=registry,
        )
        self.sandbox_wait = Histogram(
            "gradtrace_sandbox_queue_wait_seconds",
            "Time a run waited for a place in the sandbox",
            buckets=FAST,
            registry=registry,
        )
        self.sandbox_run = Histogram(
            "gradtrace_sandbox_run_seconds",
            "Time a run took in the sandbox, from its start to its trace read",
            buckets=FAST,
            registry=registry,
        )
        self.busy_answers = Counter(
            "gradtrace_busy_answers_total",
            "Requests refused for want of room (Retry-After), by what was full",
            ["reason"],
            registry=registry,
        )
        self.render_seconds = Histogram(
            "gradtrace_render_seconds",
            "Time a render worker took over a task, by kind (page, narration, quiz, export, "
            "picture) and outcome (ok, failed)",
            ["kind", "outcome"],
            buckets=SLOW,
            registry=registry,
        )
        self.exports = Counter(
            "gradtrace_exports_total",
            "Exports and pictures answered (drawn now or kept), by format",
            ["format"],
            registry=registry,
        )
        self.export_seconds = Histogram(
            "gradtrace_export_seconds",
            "Time a render worker took to draw an export or picture, by format",
            ["format"],
            buckets=SLOW,
            registry=registry,
        )
        self.store_seconds = Histogram(
            "gradtrace_store_operation_seconds",
            "Time a store operation took, by operation",
            ["operation"],
            buckets=STORE,
            registry=registry,
        )

        self.class_events = Counter(
            "gradtrace_class_events_total",
            "What happened in classes: started, joined (a new member), answered (an answer "
            "recorded)",
            ["event"],
            registry=registry,
        )

    def ran(self, status: str, waited: float | None, ran: float | None) -> None:
        """A run ended with `status`, having waited and run this many seconds (None: it never
        reached the sandbox, as a snippet over the size limit does not)."""
        self.runs.labels(status).inc()
        if waited is not None and ran is not None:
            self.sandbox_wait.observe(waited)
            self.sandbox_run.observe(ran)

    def rendered(self, task: dict, seconds: float, ok: bool) -> None:
        """A render worker finished `task` (app/render_pool.py's request) in `seconds`."""
        kind = str(task.get("kind"))
        self.render_seconds.labels(kind, "ok" if ok else "failed").observe(seconds)
        if ok and kind in ("export", "picture"):
            self.export_seconds.labels(export_format(task)).observe(seconds)

    def watch(self, **owners: Any) -> None:
        """Read levels from these owners at each scrape: `store`, `pool`, `cache`, `sandbox`
        (a function answering the running sandbox client, or None), `class_events` (the
        classes' streams: app/class_events.py)."""
        self.registry.register(Levels(**owners))

    def exposition(self) -> bytes:
        """The text /metrics answers."""
        return generate_latest(self.registry)


def export_format(task: dict) -> str:
    """An export's format (html, zip, pdf, gif) or a picture's kind (png, svg)."""
    asked = task.get("request") or {}
    return str(asked.get("format") if task.get("kind") == "export" else asked.get("kind"))


class Levels:
    """The levels of the moment, read at scrape time from what holds them."""

    def __init__(
        self,
        *,
        store: Any,
        pool: Any,
        cache: Any,
        sandbox: Callable[[], Any],
        class_events: Any,
    ) -> None:
        self.store, self.pool, self.cache, self.sandbox = store, pool, cache, sandbox
        self.class_events = class_events

    def collect(self) -> Iterator:
        yield from self._sandbox()
        yield from self._render()
        yield from self._cache()
        yield from self._store()
        yield _gauge(
            "gradtrace_class_streams",
            "Classes' event streams open on this server (instructors' and students' pages)",
            self.class_events.open_streams,
        )

    def _sandbox(self) -> Iterator:
        client = self.sandbox()
        load = client.admission.stats() if client is not None else {"queued": 0, "in_flight": 0}
        yield _gauge(
            "gradtrace_sandbox_queue_depth", "Runs waiting for the sandbox", load["queued"]
        )
        yield _gauge(
            "gradtrace_sandbox_runs_in_flight", "Runs in the sandbox now", load["in_flight"]
        )

    def _render(self) -> Iterator:
        load = self.pool.load()
        yield _gauge("gradtrace_render_tasks", "Render tasks running or waiting", load["tasks"])
        yield _gauge(
            "gradtrace_render_workers_alive", "Render worker processes running", load["alive"]
        )

    def _cache(self) -> Iterator:
        hits = CounterMetricFamily(
            "gradtrace_page_cache_hits", "Pages (and exports) answered from memory"
        )
        hits.add_metric([], self.cache.hits)
        yield hits
        misses = CounterMetricFamily(
            "gradtrace_page_cache_misses",
            "Pages (and exports) not in memory: drawn, or waited for while drawn",
        )
        misses.add_metric([], self.cache.misses)
        yield misses
        yield _gauge("gradtrace_page_cache_bytes", "What the page cache holds", self.cache.bytes)

    def _store(self) -> Iterator:
        try:
            size, count = self.store.total_bytes(), self.store.trace_count()
        except Exception:
            # a scrape must still answer the rest while the store is down; /healthz says why
            log.warning("metrics: the store's size could not be read", exc_info=True)
            return
        yield _gauge("gradtrace_store_bytes", "Stored traces' compressed size", size)
        yield _gauge("gradtrace_store_traces", "Traces stored", count)


def _gauge(name: str, documentation: str, value: float) -> GaugeMetricFamily:
    return GaugeMetricFamily(name, documentation, value=value)
