"""Fuzz the JSON API from its own OpenAPI schema (schemathesis): no 500, no hang, on any input.

Schemathesis reads the OpenAPI document of the ASGI app itself and sends each operation valid and
invalid requests (wrong types, missing and extra fields, odd strings). Every answer must be
below 500, come within the per-call timeout, and, where the schema declares a status code and a
body for it, match them. POST /api/traces really runs each snippet in the sandbox, so the
examples per operation are kept few enough for the whole file to take well under a minute.
"""

from __future__ import annotations

import atexit
import shutil
import tempfile
from pathlib import Path

import pytest
import schemathesis
from fastapi.testclient import TestClient
from hypothesis import HealthCheck, settings
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    response_schema_conformance,
    status_code_conformance,
)

from app.config import Settings, StoreSettings
from app.main import create_app

CALL_TIMEOUT = 15.0  # seconds; a snippet's own wall limit is well under this
CHECKS = [
    not_a_server_error,
    status_code_conformance,
    content_type_conformance,
    response_schema_conformance,
]


# The schema is loaded at import, as @schema.parametrize() needs it at collection: the lazy
# loader (schemathesis.pytest.from_fixture) reads `Function._nodeid`, which pytest 9.2 removed.
# So the app and its temporary database are made here too, and removed when the process ends.
_DB_DIR = Path(tempfile.mkdtemp(prefix="gradtrace-fuzz-"))
atexit.register(shutil.rmtree, _DB_DIR, ignore_errors=True)
# schemathesis always sends Host: testserver
APP = create_app(
    Settings(store=StoreSettings(path=_DB_DIR / "traces.db"), allowed_hosts=("testserver",))
)

# Read from the app object rather than fetched from /openapi.json: the same document, without
# starting the app (its sandbox and render pool) in every process that collects this file.
schema = schemathesis.openapi.from_dict(APP.openapi()).include(path_regex=r"^/(api/|healthz$)")
schema.app = APP  # cases are sent to the app in-process, as from_asgi would


@schema.parametrize()
@settings(
    max_examples=100,
    deadline=None,
    database=None,  # nothing written to .hypothesis/
    suppress_health_check=list(HealthCheck),
)
def test_no_input_makes_a_server_error_or_a_hang(case):
    response = case.call(timeout=CALL_TIMEOUT)
    assert response.status_code < 500, f"{case.method} {case.path}: {response.status_code}"
    case.validate_response(response, checks=CHECKS)


# Bodies the generated cases did not reach, kept as regressions: lone surrogates (valid JSON, not
# valid Unicode text) were 500s, in `code` itself and in any input a 422 echoes back.
AWKWARD_BODIES = [
    b'{"code": "x = \\ud800"}',
    b'{"code": "\\udfff"}',
    b'{"code": "x", "\\ud800": 1}',
    b'{"code": 1, "x": "\\udfff"}',
    b'["\\ud800"]',
    b'{"code": "\\u0000"}',
    b'\xff\xfe{"code": "x"}',
    b'{"code": "x"',
    b"[" * 10_000 + b"]" * 10_000,
    b'{"code": "' + b"#" * 30_000 + b'"}',
]


@pytest.mark.parametrize("body", AWKWARD_BODIES, ids=lambda body: repr(body[:24]))
def test_awkward_bodies_get_a_clear_answer(body):
    client = TestClient(APP, raise_server_exceptions=False)
    answer = client.post("/api/traces", content=body, headers={"content-type": "application/json"})
    assert answer.status_code < 500, answer.text
    assert answer.status_code in (200, 400, 413, 422)
    assert "detail" in answer.json() or "trace" in answer.json()
