"""A class, without accounts: an instructor's private link, a join code, and every answer seen.

Progress otherwise lives in one browser's localStorage, so an instructor cannot see that half
the room predicted the wrong node. A class changes that for one lesson (or one trace's quiz):
its instructor holds a link with a secret key (kept only as a hash), students join with a short
code and a name of their choosing, and while their cookie names the class each answer they
give to its checks is recorded: the first answer as given, how many tries, hints and reveals.
Nothing else is kept about them, and all of it is deleted when the class expires
(docs/classes.md).

This is the service; it knows no HTTP (app/routes/classes.py is the web's side of it), and its
rows are app/store/classes.py's. Events (a join, an answer, the pace) go through the store so
that every server's streams hear of them (app/class_events.py).
"""

from __future__ import annotations

import csv
import hashlib
import hmac
import io
import secrets
import time
import unicodedata
from collections import Counter
from dataclasses import dataclass
from datetime import UTC, datetime

import segno
from itsdangerous import BadSignature, Signer

from app.lessons.grading import Answers, Feedback, NodePicks
from app.lessons.model import ChoiceQuestion, NodeQuestion, NumericQuestion, OrderQuestion
from app.store.classes import AnswerRow, ClassRow, ClassStore

COOKIE = "gradtrace_class"
# no 0/O, 1/I/L: a code read off a projector is typed right
CODE_ALPHABET = "ABCDEFGHJKMNPQRSTUVWXYZ23456789"
CODE_LENGTH = 6
MAX_TITLE = 80
MAX_NAME = 40
MAX_MEMBERS = 500
MAX_RETENTION_DAYS = 365
DEFAULT_RETENTION_DAYS = 30
STARTS_PER_HOUR = 20  # classes one session, or one address, may start in an hour
SWEEP_EVERY = 3600.0  # seconds between deleting expired classes, done by the next write
DAY = 24 * 3600.0
CSV_HEADER = (
    "student", "question", "first_answer", "first_correct", "attempts", "hints", "revealed",
    "last_answer", "correct", "answered_at",
)  # fmt: skip
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")  # a spreadsheet would run such a cell


class ClassError(ValueError):
    """A request about a class that cannot be done: its message says why, `status` is its code."""

    def __init__(self, message: str, status: int = 400) -> None:
        super().__init__(message)
        self.status = status


class ClassGone(ClassError):
    """An instructor's link to no live class: ended, expired, or not its key (all alike)."""

    def __init__(self) -> None:
        message = "No such class: it has ended, its time is up, or this link is not its own."
        super().__init__(message, 404)


@dataclass(frozen=True)
class Target:
    """What a class is taught on: a lesson (its slug) or a trace's quiz (its id)."""

    kind: str  # "lesson" or "trace"
    ident: str

    @property
    def path(self) -> str:
        return f"/lessons/{self.ident}" if self.kind == "lesson" else f"/t/{self.ident}/quiz"

    @classmethod
    def of(cls, row: ClassRow) -> Target:
        return cls("lesson", row.lesson) if row.lesson else cls("trace", row.trace)


@dataclass(frozen=True)
class Membership:
    """A student's place in a class, as their cookie names it."""

    row: ClassRow
    member: int
    name: str

    @property
    def target(self) -> Target:
        return Target.of(self.row)


@dataclass(frozen=True)
class Given:
    """One submission as a class records it."""

    question: str
    answer: str | None  # as text (a choice's words, a node's name); None: only asked to see it
    correct: bool
    hinted: bool
    revealed: bool


@dataclass(frozen=True)
class AnswerCount:
    text: str
    count: int
    right: bool
    misconception: str | None  # what a wrong choice mistakes, as its author wrote it


@dataclass(frozen=True)
class QuestionResults:
    id: str
    prompt: str
    checkpoint: int | None
    answered: int
    answers: list[AnswerCount]
    stuck: list[str]  # names: wrong twice and never right, or who asked for the answer


def clean(text: str, limit: int) -> str:
    """A name or title as kept: no control characters, spaces collapsed, at most `limit`."""
    kept = "".join(c if unicodedata.category(c)[0] != "C" else " " for c in text)
    return " ".join(kept.split())[:limit]


def hashed(key: str) -> str:
    return hashlib.sha256(key.encode()).hexdigest()


def qr_svg(url: str) -> str:
    """A QR code of `url` as an SVG data: URI, for an <img> to project (the page's policy
    allows data: images; no markup of it goes into the page)."""
    return segno.make(url, error="m").svg_data_uri(scale=8, border=2)


