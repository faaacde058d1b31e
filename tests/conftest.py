"""What every test shares: Hypothesis's budget, the markers, the shared corpus's guard, and a
data folder of their own.

Markers (docs: README, "Tests"): every test under tests/browser is `browser`; `slow` marks a
test that takes many seconds on its own; `alone` marks one that floods the machine (many
sandboxed children, a server under load) and so runs after the parallel part, by itself.
`make test` runs them all; `make test-fast` leaves out `browser` and `slow`.
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
from pathlib import Path

import pytest
from hypothesis import settings

BROWSER = Path(__file__).parent / "browser"

# What the app writes by default (session.key, a database: app/config.py) goes in a folder of
# this process's own, never the user's real data folder; set before any test builds Settings,
# and inherited by every server a test starts.
DATA_DIR = os.environ["GRADTRACE_DATA_DIR"] = tempfile.mkdtemp(prefix="gradtrace-data-")

# Hypothesis's example count for the tests that do not set their own: the finite-difference
# checks of every op (tests/engine/test_gradients.py), a few examples each within the suite's
# budget; `pytest --hypothesis-profile=thorough` for a developer who changes a backward.
settings.register_profile("suite", max_examples=6, deadline=None)
settings.register_profile("thorough", max_examples=100, deadline=None)
settings.load_profile("suite")


def pytest_configure(config: pytest.Config) -> None:
    """tests/corpus.py's folder for the xdist workers of this run to share what they trace and
    render: made by the run's first process before it starts the workers, which inherit it."""
    if getattr(config.option, "numprocesses", None):
        from tests.corpus import SHARED

        if SHARED not in os.environ:
            os.environ[SHARED] = config.corpus_folder = tempfile.mkdtemp(prefix="corpus-")


def pytest_unconfigure(config: pytest.Config) -> None:
    if folder := getattr(config, "corpus_folder", None):
        shutil.rmtree(folder, ignore_errors=True)
    shutil.rmtree(DATA_DIR, ignore_errors=True)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if item.path.is_relative_to(BROWSER):
            item.add_marker(pytest.mark.browser)


@pytest.fixture(scope="session", autouse=True)
def shared_results_stay_unchanged():
    """The corpus's traces and drawings are shared by every test: none may change them."""
    yield
    corpus = sys.modules.get("tests.corpus")  # loaded by the tests that read it, if any ran
    if corpus is not None:
        assert corpus.changed() == [], "a test changed a shared trace or drawing: copy it first"


@pytest.fixture(scope="session")
def postgres():
    """This process's throwaway PostgreSQL cluster (tests/postgres.py), started when a test
    first asks for it; `postgres.new_database()` is the URL of an empty database."""
    from tests.postgres import Cluster

    try:
        cluster = Cluster()
    except RuntimeError as error:
        pytest.fail(str(error), pytrace=False)
    yield cluster
    cluster.stop()
