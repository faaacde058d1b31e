"""Stored traces in a real SQLite file: round trips, durability, file modes, and the bounds."""

import json
import os
import random
import sqlite3
import stat
import subprocess
import sys
import textwrap
import zlib

from fastapi.testclient import TestClient

import engine
from app.config import Settings
from app.examples import DEFAULT
from app.main import create_app
from app.sandbox import Requester
from app.store import SCHEMA_VERSION, Store, StoreLimits, trace_id
from engine.tracer import trace_snippet


def test_the_same_code_gets_the_same_id_and_other_code_another():
    assert trace_id("print(1)") == trace_id("print(1)")
    assert trace_id("print(1)") != trace_id("print(2)")
    assert trace_id("print(1)", "2.13.0+gradtrace") != trace_id("print(1)", "other-engine")


def test_a_public_id_is_keyed_and_is_not_the_codes_hash(tmp_path):
    one = Store(tmp_path / "one.db", owner_key=b"one secret")
    other = Store(tmp_path / "other.db", owner_key=b"another")
    ident, _ = one.put("print(1)", {"n": 1})
    assert ident == one.public_id("print(1)") != other.public_id("print(1)")
    assert ident != trace_id("print(1)") and len(ident) == len(trace_id("print(1)"))
    assert one.find("print(1)") == ident
    assert one.find("print(2)") is None


def test_the_same_code_run_twice_keeps_one_id_and_its_hash_finds_nothing(tmp_path):
    app = create_app(Settings(db_path=tmp_path / "traces.db", session_secret="s"))
    with TestClient(app, base_url="http://localhost") as client:
        first = client.post("/api/traces", json={"code": "print(1)"}).json()["id"]
        again = client.post("/api/traces", json={"code": "print(1)"}).json()["id"]
        assert first == again
        assert client.get(f"/api/traces/{first}").status_code == 200
        guessed = trace_id("print(1)")  # what anyone could work out from the code
        assert guessed != first
        assert client.get(f"/api/traces/{guessed}").status_code == 404
        assert client.get(f"/t/{guessed}").status_code == 404


def test_a_trace_round_trips_through_the_file(tmp_path):
    store = Store(tmp_path / "traces.db")
    trace = {"version": 1, "code": "print(1)", "stdout": "1\n", "events": [{"seq": 0}]}
    ident, kept = store.put("print(1)", trace)
    assert kept == trace
    assert Store(tmp_path / "traces.db").get(ident) == trace
    assert store.has(ident)
    assert store.get("nosuchid") is None


def test_storing_the_same_code_again_keeps_the_first_trace(tmp_path):
    store = Store(tmp_path / "traces.db")
    first, _ = store.put("x = 1", {"stdout": "first"})
    second, _ = store.put("x = 1", {"stdout": "second"})
    assert first == second
    assert store.get(first) == {"stdout": "first"}


def test_the_database_is_in_wal_mode(tmp_path):
    Store(tmp_path / "traces.db").put("x = 1", {})
    mode = sqlite3.connect(tmp_path / "traces.db").execute("PRAGMA journal_mode").fetchone()[0]
    assert mode == "wal"


