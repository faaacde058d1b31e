"""The friendly front layers: clear messages for snippets that are too big or import too much.

None of this is a security boundary (the kernel layers are): a snippet that gets past it still
meets Landlock and seccomp. It exists so that `import os` reads as a sentence a learner
understands instead of a killed process.
"""

from __future__ import annotations

import ast
import builtins
import importlib
import sys

from app.sandbox import faces
from app.sandbox.settings import SandboxSettings
from engine.snippet import Importer

# What tutorials import besides torch. Submodules of these are allowed when already loaded.
ALLOWED = (
    "math", "random", "itertools", "functools", "operator", "collections", "dataclasses",
    "typing", "contextlib", "re", "statistics", "warnings", "time", "numpy", "copy",
)  # fmt: skip
ALLOWED_SUBMODULES = ("collections.abc",)


class Rejected(Exception):
    """The snippet is refused before it runs; the message says why."""


def check_source(code: str, settings: SandboxSettings) -> None:
    """Refuse source that is too long, not text, or nested too deeply; let SyntaxError through
    (the tracer reports it with its line, as Python would)."""
    try:
        size = len(code.encode("utf-8"))
    except UnicodeEncodeError:
        raise Rejected("The snippet is not valid UTF-8 text.") from None
    if size > settings.max_source_bytes:
        raise Rejected(
            f"The snippet is {size:,} bytes long; snippets can be at most "
            f"{settings.max_source_bytes:,} bytes."
        )
    if "\x00" in code:
        raise Rejected("The snippet contains a NUL character.")
    try:
        tree = ast.parse(code)
    except SyntaxError:
        return
    except (RecursionError, MemoryError, ValueError):
        raise Rejected("The snippet is nested too deeply for Python to read.") from None
    if _depth(tree) > settings.max_ast_depth:
        raise Rejected(
            f"The snippet nests expressions or blocks more than {settings.max_ast_depth} "
            "levels deep."
        )


def _depth(tree: ast.AST) -> int:
    deepest = 0
    stack = [(tree, 0)]
    while stack:
        node, depth = stack.pop()
        deepest = max(deepest, depth)
        stack.extend((child, depth + 1) for child in ast.iter_child_nodes(node))
    return deepest


def import_message(name: str) -> str:
    listed = ", ".join(["torch", *ALLOWED])
    return f"gradtrace snippets can import {listed} (not '{name}')"


def make_importer() -> Importer:
    """The `__import__` for everything but torch (which engine.snippet maps to the engine).

    Imports written in the snippet get the allowlist, and faces for numpy and time. numpy's C
    code also imports through the snippet's `__import__` (lazily, the first time some functions
    run); those calls pass a list as fromlist and get modules already loaded, never new ones.
    """
    face_modules = faces.build()
    real_import = builtins.__import__

    def importer(name, globals=None, locals=None, fromlist=(), level=0):  # noqa: A002
        if type(fromlist) is list:  # PyImport_Import, from C code
            module = sys.modules.get(name) if type(name) is str else None
            if module is None:
                raise ModuleNotFoundError(f"No module named {name!r}", name=name)
            return module
        if type(name) is not str:
            raise TypeError("module name must be str")
        if level != 0:
            raise ImportError("snippets are a single file: relative imports have nothing to find")
        top = name.partition(".")[0]
        if top not in ALLOWED or ("." in name and not _allowed_submodule(name)):
            raise ImportError(import_message(name), name=name)
        if top in face_modules:
            face = face_modules.get(name)
            if face is None:
                raise ImportError(import_message(name), name=name)
            return face if fromlist else face_modules[top]
        return real_import(name, globals, locals, fromlist, level)

    return importer


def _allowed_submodule(name: str) -> bool:
    return name in ALLOWED_SUBMODULES or name in ("numpy.random", "numpy.linalg")


# Imported by Python itself while it compiles or runs a snippet: unicodedata for non-ASCII
# identifiers (`π = 3.14`).
INTERPRETER_NEEDS = ("unicodedata",)


def preload() -> None:
    """Import everything a snippet may need, so that none of its imports touches the disk."""
    for name in (*ALLOWED, *ALLOWED_SUBMODULES, *INTERPRETER_NEEDS):
        importlib.import_module(name)
