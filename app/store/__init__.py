"""Stored traces: one row per snippet, found by a hash of the code and the engine version.

The same code is never run twice: its hash finds its stored trace. That hash stays inside; a
trace's public id, which its links name, is a MAC of it keyed with the server's secret, so
knowing a snippet tells nobody its id, nor whether anyone ran it (traces stored before ids were
keyed answer at their old id, their hash). A write is committed, durably, before it is
acknowledged: a killed server loses nothing it answered for.

Two backends behind this one store (`open_store` picks by the location): SQLite, a file beside
the server, the default with nothing to set up (app/store/sqlite.py); and PostgreSQL, for many
servers sharing one store (app/store/postgres.py). What the store does, and the SQL it does it
with, is written here once; the backends differ in connections, transactions and locks, and
their schemas and migrations.

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
The total, the quotas and the eviction live in the database, so they hold across servers.
"""

from __future__ import annotations

import base64
import hashlib
import json
import math
import secrets
import time
import zlib
from dataclasses import dataclass
from pathlib import Path

import engine
from app import trace_cut
from app.sandbox import statuses
from app.store.classes import ClassStore
from app.store.sqlite import COMPRESSION, SQLiteDatabase

SCHEMA_VERSION = 6
ID_LENGTH = 16  # base32 characters: 80 bits, past guessing and plenty for content addressing
SWEEP_EVERY = 3600.0  # seconds between sweeps for unseen traces, done by the next write
# Viewers counted per trace: eviction compares small counts (a flood's none or one against a
# class's twenty), so past this a trace's count stops and so do its rows.
MAX_VIEWERS = 256
# the least seen first: fewest viewers, then the longest since anyone opened it (or stored it)
LEAST_SEEN = "ORDER BY viewers, coalesce(last_viewed, created)"
EVICTION_BATCH = 64  # candidates read at a time: eviction usually needs one or two
# what a copy or a check reads of each trace, in this order
COLUMNS = "id, hash, code, engine, trace, size, created, session, address, pinned, viewers"
COLUMNS += ", last_viewed"
URL_SCHEMES = ("postgresql://", "postgres://")


def trace_id(code: str, engine_version: str = engine.__version__) -> str:
    """The hash a snippet's trace is found by: the same code, the same hash. Anyone can work
    it out, so it names no trace to the outside (Store.public_id) but those stored before ids
    were keyed, whose id it was. The command line names a trace it exports by it."""
    digest = hashlib.sha256(f"{engine_version}\0{code}".encode()).digest()
    return base64.b32encode(digest).decode("ascii").lower()[:ID_LENGTH]


def is_url(location: str | Path) -> bool:
    """Whether a store's location is a PostgreSQL URL (else it is a SQLite file's path)."""
    return isinstance(location, str) and location.startswith(URL_SCHEMES)


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


def open_store(
    location: str | Path,
    limits: StoreLimits | None = None,
    owner_key: bytes = b"",
    *,
    sweep: bool = True,
) -> Store:
    """The store at `location`: a postgresql:// URL, or a SQLite file's path."""
    return Store(location, limits, owner_key, sweep=sweep)