class Classes:
    def __init__(self, store, secret: str, clock=time.time) -> None:
        """`store` is the app's Store: its `classes` rows, and `owner` for keyed hashes of who
        starts one. `secret` signs the students' cookies."""
        self._store = store
        self._rows: ClassStore = store.classes
        self._signer = Signer(secret, salt="gradtrace.class")
        self._clock = clock
        self._next_sweep = 0.0

    # ***** the instructor's side *****

    def start(
        self,
        target: Target,
        title: str,
        retention_days: int,
        session: str | None,
        address: str | None,
    ) -> tuple[ClassRow, str]:
        """A new class and its instructor's key (given once: only its hash is kept)."""
        if not 1 <= retention_days <= MAX_RETENTION_DAYS:
            raise ClassError(f"keep a class's answers from 1 to {MAX_RETENTION_DAYS} days", 422)
        now = self._clock()
        self._sweep_now_and_then(now)
        owner = self._store.owner(session, address)
        started = self._rows.started_since(owner.session, owner.address, now - 3600)
        if max(started) >= STARTS_PER_HOUR:
            raise ClassError(
                f"At most {STARTS_PER_HOUR} classes may be started in an hour from here: "
                "try again later, or go on with one you started.",
                429,
            )
        key = secrets.token_urlsafe(24)  # 192 bits
        title = clean(title, MAX_TITLE) or f"Class on {target.ident}"
        for _ in range(20):
            row = ClassRow(
                id=secrets.token_urlsafe(12),
                code="".join(secrets.choice(CODE_ALPHABET) for _ in range(CODE_LENGTH)),
                title=title,
                lesson=target.ident if target.kind == "lesson" else None,
                trace=target.ident if target.kind == "trace" else None,
                created=now,
                expires=now + retention_days * DAY,
                paced_step=None,
                members=0,
            )
            if self._rows.create(row, hashed(key), owner.session, owner.address):
                return row, key
        raise ClassError("no join code was free: try again", 503)

    def teaching(self, class_id: str, key: str) -> ClassRow | None:
        """The class, if `key` is its instructor's; None otherwise (or if it has expired)."""
        row = self._rows.get(class_id, self._clock())
        known = self._rows.key_hash(class_id) if row else None
        if known is None or not hmac.compare_digest(known, hashed(key)):
            return None
        return row

    def get(self, class_id: str) -> ClassRow | None:
        return self._rows.get(class_id, self._clock())

    def pace(self, row: ClassRow, step: int | None) -> None:
        if step is not None and not 1 <= step <= 100_000:
            raise ClassError("the step is a number from 1", 422)
        self._rows.set_pace(row.id, step, self._clock())

    def reveal(self, row: ClassRow, question: str) -> None:
        if not question or len(question) > 100:
            raise ClassError("Say which question's answer to show everyone.", 422)
        self._rows.publish(row.id, "reveal", {"question": question}, self._clock())

    def end(self, row: ClassRow) -> None:
        self._rows.delete(row.id, self._clock())

    def sweep(self) -> int:
        now = self._clock()
        self._next_sweep = now + SWEEP_EVERY
        return self._rows.sweep(now)

    def _sweep_now_and_then(self, now: float) -> None:
        if now >= self._next_sweep:
            self._next_sweep = now + SWEEP_EVERY
            self._rows.sweep(now)

    # ***** the students' side *****

    def join(self, code: str, name: str, cookie: str | None) -> Membership:
        """Join the class of `code` (or, with a cookie of it already, stay its same member,
        renamed if a name is given)."""
        now = self._clock()
        code = clean(code, 20).upper().replace(" ", "")
        row = self._rows.by_code(code, now) if len(code) == CODE_LENGTH else None
        if row is None:
            raise ClassError(
                "No class has that code now: check it with your instructor (a class ends when "
                "its instructor ends it, or when its time is up).",
                404,
            )
        name = clean(name, MAX_NAME)
        known = self._member_of(cookie)
        if known is not None and known[0] == row.id:
            member = known[1]
            kept = self._rows.member_name(row.id, member)
            if kept is not None:
                if name and name != kept:
                    self._rows.rename_member(row.id, member, name, now)
                    kept = name
                return Membership(row, member, kept)
        self._sweep_now_and_then(now)
        member = self._rows.add_member(row.id, name or "", MAX_MEMBERS, now)
        if member is None:
            raise ClassError(f"This class is full: it takes {MAX_MEMBERS} students.", 409)
        if not name:
            name = f"Student {member}"
            self._rows.rename_member(row.id, member, name, now)
        return Membership(row, member, name)

    def cookie(self, membership: Membership) -> tuple[str, int]:
        """The cookie's value, and for how many seconds to keep it: the class's time left."""
        value = self._signer.sign(f"{membership.row.id}.{membership.member}").decode()
        return value, max(1, int(membership.row.expires - self._clock()))

    def membership(self, cookie: str | None) -> Membership | None:
        """The live class and member a cookie names, or None."""
        known = self._member_of(cookie)
        if known is None:
            return None
        row = self._rows.get(known[0], self._clock())
        name = self._rows.member_name(known[0], known[1]) if row else None
        return None if name is None else Membership(row, known[1], name)

    def _member_of(self, cookie: str | None) -> tuple[str, int] | None:
        if not cookie or len(cookie) > 200:
            return None
        try:
            class_id, _, member = self._signer.unsign(cookie).decode().rpartition(".")
            return class_id, int(member)
        except (BadSignature, UnicodeDecodeError, ValueError):
            return None

    def record(self, membership: Membership, given: Given) -> None:
        self._rows.record(
            membership.row.id, membership.member, given.question, given.answer,
            given.correct, given.hinted, given.revealed, self._clock(),
        )  # fmt: skip

    # ***** results *****

    def members(self, row: ClassRow) -> list[tuple[int, str]]:
        return self._rows.members(row.id)

    def results(self, row: ClassRow, questions: list) -> list[QuestionResults]:
        """Per question of the class's page (in its order): who answered what first."""
        by_question: dict[str, list[AnswerRow]] = {}
        for answer in self._rows.answers(row.id):
            by_question.setdefault(answer.question, []).append(answer)
        return [_results(q, by_question.get(q.id, [])) for q in questions]

    def csv_text(self, row: ClassRow) -> str:
        """One row per member and question answered (one with no question for a member who
        answered nothing), for a gradebook."""
        out = io.StringIO()
        writer = csv.writer(out)
        writer.writerow(CSV_HEADER)
        answered: dict[int, list[AnswerRow]] = {}
        for answer in self._rows.answers(row.id):
            answered.setdefault(answer.member, []).append(answer)
        for member, name in self._rows.members(row.id):
            rows = answered.get(member) or [None]
            for a in rows:
                if a is None:
                    cells = [name, "", "", "", "", "", "", "", "", ""]
                else:
                    when = datetime.fromtimestamp(a.answered_at, UTC).isoformat(timespec="seconds")
                    cells = [
                        name, a.question, a.first_answer or "", _flag(a.first_correct),
                        a.attempts, a.hints, _flag(a.revealed), a.last_answer or "",
                        _flag(a.correct), when,
                    ]  # fmt: skip
                writer.writerow([_cell(c) for c in cells])
        return out.getvalue()


