"""A class's rows in the store: the class, its members, their answers and its recent events.

The SQL is written once for both backends, as the store's is (app/store/__init__.py), on the
store's own database. The store holds what every server must agree on: who joined (a member's
number comes from the class's row, so two servers never give one twice), each member's answer
to each question (one row, updated in place, so a class's rows are bounded by its members
times its questions), and the events the servers' streams pass on. An event is a row, kept a
few minutes, so that a server polling SQLite sees what another process wrote; on PostgreSQL the
same transaction NOTIFYs it to every server listening (app/class_events.py).
"""

from __future__ import annotations

import json
from dataclasses import dataclass

CHANNEL = "gradtrace_class_events"  # PostgreSQL's NOTIFY channel
EVENTS_KEPT_SECONDS = 300.0  # an event only wakes the streams open now: older ones are pruned
CLASS_COLUMNS = "id, code, title, lesson, trace, created, expires, paced_step, members"


@dataclass(frozen=True)
class ClassRow:
    id: str
    code: str
    title: str
    lesson: str | None
    trace: str | None
    created: float
    expires: float
    paced_step: int | None
    members: int


@dataclass(frozen=True)
class AnswerRow:
    member: int
    name: str
    question: str
    first_answer: str | None
    first_correct: bool | None
    attempts: int
    hints: int
    revealed: bool
    last_answer: str | None
    correct: bool
    answered_at: float


@dataclass(frozen=True)
class Event:
    seq: int
    class_id: str
    kind: str
    data: dict


