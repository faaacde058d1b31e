"""A page's biggest view drawn in a forked child (app/render/forked.py): the page is the same,
the child's answer keeps its types, its failures are errors here, and it never outlives its
parent."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import time

import pytest

from app.examples import BY_SLUG
from app.render import layout
from app.render import page as page_module
from app.render.forked import ChildFailed, at_once
from app.render.page import drawn_page
from engine.tracer import trace_snippet


@pytest.fixture(scope="module")
def mlp() -> dict:
    return trace_snippet(BY_SLUG["mlp-training"].code)


def test_the_forked_job_runs_in_another_process_and_the_others_here():
    here = os.getpid()
    done = at_once({"a": os.getpid, "b": os.getpid, "c": os.getpid}, "b")
    assert list(done) == ["a", "b", "c"]
    assert done["a"] == done["c"] == here
    assert done["b"] != here


def test_nothing_is_forked_when_no_job_is_named():
    here = os.getpid()
    assert at_once({"a": os.getpid, "b": os.getpid}, None) == {"a": here, "b": here}


def test_with_no_process_to_spare_every_job_runs_here(monkeypatch):
    def refused():
        raise BlockingIOError(11, "Resource temporarily unavailable")

    monkeypatch.setattr(os, "fork", refused)
    here = os.getpid()
    assert at_once({"a": os.getpid, "b": os.getpid}, "b") == {"a": here, "b": here}


def test_the_childs_answer_keeps_its_types():
    """A page's view has tuples (node boxes) and int keys (its handout's windows by step):
    JSON would give lists and strings back, and the page would come out different."""
    answer = {"boxes": {"t1": (1.5, 2.0, 3.25, 4.0)}, "paper": {3: [0.5, 1.0]}, "raw": b"<svg/>"}
    assert at_once({"view": lambda: answer}, "view") == {"view": answer}


def _raises():
    raise ValueError("no such layout")


def _dies():
    os._exit(3)  # as Graphviz's exit(1) when malloc fails


def _runs_out():
    raise MemoryError


def test_a_child_that_raises_says_why():
    with pytest.raises(ChildFailed, match="ValueError: no such layout"):
        at_once({"view": _raises, "here": lambda: 1}, "view")


def test_a_child_that_dies_without_an_answer_is_an_error_here():
    with pytest.raises(ChildFailed, match="without an answer"):
        at_once({"view": _dies, "here": lambda: 1}, "view")


def test_a_child_out_of_memory_is_out_of_memory_here():
    """So the render worker ends and is replaced, as if it had run out itself."""
    with pytest.raises(MemoryError):
        at_once({"view": _runs_out}, "view")


def test_a_child_dies_with_its_parent(tmp_path):
    """A worker killed past its budget (SIGKILL) takes its drawing child along: the child is
    not left to draw on, for the rest of its CPU allowance, for nobody."""
    told = tmp_path / "child"
    script = textwrap.dedent(
        f"""
        import os, time
        from app.render.forked import at_once

        def draw():
            with open({str(told)!r}, "w") as f:
                f.write(str(os.getpid()))
            time.sleep(600)

        at_once({{"view": draw, "here": lambda: time.sleep(600)}}, "view")
        """
    )
    env = {**os.environ, "PYTHONPATH": os.getcwd()}
    parent = subprocess.Popen([sys.executable, "-c", script], env=env)
    try:
        child = _read_pid(told, parent)
        parent.kill()
        parent.wait()
        assert _gone(child), f"the child {child} outlived its parent"
    finally:
        parent.kill()


def _read_pid(path, parent, patience: float = 60.0) -> int:
    deadline = time.monotonic() + patience
    while not (path.exists() and path.read_text()):
        assert parent.poll() is None, "the parent ended before its child started"
        assert time.monotonic() < deadline, "the child never started"
        time.sleep(0.05)
    return int(path.read_text())


def _gone(pid: int, patience: float = 30.0) -> bool:
    deadline = time.monotonic() + patience
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return True
        if _zombie(pid):  # dead, waiting for init to reap it
            return True
        time.sleep(0.05)
    return False


def _zombie(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0] == "Z"
    except OSError:
        return True


def test_a_big_view_is_drawn_in_a_child_and_the_page_is_the_same(mlp, monkeypatch):
    forked = []

    def watched(jobs, name):
        forked.append(name)
        return at_once(jobs, name)

    monkeypatch.setattr(page_module, "at_once", watched)
    layout._LAYOUTS.clear()  # drawn afresh by the child
    concurrent = drawn_page(mlp, "x", concurrently=True)
    assert forked == ["tensors"]
    assert concurrent == drawn_page(mlp, "x")


def test_the_layout_a_child_made_is_remembered_by_its_parent(mlp):
    """The next live edit that changes only digits takes it from here (layout._LAYOUTS)."""
    layout._LAYOUTS.clear()
    drawn_page(mlp, "x", concurrently=True)
    assert len(layout._LAYOUTS) == 2  # the tensors view's, from the child, and the autograd's


def test_a_small_page_is_not_worth_a_fork(monkeypatch):
    forked = []

    def watched(jobs, name):
        forked.append(name)
        return at_once(jobs, name)

    monkeypatch.setattr(page_module, "at_once", watched)
    seed = trace_snippet(BY_SLUG["two-paths"].code)
    drawn_page(seed, "x", concurrently=True)
    assert forked == [None]
