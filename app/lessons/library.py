"""The lessons a site serves: every `*.md` file in its lessons folder, in order.

An instructor adds a lesson by dropping a file in the folder (`lessons/` beside the app, or
`GRADTRACE_LESSONS_DIR`): the shelf notices a new, changed or removed file at the next request
(a stat of each file, no more) and reads the folder again. A file that does not read as a
lesson is left out and logged with its problems, so one typo does not take the other lessons
down; `gradtrace lessons check` says the same before it gets that far.
"""

from __future__ import annotations

import logging
import threading
from dataclasses import dataclass
from pathlib import Path

from app.lessons.source import BadLesson, LessonFile, read

log = logging.getLogger("gradtrace.lessons")


@dataclass(frozen=True)
class Library:
    lessons: tuple[LessonFile, ...]  # by `order`, then slug

    @classmethod
    def load(cls, folder: Path) -> Library:
        found = []
        for path in sorted(folder.glob("*.md")) if folder.is_dir() else ():
            try:
                found.append(read(path))
            except BadLesson as bad:
                for problem in bad.problems:
                    log.error("lesson %s:%d left out: %s", path, problem.line, problem.message)
        found.sort(key=lambda lesson: (lesson.lesson.order, lesson.slug))
        return cls(tuple(found))

    def get(self, slug: str) -> LessonFile | None:
        return next((lesson for lesson in self.lessons if lesson.slug == slug), None)

    def neighbours(self, slug: str) -> tuple[LessonFile | None, LessonFile | None]:
        """The lessons before and after `slug`'s."""
        slugs = [lesson.slug for lesson in self.lessons]
        index = slugs.index(slug)
        before = self.lessons[index - 1] if index > 0 else None
        after = self.lessons[index + 1] if index + 1 < len(self.lessons) else None
        return before, after


class Shelf:
    """The folder's lessons as they are now: `shelf.library()` reads it again when a file was
    added, changed or removed since the last read."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self._lock = threading.Lock()
        self._signature: tuple | None = None
        self._library = Library(())

    def library(self) -> Library:
        signature = self._stat()
        with self._lock:
            if signature != self._signature:
                self._library = Library.load(self.folder)
                self._signature = signature
            return self._library

    def _stat(self) -> tuple:
        found = []
        for path in sorted(self.folder.glob("*.md")) if self.folder.is_dir() else ():
            try:
                info = path.stat()
            except OSError:
                continue  # removed between the listing and the stat
            found.append((path.name, info.st_mtime_ns, info.st_size))
        return tuple(found)