class Store:
    """A bounded map from trace id to trace, in SQLite or PostgreSQL."""

    def __init__(
        self,
        location: str | Path,
        limits: StoreLimits | None = None,
        owner_key: bytes = b"",
        *,
        sweep: bool = True,
    ) -> None:
        """`sweep=False` opens it without evicting anything (the command line's copy and
        check, whose limits may not be the server's)."""
        if is_url(location):
            from app.store.postgres import PostgresDatabase  # psycopg only when it is used

            self._db = PostgresDatabase(str(location))
        else:
            self._db = SQLiteDatabase(location)
        self.path = self._db.path  # the SQLite file, None for PostgreSQL
        self.shared = self._db.shared
        self.url = None if self.path else str(location)  # PostgreSQL's, for its listener
        self.classes = ClassStore(self._db)  # classes' rows (app/classes.py), on this database
        self.limits = limits or StoreLimits()
        self.set_owner_key(owner_key)
        self._next_sweep = 0.0
        if sweep:
            self.evict()

    def set_owner_key(self, owner_key: bytes) -> None:
        """The session secret: it keys public ids and owners' hashes. PostgreSQL keeps it in
        the store itself (`session_secret`), so it is set once the store is open."""
        self._key = owner_key[:64]  # BLAKE2 takes 64 bytes of key

    def session_secret(self) -> str:
        """The secret every server sharing this store signs sessions and keys ids with, made
        at random by the first one to ask (the others read it)."""
        with self._db.writing(exclusive=False) as db:
            db.execute(
                "INSERT INTO secrets (name, value) VALUES ('session', ?) ON CONFLICT DO NOTHING",
                (secrets.token_urlsafe(32),),
            )
            return db.execute("SELECT value FROM secrets WHERE name = 'session'").fetchone()[0]

    def close(self) -> None:
        self._db.close()

    # ***** writing *****

    def owner(self, session: str | None, address: str | None) -> Owner:
        """An owner whose session and address are keyed hashes: the store keeps no address."""
        return Owner(self._keyed_hex(session), self._keyed_hex(address))

    def _keyed_hex(self, value: str | None) -> str | None:
        return None if value is None else self._keyed(value, b"", 12).hex()

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
        with self._db.writing() as db:
            inserted = db.execute(
                "INSERT INTO traces"
                " (id, hash, code, engine, trace, size, created, session, address, pinned)"
                " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING",
                (ident, found_by, code, engine.__version__, blob, len(blob), time.time(),
                 owner.session, owner.address, int(pinned)),
            ).rowcount  # fmt: skip
            if inserted:
                _add_to_total(db, len(blob))
                if owner.address is not None:
                    self._keep_share(db, owner.address, ident)
            else:
                query = "SELECT id FROM traces WHERE hash = ?"
                (ident,) = db.execute(query, (found_by,)).fetchone()
                if pinned:
                    _pin(db, ident)
            now = time.time()
            if _total(db) > self.limits.max_total_bytes or now >= self._next_sweep:
                self._evict(db, now, spared=ident)
        return ident, trace

    def pin(self, ident: str) -> None:
        """Make a stored trace the site's own (a lesson's, an example's): never evicted, and
        nobody's, so it counts against no one's quota or share."""
        with self._db.writing(exclusive=False) as db:
            _pin(db, ident)

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

    def _one(self, query: str, params: tuple = ()) -> tuple | None:
        with self._db.reading() as db:
            return db.execute(query, params).fetchone()

    def find(self, code: str) -> str | None:
        """The public id of the stored trace of `code`, or None (the trace is not read)."""
        row = self._one("SELECT id FROM traces WHERE hash = ?", (trace_id(code),))
        return None if row is None else row[0]

    def get_json(self, ident: str) -> str | None:
        """The stored trace as JSON text, or None for an unknown id."""
        row = self._one("SELECT trace FROM traces WHERE id = ?", (ident,))
        return zlib.decompress(row[0]).decode() if row else None

    def get(self, ident: str) -> dict | None:
        text = self.get_json(ident)
        return None if text is None else json.loads(text)

    def code_of(self, ident: str) -> str | None:
        """The code of a stored trace, or None for an unknown id (the trace is not read)."""
        row = self._one("SELECT code FROM traces WHERE id = ?", (ident,))
        return row[0] if row else None

    def engine_of(self, ident: str) -> str | None:
        """The engine version that recorded a stored trace, or None for an unknown id."""
        row = self._one("SELECT engine FROM traces WHERE id = ?", (ident,))
        return row[0] if row else None

    def has(self, ident: str) -> bool:
        return self._one("SELECT 1 FROM traces WHERE id = ?", (ident,)) is not None

    def viewed(self, ident: str, viewer: Owner | None = None) -> None:
        """Someone opened this trace's page or asked for it: it is not to be evicted as unseen.
        A `viewer` who is not its owner (neither its session nor its address) counts once per
        address: what a client stores and opens itself, or from fresh cookies, proves nothing
        to anyone else. None is a reader nobody knows: seen, by no viewer."""
        with self._db.writing(exclusive=False) as db:
            query = "SELECT session, address, viewers FROM traces WHERE id = ?"
            row = db.execute(query + self._db.row_lock, (ident,)).fetchone()
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
                    "INSERT INTO viewers (trace, viewer) VALUES (?, ?) ON CONFLICT DO NOTHING",
                    (ident, viewer.address),
                ).rowcount
            db.execute(
                "UPDATE traces SET viewers = viewers + ?, last_viewed = ? WHERE id = ?",
                (added, time.time(), ident),
            )

    def usage(self, owner: Owner, since: float) -> tuple[Usage, Usage]:
        """What this owner's session and address have stored since `since`."""

        def of(column: str, value: str | None) -> Usage:
            if value is None:
                return Usage(0, 0)
            count, size = self._one(
                f"SELECT count(*), coalesce(sum(size), 0) FROM traces"
                f" WHERE {column} = ? AND created >= ?",
                (value, since),
            )
            return Usage(int(count), int(size))

        return of("session", owner.session), of("address", owner.address)

    def total_bytes(self) -> int:
        with self._db.reading() as db:
            return _total(db)

    def trace_count(self) -> int:
        with self._db.reading() as db:
            return int(db.execute("SELECT count(*) FROM traces").fetchone()[0])

    # ***** eviction *****

    def evict(self, now: float | None = None) -> int:
        """Drop unpinned traces nobody opened within `unviewed_seconds`, then the least seen
        until the store fits `max_total_bytes`. Returns how many went."""
        with self._db.writing() as db:
            return self._evict(db, time.time() if now is None else now)

    def _evict(self, db, now: float, spared: str | None = None) -> int:
        self._next_sweep = now + SWEEP_EVERY
        old = now - self.limits.unviewed_seconds
        unseen = db.execute(
            "SELECT id FROM traces WHERE pinned = 0 AND viewers = 0 AND last_viewed IS NULL"
            " AND created < ?",
            (old,),
        ).fetchall()
        gone = _drop(db, [ident for (ident,) in unseen])
        excess = _total(db) - self.limits.max_total_bytes
        return gone + self._evict_least_seen(db, excess, spared)

    def _keep_share(self, db, address: str, stored: str) -> None:
        """Hold an owner's address to its share of the store: a flood evicts itself."""
        query = "SELECT coalesce(sum(size), 0) FROM traces WHERE address = ?"
        (held,) = db.execute(query, (address,)).fetchone()
        self._evict_least_seen(db, int(held) - self.limits.owner_share_bytes, stored, address)

    def _evict_least_seen(
        self, db, excess: float, spared: str | None, address: str | None = None
    ) -> int:
        """Evict the least seen unpinned traces but `spared` (only `address`'s, when it is
        given) until `excess` bytes went, or none is left. Returns how many went."""
        query = "SELECT id, size FROM traces"
        params: tuple = (spared,)
        if address is not None:
            query += self._db.indexed_by("traces_by_owners_worth") + " WHERE address = ? AND"
            params = (address, spared)
        else:
            query += " WHERE"
        query += f" pinned = 0 AND id IS DISTINCT FROM ? {LEAST_SEEN} LIMIT {EVICTION_BATCH}"
        gone, freed = 0, 0
        while freed < excess:
            chosen = []
            for ident, size in db.execute(query, params).fetchall():
                chosen.append(ident)
                freed += size
                if freed >= excess:
                    break
            if not chosen:
                break
            gone += _drop(db, chosen)
        return gone

    # ***** the sessions' standing (app/sessions.py) *****

    def earn_place(
        self, address: str, session: str, burst: int, per_second: float, now: float
    ) -> float:
        """Whether `session` counts as a client of its own: 0 if it had earned its place, or
        earns it now from its address's budget (`burst` places, refilled at `per_second`);
        otherwise the seconds until the address has a place again."""
        address_key, session_key = self._keyed_hex(address), self._keyed_hex(session)
        with self._db.writing(exclusive=False) as db:
            db.execute(
                "INSERT INTO session_budgets (address, places, as_of) VALUES (?, ?, ?)"
                " ON CONFLICT DO NOTHING",
                (address_key, burst, now),
            )
            # the address's row locked first: two servers asking for one session take one place
            query = "SELECT places, as_of FROM session_budgets WHERE address = ?"
            places, as_of = db.execute(query + self._db.row_lock, (address_key,)).fetchone()
            query = "SELECT 1 FROM earned_sessions WHERE session = ?"
            if db.execute(query, (session_key,)).fetchone() is not None:
                return 0.0
            left = min(burst, places + max(0.0, now - as_of) * per_second)
            if left < 1:
                return (1 - left) / per_second if per_second > 0 else math.inf
            db.execute(
                "UPDATE session_budgets SET places = ?, as_of = ? WHERE address = ?",
                (left - 1, now, address_key),
            )
            db.execute(
                "INSERT INTO earned_sessions (session, earned) VALUES (?, ?)"
                " ON CONFLICT DO NOTHING",
                (session_key, now),
            )
            return 0.0

    def has_earned(self, session: str) -> bool:
        query = "SELECT 1 FROM earned_sessions WHERE session = ?"
        return self._one(query, (self._keyed_hex(session),)) is not None

    def forget_standing(self, budgets_before: float, sessions_before: float) -> None:
        """Forget addresses' budgets untouched since `budgets_before` (full again by then) and
        sessions that earned their place before `sessions_before` (their cookies expired)."""
        with self._db.writing(exclusive=False) as db:
            db.execute("DELETE FROM session_budgets WHERE as_of < ?", (budgets_before,))
            db.execute("DELETE FROM earned_sessions WHERE earned < ?", (sessions_before,))

    # ***** copying and checking (app/store/copy.py) *****

    def rows(self, after: str = "", batch: int = 100) -> list[tuple]:
        """Up to `batch` stored traces as rows of COLUMNS, in id order, after the id `after`."""
        with self._db.reading() as db:
            query = f"SELECT {COLUMNS} FROM traces WHERE id > ? ORDER BY id LIMIT {batch}"
            return db.execute(query, (after,)).fetchall()

    def viewers_of(self, ident: str) -> list[str]:
        with self._db.reading() as db:
            query = "SELECT viewer FROM viewers WHERE trace = ? ORDER BY viewer"
            return [viewer for (viewer,) in db.execute(query, (ident,)).fetchall()]

    def add_rows(self, rows: list[tuple], viewers: dict[str, list[str]]) -> tuple[int, int]:
        """Add rows of COLUMNS as they are (a copy from another store), with their viewers,
        in one transaction. A trace already here (its id) is kept, with the larger of its
        counts and times and pinned if either is; one whose code is here under another id is
        left out. Returns how many were added, and how many left out that way."""
        added = conflicting = 0
        with self._db.writing() as db:
            for row in rows:
                ident, found_by, size = row[0], row[1], row[5]
                placeholders = ", ".join("?" * len(row))
                inserted = db.execute(
                    f"INSERT INTO traces ({COLUMNS}) VALUES ({placeholders})"
                    " ON CONFLICT DO NOTHING",
                    tuple(row),
                ).rowcount
                if inserted:
                    added += 1
                    _add_to_total(db, size)
                else:
                    query = "SELECT id, pinned, viewers, last_viewed FROM traces WHERE hash = ?"
                    existing = db.execute(query, (found_by,)).fetchone()
                    if existing is None or existing[0] != ident:
                        conflicting += 1
                        continue
                    seen = [t for t in (existing[3], row[11]) if t is not None]
                    db.execute(
                        "UPDATE traces SET viewers = ?, last_viewed = ? WHERE id = ?",
                        (max(existing[2], row[10]), max(seen, default=None), ident),
                    )
                    if row[9] and not existing[1]:
                        _pin(db, ident)
                for viewer in viewers.get(ident, []):
                    db.execute(
                        "INSERT INTO viewers (trace, viewer) VALUES (?, ?) ON CONFLICT DO NOTHING",
                        (ident, viewer),
                    )
        return added, conflicting


