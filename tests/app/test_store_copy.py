"""`gradtrace store copy` and `gradtrace store check`: a store moved from SQLite to PostgreSQL
and back loses nothing, a copy run twice doubles nothing, and a damaged trace is named."""

import sqlite3

from app.cli import main
from app.store import COLUMNS, Store
from engine.tracer import trace_snippet

SNIPPETS = [
    f"import torch\nx = torch.tensor({n}.0, requires_grad=True)\n(x * x).backward()\n"
    for n in range(5)
]


def _rows(store: Store) -> list[tuple]:
    """Every trace as kept, with its viewers: what a copy must carry over."""
    rows = []
    for row in store.rows(batch=1000):
        row = tuple(bytes(v) if isinstance(v, memoryview) else v for v in row)
        rows.append((row, tuple(store.viewers_of(row[0]))))
    return rows


def _filled(path) -> Store:
    store = Store(path, owner_key=b"k")
    alice = store.owner("session:alice", "10.0.0.1")
    for n, code in enumerate(SNIPPETS):
        ident, _ = store.put(code, trace_snippet(code), owner=alice, pinned=n == 0)
        for viewer in range(n):  # counts and viewers that differ from trace to trace
            store.viewed(ident, store.owner(None, f"10.0.1.{viewer}"))
    return store


def test_a_store_copied_to_postgres_and_back_keeps_everything(postgres, tmp_path, capsys):
    source = _filled(tmp_path / "source.db")
    url = postgres.new_database()
    assert main(["store", "copy", str(tmp_path / "source.db"), url]) == 0
    assert "5 traces copied" in capsys.readouterr().out
    assert main(["store", "check", url]) == 0
    assert "5 traces checked, 0 bad" in capsys.readouterr().out

    back = tmp_path / "back.db"
    assert main(["store", "copy", url, str(back)]) == 0
    assert main(["store", "check", str(back)]) == 0
    moved = Store(back, owner_key=b"k")
    assert _rows(moved) == _rows(source)
    assert moved.total_bytes() == source.total_bytes() > 0
    for code in SNIPPETS:  # found again by its code, at the id it had
        assert moved.find(code) == source.find(code) is not None
    target = Store(url)
    try:
        assert _rows(target) == _rows(source)
        assert target.total_bytes() == source.total_bytes()
    finally:
        target.close()


def test_copying_twice_adds_nothing_the_second_time(postgres, tmp_path, capsys):
    source = _filled(tmp_path / "source.db")
    url = postgres.new_database()
    for _ in range(2):
        assert main(["store", "copy", str(tmp_path / "source.db"), url]) == 0
    assert "0 traces copied, 5 there already" in capsys.readouterr().out
    target = Store(url)
    try:
        assert _rows(target) == _rows(source)
        assert target.total_bytes() == source.total_bytes()
    finally:
        target.close()


def test_a_copy_again_after_more_views_takes_the_new_counts(tmp_path):
    source = _filled(tmp_path / "source.db")
    target = tmp_path / "target.db"
    main(["store", "copy", str(tmp_path / "source.db"), str(target)])
    ident = source.find(SNIPPETS[1])
    source.viewed(ident, source.owner(None, "192.0.2.1"))
    main(["store", "copy", str(tmp_path / "source.db"), str(target)])
    assert _rows(Store(target)) == _rows(source)


def test_a_damaged_trace_is_reported_and_fails_the_check(tmp_path, capsys):
    source = _filled(tmp_path / "source.db")
    broken, wrong = source.find(SNIPPETS[2]), source.find(SNIPPETS[3])
    db = sqlite3.connect(tmp_path / "source.db")
    db.execute("UPDATE traces SET trace = ?, size = 3 WHERE id = ?", (b"\x00\x01\x02", broken))
    (blob,) = db.execute("SELECT trace FROM traces WHERE id = ?", (wrong,)).fetchone()
    db.execute("UPDATE traces SET code = 'print(0)' WHERE id = ?", (wrong,))
    db.commit()
    assert main(["store", "check", str(tmp_path / "source.db")]) == 1
    out = capsys.readouterr().out
    assert f"{broken}: does not decompress" in out
    assert f"{wrong}: is the trace of other code" in out
    assert "5 traces checked, 2 bad" in out


def test_an_invalid_trace_fails_the_check(postgres, tmp_path, capsys):
    url = postgres.new_database()
    store = Store(url)
    try:
        good, _ = store.put(SNIPPETS[0], trace_snippet(SNIPPETS[0]))
        bad, _ = store.put("print(1)", {"code": "print(1)", "events": "not a list"})
    finally:
        store.close()
    assert main(["store", "check", url]) == 1
    out = capsys.readouterr().out
    assert f"{bad}: is not a valid trace" in out and good not in out


def test_the_check_defaults_to_the_configured_store(tmp_path, monkeypatch, capsys):
    _filled(tmp_path / "configured.db")
    monkeypatch.setenv("GRADTRACE_STORE_PATH", str(tmp_path / "configured.db"))
    monkeypatch.delenv("GRADTRACE_STORE_DATABASE_URL", raising=False)
    assert main(["store", "check"]) == 0
    assert "5 traces checked, 0 bad" in capsys.readouterr().out


def test_a_missing_source_is_refused_and_nothing_is_made(tmp_path, capsys):
    assert main(["store", "copy", str(tmp_path / "nothing.db"), str(tmp_path / "t.db")]) == 2
    assert "no store at" in capsys.readouterr().err
    assert not (tmp_path / "t.db").exists()


def test_columns_name_every_column_a_trace_has(tmp_path):
    """A column added to the traces without being copied would be lost by a move."""
    Store(tmp_path / "traces.db")
    db = sqlite3.connect(tmp_path / "traces.db")
    columns = [row[1] for row in db.execute("PRAGMA table_info(traces)")]
    assert sorted(columns) == sorted(name.strip() for name in COLUMNS.split(","))
