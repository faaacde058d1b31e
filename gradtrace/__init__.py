"""gradtrace in a notebook (docs/notebooks.md).

    import gradtrace
    gradtrace.trace(code)   # the trace, as a dict (docs/trace-format.md)
    gradtrace.show(code)    # the player, inline
    %load_ext gradtrace     # then %%gradtrace cells

Snippets run in the same sandbox as the server's (app/execution.py). `trace` needs nothing
beyond gradtrace itself; the player needs the notebook extra (anywidget), imported only when it
is first asked for.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from app.execution import run_snippet
from app.export.options import THEMES, VIEWS

if TYPE_CHECKING:
    from gradtrace.notebook import Player

__all__ = ["Player", "load_ipython_extension", "show", "trace"]


def trace(code: str) -> dict:
    """Run `code` in the sandbox, `import torch` resolving to gradtrace's engine, and return
    its trace. A snippet that fails still has one: it ends with the error."""
    if not isinstance(code, str):
        raise TypeError(f"trace() takes the snippet as a str, not {type(code).__name__}")
    return run_snippet(code)


def show(code: str, *, step: int | None = None, view: str = VIEWS[0], theme: str = THEMES[0]):
    """Run `code` and return its player (a widget: the notebook shows it), opened on `step`
    (1-based), in `view` ("tensors" or "autograd") and `theme` ("light" or "dark")."""
    from gradtrace.notebook import Player

    return Player(trace(code), step=step, view=view, theme=theme)


def load_ipython_extension(ipython) -> None:
    """`%load_ext gradtrace`: registers the `%%gradtrace` cell magic."""
    from gradtrace.magic import GradtraceMagics

    ipython.register_magics(GradtraceMagics)


def __getattr__(name: str):
    if name == "Player":  # anywidget, only when the player is wanted
        from gradtrace.notebook import Player

        return Player
    raise AttributeError(f"module 'gradtrace' has no attribute {name!r}")
