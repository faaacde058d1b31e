"""Remember which engine tests this session runs, for the op-coverage check."""

from __future__ import annotations

FD_FILE = "test_gradients.py"


def pytest_collection_finish(session) -> None:
    # the finite-difference coverage can only be judged when every check in the file runs first
    items = session.items
    names = [item.path.name for item in items]
    session.config.stash_fd_complete = FD_FILE in names and not getattr(
        session.config, "fd_deselected", False
    )


def pytest_deselected(items) -> None:
    if any(item.path.name == FD_FILE for item in items):
        items[0].config.fd_deselected = True
