"""Stored traces in a real database: round trips, durability, file modes, and the bounds.

Every test of what the store does runs on both backends (the `backend` fixture): a SQLite file
and a database of this process's throwaway PostgreSQL cluster (tests/postgres.py). Those about
SQLite's files (their modes, WAL, older files' migrations) are SQLite's alone."""

import json
import os
import random
import sqlite3
import stat
import subprocess
import sys
import textwrap
import zlib

import pytest
from fastapi.testclient import TestClient

import engine
from app.config import Settings, StoreSettings
from app.examples import DEFAULT
from app.main import create_app
from app.sandbox import Requester
from app.store import SCHEMA_VERSION, Store, StoreLimits, trace_id
from engine.tracer import trace_snippet


class Backend:
    """A store's location on one backend, the stores opened on it (closed after the test),
    and plain SQL on it for what the store does not say (its rows as kept)."""

    def __init__(self, name: str, location, tmp_path) -> None:
        self.name, self.location, self._tmp_path = name, location, tmp_path
        self._opened: list = []

    def store(self, limits: StoreLimits | None = None, owner_key: bytes = b"") -> Store:
        return self.track(Store(self.location, limits, owner_key=owner_key))

    def track(self, store: Store) -> Store:
        self._opened.append(store)
        return store

    def settings(self, **store) -> Settings:
        url = "" if self.name == "sqlite" else self.location
        path = self._tmp_path / "traces.db"
        return Settings(
            store=StoreSettings(path=path, database_url=url, **store), session_secret="s"
        )

    def app(self, **store):
        app = create_app(self.settings(**store))
        self.track(app.state.store)
        return app

    def execute(self, query: str, params: tuple = ()):
        if self.name == "sqlite":
            db = sqlite3.connect(self.location)
        else:
            import psycopg

            db = psycopg.connect(self.location, autocommit=True)
            query = query.replace("?", "%s")
        self._opened.append(db)
        return db.execute(query, params)

    def close(self) -> None:
        for opened in self._opened:
            opened.close()


@pytest.fixture(params=["sqlite", "postgres"])
def backend(request, tmp_path):
    if request.param == "sqlite":
        location = tmp_path / "traces.db"
    else:
        location = request.getfixturevalue("postgres").new_database()
    backend = Backend(request.param, location, tmp_path)
    yield backend
    backend.close()


def test_the_same_code_gets_the_same_id_and_other_code_another():
    assert trace_id("print(1)") == trace_id("print(1)")
    assert trace_id("print(1)") != trace_id("print(2)")
    assert trace_id("print(1)", "2.13.0+gradtrace") != trace_id("print(1)", "other-engine")


def test_a_public_id_is_keyed_and_is_not_the_codes_hash(backend):
    one = backend.store(owner_key=b"one secret")
    other = backend.store(owner_key=b"another")
    ident, _ = one.put("print(1)", {"n": 1})
    assert ident == one.public_id("print(1)") != other.public_id("print(1)")
    assert other.find("print(1)") == ident  # stored, it keeps its id whatever the key
    assert ident != trace_id("print(1)") and len(ident) == len(trace_id("print(1)"))
    assert one.find("print(1)") == ident
    assert one.find("print(2)") is None


def test_the_same_code_run_twice_keeps_one_id_and_its_hash_finds_nothing(backend):
    app = backend.app()
    with TestClient(app, base_url="http://localhost") as client:
        first = client.post("/api/traces", json={"code": "print(1)"}).json()["id"]
        again = client.post("/api/traces", json={"code": "print(1)"}).json()["id"]
        assert first == again
        assert client.get(f"/api/traces/{first}").status_code == 200
        guessed = trace_id("print(1)")  # what anyone could work out from the code
        assert guessed != first
        assert client.get(f"/api/traces/{guessed}").status_code == 404
        assert client.get(f"/t/{guessed}").status_code == 404


