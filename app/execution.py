"""Turning a snippet into a trace. In-process for now; the sandbox replaces this behind the
same function, so callers never need to know how a snippet was run."""

from __future__ import annotations

from engine.tracer import trace_snippet


def run_snippet(code: str) -> dict:
    """Run `code` with `torch` resolving to the engine, and return its trace (a plain dict)."""
    return trace_snippet(code)
