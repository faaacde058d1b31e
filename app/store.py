"""Stored traces: SQLite, one row per snippet, found by a hash of the code and the engine version.

The same code is never run twice: its hash finds its stored trace. That hash stays inside; a
trace's public id, which its links name, is a MAC of it keyed with the server's secret, so
knowing a snippet tells nobody its id, nor whether anyone ran it (traces stored before ids were
keyed answer at their old id, their hash). Writes are committed in WAL mode with
synchronous=FULL before they are acknowledged: a killed server loses nothing it answered for.
The files are the server's alone (0600, in a 0700 folder).

The store is bounded, because anyone can add to it (docs/storage.md):
- each trace is kept zlib-compressed, and at most `max_trace_bytes` of it: a larger one is kept
  cut to whole events, with an `output_limit` outcome that says so;
- who stored what (keyed hashes of the session and the address, never the address itself) is
  kept for the quotas, which count the traces and bytes stored within a window;
- anonymous traces nobody ever opened are evicted after `unviewed_seconds`; past
  `max_total_bytes` those the fewest others opened go first (distinct addresses, never their
  owner's), the least recently seen of them first; and an owner's address holding more than its
  share of the store has its own least seen traces evicted. Pinned traces (the site's own:
  lessons, examples) are never evicted.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import sqlite3
import threading
import time
import zlib
from dataclasses import dataclass
from pathlib import Path

import engine
from app import trace_cut
from app.sandbox import statuses

SCHEMA_VERSION = 4
SCHEMA = """
CREATE TABLE IF NOT EXISTS traces (
    id TEXT PRIMARY KEY,           -- public: what links name
    hash TEXT NOT NULL,            -- trace_id(code): what finds it again, never shown
    code TEXT NOT NULL,
    engine TEXT NOT NULL,
    trace BLOB NOT NULL,           -- zlib-compressed JSON
    size INTEGER NOT NULL,         -- bytes of `trace`
    created REAL NOT NULL,
    session TEXT,                  -- keyed hashes of who stored it: quotas and shares
    address TEXT,
    pinned INTEGER NOT NULL DEFAULT 0,
    viewers INTEGER NOT NULL DEFAULT 0,  -- how many others opened it: at most MAX_VIEWERS
    last_viewed REAL               -- by anyone, its owner too
);
CREATE UNIQUE INDEX IF NOT EXISTS traces_by_hash ON traces (hash);
CREATE INDEX IF NOT EXISTS traces_by_session ON traces (session, created);
CREATE INDEX IF NOT EXISTS traces_by_address ON traces (address, created, size);
CREATE INDEX IF NOT EXISTS traces_by_worth
    ON traces (pinned, viewers, coalesce(last_viewed, created));
CREATE INDEX IF NOT EXISTS traces_by_owners_worth
    ON traces (address, viewers, coalesce(last_viewed, created));
