"""Moving a store, and checking one: `gradtrace store copy SRC DST` and `gradtrace store check`.

Growing from one server's SQLite file to PostgreSQL (or back) must lose nothing: a copy moves
every trace as it is kept (its id, hash, compressed bytes, owners, pinned flag, viewers and
times), in batches each committed whole, so an interrupted copy is simply run again: what is
there already is kept (its counts and times the larger of the two), nothing is doubled. A check
reads every stored trace back and holds it to what the server holds a fresh one to: it must
decompress, parse, and pass the sandbox's trace validator (app/sandbox/validate.py).
"""

from __future__ import annotations

import zlib
from collections.abc import Callable
from dataclasses import dataclass

from app.sandbox import validate
from app.store import Store

BATCH = 100  # traces per transaction: a few hundred KB each at most, compressed


@dataclass
class Copied:
    added: int = 0  # new in the target
    kept: int = 0  # there already
    conflicting: int = 0  # the same code there under another id: left as it was


def copy_store(
    source: Store, target: Store, progress: Callable[[int], None] | None = None
) -> Copied:
    copied = Copied()
    after = ""
    while rows := source.rows(after, BATCH):
        viewers = {row[0]: source.viewers_of(row[0]) for row in rows if row[10]}
        added, conflicting = target.add_rows(rows, viewers)
        copied.added += added
        copied.conflicting += conflicting
        copied.kept += len(rows) - added - conflicting
        after = rows[-1][0]
        if progress is not None:
            progress(len(rows))
    return copied


@dataclass(frozen=True)
class Problem:
    ident: str
    message: str


def check_store(store: Store) -> tuple[int, list[Problem]]:
    """How many traces were read, and what is wrong with those that are not whole traces."""
    checked, problems = 0, []
    after = ""
    while rows := store.rows(after, BATCH):
        for row in rows:
            checked += 1
            message = _problem(code=row[2], blob=bytes(row[4]), size=row[5])
            if message is not None:
                problems.append(Problem(row[0], message))
        after = rows[-1][0]
    return checked, problems


def _problem(code: str, blob: bytes, size: int) -> str | None:
    if size != len(blob):
        return f"its size says {size:,} bytes, and it has {len(blob):,}"
    try:
        text = zlib.decompress(blob)
    except zlib.error as error:
        return f"does not decompress: {error}"
    try:
        trace = validate.parse(text)  # JSON alone, then every field: as the server reads a run
    except validate.Malformed as error:
        return f"is not a valid trace: {error}"
    if trace.get("code") != code:
        return "is the trace of other code than its row's"
    return None
