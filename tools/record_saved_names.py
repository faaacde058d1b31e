"""Record what real PyTorch calls each grad_fn's saved values (`grad_fn._saved_self`, ...).

Run under the torch venv (the test suite itself never imports torch):

    .venv-torch/bin/python tools/record_saved_names.py

Runs every golden snippet (tests/engine/goldens.py) and every example of the app with
real PyTorch, walks the graph of every tensor left in its namespace, and writes
tests/app/render/golden/saved_names.json: for each grad_fn class met, the `_saved_*` attributes
its objects have. The inspector names a node's saved tensors by these attributes, and
tests/app/render/test_inspector_names.py holds it to this file.
"""

from __future__ import annotations

import contextlib
import io
import json
import sys
import warnings
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from app.examples import EXAMPLES  # noqa: E402 (plain data, no web imports)
from tests.engine.goldens import SNIPPETS as GOLDEN_SNIPPETS  # noqa: E402
from tools.record_goldens import SEED, module_map, reset_state, snippet_globals  # noqa: E402

OUT = ROOT / "tests" / "app" / "render" / "golden" / "saved_names.json"


def grad_fns(namespace: dict, tensor_type: type) -> list:
    """Every grad_fn reachable from the tensors (and lists/tuples of them) in a namespace."""
    roots = []
    for value in namespace.values():
        items = value if isinstance(value, list | tuple) else [value]
        for v in items:
            if isinstance(v, tensor_type):
                try:
                    if v.grad_fn is not None:
                        roots.append(v.grad_fn)
                except RuntimeError:  # a view whose base changed in place refuses to be read
                    continue
    seen: dict[int, object] = {}
    while roots:
        fn = roots.pop()
        if fn is None or id(fn) in seen:
            continue
        seen[id(fn)] = fn
        roots += [f for f, _ in fn.next_functions]
    return list(seen.values())


def main() -> None:
    import torch

    sources = [s["source"] for s in GOLDEN_SNIPPETS]
    sources += [example.code for example in EXAMPLES]
    names: dict[str, set[str]] = {}
    for source in sources:
        namespace = snippet_globals(module_map(torch))
        torch.manual_seed(SEED)
        with warnings.catch_warnings(), contextlib.redirect_stdout(io.StringIO()):
            warnings.simplefilter("ignore")
            try:
                exec(compile(source, "<snippet>", "exec"), namespace, namespace)
            except Exception:  # noqa: BLE001, S110 - a snippet that raises still left its graph
                pass
            finally:
                reset_state(torch)
        for fn in grad_fns(namespace, torch.Tensor):
            saved = {a for a in dir(fn) if a.startswith("_saved_")}
            names.setdefault(fn.name(), set()).update(saved)
    payload = {
        "torch_version": torch.__version__,
        "saved": {name: sorted(attrs) for name, attrs in sorted(names.items())},
    }
    OUT.write_text(json.dumps(payload, indent=1) + "\n")
    print(f"wrote {OUT} ({len(names)} grad_fn classes)")


if __name__ == "__main__":
    main()
