"""Code that names its file from its package root (engine/nn/modules.py), not the server's disk.

A function's `__code__.co_filename` is what a traceback, a warning and `inspect.getfile` show.
Python sets it to the absolute path of the file it loaded, so a snippet could read where the
server keeps its code (`torch.nn.Linear.__init__.__code__.co_filename`, the file a warning from
the engine names, the frames of an exception it caught). `relocate` renames the code of a
package's modules in place, as importlib itself does when a compiled file has moved
(`_imp._fix_co_filename`, which renames nested code too: closures made later get the new name).
A developer reads the same relative path in a traceback, and its source is still found
(linecache asks the module's loader, or looks the name up along sys.path).
"""

from __future__ import annotations

import _imp
import gc
import os
import sys
from types import FunctionType, ModuleType

_relocated: set[str] = set()  # modules whose code is renamed already
_modules_seen: dict[tuple[str, ...], int] = {}  # len(sys.modules) at the last call, by packages


def code_filename(module: ModuleType) -> str:
    """What `module`'s code is named after `relocate`: its file from the folder its top
    package is in (engine/nn/modules.py, numpy/linalg/_linalg.py, six.py)."""
    top = sys.modules[module.__name__.partition(".")[0]]
    places = list(getattr(top, "__path__", ())) or [top.__file__]  # a package, or one file
    return os.path.relpath(module.__file__, os.path.dirname(places[0]))


def relocate(*packages: str) -> None:
    """Rename the code of every loaded module of `packages` (cheap when none is new)."""
    if _modules_seen.get(packages) == len(sys.modules):
        return
    _modules_seen[packages] = len(sys.modules)
    renames = {}
    for name, module in list(sys.modules.items()):
        if name.partition(".")[0] in packages and name not in _relocated:
            _relocated.add(name)
            if getattr(module, "__file__", None):
                renames[module.__file__] = code_filename(module)
    if not renames:
        return
    for value in gc.get_objects():
        if type(value) is FunctionType and value.__code__.co_filename in renames:
            _imp._fix_co_filename(value.__code__, renames[value.__code__.co_filename])
