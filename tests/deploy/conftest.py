"""What the deployment tests run on: one PostgreSQL database that several servers share."""

from __future__ import annotations

import pytest


@pytest.fixture
def shared_database(postgres) -> dict[str, str]:
    """The environment that points a server at the shared database (tests/postgres.py)."""
    return {"GRADTRACE_STORE_DATABASE_URL": postgres.new_database()}
