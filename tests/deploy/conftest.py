"""What the deployment tests run on: one database that several servers share."""

from __future__ import annotations

import pytest


@pytest.fixture
def shared_database(tmp_path) -> dict[str, str]:
    """The environment that points a server at the shared database."""
    return {"GRADTRACE_DB": str(tmp_path / "shared.db")}
