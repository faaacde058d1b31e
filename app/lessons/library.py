"""The lessons a site serves: every `*.md` file in its lessons folder, read once, in order.

An instructor adds a lesson by dropping a file in the folder (`lessons/` beside the app, or
`GRADTRACE_LESSONS_DIR`) and restarting. A file that does not read as a lesson is left out and
logged with its problems, so one typo does not take the other lessons down;
`gradtrace lessons check` says the same before it gets that far.
"""

from __future__ import annotations

import logging
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