def _total(db) -> int:
    (value,) = db.execute("SELECT value FROM totals WHERE name = 'bytes'").fetchone()
    return int(value)


def _add_to_total(db, size: int) -> None:
    db.execute("UPDATE totals SET value = value + ? WHERE name = 'bytes'", (size,))


def _pin(db, ident: str) -> None:
    db.execute(
        "UPDATE traces SET pinned = 1, session = NULL, address = NULL WHERE id = ? AND pinned = 0",
        (ident,),
    )


def _drop(db, idents: list[str]) -> int:
    """Delete these traces and their viewers; returns how many were still there."""
    freed = gone = 0
    for ident in idents:
        for (size,) in db.execute("DELETE FROM traces WHERE id = ? RETURNING size", (ident,)):
            freed += size
            gone += 1
        db.execute("DELETE FROM viewers WHERE trace = ?", (ident,))
    if freed:
        _add_to_total(db, -freed)
    return gone


def _compress(trace: dict) -> bytes:
    text = json.dumps(trace, separators=(",", ":"), allow_nan=False)
    return zlib.compress(text.encode(), COMPRESSION)


def _cut_outcome(limit: int, kept: int) -> dict:
    message = (
        f"The trace was larger than the {limit // (1024 * 1024)} MiB a stored trace may take "
        f"(compressed); it keeps the first {kept:,} events."
    )
    return {"status": statuses.OUTPUT_LIMIT, "message": message}
