"""Which Chromium the browser tests and benchmarks drive, and how it starts: one place.

Debian's `chromium-headless-shell` is the same Blink and V8 as its desktop `chromium`, built
without the desktop browser around them; Playwright itself uses such a build for headless pages.
On these 2-core machines the browser tests are bound by Chromium's own CPU, and the shell takes
about half of what the desktop build does for the same pages. Playwright's own browser download
does not work here, so the Makefile installs the Debian package and tells us where it is
(GRADTRACE_CHROMIUM).
"""

from __future__ import annotations

import os
from pathlib import Path

CHROMIUM = os.environ.get("GRADTRACE_CHROMIUM", "/usr/bin/chromium-headless-shell")

ARGS = [
    "--no-sandbox",  # CI runs as root
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


def missing() -> str | None:
    """Why Chromium cannot be started here, or None when it can."""
    if Path(CHROMIUM).exists():
        return None
    return (
        f"browser tests need Chromium at {CHROMIUM}: run `make test` as root, "
        "or `apt-get install chromium-headless-shell`"
    )


def launch(playwright, extra_args: list[str] = ()):
    """A headless Chromium started by Playwright, with the arguments every caller needs."""
    return playwright.chromium.launch(executable_path=CHROMIUM, args=[*ARGS, *extra_args])
