"""`%%gradtrace`: a cell whose body is a snippet, run in the sandbox and shown as the player.

%load_ext gradtrace
%%gradtrace --step 3 --view autograd --theme dark --trace t
"""

from __future__ import annotations

import keyword

from IPython.core.error import UsageError
from IPython.core.magic import Magics, cell_magic, magics_class
from IPython.core.magic_arguments import argument, magic_arguments, parse_argstring
from IPython.display import display

from app.export.options import THEMES, VIEWS


@magics_class
class GradtraceMagics(Magics):
    @magic_arguments()
    @argument("--step", type=int, default=None, help="the step to open on (1-based)")
    @argument("--view", choices=VIEWS, default=VIEWS[0], help="the view to open on")
    @argument("--theme", choices=THEMES, default=THEMES[0], help="light or dark")
    @argument(
        "--trace",
        metavar="NAME",
        default=None,
        help="also keep the trace (a dict) in the notebook's namespace as NAME",
    )
    @cell_magic
    def gradtrace(self, line: str, cell: str) -> None:
        """Run the cell's snippet in gradtrace's sandbox and show it step by step."""
        import gradtrace

        options = parse_argstring(self.gradtrace, line)
        name = options.trace
        if name is not None and (not name.isidentifier() or keyword.iskeyword(name)):
            raise UsageError(f"--trace {name}: give a Python name to keep the trace under")
        recorded = gradtrace.trace(cell)
        if name is not None:
            self.shell.user_ns[name] = recorded
        player = gradtrace.Player(
            recorded, step=options.step, view=options.view, theme=options.theme
        )
        display(player)
