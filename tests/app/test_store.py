"""Stored traces in a real SQLite file."""

import sqlite3
import subprocess
import sys
import textwrap

from app.store import Store, trace_id


def test_the_same_code_gets_the_same_id_and_other_code_another():
    assert trace_id("print(1)") == trace_id("print(1)")
    assert trace_id("print(1)") != trace_id("print(2)")
    assert trace_id("print(1)", "2.13.0+gradtrace") != trace_id("print(1)", "other-engine")


def test_a_trace_round_trips_through_the_file(tmp_path):
    store = Store(tmp_path / "traces.db")
    trace = {"version": 1, "code": "print(1)", "stdout": "1\n", "events": [{"seq": 0}]}
    ident = store.put("print(1)", trace)
    assert Store(tmp_path / "traces.db").get(ident) == trace
    assert store.has(ident)
    assert store.get("nosuchid") is None


def test_storing_the_same_code_again_keeps_the_first_trace(tmp_path):
    store = Store(tmp_path / "traces.db")
    first = store.put("x = 1", {"stdout": "first"})
    second = store.put("x = 1", {"stdout": "second"})
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
        [sys.executable, "-c", textwrap.dedent(f"""
            import os, signal, sys
            from app.store import Store
            ident = Store({str(path)!r}).put("print(42)", {{"stdout": "42"}})
            print(ident, flush=True)
            os.kill(os.getpid(), signal.SIGKILL)
        """)],
        stdout=subprocess.PIPE, text=True,
    )
    ident = child.stdout.readline().strip()
    child.wait(timeout=30)
    assert child.returncode == -9
    assert Store(path).get(ident) == {"stdout": "42"}