class ClassStore:
    def __init__(self, db) -> None:
        self._db = db
        self._notify = db.shared  # PostgreSQL: other servers hear of each event at once

    # ***** classes *****

    def create(self, row: ClassRow, key_hash: str, session: str | None, address: str | None):
        """Add a class; False if its join code is taken (the caller draws another)."""
        with self._db.writing(exclusive=False) as db:
            return bool(
                db.execute(
                    "INSERT INTO classes (id, key_hash, code, title, lesson, trace, created,"
                    " expires, session, address) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
                    " ON CONFLICT DO NOTHING",
                    (row.id, key_hash, row.code, row.title, row.lesson, row.trace, row.created,
                     row.expires, session, address),
                ).rowcount
            )  # fmt: skip

    def started_since(self, session: str | None, address: str | None, since: float):
        """How many classes this session, and this address, started since `since`."""
        counts = []
        with self._db.reading() as db:
            for column, value in (("session", session), ("address", address)):
                query = f"SELECT count(*) FROM classes WHERE {column} = ? AND created >= ?"
                found = db.execute(query, (value, since)).fetchone() if value else (0,)
                counts.append(int(found[0]))
        return tuple(counts)

    def get(self, class_id: str, now: float) -> ClassRow | None:
        return self._class("id", class_id, now)

    def by_code(self, code: str, now: float) -> ClassRow | None:
        return self._class("code", code, now)

    def _class(self, column: str, value: str, now: float) -> ClassRow | None:
        query = f"SELECT {CLASS_COLUMNS} FROM classes WHERE {column} = ? AND expires > ?"
        with self._db.reading() as db:
            row = db.execute(query, (value, now)).fetchone()
        return None if row is None else ClassRow(*row)

    def key_hash(self, class_id: str) -> str | None:
        with self._db.reading() as db:
            row = db.execute("SELECT key_hash FROM classes WHERE id = ?", (class_id,)).fetchone()
        return None if row is None else row[0]

    def set_pace(self, class_id: str, step: int | None, now: float) -> None:
        with self._db.writing(exclusive=False) as db:
            db.execute("UPDATE classes SET paced_step = ? WHERE id = ?", (step, class_id))
            self._publish(db, class_id, "pace", {"step": step}, now)

    def delete(self, class_id: str, now: float) -> None:
        with self._db.writing(exclusive=False) as db:
            self._publish(db, class_id, "ended", {}, now)  # the streams open now end
            _delete(db, class_id, events=False)

    def sweep(self, now: float) -> int:
        """Delete expired classes and all of theirs, and events past their time."""
        with self._db.writing(exclusive=False) as db:
            expired = db.execute("SELECT id FROM classes WHERE expires <= ?", (now,)).fetchall()
            for (class_id,) in expired:
                _delete(db, class_id, events=True)
            db.execute("DELETE FROM class_events WHERE created < ?", (now - EVENTS_KEPT_SECONDS,))
        return len(expired)

    # ***** members *****

    def add_member(self, class_id: str, name: str, limit: int, now: float) -> int | None:
        """A new member's number (from 1), or None if the class is full or gone."""
        with self._db.writing(exclusive=False) as db:
            row = db.execute(
                "UPDATE classes SET members = members + 1"
                " WHERE id = ? AND members < ? AND expires > ? RETURNING members",
                (class_id, limit, now),
            ).fetchone()
            if row is None:
                return None
            (member,) = row
            db.execute(
                "INSERT INTO class_members (class_id, member, name, joined) VALUES (?, ?, ?, ?)",
                (class_id, member, name, now),
            )
            self._publish(db, class_id, "members", {"members": member}, now)
        return member

    def rename_member(self, class_id: str, member: int, name: str, now: float) -> bool:
        with self._db.writing(exclusive=False) as db:
            renamed = db.execute(
                "UPDATE class_members SET name = ? WHERE class_id = ? AND member = ?",
                (name, class_id, member),
            ).rowcount
            if renamed:
                self._publish(db, class_id, "members", {"renamed": member}, now)
        return bool(renamed)

    def member_name(self, class_id: str, member: int) -> str | None:
        query = "SELECT name FROM class_members WHERE class_id = ? AND member = ?"
        with self._db.reading() as db:
            row = db.execute(query, (class_id, member)).fetchone()
        return None if row is None else row[0]

    def members(self, class_id: str) -> list[tuple[int, str]]:
        query = "SELECT member, name FROM class_members WHERE class_id = ? ORDER BY member"
        with self._db.reading() as db:
            return [(int(m), n) for m, n in db.execute(query, (class_id,)).fetchall()]

    # ***** answers *****

    def record(
        self,
        class_id: str,
        member: int,
        question: str,
        answer: str | None,
        correct: bool,
        hinted: bool,
        revealed: bool,
        now: float,
    ) -> None:
        """One submission: `answer` is None when the member only asked for the answer. The
        first graded answer is kept as it was; the rest is counted."""
        graded = answer is not None
        with self._db.writing(exclusive=False) as db:
            db.execute(
                "INSERT INTO class_answers (class_id, member, question, first_answer,"
                " first_correct, attempts, hints, revealed, last_answer, correct, answered_at)"
                " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
                " ON CONFLICT (class_id, member, question) DO UPDATE SET"
                " first_answer = coalesce(class_answers.first_answer, excluded.first_answer),"
                " first_correct = coalesce(class_answers.first_correct, excluded.first_correct),"
                " attempts = class_answers.attempts + excluded.attempts,"
                " hints = class_answers.hints + excluded.hints,"
                " revealed = CASE WHEN excluded.revealed = 1 THEN 1"
                " ELSE class_answers.revealed END,"
                " last_answer = coalesce(excluded.last_answer, class_answers.last_answer),"
                " correct = CASE WHEN excluded.correct = 1 THEN 1 ELSE class_answers.correct END,"
                " answered_at = excluded.answered_at",
                (class_id, member, question, answer, int(correct) if graded else None,
                 int(graded), int(hinted), int(revealed), answer, int(correct), now),
            )  # fmt: skip
            self._publish(db, class_id, "answers", {"question": question}, now)

    def answers(self, class_id: str) -> list[AnswerRow]:
        """Every member's answers, members in the order they joined, with their names."""
        query = (
            "SELECT a.member, m.name, a.question, a.first_answer, a.first_correct, a.attempts,"
            " a.hints, a.revealed, a.last_answer, a.correct, a.answered_at"
            " FROM class_answers a JOIN class_members m"
            " ON m.class_id = a.class_id AND m.member = a.member"
            " WHERE a.class_id = ? ORDER BY a.member, a.answered_at"
        )
        with self._db.reading() as db:
            rows = db.execute(query, (class_id,)).fetchall()
        return [
            AnswerRow(
                int(r[0]), r[1], r[2], r[3], None if r[4] is None else bool(r[4]), int(r[5]),
                int(r[6]), bool(r[7]), r[8], bool(r[9]), float(r[10]),
            )
            for r in rows
        ]  # fmt: skip

    # ***** events *****

    def publish(self, class_id: str, kind: str, data: dict, now: float) -> None:
        with self._db.writing(exclusive=False) as db:
            self._publish(db, class_id, kind, data, now)

    def _publish(self, db, class_id: str, kind: str, data: dict, now: float) -> None:
        text = json.dumps(data, separators=(",", ":"))
        (seq,) = db.execute(
            "INSERT INTO class_events (class_id, kind, data, created) VALUES (?, ?, ?, ?)"
            " RETURNING seq",
            (class_id, kind, text, now),
        ).fetchone()
        if self._notify:  # delivered when the transaction commits, and only if it does
            payload = json.dumps({"seq": seq, "class": class_id, "kind": kind, "data": data})
            db.execute("SELECT pg_notify(?, ?)", (CHANNEL, payload))

    def last_event(self) -> int:
        with self._db.reading() as db:
            return int(db.execute("SELECT coalesce(max(seq), 0) FROM class_events").fetchone()[0])

    def events_after(self, seq: int, limit: int = 500) -> list[Event]:
        """Events written after `seq`, oldest first. One SQLite file has one writer at a time,
        so its sequence numbers are in commit order and none is skipped by reading past it."""
        query = (
            "SELECT seq, class_id, kind, data FROM class_events WHERE seq > ? ORDER BY seq"
            f" LIMIT {int(limit)}"
        )
        with self._db.reading() as db:
            rows = db.execute(query, (seq,)).fetchall()
        return [Event(int(s), c, k, json.loads(d)) for s, c, k, d in rows]


def _delete(db, class_id: str, *, events: bool) -> None:
    tables = ["class_answers", "class_members"] + (["class_events"] if events else [])
    for table in tables:
        db.execute(f"DELETE FROM {table} WHERE class_id = ?", (class_id,))
    db.execute("DELETE FROM classes WHERE id = ?", (class_id,))
