"""Which finite-difference checks this process ran, for the op-coverage check.

tests/engine/test_op_coverage.py requires a finite-difference check for every op the engine
has, from the ops the checks of tests/engine/test_gradients.py met (fd.CHECKED), which is
whole only once every one of them ran here. Under xdist the two files are one group (one
worker, in file order); otherwise (the coverage test alone, `-k`, a failed check) the coverage
test runs the checks itself in a child pytest, which writes its fd.CHECKED where fd.REPORT says.
"""

from __future__ import annotations

import json
import os

import pytest

from tests.engine import fd

FAST_SHARE = 4  # `make test-fast` runs one finite-difference check in this many


@pytest.hookimpl(tryfirst=True)  # before xdist reads the groups
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The checks and the coverage test are one xdist group. `make test-fast` (no `slow`) runs
    a spread of the checks and not the coverage test, which needs them all."""
    group = pytest.mark.xdist_group("finite-differences")
    checks = [item for item in items if item.path.name == fd.CHECKS_FILE]
    for i, item in enumerate(checks):
        item.add_marker(group)
        if i % FAST_SHARE:
            item.add_marker(pytest.mark.slow)
    for item in items:
        if item.name == fd.COVERAGE_TEST:
            item.add_marker(group)
            item.add_marker(pytest.mark.slow)


def pytest_collection_finish(session: pytest.Session) -> None:
    # the node ids as reports carry them (xdist adds the group to them)
    fd.COLLECTED.update(i.nodeid for i in session.items if i.path.name == fd.CHECKS_FILE)


def pytest_deselected(items: list[pytest.Item]) -> None:
    if any(item.path.name == fd.CHECKS_FILE for item in items):
        fd.SOME_LEFT_OUT = True


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    if report.when == "call" and report.passed and report.nodeid in fd.COLLECTED:
        fd.PASSED.add(report.nodeid)


def pytest_sessionfinish() -> None:
    if path := os.environ.get(fd.REPORT):
        with open(path, "w") as out:
            json.dump(sorted(fd.CHECKED), out)
