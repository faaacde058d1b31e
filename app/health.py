"""/healthz's report of the parts the server needs: the store, the sandbox, the render pool.

/healthz is answered on the event loop, so that under load it says how soon the server answers
(app/routes/watching.py). The store is the one part that must be asked, and asking may block (a
database busy writing, or unreachable): it is asked on a thread of its own, never the shared
pool's, at most once a second however often /healthz is called, and not waited for past
STORE_PATIENCE (then it is `slow`, and the next check asks again).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import time
from typing import Any

from app import execution

STORE_PATIENCE = 0.5  # seconds /healthz waits for the store
KEPT_FOR = 1.0  # seconds a store check answers for
PROBE_ID = "a" * 26  # no trace has it (ids are digests): a lookup by key that finds nothing


class Health:
    def __init__(self, store: Any, pool: Any) -> None:
        self.store = getattr(store, "inner", store)  # the store itself: its probes are not traffic
        self.pool = pool
        self._thread = concurrent.futures.ThreadPoolExecutor(1, "gradtrace-health")
        self._checking: asyncio.Future | None = None
        self._checked: tuple[float, dict] | None = None  # when, and what was found

    async def report(self) -> dict:
        """Each part's state and numbers; `ok` is whether all of them are ok."""
        components = {
            "store": await self._store(),
            "sandbox": _sandbox(),
            "render_pool": self._render_pool(),
        }
        ok = all(part["state"] == "ok" for part in components.values())
        return {"ok": ok, "components": components}

    async def _store(self) -> dict:
        now = time.monotonic()
        if self._checked is not None and now - self._checked[0] < KEPT_FOR:
            return self._checked[1]
        if self._checking is None or self._checking.done():
            loop = asyncio.get_running_loop()
            self._checking = loop.run_in_executor(self._thread, self._check_store)
        try:
            found = await asyncio.wait_for(asyncio.shield(self._checking), STORE_PATIENCE)
        except TimeoutError:
            return {"state": "slow", "latency_ms": None}
        self._checked = (time.monotonic(), found)
        return found

    def _check_store(self) -> dict:
        start = time.perf_counter()
        try:
            self.store.has(PROBE_ID)
            size = self.store.total_bytes()
        except Exception as error:
            return {"state": "failing", "error": type(error).__name__, "latency_ms": None}
        latency = (time.perf_counter() - start) * 1000
        return {"state": "ok", "latency_ms": round(latency, 2), "bytes": size}

    def _render_pool(self) -> dict:
        load = self.pool.load()
        # workers start when first needed, and a dead one is replaced by the next task: none
        # alive is a pool not started yet, or one recovering, not a failure
        return {"state": "ok", **load}


def _sandbox() -> dict:
    client = execution.running_sandbox()
    if client is None:
        return {"state": "starting", "zygote_alive": False, "in_flight": 0, "queued": 0}
    return client.health()
