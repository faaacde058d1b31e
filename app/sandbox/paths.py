"""Where the server keeps its code, kept from what a snippet can walk to (issue 22).

torch shows a snippet no path of the server (engine/torch_modules.py, engine/locations.py); a
snippet that walks out of torch into the interpreter (`warnings.sys`, as the attack tests do)
meets what Python itself remembers of the disk: each module's `__file__` and `__spec__`,
`sys.path`, `sys.executable`, and the code of every function, named by its file. Both are
forgotten here. Like the import allowlist this is not a wall: a value one of the server's own
modules holds is still there for a walk that finds it, and the kernel (Landlock) is what keeps a
snippet that knows a path from reading it.
"""

from __future__ import annotations

import linecache
import os
import sys

from engine import locations

# The interpreter's own place (its lib-dynload is in it): where Python is installed says nothing
# about the server. Packages installed into it are not the standard library.
STANDARD_LIBRARY = os.path.realpath(os.path.dirname(os.__file__)) + os.sep
INSTALLED = ("site-packages", "dist-packages")
SYS_PATHS = ("executable", "_base_executable", "prefix", "exec_prefix", "base_prefix")
SYS_PATHS += ("base_exec_prefix", "_stdlib_dir")


def forget() -> None:
    """In the zygote, once everything its children need is loaded (they inherit the result,
    at no cost per run): name every function's code from its package root, and drop what
    names a place on disk from every module and from sys."""
    _relocate_code()
    for module in list(sys.modules.values()):
        namespace = getattr(module, "__dict__", None)
        if type(namespace) is not dict or "__file__" not in namespace:
            continue  # built in, frozen without a file, or a module's stand-in
        namespace.pop("__file__")
        namespace.pop("__cached__", None)
        namespace["__spec__"] = namespace["__loader__"] = None
        if "__path__" in namespace:
            namespace["__path__"] = []
    sys.path.clear()
    sys.path_importer_cache.clear()
    sys.argv[:] = sys.orig_argv[:] = [""]
    for name in SYS_PATHS:
        if hasattr(sys, name):
            setattr(sys, name, "")
    for filename in [f for f in linecache.cache if os.path.isabs(f)]:
        del linecache.cache[filename]  # sources are cached by the names their code has now


def _relocate_code() -> None:
    """engine/locations.py for every package but the standard library."""
    packages = set()
    for name, module in list(sys.modules.items()):
        file = getattr(module, "__file__", None)
        if file and not _standard(os.path.realpath(file)):
            packages.add(name.partition(".")[0])
    locations.relocate(*sorted(packages))


def _standard(file: str) -> bool:
    inside = file.removeprefix(STANDARD_LIBRARY)
    return inside != file and not inside.startswith(INSTALLED)
