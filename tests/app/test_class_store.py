"""A class's rows in the store (app/store/classes.py) on both backends, and the migration that
added them (schema version 6) to a SQLite file and to a PostgreSQL database of version 5."""

import sqlite3

from app.store import SCHEMA_VERSION, Store
from app.store.classes import ClassRow
from app.store.postgres import MIGRATIONS
from tests.app.test_store import backend  # noqa: F401 (the fixture: both backends)


def _row(ident="c1", code="ABCDEF", expires=1000.0) -> ClassRow:
    return ClassRow(ident, code, "Title", "define-by-run", None, 1.0, expires, None, 0)


def test_a_class_its_members_and_answers_round_trip(backend):  # noqa: F811
    rows = backend.store().classes
    assert rows.create(_row(), "hash", "s", "a")
    assert not rows.create(_row("c2"), "hash", "s", "a")  # its join code is taken
    assert rows.by_code("ABCDEF", now=10.0).id == "c1"
    assert rows.get("c1", now=1000.0) is None  # expired: as if gone
    assert rows.key_hash("c1") == "hash"
    first, second = (rows.add_member("c1", name, 500, 10.0) for name in ("Ann", "Bo"))
    assert (first, second) == (1, 2)
    assert rows.add_member("c1", "Cy", 2, 10.0) is None  # full
    rows.record("c1", 1, "q", "3", False, True, False, 11.0)
    rows.record("c1", 1, "q", "4", False, False, False, 12.0)
    rows.record("c1", 1, "q", "5", True, False, False, 13.0)
    rows.record("c1", 1, "q", None, False, False, True, 14.0)  # asked to see the answer
    rows.record("c1", 2, "q", "5", True, False, False, 15.0)
    answers = {(a.member, a.question): a for a in rows.answers("c1")}
    ann = answers[(1, "q")]
    assert (ann.first_answer, ann.first_correct, ann.last_answer) == ("3", False, "5")
    assert (ann.attempts, ann.hints, ann.revealed, ann.correct) == (3, 1, True, True)
    assert answers[(2, "q")].first_correct is True and answers[(2, "q")].name == "Bo"
    assert rows.started_since("s", "a", 0.0) == (1, 1)
    assert rows.started_since("other", None, 0.0) == (0, 0)


def test_events_are_kept_in_order_and_go_with_their_class(backend):  # noqa: F811
    rows = backend.store().classes
    rows.create(_row(expires=100.0), "hash", None, None)
    before = rows.last_event()
    rows.add_member("c1", "Ann", 500, 10.0)
    rows.record("c1", 1, "q", "x", True, False, False, 11.0)
    rows.set_pace("c1", 4, 12.0)
    events = rows.events_after(before)
    assert [(e.kind, e.data) for e in events] == [
        ("members", {"members": 1}),
        ("answers", {"question": "q"}),
        ("pace", {"step": 4}),
    ]
    assert rows.get("c1", 50.0).paced_step == 4
    assert rows.sweep(now=200.0) == 1  # expired: the class and everything of its
    for table in ("classes", "class_members", "class_answers", "class_events"):
        assert backend.execute(f"SELECT count(*) FROM {table}").fetchone()[0] == 0, table


def test_a_version_5_sqlite_file_gains_the_class_tables(tmp_path):
    path = tmp_path / "traces.db"
    ident, _ = Store(path).put("x = 1", {"stdout": ""})
    old = sqlite3.connect(path)
    for table in ("classes", "class_members", "class_answers", "class_events"):
        old.execute(f"DROP TABLE {table}")
    old.execute("PRAGMA user_version = 5")
    old.commit()
    old.close()
    store = Store(path)
    assert store.has(ident)
    assert store.classes.create(_row(), "hash", None, None)
    assert sqlite3.connect(path).execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION


def test_a_version_5_postgres_database_gains_the_class_tables(postgres):
    import psycopg

    url = postgres.new_database()
    with psycopg.connect(url, autocommit=True) as db:
        for statement in MIGRATIONS[5]:
            db.execute(statement)
        db.execute("CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, applied FLOAT)")
        db.execute("INSERT INTO schema_migrations VALUES (5, 0)")
    store = Store(url)
    try:
        assert store.classes.create(_row(), "hash", None, None)
        assert store.classes.add_member("c1", "Ann", 500, 10.0) == 1
    finally:
        store.close()
    with psycopg.connect(url) as db:
        versions = db.execute("SELECT version FROM schema_migrations ORDER BY 1").fetchall()
    assert versions == [(5,), (6,)]


def test_a_students_stream_is_handed_its_kinds_only(tmp_path):
    """A burst of answers (more than a stream's queue holds) must not crowd out the pace a
    student's stream is waiting for: each stream is handed only the kinds it wants."""
    import asyncio

    from app.class_events import QUEUE_SIZE, ClassEvents

    store = Store(tmp_path / "traces.db")

    async def burst():
        broker = ClassEvents(store.classes)
        student = await broker.subscribe("c1", "follow", ("pace", "reveal"))
        teacher = await broker.subscribe("c1", "teach", ("answers", "members"))
        for n in range(QUEUE_SIZE + 8):
            store.classes.publish("c1", "answers", {"n": n}, 1.0)
        store.classes.publish("c1", "pace", {"step": 4}, 2.0)
        pace = await asyncio.wait_for(student.queue.get(), 10)
        await asyncio.sleep(0.5)  # the next look of the poll: nothing more for the student
        handed = student.queue.qsize(), teacher.queue.qsize()
        student.close()
        teacher.close()
        await broker.close()
        return pace, handed

    pace, (students, teachers) = asyncio.run(burst())
    assert (pace.kind, pace.data) == ("pace", {"step": 4})
    assert students == 0 and teachers == QUEUE_SIZE  # answers only, as many as it holds
