"""Facts the trace format states in several places agree with their one definition.

The trace version and the event cap are the tracer's (engine/tracer.py), the statuses
app/sandbox/statuses.py's, the event kinds the tracer's `event_*` methods (app/sandbox/validate.py
derives its set from them), the source-size limit the sandbox's. The schema, the validator, the
renderer's sentences and the web app's settings must say the same.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from app.config import StoreSettings
from app.render.explain import STATUSES
from app.sandbox import statuses, validate
from app.sandbox.outcome import empty_trace
from app.sandbox.settings import SandboxSettings
from app.store import StoreLimits
from engine.tracer import DEFAULT_MAX_EVENTS, TRACE_VERSION, trace_snippet
from tests import corpus

SCHEMA = json.loads(
    (Path(__file__).resolve().parents[2] / "docs" / "trace.schema.json").read_text()
)


def test_the_trace_version_is_the_tracers_everywhere():
    assert SCHEMA["properties"]["version"] == {"const": TRACE_VERSION}
    assert trace_snippet("x = 1\n")["version"] == TRACE_VERSION
    assert (
        empty_trace("x", {"status": statuses.REJECTED, "message": "no"}, SandboxSettings())[
            "version"
        ]
        == TRACE_VERSION
    )


def test_the_schema_lists_exactly_the_statuses_a_run_can_end_with():
    enum = SCHEMA["$defs"]["outcome"]["properties"]["status"]["enum"]
    assert sorted(enum) == sorted(statuses.ALL)


def test_every_status_but_ok_and_error_has_a_sentence_for_learners():
    assert set(STATUSES) == set(statuses.ALL) - {statuses.OK, statuses.ERROR}


@pytest.mark.slow
def test_the_validator_checks_exactly_the_event_kinds_the_tracer_emits():
    emitted = set()
    for snippet in corpus.SNIPPETS:
        emitted |= {event["kind"] for event in corpus.traced(snippet["source"])["events"]}
    assert emitted == set(validate.EVENT_KINDS)


def test_limits_have_one_default():
    assert SandboxSettings().max_events == DEFAULT_MAX_EVENTS
    assert StoreSettings().limits() == StoreLimits()  # the store's bounds, as the settings give