-- the addresses (keyed hashes) other than its owner's that opened a trace
CREATE TABLE IF NOT EXISTS viewers (
    trace TEXT NOT NULL,
    viewer TEXT NOT NULL,
    PRIMARY KEY (trace, viewer)
) WITHOUT ROWID;
"""

ID_LENGTH = 16  # base32 characters: 80 bits, past guessing and plenty for content addressing
SWEEP_EVERY = 3600.0  # seconds between sweeps for unseen traces, done by the next write
COMPRESSION = 6  # zlib's default: a 14 MiB trace in about a tenth of a second, to a tenth
# Viewers counted per trace: eviction compares small counts (a flood's none or one against a
# class's twenty), so past this a trace's count stops and so do its rows.
MAX_VIEWERS = 256
# the least seen first: fewest viewers, then the longest since anyone opened it (or stored it)
LEAST_SEEN = "ORDER BY viewers, coalesce(last_viewed, created)"


def trace_id(code: str, engine_version: str = engine.__version__) -> str:
    """The hash a snippet's trace is found by: the same code, the same hash. Anyone can work
    it out, so it names no trace to the outside (Store.public_id) but those stored before ids
    were keyed, whose id it was. The command line names a trace it exports by it."""
    digest = hashlib.sha256(f"{engine_version}\0{code}".encode()).digest()
    return base64.b32encode(digest).decode("ascii").lower()[:ID_LENGTH]


@dataclass(frozen=True)
class StoreLimits:
    max_trace_bytes: int = 4 * 1024 * 1024  # compressed, per trace
    max_total_bytes: int = 2 * 1024 * 1024 * 1024  # compressed, all traces
    unviewed_seconds: float = 7 * 24 * 3600.0  # an anonymous trace nobody opened
    owner_share_percent: float = 5.0  # of max_total_bytes, what one owner's address may hold

    @property
    def owner_share_bytes(self) -> float:
        return self.max_total_bytes * self.owner_share_percent / 100


@dataclass(frozen=True)
class Owner:
    """A client as keyed hashes of its session and address (Store.owner makes them): who
    stored a trace, or who opens one."""

    session: str | None
    address: str | None


@dataclass(frozen=True)
class Usage:
    traces: int
    bytes: int


class Store:
    """A bounded SQLite-backed map from trace id to trace."""

    def __init__(
        self, path: str | Path, limits: StoreLimits | None = None, owner_key: bytes = b""
    ) -> None:
        self.path = Path(path)
        self.limits = limits or StoreLimits()
        self._key = owner_key[:64]  # the session secret: BLAKE2 takes 64 bytes of key
        _private_file(self.path)
        self._local = threading.local()
        self._write_lock = threading.Lock()  # the running total and eviction
        db = self._connection()
        _migrate(db)
        self._total = db.execute("SELECT total(size) FROM traces").fetchone()[0]
        self.evict()

    def _connection(self) -> sqlite3.Connection:
        # one connection per thread: FastAPI runs plain endpoints in a thread pool
        db = getattr(self._local, "db", None)
        if db is None:
            db = sqlite3.connect(self.path, timeout=30, isolation_level=None)
            db.execute("PRAGMA journal_mode=WAL")
            db.execute("PRAGMA synchronous=FULL")
            self._local.db = db
        return db

    # ***** writing *****

    def owner(self, session: str | None, address: str | None) -> Owner:
        """An owner whose session and address are keyed hashes: the store keeps no address."""

        def keyed(value: str | None) -> str | None:
            return None if value is None else self._keyed(value, b"", 12).hex()

        return Owner(keyed(session), keyed(address))

    def public_id(self, code: str) -> str:
        """The id a new trace of `code` is stored under, and its links name: a keyed MAC of its
        hash, so it proves nothing. The same code, the same id, while the key stays the same
        (and a stored trace keeps its id whatever the key becomes)."""
        digest = self._keyed(trace_id(code), b"public id", ID_LENGTH * 5 // 8)
        return base64.b32encode(digest).decode("ascii").lower()

    def _keyed(self, value: str, purpose: bytes, size: int) -> bytes:
        # BLAKE2's own MAC; `purpose` (its personalization) keeps one use's values from another's
        return hashlib.blake2b(
            value.encode(), key=self._key, person=purpose, digest_size=size
        ).digest()

    def put(
        self, code: str, trace: dict, *, owner: Owner | None = None, pinned: bool = False
    ) -> tuple[str, dict]:
        """Store a trace; returns its public id and the trace as kept (cut if it was too large).
        Storing the same code twice keeps the first, and its id; pinning an existing trace
        pins it. A pinned trace is nobody's (as `pin` says). An owner's address past its share
        of the store loses its own least seen traces; the trace just stored is never evicted
        by its own put."""
        ident, found_by = self.public_id(code), trace_id(code)
        blob, trace = self._fit(trace)
        owner = Owner(None, None) if pinned or owner is None else owner
        with self._write_lock:
            db = self._connection()
            inserted = db.execute(
                "INSERT OR IGNORE INTO traces"
                " (id, hash, code, engine, trace, size, created, session, address, pinned)"
                " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (ident, found_by, code, engine.__version__, blob, len(blob), time.time(),
                 owner.session, owner.address, int(pinned)),
            ).rowcount  # fmt: skip
            if inserted:
                self._total += len(blob)
                if owner.address is not None:
                    self._keep_share_locked(owner.address, ident)
            else:
                query = "SELECT id FROM traces WHERE hash = ?"
                (ident,) = db.execute(query, (found_by,)).fetchone()
                if pinned:
                    self.pin(ident)
            now = time.time()
            if self._total > self.limits.max_total_bytes or now >= self._next_sweep:
                self._evict_locked(now, spared=ident)
        return ident, trace

    def pin(self, ident: str) -> None:
        """Make a stored trace the site's own (a lesson's, an example's): never evicted, and
        nobody's, so it counts against no one's quota or share."""
        self._connection().execute(
            "UPDATE traces SET pinned = 1, session = NULL, address = NULL"
            " WHERE id = ? AND pinned = 0",
            (ident,),
        )

    def _fit(self, trace: dict) -> tuple[bytes, dict]:
        """The compressed trace, cut to whole events if it is larger than a trace may be."""
        last: list = [None, b""]  # the last trace measured, and its compressed bytes

        def size(candidate: dict) -> int:
            last[:] = candidate, _compress(candidate)
            return len(last[1])

        limit = self.limits.max_trace_bytes
        fitted = trace_cut.fit(trace, size, limit, lambda kept: _cut_outcome(limit, kept))
        return (last[1] if last[0] is fitted else _compress(fitted)), fitted

    # ***** reading *****

    def find(self, code: str) -> str | None:
        """The public id of the stored trace of `code`, or None (the trace is not read)."""
        query = "SELECT id FROM traces WHERE hash = ?"
        row = self._connection().execute(query, (trace_id(code),)).fetchone()
        return None if row is None else row[0]

    def get_json(self, ident: str) -> str | None:
        """The stored trace as JSON text, or None for an unknown id."""
        row = (
            self._connection().execute("SELECT trace FROM traces WHERE id = ?", (ident,)).fetchone()
        )
        return zlib.decompress(row[0]).decode() if row else None

    def get(self, ident: str) -> dict | None:
        text = self.get_json(ident)
        return None if text is None else json.loads(text)

    def code_of(self, ident: str) -> str | None:
        """The code of a stored trace, or None for an unknown id (the trace is not read)."""
        row = (
            self._connection().execute("SELECT code FROM traces WHERE id = ?", (ident,)).fetchone()
        )
        return row[0] if row else None

    def engine_of(self, ident: str) -> str | None:
        """The engine version that recorded a stored trace, or None for an unknown id."""
        query = "SELECT engine FROM traces WHERE id = ?"
        row = self._connection().execute(query, (ident,)).fetchone()
        return row[0] if row else None

    def has(self, ident: str) -> bool:
        row = self._connection().execute("SELECT 1 FROM traces WHERE id = ?", (ident,)).fetchone()
        return row is not None

    def viewed(self, ident: str, viewer: Owner | None = None) -> None:
        """Someone opened this trace's page or asked for it: it is not to be evicted as unseen.
        A `viewer` who is not its owner (neither its session nor its address) counts once per
        address: what a client stores and opens itself, or from fresh cookies, proves nothing
        to anyone else. None is a reader nobody knows: seen, by no viewer."""
        db = self._connection()
        with db:
            db.execute("BEGIN IMMEDIATE")
            query = "SELECT session, address, viewers FROM traces WHERE id = ?"
            row = db.execute(query, (ident,)).fetchone()
            if row is None:
                return
            session, address, viewers = row
            added = 0
            if (
                viewer is not None
                and viewer.address not in (None, address)
                and (viewer.session is None or viewer.session != session)
                and viewers < MAX_VIEWERS
            ):
                added = db.execute(
                    "INSERT OR IGNORE INTO viewers (trace, viewer) VALUES (?, ?)",
                    (ident, viewer.address),
                ).rowcount
            db.execute(
                "UPDATE traces SET viewers = viewers + ?, last_viewed = ? WHERE id = ?",
                (added, time.time(), ident),
            )

    def usage(self, owner: Owner, since: float) -> tuple[Usage, Usage]:
        """What this owner's session and address have stored since `since`."""
        db = self._connection()

        def of(column: str, value: str | None) -> Usage:
            if value is None:
                return Usage(0, 0)
            count, size = db.execute(
                f"SELECT count(*), total(size) FROM traces WHERE {column} = ? AND created >= ?",
                (value, since),
            ).fetchone()
            return Usage(count, int(size))

        return of("session", owner.session), of("address", owner.address)

    def total_bytes(self) -> int:
        return int(self._total)

    # ***** eviction *****

    def evict(self, now: float | None = None) -> int:
        """Drop unpinned traces nobody opened within `unviewed_seconds`, then the least seen
        until the store fits `max_total_bytes`. Returns how many went."""
        with self._write_lock:
            return self._evict_locked(time.time() if now is None else now)

    def _evict_locked(self, now: float, spared: str | None = None) -> int:
        self._next_sweep = now + SWEEP_EVERY
        old = now - self.limits.unviewed_seconds
        unseen = self._connection().execute(
            "SELECT id FROM traces WHERE pinned = 0 AND viewers = 0 AND last_viewed IS NULL"
            " AND created < ?",
            (old,),
        )
        gone = self._drop([ident for (ident,) in unseen])
        return gone + self._evict_least_seen(self._total - self.limits.max_total_bytes, spared)

    def _keep_share_locked(self, address: str, stored: str) -> None:
        """Hold an owner's address to its share of the store: a flood evicts itself."""
        query = "SELECT total(size) FROM traces WHERE address = ?"
        (held,) = self._connection().execute(query, (address,)).fetchone()
        self._evict_least_seen(held - self.limits.owner_share_bytes, stored, address)

    def _evict_least_seen(self, excess: float, spared: str | None, address: str | None = None):
        """Evict the least seen unpinned traces but `spared` (only `address`'s, when it is
        given) until `excess` bytes went, or none is left. Returns how many went."""
        if excess <= 0:
            return 0
        query = "SELECT id, size FROM traces"
        params: tuple = (spared,)
        if address is not None:
            # by the owner's own index: the planner takes the whole store's, and walks it
            query += " INDEXED BY traces_by_owners_worth WHERE address = ? AND"
            params = (address, spared)
        else:
            query += " WHERE"
        query += f" pinned = 0 AND id IS NOT ? {LEAST_SEEN}"
        chosen, freed = [], 0
        rows = self._connection().execute(query, params)
        for ident, size in rows:
            chosen.append(ident)
            freed += size
            if freed >= excess:
                break
        rows.close()
        return self._drop(chosen)

    def _drop(self, idents: list[str]) -> int:
        """Delete these traces and their viewers; returns how many were still there."""
        db = self._connection()
        with db:
            db.execute("BEGIN IMMEDIATE")
            sizes = []
            for ident in idents:
                sizes += db.execute("DELETE FROM traces WHERE id = ? RETURNING size", (ident,))
                db.execute("DELETE FROM viewers WHERE trace = ?", (ident,))
        self._total -= sum(size for (size,) in sizes)
        return len(sizes)


