"""Stored traces: SQLite, one row per snippet, keyed by a hash of the code and the engine version.

The same code always gets the same id, so a stored trace is never run again on view. Writes are
committed in WAL mode with synchronous=FULL before they are acknowledged: a killed server loses
nothing it answered for.
"""

from __future__ import annotations

import base64
import hashlib
import json
import sqlite3
import threading
import time
from pathlib import Path

import engine

SCHEMA = """
CREATE TABLE IF NOT EXISTS traces (
    id TEXT PRIMARY KEY,
    code TEXT NOT NULL,
    engine TEXT NOT NULL,
    trace TEXT NOT NULL,
    created REAL NOT NULL
)
"""

ID_LENGTH = 16  # base32 characters: 80 bits, plenty for content addressing


def trace_id(code: str, engine_version: str = engine.__version__) -> str:
    """The id a snippet's trace is stored under: the same code, the same id."""
    digest = hashlib.sha256(f"{engine_version}\0{code}".encode()).digest()
    return base64.b32encode(digest).decode("ascii").lower()[:ID_LENGTH]


class Store:
    """A small SQLite-backed map from trace id to trace JSON."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._local = threading.local()
        with self._connection() as db:
            db.execute(SCHEMA)

    def _connection(self) -> sqlite3.Connection:
        # one connection per thread: FastAPI runs plain endpoints in a thread pool
        db = getattr(self._local, "db", None)
        if db is None:
            db = sqlite3.connect(self.path, timeout=30, isolation_level=None)
            db.execute("PRAGMA journal_mode=WAL")
            db.execute("PRAGMA synchronous=FULL")
            self._local.db = db
        return db

    def put(self, code: str, trace: dict) -> str:
        """Store a trace and return its id (storing the same code twice keeps the first)."""
        ident = trace_id(code)
        text = json.dumps(trace, separators=(",", ":"), allow_nan=False)
        db = self._connection()
        db.execute(
            "INSERT OR IGNORE INTO traces (id, code, engine, trace, created)"
            " VALUES (?, ?, ?, ?, ?)",
            (ident, code, engine.__version__, text, time.time()),
        )
        return ident

    def get_json(self, ident: str) -> str | None:
        """The stored trace as JSON text, or None for an unknown id."""
        row = self._connection().execute(
            "SELECT trace FROM traces WHERE id = ?", (ident,)
        ).fetchone()
        return row[0] if row else None

    def get(self, ident: str) -> dict | None:
        text = self.get_json(ident)
        return None if text is None else json.loads(text)

    def has(self, ident: str) -> bool:
        row = self._connection().execute("SELECT 1 FROM traces WHERE id = ?", (ident,)).fetchone()
        return row is not None