def test_a_trace_round_trips_through_the_file(backend):
    store = backend.store()
    trace = {"version": 1, "code": "print(1)", "stdout": "1\n", "events": [{"seq": 0}]}
    ident, kept = store.put("print(1)", trace)
    assert kept == trace
    assert backend.store().get(ident) == trace
    assert store.has(ident)
    assert store.get("nosuchid") is None


def test_storing_the_same_code_again_keeps_the_first_trace(backend):
    store = backend.store()
    first, _ = store.put("x = 1", {"stdout": "first"})
    second, _ = store.put("x = 1", {"stdout": "second"})
    assert first == second
    assert store.get(first) == {"stdout": "first"}


def test_the_database_is_in_wal_mode(tmp_path):
    Store(tmp_path / "traces.db").put("x = 1", {})
    mode = sqlite3.connect(tmp_path / "traces.db").execute("PRAGMA journal_mode").fetchone()[0]
    assert mode == "wal"


def test_an_acknowledged_write_survives_a_killed_process(backend):
    location = str(backend.location)
    # the child writes, says so, and is killed before it could close anything cleanly
    child = subprocess.Popen(
        [
            sys.executable,
            "-c",
            textwrap.dedent(f"""
            import os, signal, sys
            from app.store import Store
            ident, _ = Store({location!r}).put("print(42)", {{"stdout": "42"}})
            print(ident, flush=True)
            os.kill(os.getpid(), signal.SIGKILL)
        """),
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    ident = child.stdout.readline().strip()
    child.wait(timeout=30)
    assert child.returncode == -9
    assert backend.store().get(ident) == {"stdout": "42"}


def test_the_files_are_the_servers_alone(tmp_path):
    path = tmp_path / "data" / "traces.db"
    Store(path).put("x = 1", {})
    assert stat.S_IMODE(os.stat(path.parent).st_mode) == 0o700
    for name in ("traces.db", "traces.db-wal", "traces.db-shm"):
        assert stat.S_IMODE(os.stat(path.parent / name).st_mode) == 0o600, name


def test_an_older_world_readable_database_is_made_private(tmp_path):
    path = tmp_path / "traces.db"
    sqlite3.connect(path).close()
    os.chmod(path, 0o644)
    Store(path)
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600


def test_traces_are_kept_compressed(backend):
    store = backend.store()
    trace = trace_snippet("import torch\nfor i in range(300):\n    torch.ones(3) * 2\n")
    ident, _ = store.put("loop", trace)
    (size,) = backend.execute("SELECT size FROM traces").fetchone()
    assert size * 5 < len(json.dumps(trace))
    assert store.get(ident) == trace


def _incompressible_trace(events: int) -> dict:
    """A forged trace of random text: compression cannot save it."""
    noise = random.Random(7)
    trace = trace_snippet("print(1)")
    trace["events"] = [
        {"seq": n, "kind": "print", "text": noise.randbytes(600).hex()} for n in range(events)
    ]
    return trace


def test_a_trace_past_the_cap_is_kept_cut_to_whole_events_and_says_so(backend):
    store = backend.store(StoreLimits(max_trace_bytes=200_000))
    forged = _incompressible_trace(1000)  # about 1.2 MB, even compressed about 600 KB
    ident, kept = store.put("forged", forged)
    blob = backend.execute("SELECT trace FROM traces").fetchone()
    assert len(blob[0]) <= 200_000
    assert 0 < len(kept["events"]) < 1000
    assert kept["events"] == forged["events"][: len(kept["events"])]
    assert kept["limits"]["truncated"] is True
    assert kept["outcome"]["status"] == "output_limit"
    assert f"first {len(kept['events']):,} events" in kept["outcome"]["message"]
    assert store.get(ident) == kept


def test_usage_counts_what_a_session_and_an_address_stored_within_the_window(backend):
    store = backend.store(owner_key=b"k")
    alice = store.owner("session:alice", "10.0.0.1")
    bob = store.owner("session:bob", "10.0.0.1")
    for n in range(3):
        store.put(f"x = {n}", {"n": n}, owner=alice)
    store.put("y = 1", {"n": 1}, owner=bob)
    session, address = store.usage(alice, since=0)
    assert (session.traces, address.traces) == (3, 4)
    assert session.bytes > 0 and address.bytes > session.bytes
    assert store.usage(alice, since=1e12)[0].traces == 0  # outside the window
    rows = backend.execute("SELECT address FROM traces")
    assert all("10.0.0.1" not in row[0] for row in rows)  # only keyed hashes are kept


def test_unseen_anonymous_traces_are_evicted_and_seen_or_pinned_ones_stay(backend):
    store = backend.store(StoreLimits(unviewed_seconds=60))
    unseen, _ = store.put("unseen", {})
    seen, _ = store.put("seen", {})
    pinned, _ = store.put("lesson", {}, pinned=True)
    store.viewed(seen)
    assert store.evict(now=1e12) == 1
    assert not store.has(unseen)
    assert store.has(seen) and store.has(pinned)


def test_past_the_total_cap_the_least_recently_seen_go_first(backend):
    limits = StoreLimits(max_trace_bytes=1 << 20, max_total_bytes=600_000)
    store = backend.store(limits)
    pinned, _ = store.put("lesson", _incompressible_trace(200), pinned=True)
    ids = []
    for n in range(6):
        ident, _ = store.put(f"trace {n}", _incompressible_trace(200))
        store.viewed(ident)
        ids.append(ident)
    assert store.total_bytes() <= 600_000
    assert store.has(pinned) and store.has(ids[-1])
    assert not store.has(ids[0])


def _addresses(count: int, network: str = "10.1") -> list[str]:
    return [f"{network}.{n // 250}.{n % 250}" for n in range(count)]


def test_a_flood_one_client_stores_and_opens_itself_evicts_itself_not_a_class_trace(backend):
    limits = StoreLimits(max_trace_bytes=1 << 20, max_total_bytes=600_000, owner_share_percent=100)
    store = backend.store(limits, owner_key=b"k")
    teacher = store.owner("session:teacher", "10.0.0.1")
    lesson, _ = store.put("the teacher's example", _incompressible_trace(200), owner=teacher)
    for n, address in enumerate(_addresses(20)):
        store.viewed(lesson, store.owner(f"session:student{n}", address))
    # each of the flood's traces opened by its owner, from a fresh cookie, and by one accomplice
    mallory = store.owner("session:mallory", "10.6.6.6")
    flood = []
    for n in range(10):  # about 1.4 MB, more than twice the cap
        ident, _ = store.put(f"flood {n}", _incompressible_trace(200), owner=mallory)
        for viewer in (mallory, store.owner(f"session:mallory{n}", "10.6.6.6")):
            store.viewed(ident, viewer)
        store.viewed(ident, store.owner("session:accomplice", "10.7.7.7"))
        flood.append(ident)
    assert store.total_bytes() <= 600_000
    assert store.has(lesson)
    assert not store.has(flood[0])


def test_an_owners_own_views_count_for_no_viewer(backend):
    limits = StoreLimits(max_trace_bytes=1 << 20, max_total_bytes=350_000)
    store = backend.store(limits, owner_key=b"k")
    alice = store.owner("session:alice", "10.0.0.1")
    bob = store.owner("session:bob", "10.0.0.2")
    shared, _ = store.put("bob's", _incompressible_trace(200), owner=bob)
    store.viewed(shared, store.owner("session:carol", "10.0.0.3"))  # once, and first
    own, _ = store.put("alice's", _incompressible_trace(200), owner=alice)
    for viewer in (
        alice,
        store.owner("session:fresh-cookie", "10.0.0.1"),  # her address
        store.owner("session:alice", "192.0.2.9"),  # her session, from home
    ):
        store.viewed(own, viewer)
        store.viewed(own, viewer)
    store.put("a third", _incompressible_trace(200), pinned=True)  # one of the two must go
    assert store.has(shared)
    assert not store.has(own)


def test_a_traces_viewers_are_counted_up_to_a_bound(backend, monkeypatch):
    monkeypatch.setattr("app.store.MAX_VIEWERS", 3)
    store = backend.store(owner_key=b"k")
    ident, _ = store.put("x = 1", {})
    for address in [*_addresses(5), *_addresses(5)]:
        store.viewed(ident, store.owner(None, address))
    assert backend.execute("SELECT viewers FROM traces").fetchone() == (3,)
    assert backend.execute("SELECT count(*) FROM viewers").fetchone() == (3,)


def test_an_owner_past_its_share_of_the_store_loses_its_own_least_seen_traces(backend):
    limits = StoreLimits(max_trace_bytes=1 << 20, max_total_bytes=10_000_000, owner_share_percent=5)
    store = backend.store(limits, owner_key=b"k")
    teacher = store.owner("session:teacher", "10.0.0.1")
    lesson, _ = store.put("the teacher's example", _incompressible_trace(200), owner=teacher)
    mallory = store.owner("session:mallory", "10.6.6.6")
    flood = []
    for n in range(8):  # about 1.1 MB, twice its share
        ident, _ = store.put(f"flood {n}", _incompressible_trace(200), owner=mallory)
        flood.append(ident)
        if n == 0:
            store.viewed(ident, store.owner(None, "10.0.0.3"))  # the one another client opened
    held = backend.execute(
        "SELECT coalesce(sum(size), 0) FROM traces WHERE address = ?", (mallory.address,)
    )
    assert held.fetchone()[0] <= 500_000 + 140_000  # its share, and the trace just stored
    assert store.has(lesson) and store.has(flood[0]) and store.has(flood[-1])
    assert not store.has(flood[1])


def test_a_version_1_database_is_migrated_with_nothing_lost(tmp_path):
    path = tmp_path / "traces.db"
    old = sqlite3.connect(path)
    old.execute(
        "CREATE TABLE traces (id TEXT PRIMARY KEY, code TEXT NOT NULL, engine TEXT NOT NULL,"
        " trace TEXT NOT NULL, created REAL NOT NULL)"
    )
    old.execute("INSERT INTO traces VALUES ('abc', 'x = 1', 'e', '{\"stdout\": \"1\"}', 1.0)")
    old.commit()
    old.close()
    store = Store(path, StoreLimits(unviewed_seconds=1))
    assert store.get("abc") == {"stdout": "1"}
    db = sqlite3.connect(path)
    assert db.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
    (blob,) = db.execute("SELECT trace FROM traces").fetchone()
    assert json.loads(zlib.decompress(blob)) == {"stdout": "1"}


def _flood(store: Store, traces: int) -> None:
    for n in range(traces):
        ident, _ = store.put(f"flood {n}", _incompressible_trace(200))
        store.viewed(ident)


def test_a_pinned_trace_is_nobodys_and_outside_every_share(backend):
    limits = StoreLimits(max_trace_bytes=1 << 20, max_total_bytes=1_000_000, owner_share_percent=10)
    store = backend.store(limits, owner_key=b"k")
    alice = store.owner("session:alice", "10.0.0.1")
    lesson, _ = store.put("a lesson", _incompressible_trace(200), owner=alice, pinned=True)
    mine, _ = store.put("alice's", _incompressible_trace(50), owner=alice)
    assert store.usage(alice, since=0)[1].traces == 1
    assert store.has(lesson) and store.has(mine)


def test_a_lessons_trace_outlives_a_flood_of_the_store(backend):
    app = backend.app(max_mib=1)
    with TestClient(app, base_url="http://localhost", raise_server_exceptions=False) as client:
        client.get("/lessons/define-by-run")  # its trace is stored before the page is drawn
        ((lesson,),) = backend.execute("SELECT id FROM traces").fetchall()
        _flood(app.state.store, 12)  # about 1.5 MiB
        assert app.state.store.total_bytes() <= 1024 * 1024
        assert app.state.store.has(lesson)


def test_an_examples_trace_is_pinned_however_its_lines_end(backend):
    app = backend.app()
    with TestClient(app, base_url="http://localhost", raise_server_exceptions=False) as client:
        code = DEFAULT.code.replace("\n", "\r\n")  # as a browser sends a textarea
        client.post("/run", data={"code": code})
    rows = backend.execute("SELECT pinned, session, address FROM traces").fetchall()
    assert rows == [(1, None, None)]  # the site's: nobody's quota, never evicted


def test_a_version_2_databases_views_become_one_viewer_each(tmp_path):
    path = tmp_path / "traces.db"
    old = sqlite3.connect(path)
    old.executescript(VERSION_2)
    for ident, views in (("seen", 5), ("unseen", 0)):
        old.execute(
            "INSERT INTO traces (id, code, engine, trace, size, created, views, last_viewed)"
            " VALUES (?, ?, 'e', ?, 10, 1.0, ?, ?)",
            (ident, ident, zlib.compress(b"{}"), views, 2.0 if views else None),
        )
    old.commit()
    old.close()
    store = Store(path, StoreLimits(unviewed_seconds=1), owner_key=b"k")
    assert store.has("seen") and not store.has("unseen")  # swept, as version 2 would have
    store.viewed("seen", store.owner(None, "10.0.0.1"))
    db = sqlite3.connect(path)
    assert db.execute("SELECT viewers FROM traces WHERE id = 'seen'").fetchone() == (2,)
    assert db.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION


VERSION_2 = """
CREATE TABLE traces (
    id TEXT PRIMARY KEY, code TEXT NOT NULL, engine TEXT NOT NULL, trace BLOB NOT NULL,
    size INTEGER NOT NULL, created REAL NOT NULL, session TEXT, address TEXT,
    pinned INTEGER NOT NULL DEFAULT 0, views INTEGER NOT NULL DEFAULT 0, last_viewed REAL
);
CREATE INDEX traces_by_session ON traces (session, created);
CREATE INDEX traces_by_address ON traces (address, created);
CREATE INDEX traces_by_age ON traces (pinned, views, created);
PRAGMA user_version = 2;
"""


def test_a_read_through_the_service_counts_its_reader_unless_it_is_the_owner(backend):
    app = backend.app()
    store, traces = app.state.store, app.state.traces
    ident, _ = store.put("x = 1", {}, owner=store.owner("session:alice", "10.0.0.1"))
    traces.fetch_json(ident, viewer=Requester("session:alice", "10.0.0.1"))
    traces.fetch_json(ident, viewer=Requester("session:bob", "10.0.0.2"))
    traces.fetch_json(ident)  # a reader nobody knows: seen, by no one counted
    row = backend.execute("SELECT viewers, last_viewed FROM traces")
    viewers, last_viewed = row.fetchone()
    assert viewers == 1 and last_viewed is not None


def test_traces_stored_before_ids_were_keyed_keep_their_ids_and_new_ones_do_not_get_such(
    tmp_path,
):
    path = tmp_path / "traces.db"
    old = sqlite3.connect(path)
    old.executescript(VERSION_2)
    code = "print(1)"
    blob = zlib.compress(json.dumps({"code": code, "stdout": "1"}).encode())
    old.execute(
        "INSERT INTO traces (id, code, engine, trace, size, created, views)"
        " VALUES (?, ?, ?, ?, ?, ?, 1)",
        (trace_id(code), code, engine.__version__, blob, len(blob), 1e12),
    )
    old.commit()
    old.close()
    app = create_app(Settings(store=StoreSettings(path=path), session_secret="s"))
    with TestClient(app, base_url="http://localhost") as client:
        assert client.get(f"/api/traces/{trace_id(code)}").json()["stdout"] == "1"
        again = client.post("/api/traces", json={"code": code}).json()
        assert again["id"] == trace_id(code) and again["trace"]["stdout"] == "1"  # not run again
        new = client.post("/api/traces", json={"code": "print(2)"}).json()["id"]
        assert new != trace_id("print(2)")
        assert client.get(f"/api/traces/{trace_id('print(2)')}").status_code == 404


def test_a_version_4_database_is_migrated_and_its_total_counted(tmp_path):
    path = tmp_path / "traces.db"
    ident, _ = Store(path).put("x = 1", _incompressible_trace(20))
    old = sqlite3.connect(path)
    for table in ("totals", "secrets", "earned_sessions", "session_budgets"):
        old.execute(f"DROP TABLE {table}")  # as version 4 had it: none of these
    old.execute("PRAGMA user_version = 4")
    old.commit()
    old.close()
    store = Store(path)
    (size,) = sqlite3.connect(path).execute("SELECT size FROM traces").fetchone()
    assert store.total_bytes() == size > 0
    assert store.has(ident)
    assert sqlite3.connect(path).execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION


def test_postgres_records_its_migrations_and_applies_each_once(postgres):
    url = postgres.new_database()
    for _ in range(2):
        Store(url).close()
    import psycopg

    with psycopg.connect(url) as db:
        versions = db.execute("SELECT version FROM schema_migrations ORDER BY 1").fetchall()
    assert versions == [(n,) for n in range(5, SCHEMA_VERSION + 1)]  # this backend began at 5


def test_servers_sharing_a_store_share_its_total_and_evict_from_it(backend):
    limits = StoreLimits(max_trace_bytes=1 << 20, max_total_bytes=600_000)
    one, other = backend.store(limits), backend.store(limits)
    ids = []
    for n in range(6):  # about 140 KB each, stored by the two in turn
        ident, _ = (one, other)[n % 2].put(f"trace {n}", _incompressible_trace(200))
        (other, one)[n % 2].viewed(ident)
        ids.append(ident)
    assert one.total_bytes() == other.total_bytes() <= 600_000
    (stored,) = backend.execute("SELECT coalesce(sum(size), 0) FROM traces").fetchone()
    assert one.total_bytes() == stored
    assert not one.has(ids[0]) and other.has(ids[-1])


def test_the_same_code_stored_by_two_servers_at_once_is_one_row(backend):
    from concurrent.futures import ThreadPoolExecutor

    stores = [backend.store(owner_key=b"k") for _ in range(2)]
    codes = [f"x = {n}" for n in range(10)]

    def put_all(store: Store) -> list[str]:
        return [store.put(code, {"code": code})[0] for code in codes]

    with ThreadPoolExecutor(2) as pool:
        first, second = pool.map(put_all, stores)
    assert first == second
    assert backend.execute("SELECT count(*) FROM traces").fetchone() == (len(codes),)


def test_sessions_earn_their_place_once_across_servers_sharing_a_store(backend):
    from app.sessions import Standing

    one, other = (Standing(2.0, 2, 1, ledger=backend.store(owner_key=b"k")) for _ in range(2))
    assert one.earned("10.0.0.1", "s1", 5.0) and other.earned("10.0.0.1", "s2", 5.0)
    assert not one.earned("10.0.0.1", "s3", 5.0) and not other.earned("10.0.0.1", "s3", 5.0)
    assert other.earned("10.0.0.1", "s1", 5.0)  # earned on the first server
    assert not other.earned("10.0.0.1", "young", 1.0)
    assert one.earned("10.0.0.2", "s4", 5.0)  # another address has its own places
    rows = backend.execute("SELECT session FROM earned_sessions").fetchall()
    assert len(rows) == 3 and all("s1" not in row[0] for row in rows)  # keyed hashes only


def test_postgres_servers_without_a_secret_share_one_kept_in_the_database(postgres, tmp_path):
    url = postgres.new_database()
    apps = [
        create_app(Settings(store=StoreSettings(path=tmp_path / f"unused{n}.db", database_url=url)))
        for n in (1, 2)
    ]
    try:
        first, second = (app.state.store for app in apps)
        assert first.public_id("print(1)") == second.public_id("print(1)")
        _, cookie = apps[0].state.sessions.mint()
        assert apps[1].state.sessions.session_of(cookie) is not None
        assert not (tmp_path / "session.key").exists()
        other = Store(postgres.new_database())
        assert other.session_secret() != first.session_secret()  # made at random, per database
        other.close()
    finally:
        for app in apps:
            app.state.store.close()