def given(question, answers: Answers, picks: NodePicks | None, feedback: Feedback) -> Given:
    """A graded submission as a class records it: the answer as words (a choice's text, a
    node's name, the order), whether it was right, hinted, or only a request to see it."""
    revealed = answers.revealing()
    text = None if revealed else _answer_text(question, answers, picks)
    hinted = not feedback.correct and feedback.hint is not None and not revealed
    return Given(question.id, text, feedback.correct and not revealed, hinted, revealed)


def _answer_text(question, answers: Answers, picks: NodePicks | None) -> str:
    if isinstance(question, ChoiceQuestion):
        picked = sorted({int(v) for v in answers.all("choice")})
        return "; ".join(question.choices[i].text for i in picked)
    if isinstance(question, NumericQuestion):
        value = float(answers.one("value", "").replace("−", "-"))
        return str(int(value)) if value.is_integer() and abs(value) < 1e15 else repr(value)
    if isinstance(question, NodeQuestion):
        names = picks.names if picks else {}
        return ", ".join(sorted(names.get(e, e) for e in set(answers.all("node"))))
    if isinstance(question, OrderQuestion):
        from app.lessons.grading import shuffled

        items = shuffled(question)
        ranks = [int(answers.one(f"rank-{k}", "")) for k in range(len(items))]
        return " → ".join(item for _, item in sorted(zip(ranks, items, strict=True)))
    return ""


def _results(question, rows: list[AnswerRow]) -> QuestionResults:
    firsts = [r for r in rows if r.first_answer is not None]
    counts = Counter(r.first_answer for r in firsts)
    right_of = {r.first_answer: bool(r.first_correct) for r in firsts}
    answers = []
    if isinstance(question, ChoiceQuestion) and not question.multiple:
        for choice in question.choices:
            misconception = None if choice.correct else (choice.feedback or None)
            answers.append(
                AnswerCount(choice.text, counts.pop(choice.text, 0), choice.correct, misconception)
            )
    for text, count in counts.most_common():
        answers.append(AnswerCount(text, count, right_of[text], None))
    stuck = [r.name for r in rows if r.revealed or (not r.correct and r.attempts >= 2)]
    checkpoint = getattr(question, "checkpoint", None)
    return QuestionResults(question.id, question.prompt, checkpoint, len(firsts), answers, stuck)


def _flag(value: bool | None) -> str:
    return "" if value is None else ("1" if value else "0")


def _cell(value) -> str:
    text = str(value)
    return "'" + text if text.startswith(FORMULA_STARTS) else text
