"""No path of the server shows in the sandbox either (issue 22): the probes of
tests/engine/test_locations.py, and walks out of torch into the interpreter (`warnings.sys`, as
the attack tests take), which find modules, sys and code that name no folder of the server."""

from __future__ import annotations

import json

import pytest

from tests.engine.test_locations import CHECKOUT, PROBES

SYS = "import warnings\nsys = warnings.sys\n"

WALKS = {
    "sys-modules": (
        SYS + "print(sys.modules['engine'], sys.modules['engine.nn'].__dict__.get('__file__'))\n"
        "print(sys.modules['app.sandbox.child'], sys.modules['numpy'], sys.modules['__main__'])\n"
        "print([repr(m) for m in list(sys.modules.values())])\n"
        "print([getattr(m, '__spec__', None) for m in list(sys.modules.values())])",
        "<module 'engine'>",
    ),
    "sys-paths": (
        SYS + "print(sys.path, sys.executable, sys.prefix, sys.base_prefix, sys.argv)\n"
        "print(sys.orig_argv, sys.path_importer_cache, sys._base_executable)",
        "[]",
    ),
    "code-of-numpy-and-app": (
        "import numpy as np\nprint(np.linalg.norm._implementation.__code__.co_filename)\n"
        + SYS
        + "print(sys.modules['app.sandbox.child'].serve.__code__.co_filename)",
        "numpy/linalg/",
    ),
    "linecache": (SYS + "print(sorted(sys.modules['linecache'].cache))", "engine/"),
    "caught-stop-frames": (
        "try:\n    while True:\n        pass\nexcept BaseException as error:\n"
        "    tb = error.__traceback__\n    while tb is not None:\n"
        "        print(tb.tb_frame.f_code.co_filename)\n        tb = tb.tb_next\n",
        "app/sandbox/child.py",
    ),
}
# help() needs pydoc, which a child cannot load: it says so, and nothing more
NO_HELP = {name: (PROBES[name][0], "No module named 'pydoc'") for name in PROBES if "help" in name}
SANDBOX_PROBES = {**PROBES, **NO_HELP, **WALKS}


@pytest.mark.parametrize("name", SANDBOX_PROBES)
def test_no_probe_shows_where_the_server_is(name, sandbox, layers) -> None:
    code, expected = SANDBOX_PROBES[name]
    trace = sandbox.run_blocking(code, client=f"locations-{name}")
    shown = json.dumps([trace["stdout"], trace["stderr"], trace["outcome"]])
    assert expected in shown, shown  # the probe looked
    assert CHECKOUT not in shown


def test_a_warning_from_the_engine_still_quotes_its_line(sandbox, layers) -> None:
    code = "import torch\ntorch.nn.Softmax()(torch.ones(2, 2))\n"
    trace = sandbox.run_blocking(code, client="locations-warning")
    warning, quoted = trace["stderr"].splitlines()[:2]
    assert warning.startswith("engine/nn/modules.py:"), trace["stderr"]
    assert quoted.startswith("  ") and quoted.strip(), trace["stderr"]  # the line, from the cache
