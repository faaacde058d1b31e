"""Every snippet the layers are checked on, traced and rendered once per test process.

The golden snippets (recorded from PyTorch: tests/engine/goldens.py) and the built-in examples
go through every layer: the tracer and the schema, the sandbox's validator and its hardened
child, the renderer, the player's fold in the browser, the grad and value oracles, the
inspector's names. Each layer checks something of its own, but they all start from the same
trace and the same drawing, so they read them here: `traced(source)` and `rendered(source)`
are made the first time a test asks and shared after that, by the xdist workers too (a folder
of the run's, SHARED).

The trace is made as the sandbox's child makes it (the front door's importer), so the hardened
child's trace must equal it byte for byte (tests/app/sandbox/test_engine_ops.py).

A layer's test takes the snippets as `spread(...)`: all of them in `make test`, one in eight in
`make test-fast`.

What is shared must not be changed: a test that needs to break a trace copies it first.
`changed()` says which shared results differ from what was made, and the session's last
teardown (tests/conftest.py) fails on any.
"""

from __future__ import annotations

import hashlib
import json
import os
import pickle
from collections.abc import Callable, Iterable
from functools import cache
from pathlib import Path

import pytest

from app.examples import EXAMPLES
from app.render import render
from app.sandbox import frontdoor
from engine.tracer import DEFAULT_MAX_EVENTS, trace_snippet
from tests.engine.goldens import SNIPPETS, STEPWISE

# slug → source of every snippet the step-by-step oracles walk: the goldens but the `long`
# ones, and the examples (as "example-<slug>")
STEPWISE_SOURCES: dict[str, str] = {s["slug"]: s["source"] for s in STEPWISE}
STEPWISE_SOURCES.update({f"example-{e.slug}": e.code for e in EXAMPLES})

__all__ = ["SNIPPETS", "STEPWISE", "STEPWISE_SOURCES", "changed", "rendered", "spread", "traced"]

FAST_SHARE = 8  # `make test-fast` walks one snippet in this many through each layer

_made: dict[tuple, tuple[object, str]] = {}  # (what, source, max_events) → (result, fingerprint)

# A folder the xdist workers of one run share (tests/conftest.py makes it before they start):
# what one worker made, the others read instead of making it again.
SHARED = "GRADTRACE_TEST_CORPUS"


def _fingerprint(result: object) -> str:
    return hashlib.blake2b(json.dumps(result).encode(), digest_size=16).hexdigest()


def _made_once(key: tuple, make: Callable[[], dict]) -> dict:
    """`make()`, or what another worker of this run kept of it; noted for `changed`."""
    folder = os.environ.get(SHARED)
    path = Path(folder, hashlib.blake2b(repr(key).encode()).hexdigest()) if folder else None
    try:
        result = pickle.loads(path.read_bytes()) if path else make()
    except FileNotFoundError:
        result = make()
        partial = path.with_suffix(f".{os.getpid()}")
        partial.write_bytes(pickle.dumps(result, pickle.HIGHEST_PROTOCOL))
        partial.replace(path)  # whole or not at all, for a worker reading it meanwhile
    _made[key] = (result, _fingerprint(result))
    return result


@cache
def traced(source: str, max_events: int = DEFAULT_MAX_EVENTS) -> dict:
    """The trace of `source`, as the sandbox's child records it. Shared: do not change it."""
    importer = frontdoor.make_importer()
    return _made_once(
        ("traced", source, max_events),
        lambda: trace_snippet(source, max_events=max_events, importer=importer),
    )


@cache
def rendered(source: str, max_events: int = DEFAULT_MAX_EVENTS) -> dict:
    """render() of that trace: both views drawn and the narrated steps. Shared: do not change
    it."""
    return _made_once(("rendered", source, max_events), lambda: render(traced(source, max_events)))


def spread(items: Iterable, id_of: Callable[[object], str] = str) -> list:
    """`items` as pytest params, all but every FAST_SHARE-th marked `slow`: `make test` walks a
    layer over every one, `make test-fast` (no `slow`) over a spread of them."""
    return [
        pytest.param(item, id=id_of(item), marks=() if i % FAST_SHARE == 0 else pytest.mark.slow)
        for i, item in enumerate(items)
    ]


def changed() -> list[str]:
    """Which shared results a test changed since they were made (the start of each source)."""
    return [
        f"{what} of {source[:60]!r}"
        for (what, source, _), (result, fingerprint) in _made.items()
        if _fingerprint(result) != fingerprint
    ]
