"""The store as the app uses it, each operation timed for /metrics (app/metrics.py).

A thin wrapper, outside the store, so that whichever backend is behind it (SQLite, or a
database server) is measured the same way, and the store itself knows nothing of metrics.
Everything not timed passes through untouched.
"""

from __future__ import annotations

import time
from functools import wraps
from typing import Any

# what is timed: every operation that reaches the database (owner and public_id only hash)
TIMED = frozenset(
    ("find", "put", "pin", "get_json", "get", "code_of", "engine_of", "has", "viewed", "usage")
    + ("evict", "total_bytes")
)


class TimedStore:
    def __init__(self, store: Any, seconds) -> None:
        """`store` as it is, with each operation's time observed in `seconds`, a histogram
        labelled by operation."""
        self.inner = store
        self._seconds = seconds

    def __getattr__(self, name: str) -> Any:
        found = getattr(self.inner, name)
        if name not in TIMED or not callable(found):
            return found
        observed = self._seconds.labels(name)

        @wraps(found)
        def timed(*args, **kwargs):
            start = time.perf_counter()
            try:
                return found(*args, **kwargs)
            finally:
                observed.observe(time.perf_counter() - start)

        # kept: the next call finds it without coming here (a test may still replace it)
        object.__setattr__(self, name, timed)
        return timed