def test_an_acknowledged_write_survives_a_killed_process(tmp_path):
    path = tmp_path / "traces.db"
    # the child writes, says so, and is killed before it could close anything cleanly
    child = subprocess.Popen(
        [
            sys.executable,
            "-c",
            textwrap.dedent(f"""
            import os, signal, sys
            from app.store import Store
            ident, _ = Store({str(path)!r}).put("print(42)", {{"stdout": "42"}})
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
    assert Store(path).get(ident) == {"stdout": "42"}


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


def test_traces_are_kept_compressed(tmp_path):
    store = Store(tmp_path / "traces.db")
    trace = trace_snippet("import torch\nfor i in range(300):\n    torch.ones(3) * 2\n")
    ident, _ = store.put("loop", trace)
    (size,) = sqlite3.connect(tmp_path / "traces.db").execute("SELECT size FROM traces").fetchone()
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


def test_a_trace_past_the_cap_is_kept_cut_to_whole_events_and_says_so(tmp_path):
    store = Store(tmp_path / "traces.db", StoreLimits(max_trace_bytes=200_000))
    forged = _incompressible_trace(1000)  # about 1.2 MB, even compressed about 600 KB
    ident, kept = store.put("forged", forged)
    blob = sqlite3.connect(tmp_path / "traces.db").execute("SELECT trace FROM traces").fetchone()
    assert len(blob[0]) <= 200_000
    assert 0 < len(kept["events"]) < 1000
    assert kept["events"] == forged["events"][: len(kept["events"])]
    assert kept["limits"]["truncated"] is True
    assert kept["outcome"]["status"] == "output_limit"
    assert f"first {len(kept['events']):,} events" in kept["outcome"]["message"]
    assert store.get(ident) == kept


def test_usage_counts_what_a_session_and_an_address_stored_within_the_window(tmp_path):
    store = Store(tmp_path / "traces.db", owner_key=b"k")
    alice = store.owner("session:alice", "10.0.0.1")
    bob = store.owner("session:bob", "10.0.0.1")
    for n in range(3):
        store.put(f"x = {n}", {"n": n}, owner=alice)
    store.put("y = 1", {"n": 1}, owner=bob)
    session, address = store.usage(alice, since=0)
    assert (session.traces, address.traces) == (3, 4)
    assert session.bytes > 0 and address.bytes > session.bytes
    assert store.usage(alice, since=1e12)[0].traces == 0  # outside the window
    rows = sqlite3.connect(tmp_path / "traces.db").execute("SELECT address FROM traces")
    assert all("10.0.0.1" not in row[0] for row in rows)  # only keyed hashes are kept


def test_unseen_anonymous_traces_are_evicted_and_seen_or_pinned_ones_stay(tmp_path):
    store = Store(tmp_path / "traces.db", StoreLimits(unviewed_seconds=60))
    unseen, _ = store.put("unseen", {})
    seen, _ = store.put("seen", {})
    pinned, _ = store.put("lesson", {}, pinned=True)
    store.viewed(seen)
    assert store.evict(now=1e12) == 1
    assert not store.has(unseen)
    assert store.has(seen) and store.has(pinned)


def test_past_the_total_cap_the_least_recently_seen_go_first(tmp_path):
    limits = StoreLimits(max_trace_bytes=1 << 20, max_total_bytes=600_000)
    store = Store(tmp_path / "traces.db", limits)
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


def test_a_flood_one_client_stores_and_opens_itself_evicts_itself_not_a_class_trace(tmp_path):
    limits = StoreLimits(max_trace_bytes=1 << 20, max_total_bytes=600_000, owner_share_percent=100)
    store = Store(tmp_path / "traces.db", limits, owner_key=b"k")
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


def test_an_owners_own_views_count_for_no_viewer(tmp_path):
    limits = StoreLimits(max_trace_bytes=1 << 20, max_total_bytes=350_000)
    store = Store(tmp_path / "traces.db", limits, owner_key=b"k")
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


def test_a_traces_viewers_are_counted_up_to_a_bound(tmp_path, monkeypatch):
    monkeypatch.setattr("app.store.MAX_VIEWERS", 3)
    store = Store(tmp_path / "traces.db", owner_key=b"k")
    ident, _ = store.put("x = 1", {})
    for address in [*_addresses(5), *_addresses(5)]:
        store.viewed(ident, store.owner(None, address))
    db = sqlite3.connect(tmp_path / "traces.db")
    assert db.execute("SELECT viewers FROM traces").fetchone() == (3,)
    assert db.execute("SELECT count(*) FROM viewers").fetchone() == (3,)


def test_an_owner_past_its_share_of_the_store_loses_its_own_least_seen_traces(tmp_path):
    limits = StoreLimits(max_trace_bytes=1 << 20, max_total_bytes=10_000_000, owner_share_percent=5)
    store = Store(tmp_path / "traces.db", limits, owner_key=b"k")
    teacher = store.owner("session:teacher", "10.0.0.1")
    lesson, _ = store.put("the teacher's example", _incompressible_trace(200), owner=teacher)
    mallory = store.owner("session:mallory", "10.6.6.6")
    flood = []
    for n in range(8):  # about 1.1 MB, twice its share
        ident, _ = store.put(f"flood {n}", _incompressible_trace(200), owner=mallory)
        flood.append(ident)
        if n == 0:
            store.viewed(ident, store.owner(None, "10.0.0.3"))  # the one another client opened
    held = sqlite3.connect(tmp_path / "traces.db").execute(
        "SELECT total(size) FROM traces WHERE address = ?", (mallory.address,)
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


def test_a_pinned_trace_is_nobodys_and_outside_every_share(tmp_path):
    limits = StoreLimits(max_trace_bytes=1 << 20, max_total_bytes=1_000_000, owner_share_percent=10)
    store = Store(tmp_path / "traces.db", limits, owner_key=b"k")
    alice = store.owner("session:alice", "10.0.0.1")
    lesson, _ = store.put("a lesson", _incompressible_trace(200), owner=alice, pinned=True)
    mine, _ = store.put("alice's", _incompressible_trace(50), owner=alice)
    assert store.usage(alice, since=0)[1].traces == 1
    assert store.has(lesson) and store.has(mine)


def test_a_lessons_trace_outlives_a_flood_of_the_store(tmp_path):
    db = tmp_path / "traces.db"
    app = create_app(Settings(db_path=db, session_secret="s", max_store_mib=1))
    with TestClient(app, base_url="http://localhost", raise_server_exceptions=False) as client:
        client.get("/lessons/define-by-run")  # its trace is stored before the page is drawn
        ((lesson,),) = sqlite3.connect(db).execute("SELECT id FROM traces").fetchall()
        _flood(app.state.store, 12)  # about 1.5 MiB
        assert app.state.store.total_bytes() <= 1024 * 1024
        assert app.state.store.has(lesson)


def test_an_examples_trace_is_pinned_however_its_lines_end(tmp_path):
    db = tmp_path / "traces.db"
    app = create_app(Settings(db_path=db, session_secret="s"))
    with TestClient(app, base_url="http://localhost", raise_server_exceptions=False) as client:
        code = DEFAULT.code.replace("\n", "\r\n")  # as a browser sends a textarea
        client.post("/run", data={"code": code})
    rows = sqlite3.connect(db).execute("SELECT pinned, session, address FROM traces").fetchall()
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


def test_a_read_through_the_service_counts_its_reader_unless_it_is_the_owner(tmp_path):
    app = create_app(Settings(db_path=tmp_path / "traces.db", session_secret="s"))
    store, traces = app.state.store, app.state.traces
    ident, _ = store.put("x = 1", {}, owner=store.owner("session:alice", "10.0.0.1"))
    traces.fetch_json(ident, viewer=Requester("session:alice", "10.0.0.1"))
    traces.fetch_json(ident, viewer=Requester("session:bob", "10.0.0.2"))
    traces.fetch_json(ident)  # a reader nobody knows: seen, by no one counted
    row = sqlite3.connect(tmp_path / "traces.db").execute("SELECT viewers, last_viewed FROM traces")
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
    app = create_app(Settings(db_path=path, session_secret="s"))
    with TestClient(app, base_url="http://localhost") as client:
        assert client.get(f"/api/traces/{trace_id(code)}").json()["stdout"] == "1"
        again = client.post("/api/traces", json={"code": code}).json()
        assert again["id"] == trace_id(code) and again["trace"]["stdout"] == "1"  # not run again
        new = client.post("/api/traces", json={"code": "print(2)"}).json()["id"]
        assert new != trace_id("print(2)")
        assert client.get(f"/api/traces/{trace_id('print(2)')}").status_code == 404
