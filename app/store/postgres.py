"""The store's backend for many servers: PostgreSQL, through psycopg 3 and a connection pool.

Every server shares the traces, the quotas (counted from the rows), the eviction and the
sessions' standing, because they live here, and their writes are transactions:
- a put, and eviction, hold one advisory lock, so two servers never evict at once nor from a
  total the other is changing; the content-addressed insert is `INSERT ... ON CONFLICT`, so the
  same snippet posted to two servers at once is one row;
- a view, or a session earning its place, locks its one row (`SELECT ... FOR UPDATE`).
A commit is durable (synchronous_commit, PostgreSQL's default) before the server answers.

The schema is versioned by the `schema_migrations` table: on start each server applies, under a
lock, whatever migrations the database has not had yet. Its numbers continue SQLite's (this
backend began at version 5), so one SCHEMA_VERSION names both.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from functools import lru_cache

import psycopg
from psycopg_pool import ConnectionPool

# pg_advisory_xact_lock keys: any two distinct 64-bit numbers of this application's own
EVICTION_LOCK = 0x67726164_00000001
MIGRATION_LOCK = 0x67726164_00000002
POOL_SIZE = 16  # connections per server: FastAPI's thread pool has 40 threads, most not here
CONNECT_TIMEOUT = 30.0  # seconds for the first connection: a wrong URL fails the start

# version: its statements. A new version is a new entry; an applied one is never edited.
MIGRATIONS: dict[int, list[str]] = {
    5: [
        """CREATE TABLE traces (
            id TEXT PRIMARY KEY,
            hash TEXT NOT NULL,
            code TEXT NOT NULL,
            engine TEXT NOT NULL,
            trace BYTEA NOT NULL,
            size BIGINT NOT NULL,
            created DOUBLE PRECISION NOT NULL,
            session TEXT,
            address TEXT,
            pinned INTEGER NOT NULL DEFAULT 0,
            viewers INTEGER NOT NULL DEFAULT 0,
            last_viewed DOUBLE PRECISION
        )""",
        # already zlib-compressed: PostgreSQL's own compression would only spend time
        "ALTER TABLE traces ALTER COLUMN trace SET STORAGE EXTERNAL",
        "CREATE UNIQUE INDEX traces_by_hash ON traces (hash)",
        "CREATE INDEX traces_by_session ON traces (session, created)",
        "CREATE INDEX traces_by_address ON traces (address, created, size)",
        "CREATE INDEX traces_by_worth ON traces (pinned, viewers, coalesce(last_viewed, created))",
        "CREATE INDEX traces_by_owners_worth"
        " ON traces (address, viewers, coalesce(last_viewed, created))",
        "CREATE TABLE viewers (trace TEXT NOT NULL, viewer TEXT NOT NULL,"
        " PRIMARY KEY (trace, viewer))",
        "CREATE TABLE totals (name TEXT PRIMARY KEY, value BIGINT NOT NULL)",
        "INSERT INTO totals VALUES ('bytes', 0)",
        "CREATE TABLE secrets (name TEXT PRIMARY KEY, value TEXT NOT NULL)",
        "CREATE TABLE earned_sessions (session TEXT PRIMARY KEY, earned DOUBLE PRECISION NOT NULL)",
        "CREATE TABLE session_budgets (address TEXT PRIMARY KEY,"
        " places DOUBLE PRECISION NOT NULL, as_of DOUBLE PRECISION NOT NULL)",
        "CREATE INDEX earned_sessions_by_age ON earned_sessions (earned)",
        "CREATE INDEX session_budgets_by_age ON session_budgets (as_of)",
    ],
    # classes (app/store/classes.py)
    6: [
        """CREATE TABLE classes (
            id TEXT PRIMARY KEY,
            key_hash TEXT NOT NULL,
            code TEXT NOT NULL UNIQUE,
            title TEXT NOT NULL,
            lesson TEXT,
            trace TEXT,
            created DOUBLE PRECISION NOT NULL,
            expires DOUBLE PRECISION NOT NULL,
            paced_step INTEGER,
            members INTEGER NOT NULL DEFAULT 0,
            session TEXT,
            address TEXT
        )""",
        "CREATE INDEX classes_by_expiry ON classes (expires)",
        "CREATE INDEX classes_by_session ON classes (session, created)",
        "CREATE INDEX classes_by_address ON classes (address, created)",
        "CREATE TABLE class_members (class_id TEXT NOT NULL, member INTEGER NOT NULL,"
        " name TEXT NOT NULL, joined DOUBLE PRECISION NOT NULL, PRIMARY KEY (class_id, member))",
        """CREATE TABLE class_answers (
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
            answered_at DOUBLE PRECISION NOT NULL,
            PRIMARY KEY (class_id, member, question)
        )""",
        "CREATE TABLE class_events (seq BIGSERIAL PRIMARY KEY, class_id TEXT NOT NULL,"
        " kind TEXT NOT NULL, data TEXT NOT NULL, created DOUBLE PRECISION NOT NULL)",
        "CREATE INDEX class_events_by_age ON class_events (created)",
        "CREATE INDEX class_events_by_class ON class_events (class_id)",
    ],
}


class PostgresDatabase:
    shared = True  # many servers: the session secret is kept in the database
    row_lock = " FOR UPDATE"
    path = None

    def __init__(self, url: str) -> None:
        self.url = url
        # autocommit: a read is one statement; a write opens its transaction (`writing`)
        self._pool = ConnectionPool(
            url,
            min_size=1,
            max_size=POOL_SIZE,
            kwargs={"autocommit": True},
            connection_class=_Connection,
            check=ConnectionPool.check_connection,  # one dropped while idle is replaced
            open=False,
            name="gradtrace-store",
        )
        self._pool.open(wait=True, timeout=CONNECT_TIMEOUT)
        try:
            self._migrate()
        except BaseException:
            self._pool.close()
            raise

    @contextmanager
    def reading(self) -> Iterator[_Connection]:
        with self._pool.connection() as db:
            yield db

    @contextmanager
    def writing(self, exclusive: bool = True) -> Iterator[_Connection]:
        """A transaction, committed before the block's caller goes on. `exclusive` holds the
        eviction lock to its end: puts and eviction, one server at a time."""
        with self._pool.connection() as db, db.transaction():
            if exclusive:
                db.execute("SELECT pg_advisory_xact_lock(?)", (EVICTION_LOCK,))
            yield db

    def indexed_by(self, index: str) -> str:
        return ""  # PostgreSQL's planner picks the owner's index by itself

    def close(self) -> None:
        self._pool.close()

    def _migrate(self) -> None:
        from app.store import SCHEMA_VERSION

        with self._pool.connection() as db, db.transaction():
            db.execute("SELECT pg_advisory_xact_lock(?)", (MIGRATION_LOCK,))
            db.execute(
                "CREATE TABLE IF NOT EXISTS schema_migrations"
                " (version INTEGER PRIMARY KEY, applied DOUBLE PRECISION NOT NULL)"
            )
            query = "SELECT coalesce(max(version), 0) FROM schema_migrations"
            (version,) = db.execute(query).fetchone()
            if version > SCHEMA_VERSION:
                raise RuntimeError(
                    f"the database is at schema version {version}, newer than this server's "
                    f"{SCHEMA_VERSION}: run the newer gradtrace"
                )
            for number in sorted(n for n in MIGRATIONS if n > version):
                for statement in MIGRATIONS[number]:
                    db.execute(statement)
                db.execute(
                    "INSERT INTO schema_migrations (version, applied) VALUES (?, ?)",
                    (number, time.time()),
                )


class _Connection(psycopg.Connection):
    """psycopg's connection, taking the store's queries as written for both backends: `?`
    for a parameter (its own is `%s`; the queries hold no other `?` nor `%`)."""

    def execute(self, query, params=None, **kwargs):
        if isinstance(query, str):
            query = _placeholders(query)
        return super().execute(query, params, **kwargs)


@lru_cache(maxsize=256)
def _placeholders(query: str) -> str:
    return query.replace("?", "%s")
