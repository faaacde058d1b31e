"""The source text a trace span points at: one helper for graph labels, narration and inspector.

A span is [line, col, end_line, end_col] (1-based lines, 0-based columns), as the tracer records
it (docs/trace-format.md). Spans come from a stored trace, so one outside the code gives "".
"""

from __future__ import annotations


def span_text(lines: list[str], span) -> str:
    """The text `span` covers, whitespace collapsed to single spaces."""
    if not span:
        return ""
    line, col, end_line, end_col = span
    if not 0 < line <= end_line <= len(lines):
        return ""
    chunk = lines[line - 1 : end_line]
    if line == end_line:
        chunk = [chunk[0][col:end_col]]
    else:
        chunk[0], chunk[-1] = chunk[0][col:], chunk[-1][:end_col]
    return " ".join(" ".join(chunk).split())


def one_line(span) -> bool:
    return bool(span) and span[0] == span[2]