def _compress(trace: dict) -> bytes:
    text = json.dumps(trace, separators=(",", ":"), allow_nan=False)
    return zlib.compress(text.encode(), COMPRESSION)


def _cut_outcome(limit: int, kept: int) -> dict:
    message = (
        f"The trace was larger than the {limit // (1024 * 1024)} MiB a stored trace may take "
        f"(compressed); it keeps the first {kept:,} events."
    )
    return {"status": statuses.OUTPUT_LIMIT, "message": message}


def _private_file(path: Path) -> None:
    """Create the folder (0700) and the database file (0600) before SQLite does, so neither
    is ever readable by others; SQLite gives its -wal and -shm files the database's mode. A
    folder that was already there (say /tmp) keeps its mode; the files are made private."""
    if not path.parent.exists():
        path.parent.mkdir(parents=True, mode=0o700)
        os.chmod(path.parent, 0o700)  # whatever the umask left of it
    os.close(os.open(path, os.O_CREAT | os.O_RDWR, 0o600))
    for name in (path, Path(f"{path}-wal"), Path(f"{path}-shm")):
        if name.exists():
            os.chmod(name, 0o600)


def _migrate(db: sqlite3.Connection) -> None:
    """Bring an older database up to SCHEMA_VERSION: version 1 kept plain JSON text, version 2
    counted every read as a view, and before version 4 a trace's id was its hash."""
    version = db.execute("PRAGMA user_version").fetchone()[0]
    if version >= SCHEMA_VERSION:
        return
    columns = {row[1] for row in db.execute("PRAGMA table_info(traces)")}
    db.execute("BEGIN IMMEDIATE")
    if columns and "size" not in columns:
        db.execute("ALTER TABLE traces RENAME TO traces_v1")
        _create(db)
        rows = db.execute("SELECT id, code, engine, trace, created FROM traces_v1").fetchall()
        for ident, code, engine_version, text, created in rows:
            blob = zlib.compress(text.encode(), COMPRESSION)
            db.execute(
                "INSERT INTO traces (id, hash, code, engine, trace, size, created, viewers)"
                " VALUES (?, ?, ?, ?, ?, ?, ?, 1)",  # older traces count as seen: keep them
                (ident, ident, code, engine_version, blob, len(blob), created),
            )
        db.execute("DROP TABLE traces_v1")
    if "views" in columns:
        # Its views say someone looked, not how many did (a loop of reads made any count):
        # one viewer each, for those seen at all.
        db.execute("ALTER TABLE traces RENAME COLUMN views TO viewers")
        db.execute("UPDATE traces SET viewers = min(viewers, 1)")
        db.execute("DROP INDEX traces_by_age")
        db.execute("DROP INDEX traces_by_address")  # made again, with the sizes
    if "size" in columns and "hash" not in columns:
        # its ids were hashes: each trace keeps answering at its own, and is found by it
        db.execute("ALTER TABLE traces ADD COLUMN hash TEXT")
        db.execute("UPDATE traces SET hash = id")
    _create(db)
    db.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
    db.execute("COMMIT")


def _create(db: sqlite3.Connection) -> None:
    # statement by statement: executescript would commit the migration's transaction
    for statement in SCHEMA.split(";"):
        if statement.strip():
            db.execute(statement)
