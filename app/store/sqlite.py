"""The store's embedded backend: one SQLite file, nothing to set up.

Writes are committed in WAL mode with synchronous=FULL before they are acknowledged, and
`BEGIN IMMEDIATE` takes SQLite's one write lock, so the servers (or workers) that share a file
also share its eviction. The files are the server's alone (0600, in a 0700 folder). The schema's
version is SQLite's `user_version`; an older file is brought up to date when it is opened.
"""

from __future__ import annotations

import os
import sqlite3
import threading
import zlib
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

COMPRESSION = 6  # zlib's level for traces (app/store says why); version 1 kept plain text

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
-- the bytes of all traces, kept with them: every server that shares the file reads one total
CREATE TABLE IF NOT EXISTS totals (name TEXT PRIMARY KEY, value INTEGER NOT NULL);
-- values made once and shared (PostgreSQL's session secret: SQLite's is in session.key)
CREATE TABLE IF NOT EXISTS secrets (name TEXT PRIMARY KEY, value TEXT NOT NULL);
-- sessions that earned a place of their own, and each address's budget of places (keyed
-- hashes both: app/sessions.py's Standing)
CREATE TABLE IF NOT EXISTS earned_sessions (session TEXT PRIMARY KEY, earned REAL NOT NULL);
CREATE TABLE IF NOT EXISTS session_budgets (
    address TEXT PRIMARY KEY,
    places REAL NOT NULL,
    as_of REAL NOT NULL
);
CREATE INDEX IF NOT EXISTS earned_sessions_by_age ON earned_sessions (earned);
CREATE INDEX IF NOT EXISTS session_budgets_by_age ON session_budgets (as_of);
-- classes (app/store/classes.py): their members, one row per member and question answered,
-- and the recent events every server's streams follow
CREATE TABLE IF NOT EXISTS classes (
    id TEXT PRIMARY KEY,
    key_hash TEXT NOT NULL,        -- the instructor link's secret, hashed: never kept as is
    code TEXT NOT NULL UNIQUE,     -- the join code
    title TEXT NOT NULL,
    lesson TEXT,                   -- its target: a lesson's slug, or a trace's id
    trace TEXT,
    created REAL NOT NULL,
    expires REAL NOT NULL,
    paced_step INTEGER,            -- the step students are held at, or NULL
    members INTEGER NOT NULL DEFAULT 0,
    session TEXT,                  -- keyed hashes of who started it: the starts' limit
    address TEXT
);
CREATE INDEX IF NOT EXISTS classes_by_expiry ON classes (expires);
CREATE INDEX IF NOT EXISTS classes_by_session ON classes (session, created);
CREATE INDEX IF NOT EXISTS classes_by_address ON classes (address, created);
CREATE TABLE IF NOT EXISTS class_members (
    class_id TEXT NOT NULL,
    member INTEGER NOT NULL,
    name TEXT NOT NULL,
    joined REAL NOT NULL,
    PRIMARY KEY (class_id, member)
);
CREATE TABLE IF NOT EXISTS class_answers (
    class_id TEXT NOT NULL,
    member INTEGER NOT NULL,
    question TEXT NOT NULL,
    first_answer TEXT,
    first_correct INTEGER,
    attempts INTEGER NOT NULL DEFAULT 0,
    hints INTEGER NOT NULL DEFAULT 0,
    revealed INTEGER NOT NULL DEFAULT 0,
    last_answer TEXT,
    correct INTEGER NOT NULL DEFAULT 0,
    answered_at REAL NOT NULL,
    PRIMARY KEY (class_id, member, question)
);
CREATE TABLE IF NOT EXISTS class_events (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    class_id TEXT NOT NULL,
    kind TEXT NOT NULL,
    data TEXT NOT NULL,
    created REAL NOT NULL
);
CREATE INDEX IF NOT EXISTS class_events_by_age ON class_events (created);
CREATE INDEX IF NOT EXISTS class_events_by_class ON class_events (class_id)
"""


class SQLiteDatabase:
    """One file, one connection per thread (FastAPI runs plain endpoints in a thread pool)."""

    shared = False  # one machine's file: the session secret stays in session.key beside it
    row_lock = ""  # BEGIN IMMEDIATE already holds the file's one write lock

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        _private_file(self.path)
        self._local = threading.local()
        _migrate(self._connection())

    def _connection(self) -> sqlite3.Connection:
        db = getattr(self._local, "db", None)
        if db is None:
            db = sqlite3.connect(self.path, timeout=30, isolation_level=None)
            db.execute("PRAGMA journal_mode=WAL")
            db.execute("PRAGMA synchronous=FULL")
            self._local.db = db
        return db

    @contextmanager
    def reading(self) -> Iterator[sqlite3.Connection]:
        yield self._connection()  # autocommit: each statement sees what is committed

    @contextmanager
    def writing(self, exclusive: bool = True) -> Iterator[sqlite3.Connection]:
        """A transaction, committed (and synced) before the block's caller goes on. SQLite
        has one writer at a time, so `exclusive` asks nothing more."""
        db = self._connection()
        db.execute("BEGIN IMMEDIATE")
        try:
            yield db
        except BaseException:
            db.execute("ROLLBACK")
            raise
        db.execute("COMMIT")

    def indexed_by(self, index: str) -> str:
        # the planner takes the whole store's index for an owner's traces, and walks it
        return f" INDEXED BY {index}"

    def close(self) -> None:
        db = getattr(self._local, "db", None)
        if db is not None:
            db.close()
            self._local.db = None


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
    counted every read as a view, before version 4 a trace's id was its hash, and before
    version 5 the total, the shared secret and the sessions' standing were kept in memory;
    version 6 added classes (their tables are new: nothing to carry over)."""
    from app.store import SCHEMA_VERSION

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
    # counted afresh from the rows, whatever version the file was
    db.execute("INSERT OR REPLACE INTO totals SELECT 'bytes', coalesce(sum(size), 0) FROM traces")
    db.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
    db.execute("COMMIT")


def _create(db: sqlite3.Connection) -> None:
    # statement by statement: executescript would commit the migration's transaction
    for statement in SCHEMA.split(";"):
        if statement.strip():
            db.execute(statement)
