"""The trace format's JSON Schema (docs/trace.schema.json), as every test checks traces with it.

jsonschema-rs (Rust) validates a whole trace, however long, in about a millisecond; the pure
Python jsonschema took seconds per thousand events, which is why traces were once checked on a
sample. It is already here as schemathesis's validator. The pure Python library still checks
the schema itself against the 2020-12 meta-schema (tests/engine/test_tracer.py).
"""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema_rs

SCHEMA = json.loads((Path(__file__).parents[1] / "docs" / "trace.schema.json").read_text())
VALIDATOR = jsonschema_rs.Draft202012Validator(SCHEMA)
ValidationError = jsonschema_rs.ValidationError

__all__ = ["SCHEMA", "VALIDATOR", "ValidationError"]
