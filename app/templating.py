"""The templates' Jinja2 environment: one for the server's pages and for exports drawn in a
render worker (a standalone HTML file is the same player markup), so both escape the same way."""

from __future__ import annotations

import jinja2

from app.files import TEMPLATES


def _printable(value):
    """Text a page can be encoded with: a lone surrogate (from a trace stored before traces
    were checked, say) is shown as its escape, never a 500. Validation (app/sandbox/validate.py)
    already does this to what a child hands back; this is the last line, in the templates."""
    if type(value) is str and not value.isascii():
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            return value.encode("utf-8", "backslashreplace").decode("utf-8")
    return value


def environment() -> jinja2.Environment:
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(TEMPLATES),
        autoescape=True,
    )
    env.finalize = _printable
    return env
