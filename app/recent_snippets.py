"""The snippets of recent live runs, by the id their trace would be stored under.

A live run (typing in the editor) is not stored, yet its page's address already names its id
(`/t/{id}`): a reload, or a link copied from the address bar, would otherwise find nothing.
Remembering the code for a while lets that page run and store it instead of answering 404.
Held in this process only and bounded in both count and bytes (the oldest forgotten first): a
flood of edits costs a fixed amount of memory, and a forgotten one is only a 404, as before.
"""

from __future__ import annotations

import threading
from collections import OrderedDict

from app.config import MIB

RECENT_SNIPPETS = 4_000
RECENT_BYTES = 16 * MIB


class RecentSnippets:
    """An LRU map of trace id → code, at most `count` snippets and `size` bytes of code."""

    def __init__(self, count: int = RECENT_SNIPPETS, size: int = RECENT_BYTES) -> None:
        self.count = count
        self.size = size
        self._codes: OrderedDict[str, str] = OrderedDict()
        self._bytes = 0
        self._lock = threading.Lock()  # asked from the event loop and from worker threads

    def remember(self, ident: str, code: str) -> None:
        cost = len(code.encode("utf-8", "surrogatepass"))
        if cost > self.size:
            return
        with self._lock:
            self._drop(ident)
            self._codes[ident] = code
            self._bytes += cost
            while len(self._codes) > self.count or self._bytes > self.size:
                self._drop(next(iter(self._codes)))

    def code_of(self, ident: str) -> str | None:
        with self._lock:
            return self._codes.get(ident)

    def forget(self, ident: str) -> None:
        with self._lock:
            self._drop(ident)

    def __len__(self) -> int:
        return len(self._codes)

    @property
    def bytes(self) -> int:
        return self._bytes

    def _drop(self, ident: str) -> None:
        code = self._codes.pop(ident, None)
        if code is not None:
            self._bytes -= len(code.encode("utf-8", "surrogatepass"))
