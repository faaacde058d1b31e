"""Where the files gradtrace ships beside its code are, wherever it was installed (issue 23).

The templates, the static files, the built-in lessons and the JSON schemas are edited at the
repository's top level (templates/, static/, lessons/, docs/*.schema.json). app/shipped/ holds
relative symlinks to them, so that in a checkout and in an editable install they are found
inside the package; the wheel holds the files themselves at the same places (pyproject.toml's
force-include). Either way they are looked up here, from the imported package, never from a
checkout root, which an installed server does not have.
"""

from __future__ import annotations

import os
import site
from importlib import resources
from pathlib import Path


def package_folder(name: str) -> Path:
    """The folder the package `name` is imported from, as a real path on disk: Jinja2 and the
    static files' server want folders, so a zipped install is refused here, by name."""
    folder = resources.files(name)
    if not isinstance(folder, Path):
        raise RuntimeError(f"gradtrace must be installed as files, not zipped ({folder})")
    return folder


APP = package_folder("app")
SHIPPED = APP / "shipped"
TEMPLATES = SHIPPED / "templates"
STATIC = SHIPPED / "static"
LESSONS = SHIPPED / "lessons"  # the built-in ones; GRADTRACE_LESSONS_DIR may name others
TRACE_SCHEMA = SHIPPED / "trace.schema.json"
LESSON_SCHEMA = SHIPPED / "lesson.schema.json"


def code_folder_for_children() -> str | None:
    """The folder our packages are imported from, for a child interpreter of this Python (a
    render worker, the sandbox's zygote) to put first on its path; None when the interpreter
    finds them by itself: installed, they are in its site-packages, which must not go ahead of
    the standard library. A checkout, or a PYTHONPATH that names another (a git worktree),
    is added, so that children run the very code the server runs."""
    code = os.path.realpath(APP.parent)
    installed = {os.path.realpath(folder) for folder in site.getsitepackages()}
    return None if code in installed else str(APP.parent)
