"""A real notebook, run by a real kernel: `%load_ext gradtrace`, a `%%gradtrace` cell, and a
cell that reads the trace the magic kept. Needs nbclient and ipykernel (not in the notebook
extra: only this test runs a kernel); no network, a few seconds."""

from __future__ import annotations

from pathlib import Path

import pytest

from app.examples import BY_SLUG
from app.render import render
from engine.tracer import trace_snippet

nbclient = pytest.importorskip("nbclient")
nbformat = pytest.importorskip("nbformat")
pytest.importorskip("ipykernel")

ROOT = Path(__file__).resolve().parents[2]
SEED = BY_SLUG["two-paths"].code
WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
WIDGET_STATE = "application/vnd.jupyter.widget-state+json"


def test_a_notebook_runs_the_magic_and_keeps_the_widget():
    notebook = nbformat.v4.new_notebook()
    notebook.cells = [
        nbformat.v4.new_code_cell("%load_ext gradtrace"),
        nbformat.v4.new_code_cell(f"%%gradtrace --step 3 --view autograd --trace t\n{SEED}"),
        nbformat.v4.new_code_cell('print(t["stdout"], end="")'),
    ]
    client = nbclient.NotebookClient(
        notebook, timeout=60, kernel_name="python3", resources={"metadata": {"path": str(ROOT)}}
    )
    client.execute()

    shown = [o for o in notebook.cells[1].outputs if WIDGET_VIEW in o.get("data", {})]
    assert len(shown) == 1, notebook.cells[1].outputs
    model_id = shown[0]["data"][WIDGET_VIEW]["model_id"]
    state = notebook.metadata["widgets"][WIDGET_STATE]["state"][model_id]["state"]
    assert (state["step"], state["view"], state["theme"]) == (3, "autograd", "light")
    assert state["steps"] == len(render(trace_snippet(SEED))["steps"])
    assert 'data-hash="off"' in state["html"] and "<grad-player" in state["html"]
    assert "export default" in state["_esm"]

    [printed] = notebook.cells[2].outputs
    assert printed["text"] == "5.0 3.0\n"  # the magic kept the trace as `t`
